"""``pario report LOG [LOG ...]``: POP metrics with I/O and a performance breakdown."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from pario.commands import add_hints_dir, positive_int


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "report",
        help="explain a run: POP metrics with I/O, compute/MPI/I/O breakdown, rates (pario or Darshan logs)",
        description="Report on one run (a pario log or a Darshan log): where the time went (compute, MPI, "
        "I/O), I/O and MPI rates, memory, POP efficiency metrics extended with I/O, I/O load balance and "
        "the busiest files. With several logs of one application at different rank counts, also a "
        "scaling table. Metrics a log cannot give are shown as unavailable, with the reason.",
    )
    parser.add_argument("logs", nargs="+", metavar="LOG", help="pario log or Darshan log")
    parser.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report with plots")
    parser.add_argument("--json", metavar="FILE", help="also write every metric as JSON ('-' for standard "
                        "output, which replaces the terminal report); see docs/report-json.md")
    parser.add_argument("--csv", metavar="DIR", help="also write every table as CSV files into DIR "
                        "(created if missing, in an existing folder)")
    parser.add_argument("--scaling", choices=("auto", "strong", "weak"), default="auto",
                        help="with several logs: strong or weak scaling (default: inferred from the "
                        "bytes moved)")
    parser.add_argument("--top", type=positive_int, default=10, metavar="N",
                        help="number of files listed by I/O time (default 10)")
    parser.add_argument("--details", action="store_true", help="with several logs: the full report "
                        "of each run")
    parser.add_argument("-q", "--quiet", action="store_true", help="no terminal report (only the "
                        "files asked for)")
    parser.add_argument("--config", metavar="FILE", help="diagnosis thresholds to override (TOML or JSON; "
                        "see docs/diagnosis.md)")
    parser.add_argument("--no-diagnosis", action="store_true", help="leave out the diagnosis (findings)")
    add_hints_dir(parser)
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from pario.log import read_log
    from pario.report import build, name_hint_files
    from pario.report.hints_files import hints_directory
    from pario.verify.results import annotate

    hints_dir = hints_directory(args.hints_dir)
    profiles = [read_log(path) for path in args.logs]
    config = None
    if args.config:
        from pario.diagnosis import load_config

        config = load_config(args.config)
    runs, scaling = build(profiles, scaling=args.scaling, diagnosis=not args.no_diagnosis, config=config)
    runs = name_hint_files(runs, profiles, hints_dir)
    runs = [dataclasses.replace(r, findings=tuple(annotate(r.findings, path)))
            for r, path in zip(runs, args.logs, strict=True)]
    top = max(args.top, 20)
    written: list[str] = []  # what was written where, said last (on stderr: stdout is the report)
    if args.json:
        from pario.report.json_out import write_json

        write_json(runs, scaling, args.json, top=top)
        if args.json != "-":
            written.append(f"JSON report written to {os.path.abspath(args.json)}")
    if args.csv:
        from pario.report.csv_out import write_csv

        write_csv(runs, scaling, args.csv)
        written.append(f"CSV tables written into {os.path.abspath(args.csv)}")
    if args.html:
        from pario.report.html import write_html

        write_html(runs, scaling, args.html, top=top, traces=[p.trace for p in profiles])
        written.append(f"HTML report written to {os.path.abspath(args.html)}")
    if not args.quiet and args.json != "-":
        from pario.report.terminal import render

        render(runs, scaling, top=args.top, details=args.details)
    for line in written:
        print(f"pario: {line}", file=sys.stderr)
    return 0
