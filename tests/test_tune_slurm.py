"""`pario tune --launcher slurm` against the real local Slurm (tests/slurm_cluster.py): every run of every
trial is an sbatch job, two at once, and the values come from the logs those jobs wrote; `pario verify
--launcher slurm` likewise."""

from __future__ import annotations

import subprocess
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from kernel_helpers import kernel_exe
from pario.log import read_log
from pario.tune.objective import measure

pytestmark = pytest.mark.slow

NP = 2
KERNEL_ARGS = ["--block-size", "8k", "--transfer-size", "8k", "--segments", "256"]


def test_tune_with_slurm_jobs(tmp_path: Path, pario_cmd, slurm_env):
    # srun launches the Open MPI ranks through Slurm's PMIx plugin (as in test_run_slurm.py)
    command = ["srun", "-n", str(NP), "--overcommit", "--mpi=pmix", str(kernel_exe("block")), *KERNEL_ARGS]
    proc = subprocess.run([*pario_cmd, "tune", "--launcher", "slurm", "--jobs", "2", "--budget", "3",
                           "--strategy", "random", "--seed", "1", "--study", "sl", "--no-verify",
                           "--sbatch-args", f"-n {NP} --overcommit", "--", *command],
                          env=slurm_env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    study = optuna.load_study(study_name="sl", storage=f"sqlite:///{tmp_path / '.pario' / 'tune.db'}")
    trials = study.get_trials()
    assert sorted(t.user_attrs["role"] for t in trials if t.user_attrs["role"] != "remeasure") == [
        "default", "search", "search"]
    for t in trials:
        assert t.state == TrialState.COMPLETE, t.user_attrs.get("runs")
        for run, value in zip(t.user_attrs["runs"], t.user_attrs["values"], strict=True):
            rdir = Path(run["log"]).parent
            job = (rdir / "sbatch.txt").read_text().strip().split(";")[0]
            assert job.isdigit(), job  # sbatch --parsable: the job id
            # the Slurm job's output: the kernel's JSON line (rank 0) and pario run's message
            assert '"kernel":"block"' in (rdir / "stdout.txt").read_text()
            assert f"log written to {run['log']}" in (rdir / "stderr.txt").read_text()
            profile = read_log(Path(run["log"]))
            assert profile.job.nprocs == NP
            m = measure(profile, "write-bw")
            assert m.bytes == NP * 256 * 8192 and value == m.value


def test_verify_runs_as_slurm_jobs(tmp_path: Path, pario_cmd, slurm_env):
    """pario verify --launcher slurm: the warm-up and every round's runs are sbatch jobs of the
    recorded srun command, and each change is measured from the logs they wrote (one round: the
    launching is what is tested here; the verdicts' rounds, in tests/test_verify.py)."""
    import json

    log = tmp_path / "one.pario"
    # ROMIO, one aggregator forced by the application's own hints (as in tests/test_verify.py)
    env = {**slurm_env, "OMPI_MCA_io": "romio321"}
    command = ["srun", "-n", str(NP), "--overcommit", "--mpi=pmix", str(kernel_exe("block")), "--collective",
               "--transfer-size", "8k", "--block-size", "256k", "--segments", "16",
               "--hints", "romio_cb_write=enable,cb_nodes=1,cb_buffer_size=1048576",
               "-o", str(tmp_path / "one.dat")]
    made = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", *command], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert made.returncode == 0, made.stderr
    proc = subprocess.run([*pario_cmd, "verify", "--launcher", "slurm", "--sbatch-args",
                           f"-n {NP} --overcommit", "--rounds", "1", str(log)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no finding" not in proc.stdout, proc.stdout
    state = json.loads((tmp_path / "one.pario.verify" / "verify.json").read_text())
    assert state["command"] == command and state["verdicts"]
    assert all(s["status"] == "ok" for s in state["samples"]), state["samples"]
    runs = sorted((tmp_path / "one.pario.verify" / "runs").iterdir())
    assert len(runs) == len(state["samples"])
    for rdir in runs:
        job = (rdir / "sbatch.txt").read_text().strip().split(";")[0]
        assert job.isdigit(), (rdir, job)  # sbatch --parsable: the job id
        assert (rdir / "run.pario").is_file()
    assert all(v["io"]["rounds"] == 1 for v in state["verdicts"])
    made_runs = {s["change"] for s in state["samples"]}
    assert made_runs == {"warm-up", "unchanged", *(v["change"] for v in state["verdicts"])}
