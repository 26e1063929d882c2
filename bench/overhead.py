"""Runtime overhead: added nanoseconds per intercepted call, and time in MPI_Finalize.

A/B interleaved in one run (A without the runtime, B with it, A B A B ...),
medians over the repetitions, the difference and the ratio.  With ``--baseline LIB`` (a
libpario.so built from another tree: ``cmake -S OLD -B OLD/build && cmake --build OLD/build``)
each repetition also runs C, the loops under that runtime, and the table adds C's added time
and B - C: a change of the per-call cost measured in one run.  Usage:

    .venv/bin/python bench/overhead.py [--reps 9] [--calls 2000000] [--np 16] [--baseline LIB]

Prints a Markdown table (the one in docs/performance.md).
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


def compile_c(src: Path, out: Path, mpi: bool = False) -> Path:
    cc = "mpicc" if mpi else (shutil.which("cc") or "gcc")
    subprocess.run([cc, "-O2", "-o", str(out), str(src)], check=True)
    return out


def run_ns(exe: Path, mode: str, calls: int, target: Path, env: dict[str, str]) -> float:
    out = subprocess.run([str(exe), mode, str(calls), str(target)], env=env, check=True,
                         capture_output=True, text=True)
    return float(out.stdout.strip())


def interleaved(exe: Path, mode: str, calls: int, target: Path, reps: int,
                envs: list[dict[str, str]]) -> list[list[float]]:
    """ns per call of each environment in each repetition (A B [C] A B [C] ...)."""
    runs: list[list[float]] = [[] for _ in envs]
    run_ns(exe, mode, calls // 10, target, envs[0])  # warm the page cache
    for _ in range(reps):
        for env, out in zip(envs, runs, strict=True):
            out.append(run_ns(exe, mode, calls, target, env))
    return runs


def paired(x: list[float], y: list[float]) -> float:
    """The median of the paired differences x - y."""
    return statistics.median(a - b for a, b in zip(x, y, strict=True))


def finalize_seconds(exe: Path, nprocs: int, outdir: Path, env: dict[str, str]) -> float:
    out = subprocess.run(["mpirun", "-np", str(nprocs), *env.get("_MPIRUN_X", "").split(), str(exe),
                          str(outdir), "20"], env=env, check=True, capture_output=True, text=True)
    return max(float(x) for x in out.stdout.split())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--calls", type=int, default=2_000_000)
    parser.add_argument("--np", type=int, default=16, dest="nprocs")
    parser.add_argument("--baseline", metavar="LIB", type=Path,
                        help="another libpario.so, run as C in every repetition")
    args = parser.parse_args()
    if args.baseline is not None and not args.baseline.is_file():
        parser.error(f"--baseline {args.baseline}: no such file")

    lib = paths.runtime_library()
    work = Path(tempfile.mkdtemp(prefix="pario-bench-", dir=os.environ.get("BENCH_DIR", "/tmp")))
    exe = compile_c(HERE / "overhead.c", work / "overhead")
    fin = compile_c(HERE / "finalize.c", work / "finalize", mpi=True)
    base = dict(os.environ)
    base.pop("LD_PRELOAD", None)
    with_rt = dict(base, LD_PRELOAD=str(lib), PARIO_LOG=str(work / "bench.pario"))
    target = work / "data.bin"
    envs = [base, with_rt]
    if args.baseline is not None:
        envs.append(dict(base, LD_PRELOAD=str(args.baseline.resolve()), PARIO_LOG=str(work / "old.pario")))

    rows = []
    modes = (("pwrite", args.calls), ("fwrite", args.calls * 10), ("pwrite1m", 2000),
             ("openclose", args.calls // 10))
    for mode, calls in modes:
        rows.append((mode, calls, interleaved(exe, mode, calls, target, args.reps, envs)))

    mpi_env = dict(base, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
    fin_a, fin_b = [], []
    for _ in range(max(3, args.reps // 2)):
        out_a, out_b = work / "fa", work / "fb"
        for d in (out_a, out_b):
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir()
        fin_a.append(finalize_seconds(fin, args.nprocs, out_a, mpi_env))
        env_b = dict(mpi_env, _MPIRUN_X=f"-x LD_PRELOAD={lib} -x PARIO_LOG={work / 'fin.pario'}")
        fin_b.append(finalize_seconds(fin, args.nprocs, out_b, env_b))

    old = ", C = with the baseline runtime" if args.baseline is not None else ""
    print(f"A = without the runtime, B = with it{old}; {args.reps} interleaved repetitions, medians.\n")
    c_head = (" C ns/call | C added (median of C-A) | B-C (median) |", "---|---|---|") if old else ("", "")
    print(f"| loop | calls | A ns/call | B ns/call | added ns/call (median of B-A) | B/A |{c_head[0]}")
    print(f"|---|---|---|---|---|---|{c_head[1]}")
    labels = {"pwrite": "1-byte pwrite", "fwrite": "1-byte fwrite", "pwrite1m": "1 MiB pwrite",
              "openclose": "open + close (per pair)"}
    for mode, calls, runs in rows:
        a, b = statistics.median(runs[0]), statistics.median(runs[1])
        added = paired(runs[1], runs[0])
        line = f"| {labels[mode]} | {calls} | {a:.1f} | {b:.1f} | {added:+.1f} | {b / a:.4f} |"
        if old:
            line += (f" {statistics.median(runs[2]):.1f} | {paired(runs[2], runs[0]):+.1f} |"
                     f" {paired(runs[1], runs[2]):+.1f} |")
        print(line)
    print(f"\nMPI_Finalize, {args.nprocs} ranks (2 cores, oversubscribed), 20 files per rank + 2 shared, "
          f"max over ranks, median of {len(fin_a)}: without {statistics.median(fin_a) * 1e3:.1f} ms, "
          f"with {statistics.median(fin_b) * 1e3:.1f} ms")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
