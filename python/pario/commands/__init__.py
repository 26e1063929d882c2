"""Argument parsing of each ``pario`` subcommand (one module per subcommand)."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    import argparse

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0."""
    import argparse

    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not x > 0:
        raise argparse.ArgumentTypeError("must be positive")
    return x


def add_hints_dir(parser: argparse.ArgumentParser) -> None:
    """``--hints-dir``, as the commands that show findings take it."""
    parser.add_argument("--hints-dir", metavar="DIR",
                        help="write the hints file each suggested trial names (<log>.<FINDING>.hints) "
                             "into DIR; without it nothing is written and the hints are shown inline")


def add_slurm_launcher(parser: argparse.ArgumentParser, slurm: str) -> None:
    """``--launcher`` and ``--sbatch-args``, as the commands that run the program take them;
    ``slurm`` says what ``--launcher slurm`` does."""
    parser.add_argument("--launcher", choices=("local", "slurm"), default="local",
                        help=f"local: run here (default); slurm: {slurm}")
    parser.add_argument("--sbatch-args", metavar="ARGS", default="",
                        help="resources of each Slurm job, e.g. \"-N 2 -n 64 -p batch\" (split like a shell)")


def add_timeout(parser: argparse.ArgumentParser) -> None:
    """``--timeout``, as the commands that run the program take it."""
    parser.add_argument("--timeout", type=positive_seconds, default=600.0, metavar="S",
                        help="seconds before a run is killed and counted failed (default 600)")


def sbatch_args(text: str) -> list[str]:
    """``--sbatch-args`` split like a shell; a one-line ParioError where quotes do not close."""
    import shlex

    from pario.errors import ParioError

    try:
        return shlex.split(text)
    except ValueError as exc:
        raise ParioError(f"--sbatch-args {text!r}: {exc}") from None

