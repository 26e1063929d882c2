"""CPU of one ``pario report LOG``, as a user's shell runs it, against its anchors.

Issue 44's figure: user + system CPU of a fresh process and its children (the forked child that
reads a Darshan log with libdarshan-util), output to /dev/null. Each round runs, in turn (the
order reversed every other round):

- A: ``pario report LOG``, the console command (pario.cli.console: a one-shot command runs
  without the cyclic garbage collector and ends without the interpreter's teardown);
- B: the same report through ``pario.cli.main`` in ``python -c`` (the collector on, and the
  interpreter's teardown at exit), what the console command did before;
- C: PyDarshan loading the log only (``DarshanReport(LOG, read_all=True)``), when PyDarshan is
  installed.

Prints the medians of each and of the per-round ratios. Usage:

    .venv/bin/python bench/report_cpu.py [--rounds 15] [LOG]
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_LOG = HERE.parent / "tests" / "data" / "darshan-logs" / "mpi-io-test-x86_64-3.5.0.darshan"


def child_cpu(cmd: list[str]) -> float:
    """User + system seconds of ``cmd`` and the processes it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", type=Path, default=DEFAULT_LOG)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    if not args.log.is_file():
        parser.error(f"{args.log}: no such file")
    python = sys.executable
    console = Path(python).parent / "pario"
    log = str(args.log)
    sides = {
        "A: pario report": [str(console), "report", log] if console.exists()
        else [python, "-m", "pario", "report", log],
        "B: through main()": [python, "-c", "import sys; from pario.cli import main; sys.exit(main())",
                              "report", log],
    }
    if importlib.util.find_spec("darshan") is not None:
        sides["C: PyDarshan load"] = [python, "-c", "import sys, darshan; "
                                      "darshan.DarshanReport(sys.argv[1], read_all=True)", log]
    for cmd in sides.values():  # caches warm, bytecode written
        child_cpu(cmd)
    spent: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(args.rounds):
        for name in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
            spent[name].append(child_cpu(sides[name]))
    print(f"{args.log.name}, {args.rounds} rounds, CPU seconds (user + system, children included), medians:")
    a = spent["A: pario report"]
    for name, values in spent.items():
        ratio = statistics.median(x / y for x, y in zip(a, values, strict=True))
        print(f"  {name:20s} {statistics.median(values):.3f} s (min {min(values):.3f})"
              + ("" if values is a else f"   A / this {ratio:.2f}"))


if __name__ == "__main__":
    main()
