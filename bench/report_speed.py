"""How fast is `pario report`?  (docs/performance.md, section "Report speed")

1. The 65 536-rank Darshan log skew-app.darshan: A = `pario report LOG` (a fresh
   process, terminal report to /dev/null), B = a fresh Python process that only
   loads the same log with PyDarshan (`DarshanReport(LOG, read_all=True)`),
   interleaved A B C D A B C D ..., medians and the ratio A/B.  C = a fresh Python
   process that only imports pandas (PyDarshan imports it; pario's report does not),
   D = one that only imports NumPy (the floor both pay).  Also the phases of one cold
   run (imports, read, analyse, render, as a fresh `pario report` meets them), the
   in-process (warm) phases and PyDarshan's in-process load.
2. A synthetic pario log of 100 000 ranks and 1 000 000 file records, written
   with pario's own writer (`write_pario_log` of tests/pario_writer.py) from a
   small real pario log (for the counter schema): `pario report` timed the
   same way, plus in-process phases.  ``--synthetic-in-memory`` times the
   analysis and rendering of the same model without any log file.

Usage: .venv/bin/python bench/report_speed.py [--reps 7] [--darshan-log PATH] [--seed-log X.pario]
       [--skip-synthetic] [--synthetic-in-memory]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED_LOGS = ROOT.parent / "shared" / "darshan-logs"
NRANKS = 100_000
NRECORDS = 1_000_000


def report_argv() -> list[str]:
    """Command line of `pario report` in a fresh process."""
    return [sys.executable, "-m", "pario", "report"]


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(argv)}\n{proc.stderr}")
    return elapsed


def in_process(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def phases(log: Path, reps: int) -> dict[str, float]:
    """Median seconds of each phase of `pario report` inside one process."""
    from pario.log import read_log
    from pario.report import build
    from pario.report.terminal import render

    profile = read_log(log)
    runs, _ = build([profile])
    sink = io.StringIO()
    return {
        "read": in_process(lambda: read_log(log), reps),
        "analyse": in_process(lambda: build([profile]), reps),
        "render": in_process(lambda: render(runs, file=sink, width=100, color=False), reps),
    }


#: One cold `pario report LOG` (terminal report to /dev/null) with the time of each phase,
#: printed as "name seconds" lines on standard error.
COLD_PHASES = """
import sys, time
t0 = time.perf_counter()
import numpy
t1 = time.perf_counter()
from pario.log import read_log
from pario.report import build, name_hint_files
from pario.report.terminal import render
t2 = time.perf_counter()
profile = read_log(sys.argv[1])
t3 = time.perf_counter()
runs, scaling = build([profile])
runs = name_hint_files(runs, [profile])
t4 = time.perf_counter()
with open("/dev/null", "w") as sink:
    render(runs, scaling, file=sink, width=100, color=False)
t5 = time.perf_counter()
for name, t in (("numpy", t1 - t0), ("pario imports", t2 - t1), ("read", t3 - t2), ("analyse", t4 - t3),
                ("render", t5 - t4)):
    print(name, t, file=sys.stderr)
