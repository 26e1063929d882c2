"""The ``pario`` command: parses arguments and calls the library, nothing more.

Each subcommand lives in ``pario/commands/<name>.py`` and provides
``register(subparsers)``, which adds its parser and sets ``func`` to a
function ``(args) -> int``.  Heavy imports (NumPy, Rich, the log readers) happen inside those
functions so that ``pario run`` starts fast.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import threading
from typing import NoReturn

from pario import __version__
from pario.blas import load_numpy
from pario.errors import ParioError
from pario.malloc import ONE_SHOT as ONE_SHOT_MALLOC
from pario.malloc import set_thresholds

#: The subcommands that start programs or print text without reading a log: they need no NumPy
#: (the others load it at once, its BLAS on one thread: pario.blas).
WITHOUT_NUMPY = frozenset({"run", "env", "path", "kernel"})
#: The subcommands that read logs and print (or write files they close): one thread, nothing to
#: clean up at exit. The ``pario`` command runs them without the cyclic garbage collector (their
#: objects live until the end; its passes over the imported modules' objects cost 8-10% of a
#: report's CPU), with malloc keeping freed memory for reuse (pario.malloc), NumPy without
#: huge-page advice (pario.blas), and ends the process once its output is flushed, without the
#: interpreter's teardown (freeing every object one by one: another 8-10%); docs/performance.md.
ONE_SHOT = frozenset({"report", "diagnose", "dump", "replay"})
#: The subcommands, in the order ``--help`` lists them.
COMMANDS: tuple[str, ...] = ("run", "env", "dump", "report", "diagnose", "verify", "replay", "tune",
                               "kernel", "path", "survey", "export")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pario",
        description="Measure, explain, tune and accelerate the parallel I/O of MPI applications.",
    )
    parser.add_argument("--version", action="version", version=f"pario {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"pario.commands.{name}")
        module.register(sub)
    return parser


def _command_parser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser:
    """The parser of subcommand ``name`` (the top-level one without a subcommand)."""
    for action in parser._actions:  # argparse keeps its subcommands' parsers only there
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            found: argparse.ArgumentParser = action.choices[name]
            return found
    return parser


def console() -> NoReturn:
    """The ``pario`` command. A ``ONE_SHOT`` subcommand runs without the cyclic garbage collector
    and the process ends once its output is flushed, without the interpreter's teardown."""
    args = parse()
    if args is None:
        sys.exit(2)
    one_shot = command_name(args) in ONE_SHOT
    if one_shot:
        gc.disable()
        set_thresholds(*ONE_SHOT_MALLOC)
    code = run(args)
    if one_shot and threading.active_count() == 1:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # a closed pipe: nothing more can be said
            pass
        os._exit(code)
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (the command line's by default) and run the subcommand: its exit status."""
    args = parse(argv)
    return 2 if args is None else run(args)


def command_name(args: argparse.Namespace) -> str:
    """The subcommand ``args`` runs (its module is ``pario.commands.<name>``)."""
    return str(args.func.__module__).rsplit(".", 1)[-1]


def parse(argv: list[str] | None = None) -> argparse.Namespace | None:
    """The parsed command line (None, after the help, when no subcommand is given)."""
    from pario.commands.kernel import protect_separator
    from pario.commands.survey import joined_command

    parser = build_parser()
    words = joined_command(protect_separator(list(sys.argv[1:] if argv is None else argv)))
    args, extra = parser.parse_known_args(words)
    if extra:  # said by the subcommand's own parser, with its own usage line
        _command_parser(parser, getattr(args, "command", None)).error(
            f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return None
    return args


def run(args: argparse.Namespace) -> int:
    """Run the parsed subcommand; a ParioError is its one-line message and status 2."""
    name = command_name(args)
    if name not in WITHOUT_NUMPY:
        load_numpy(one_shot=name in ONE_SHOT)
    try:
        return int(args.func(args))
    except ParioError as exc:
        print(f"pario: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    console()
