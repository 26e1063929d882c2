"""pario survey at scale: logs per second per core next to PyDarshan's job_stats, the speed-up
from 1 to 2 Dask workers, each worker's peak memory, and pario survey report on 100 000 jobs.

The archive: the repository's real Darshan logs (tests/data/darshan-logs) and Darshan logs of
kernel runs on this machine (block, s3d, bt, tile at 2 and 4 ranks under pario run, written as
Darshan logs by pario export --darshan, so that job_stats reads every one of them too), hard-
linked into Darshan's YYYY/M/D layout over 30 days until --logs are there.

For each round (--reps, the order of the three readers rotated from round to round):

- ``pario survey`` with a local Dask cluster of 1 worker, and of 2 workers, into a new store;
  each worker's peak resident memory (``ru_maxrss``) read from it after the survey;
- ``python -m darshan job_stats --log_paths_file MANIFEST`` (PyDarshan's process pool, one
  process per core), its output to /dev/null.

Then the 2-worker store is copied 10 times (paths, users and executables varied) into a store of
10 x --logs jobs, and ``facility_report`` is timed on it (median of 3), and the command
``pario survey report`` (the process, Python's start included).  Last, the first --phase-logs
logs of the manifest are read and analysed in this process, phase by phase (read, analysis and
the diagnosis in it, row).

With --cost-per-log N, only the CPU time per log is measured: N logs hard-linked from the
repository's Darshan logs with module data (no kernel runs), then for each round (--reps, the
order alternating) ``survey_batch`` of all N in this process (Python's imports warmed by the first
logs first) and ``python -m darshan job_stats --log_paths_file`` (its pool's start included, its
processes' CPU).

With --compaction ROWS, only the store is measured: rows synthesised with the store's schema
(the repository's readable Darshan logs read once by the survey's own code, their rows repeated
with path, user and executable varied and the start moving through 2026 in the rows' order, as
an archive grows) are written as the survey writes them, a part file per --batch rows and month,
once by --runs incremental runs and once by one run; each store is then copied and the copy
compacted (pario.survey.store.compact, the state every survey run ends in), and ``pario survey
report STORE``, ``pario survey report STORE --user 1000 --since 2026-12-01`` and ``pario survey
sql STORE "SELECT count(*) FROM jobs"`` are timed on the stores (the processes, Python's start
included; --reps rounds, the stores' order rotated from round to round; medians), with each
process's peak resident memory.  --compacted-only times the compacted stores alone.

Usage:

    .venv/bin/python bench/survey.py [--logs 10000] [--reps 1] [--work DIR] [--out FILE]
        [--phase-logs 1000]
    .venv/bin/python bench/survey.py --cost-per-log 1000 [--reps 3]
    .venv/bin/python bench/survey.py --compaction 3000 --runs 50 [--batch 64] [--reps 5]
        [--compacted-only]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT / "tests" / "data" / "darshan-logs"
KERNELS = [  # (kernel, ranks, arguments): small runs of known, varied I/O
    ("block", 2, ["--layout", "strided", "--block-size", "64k", "--transfer-size", "64k", "--segments", "8"]),
    ("block", 4, ["--layout", "contiguous", "--block-size", "1m", "--transfer-size", "4k"]),
    ("block", 4, ["--layout", "strided", "--block-size", "16k", "--transfer-size", "16k", "--segments", "32",
                  "--collective"]),
    ("s3d", 4, ["--nx", "16", "--ny", "16", "--nz", "16"]),
    ("s3d", 2, ["--nx", "32", "--ny", "16", "--nz", "8", "--steps", "3"]),
    ("bt", 4, ["--size", "24"]),
    ("tile", 4, ["--tile-x", "64", "--tile-y", "64", "--element-size", "8"]),
    ("tile", 2, ["--tile-x", "32", "--tile-y", "128", "--element-size", "16"]),
]


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def mpi_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARIO_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")
    return env


def pario() -> str:
    return str(Path(sys.executable).parent / "pario")


def kernel_logs(work: Path) -> list[Path]:
    """Darshan logs of the kernel runs (pario run, then pario export --darshan)."""
    from pario import paths

    out = []
    for i, (kernel, ranks, args) in enumerate(KERNELS):
        log, data, dlog = work / f"k{i}.pario", work / f"k{i}.dat", work / f"k{i}-{kernel}.darshan"
        subprocess.run([pario(), "run", "--log", str(log), "--", "mpirun", "-np", str(ranks),
                        str(paths.program(f"pario-kernel-{kernel}")), *args, "--path", str(data)],
                       env=mpi_env(), check=True, capture_output=True, timeout=300)
        subprocess.run([pario(), "export", "--darshan", str(log), str(dlog)], check=True, capture_output=True,
                       timeout=120)
        data.unlink(missing_ok=True)
        out.append(dlog)
    return out


def build_archive(work: Path, n: int) -> tuple[Path, Path]:
    """The archive of ``n`` logs and a manifest listing them."""
    sources = sorted(SHARED.glob("*.darshan")) + kernel_logs(work)
    archive, manifest = work / "archive", work / "manifest.txt"
    paths = []
    for i in range(n):
        src = sources[i % len(sources)]
        day = archive / "2026" / "11" / str(1 + i % 30)
        day.mkdir(parents=True, exist_ok=True)
        dst = day / f"job{i:06d}-{src.name}"
        os.link(src, dst)
        paths.append(str(dst))
    manifest.write_text("\n".join(paths) + "\n")
    say(f"archive: {n} logs from {len(sources)} distinct ones ({len(KERNELS)} kernel runs)")
    return archive, manifest


def pario_survey(archive: Path, store: Path, workers: int) -> dict:
    """One survey on a local cluster of ``workers``: seconds, rows, and each worker's peak RSS."""
    import resource

    import dask
    from distributed import Client, LocalCluster

    from pario.survey.cluster import WORKER_CONFIG, ClusterSpec, RoomyMalloc
    from pario.survey.run import SurveyPlan, run_survey

    shutil.rmtree(store, ignore_errors=True)
    # the workers as pario survey starts them: its Dask settings, and (below) its malloc plugin
    with dask.config.set(WORKER_CONFIG), LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                      dashboard_address=None) as cluster:
        with Client(cluster) as client:  # as on the cluster pario survey starts itself
            client.register_plugin(RoomyMalloc())
        plan = SurveyPlan(paths=(str(archive),), store=str(store),
                          cluster=ClusterSpec(scheduler=cluster.scheduler_address))
        t0 = time.perf_counter()
        result = run_survey(plan, progress=False)
        secs = time.perf_counter() - t0
        with Client(cluster) as client:
            peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    return {"seconds": secs, "rows": result.read, "errors": result.errors, "peak_rss": sorted(peaks.values())}


