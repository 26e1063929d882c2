"""Optuna's dashboard opens a pario study: a real `pario tune` study in SQLite, served by a real
optuna-dashboard on loopback, read back over its HTTP API."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import optuna
import pytest

from local_services import free_port

pytestmark = pytest.mark.slow

BLOCK = ["--block-size", "8k", "--transfer-size", "8k", "--segments", "64"]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as reply:
        return json.loads(reply.read())


def test_optuna_dashboard_opens_a_pario_study(tmp_path: Path, pario_cmd: list[str], mpi_env: dict[str, str]):
    dashboard = Path(sys.executable).with_name("optuna-dashboard")
    assert dashboard.exists() or shutil.which("optuna-dashboard"), "optuna-dashboard: pip install '.[test]'"
    kernel = subprocess.run([*pario_cmd, "path", "pario-kernel-block"], capture_output=True, text=True,
                            check=True).stdout.strip()
    tune = [*pario_cmd, "tune", "--budget", "2", "--strategy", "random", "--seed", "5", "--no-verify",
            "--study", "dash", "--", "mpirun", "--oversubscribe", "-np", "2", kernel, *BLOCK]
    done = subprocess.run(tune, cwd=tmp_path, env=mpi_env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    url = f"sqlite:///{tmp_path / '.pario' / 'tune.db'}"
    stored = optuna.load_study(study_name="dash", storage=url)
    values = sorted(t.value for t in stored.trials)

    port = free_port()
    server = subprocess.Popen([str(dashboard), url, "--host", "127.0.0.1", "--port", str(port), "--quiet"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                summaries = _get(f"http://127.0.0.1:{port}/api/studies")["study_summaries"]
                break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()[-1000:] if server.stderr else ""
                if time.monotonic() > deadline:
                    pytest.fail("optuna-dashboard did not answer within 30 s")
                time.sleep(0.2)
        (summary,) = summaries
        assert summary["study_name"] == "dash" and summary["directions"] == ["maximize"]
        attrs = {a["key"]: a["value"] for a in summary["user_attrs"]}
        assert json.loads(attrs["pario"])["objective"] == "write-bw"
        detail = _get(f"http://127.0.0.1:{port}/api/studies/{summary['study_id']}")
        trials = detail["trials"]
        # the default, one search trial, and its re-measurement when it became the best
        assert len(trials) == len(stored.trials) >= 2
        assert sorted(t["values"][0] for t in trials) == pytest.approx(values)
        roles = [a["value"].strip('"') for t in sorted(trials, key=lambda t: t["number"])
                 for a in t["user_attrs"] if a["key"] == "role"]
        assert roles[:2] == ["default", "search"] and set(roles[2:]) <= {"remeasure"}
        # the default trial's parameters are every dimension that applies, at "default"
        first = min(trials, key=lambda t: t["number"])
        assert first["params"] and all(p["param_external_value"] == "default" for p in first["params"])
    finally:
        server.terminate()
        server.wait(timeout=10)
