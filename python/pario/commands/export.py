"""``pario export --darshan LOG OUT``: write a pario log as a Darshan log."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="write a pario log in another tool's format (--darshan: a Darshan log)",
        description="Write a pario log as a Darshan log (format 3.41, through the libdarshan-util that "
        "PyDarshan ships), which PyDarshan, darshan-parser and pario itself read: the job, the command "
        "line, the POSIX, STDIO, MPI-IO, H5F, H5D, PNETCDF and LUSTRE records with Darshan's counter "
        "meanings. Darshan counters pario does not record are written as -1 (docs/export.md).",
    )
    p.add_argument("--darshan", action="store_true", required=True,
                   help="write a Darshan log (the only export format)")
    p.add_argument("log", metavar="LOG", help="a pario log")
    p.add_argument("out", metavar="OUT", help="the Darshan log to write (replaced if it exists)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from pario.log.darshan_writer import export_darshan

    content = export_darshan(args.log, args.out)
    records = sum(len(m.ids) for m in content.modules) + len(content.lustre)
    print(f"pario: Darshan log written to {args.out} ({records} records, {content.job.nprocs} ranks)")
    return 0