def job_stats(manifest: Path) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "darshan", "job_stats", "--log_paths_file", str(manifest),
                           "--csv"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=7200)
    secs = time.perf_counter() - t0
    if proc.returncode != 0:
        say(f"job_stats failed: {proc.stderr.strip()[-300:]}")
    return {"seconds": secs, "rc": proc.returncode, "processes": os.cpu_count() or 1}


def big_store(store: Path, big: Path, copies: int) -> int:
    """``copies`` of the store's rows, paths, users and executables varied, as a store of their own."""
    import duckdb

    from pario.survey.store import jobs_dir

    shutil.rmtree(big, ignore_errors=True)
    jobs_dir(big).mkdir(parents=True)
    src = str(jobs_dir(store) / "month=*" / "*.parquet")
    con = duckdb.connect()
    con.execute(f"""COPY (SELECT * REPLACE (path || '#' || c AS path, uid + c % 7 AS uid,
                                       exe_name || '-' || (c % 25) AS exe_name)
                      FROM read_parquet('{src}', hive_partitioning = true), range({copies}) t(c))
                    TO '{jobs_dir(big)}' (FORMAT parquet, PARTITION_BY (month), COMPRESSION zstd)""")
    return con.execute(f"SELECT count(*) FROM read_parquet('{jobs_dir(big)}/*/*.parquet')").fetchone()[0]


def report_speed(big: Path) -> dict:
    from pario.survey.facility import facility_report

    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        facility_report(str(big))
        times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    subprocess.run([pario(), "survey", "report", str(big)], check=True, stdout=subprocess.DEVNULL,
                   timeout=300)
    return {"function_s": statistics.median(times), "command_s": time.perf_counter() - t0}