"""


def cold_phases(log: Path, reps: int) -> dict[str, float]:
    """Median seconds of each phase of a cold report, over ``reps`` fresh processes."""
    runs: dict[str, list[float]] = {}
    for _ in range(reps):
        proc = subprocess.run([sys.executable, "-c", COLD_PHASES, str(log)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, check=True)
        for line in proc.stderr.splitlines():
            name, _, value = line.rpartition(" ")
            runs.setdefault(name, []).append(float(value))
    return {name: statistics.median(values) for name, values in runs.items()}


def darshan_part(log: Path, reps: int) -> None:
    import darshan

    a = [*report_argv(), str(log)]
    b = [sys.executable, "-c", f"import darshan; darshan.DarshanReport({str(log)!r}, read_all=True)"]
    c = [sys.executable, "-c", "import pandas"]
    d = [sys.executable, "-c", "import numpy"]
    for argv in (a, b, c, d):  # warm the page cache and the import caches
        timed(argv)
    ta, tb, tc, td = [], [], [], []
    for _ in range(reps):
        ta.append(timed(a))
        tb.append(timed(b))
        tc.append(timed(c))
        td.append(timed(d))
    ma, mb, mc, md = (statistics.median(t) for t in (ta, tb, tc, td))
    print(f"## {log.name}: fresh processes, {reps} interleaved repetitions (A B C D A B C D ...), medians")
    print()
    print("| A = `pario report LOG` | B = PyDarshan load only | C = `import pandas` only "
          "| D = `import numpy` only | A/B | A-D | B-D |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {ma:.3f} s | {mb:.3f} s | {mc:.3f} s | {md:.3f} s | {ma / mb:.2f} | {ma - md:.3f} s "
          f"| {mb - md:.3f} s |")
    print()
    for name, times in (("A", ta), ("B", tb), ("C", tc), ("D", td)):
        print(f"{name}: {', '.join(f'{t:.3f}' for t in times)}")
    cold = cold_phases(log, reps)
    print()
    print(f"One cold run, by phase (median of {reps} fresh processes): "
          + ", ".join(f"{name} {t:.3f} s" for name, t in cold.items()))
    ph = phases(log, reps)
    load = in_process(lambda: darshan.DarshanReport(str(log), read_all=True), reps)
    print()
    print(f"In one warm process (median of {reps}): read {ph['read']:.3f} s (libdarshan-util in a "
          f"guarded child included), analyse {ph['analyse']:.3f} s, render {ph['render']:.3f} s; "
          f"PyDarshan load alone {load:.3f} s")
    print()


# --------------------------------------------------------------------------
# the synthetic pario log
# --------------------------------------------------------------------------

def seed_pario_log(workdir: Path) -> Path:
    """A small real pario log (its META block carries the counter schema the writer needs)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    pario = [sys.executable, "-m", "pario"]
    demo = subprocess.run([*pario, "path", "pario-demo-io"], capture_output=True, text=True, env=env)
    if demo.returncode != 0:
        raise SystemExit(f"needs the installed runtime for a seed log: {demo.stderr.strip()}")
    log = workdir / "seed.pario"
    subprocess.run([*pario, "run", "--log", str(log), "--", "mpirun", "-np", "2", demo.stdout.strip(),
                    str(workdir)], check=True, env=env, capture_output=True)
    return log


def synthetic_profile(seed: Path | None, nranks: int = NRANKS, nrecords: int = NRECORDS):
    """A Profile of ``nranks`` ranks and ``nrecords`` POSIX records (plus one shared MPI-IO file).

    Each rank has nrecords / nranks files of its own (reads and writes of
    64 KiB with a skew across ranks), and every rank writes a shared
    checkpoint through MPI-IO.  With ``seed`` the counter schema of that pario
    log is used (so that write_pario_log can write the profile).
    """
    from pario.log import read_log
    from pario.model import Job, Profile, add_derived_rank_columns, counter_column
    from pario.table import Table

    rng = np.random.default_rng(42)
    per_rank = nrecords // nranks
    rank = np.repeat(np.arange(nranks, dtype=np.int64), per_rank)
    n = len(rank)
    skew = 1.0 + (np.arange(nranks) % 97) / 97.0  # up to 2x slower ranks
    reads = rng.integers(1, 64, n)
    writes = rng.integers(1, 64, n)
    posix = {
        "id": (np.arange(n, dtype=np.uint64) * np.uint64(2654435761) + np.uint64(12345)),
        "rank": rank,
        "reads": reads, "writes": writes, "opens": np.ones(n, dtype=np.int64),
        "bytes_read": reads * 65536, "bytes_written": writes * 65536,
        "size_read_10k_100k": reads, "size_write_10k_100k": writes,
        "read_time": reads * 2e-4 * skew[rank], "write_time": writes * 4e-4 * skew[rank],
        "meta_time": np.full(n, 1e-4), "nranks": np.ones(n, dtype=np.int64),
    }
    names = [f"/scratch/run/rank{r}/part{i % per_rank}.dat" for i, r in enumerate(rank.tolist())]
    ckpt_id = np.uint64(0xC0FFEE)
    mpiio = {"id": [ckpt_id], "rank": [-1], "coll_writes": [nranks], "coll_opens": [nranks],
             "bytes_written": [nranks * (1 << 20)], "write_time": [nranks * 0.5],
             "meta_time": [nranks * 0.01],
             "size_write_agg_100k_1m": [nranks], "nranks": [nranks], "fastest_rank": [1], "slowest_rank": [0],
             "fastest_rank_time": [0.3], "slowest_rank_time": [1.2], "fastest_rank_bytes": [1 << 20],
             "slowest_rank_bytes": [1 << 20]}
    if seed is not None:
        seed_profile = read_log(seed)
        schema = seed_profile.job.metadata["schema"]
        columns = {lay["name"]: [counter_column(c) for c in (*lay["counters"], *lay["fcounters"])]
                   for lay in schema["layers"]}
        rank_fields = list(schema["rank_fields"])
        metadata = dict(seed_profile.job.metadata)
    else:
        columns = {"posix": list(posix)[2:], "mpiio": list(mpiio)[2:], "stdio": []}
        rank_fields = ["wall", "posix_read", "posix_write", "posix_meta", "mpiio_write", "mpiio_meta",
                       "mpi_coll", "mpi_p2p", "mpi_other", "maxrss"]
        metadata = {}

    def frame(data: dict, layer: str, names_: list[str]) -> Table:
        table = Table({"id": np.asarray(data["id"], dtype=np.uint64),
                       "rank": np.asarray(data["rank"], dtype=np.int64),
                       "name": np.asarray(names_, dtype=object).reshape(-1)})
        for c in columns[layer]:
            if c not in ("id", "rank"):
                table[c] = np.asarray(data.get(c, np.zeros(len(table))), dtype=np.float64)
        return table

    files = {"posix": frame(posix, "posix", names),
             "mpiio": frame(mpiio, "mpiio", ["/scratch/run/checkpoint.h5"]),
             "stdio": frame({"id": [], "rank": []}, "stdio", [])}
    per_rank_read = np.bincount(rank, weights=posix["read_time"], minlength=nranks)
    per_rank_write = np.bincount(rank, weights=posix["write_time"], minlength=nranks)
    mpiio_write = np.full(nranks, (nranks * 0.5 - 0.3 - 1.2) / (nranks - 2))
    mpiio_write[0], mpiio_write[1] = 1.2, 0.3
    wall = 60.0 + 5.0 * skew
    ranks = Table({c: np.zeros(nranks) for c in rank_fields})
    ranks["wall"] = wall
    ranks["posix_read"] = per_rank_read
    ranks["posix_write"] = per_rank_write
    ranks["posix_meta"] = per_rank * 1e-4
    ranks["mpiio_write"] = mpiio_write
    ranks["mpi_coll"] = 3.0 + rng.random(nranks)
    ranks["mpi_p2p"] = 2.0 + rng.random(nranks)
    ranks["maxrss"] = 2e9 + 1e8 * rng.random(nranks)
    job = Job(source="pario", path="synthetic.pario", exe="/apps/synthetic", nprocs=nranks, start_time=0.0,
              end_time=float(wall.max()), runtime=float(wall.max()), metadata=metadata)
    return Profile(job=job, ranks=add_derived_rank_columns(ranks), files=files)


