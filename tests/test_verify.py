"""pario verify: each finding's suggested settings run against the unchanged command, in paired rounds.

The verdict logic on numbers worked out by hand; then real runs of the block kernel under ROMIO
(4 ranks): the application's own hints force collective buffering through one aggregator
(MPIIO-SINGLE-AGGREGATOR suggests cb_nodes 4 with cb_config_list *:4, which spreads the writes over
four ranks, and MPIIO-COLLECTIVE-RMW romio_cb_write disable, which ends the read-modify-write of the
gaps: both "help"), and the
application disables collective buffering on a pattern where ROMIO's read-modify-write makes
enabling it cost more (MPIIO-CB-DISABLED's advice does not help on this local disk)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kernel_helpers import kernel_exe
from pario.verify.verdict import FAILED, HARMS, HELPS, NO_EFFECT, TOO_FEW, judge

BASE = [1.00, 1.10, 0.90, 1.00, 1.05]


def test_launch_settings_are_changes_of_their_own(tmp_path: Path) -> None:
    """A finding that suggests hints and pario's engine gets two changes; one that suggests OMPIO's
    MCA parameter gets it as OMPI_MCA_*; each change's hints file carries its setting whole, and a
    run of it gets the pario run options and environment that apply it."""
    from pario.diagnosis import Recommendation, RuleConfig
    from pario.diagnosis.registry import finding
    from pario.launch.hints import tuned_environment
    from pario.verify.measure import run_settings
    from pario.verify.plan import changes_of, combined

    cycles = finding("MPIIO-CB-CYCLES", RuleConfig(), statement="s", evidence=[], runtime=10.0,
                     time_lost=2.0, recommendations=[
                         Recommendation("environment", "overlap:",
                                        "pario run --collective write-comm -- mpirun -np 4 ./app"),
                         Recommendation("hint", "fewer cycles:", "cb_buffer_size 33554432")])
    single = finding("MPIIO-SINGLE-AGGREGATOR", RuleConfig(), statement="s", evidence=[], runtime=10.0,
                     time_lost=1.0, recommendations=[
                         Recommendation("environment", "every file:", "--mca io_ompio_num_aggregators 4"),
                         Recommendation("environment", "cycles:",
                                        "mpirun --mca io_ompio_bytes_per_agg 8 ...")])
    changes = changes_of([cycles, single])
    assert [(c.name, c.hints, c.collective, c.env) for c in changes] == [
        ("MPIIO-CB-CYCLES", (("cb_buffer_size", "33554432"),), "", ()),
        ("MPIIO-CB-CYCLES-launch", (), "write-comm", ()),
        ("MPIIO-SINGLE-AGGREGATOR", (), "", (("OMPI_MCA_io_ompio_num_aggregators", "4"),)),
    ]
    assert [c.text for c in changes] == ["cb_buffer_size 33554432", "--collective write-comm",
                                        "OMPI_MCA_io_ompio_num_aggregators=4"]
    both = combined(changes[1:])
    assert both is not None and (both.collective, both.env) == (
        "write-comm", (("OMPI_MCA_io_ompio_num_aggregators", "4"),))
    hints = tmp_path / "both.hints"
    hints.write_text(both.hints_file())
    assert tuned_environment(hints) == {"PARIO_COLL": "write-comm",
                                        "OMPI_MCA_io_ompio_num_aggregators": "4"}
    args, env = run_settings(tmp_path, changes[1])
    assert args == ["--collective", "write-comm"] and "PARIO_COLL" not in env
    args, env = run_settings(tmp_path, changes[2])
    assert args == [] and env["OMPI_MCA_io_ompio_num_aggregators"] == "4"
    hints_file = str(tmp_path / "hints" / "MPIIO-CB-CYCLES.hints")
    assert run_settings(tmp_path, changes[0])[0] == ["--hints", hints_file]


def test_judge_helps_harms_and_no_effect_by_hand() -> None:
    # paired differences -0.30 -0.35 -0.25 -0.30 -0.31: median -0.30 = -30% of the median 1.00
    v = judge(BASE, [0.70, 0.75, 0.65, 0.70, 0.74])
    assert (v.verdict, v.rounds, v.agree) == (HELPS, 5, 5)
    assert v.change == pytest.approx(-0.30) and (v.low, v.high) == pytest.approx((-0.35, -0.25))
    assert v.share == pytest.approx(-0.30)
    # +0.20 in 4 rounds of 5, -0.05 in one: harms (80% agree)
    assert judge(BASE, [1.20, 1.30, 1.10, 0.95, 1.25]).verdict == HARMS
    # -0.30 in 3 rounds of 5 only: no effect (the rounds disagree)
    assert judge(BASE, [0.70, 0.80, 1.00, 1.10, 0.75]).verdict == NO_EFFECT
    # 4% faster in every round: below min_change (5%)
    assert judge(BASE, [b * 0.96 for b in BASE]).verdict == NO_EFFECT
    assert judge(BASE, [b * 0.96 for b in BASE], min_change=0.03).verdict == HELPS
    assert judge(BASE[:2], [0.1, 0.1]).verdict == TOO_FEW
    assert judge(BASE, [0.1] * 5, failed=True).verdict == FAILED


def _logged(tmp: Path, pario_cmd, mpi_env, name: str, hints: str, extra: list[str]) -> Path:
    log = tmp / f"{name}.pario"
    cmd = [*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", "4", "--mca", "io", "romio321",
           str(kernel_exe("block")), "--transfer-size", "8k", "--collective", *extra, "--hints", hints,
           "-o", str(tmp / f"{name}.dat")]
    proc = subprocess.run(cmd, env=mpi_env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return log


def _verify(pario_cmd, mpi_env, log: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*pario_cmd, "verify", *args, str(log)], env={**mpi_env, "COLUMNS": "160"},
                          capture_output=True, text=True, timeout=600, cwd=log.parent)


@pytest.mark.slow
@pytest.mark.measured
def test_more_aggregators_help_and_the_report_says_so(
        tmp_path: Path, pario_cmd, mpi_env) -> None:
    log = _logged(tmp_path, pario_cmd, mpi_env, "one",
                  "romio_cb_write=enable,cb_nodes=1,cb_buffer_size=1048576",
                  ["--block-size", "256k", "--segments", "16"])
    proc = _verify(pario_cmd, mpi_env, log, "--rounds", "3")
    assert proc.returncode == 0, proc.stderr
    state = json.loads((tmp_path / "one.pario.verify" / "verify.json").read_text())
    verdicts = {v["change"]: v for v in state["verdicts"]}
    agg, rmw = verdicts["MPIIO-SINGLE-AGGREGATOR"], verdicts["MPIIO-COLLECTIVE-RMW"]
    assert agg["hints"] == {"cb_nodes": "4", "cb_config_list": "*:4"}
    assert rmw["hints"] == {"romio_cb_write": "disable"}
    for v in (agg, rmw):
        assert v["io"]["verdict"] == HELPS and v["io"]["rounds"] == 3 and v["io"]["change"] < 0
    # 1 warm-up, then 3 rounds of the unchanged run and the two changes, the order turned every round;
    # both help, so 3 more rounds of new unchanged runs and the two together
    runs = [(s["change"], s["round"]) for s in state["samples"]]
    assert runs[0] == ("warm-up", 0) and len(runs) == 1 + 3 * 3 + 3 * 2
    assert [c for c, r in runs[1:10] if r == 0] == ["unchanged", "MPIIO-SINGLE-AGGREGATOR",
                                                    "MPIIO-COLLECTIVE-RMW"]
    assert [c for c, r in runs[1:10] if r == 1] == ["MPIIO-SINGLE-AGGREGATOR", "MPIIO-COLLECTIVE-RMW",
                                                    "unchanged"]
    assert verdicts["combined"]["hints"] == {"cb_nodes": "4", "cb_config_list": "*:4",
                                             "romio_cb_write": "disable"}
    # the verified file holds the change that saved the largest share of its unchanged runs' time
    best = min((v for v in verdicts.values() if v["io"]["verdict"] == HELPS),
               key=lambda v: v["io"]["change"] / v["io"]["base_median"])
    assert (tmp_path / "one.pario.verify" / "verified.hints").read_text().splitlines()[1:] == [
        f"{k} {v}" for k, v in best["hints"].items()]
    verified = tmp_path / "one.pario.verify" / "verified.hints"
    assert f"pario run --hints {verified} -- mpirun -np 4 --mca io romio321 " in proc.stdout
    # the report shows the verdict beside the finding
    diag = subprocess.run([*pario_cmd, "diagnose", "--json", str(log)], env=mpi_env, capture_output=True,
                          text=True, timeout=120)
    (f,) = [f for f in json.loads(diag.stdout)["logs"][0]["findings"] if f["id"] == "MPIIO-SINGLE-AGGREGATOR"]
    assert f["notes"][-1].startswith("Verified by pario verify (3 paired rounds): helps (cb_nodes 4, "
                                     "cb_config_list *:4): I/O time -")
    # started again: every run is there, none is made
    again = _verify(pario_cmd, mpi_env, log, "--rounds", "3")
    assert again.returncode == 0 and "round" not in again.stderr
    assert len(json.loads((tmp_path / "one.pario.verify" / "verify.json").read_text())["samples"]) == 16


@pytest.mark.slow
@pytest.mark.measured
def test_advice_that_does_not_fit_this_disk_is_not_called_a_gain(
        tmp_path: Path, pario_cmd, mpi_env) -> None:
    log = _logged(tmp_path, pario_cmd, mpi_env, "cbd", "romio_cb_write=disable",
                  ["--block-size", "64k", "--segments", "8"])
    proc = _verify(pario_cmd, mpi_env, log, "--rounds", "3")
    assert proc.returncode == 0, proc.stderr
    (v,) = json.loads((tmp_path / "cbd.pario.verify" / "verify.json").read_text())["verdicts"]
    assert v["findings"] == ["MPIIO-CB-DISABLED"] and v["hints"] == {"romio_cb_write": "enable"}
    assert v["io"]["verdict"] in (NO_EFFECT, HARMS)
    assert "no change helped; nothing written" in proc.stdout
    assert not (tmp_path / "cbd.pario.verify" / "verified.hints").exists()


def test_a_darshan_log_needs_its_command(pario_cmd, mpi_env) -> None:
    log = Path(__file__).parent / "data" / "darshan-logs" / "mpi-io-test-x86_64-3.5.0.darshan"
    proc = subprocess.run([*pario_cmd, "verify", str(log)], env=mpi_env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"pario: error: {log} is a Darshan log, which does not record the command: give it after --, "
        f"e.g. pario verify {log} -- mpirun -np 4 ./app"]


def test_a_command_that_fails_unchanged_is_one_line(
        tmp_path: Path, pario_cmd, mpi_env) -> None:
    """ior-HDF5's log suggests hints (LIB-METADATA-DOMINATES, LIB-INDEPENDENT-TRANSFERS); a command
    that fails unchanged leaves nothing to compare with."""
    log = next((Path(__file__).parent / "data" / "darshan-logs").glob("shane_ior-HDF5_*.darshan"))
    proc = subprocess.run([*pario_cmd, "verify", "--dir", str(tmp_path / "v"), str(log), "--", "false"],
                          env=mpi_env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("pario: error: the unchanged command failed (exit code 1): nothing can be "
                           "compared with it")
