"""Runtime overhead on the MPI-IO path, from C and from Fortran (mpif.h and `use mpi`).

One rank (mpirun -np 1) writes 8 bytes with MPI_File_write_at in a loop (bench/mpiio_loop.c and
bench/mpiio_loop.F90); A = without the runtime, B = with it, interleaved A B A B ..., medians,
and the median of the paired differences in nanoseconds per call.  The Fortran bindings reach
pario through the PMPI_ names (Open MPI), the C program through the MPI_ names.  With
``--baseline RUNTIME`` (a libpario.so built from another tree) each repetition also runs the
programs under it (C), for the difference the change between the two runtimes makes.  Usage:

    .venv/bin/python bench/mpiio_overhead.py [--reps 9] [--calls 200000] [--baseline LIB]
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
PROGRAMS = {"C": ("mpicc", "mpiio_loop.c", []),
            "Fortran, mpif.h": ("mpif90", "mpiio_loop.F90", ["-cpp"]),
            "Fortran, use mpi": ("mpif90", "mpiio_loop.F90", ["-cpp", "-DUSE_MPI"])}


def ns_per_call(exe: Path, calls: int, target: Path, env: dict[str, str], preload: str | None) -> float:
    inject = ["-x", f"LD_PRELOAD={preload}", "-x", f"PARIO_LOG={target}.pario"] if preload else []
    out = subprocess.run(["mpirun", "-np", "1", *inject, str(exe), str(calls), str(target)], env=env,
                         check=True, capture_output=True, text=True)
    return float(out.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--baseline", metavar="LIB", help="another libpario.so to run as C")
    args = parser.parse_args()

    lib = str(paths.runtime_library())
    work = Path(tempfile.mkdtemp(prefix="pario-bench-", dir=os.environ.get("BENCH_DIR", "/tmp")))
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env |= {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    rows = []
    for label, (compiler, source, options) in PROGRAMS.items():
        exe = work / label.replace(" ", "").replace(",", "-").replace(".", "")
        subprocess.run([compiler, "-O2", *options, "-o", str(exe), str(HERE / source)], check=True)
        target = work / "data.bin"
        ns_per_call(exe, args.calls // 10, target, env, None)  # warm up
        a_vals, b_vals, c_vals, diffs, c_diffs = [], [], [], [], []
        for _ in range(args.reps):
            a = ns_per_call(exe, args.calls, target, env, None)
            b = ns_per_call(exe, args.calls, target, env, lib)
            a_vals.append(a)
            b_vals.append(b)
            diffs.append(b - a)
            if args.baseline:
                c = ns_per_call(exe, args.calls, target, env, args.baseline)
                c_vals.append(c)
                c_diffs.append(b - c)
        a, b = statistics.median(a_vals), statistics.median(b_vals)
        extra = (f" {statistics.median(c_vals):.1f} | {statistics.median(c_diffs):+.1f} |"
                 if args.baseline else "")
        rows.append(f"| {label} | {a:.1f} | {b:.1f} | {statistics.median(diffs):+.1f} | {b / a:.4f} |{extra}")

    baseline = ", C = with the baseline runtime" if args.baseline else ""
    print(f"A = without the runtime, B = with it{baseline}; {args.reps} interleaved repetitions of "
          f"{args.calls} calls, medians.\n")
    head = "| program | A ns/call | B ns/call | added ns/call (median of B-A) | B/A |"
    rule = "|---|---|---|---|---|"
    if args.baseline:
        head, rule = head + " C ns/call | B-C (median) |", rule + "---|---|"
    print(head)
    print(rule)
    print("\n".join(rows))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
