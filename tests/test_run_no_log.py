"""When a launched job leaves no log, `pario run` says why (tests/../python/pario/run_notes.py).

Real jobs under mpirun on 2 ranks, each leaving no log for another reason: mpirun cannot start the
program, the ranks never load the runtime, they load it but use no MPI, they start MPI through an
entry point pario does not see (tests/programs/init_unseen.c calls the library's own PMPI_Init), or
they are killed.  The
notes file is gone afterwards, and no process made a file of its own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pario.launch import run_notes

CASES = {
    "not loaded": (["-x", "LD_PRELOAD=", "true"], "no process of the command loaded the pario runtime"),
    "no MPI": (["true"], "the runtime was loaded by 2 processes, none of which called MPI_Init"),
    "launch failed": (["./no-such-program"], "before any process of the program started"),
    "killed": (["sh", "-c", "kill -9 $$"],
               "the 2 processes that loaded the runtime never reached their exit"),
}


def _no_log(pario_cmd, mpi_env, tmp_path: Path, args: list[str]) -> str:
    log = tmp_path / "job.pario"
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", "2", *args],
                          env=mpi_env, capture_output=True, text=True, timeout=120)
    assert not log.exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no notes left behind
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("pario: no log was written")]
    assert "see the messages above" not in line
    return line


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.slow
def test_the_reason_is_given(case: str, pario_cmd, mpi_env, tmp_path: Path):
    args, reason = CASES[case]
    assert reason in _no_log(pario_cmd, mpi_env, tmp_path, args)


@pytest.mark.slow
def test_an_mpi_init_pario_did_not_see_is_named(pario_cmd, mpi_env, compile_program, tmp_path: Path):
    exe = compile_program("init_unseen.c")
    out = tmp_path / "out"
    out.mkdir()
    log = out / "job.pario"
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", "2", str(exe)],
                          env=mpi_env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert not log.exists()
    assert (f"pario: no log was written to {log}: 2 processes started MPI through an entry point pario does "
            "not intercept (their MPI_Init was not seen); MPI library: Open MPI") in proc.stderr
    # the runtime says it too, once (rank 0), for job scripts run under `pario env`
    assert proc.stderr.count("pario: this program started MPI through an entry point") == 1


def test_notes_are_parsed(tmp_path: Path) -> None:
    assert run_notes.parse("started 64 1") == run_notes.Note(exited=False, mpi_used=False, mpi_library="",
                                                             processes=64, launcher=True)
    note = run_notes.parse("exited not-the-profiled-program 1 0 MPICH 4 (ch4)")
    assert note == run_notes.Note(exited=True, mpi_used=True, mpi_library="MPICH 4 (ch4)")
    assert run_notes.parse("started") is None and run_notes.parse("exi") is None  # torn lines
    assert run_notes.no_log_reason(None, 0) == "the runtime's messages, if any, are above"
    # rank 0 of 8 and a process it started (same launcher rank), 3 exits: 5 never reached theirs
    notes = tmp_path / "notes"
    notes.write_text("started 8 1\nstarted 8 1\n" + "exited x 0 1 \n" * 3 + "started 1 0\n")
    assert run_notes.tally(notes).started == 9 and run_notes.tally(notes).died == 6


@pytest.mark.slow
def test_no_file_per_process(pario_cmd, mpi_env, tmp_path: Path):
    """4 processes see one notes file beside the log, not one each, and it is gone after."""
    log = tmp_path / "job.pario"
    look = f"sleep 1; find {tmp_path} -path '*.pario*' > {tmp_path}/seen.$OMPI_COMM_WORLD_RANK"
    subprocess.run([*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", "4", "sh", "-c", look],
                   env=mpi_env, capture_output=True, text=True, timeout=120)
    seen = {Path(p) for rank in range(4) for p in (tmp_path / f"seen.{rank}").read_text().split()}
    assert len(seen) == 1 and next(iter(seen)).name.startswith(".pario-notes-"), seen
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"seen.{rank}" for rank in range(4)]


@pytest.mark.slow
def test_an_earlier_runs_log_is_not_announced(pario_cmd, mpi_env, compile_program, tmp_path: Path):
    """A run that writes no log does not announce the log an earlier run left under its name."""
    log = tmp_path / "job.pario"
    exe = compile_program("mpi_comm.c")
    first = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", "2", str(exe)],
                           env=mpi_env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0 and f"pario: log written to {log} (mpi_comm, 2 ranks)" in first.stderr
    before = log.read_bytes()
    missing = ["mpirun", "-np", "2", "./nonexistent"]
    again = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", *missing], env=mpi_env,
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert again.returncode != 0 and "log written" not in again.stderr
    assert (f"pario: no log was written to {log}: the command failed (exit code {again.returncode}) before "
            f"any process of the program started (see its messages above); {log} is an earlier run's, "
            "left as it was") in again.stderr
    assert log.read_bytes() == before


@pytest.mark.skipif(os.geteuid() != 0, reason="not root: Open MPI's refusal to run as root needs root")
def test_mpirun_refusing_root_is_named(pario_cmd, mpi_env, tmp_path: Path):
    env = {k: v for k, v in mpi_env.items() if not k.startswith("OMPI_ALLOW_RUN_AS_ROOT")}
    line = _no_log(pario_cmd, env, tmp_path, ["true"])
    assert "Open MPI's mpirun refuses to run as root unless OMPI_ALLOW_RUN_AS_ROOT=1" in line


def test_mpirun_refusing_more_ranks_than_cores_is_named(pario_cmd, mpi_env, tmp_path: Path):
    env = {k: v for k, v in mpi_env.items() if k != "OMPI_MCA_rmaps_base_oversubscribe"}
    ranks = (os.cpu_count() or 1) + 3
    proc = subprocess.run([*pario_cmd, "run", "--log", str(tmp_path / "j.pario"), "--", "mpirun", "-np",
                           str(ranks), "true"], env=env, capture_output=True, text=True, timeout=120)
    assert (f"it refuses {ranks} ranks on {os.cpu_count()} cores unless --oversubscribe is given"
            in proc.stderr), proc.stderr


@pytest.mark.slow
def test_a_signal_to_the_process_group_reaches_the_command_once(pario_cmd, mpi_env, tmp_path: Path):
    """SIGTERM to the whole group (what Slurm and pario tune's timeout send) reaches the command
    from the sender, and pario run does not send it a second one (mpirun aborts on a second
    signal and leaves its ranks running); the notes are gone after."""
    seen = tmp_path / "signals.txt"
    script = tmp_path / "trap.sh"
    script.write_text(f"trap 'echo TERM >> {seen}' TERM\necho ready >> {seen}\n"
                      "i=0; while [ $i -lt 40 ]; do sleep 0.1; i=$((i+1)); done\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    proc = subprocess.Popen([*pario_cmd, "run", "--log", str(logs / "j.pario"), "--", "sh", str(script)],
                            env=mpi_env, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (seen.exists() and "ready" in seen.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=60) == 0  # the script traps it and ends by itself
    assert seen.read_text().splitlines() == ["ready", "TERM"]
    assert not [p for p in logs.iterdir() if p.name.startswith(".pario-notes-")]
