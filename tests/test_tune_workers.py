"""Several `pario tune` workers share one study (Optuna's journal file): the budget is the
study's, not each worker's, the default is measured once, and neither worker fails the
other's running trials."""

from __future__ import annotations

import subprocess
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

pytestmark = pytest.mark.slow

BLOCK = ["--block-size", "8k", "--transfer-size", "8k", "--segments", "128"]


def test_two_workers_share_one_study_and_its_budget(tmp_path: Path, pario_cmd: list[str],
                                                    mpi_env: dict[str, str]):
    kernel = subprocess.run([*pario_cmd, "path", "pario-kernel-block"], capture_output=True, text=True,
                            check=True).stdout.strip()
    journal = tmp_path / "study.journal"
    def tune(seed: int) -> list[str]:
        return [*pario_cmd, "tune", "--budget", "5", "--strategy", "random", "--seed", str(seed),
                "--no-verify", "--study", "shared", "--storage", f"journal:{journal}", "--",
                "mpirun", "--oversubscribe", "-np", "2", kernel, *BLOCK]

    workers = [subprocess.Popen(tune(seed), cwd=tmp_path, env=mpi_env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for seed in (1, 2)]
    outputs = [w.communicate(timeout=300) for w in workers]
    for w, (_, err) in zip(workers, outputs, strict=True):
        assert w.returncode == 0, err[-2000:]

    from optuna.storages.journal import JournalFileBackend, JournalStorage

    study = optuna.load_study(study_name="shared", storage=JournalStorage(JournalFileBackend(str(journal))))
    trials = study.get_trials(deepcopy=False)
    roles = [t.user_attrs.get("role") for t in trials]
    budget = [t for t in trials if t.user_attrs.get("role") in ("default", "search")]
    # the budget of 5 is the study's: default + 4 search trials in all, whichever worker ran them
    assert len(budget) == 5 and roles.count("default") == 1
    assert all(t.state == TrialState.COMPLETE for t in budget)
    # both workers ran trials, and none was failed as 'interrupted' by the other
    owners = {t.user_attrs["owner"][1] for t in budget}
    assert len(owners) == 2
    assert not any("interrupted" in str(t.user_attrs.get("error", "")) for t in trials)
    # a worker that asked past the budget marked its trial surplus and did not run it
    for t in trials:
        if t.user_attrs.get("role") == "surplus":
            assert t.state == TrialState.PRUNED and not t.user_attrs.get("runs")
