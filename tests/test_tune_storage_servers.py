"""Optuna against a real PostgreSQL server (the `postgres` fixture): workers in separate processes share
one study through it, as `pario tune` workers do."""

from __future__ import annotations

import subprocess
import sys

import optuna
import pytest
from optuna.storages import RDBStorage

# One worker: 3 trials of a trivial objective whose value tells the worker and the parameter apart.
WORKER = """
import sys, optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
url, name, worker = sys.argv[1], sys.argv[2], int(sys.argv[3])
def objective(trial):
    x = trial.suggest_int("x", 0, 9)
    trial.set_user_attr("worker", worker)
    return 100 * worker + x
optuna.load_study(study_name=name, storage=url).optimize(objective, n_trials=3)
"""


@pytest.mark.slow
def test_two_worker_processes_share_a_study(postgres) -> None:
    storage = RDBStorage(postgres.url)
    assert storage.engine.dialect.name == "postgresql"
    optuna.create_study(storage=storage, study_name="shared", direction="minimize")

    workers = [subprocess.Popen([sys.executable, "-c", WORKER, postgres.url, "shared", str(w)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for w in (1, 2)]
    for proc in workers:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, out + err

    study = optuna.load_study(study_name="shared", storage=RDBStorage(postgres.url))
    trials = study.get_trials(deepcopy=False)
    assert len(trials) == 6
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in trials)
    assert sorted(t.number for t in trials) == list(range(6))
    assert sorted(t.user_attrs["worker"] for t in trials) == [1, 1, 1, 2, 2, 2]
    for t in trials:
        assert 0 <= t.params["x"] <= 9
        assert t.value == 100 * t.user_attrs["worker"] + t.params["x"]
    assert study.best_value == min(t.value for t in trials if t.user_attrs["worker"] == 1)


def test_the_documented_postgresql_url_opens(postgres) -> None:
    """docs/tune.md's form, postgresql://USER@HOST/DB, with the driver pario installs (psycopg2)."""
    from pario.tune.storage import open_storage

    url = postgres.url.replace("postgresql+psycopg2://", "postgresql://")
    assert url.startswith("postgresql://")
    storage = open_storage(url)
    assert storage.engine.dialect.driver == "psycopg2"
    optuna.create_study(study_name="documented", storage=storage).optimize(lambda t: 1.0, n_trials=1)
