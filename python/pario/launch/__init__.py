"""Launching a program under pario: ``pario run`` and ``pario env`` (run.py), the MPI library a
job runs with against the runtime's (mpi_match.py), programs linked statically (static_libs.py),
the logs a job writes and their names (job_logs.py), the notes of a job that wrote no log
(run_notes.py), and hints files (hints.py).  Below the log readers: its modules import only
pario's lowest modules and each other.
"""
