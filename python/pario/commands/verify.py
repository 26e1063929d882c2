"""``pario verify LOG [options] [-- COMMAND]``: each finding's suggested settings measured against
the unchanged run."""

from __future__ import annotations

import argparse
import shlex
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from pario.commands import add_slurm_launcher, add_timeout, positive_int, sbatch_args
from pario.errors import ParioError

if TYPE_CHECKING:
    from pario.model import Profile

_EPILOG = """\
examples:
  pario verify app.pario
  pario verify --rounds 7 app.pario
  pario verify app.darshan -- mpirun -np 16 ./app input.nml
  pario verify --launcher slurm --sbatch-args "-N 1 -n 16 -t 10" app.pario

Each setting the findings of LOG suggest is a change: a hints file, pario's
collective-write engine (pario run --collective), the MPI library's
parameters (--mca NAME VALUE, as OMPI_MCA_NAME). The recorded command (a
pario log holds it; for a Darshan log give it after --) is run once
unchanged (not counted, so that every measured run overwrites the files the
program writes), then in ROUNDS rounds unchanged and with each change, the
order turned every round. Per change: the time the finding put at stake, the
median paired change of the run's I/O time with its range, and a verdict
(helps, no effect, harms, failed). Two or more helpful changes are measured
again combined. The helpful change that saved the largest share (the
combination only when it beats each alone) goes to DIR/verified.hints, which
pario run --hints applies whole (the engine and MPI parameters included).
With --launcher slurm each run is an sbatch job (--sbatch-args: its
resources), as pario tune's trials are. Runs and results are kept in DIR
(default LOG.verify); started again, a verify resumes there. pario report LOG and pario diagnose LOG show the
verdicts beside the findings."""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "verify",
        help="run the program with each finding's suggested settings and say whether they help",
        description=textwrap.fill(
            "Prove the advice of a diagnosis by running it: measure each finding's suggested settings "
            "(hints, pario's collective-write engine, MPI parameters) against the unchanged run, in "
            "paired interleaved rounds, and say whether they help.", 79),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("log", metavar="LOG", help="the pario log (or Darshan log) whose findings to verify")
    parser.add_argument("--rounds", type=positive_int, default=5, metavar="N",
                        help="paired rounds (default 5; at least 3 give a verdict)")
    parser.add_argument("--dir", metavar="DIR", help="where the runs and results go (default LOG.verify)")
    add_timeout(parser)
    add_slurm_launcher(parser, "each run is an sbatch job, as pario tune's")
    parser.add_argument("--min-change", type=_share, default=0.05, metavar="SHARE",
                        help="the smallest change of the I/O time called a gain or a loss (default 0.05)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command (a Darshan "
                        "log needs it)")
    parser.set_defaults(func=_run)


def _share(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= x < 1:
        raise argparse.ArgumentTypeError("must be at least 0 and below 1")
    return x


def recorded_command(profile: Profile, log: str, given: list[str]) -> list[str]:
    """The command to rerun: the one given after --, else the one the pario log recorded."""
    from pario.diagnosis.commands import launch_of

    if given:
        return given
    launch = launch_of(profile.job)
    if launch is not None:
        return launch
    if profile.job.source == "darshan":
        raise ParioError(f"{log} is a Darshan log, which does not record the command: give it after --, "
                         f"e.g. pario verify {shlex.quote(log)} -- mpirun -np {profile.job.nprocs} ./app")
    raise ParioError(f"{log} does not record its command (an older pario log): give it after --")


def _run(args: argparse.Namespace) -> int:
    import shutil

    from pario.log import read_log
    from pario.verify.measure import verify
    from pario.verify.results import default_directory

    given = list(args.command)
    if given and given[0] == "--":
        given = given[1:]
    profile = read_log(args.log)
    command = recorded_command(profile, args.log, given)
    if shutil.which(command[0]) is None:
        raise ParioError(f"command not found: {command[0]}")
    if args.launcher == "slurm" and shutil.which("sbatch") is None:
        raise ParioError("--launcher slurm: sbatch not found on PATH")
    batch = sbatch_args(args.sbatch_args) if args.launcher == "slurm" else None
    directory = Path(args.dir) if args.dir else default_directory(args.log)
    result = verify(profile, command, directory, rounds=args.rounds, timeout=args.timeout,
                    min_change=args.min_change, slurm=batch,
                    progress=lambda line: print(f"pario verify: {line}", file=sys.stderr, flush=True))
    if not result.outcomes:
        print(f"pario verify: no finding of {args.log} suggests a setting to verify (code changes and "
              "advice without a setting cannot be run)")
        return 0
    from pario.verify.render import render

    render(result)
    return 0
