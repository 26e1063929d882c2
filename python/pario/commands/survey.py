"""``pario survey``: many logs into a store (``survey PATH... --store DIR``), the facility view of
the store (``survey report DIR``), SQL over it (``survey sql DIR QUERY``), and its compaction
(``survey compact DIR``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pario.commands import positive_int

#: Two-word commands, parsed as one: ``pario survey report ...`` is the command "survey report".
SUBCOMMANDS: tuple[str, ...] = ("survey report", "survey sql", "survey compact")


def joined_command(argv: list[str]) -> list[str]:
    """``survey report ARGS`` -> ``"survey report" ARGS`` (likewise ``survey sql``, ``survey compact``)."""
    if len(argv) >= 2 and f"{argv[0]} {argv[1]}" in SUBCOMMANDS:
        return [f"{argv[0]} {argv[1]}", *argv[2:]]
    return argv


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "survey",
        help="analyse many logs (a facility's archive) on Dask into a Parquet store",
        description="Find every Darshan and pario log under the paths (Darshan's YYYY/M/D archive or any "
        "folders; manifest files list logs one per line), analyse each new or changed one in parallel on "
        "Dask, "
        "and store one row per job (time classes, bytes per layer and file system, POP metrics, findings "
        "with the time they cost) in a Parquet store. A log that cannot be read is stored as an error row. "
        "At the end the store is compacted: one Parquet file per month, however many runs and batches. "
        "Then: pario survey report DIR, pario survey sql DIR QUERY (docs/survey.md).",
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="a folder to search or a log")
    parser.add_argument("--store", required=True, metavar="DIR", help="the store (created if missing)")
    parser.add_argument("--manifest", action="append", default=[], metavar="FILE",
                        help="a file listing logs, one path per line (repeatable)")
    parser.add_argument("--workers", type=positive_int, default=None, metavar="N",
                        help="local Dask worker processes (default: one per core)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="use a running Dask scheduler (tcp://host:8786)")
    parser.add_argument("--slurm", action="store_true", help="run the workers as Slurm jobs (dask-jobqueue)")
    parser.add_argument("--slurm-jobs", type=positive_int, default=1, metavar="N", help="Slurm jobs "
                        "(default 1)")
    parser.add_argument("--slurm-cores", type=positive_int, default=1, metavar="N",
                        help="worker processes (and cores) per Slurm job (default 1)")
    parser.add_argument("--slurm-memory", default="2GB", metavar="SIZE", help="memory per Slurm job "
                        "(default 2GB)")
    parser.add_argument("--slurm-queue", metavar="PARTITION", help="Slurm partition")
    parser.add_argument("--slurm-account", metavar="ACCOUNT", help="Slurm account")
    parser.add_argument("--slurm-walltime", default="01:00:00", metavar="HH:MM:SS", help="default 01:00:00")
    parser.add_argument("--slurm-option", action="append", default=[], metavar="OPTION",
                        help="another #SBATCH option, e.g. --slurm-option=--nodelist=n1 (repeatable)")
    parser.add_argument("--batch", type=positive_int, default=None, metavar="N",
                        help="logs per Dask task (default 64)")
    parser.add_argument("--limit", type=positive_int, default=None, metavar="N", help="read at most N logs")
    parser.add_argument("--since", metavar="YYYY-MM-DD",
                        help="only logs of this day or later (the archive's folder, else the file's time)")
    parser.add_argument("--until", metavar="YYYY-MM-DD", help="only logs of this day or earlier")
    parser.set_defaults(func=_survey)

    r = sub.add_parser(
        "survey report",
        help="the facility view of a survey store: I/O share, applications, findings, file systems",
        description="Report on a survey store: jobs and core-hours, the distribution of the I/O share, the "
        "applications ranked by core-hours spent in I/O with their top findings, the findings ranked by the "
        "core-hours they cost and by the jobs they hit, the file systems' bandwidth percentiles per month, "
        "and the small-file and metadata offenders.",
    )
    r.add_argument("store", metavar="DIR", help="a store made by pario survey")
    _filters(r)
    r.add_argument("--top", type=positive_int, default=10, metavar="N", help="rows per table (default 10)")
    r.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report with plots")
    r.add_argument("--json", metavar="FILE", help="also write the report as JSON ('-': standard output only)")
    r.add_argument("--csv", metavar="DIR", help="also write each table as a CSV file into DIR")
    r.add_argument("-q", "--quiet", action="store_true", help="no terminal report")
    r.set_defaults(func=_report)

    q = sub.add_parser(
        "survey sql",
        help="query a survey store with SQL (DuckDB)",
        description="Run a DuckDB SQL query on a survey store. Views: jobs (one row per job), findings "
        "(one row per finding of a job), filesystems (one row per file system a job used), errors "
        "(unreadable logs), rows_all (every row ever written). docs/survey.md gives their columns.",
    )
    q.add_argument("store", metavar="DIR", help="a store made by pario survey")
    q.add_argument("query", metavar="QUERY",
                   help='e.g. "SELECT exe_name, sum(core_hours) FROM jobs GROUP BY 1"')
    q.add_argument("--csv", action="store_true", help="print CSV instead of a table")
    q.set_defaults(func=_sql)

    c = sub.add_parser(
        "survey compact",
        help="merge a survey store's files into one Parquet file per month",
        description="Merge each month's Parquet files of a survey store (one per batch of each survey run) "
        "into one file, its rows sorted by executable, user and start (Parquet statistics let queries of "
        "rows_all on those skip row groups). Atomic: a reader sees the old files or the new one, never "
        "both; a compaction killed at any point loses nothing, and the next one finishes it. pario survey "
        "does this at the end of every run; this command is for a store written by an older pario or by "
        "runs that were stopped.",
    )
    c.add_argument("store", metavar="DIR", help="a store made by pario survey")
    c.set_defaults(func=_compact)


def _filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", metavar="USER", help="only this user's jobs (uid or name)")
    p.add_argument("--exe", metavar="GLOB", help="only executables matching GLOB (name or path)")
    p.add_argument("--since", metavar="YYYY-MM-DD", help="only jobs started this day or later (UTC)")
    p.add_argument("--until", metavar="YYYY-MM-DD", help="only jobs started this day or earlier (UTC)")
    p.add_argument("--fs", metavar="TYPE", help="only jobs that used this file-system type (lustre, ...)")


def _survey(args: argparse.Namespace) -> int:
    from pario.errors import ParioError
    from pario.survey.cluster import ClusterSpec, SlurmOptions
    from pario.survey.discover import parse_day
    from pario.survey.run import DEFAULT_BATCH, SurveyPlan, run_survey

    if not args.paths and not args.manifest:
        raise ParioError("nothing to survey: give a folder or log (PATH) or --manifest FILE")
    if args.slurm and args.scheduler:
        raise ParioError("--slurm and --scheduler exclude each other")
    slurm = SlurmOptions(jobs=args.slurm_jobs, cores=args.slurm_cores, memory=args.slurm_memory,
                         queue=args.slurm_queue, account=args.slurm_account, walltime=args.slurm_walltime,
                         options=tuple(args.slurm_option),
                         log_directory=str(Path(args.store) / "slurm")) if args.slurm else None
    plan = SurveyPlan(paths=tuple(args.paths), manifests=tuple(args.manifest), store=args.store,
                      limit=args.limit, since=parse_day(args.since) if args.since else None,
                      until=parse_day(args.until) if args.until else None, batch=args.batch or DEFAULT_BATCH,
                      cluster=ClusterSpec(workers=args.workers or 0, scheduler=args.scheduler, slurm=slurm))
    from pario.textfit import terminal_width, wrap_words

    result = run_survey(plan)
    print("\n".join(wrap_words(f"pario survey: {result.text()}; store {args.store}", terminal_width(), 4)))
    return 0


def _report(args: argparse.Namespace) -> int:
    from pario.survey.discover import parse_day
    from pario.survey.facility import Filters, facility_report
    from pario.survey.render import print_report, write_csv, write_html, write_json

    filters = Filters(user=args.user, exe=args.exe, since=parse_day(args.since) if args.since else None,
                      until=parse_day(args.until) if args.until else None, fs=args.fs)
    report = facility_report(args.store, filters, top=args.top)
    if args.json:
        write_json(report, args.json)
    if args.csv:
        write_csv(report, args.csv)
    if args.html:
        write_html(report, args.html)
    if not args.quiet and args.json != "-":
        print_report(report)
    return 0


def _sql(args: argparse.Namespace) -> int:
    from pario.survey.render import print_query
    from pario.survey.store import query

    columns, rows = query(args.store, args.query)
    print_query(columns, rows, csv=args.csv, out=sys.stdout)
    return 0


def _compact(args: argparse.Namespace) -> int:
    from pario.survey.store import compact

    print(f"pario survey compact: {compact(args.store).text()}; store {args.store}")
    return 0
