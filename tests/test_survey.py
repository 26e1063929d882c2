"""``pario survey`` (docs/survey.md): logs found in archives, flat folders and manifests; a store
made by a real Dask local cluster, by a scheduler and two workers started here, and by Slurm jobs
of the tests' local Slurm; surveyed twice (the second run reads nothing old); corrupt and
truncated logs stored as error rows; the facility report worked out by hand on a store of known
rows; SQL over the store."""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from darshan_logs import LOGS
from kernel_helpers import kernel_exe
from pario.errors import ParioError
from pario.survey.discover import find_logs, in_window
from pario.survey.facility import Filters, facility_report
from pario.survey.store import query, write_rows

NP = 4
BLOCK = ["--layout", "strided", "--block-size", "64k", "--transfer-size", "64k", "--segments", "4",
         "--collective"]
BLOCK_BYTES = NP * 4 * 65536  # each rank writes 4 blocks of 64 KiB
SHARED = sorted(LOGS.glob("*.darshan"))


def survey(pario_cmd: list[str], *args: str, env: dict[str, str] | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*pario_cmd, "survey", *args], capture_output=True, text=True, timeout=timeout,
                          env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def one_line(text: str) -> str:
    """The output with its lines joined (the status line wraps at the terminal's width)."""
    return " ".join(text.split())


def sql(store: Path, text: str) -> list[tuple]:
    return query(str(store), text)[1]