def synthetic_part(reps: int, seed: Path | None, workdir: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests"))  # the tests' writer of pario logs (not installed)
    from pario_writer import write_pario_log

    if seed is None:
        seed = seed_pario_log(workdir)
    log = workdir / "synthetic.pario"
    start = time.perf_counter()
    profile = synthetic_profile(seed)
    built = time.perf_counter() - start
    start = time.perf_counter()
    write_pario_log(profile, log)
    wrote = time.perf_counter() - start
    print(f"## synthetic pario log: {NRANKS:,} ranks, {NRECORDS + 1:,} file records, "
          f"{log.stat().st_size / 2**20:.0f} MiB (built in {built:.1f} s, written in {wrote:.1f} s)")
    print()
    argv = [*report_argv(), str(log)]
    timed(argv)
    times = [timed(argv) for _ in range(reps)]
    print(f"`pario report LOG` in a fresh process, {reps} repetitions: median "
          f"{statistics.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f})")
    ph = phases(log, max(3, reps // 2))
    print()
    print(f"In one process: read {ph['read']:.2f} s, analyse {ph['analyse']:.2f} s, "
          f"render {ph['render']:.2f} s")
    print()


def synthetic_in_memory(reps: int) -> None:
    from pario.report import build
    from pario.report.terminal import render

    profile = synthetic_profile(None)
    runs, _ = build([profile])
    sink = io.StringIO()
    analyse = in_process(lambda: build([profile]), reps)
    draw = in_process(lambda: render(runs, file=sink, width=100, color=False), reps)
    print(f"## synthetic model in memory ({NRANKS:,} ranks, {NRECORDS + 1:,} records): "
          f"analyse {analyse:.2f} s, render {draw:.3f} s (median of {reps})")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--darshan-log", type=Path, default=SHARED_LOGS / "skew-app.darshan")
    parser.add_argument("--seed-log", type=Path, help="a small pario log giving the counter schema")
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--synthetic-in-memory", action="store_true")
    args = parser.parse_args()
    if args.reps < 5:
        parser.error("use at least 5 repetitions")
    print(f"Command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print()
    darshan_part(args.darshan_log, args.reps)
    if args.synthetic_in_memory:
        synthetic_in_memory(args.reps)
    if not args.skip_synthetic:
        with tempfile.TemporaryDirectory(prefix="pario-bench-") as d:
            synthetic_part(args.reps, args.seed_log, Path(d))


if __name__ == "__main__":
    main()
