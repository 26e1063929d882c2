"""auto's policy offline (bench/auto_sim.py, bench/auto_sim.c): src/collective/auto.c compiled
into a library and driven call by call.  Replayed on a real auto run with the times that run
saw (PARIO_COLL_CALLS, src/collective/engine.c), it makes the choices the run made; on a
hand-built recording it gives the totals worked out from the policy's rule; the recording
committed under bench/data replays exactly too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kernel_helpers import kernel_exe, mpi_env

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
import auto_sim  # noqa: E402

NP = 4
S3D = ["--nx", "32", "--ny", "32", "--nz", "16"]
RECORDING = BENCH / "data" / "auto_calls_2cores.csv"


@pytest.fixture(scope="module")
def policy() -> auto_sim.Policy:
    return auto_sim.Policy()


def test_candidates_are_auto_c_lists(policy):
    """The library's lists are auto.c's: several cycles write:rma-lock first, one cycle none:p2p."""
    assert policy.candidates(1) == ["write:rma-lock", "comm:rma-lock", "write-comm:rma-lock", "none:rma-lock"]
    assert policy.candidates(0) == ["none:p2p", "none:rma-lock", "none:rma-fence"]
    assert (policy.explore_share, policy.recheck) == (0.1, 16)
    other = auto_sim.Policy({"AUTO_RECHECK": "4", "AUTO_EXPLORE_SHARE": "0.25"})
    assert (other.explore_share, other.recheck) == (0.25, 4)


@pytest.mark.slow
def test_replay_of_a_real_auto_run_makes_its_choices(tmp_path, run_under_pario, policy):
    """s3d, 12 checkpoints with a 16 KiB buffer (48 calls of several cycles, three sizes): auto
    explores; the simulator fed the slowest-rank times the run saw chooses the same variant,
    candidate and exploration at every call."""
    calls, log = tmp_path / "calls", tmp_path / "auto.pario"
    command = ["mpirun", "-np", str(NP), "--mca", "io", "romio321", str(kernel_exe("s3d")), *S3D,
               "--steps", "12", "--hints", "cb_buffer_size=16384", "--path", str(tmp_path / "auto.dat")]
    proc = run_under_pario(log, command, env=mpi_env({"PARIO_COLL_CALLS": str(calls)}),
                           extra=["--collective", "auto"])
    assert proc.returncode == 0, proc.stderr
    rows = auto_sim.recording_rows(auto_sim.parse_calls(calls.read_text()),
                                   {"machine": "m", "nproc": 2, "commit": "c", "kernel": "s3d", "ranks": NP,
                                    "run": "auto", "round": 1})
    assert [r["call"] for r in rows] == list(range(48))
    assert all(r["cycle_class"] == 1 and r["slowest_ticks"] > 0 for r in rows)
    explored = [r for r in rows if r["auto_explored"]]
    assert explored and len({r["variant"] for r in rows}) >= 2
    recording = tmp_path / "calls.csv"
    auto_sim.write_recording(recording, rows)
    (runs,) = auto_sim.read_recording(recording).values()
    assert auto_sim.replay_auto(policy, runs["auto"]) == []
    # the same run replayed by a policy that never explores differs at each explored call
    never = auto_sim.Policy({"AUTO_EXPLORE_SHARE": "0"})
    wrong = auto_sim.replay_auto(never, runs["auto"])
    assert wrong and wrong[0] == rows.index(explored[0])


def hand_recording(path: Path) -> None:
    """12 calls of 1 MiB, 4 cycles each, one round: write:rma-lock takes 1.5 ms the first call and
    1 ms after, comm:rma-lock 0.5 ms, write-comm:rma-lock 3 ms, none:rma-lock 4 ms (ticks are ns)."""
    times = {"write:rma-lock": [1_500_000] + [1_000_000] * 11, "comm:rma-lock": [500_000] * 12,
             "write-comm:rma-lock": [3_000_000] * 12, "none:rma-lock": [4_000_000] * 12}
    rows = [{"machine": "hand", "nproc": 1, "commit": "-", "kernel": "k", "ranks": 4, "run": run, "round": 1,
             "file": 0, "call": i, "variant": run, "span": 1 << 20, "cycles": 4, "cycle_class": 1,
             "size_log2": 20, "ncycles": 4, "aggregators": 2, "slowest_ticks": t, "slowest_ns": t,
             "auto_candidate": -1, "auto_explored": 0, "auto_slot": -1}
            for run, ts in times.items() for i, t in enumerate(ts)]
    auto_sim.write_recording(path, rows)


def test_hand_built_recording_gives_the_expected_totals(tmp_path, policy):
    """auto runs the static choice while a try would cost more than a tenth of the class's time:
    calls 0-8 (at call 9, 0.1 x (9.5 ms + 1.002 ms) >= 1.002 ms), tries comm:rma-lock at call 9
    (faster: it becomes the best, no excess) and write-comm:rma-lock at call 10 (2.5 ms over the
    best), and then the excess keeps it on comm:rma-lock: 1.5 + 8 x 1 + 0.5 + 3 + 0.5 = 13.5 ms
    against the best fixed variant's 12 x 0.5 = 6 ms."""
    path = tmp_path / "hand.csv"
    hand_recording(path)
    (runs,) = auto_sim.read_recording(path).values()
    assert auto_sim.fixed_totals(runs) == {"write:rma-lock": 12.5, "comm:rma-lock": 6.0,
                                           "write-comm:rma-lock": 36.0, "none:rma-lock": 48.0}
    result = auto_sim.simulate(policy, runs)
    assert result.ms == pytest.approx(13.5)
    assert result.choices == [("write:rma-lock", 0, 0)] * 9 + [
        ("comm:rma-lock", 1, 1), ("write-comm:rma-lock", 2, 1), ("comm:rma-lock", 1, 0)]
    # never exploring: the static choice throughout
    assert auto_sim.simulate(auto_sim.Policy({"AUTO_EXPLORE_SHARE": "0"}), runs).ms == pytest.approx(12.5)


def test_committed_recording_replays_and_the_cli(tmp_path):
    """bench/data's 2-core recording: every auto run replays with the same choices (--check), the
    table has auto's simulated total; bad input is one line and exit status 2."""
    sim = [sys.executable, str(BENCH / "auto_sim.py")]
    check = subprocess.run([*sim, str(RECORDING), "--check"], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert " 0 different" in check.stdout and "different" not in check.stdout.replace(" 0 different", "")
    table = subprocess.run([*sim, str(RECORDING), "--policy", "AUTO_RECHECK=4"], capture_output=True,
                           text=True, timeout=60)
    assert table.returncode == 0, table.stderr
    assert "| s3d | 4 |" in table.stdout and "auto[AUTO_RECHECK=4]" in table.stdout
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    for args in ([str(bad)], [str(tmp_path / "missing.csv")], [str(RECORDING), "--policy", "nonsense"]):
        proc = subprocess.run([*sim, *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, proc
        assert proc.stderr.startswith("auto_sim: ") and proc.stderr.count("\n") == 1, proc.stderr
