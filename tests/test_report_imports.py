"""`pario report`, `pario diagnose` and `pario replay` never import pandas, nor PyDarshan's
package (which imports pandas): that import alone took as long as PyDarshan's whole load of a
log, and the report must start faster than that (docs/performance.md).  The
model's tables are pario.table.Table; only the tuner still uses pandas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from darshan_logs import LOGS

pytestmark = pytest.mark.slow

#: Runs one pario command in this process, then prints the heavy modules it imported.
PROBE = """
import sys
from pario.cli import main
code = 0
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code or 0
print("IMPORTED:", *(m for m in ("pandas", "darshan", "jinja2", "plotly", "optuna", "xgboost", "scipy")
                     if m in sys.modules))
sys.exit(code)
"""

DARSHAN_LOGS = ["skew-app.darshan", "imbalanced-io.darshan", "partial_data_stdio.darshan",
                "shane_ior-HDF5_id438090-438090_11-9-41522-17417065676046418211_1.darshan"]


def imported_by(args: list[str], cwd: Path) -> set[str]:
    """The heavy modules a pario command imports (it must succeed)."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.splitlines()[-1]
    assert last.startswith("IMPORTED:"), proc.stdout[-500:]
    return set(last.split()[1:])


@pytest.fixture(scope="module")
def traced_log(tmp_path_factory: pytest.TempPathFactory, pario_cmd: list[str],
               mpi_env: dict[str, str]) -> Path:
    """A traced pario log of the block kernel on 3 ranks."""
    out = tmp_path_factory.mktemp("imports")
    log = out / "block.pario"
    proc = subprocess.run(
        [*pario_cmd, "run", "--trace", "--log", str(log), "--", *pario_cmd, "kernel", "block", "--np", "3",
         "--path", str(out / "block.dat"), "--block-size", "256k", "--transfer-size", "64k"],
        env=mpi_env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    steps = sorted(out.glob("block.step*.pario"))
    return steps[0] if steps else log


@pytest.mark.parametrize("name", DARSHAN_LOGS)
def test_report_and_diagnose_of_darshan_logs_import_no_pandas(name: str, tmp_path: Path) -> None:
    log = str(LOGS / name)
    assert imported_by(["report", log], tmp_path) == set()
    assert imported_by(["diagnose", log], tmp_path) == set()


def test_report_diagnose_and_replay_of_a_traced_pario_log_import_no_pandas(traced_log: Path,
                                                                             tmp_path: Path) -> None:
    assert imported_by(["report", str(traced_log), "--json", str(tmp_path / "r.json")], tmp_path) == set()
    assert imported_by(["diagnose", str(traced_log), "--json"], tmp_path) == set()
    assert imported_by(["replay", str(traced_log)], tmp_path) == set()
    # the HTML report is allowed its template engine and plots, not pandas
    html = imported_by(["report", "-q", str(traced_log), "--html", str(tmp_path / "r.html")], tmp_path)
    assert "pandas" not in html and "darshan" not in html