@pytest.fixture(scope="module")
def archive(tmp_path_factory, pario_cmd, mpi_env, compile_program) -> Path:
    """Darshan's archive layout with the shared logs over two days, a pario log of the block
    kernel with its event trace (4 ranks, 1 MiB written collectively), a corrupt log and a
    truncated one, in a folder of its own the per-rank logs of a job whose 2 ranks exited
    without MPI_Finalize, and in another a Darshan log compressed with gzip."""
    root = tmp_path_factory.mktemp("archive")
    for i, log in enumerate(SHARED):
        day = root / "2026" / "11" / ("26" if i % 2 else "27")
        day.mkdir(parents=True, exist_ok=True)
        shutil.copy(log, day / log.name)
    flat = root / "flat"
    flat.mkdir()
    data = tmp_path_factory.mktemp("data") / "block.dat"
    proc = subprocess.run([*pario_cmd, "run", "--trace", "--log", str(flat / "block.pario"), "--", "mpirun",
                           "-np", str(NP), str(kernel_exe("block")), *BLOCK, "--path", str(data)],
                          env=mpi_env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    (flat / "corrupt.darshan").write_bytes(bytes(range(256)) * 40)
    whole = (LOGS / "imbalanced-io.darshan").read_bytes()
    (flat / "truncated.darshan").write_bytes(whole[: len(whole) // 3])
    (flat / "notes.txt").write_text("not a log\n")
    killed = root / "killed"
    killed.mkdir()
    out = tmp_path_factory.mktemp("killed-out")
    subprocess.run([*pario_cmd, "run", "--log", str(killed / "job.pario"), "--", "mpirun", "-np", "2",
                    str(compile_program("no_finalize.c")), str(out), "0"],
                   env=mpi_env, capture_output=True, text=True, timeout=180)
    assert sorted(p.name for p in killed.iterdir()) == ["job.pario.rank0", "job.pario.rank1"]
    (root / "gz").mkdir()  # a site that compresses its finished logs
    (root / "gz" / "old.darshan.gz").write_bytes(gzip.compress((LOGS / "skew-app.darshan").read_bytes()))
    return root


def test_logs_are_found_in_archives_folders_and_manifests(tmp_path: Path):
    for rel in ("2026/11/5/a.darshan", "2026/12/1/b.darshan.gz", "flat/c.pario", "flat/d.txt",
                "flat/sub/e.darshan"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"x")
    os.utime(tmp_path / "flat/c.pario", (0, dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc).timestamp()))
    manifest = tmp_path / "list.txt"
    manifest.write_text("# two logs, one missing\nflat/d.txt\n\n/no/such.darshan\n")
    found = list(find_logs([str(tmp_path / "2026"), str(tmp_path / "flat"), str(tmp_path / "flat/c.pario")],
                           [str(manifest)]))
    names = [Path(f.path).relative_to(tmp_path) if f.path.startswith(str(tmp_path)) else f.path
             for f in found]
    assert names == [Path("2026/11/5/a.darshan"), Path("2026/12/1/b.darshan.gz"), Path("flat/c.pario"),
                     Path("flat/sub/e.darshan"), Path("flat/d.txt"), "/no/such.darshan"]
    days = {Path(f.path).name: f.day for f in found}
    assert days["a.darshan"] == dt.date(2026, 11, 5) and days["b.darshan.gz"] == dt.date(2026, 12, 1)
    assert days["c.pario"] == dt.date(2026, 11, 20)  # no archive folder: the modification time
    assert found[-1].size == -1  # listed but missing: the survey stores it as an error row
    window = [Path(f.path).name for f in found if in_window(f, dt.date(2026, 11, 6), dt.date(2026, 11, 30))]
    assert "a.darshan" not in window and "b.darshan.gz" not in window and "c.pario" in window
    with pytest.raises(ParioError, match="no such file or directory"):
        list(find_logs([str(tmp_path / "nowhere")]))

    # per-rank logs of a job that did not finish MPI: its log once (sizes added, latest time),
    # named as a path too; beside a log of the same name, nothing more
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    for name, size in (("j.pario.rank0", 3), ("j.pario.rank1", 4), ("j.pario.rank10", 5), ("k.pario", 1),
                       ("k.pario.rank0", 1)):
        (ranks / name).write_bytes(b"x" * size)
    os.utime(ranks / "j.pario.rank1", ns=(0, 2_000_000_000_000_000_000))
    walked = [(Path(f.path).name, f.size, f.mtime_ns) for f in find_logs([str(ranks)])]
    k_time = (ranks / "k.pario").stat().st_mtime_ns
    assert walked == [("j.pario", 12, 2_000_000_000_000_000_000), ("k.pario", 1, k_time)]
    assert [f.size for f in find_logs([str(ranks / "j.pario")])] == [12]


@pytest.mark.slow
def test_local_cluster_survey_is_incremental(archive: Path, tmp_path: Path, pario_cmd):
    store = tmp_path / "store"
    archive = Path(shutil.copytree(archive, tmp_path / "archive"))  # this test changes a log
    first = survey(pario_cmd, str(archive), "--store", str(store), "--workers", "2", "--batch", "3")
    assert first.returncode == 0, first.stderr
    n = len(SHARED) + 5  # the shared logs, block.pario, corrupt, truncated, the killed job, a .gz
    assert (f"{n} logs found, 0 already in the store, {n} read (2 unreadable) on 2 Dask workers"
            in one_line(first.stdout))

    # the pario log of the block kernel: exact bytes, ranks, layers, and where it was written
    (row,) = sql(store, "SELECT source, nprocs, bytes_written, mpiio_bytes_written, posix_bytes_written, "
                        "uid, exe_name, nfiles FROM jobs WHERE path LIKE '%block.pario'")
    assert row[:4] == ("pario", NP, BLOCK_BYTES, BLOCK_BYTES)
    assert row[4] >= BLOCK_BYTES and row[5] == os.getuid() and row[6] == "pario-kernel-block"
    # the row says what pario report says of the log (the survey leaves out the trace's replays,
    # from which no column comes)
    done = subprocess.run([*pario_cmd, "report", "--json", "-", str(archive / "flat" / "block.pario")],
                          capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(done.stdout)["runs"][0]
    ((pe, ioe, ids),) = sql(store, "SELECT parallel_efficiency, io_efficiency, [f.id FOR f IN findings] "
                                   "FROM jobs WHERE path LIKE '%block.pario'")
    pop = report["pop"]
    assert (pe, ioe) == (pop["parallel_efficiency"]["value"], pop["io_efficiency"]["value"])
    assert ids == [f["id"] for f in report["findings"]]
    # the MPI-IO layer's rates: written, not read (the kernel reads nothing back)
    ((wrate, rrate),) = sql(store, "SELECT mpiio_write_rate, mpiio_read_rate FROM jobs "
                                   "WHERE path LIKE '%block.pario'")
    assert wrate > 0 and rrate is None
    fs = sql(store, "SELECT fs, bytes_written FROM filesystems "
                    "WHERE path LIKE '%block.pario' AND bytes_written > 0")
    assert [b for _, b in fs] == [row[4]] and fs[0][0] not in ("", "unknown")

    # a Darshan log's row matches what PyDarshan reads from it
    import darshan

    log = next(p for p in SHARED if p.name.startswith("treddy"))
    rep = darshan.DarshanReport(str(log), read_all=False)
    (got,) = sql(store, f"SELECT nprocs, uid, job_id, day FROM jobs WHERE path LIKE '%{log.name}'")
    job = rep.metadata["job"]
    assert got[:3] == (job["nprocs"], job["uid"], str(job["jobid"]))
    assert got[3] in (dt.date(2026, 11, 26), dt.date(2026, 11, 27))
    # its requests: POSIX's size histograms (MPI-IO's for files without POSIX records), small
    # ones in the buckets up to 10 KiB
    rep.mod_read_all_records("POSIX")
    rep.mod_read_all_records("MPI-IO")
    posix = rep.records["POSIX"].to_df()["counters"]
    mpiio = rep.records["MPI-IO"].to_df()["counters"]
    mpiio = mpiio[~mpiio["id"].isin(posix["id"])]
    want = [0, 0]
    for frame, prefix in ((posix, "POSIX_SIZE_"), (mpiio, "MPIIO_SIZE_")):
        for col in (c for c in frame.columns if c.startswith(prefix)):
            want[0] += int(frame[col].clip(lower=0).sum())
            if col.endswith(("_0_100", "_100_1K", "_1K_10K")):
                want[1] += int(frame[col].clip(lower=0).sum())
    assert want[0] > want[1] > 0
    got = sql(store, f"SELECT requests, small_requests FROM jobs WHERE path LIKE '%{log.name}'")
    assert got == [tuple(want)]
    # files: each once, though imbalanced-io opened some through STDIO and POSIX both
    log = LOGS / "imbalanced-io.darshan"
    rep = darshan.DarshanReport(str(log), read_all=True)
    ids = [set(rep.records[m].to_df()["counters"]["id"]) for m in ("POSIX", "STDIO", "MPI-IO")]
    assert sum(map(len, ids)) > len(set.union(*ids)) == 1030
    assert sql(store, f"SELECT nfiles FROM jobs WHERE path LIKE '%{log.name}'") == [(1030,)]
    assert sql(store, f"SELECT sum(files) FROM filesystems WHERE path LIKE '%{log.name}'") == [(1030,)]

    # the job that did not finish MPI: its two per-rank logs read as one incomplete job, under
    # the log's own name (each rank wrote 5 x 100 bytes)
    got = sql(store, "SELECT path, source, nprocs, complete, posix_bytes_written FROM jobs "
                     "WHERE path LIKE '%killed%'")
    assert got == [(str(archive / "killed" / "job.pario"), "pario", 2, False, 1000)]

    # the log compressed with gzip reads as the log
    assert sql(store, "SELECT nprocs FROM jobs WHERE path LIKE '%old.darshan.gz'") == [(65536,)]

    errors = dict(sql(store, "SELECT regexp_extract(path, '[^/]+$'), error FROM errors"))
    assert set(errors) == {"corrupt.darshan", "truncated.darshan"}
    assert all(reason and "\n" not in reason for reason in errors.values())
    assert sql(store, "SELECT count(*) FROM jobs")[0][0] == n - 2

    # a second survey reads nothing old; a changed log is read again and replaces its row
    again = survey(pario_cmd, str(archive), "--store", str(store), "--workers", "1")
    assert f"{n} logs found, {n} already in the store, 0 read" in one_line(again.stdout)
    changed = archive / "flat" / "truncated.darshan"
    shutil.copy(LOGS / "imbalanced-io.darshan", changed)
    third = survey(pario_cmd, str(archive), "--store", str(store), "--workers", "1")
    assert f"{n} logs found, {n - 1} already in the store, 1 read (0 unreadable)" in one_line(third.stdout)
    assert sql(store, "SELECT count(*) FROM errors")[0][0] == 1
    assert sql(store, "SELECT count(*) FROM jobs")[0][0] == n - 1
    assert sql(store, "SELECT count(*) FROM rows_all WHERE path LIKE '%truncated.darshan'")[0][0] == 2


@pytest.mark.slow
def test_window_and_limit(archive: Path, tmp_path: Path, pario_cmd):
    store = tmp_path / "store"
    proc = survey(pario_cmd, str(archive / "2026"), "--store", str(store), "--workers", "1",
                  "--since", "2026-11-27", "--until", "2026-11-27", "--limit", "2")
    assert proc.returncode == 0, proc.stderr
    on_27 = len(SHARED[0::2])
    assert f"{on_27} logs found, 0 already in the store, 2 read" in one_line(proc.stdout)
    assert {d for (d,) in sql(store, "SELECT day FROM jobs")} == {dt.date(2026, 11, 27)}


def stop(procs: list[subprocess.Popen]) -> None:
    """Stop the scheduler and workers (each a process group: a nanny and its worker): SIGTERM,
    then SIGKILL for a group still there after 10 s."""
    for p in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)


CRASH_PRELOAD = """
# A dask worker preload: Darshan's library "crashes" (SIGSEGV) on logs named crash-me*, as a
# damaged log that passes pario's checks could make it do.
import os, signal
from pario.log import darshan_reader

_load = darshan_reader._load_with_library


def _load_or_crash(path, *args):
    if os.path.basename(path).startswith("crash-me"):
        os.kill(os.getpid(), signal.SIGSEGV)
    return _load(path, *args)


darshan_reader._load_with_library = _load_or_crash
"""


@pytest.mark.slow
def test_a_scheduler_and_two_workers(archive: Path, tmp_path: Path, pario_cmd):
    """A real distributed scheduler and two worker processes, started here as a site would; a log
    whose reading kills the worker is stored as an error row, and the other log of its batch is
    read again on its own."""
    flat = Path(shutil.copytree(archive / "flat", tmp_path / "flat"))
    shutil.copy(LOGS / "imbalanced-io.darshan", flat / "crash-me.darshan")
    preload = tmp_path / "crash_preload.py"
    preload.write_text(CRASH_PRELOAD)
    sched_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}  # a task dies with its worker
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file",
                               str(sched_file), "--port", "0", "--no-dashboard"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)]
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(sched_file.read_text())["address"]
        for _ in range(2):
            procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                                           "--nthreads", "1", "--no-dashboard", "--preload", str(preload)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True))
        from distributed import Client

        with Client(address, timeout=60) as c:
            c.wait_for_workers(2, timeout=60)
        store = tmp_path / "store"
        proc = survey(pario_cmd, str(flat), "--store", str(store), "--scheduler", address, "--batch", "2")
        assert proc.returncode == 0, proc.stderr
        assert ("4 logs found, 0 already in the store, 4 read (3 unreadable) on 2 Dask workers"
                in one_line(proc.stdout))
        assert sql(store, "SELECT nprocs, bytes_written FROM jobs") == [(NP, BLOCK_BYTES)]
        (reason,) = sql(store, "SELECT error FROM errors WHERE path LIKE '%crash-me.darshan'")[0]
        assert reason.startswith("the reader stopped the worker"), reason
    finally:
        stop(procs)