def phases(manifest: Path, n: int) -> dict:
    """Where one log's time goes, in this process, over the first ``n`` logs of the manifest
    (distinct paths, as a survey sees them; the manifest cycles through the distinct logs, so
    they come in the archive's proportions): ms per log to read it, to analyse it (the diagnosis
    included), to make its row, and of the analysis the diagnosis (less an analysis without it)."""
    from pario.diagnosis import analyze
    from pario.log import read_log
    from pario.survey.discover import LogFile
    from pario.survey.row import analysed_row

    paths = manifest.read_text().split()[:n]
    spent = dict.fromkeys(("read", "analysis", "row", "diagnosis"), 0.0)
    for path in paths:
        st = os.stat(path)
        log = LogFile(path, st.st_size, st.st_mtime_ns, None)
        t0 = time.perf_counter()
        profile = read_log(path, isolated=False)
        profile.trace = None
        t1 = time.perf_counter()
        run = analyze(profile)
        t2 = time.perf_counter()
        analysed_row(log, run, profile, 0.0)
        t3 = time.perf_counter()
        analyze(profile, diagnosis=False)
        t4 = time.perf_counter()
        spent["read"] += t1 - t0
        spent["analysis"] += t2 - t1
        spent["row"] += t3 - t2
        spent["diagnosis"] += (t2 - t1) - (t4 - t3)
    return {k: v / len(paths) * 1e3 for k, v in spent.items()}


def cost_per_log(work: Path, n: int, reps: int) -> str:
    """CPU ms per log of survey_batch in this process and of job_stats, ``reps`` rounds. This
    process sets glibc's malloc as a survey's workers do (pario.survey.cluster.roomy_malloc)."""
    import resource

    from pario.log.darshan_lib import read_log
    from pario.survey.cluster import roomy_malloc
    from pario.survey.discover import LogFile
    from pario.survey.row import survey_batch

    roomy_malloc()

    sources = [p for p in sorted(SHARED.glob("*.darshan")) if read_log(str(p)).modules]
    paths = []
    for i in range(n):
        dst = work / f"job{i:06d}-{sources[i % len(sources)].name}"
        os.link(sources[i % len(sources)], dst)
        paths.append(dst)
    manifest = work / "manifest.txt"
    manifest.write_text("".join(f"{p}\n" for p in paths))
    logs = [LogFile(str(p), p.stat().st_size, p.stat().st_mtime_ns, None) for p in paths]
    survey_batch(logs[:len(sources)], 0.0)  # imports and first calls
    spent: dict[str, list[float]] = {"pario": [], "job_stats": []}
    for rep in range(reps):
        for name in (("pario", "job_stats") if rep % 2 == 0 else ("job_stats", "pario")):
            if name == "pario":
                t0 = time.process_time()
                errors = sum(1 for row in survey_batch(logs, 0.0) if row.get("error"))
                spent[name].append((time.process_time() - t0) / n * 1e3)
            else:
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                job_stats(manifest)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
                spent[name].append(cpu / n * 1e3)
            say(f"round {rep + 1}: {name} {spent[name][-1]:.2f} ms per log")
    ratios = [p / j for p, j in zip(spent["pario"], spent["job_stats"], strict=True)]
    return (f"{n} logs ({len(sources)} distinct, {errors} error rows), CPU ms per log, {reps} round(s):\n"
            f"pario survey_batch, one process: {' / '.join(f'{v:.1f}' for v in spent['pario'])}\n"
            f"python -m darshan job_stats: {' / '.join(f'{v:.1f}' for v in spent['job_stats'])}\n"
            f"pario / job_stats: {' / '.join(f'{v:.2f}' for v in ratios)}\n")


