"""The profiled program must never fail because of the profiler, and nothing is lost.

Non-MPI programs, threads, fork, a job that never reaches MPI_Finalize, an
unwritable log directory, a memory cap that overflows, and damaged logs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from pario.analysis.times import rank_ids
from pario.errors import LogFormatError
from pario.log import read_log
from record_helpers import one_record


def _preload_env(libpario: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PARIO_PARENT_PID", None)
    env.update(LD_PRELOAD=str(libpario), **extra)
    return env


def test_non_mpi_program_threads_exact(tmp_path, compile_program, run_under_pario):
    exe = compile_program("posix_threads.c", mpi=False)
    log = tmp_path / "threads.pario"
    proc = run_under_pario(log, [str(exe), str(tmp_path), "threads", "7"])
    assert proc.returncode == 7
    assert proc.stdout == "done\n"
    profile = read_log(log)
    assert profile.job.nprocs == 1 and profile.job.complete
    posix = profile.layer("posix")
    same = one_record(posix, str(tmp_path / "same.dat"))
    # two threads, 1000 pwrites of 100 bytes each, on one descriptor at once: none lost
    assert same["writes"] == 2000 and same["bytes_written"] == 200_000
    assert same["size_write_0_100"] == 2000
    assert same["max_byte_written"] == 100_000 + 999 * 100 + 99
    for t in range(2):
        own = one_record(posix, str(tmp_path / f"own.{t}"))
        assert own["writes"] == 500 and own["bytes_written"] == 5000
        assert own["consec_writes"] == 499
    assert profile.ranks["threads"][0] == 3  # main thread (open/close) + two workers
    assert profile.ranks["posix_write"][0] > 0


def test_fork_child_does_not_disturb(tmp_path, compile_program, run_under_pario):
    exe = compile_program("posix_threads.c", mpi=False)
    log = tmp_path / "fork.pario"
    proc = run_under_pario(log, [str(exe), str(tmp_path), "fork", "0"])
    assert proc.returncode == 0 and proc.stdout == "done\n"
    assert (tmp_path / "child.dat").stat().st_size == 70
    profile = read_log(log)
    names = set(profile.layer("posix")["name"])
    assert str(tmp_path / "child.dat") not in names  # the child's I/O is not the parent's
    parent = one_record(profile.layer("posix"), str(tmp_path / "parent.dat"))
    assert parent["writes"] == 10 and parent["bytes_written"] == 100


def test_program_spawned_by_profiled_program_writes_no_log(tmp_path, run_under_pario):
    """`sh -c` under pario: the shell is profiled, the programs it starts stay silent."""
    log = tmp_path / "sh.pario"
    proc = run_under_pario(log, ["sh", "-c", f"echo hi > {tmp_path}/a.txt; cat {tmp_path}/a.txt"])
    assert proc.returncode == 0 and proc.stdout == "hi\n"
    profile = read_log(log)
    assert profile.job.exe in ("sh", "/bin/sh", "/usr/bin/sh")


def test_memory_cap_overflow_is_reported(tmp_path, compile_program, pario_cmd, mpi_env):
    exe = compile_program("posix_threads.c", mpi=False)
    log = tmp_path / "many.pario"
    env = dict(mpi_env, PARIO_MEM="64K")
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", str(exe), str(tmp_path), "many", "0"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    profile = read_log(log)
    posix = profile.layer("posix")
    overflow = posix[posix["id"] == 0]
    assert len(overflow) == 1
    recorded = posix[np.array(["/many." in n for n in posix["name"]], dtype=bool)]
    overflowed = int(profile.ranks["records_overflowed"][0])
    assert overflowed > 0
    # nothing lost: every file is either its own record or folded into the overflow record
    assert len(recorded) + overflowed == 200
    assert int(recorded["bytes_written"].sum() + overflow["bytes_written"][0]) == 200
    assert int(recorded["opens"].sum() + overflow["opens"][0]) == 200
    assert not profile.job.complete
    assert any("overflow" in r for r in profile.job.partial_reasons)


def test_unwritable_log_directory(tmp_path, compile_program, libpario):
    """The program finishes normally; pario warns and writes the log to $TMPDIR instead."""
    exe = compile_program("posix_threads.c", mpi=False)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where a directory should be")
    fallback = tmp_path / "tmp"
    fallback.mkdir()
    env = _preload_env(libpario, PARIO_LOG=str(blocker / "x.pario"), TMPDIR=str(fallback))
    proc = subprocess.run([str(exe), str(tmp_path), "fork", "5"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 5 and proc.stdout == "done\n"
    assert "pario: cannot write log" in proc.stderr
    assert str(fallback / "x.pario") in proc.stderr
    assert read_log(fallback / "x.pario").job.nprocs == 1


def test_unwritable_log_directory_mpi(tmp_path, compile_program, libpario, mpi_env):
    exe = compile_program("io_known.c")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    fallback = tmp_path / "tmp"
    fallback.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    cmd = ["mpirun", "-np", "4", "-x", f"LD_PRELOAD={libpario}", "-x", f"PARIO_LOG={blocker}/job.pario",
           "-x", f"TMPDIR={fallback}", str(exe), str(out), "2", "512"]
    proc = subprocess.run(cmd, env=mpi_env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    assert proc.stderr.count("pario: cannot write log") == 1  # rank 0 only
    assert read_log(fallback / "job.pario").job.nprocs == 4


@pytest.mark.slow
def test_job_without_mpi_finalize(tmp_path, compile_program, run_under_pario, mpi_env, pario_cmd):
    """Same exit code and output as without pario; each rank's data is kept in a per-rank log."""
    exe = compile_program("no_finalize.c")
    plain = subprocess.run(["mpirun", "-np", "2", str(exe), str(tmp_path), "0"], env=mpi_env,
                           capture_output=True, text=True, timeout=120)
    log = tmp_path / "nf.pario"
    proc = run_under_pario(log, ["mpirun", "-np", "2", str(exe), str(tmp_path), "0"])
    assert proc.returncode == plain.returncode
    assert sorted(proc.stdout.split("\n")) == sorted(plain.stdout.split("\n"))
    assert "exited without MPI_Finalize" in proc.stderr
    assert "per-rank log" in proc.stderr
    for rank in range(2):
        part = read_log(Path(f"{log}.rank{rank}"))
        assert not part.job.complete
        assert list(rank_ids(part.ranks)) == [rank]
        rec = one_record(part.layer("posix"), str(tmp_path / f"nf.{rank}"))
        assert rec["writes"] == 5 and rec["bytes_written"] == 500
    # the job's log name reads the per-rank logs together
    merged = read_log(log)
    assert list(rank_ids(merged.ranks)) == [0, 1] and not merged.job.complete
    assert "only ranks 0-1 of 2" in merged.job.partial_reasons[0]
    assert int(merged.layer("posix")["bytes_written"].sum()) == 1000
    report = subprocess.run([*pario_cmd, "report", str(log)], capture_output=True, text=True, timeout=120)
    assert report.returncode == 0 and "DATA-INCOMPLETE" in report.stdout


