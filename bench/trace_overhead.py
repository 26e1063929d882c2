"""Cost of the event trace (docs/trace.md): nanoseconds per traced event and % on kernels.

Configurations interleaved in one run (A B C D A B C D ...), medians over the repetitions:
A without the runtime, B with it (profile only), C with it tracing (PARIO_TRACE=1, the default
65 536-event buffer, so long loops compress and spill blocks to the temporary file as a real
run does), D tracing with a buffer that holds the whole loop (the cost of recording alone; the
compression then happens at MPI_Finalize, outside the timed loop).  Usage:

    .venv/bin/python bench/trace_overhead.py [--reps 7] [--calls 1000000] [--np 4]

Prints the Markdown tables of docs/performance.md ("Tracing").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pario import paths

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from overhead import compile_c  # noqa: E402  (bench/overhead.py, beside this file)

#: loop -> (program, its arguments before N, events per iteration, label)
LOOPS = {
    "pwrite": ("overhead", ["pwrite"], 1, "1-byte pwrite (POSIX, no MPI)"),
    "iprobe": ("trace_loop", ["iprobe"], 1, "MPI_Iprobe (1 rank)"),
    "isendrecv": ("trace_loop", ["isendrecv"], 5, "Irecv + Isend to self + Waitall (1 rank)"),
}
KERNELS = {
    "block": ["--block-size", "1m", "--transfer-size", "4k", "--segments", "16", "--independent"],
    "bt": ["--class", "W", "--steps", "40"],
}


def loop_ns(exe: Path, args: list[str], env: dict[str, str]) -> float:
    out = subprocess.run([str(exe), *args], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def kernel_seconds(name: str, nprocs: int, work: Path, env: dict[str, str],
                   preload: list[str]) -> tuple[float, float]:
    """The kernel's own total I/O time (its JSON line) and the whole mpirun's wall time, run with
    the given -x options."""
    exe = paths.program(f"pario-kernel-{name}")
    cmd = ["mpirun", "-np", str(nprocs), *preload, str(exe), "--path", str(work / f"{name}.dat"),
           *KERNELS[name]]
    started = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr[-2000:]}")
    line = next(x for x in out.stdout.splitlines() if x.startswith("{"))
    return float(json.loads(line)["time_s"]["total"]), wall


def interleave(measure, configs: list, reps: int) -> list:
    """Median of each configuration (of each value when a measure returns a tuple), measured
    A B C A B C ..."""
    values: list[list] = [[] for _ in configs]
    measure(configs[0])  # warm-up
    for _ in range(reps):
        for i, c in enumerate(configs):
            values[i].append(measure(c))
    if isinstance(values[0][0], tuple):
        return [tuple(statistics.median(x) for x in zip(*v, strict=True)) for v in values]
    return [statistics.median(v) for v in values]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--np", type=int, default=4, dest="nprocs")
    args = parser.parse_args()

    lib = paths.runtime_library()
    work = Path(tempfile.mkdtemp(prefix="pario-trace-bench-", dir=os.environ.get("BENCH_DIR", "/tmp")))
    exes = {"overhead": compile_c(HERE / "overhead.c", work / "overhead"),
            "trace_loop": compile_c(HERE / "trace_loop.c", work / "trace_loop", mpi=True)}
    base = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                OMPI_MCA_rmaps_base_oversubscribe="1")
    base.pop("LD_PRELOAD", None)
    envs = [base, dict(base, LD_PRELOAD=str(lib), PARIO_LOG=str(work / "b.pario")),
            dict(base, LD_PRELOAD=str(lib), PARIO_LOG=str(work / "c.pario"), PARIO_TRACE="1"),
            dict(base, LD_PRELOAD=str(lib), PARIO_LOG=str(work / "d.pario"), PARIO_TRACE="1",
                 PARIO_TRACE_BUFFER=str(args.calls + 16))]

    print(f"A = without the runtime, B = with it, C = with it tracing, D = tracing without spills; "
          f"{args.reps} interleaved repetitions, medians.\n")
    print("| loop | iterations | A ns/iter | B ns/iter | C ns/iter | D ns/iter | C-B ns/event "
          "| D-B ns/event |")
    print("|---|---|---|---|---|---|---|---|")
    for program, pre, per_iter, label in LOOPS.values():
        n = args.calls if program == "overhead" else args.calls // (5 if per_iter > 1 else 1)
        target = [str(work / "data.bin")] if program == "overhead" else []
        def measure(env: dict[str, str], p: str = program, x: list[str] = pre, n: int = n,
                    t: list[str] = target) -> float:
            return loop_ns(exes[p], [*x, str(n), *t], env)

        a, b, c, d = interleave(measure, envs, args.reps)
        print(f"| {label} | {n} | {a:.1f} | {b:.1f} | {c:.1f} | {d:.1f} | {(c - b) / per_iter:+.1f} | "
              f"{(d - b) / per_iter:+.1f} |")

    print(f"\nKernels on {args.nprocs} ranks (2 cores, oversubscribed): "
          "the kernel's own I/O time (its JSON: open to close) and the whole mpirun's wall time "
          "(MPI_Init's clock sync and the log writing included), medians.\n")
    print("| kernel | options | I/O A s | I/O B s | I/O C s | C/B | wall A s | wall B s | wall C s | C/B |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    pre = [[], ["-x", f"LD_PRELOAD={lib}", "-x", f"PARIO_LOG={work / 'kb.pario'}"],
           ["-x", f"LD_PRELOAD={lib}", "-x", f"PARIO_LOG={work / 'kc.pario'}", "-x", "PARIO_TRACE=1"]]
    for name in KERNELS:
        def run(x: list[str], k: str = name) -> tuple[float, float]:
            return kernel_seconds(k, args.nprocs, work, base, x)

        (a, wa), (b, wb), (c, wc) = interleave(run, pre, args.reps)
        print(f"| {name} | `{' '.join(KERNELS[name])}` | {a:.4f} | {b:.4f} | {c:.4f} | {c / b:.3f} | "
              f"{wa:.3f} | {wb:.3f} | {wc:.3f} | {wc / wb:.3f} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
