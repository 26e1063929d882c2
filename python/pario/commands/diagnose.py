"""``pario diagnose LOG [LOG ...]``: findings with evidence and recommendations (pario or Darshan logs)."""

from __future__ import annotations

import argparse

from pario.commands import add_hints_dir


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "diagnose",
        help="find I/O problems in a run, with evidence and what to change (pario or Darshan logs)",
        description="Diagnose the I/O of one run (a pario log or a Darshan log): each finding states a "
        "problem, the numbers that show it, the files or ranks concerned, and what to change (MPI-IO hints, "
        "Lustre striping, code, or a trial run with a hints file). Findings are ordered by the time they are "
        "estimated to cost. With several logs of one application, also the findings that compare the runs "
        "(contention, I/O time growing faster than the data). The rules and their thresholds are "
        "documented in docs/diagnosis.md. Exit status 0 whatever is found; 2 for unreadable input.",
    )
    parser.add_argument("logs", nargs="+", metavar="LOG", help="pario log or Darshan log")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the findings as JSON (docs/diagnosis.md)")
    out.add_argument("--markdown", action="store_true", help="print the findings as Markdown")
    parser.add_argument(
        "--min-severity",
        choices=("info", "warning", "critical"),
        default="info",
        help="show only findings at least this severe (default: info, i.e. all)",
    )
    parser.add_argument("--config", metavar="FILE", help="TOML or JSON file overriding rule thresholds")
    add_hints_dir(parser)
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import json
    import sys

    from pario.diagnosis import Severity, diagnose, diagnose_runs, load_config
    from pario.log import read_log
    from pario.report.findings import diagnosis_dict, findings_markdown, findings_renderable, log_summary
    from pario.report.hints_files import hints_directory, name_suggested_hints
    from pario.verify.results import annotate

    hints_dir = hints_directory(args.hints_dir)
    cfg = load_config(args.config)
    minimum = Severity.parse(args.min_severity)
    profiles = [read_log(path) for path in args.logs]
    runs = [(p, annotate(name_suggested_hints(diagnose(p, cfg), p, hints_dir), path))
            for p, path in zip(profiles, args.logs, strict=True)]
    across = diagnose_runs(profiles, cfg) if len(profiles) > 1 else []
    if args.json:
        json.dump(diagnosis_dict(runs, across, min_severity=minimum), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
        return 0
    if args.markdown:
        parts = [findings_markdown(fs, title=log_summary(p), min_severity=minimum, level=2) for p, fs in runs]
        if len(profiles) > 1:
            parts.append(
                findings_markdown(
                    across, title=f"Across the {len(profiles)} runs", min_severity=minimum, level=2
                )
            )
        sys.stdout.write("\n".join(parts))
        return 0
    from rich.console import Console

    console = Console(highlight=False)
    for p, findings in runs:
        console.print(findings_renderable(findings, title=log_summary(p), min_severity=minimum))
        console.print()
    if len(profiles) > 1:
        console.print(
            findings_renderable(
                across,
                title=f"Across the {len(profiles)} runs",
                min_severity=minimum,
                empty="No problems found across the runs.",
            )
        )
    return 0
