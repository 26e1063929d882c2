"""``pario run``: run a program or an MPI launch under the profiling runtime."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run a command under the profiler and write one log",
        description="Run an unmodified program under libpario.so and write one pario log for the job. "
        "The command is an MPI launch (mpirun/mpiexec of Open MPI or MPICH, srun) or a plain program. "
        "Environment: PARIO_MEM (memory cap for records, e.g. 8M), PARIO_HINTS (file of MPI-IO hints to "
        "inject at MPI_File_open), PARIO_EXCLUDE (colon-separated path prefixes not to record), "
        "PARIO_DISABLE=1 (pass-through), PARIO_RUNTIME (a libpario.so built against another MPI library, "
        "to preload instead of the installed one).",
        epilog="example: pario run --log app.pario -- mpirun -np 4 ./app input.nml",
    )
    p.add_argument("--log", metavar="PATH", help="where to write the log (default: ./<program>-<date>.pario)")
    p.add_argument("--hints", metavar="FILE", help="MPI-IO hints to inject at every MPI_File_open "
                   "('key value' or 'key=value' per line, one value per key, '#' comments; checked "
                   "before launch; sets PARIO_HINTS)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- then the launch command")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pario import launch

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    extra = {}
    if args.hints:
        from pario.hints import read_hints

        hints = Path(args.hints)
        read_hints(hints)  # refuses a bad file (ParioError naming file:line) before anything is launched
        extra["PARIO_HINTS"] = str(hints.resolve())
    prepared = launch.prepare(command, log=args.log, extra_env=extra)
    code = launch.run(prepared)
    if prepared.log.is_file():
        print(f"pario: log written to {prepared.log}", file=sys.stderr)
    else:
        from pario.log import rank_logs

        partial = rank_logs(prepared.log)
        if partial:
            print(f"pario: the job did not finish MPI; {len(partial)} per-rank log(s): "
                  f"{partial[0]}{' ...' if len(partial) > 1 else ''} (pario report {prepared.log} reads them "
                  "together)", file=sys.stderr)
        else:
            print(f"pario: no log was written to {prepared.log} (see the messages above)", file=sys.stderr)
    return code