def test_disable_passes_through(tmp_path, compile_program, libpario):
    exe = compile_program("posix_threads.c", mpi=False)
    env = _preload_env(libpario, PARIO_LOG=str(tmp_path / "d.pario"), PARIO_DISABLE="1")
    proc = subprocess.run([str(exe), str(tmp_path), "fork", "0"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0
    assert not (tmp_path / "d.pario").exists()


# ---- damaged logs -----------------------------------------------------------

@pytest.fixture(scope="module")
def good_log(tmp_path_factory, compile_program, pario_cmd, mpi_env) -> bytes:
    out = tmp_path_factory.mktemp("good")
    exe = compile_program("io_known.c")
    log = out / "good.pario"
    subprocess.run([*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", "2", str(exe), str(out), "2",
                    "256"], env=mpi_env, check=True, capture_output=True, timeout=120)
    return log.read_bytes()


@pytest.mark.parametrize("cut", [0, 5, 16, 40, 0.5, -1])
@pytest.mark.slow
def test_truncated_log(tmp_path, good_log, cut):
    n = int(len(good_log) * cut) if isinstance(cut, float) else (cut if cut >= 0 else len(good_log) + cut)
    bad = tmp_path / "cut.pario"
    bad.write_bytes(good_log[:n])
    with pytest.raises(LogFormatError, match=str(bad)):
        read_log(bad)


def test_corrupt_byte_detected_by_checksum(tmp_path, good_log):
    data = bytearray(good_log)
    data[len(data) // 2] ^= 0xFF
    bad = tmp_path / "flip.pario"
    bad.write_bytes(bytes(data))
    with pytest.raises(LogFormatError, match="corrupt"):
        read_log(bad)


@pytest.mark.slow
def test_cli_errors_are_one_line(tmp_path, good_log, pario_cmd):
    bad = tmp_path / "cut.pario"
    bad.write_bytes(good_log[: len(good_log) // 2])
    for target in (bad, tmp_path, tmp_path / "missing.pario"):
        proc = subprocess.run([*pario_cmd, "dump", str(target)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("pario: error: ")
        assert "Traceback" not in proc.stderr
    proc = subprocess.run([*pario_cmd, "run", "--", "no-such-program-xyz"], capture_output=True, text=True)
    assert proc.returncode == 2 and "command not found" in proc.stderr
