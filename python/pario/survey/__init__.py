"""``pario survey``: many logs (a facility's archive) analysed in parallel on Dask into a Parquet
store, the facility view of that store, and SQL over it (docs/survey.md).

- ``discover``: the logs under the paths given (Darshan's ``YYYY/M/D`` archive, flat folders,
  manifest files), and which of them the store already holds;
- ``row``: one log analysed into one row (the job, its time classes, bytes per layer and file
  system, POP metrics, findings), or an error row;
- ``store``: the Parquet store (one part file per batch, partitioned by the month of the job's
  start) and DuckDB views over it;
- ``cluster``: the Dask cluster (local, an existing scheduler, or Slurm through dask-jobqueue);
- ``run``: the survey itself;
- ``facility`` and ``render``: the facility report and its terminal, HTML, JSON and CSV forms.
"""
