"""Cost of the HDF5 layer (src/runtime/hdf5.c): nanoseconds per H5Dwrite / H5Dread of one element.

A = without the runtime, B = with it (LD_PRELOAD, profile only), interleaved A B A B ...;
medians of each and of the paired differences B - A.  bench/hdf5_loop.c times the loop of N
one-element transfers (a 1-element hyperslab of a 1-D double dataset) on one process (MPI
singleton), through HDF5's sec2 driver (write, read) and its MPI-IO driver (write-mpio,
independent).  Usage:

    .venv/bin/python bench/hdf5_overhead.py [--reps 9] [--calls 200000]

Prints the Markdown table of docs/performance.md ("HDF5 layer").
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from pario import paths

HERE = Path(__file__).resolve().parent
MODES = {
    "write": "H5Dwrite, 1 double, sec2 driver",
    "read": "H5Dread, 1 double, sec2 driver",
    "write-mpio": "H5Dwrite, 1 double, MPI-IO driver (independent)",
}


def compile_loop(out: Path) -> Path:
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "hdf5-openmpi"], capture_output=True,
                           text=True, check=True).stdout.split()
    subprocess.run(["mpicc", "-O2", "-o", str(out), str(HERE / "hdf5_loop.c"), *flags], check=True)
    return out


def loop_ns(exe: Path, mode: str, calls: int, target: Path, env: dict[str, str]) -> float:
    out = subprocess.run([str(exe), mode, str(calls), str(target)], env=env, check=True, capture_output=True,
                         text=True)
    return float(out.stdout.strip().splitlines()[-1])


def interleaved(exe: Path, mode: str, calls: int, target: Path, reps: int,
                envs: tuple[dict[str, str], dict[str, str]]) -> tuple[float, float, float]:
    """Medians of A and B and of the paired differences B - A (ns per call)."""
    a_vals, b_vals, diffs = [], [], []
    loop_ns(exe, mode, calls // 10, target, envs[0])  # warm-up
    for _ in range(reps):
        a = loop_ns(exe, mode, calls, target, envs[0])
        b = loop_ns(exe, mode, calls, target, envs[1])
        a_vals.append(a)
        b_vals.append(b)
        diffs.append(b - a)
    return statistics.median(a_vals), statistics.median(b_vals), statistics.median(diffs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--calls", type=int, default=200_000)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="pario-hdf5-bench-", dir=os.environ.get("BENCH_DIR", "/tmp")))
    exe = compile_loop(work / "hdf5_loop")
    base = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    base.pop("LD_PRELOAD", None)
    with_pario = dict(base, LD_PRELOAD=str(paths.runtime_library()), PARIO_LOG=str(work / "b.pario"))

    print(f"A = without the runtime, B = with it; {args.reps} interleaved repetitions of "
          f"{args.calls} calls, medians.\n")
    print("| call | A ns/call | B ns/call | median B − A ns/call |")
    print("|---|---|---|---|")
    for mode, label in MODES.items():
        a, b, d = interleaved(exe, mode, args.calls, work / "x.h5", args.reps, (base, with_pario))
        print(f"| {label} | {a:.0f} | {b:.0f} | {d:+.0f} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
