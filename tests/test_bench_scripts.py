"""The bench/ scripts cannot rot unseen: each answers --help, and what runs as a string in another
process (report_speed's cold report) runs once on a small log.  The sizes that measure anything
take minutes; docs/performance.md gives their commands."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from darshan_logs import LOGS

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(BENCH.glob("*.py"))


def test_every_script_is_here() -> None:
    assert {p.name for p in SCRIPTS} >= {"diagnosis_accuracy.py", "output_harness.py", "report_speed.py"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_script_answers_help(script: Path) -> None:
    proc = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage:" in proc.stdout


def test_report_speed_s_cold_report_runs() -> None:
    """Its phases are a program in a string: neither ruff nor an import sees what it calls."""
    spec = importlib.util.spec_from_file_location("report_speed", BENCH / "report_speed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    phases = module.cold_phases(LOGS / "mpi-io-test-x86_64-3.5.0.darshan", 1)
    assert set(phases) == {"numpy", "pario imports", "read", "analyse", "render"}
    assert all(t >= 0 for t in phases.values())


def test_report_cpu_runs_its_three_commands() -> None:
    """Its B and C sides are programs in strings."""
    proc = subprocess.run([sys.executable, str(BENCH / "report_cpu.py"), "--rounds", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("mpi-io-test-x86_64-3.5.0.darshan, 1 rounds")
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["A", "B", "C"]
