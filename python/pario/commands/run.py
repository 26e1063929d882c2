"""``pario run``: run a program or an MPI launch under the profiling runtime."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    from pario.collective import help_text

    parser = sub.add_parser(
        "run",
        help="run a command under the profiler and write one log",
        description=textwrap.fill(
        "Run an unmodified program under libpario.so and write one pario log for the job. "
        "The command is an MPI launch (mpirun/mpiexec of Open MPI or MPICH, srun), a plain program, or a "
        "job script (or any command) that runs mpirun/srun itself: then each MPI job it starts writes a "
        "log of its own, LOG's name with .step<N> (job.pario -> job.step1.pario, job.step2.pario), and "
        "the command's own process writes LOG. "
        "Environment: PARIO_MEM (memory cap for records, e.g. 8M), PARIO_TRACE_BUFFER (with --trace: "
        "events kept in memory per rank, default 65536), PARIO_TRACE_MAX (with --trace: compressed trace "
        "bytes per rank, default 256M), PARIO_HINTS (file of MPI-IO hints to "
        "inject at MPI_File_open), PARIO_EXCLUDE (colon-separated path prefixes not to record), "
        "PARIO_DISABLE=1 (pass-through), PARIO_RUNTIME (a libpario.so built against another MPI library, "
        "to preload instead of the installed one).", 79),
        epilog="examples:\n  pario run --log app.pario -- mpirun -np 4 ./app input.nml\n"
        "  pario run --log job.pario -- ./job.sh   (job.pario, job.step1.pario, ...)\n"
        "  pario run --log logs/ -- srun -n 64 ./app\n"
        "  pario run --collective write-comm -- mpirun -np 64 ./app\n"
        "Inside a batch script, without pario run: eval \"$(pario env)\"\n"
        "(see pario env --help).\n\n"
        + help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--log", metavar="PATH", help="the log file, or an existing directory in which each "
                        "job's log is named <program>-<pid or Slurm job>-<date>.pario "
                        "(default: ./<program>-<date>.pario)")
    parser.add_argument("--hints", metavar="FILE", help="MPI-IO hints to inject at every MPI_File_open "
                        "('key value' or 'key=value' per line, one value per key, '#' comments; a line "
                        "[GLOB] starts hints for the files matching GLOB only; checked before launch; sets "
                        "PARIO_HINTS)")
    parser.add_argument("--collective", metavar="ALGO[:SHUFFLE]",
                        help="serve the collective writes by pario's two-phase engine (sets PARIO_COLL; "
                        "checked before launch; ALGO and SHUFFLE below)")
    parser.add_argument("--trace", action="store_true",
                        help="also record an event trace of every rank (MPI and I/O calls; sets "
                        "PARIO_TRACE=1; docs/trace.md): for timelines and pario replay")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the launch command")
    parser.set_defaults(func=_run)


def _apply_tuned_environment(hints_file: Path, extra: dict[str, str]) -> None:
    """Run with the settings the hints were tuned with (``# pario: tuned with OMPI_MCA_io=...`` or
    ``PARIO_COLL=...`` in a file written by pario tune), or say that this run differs from them.
    ``extra``: the environment pario run sets for the job (``PARIO_COLL`` of --collective)."""
    import os

    from pario.launch.hints import tuned_environment

    for name, value in tuned_environment(hints_file).items():
        now = extra.get(name, os.environ.get(name))
        if now is None:
            if name == "PARIO_COLL":
                extra[name] = value  # as --collective sets it
            else:
                os.environ[name] = value  # mpirun reads it and passes it on to the ranks
            print(f"pario: {name}={value}: the hints of {hints_file} were tuned with it", file=sys.stderr)
        elif now != value:
            print(f"pario: warning: the hints of {hints_file} were tuned with {name}={value}, but this run "
                  f"has {name}={now}: they may do nothing", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    from pario.launch import run as launch

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    extra = {}
    if args.trace:
        extra["PARIO_TRACE"] = "1"
    if args.collective is not None:
        from pario.collective import check_setting

        # a bad value is refused (one line) before anything is launched
        extra["PARIO_COLL"] = check_setting(args.collective)
    if args.hints:
        from pario.launch.hints import checked_file

        # a bad file is refused (one error naming file:line) before anything is launched
        extra["PARIO_HINTS"] = checked_file(args.hints)
        _apply_tuned_environment(Path(extra["PARIO_HINTS"]), extra)
    prepared = launch.prepare(command, log=args.log, extra_env=extra, notes=True)
    from pario.launch import mpi_match, static_libs

    for line in static_libs.warnings(mpi_match.program_in(command, launch.is_launcher(command))):
        print(f"pario: warning: {line}", file=sys.stderr)
    started = time.time()
    try:
        code = launch.run(prepared)
        launch.mark_lost_steps(prepared, code)
        for line in launch.summary(prepared, started, code, describe=_describe):
            print(f"pario: {line}", file=sys.stderr)
    finally:
        launch.finish(prepared)
    return code


def _describe(log: Path) -> str:
    """``job.step1.pario (io_known, 4 ranks)``: which program a log holds."""
    from pario.errors import ParioError
    from pario.log.pario_reader import read_meta
    from pario.units import nranks

    try:
        meta = read_meta(log)
    except ParioError:
        return str(log)
    exe = Path(str(meta.get("exe", ""))).name or "?"
    n = int(meta.get("nprocs", 1) or 1)
    return f"{log} ({exe}, {nranks(n)})"