@pytest.mark.slow
def test_slurm_jobs(archive: Path, tmp_path: Path, pario_cmd, slurm_env):
    """dask-jobqueue's SLURMCluster on the tests' one-node Slurm (256 MB declared: the job asks
    for less with an extra #SBATCH line; the worker's own limit stays 2 GB)."""
    store = tmp_path / "store"
    proc = survey(pario_cmd, str(archive / "2026"), "--store", str(store), "--slurm", "--slurm-jobs", "1",
                  "--slurm-walltime", "00:10:00", "--slurm-option=--mem=100M", env=slurm_env, timeout=400)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    n = len(SHARED)
    assert (f"{n} logs found, 0 already in the store, {n} read (0 unreadable) on 1 Dask worker"
            in one_line(proc.stdout))
    assert sql(store, "SELECT count(*) FROM jobs")[0][0] == n
    assert {p.suffix for p in (store / "slurm").iterdir()} == {".out", ".err"}  # the job's output, kept


@pytest.mark.slow
def test_bad_input_is_one_line(tmp_path: Path, pario_cmd):
    store = str(tmp_path / "s")
    cases = [(["survey", str(tmp_path / "nowhere"), "--store", store], "no such file or directory"),
             (["survey", "--store", str(tmp_path / "s")], "nothing to survey"),
             (["survey", "report", str(tmp_path)], "no survey store here"),
             (["survey", "sql", str(tmp_path), "SELECT 1"], "no survey store here"),
             (["survey", str(tmp_path), "--store", store, "--since", "2026-13-01"], "is not a date"),
             (["survey", str(LOGS), "--store", str(LOGS / "INDEX.md" / "s")], "cannot write the store"),
             (["survey", str(LOGS), "--store", store, "--scheduler", "tcp://127.0.0.1:1"],
              "cannot reach the Dask scheduler tcp://127.0.0.1:1")]
    for args, text in cases:
        proc = subprocess.run([*pario_cmd, *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and text in lines[0], (args, proc.stderr)


# --- the facility report, on rows whose answers are worked out by hand ----------------------------

def row(path: str, exe: str, uid: int, nprocs: int, runtime: float, io_share: float, findings: list,
        start: str = "2026-11-02", fs: str = "lustre", nfiles: int = 1, small: int = 0) -> dict:
    t0 = dt.datetime.fromisoformat(start).replace(tzinfo=dt.timezone.utc).timestamp()
    io_time = io_share * runtime * nprocs
    return {"path": path, "size": 1, "mtime_ns": 1, "day": dt.date.fromisoformat(start), "surveyed_at": 1.0,
            "status": "ok", "error": None, "month": start[:7], "source": "darshan", "job_id": path,
            "uid": uid, "exe": f"/apps/{exe}", "exe_name": exe, "nprocs": nprocs, "start": t0,
            "end": t0 + runtime, "runtime_s": runtime, "core_hours": nprocs * runtime / 3600,
            "complete": True, "io_share": io_share, "io_time_s": io_time, "io_core_hours": io_time / 3600,
            "bytes_read": 0, "bytes_written": 3600 << 20,
            "meta_ops": 10, "meta_time_s": 36.0, "requests": 100, "small_requests": small, "nfiles": nfiles,
            "filesystems": [{"fs": fs, "files": nfiles, "bytes_read": 0, "bytes_written": 3600 << 20,
                             "io_time_s": io_time}],
            "findings": [{"id": i, "severity": s, "time_lost_s": t} for i, s, t in findings]}


@pytest.fixture
def facility(tmp_path: Path) -> Path:
    """Four jobs: two of 'sim' (uid 1), one of 'ml' (uid 2), one of 'post' (uid 1) in December."""
    store = tmp_path / "store"
    write_rows(str(store), [
        # 64 ranks x 1 h = 64 core-hours, 25% in I/O (16), SMALL costs 600 s x 64 = 10.67 core-hours
        row("a", "sim", 1, 64, 3600, 0.25, [("SMALL", "critical", 600.0), ("STRIPE", "warning", 360.0)]),
        # 32 ranks x 0.5 h = 16 core-hours, 50% in I/O (8)
        row("b", "sim", 1, 32, 1800, 0.50, [("SMALL", "warning", 450.0)], nfiles=5000, small=90),
        # 8 ranks x 1 h = 8 core-hours, 2% in I/O (0.16)
        row("c", "ml", 2, 8, 3600, 0.02, [("STRIPE", "warning", 3600.0), ("META", "info", None)], fs="nfs"),
        # 4 ranks x 1 h = 4 core-hours, 100% in I/O (4)
        row("d", "post", 1, 4, 3600, 1.0, [("META", "info", 36.0)], start="2026-12-03"),
    ], "part-test")
    return store


def test_facility_numbers_worked_out_by_hand(facility: Path):
    r = facility_report(str(facility))
    s = r.summary
    assert (s["jobs"], s["users"], s["applications"], s["unreadable_logs"]) == (4, 2, 3, 0)
    assert s["core_hours"] == pytest.approx(64 + 16 + 8 + 4)
    assert s["io_core_hours"] == pytest.approx(16 + 8 + 0.16 + 4)
    assert s["io_share_of_core_hours"] == pytest.approx(28.16 / 92)
    assert [(b["bucket"], b["jobs"], round(b["core_hours"], 6)) for b in r.io_share] == [
        ("1–5%", 1, 8.0), ("10–25%", 1, 64.0), ("25–50%", 1, 16.0), ("50–100%", 1, 4.0)]
    assert r.io_share_percentiles["p50"] == pytest.approx((0.25 + 0.50) / 2)
    assert [(a["exe_name"], a["jobs"], round(a["io_core_hours"], 6)) for a in r.applications] == [
        ("sim", 2, 24.0), ("post", 1, 4.0), ("ml", 1, 0.16)]
    assert r.applications[0]["top_findings"] == "SMALL, STRIPE"  # 10.67 + 4 core-hours, then 6.4
    # core-hours lost: SMALL 600 x 64 + 450 x 32 = 52 800 core-s; STRIPE 360 x 64 + 3600 x 8 would be
    # 51 840, but job c spent only 0.16 core-hours (576 core-s) in I/O: a finding costs at most the
    # job's I/O, so 23 040 + 576
    assert [(f["id"], f["jobs"], round(f["core_hours_lost"], 4)) for f in r.findings_by_time] == [
        ("SMALL", 2, round(52800 / 3600, 4)), ("STRIPE", 2, round(23616 / 3600, 4)),
        ("META", 2, round(144 / 3600, 4))]
    assert all(f["core_hours_lost"] <= s["io_core_hours"] for f in r.findings_by_time)
    assert [f["id"] for f in r.findings_by_jobs][:3] == ["SMALL", "STRIPE", "META"]
    # critical in one job, a warning in the other: the worst is shown
    assert [f["severity"] for f in r.findings_by_jobs][:3] == ["critical", "warning", "info"]
    # bandwidth per process: 3600 MiB over the job's summed I/O time
    lustre = {x["month"]: x for x in r.filesystems if x["fs"] == "lustre"}
    assert set(lustre) == {"2026-11", "2026-12"}
    assert lustre["2026-11"]["jobs"] == 2
    assert lustre["2026-11"]["bw_p50"] == pytest.approx(((3600 << 20) / 57600 + (3600 << 20) / 28800) / 2)
    assert r.small_files[0]["exe_name"] == "sim" and r.small_files[0]["files"] == 5001
    assert r.small_files[0]["small_share"] == pytest.approx(90 / 200)


@pytest.mark.slow
def test_facility_filters(facility: Path):
    def jobs(**kw) -> int:
        return facility_report(str(facility), Filters(**kw)).summary["jobs"]

    assert jobs(user="1") == 3 and jobs(user="2") == 1
    assert jobs(exe="s*") == 2 and jobs(exe="/apps/p*") == 1
    assert jobs(since=dt.date(2026, 12, 1)) == 1 and jobs(until=dt.date(2026, 11, 30)) == 3
    assert jobs(fs="nfs") == 1 and jobs(fs="lustre", user="1") == 3
    with pytest.raises(ParioError, match="no such user"):
        jobs(user="no-such-user-here")


@pytest.mark.slow
def test_report_forms(facility: Path, tmp_path: Path, pario_cmd):
    out = tmp_path / "csv"
    proc = subprocess.run([*pario_cmd, "survey", "report", str(facility), "--json", str(tmp_path / "r.json"),
                           "--csv", str(out), "--html", str(tmp_path / "r.html"), "--user", "1"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "3 jobs of 1 user, 2 applications, 84.0 core-hours, of which 28.0 in I/O" in one_line(proc.stdout)
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["summary"]["jobs"] == 3 and data["filters"] == "user 1"
    assert (out / "applications.csv").read_text().splitlines()[1].startswith("sim,2,")
    none = subprocess.run([*pario_cmd, "survey", "report", str(facility), "--exe", "nothing*"],
                          capture_output=True, text=True, timeout=120)
    assert none.returncode == 0 and none.stdout.splitlines()[-1] == "No job matches.", none.stdout
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{k}.csv" for k in (
        "summary", "io_share", "applications", "findings_by_time", "findings_by_jobs", "filesystems",
        "small_files", "metadata", "errors"))


@pytest.mark.slow
def test_report_html_in_the_browser(facility: Path, tmp_path: Path, browser, pario_cmd):
    from browser import load

    page_file = tmp_path / "facility.html"
    proc = subprocess.run([*pario_cmd, "survey", "report", str(facility), "--html", str(page_file), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    page = load(browser, page_file)
    assert page.errors == []
    assert page.figures == 4 and page.drawn == 4
    assert "4 jobs of 2 users" in page.text and "SMALL" in page.text

    # anonymised executables (Darshan logs of some sites name them by numbers), most of the
    # applications here, are bars of their own, not numbers on a numeric axis; each axis has its
    # title drawn
    more = Path(shutil.copytree(facility, tmp_path / "more"))
    numbers = ["2075454093", "407752450", "2032579916", "17"]
    write_rows(str(more), [row(f"n{i}", exe, 3, 16, 3600, 0.5, []) for i, exe in enumerate(numbers)],
               "part-more")
    page_file = tmp_path / "more.html"
    proc = subprocess.run([*pario_cmd, "survey", "report", str(more), "--html", str(page_file), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    probe = """(() => {
        const apps = document.getElementById('fig-apps');
        const ticks = Array.from(apps.querySelectorAll('.ytick text')).map(t => t.textContent);
        const titles = Array.from(document.querySelectorAll('.xtitle, .ytitle, .y2title'))
            .map(t => t.textContent);
        return {type: apps._fullLayout.yaxis.type, ticks: ticks, titles: titles};
    })()"""
    page = load(browser, page_file, probe)
    assert page.errors == [] and page.drawn == 4
    assert page.probe["type"] == "category"
    assert sorted(page.probe["ticks"]) == sorted(["sim", "post", "ml", *numbers])
    assert {"jobs", "core-hours", "core-hours in I/O", "core-hours lost (estimate)", "bytes/s"} <= set(
        page.probe["titles"])


@pytest.mark.slow
def test_a_store_of_unreadable_logs_only(tmp_path: Path, pario_cmd):
    """A survey whose every log is unreadable: one line about it, and a report that shows why."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.darshan").write_text("not a log\n")
    store = tmp_path / "store"
    proc = survey(pario_cmd, str(tmp_path / "logs"), "--store", str(store), "--workers", "1")
    assert proc.returncode == 0, proc.stderr
    assert "1 log found, 0 already in the store, 1 read (1 unreadable)" in one_line(proc.stdout)
    rep = subprocess.run([*pario_cmd, "survey", "report", str(store)], capture_output=True, text=True,
                         timeout=120)
    assert rep.returncode == 0, rep.stderr
    assert "0 jobs of 0 users" in rep.stdout and "1 unreadable log" in rep.stdout
    words = " ".join(w for w in rep.stdout.replace("│", " ").split())  # the table's cells unwrapped
    assert "No job matches. Unreadable logs" in words and "not a pario or Darshan log" in words


@pytest.mark.slow
def test_sql(facility: Path, pario_cmd):
    proc = subprocess.run([*pario_cmd, "survey", "sql", str(facility), "--csv",
                           "SELECT exe_name, sum(core_hours) AS ch FROM jobs GROUP BY 1 ORDER BY 2 DESC"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["exe_name,ch", "sim,80.0", "ml,8.0", "post,4.0"]
    bad = subprocess.run([*pario_cmd, "survey", "sql", str(facility), "SELECT nope FROM jobs"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "the query failed" in bad.stderr and "nope" in bad.stderr


def test_file_systems_from_a_mount_table():
    """The longest mount point that is a name or holds it gives the name's type, looked up one
    name at a time or per directory."""
    from pario.model import MountTable

    table = MountTable([["/", "rootfs"], ["/home", "nfs"], ["/scratch/", "lustre"], ["/scratch/a", "xfs"],
                        ["/data/file.h5", "fuse"], ["bad"], None])
    names = ["/home/u/x", "/homework/x", "/scratch/a/b", "/scratch/ab", "/scratch", "/data/file.h5",
             "/data/other", "/x", "<STDOUT>", "rel/x", "/home/u/y"]
    want = ["nfs", "rootfs", "xfs", "lustre", "rootfs", "fuse", "rootfs", "rootfs", "", "", "nfs"]
    assert [table.fs_type(n) for n in names] == want
    assert table.fs_types(names) == want
    assert MountTable(None).fs_types(["/x"]) == [""]
    # one name per directory, and each name that is a mount point or has no directory
    assert [names[i] for i in table.distinct(names)] == [
        "/home/u/x", "/homework/x", "/scratch/a/b", "/scratch/ab", "/scratch", "/data/file.h5", "/data/other",
        "<STDOUT>", "rel/x"]
    assert set(table.fs_types([names[i] for i in table.distinct(names)])) == set(want)


def test_the_file_system_of_each_file():
    """One rule for the diagnosis and the survey: pario's statfs magic (POSIX, else MPI-IO), then
    a Lustre layout, then the mount table; striping asked for in hints says nothing."""
    import numpy as np

    from pario.analysis.filesystems import FileSystems
    from pario.diagnosis import RuleConfig
    from pario.diagnosis.facts import facts_of
    from pario.diagnosis.file_facts import fs_of
    from pario.model import Job, Profile
    from pario.table import Table

    nfs, ext4, xfs = 0x6969, 0xEF53, 0x58465342
    posix = Table({"id": np.array([1, 1, 2, 5], dtype=np.uint64), "rank": np.array([-1, 0, 0, 0]),
                   "name": np.array(["/a", "/a", "/b", "/e"], dtype=object),
                   "fs_type": np.array([0, xfs, ext4, 0], dtype=np.int64)})
    mpiio = Table({"id": np.array([2, 3], dtype=np.uint64), "rank": np.array([-1, -1]),
                   "name": np.array(["/b", "/c"], dtype=object), "fs_type": np.array([nfs, nfs])})
    job = Job("pario", "/run.pario", "app", 2, 0.0, 1.0, 1.0,
              metadata={"lustre_striping": {4: {"stripe_size": 1 << 20, "stripe_count": 4}},
                        "mounts": [["/", "rootfs"], ["/d", "lustre"]]})
    profile = Profile(job, Table({"wall": np.ones(2)}), {"posix": posix, "mpiio": mpiio},
                      hints={3: {"striping_factor": "8", "striping_unit": "1048576"}})
    names = ["/a", "/b", "/c", "/d/x", "/e", "relative"]
    want = ["xfs", "ext4", "nfs", "lustre", "rootfs", ""]
    assert FileSystems(profile).of(np.arange(1, 7, dtype=np.uint64), names) == want
    assert FileSystems(profile).kinds(np.arange(1, 7, dtype=np.uint64), names) == set(want)
    assert FileSystems(profile).kinds(np.array([1, 5, 6], dtype=np.uint64), ["/a", "/e", "relative"]) == {
        "xfs", "rootfs", ""}
    facts = facts_of(profile, RuleConfig())
    assert [fs_of(facts, fid, name) for fid, name in zip(range(1, 7), names, strict=True)] == want
    # id 4 has a Lustre layout but no mount table entry: the layout decides
    job.metadata["mounts"] = []
    assert FileSystems(profile).of([4, 6], ["/d/x", "/f"]) == ["lustre", ""]


def test_a_job_too_large_for_the_worker_is_an_error_row_that_says_so(tmp_path: Path):
    """A Darshan log of a few kilobytes can describe a million ranks, and the analysis keeps arrays
    of one value per rank: a worker refuses a job larger than its memory allows, before reading
    it, with the memory needed; the limit comes from the Dask worker's own memory limit."""
    from distributed import Client, LocalCluster

    from pario.survey.discover import LogFile
    from pario.survey.row import BYTES_PER_RANK, WORKER_BASE_BYTES, survey_log, worker_rank_limit

    skew = LOGS / "skew-app.darshan"  # 65 536 ranks
    packed = tmp_path / "skew-app.darshan.gz"
    packed.write_bytes(gzip.compress(skew.read_bytes()))
    for path in (skew, packed):
        log = LogFile(str(path), path.stat().st_size, path.stat().st_mtime_ns, dt.date(2026, 11, 27))
        refused = survey_log(log, 0.0, max_ranks=65535)
        assert refused["status"] == "error"
        assert refused["error"].startswith(f"{path}: a job of 65,536 ranks (at most 65,535 here): "
                                           "its analysis needs about ")
        assert survey_log(log, 0.0, max_ranks=65536)["nprocs"] == 65536
    assert worker_rank_limit() is None  # not on a worker
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, memory_limit="2GB",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        got = client.submit(worker_rank_limit).result()
    assert got == int((0.6 * 2e9 - WORKER_BASE_BYTES) // BYTES_PER_RANK)  # about 1.8 million


@pytest.mark.slow
def test_the_survey_cluster_raises_malloc_thresholds():
    """Workers of the cluster the survey starts run the plugin that undoes the nanny's
    MALLOC_TRIM_THRESHOLD_ (docs/performance.md, "Facility survey")."""
    from pario.survey.cluster import ClusterSpec, RoomyMalloc, client_for, roomy_malloc

    assert roomy_malloc()  # glibc: mallopt takes both values
    with client_for(ClusterSpec(workers=1)) as client:
        found = client.run(lambda dask_worker: sorted(dask_worker.plugins))
        # and without Dask's statistical profiler (its samples are for a dashboard no one opens)
        profiling = client.run(lambda: __import__("dask").config.get("distributed.worker.profile.enabled"))
    assert [RoomyMalloc.name in names for names in found.values()] == [True]
    assert list(profiling.values()) == [False]


def test_slurm_workers_start_without_dask_s_profiler():
    """The Slurm job script sets the same worker settings as the local cluster gets."""
    from pario.survey.cluster import SlurmOptions, slurm_options

    options = slurm_options(SlurmOptions(jobs=2, cores=3, options=("--nodelist=n1",)))
    assert options["job_script_prologue"] == ["export DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False"]
    assert (options["cores"], options["processes"]) == (3, 3)
    assert options["job_extra_directives"] == ["--nodelist=n1"]


# --- compaction: few files per month, swapped atomically ------------------------------------------

def data_files(store: Path) -> dict[str, list[str]]:
    """Month -> the data files of its folder (temporary files start with a dot)."""
    return {d.name: sorted(p.name for p in d.iterdir() if not p.name.startswith("."))
            for d in sorted((store / "jobs").glob("month=*"))}


def outputs(store: Path, pario_cmd) -> list[str]:
    """What a user reads from the store: the report, and SQL over every row and the jobs."""
    got = []
    for args in (["report", str(store)],
                 ["report", str(store), "--exe", "mpi-io-test*", "--until", "2023-12-31"],
                 ["sql", str(store), "--csv", "SELECT * FROM rows_all ORDER BY path, surveyed_at"],
                 ["sql", str(store), "SELECT count(*), count(DISTINCT path) FROM jobs"]):
        proc = subprocess.run([*pario_cmd, "survey", *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        got.append(proc.stdout)
    return got


@pytest.mark.slow
def test_incremental_runs_keep_one_file_per_month(tmp_path: Path, pario_cmd):
    """Three incremental surveys of a growing archive, batches of 2 logs (one log changed in the
    last): compacted at the end of each run, every month is one file; not compacted, the same
    runs leave a file per batch and month, and compacting that store changes nothing a user
    reads, byte for byte."""
    from distributed import LocalCluster

    from pario.survey.cluster import ClusterSpec
    from pario.survey.run import SurveyPlan, run_survey

    archive = tmp_path / "archive"
    stores = {True: tmp_path / "compacted", False: tmp_path / "parts"}
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        for run in range(3):
            for i, log in enumerate(SHARED[run::3]):
                day = archive / "2026" / "11" / str(1 + run * 5 + i)
                day.mkdir(parents=True, exist_ok=True)
                shutil.copy(log, day / log.name)
            if run == 2:  # a log surveyed before changes: its new row supersedes the old one
                changed = next(archive.glob("2026/11/1/*"))
                shutil.copy(LOGS / "skew-app.darshan", changed)
            for compacted, store in stores.items():
                plan = SurveyPlan(paths=(str(archive),), store=str(store), batch=2, compact=compacted,
                                  cluster=ClusterSpec(scheduler=cluster.scheduler_address))
                assert run_survey(plan, progress=False).read > 0
                if compacted:  # the bound: one file per month after every run
                    assert all(len(names) == 1 and names[0].startswith("compact-")
                               for names in data_files(store).values())
    parts, compacted = data_files(stores[False]), data_files(stores[True])
    assert parts.keys() == compacted.keys() and len(parts) > 3
    assert sum(map(len, parts.values())) > len(parts)  # several files in a month, before
    assert sql(stores[True], "SELECT count(*) FROM rows_all") == [(len(SHARED) + 1,)]
    assert sql(stores[True], "SELECT count(*) FROM jobs") == [(len(SHARED),)]

    before = outputs(stores[False], pario_cmd)
    proc = subprocess.run([*pario_cmd, "survey", "compact", str(stores[False])], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    n = sum(map(len, parts.values()))
    assert f"{n} files of {len(parts)} months compacted into {len(parts)}" in one_line(proc.stdout)
    assert all(len(names) == 1 for names in data_files(stores[False]).values())
    assert outputs(stores[False], pario_cmd) == before
    again = subprocess.run([*pario_cmd, "survey", "compact", str(stores[False])], capture_output=True,
                           text=True, timeout=120)
    assert "nothing to compact" in again.stdout


def many_parts(store: Path) -> None:
    """Rows over three months, a part file per two rows, one path written twice."""
    rows = [row(f"j{i}", ["sim", "ml", "post"][i % 3], i % 4, 4 + i, 600.0 * (1 + i % 5), 0.1,
                [("SMALL", "warning", 10.0 * i)], start=f"2026-{9 + i % 3:02d}-{1 + i:02d}")
            for i in range(24)]
    for k in range(0, len(rows), 2):
        write_rows(str(store), rows[k:k + 2], f"part-test-{k:06d}")
    write_rows(str(store), [{**rows[0], "surveyed_at": 2.0, "nprocs": 99}], "part-test-again")


STAGES = ("writing", "written", "swapped", "removing")


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.slow
def test_a_killed_compaction_loses_nothing_and_counts_nothing_twice(tmp_path: Path, stage: str):
    """A compaction stopped at each of its steps: the store reads the same rows, each once; the
    next compaction finishes the work (and removes what the stopped one left)."""
    from pario.survey import store as survey_store

    store = tmp_path / "store"
    many_parts(store)
    every = "SELECT path, surveyed_at, nprocs FROM rows_all ORDER BY ALL"
    rows, jobs = sql(store, every), sql(store, "SELECT count(*), sum(nprocs) FROM jobs")
    assert len(rows) == 25 and jobs == [(24, sum(4 + i for i in range(1, 24)) + 99)]

    def stop(at: str) -> None:
        if at == stage:
            raise RuntimeError(f"killed at {at}")

    with pytest.raises(RuntimeError, match=f"killed at {stage}"):
        survey_store.compact(str(store), step=stop)
    if stage == "writing":  # as a kill would leave it: the temporary file half written
        month = next((store / "jobs").glob("month=*"))
        (month / ".compact-19700101T000000-deadbeef.parquet.tmp").write_bytes(b"PAR1 half")
    left = data_files(store)
    if stage in ("swapped", "removing"):  # the new file in place, old files still there
        assert any(n.startswith("compact-") for names in left.values() for n in names)
        assert sum(map(len, left.values())) > 3
    assert sql(store, every) == rows
    assert sql(store, "SELECT count(*), sum(nprocs) FROM jobs") == jobs

    done = survey_store.compact(str(store))
    assert done.months + done.removed > 0
    assert all(len(names) == 1 for names in data_files(store).values())
    assert not [p for p in (store / "jobs").rglob(".*") if p.name != ".compact.lock"]
    assert sql(store, every) == rows
    assert sql(store, "SELECT count(*), sum(nprocs) FROM jobs") == jobs


@pytest.mark.slow
def test_a_store_written_by_older_code_is_read_and_compacted(tmp_path: Path, pario_cmd):
    """Part files as pario wrote them before compaction existed, some from before a column was
    added (no nfiles, no PnetCDF columns): read as they are, then compacted into the store's
    schema, the missing columns null, the rows the same, sorted by executable, user, start."""
    import pyarrow.parquet as pq

    from pario.survey.store import SCHEMA, to_table

    store = tmp_path / "store"
    many_parts(store)
    old = sorted((store / "jobs").rglob("part-*.parquet"))[:4]
    for f in old:
        table = pq.read_table(f)
        pq.write_table(table.drop_columns([c for c in table.column_names
                                           if c == "nfiles" or c.startswith("pnetcdf")]), f)
    assert to_table([]).schema == SCHEMA
    every = "SELECT path, surveyed_at, nprocs, exe_name, start, findings FROM rows_all ORDER BY ALL"
    rows = sql(store, every)
    nulls = sql(store, "SELECT count(*) FROM rows_all WHERE nfiles IS NULL")
    assert len(rows) == 25 and nulls == [(sum(pq.read_metadata(f).num_rows for f in old),)]
    proc = subprocess.run([*pario_cmd, "survey", "compact", str(store)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert sql(store, every) == rows
    assert sql(store, "SELECT count(*) FROM rows_all WHERE nfiles IS NULL") == nulls
    for names in data_files(store).values():
        (name,) = names
        month = next((store / "jobs").glob(f"*/{name}"))
        meta = pq.ParquetFile(month)
        assert meta.schema_arrow.names == [f.name for f in SCHEMA if f.name != "month"]
        got = meta.read(columns=["exe_name", "uid", "start"]).to_pylist()
        assert got == sorted(got, key=lambda r: (r["exe_name"], r["uid"], r["start"]))
        stats = meta.metadata.row_group(0).column(meta.schema_arrow.names.index("start")).statistics
        assert stats.has_min_max  # what --since/--until skip files and row groups by


# --- filters skip files by their statistics -------------------------------------------------------

def matching_files(store: Path, keep) -> set[str]:
    """The data files holding a row that ``keep`` accepts (every row read, in Python)."""
    import pyarrow.parquet as pq

    return {f.parent.name for f in (store / "jobs").rglob("*.parquet")
            if any(keep(r) for r in pq.read_table(f).to_pylist())}


def same_sums(report) -> object:
    """The report's JSON with each float to 12 significant digits (a sum's last bits depend on
    the order DuckDB adds the rows in)."""
    from pario.survey.render import report_dict

    def fix(v):
        if isinstance(v, float):
            return float(f"{v:.12g}")
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        return [fix(x) for x in v] if isinstance(v, list) else v

    return fix(report_dict(report))


@pytest.mark.slow
def test_filters_skip_files_by_their_statistics(tmp_path: Path):
    """The real logs surveyed into a store of one file per month (11 months of jobs, and the
    unreadable log's): each filter reads exactly the files that hold a row it keeps, skips the
    others, and the report is the same as when every file is read; so it stays after a log
    changes into one of another month and user (its old row is then left out by its new one,
    read from a skipped file)."""
    from distributed import LocalCluster

    from pario.survey.cluster import ClusterSpec
    from pario.survey.run import SurveyPlan, run_survey
    day = tmp_path / "archive" / "2026" / "11" / "1"
    day.mkdir(parents=True)
    for log in SHARED:
        shutil.copy(log, day / log.name)
    (day / "bad.darshan").write_text("not a log\n")
    store = tmp_path / "store"
    utc = dt.timezone.utc
    cases = {  # filters -> (files read, files skipped), whose rows Python checks one by one
        "user 1000": (Filters(user="1000"), lambda r: r["uid"] == 1000, (4, 8)),
        "since 2022": (Filters(since=dt.date(2022, 1, 1)),
                       lambda r: r["start"] is not None and r["start"] >= dt.datetime(2022, 1, 1, tzinfo=utc),
                       (5, 7)),
        "until 2020": (Filters(until=dt.date(2020, 12, 31)),
                       lambda r: r["start"] is not None and r["start"] < dt.datetime(2021, 1, 1, tzinfo=utc),
                       (2, 10)),
        "exe mpi-io-test*": (Filters(exe="mpi-io-test*"),
                             lambda r: (r["exe_name"] or "").startswith("mpi-io-test"), (5, 7)),
        "user and since": (Filters(user="1000", since=dt.date(2022, 1, 1)),
                           lambda r: r["uid"] == 1000 and r["start"].year >= 2022, (2, 10)),
    }
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        plan = SurveyPlan(paths=(str(tmp_path / "archive"),), store=str(store),
                          cluster=ClusterSpec(scheduler=cluster.scheduler_address))
        assert run_survey(plan, progress=False).read == len(SHARED) + 1
        assert len(data_files(store)) == 12 and all(len(n) == 1 for n in data_files(store).values())
        jobs = {}
        for name, (filters, keep, counts) in cases.items():
            got = facility_report(str(store), filters)
            assert (got.files_read, got.files_skipped) == counts, name
            assert got.files_read == len(matching_files(store, keep)), name
            every = facility_report(str(store), filters, skip=False)
            assert (every.files_read, every.files_skipped) == (12, 0)
            assert same_sums(got) == same_sums(every), name
            jobs[name] = got.summary["jobs"]
        assert jobs == {"user 1000": 5, "since 2022": 7, "until 2020": 3, "exe mpi-io-test*": 5,
                        "user and since": 3}

        # empty_log.darshan (2023-02, uid 1000) becomes a job of 2025-11 and uid 30146
        shutil.copy(LOGS / "mpi-io-test-x86_64-3.5.0.darshan", day / "empty_log.darshan")
        assert run_survey(plan, progress=False).read == 1
    filters, keep, counts = cases["user 1000"]
    got, every = facility_report(str(store), filters), facility_report(str(store), filters, skip=False)
    assert (got.files_read, got.files_skipped) == counts  # the old row's file is read, the new one's not
    assert got.summary["jobs"] == 4 and same_sums(got) == same_sums(every)
    since = facility_report(str(store), cases["since 2022"][0])
    assert since.summary["jobs"] == 7 and same_sums(since) == same_sums(
        facility_report(str(store), cases["since 2022"][0], skip=False))


def _filesystems_file_by_file(run, profile) -> list[dict]:  # type: ignore[no-untyped-def]
    """The survey row's file systems worked out file by file, in plain Python."""
    import numpy as np

    from pario.analysis.filesystems import FileSystems

    files = run.files
    names = [str(n) for n in files["name"]]
    ids = np.asarray(files["id"]).astype(np.uint64).tolist()
    kinds = [k or "unknown" for k in FileSystems(profile).of(np.asarray(ids, dtype=np.uint64), names)]
    out: dict[str, dict] = {}
    seen: dict[str, set] = {}
    for i, kind in enumerate(kinds):
        e = out.setdefault(kind, {"fs": kind, "files": 0, "bytes_read": 0, "bytes_written": 0,
                                  "io_time_s": 0.0})
        seen.setdefault(kind, set()).add(ids[i])
        v = {c: float(np.nan_to_num(float(files[c][i]))) for c in
             ("bytes_read", "bytes_written", "read_time", "write_time")}
        e["bytes_read"] += int(v["bytes_read"])
        e["bytes_written"] += int(v["bytes_written"])
        e["io_time_s"] += v["read_time"] + v["write_time"]
    for kind, e in out.items():
        e["files"] = len(seen[kind])
    return sorted(out.values(), key=lambda e: -(e["bytes_read"] + e["bytes_written"]))


def test_row_file_systems_are_those_worked_out_file_by_file() -> None:
    """pario.survey.row.filesystems (per type: files, bytes, I/O time, NumPy over the files table)
    against the same file by file, on every readable log; and with bytes too large for int64."""
    import dataclasses

    import numpy as np

    from pario.diagnosis import analyze
    from pario.log import read_log
    from pario.survey.row import filesystems

    checked = 0
    for path in SHARED:
        try:
            profile = read_log(str(path), isolated=False)
        except ParioError:
            continue
        run = analyze(profile, diagnosis=False)
        if not len(run.files):
            continue
        assert filesystems(run, profile) == _filesystems_file_by_file(run, profile), path.name
        checked += 1
        if path.name.startswith("imbalanced-io"):  # 1 024 files: several sharing an id, two types
            rows = filesystems(run, profile)
            assert sum(r["files"] for r in rows) <= len(run.files)
            huge = run.files.assign(bytes_read=np.asarray(run.files["bytes_read"], dtype=float) * 1e17)
            big = dataclasses.replace(run, files=huge)
            assert filesystems(big, profile) == _filesystems_file_by_file(big, profile)
            assert max(r["bytes_read"] for r in filesystems(big, profile)) > 2 ** 63
    assert checked >= 10
