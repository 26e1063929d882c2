"""``pario path NAME``: print where an installed program or the runtime library is."""

from __future__ import annotations

import argparse

from pario import paths


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "path",
        help="print the path of libpario.so or of an installed program",
        description="Print the absolute path of an installed part of pario: 'libpario' for the "
        "runtime library, or the name of a program (a kernel, pario-demo-io).",
    )
    parser.add_argument("name", help="'libpario' or a program name")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    path = paths.runtime_library() if args.name == "libpario" else paths.program(args.name)
    print(path)
    return 0
