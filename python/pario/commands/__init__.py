"""Argument parsing of each ``pario`` subcommand (one module per subcommand)."""


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


def sbatch_args(text: str) -> list[str]:
    """``--sbatch-args`` split like a shell; a one-line ParioError where quotes do not close."""
    import shlex

    from pario.errors import ParioError

    try:
        return shlex.split(text)
    except ValueError as exc:
        raise ParioError(f"--sbatch-args {text!r}: {exc}") from None