def synthetic_table(n: int):
    """``n`` rows as a table of the store's schema: the repository's logs read once, their rows
    repeated with the path, user and executable varied and the start moving through 2026 in
    the rows' order (as an archive grows: each incremental run adds the latest jobs)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from pario.survey.discover import LogFile
    from pario.survey.row import survey_batch
    from pario.survey.store import to_table

    logs = [LogFile(str(p), p.stat().st_size, p.stat().st_mtime_ns, None)
            for p in sorted(SHARED.glob("*.darshan"))]
    base = to_table([r for r in survey_batch(logs, time.time(), None) if r["status"] == "ok"])
    i = np.arange(n)
    table = base.take(pa.array(i % base.num_rows))
    us = lambda col: pc.cast(table.column(col), pa.int64()).to_numpy(zero_copy_only=False)  # noqa: E731
    runtime = us("end") - us("start")
    start = (1767225600 * 10**6 + i * (365 * 86400 * 10**6 // n)).astype("datetime64[us]")
    names = [f"{name}-{k % 41}"
             for name, k in zip(table.column("exe_name").to_pylist(), i.tolist(), strict=True)]
    paths = [f"/archive/2026/job{k:07d}-{Path(p).name}"
             for k, p in zip(i.tolist(), table.column("path").to_pylist(), strict=True)]
    ts = pa.timestamp("us", tz="UTC")
    cols = {"path": pa.array(paths), "uid": pa.array(1000 + i % 97), "exe_name": pa.array(names),
            "start": pa.array(start, ts), "end": pa.array(start + runtime.astype("timedelta64[us]"), ts),
            "day": pa.array(start.astype("datetime64[D]"), pa.date32()),
            "month": pa.array(np.datetime_as_string(start.astype("datetime64[M]")))}
    for name, col in cols.items():
        table = table.set_column(table.schema.get_field_index(name), name, col)
    return table


def write_runs(store: Path, table, runs: int, batch: int) -> int:
    """The rows written as ``runs`` survey runs write them: a part file per batch and month."""
    from pario.survey.store import make_store, write_table

    shutil.rmtree(store, ignore_errors=True)
    make_store(str(store))
    per_run = -(-table.num_rows // runs)
    for run in range(runs):
        chunk = table.slice(run * per_run, per_run)
        for k in range(0, chunk.num_rows, batch):
            write_table(str(store), chunk.slice(k, batch), f"part-run{run:04d}-{k // batch:06d}", [])
    return sum(1 for _ in store.glob("jobs/month=*/*.parquet"))


def timed(cmd: list[str]) -> tuple[float, int]:
    """Seconds and peak resident bytes of one process."""
    t0 = time.perf_counter()
    # close_fds=False lets subprocess spawn with posix_spawn (vfork): a fork would count this
    # process's memory (the synthesised rows) in the child's peak
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, close_fds=False)
    _, status, usage = os.wait4(proc.pid, 0)
    secs = time.perf_counter() - t0
    if status:
        raise SystemExit(f"{' '.join(cmd)} failed ({status})")
    return secs, usage.ru_maxrss * 1024


def compaction(work: Path, n: int, runs: int, batch: int, reps: int, parts: bool) -> str:
    from pario.survey.store import compact

    rows = synthetic_table(n)
    stores: dict[str, Path] = {}
    files: dict[str, int] = {}
    compact_s: dict[str, float] = {}
    for label, k in ((f"{runs} runs", runs), ("1 run", 1)):
        before, after = work / f"store-{k}-parts", work / f"store-{k}-compacted"
        files[f"{label}, parts"] = write_runs(before, rows, k, batch)
        shutil.rmtree(after, ignore_errors=True)
        shutil.copytree(before, after)
        t0 = time.perf_counter()
        compact(str(after))
        compact_s[label] = time.perf_counter() - t0
        files[f"{label}, compacted"] = sum(1 for _ in after.glob("jobs/month=*/*.parquet"))
        if parts:
            stores[f"{label}, parts"] = before
        stores[f"{label}, compacted"] = after
    del rows
    queries = {"report": ["survey", "report", "-q"], "sql count(*)": ["survey", "sql"],
               "report --user --since": ["survey", "report", "-q", "--user", "1000", "--since", "2026-12-01"]}
    got: dict[tuple[str, str], list[tuple[float, int]]] = {}
    order = list(stores)
    for rep in range(reps):
        for name in order[rep % len(order):] + order[:rep % len(order)]:
            for q, args in queries.items():
                cmd = [pario(), *args[:2], str(stores[name]), *args[2:]]
                if q == "sql count(*)":
                    cmd.append("SELECT count(*) FROM jobs")
                got.setdefault((name, q), []).append(timed(cmd))
        say(f"round {rep + 1} of {reps}")
    lines = [f"{n} rows, --batch {batch}; {os.cpu_count()} cores; medians of {reps}", "",
             "| store | files | report s | MiB | report --user --since s | MiB | sql count(*) s | MiB |",
             "|---|---|---|---|---|---|---|---|"]
    for name in order:
        med = [statistics.median(x[i] for x in got[(name, q)]) for q in queries for i in (0, 1)]
        lines.append(f"| {name} | {files[name]} | {med[0]:.2f} | {med[1] / 2**20:.0f} | {med[4]:.2f} | "
                     f"{med[5] / 2**20:.0f} | {med[2]:.2f} | {med[3] / 2**20:.0f} |")
    lines += ["", "compaction: " + ", ".join(f"{k} {v:.2f} s" for k, v in compact_s.items())]
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    p.add_argument("--logs", type=int, default=10000)
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--work", type=Path, default=None, help="working folder (default: a new one in /tmp)")
    p.add_argument("--out", type=Path, default=None, help="write the results table here too")
    p.add_argument("--phase-logs", type=int, default=1000, help="logs timed phase by phase in this process")
    p.add_argument("--cost-per-log", type=int, default=None, metavar="N",
                   help="measure only the CPU time per log of survey_batch and job_stats, on N logs")
    p.add_argument("--compaction", type=int, default=None, metavar="ROWS",
                   help="measure only the store's compaction, on ROWS synthesised rows")
    p.add_argument("--runs", type=int, default=50, help="incremental runs of the --compaction store")
    p.add_argument("--batch", type=int, default=64, help="rows per part file (--compaction)")
    p.add_argument("--compacted-only", action="store_true",
                   help="time the compacted stores only (--compaction; the part files are still written)")
    args = p.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="pario-bench-survey-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.cost_per_log:
            text = cost_per_log(work, args.cost_per_log, args.reps)
        elif args.compaction:
            text = compaction(work, args.compaction, args.runs, args.batch, args.reps,
                              not args.compacted_only)
        else:
            text = _survey_bench(args, work)
        print(text)
        if args.out:
            args.out.write_text(text)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def _survey_bench(args: argparse.Namespace, work: Path) -> str:
    """The survey against job_stats, and the report of a large store: the table's text."""
    archive, manifest = build_archive(work, args.logs)
    runs: dict[str, list[dict]] = {"pario-1": [], "pario-2": [], "job_stats": []}
    order = list(runs)
    for rep in range(args.reps):
        for name in order[rep % 3:] + order[:rep % 3]:
            if name == "job_stats":
                r = job_stats(manifest)
            else:
                r = pario_survey(archive, work / f"store-{name}", int(name[-1]))
            runs[name].append(r)
            say(f"round {rep + 1}: {name} {r['seconds']:.1f} s")
    n = args.logs
    med = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
    js_cores = runs["job_stats"][0]["processes"]
    rate1 = n / med["pario-1"]
    rate2 = n / med["pario-2"] / 2
    js = n / med["job_stats"] / js_cores
    peak = max(max(r["peak_rss"]) for k in ("pario-1", "pario-2") for r in runs[k])
    rows = runs["pario-2"][-1]
    copies = max(1, 100000 // max(rows["rows"], 1))
    total = big_store(work / "store-pario-2", work / "store-big", copies)
    rs = report_speed(work / "store-big")
    ms = phases(manifest, min(n, args.phase_logs))
    lines = [
        f"{n} logs, {args.reps} round(s), {os.cpu_count()} cores; medians",
        "",
        "| reader | seconds | logs/s | logs/s per core |",
        "|---|---|---|---|",
        f"| pario survey, 1 worker | {med['pario-1']:.1f} | {n / med['pario-1']:.0f} | {rate1:.0f} |",
        f"| pario survey, 2 workers | {med['pario-2']:.1f} | {n / med['pario-2']:.0f} | {rate2:.0f} |",
        f"| PyDarshan job_stats, {js_cores} processes | {med['job_stats']:.1f} | "
        f"{n / med['job_stats']:.0f} | {js:.0f} |",
        "",
        f"pario per core / job_stats per core: {rate1 / js:.2f} (1 worker), "
        f"{rate2 / js:.2f} (2 workers); "
        f"speed-up from 1 to 2 workers: {med['pario-1'] / med['pario-2']:.2f}; peak RSS of a worker: "
        f"{peak / 2**20:.0f} MiB; rows {rows['rows']} ({rows['errors']} error rows).",
        f"pario survey report on {total} jobs: {rs['function_s']:.2f} s (facility_report, median of 3), "
        f"{rs['command_s']:.2f} s (the command).",
        f"One log in one process, ms (the manifest's first {min(n, args.phase_logs)} logs): "
        f"read {ms['read']:.2f}, analysis {ms['analysis']:.2f} (of which diagnosis "
        f"{ms['diagnosis']:.2f}), row {ms['row']:.2f}; in all "
        f"{ms['read'] + ms['analysis'] + ms['row']:.2f}.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
