"""``pario dump LOG``: print every value in a log."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "dump",
        help="print every per-rank and per-file value of a log",
        description="Print every per-rank and per-file value of a pario or Darshan log: tab-separated "
        "lines (rank, field, value / layer, rank, file id, counter, value, name) or, with --json, the "
        "JSON form documented in docs/log-format.md.",
    )
    parser.add_argument("log", help="a pario log (or a Darshan log)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from pario.log import read_log
    from pario.log.dump import write_json, write_text

    profile = read_log(args.log)
    (write_json if args.json else write_text)(profile, sys.stdout)
    return 0
