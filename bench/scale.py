"""The runtime as the job grows: what it adds to MPI_Finalize, to each rank's peak memory, and
the log's size, at 4..N ranks.

bench/scale_probe.c runs at each size in four shapes (a: 20 files per rank plus 1 shared by
all; b: 1 file written collectively; one: 1 file per rank; many: 1,000 files per rank), without
and with the runtime, interleaved (none, pario, none, pario, ...), ``--reps`` rounds each.  Per
size and shape it prints the median added MPI_Finalize time (slowest rank), the median added
peak memory per rank (VmHWM after MPI_Finalize, mean over ranks), the log's bytes, the files the
run created beside the log other than the log itself, and then the log-log slope of each
between the last two sizes and over all sizes.  Usage:

    .venv/bin/python bench/scale.py [--np 4,16,64] [--shapes a,b,one,many] [--reps 3]

Prints a Markdown table (the one in docs/performance.md).  The runtime's phases at
MPI_Finalize are timed with PARIO_FINALIZE_TIMES=1 (--phases: a third run per round, whose
medians are printed per phase, "in all" being the runtime's whole time in MPI_Finalize on the
slowest rank, a figure far less noisy than the difference of two runs' MPI_Finalize; and the
duplication of the runtime's communicator, made at MPI_Init and so outside the MPI_Finalize time
measured: on the last rank to reach it, what it costs, and on the first, which waits there for
the other ranks to leave MPI_Init).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from pario import paths

HERE = Path(__file__).resolve().parent
SHAPES = ("a", "b", "one", "many")


def probe(exe: Path, nprocs: int, shape: str, work: Path, lib: Path | None,
          extra: dict[str, str] | None = None) -> tuple[float, float, int, int, str]:
    """One run: slowest rank's MPI_Finalize seconds, mean VmHWM (kB), log bytes, files created
    beside the log (not the log), stderr."""
    data, logdir = work / "data", work / "logs"
    for d in (data, logdir):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1", **(extra or {}))
    if os.geteuid() == 0:  # Open MPI refuses root unless told (containers, CI)
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("LD_PRELOAD", None)
    log = logdir / "job.pario"
    x = ["-x", f"LD_PRELOAD={lib}", "-x", f"PARIO_LOG={log}"] if lib else []
    x += [a for k in (extra or {}) for a in ("-x", k)]
    out = subprocess.run(["mpirun", "-np", str(nprocs), *x, str(exe), str(data), shape], env=env, check=True,
                         capture_output=True, text=True, timeout=1800)
    rows = [line.split() for line in out.stdout.splitlines() if line.strip()]
    fin = max(float(r[0]) for r in rows)
    hwm = statistics.fmean(float(r[1]) for r in rows)
    size = log.stat().st_size if log.exists() else 0
    others = sum(1 for p in logdir.iterdir() if p != log)
    return fin, hwm, size, others, out.stderr


PHASES = ("shared-file detection", "reduction", "compression", "collective write", "in all",
          "dup at MPI_Init, last rank", "dup at MPI_Init, first rank")


def phase_times(stderr: str) -> list[float]:
    """The seconds of each of PHASES on the slowest rank, from the PARIO_FINALIZE_TIMES line."""
    line = next((x for x in stderr.splitlines() if "finalize phases" in x), "")
    times = [float(m) for m in re.findall(r"([0-9.]+) s\b", line)]
    if len(times) != len(PHASES):
        raise SystemExit(f"no finalize phase line in the runtime's messages: {stderr[-300:]!r}")
    return times


def slope(xs: list[int], ys: list[float]) -> float:
    """Least-squares slope of log y on log x (nan where a value is not positive)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if y > 0]
    if len(pts) < 2:
        return float("nan")
    mx = statistics.fmean(p[0] for p in pts)
    my = statistics.fmean(p[1] for p in pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den else float("nan")


def _slopes(rows: list[tuple[int, float, float, int]], col: int) -> str:
    """Slope of column ``col`` between the last two sizes, and over all sizes."""
    ns = [r[0] for r in rows]
    last = slope(ns[-2:], [r[col] for r in rows[-2:]]) if len(rows) > 1 else float("nan")
    return f"{last:.2f} / {slope(ns, [r[col] for r in rows]):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--np", default="4,16,64", help="rank counts, comma-separated (default 4,16,64)")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="a,b,one,many (default all)")
    parser.add_argument("--reps", type=int, default=3, help="rounds of none/pario per point (default 3)")
    parser.add_argument("--phases", action="store_true",
                        help="also time the runtime's MPI_Finalize phases (PARIO_FINALIZE_TIMES), "
                        "a third run per round")
    args = parser.parse_args()
    sizes = [int(x) for x in args.np.split(",") if x.strip().isdigit()]
    if len(sizes) != len(args.np.split(",")):
        sizes = []  # a size that is not a number: the error below
    shapes = [s for s in args.shapes.split(",") if s]
    if not sizes or min(sizes) < 1 or any(s not in SHAPES for s in shapes) or args.reps < 1:
        parser.error("--np takes positive integers, --shapes some of a,b,one,many, --reps >= 1")

    lib = paths.runtime_library()
    work = Path(tempfile.mkdtemp(prefix="pario-scale-", dir=os.environ.get("BENCH_DIR", "/tmp")))
    exe = work / "scale_probe"
    subprocess.run(["mpicc", "-O2", "-o", str(exe), str(HERE / "scale_probe.c")], check=True)

    print("| shape | ranks | added MPI_Finalize (s) | added peak memory per rank (MB) | log bytes "
          "| bytes per record | files beside the log |")
    print("|---|---|---|---|---|---|---|")
    results: dict[str, list[tuple[int, float, float, int]]] = {}
    phases: dict[tuple[str, int], list[float]] = {}
    for shape in shapes:
        for n in sizes:
            fins, hwms, size, others, timed = [], [], 0, 0, []
            for _ in range(args.reps):
                f0, h0, _, _, _ = probe(exe, n, shape, work, None)
                f1, h1, size, others, _ = probe(exe, n, shape, work, lib)
                fins.append(f1 - f0)
                hwms.append((h1 - h0) / 1024)
                if args.phases:
                    err = probe(exe, n, shape, work, lib, {"PARIO_FINALIZE_TIMES": "1"})[4]
                    timed.append(phase_times(err))
            records = {"a": 21 * n, "b": n + 1, "one": n, "many": 1000 * n}[shape]
            fin, hwm = statistics.median(fins), statistics.median(hwms)
            results.setdefault(shape, []).append((n, fin, hwm, size))
            if timed:
                phases[shape, n] = [statistics.median(col) for col in zip(*timed, strict=True)]
            print(f"| {shape} | {n} | {fin:.4f} | {hwm:+.2f} | {size:,} | {size / records:.1f} | {others} |",
                  flush=True)
    print()
    print("| shape | slope, added finalize (last pair / all) | slope, added memory (last pair / all) "
          "| slope, log bytes (all) |")
    print("|---|---|---|---|")
    for shape, rows in results.items():
        print(f"| {shape} | {_slopes(rows, 1)} | {_slopes(rows, 2)} | "
              f"{slope([r[0] for r in rows], [float(r[3]) for r in rows]):.2f} |")
    if phases:
        print()
        print("| shape | ranks | " + " | ".join(PHASES) + " |")
        print("|---|---|" + "---|" * len(PHASES))
        for (shape, n), times in phases.items():
            print(f"| {shape} | {n} | " + " | ".join(f"{t:.4f}" for t in times) + " |")
        print()
        print("| shape | slope of the runtime's own time (last pair / all) |")
        print("|---|---|")
        in_all = PHASES.index("in all")
        for shape in shapes:
            rows = [(n, phases[shape, n][in_all], 0.0, 0) for n in sizes if (shape, n) in phases]
            print(f"| {shape} | {_slopes(rows, 1)} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
