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
