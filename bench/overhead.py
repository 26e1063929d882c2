"""Runtime overhead: added nanoseconds per intercepted call, and time in MPI_Finalize.

A/B interleaved in one run (A without the runtime, B with it, A B A B ...),
medians over the repetitions, the difference and the ratio.  With ``--baseline LIB`` (a
libpario.so built from another tree: ``cmake -S OLD -B OLD/build && cmake --build OLD/build``,
or another profiler's runtime, e.g. Darshan's libdarshan.so with ``--baseline-env
DARSHAN_LOGFILE=/tmp/x.darshan``) each repetition also runs C, the loops under that runtime,
and the table adds C's added time and B - C: a change of the per-call cost measured in one
run.  ``--mpi`` runs the loops a second time in an MPI program (``mpirun -np 1``, the
runtimes given to the rank with ``-x``), where a wrapper's cost can differ (the rank is bound
to a core, MPI's progress threads run beside it).  The first lines give what the two timer
reads a wrapper can make cost here (``rdtsc``, ``clock_gettime``).  Usage:

    .venv/bin/python bench/overhead.py [--reps 9] [--calls 2000000] [--np 16] [--baseline LIB]
        [--baseline-env KEY=VALUE ...] [--mpi] [--skip-finalize] [--loops pwrite fwrite ...]

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


def compile_c(src: Path, out: Path, mpi: bool = False, defines: tuple[str, ...] = ()) -> Path:
    cc = "mpicc" if mpi else (shutil.which("cc") or "gcc")
    subprocess.run([cc, "-O2", *(f"-D{d}" for d in defines), "-o", str(out), str(src)], check=True)
    return out


#: mpirun's own settings for running as root on a small machine (not given to the rank's runtime)
MPIRUN_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
              "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def run_ns(exe: Path, mode: str, calls: int, target: Path, base: dict[str, str], runtime: dict[str, str],
           mpi: bool = False) -> float:
    """ns per call of one loop; ``runtime`` (LD_PRELOAD and the runtime's settings) reaches the
    program itself: its environment, or under mpirun the rank's (-x), not mpirun's."""
    args = [str(exe), mode, str(calls), str(target)]
    if mpi:
        xs = [a for k, v in runtime.items() for a in ("-x", f"{k}={v}")]
        cmd, env = ["mpirun", "-np", "1", *xs, *args], dict(base, **MPIRUN_ENV)
    else:
        cmd, env = args, dict(base, **runtime)
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def interleaved(exe: Path, mode: str, calls: int, target: Path, reps: int, base: dict[str, str],
                runtimes: list[dict[str, str]], mpi: bool = False) -> list[list[float]]:
    """ns per call under each runtime in each repetition (A B [C] A B [C] ...)."""
    runs: list[list[float]] = [[] for _ in runtimes]
    run_ns(exe, mode, calls // 10, target, base, runtimes[0], mpi)  # warm the page cache
    for _ in range(reps):
        for runtime, out in zip(runtimes, runs, strict=True):
            out.append(run_ns(exe, mode, calls, target, base, runtime, mpi))
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
                        help="another runtime (a libpario.so of another tree, Darshan's libdarshan.so), "
                             "run as C in every repetition")
    parser.add_argument("--baseline-env", metavar="KEY=VALUE", action="append", default=[],
                        help="a setting the baseline runtime needs (repeatable; e.g. DARSHAN_LOGFILE=PATH)")
    parser.add_argument("--mpi", action="store_true",
                        help="also run the loops in an MPI program (mpirun -np 1)")
    parser.add_argument("--skip-finalize", action="store_true", help="leave out the MPI_Finalize timing")
    parser.add_argument("--loops", nargs="+", choices=list(LABELS), default=list(LABELS),
                        help="the loops to time (all by default)")
    args = parser.parse_args()
    if args.baseline is not None and not args.baseline.is_file():
        parser.error(f"--baseline {args.baseline}: no such file")
    extra = dict(kv.split("=", 1) for kv in args.baseline_env if "=" in kv)
    if len(extra) != len(args.baseline_env):
        parser.error("--baseline-env takes KEY=VALUE")

    lib = paths.runtime_library()
    work = Path(tempfile.mkdtemp(prefix="pario-bench-", dir=os.environ.get("BENCH_DIR", "/tmp")))
    exe = compile_c(HERE / "overhead.c", work / "overhead")
    fin = compile_c(HERE / "finalize.c", work / "finalize", mpi=True)
    base = dict(os.environ)
    base.pop("LD_PRELOAD", None)
    target = work / "data.bin"
    runtimes: list[dict[str, str]] = [{}, {"LD_PRELOAD": str(lib), "PARIO_LOG": str(work / "bench.pario")}]
    if args.baseline is not None:
        runtimes.append({"LD_PRELOAD": str(args.baseline.resolve()), "PARIO_LOG": str(work / "old.pario"),
                         **extra})

    timers = {mode: statistics.median(run_ns(exe, mode, 20_000_000, target, base, {}) for _ in range(5))
              for mode in ("rdtsc", "clock")}
    print(f"Timer reads here (a loop of 20 000 000, median of 5): rdtsc {timers['rdtsc']:.1f} ns, "
          f"clock_gettime(CLOCK_MONOTONIC) {timers['clock']:.1f} ns.\n")
    counts = {"pwrite": args.calls, "fwrite": args.calls * 10, "pwrite1m": 2000,
              "openclose": args.calls // 10}
    modes = [(mode, counts[mode]) for mode in LABELS if mode in args.loops]
    programs = [("a plain program", exe, False)]
    if args.mpi:
        mpi_exe = compile_c(HERE / "overhead.c", work / "overhead_mpi", mpi=True, defines=("OVERHEAD_MPI",))
        programs.append(("an MPI program (mpirun -np 1)", mpi_exe, True))
    old = ", C = with the baseline runtime" if args.baseline is not None else ""
    print(f"A = without the runtime, B = with it{old}; {args.reps} interleaved repetitions, medians.")
    for title, program, mpi in programs:
        rows = [(mode, calls, interleaved(program, mode, calls, target, args.reps, base, runtimes, mpi))
                for mode, calls in modes]
        print(f"\nIn {title}:\n")
        print_table(rows, bool(old))

    if not args.skip_finalize:
        print_finalize(fin, lib, work, args.nprocs, args.reps, base)
    shutil.rmtree(work, ignore_errors=True)


LABELS = {"pwrite": "1-byte pwrite", "fwrite": "1-byte fwrite", "pwrite1m": "1 MiB pwrite",
          "openclose": "open + close (per pair)"}


def print_table(rows: list[tuple[str, int, list[list[float]]]], with_c: bool) -> None:
    c_head = (" C ns/call | C added (median of C-A) | B-C (median) |", "---|---|---|") if with_c else ("", "")
    print(f"| loop | calls | A ns/call | B ns/call | added ns/call (median of B-A) | B/A |{c_head[0]}")
    print(f"|---|---|---|---|---|---|{c_head[1]}")
    for mode, calls, runs in rows:
        a, b = statistics.median(runs[0]), statistics.median(runs[1])
        added = paired(runs[1], runs[0])
        line = f"| {LABELS[mode]} | {calls} | {a:.1f} | {b:.1f} | {added:+.1f} | {b / a:.4f} |"
        if with_c:
            line += (f" {statistics.median(runs[2]):.1f} | {paired(runs[2], runs[0]):+.1f} |"
                     f" {paired(runs[1], runs[2]):+.1f} |")
        print(line)


def print_finalize(fin: Path, lib: Path, work: Path, nprocs: int, reps: int, base: dict[str, str]) -> None:
    mpi_env = dict(base, **MPIRUN_ENV)
    fin_a, fin_b = [], []
    for _ in range(max(3, reps // 2)):
        out_a, out_b = work / "fa", work / "fb"
        for d in (out_a, out_b):
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir()
        fin_a.append(finalize_seconds(fin, nprocs, out_a, mpi_env))
        env_b = dict(mpi_env, _MPIRUN_X=f"-x LD_PRELOAD={lib} -x PARIO_LOG={work / 'fin.pario'}")
        fin_b.append(finalize_seconds(fin, nprocs, out_b, env_b))
    print(f"\nMPI_Finalize, {nprocs} ranks (2 cores, oversubscribed), 20 files per rank + 2 shared, "
          f"max over ranks, median of {len(fin_a)}: without {statistics.median(fin_a) * 1e3:.1f} ms, "
          f"with {statistics.median(fin_b) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
