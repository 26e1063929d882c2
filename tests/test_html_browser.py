"""The HTML report in a real headless browser (Debian's chromium under Selenium): it loads without a
console error, every Plotly figure draws, and names from the log stay text even when they are HTML
meant to run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from browser import load
from pario.analysis.run import analyze
from pario.report.html import render_html
from test_report import synthetic

LOGS = Path(__file__).resolve().parents[2] / "shared" / "darshan-logs"
# names that would run script if the page put them in as HTML
HOSTILE_FILE = '<img src=x onerror="window.pwned=1">.dat'
HOSTILE_EXE = "/bin/<script>window.pwned=2</script>app"


@pytest.mark.parametrize("log", ["skew-app", "imbalanced-io"])
def test_report_of_a_darshan_log_loads_and_draws(log: str, tmp_path: Path, browser, pario_cmd):
    path = next(LOGS.glob(f"{log}*.darshan"))
    page_file = tmp_path / "report.html"
    done = subprocess.run([*pario_cmd, "report", str(path), "--html", str(page_file), "-q"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    page = load(browser, page_file)
    assert page.errors == []
    assert page.figures >= 2 and page.drawn == page.figures
    assert "POP metrics" in page.text


def test_hostile_names_stay_text(tmp_path: Path, browser):
    profile = synthetic(name=HOSTILE_FILE, exe=HOSTILE_EXE)
    page_file = tmp_path / "hostile.html"
    page_file.write_text(render_html([analyze(profile)]))
    page = load(browser, page_file, probe="window.pwned === undefined ? 'safe' : window.pwned")
    assert page.probe == "safe"
    assert page.errors == []  # an <img src=x> made an element would log a failed load
    assert HOSTILE_FILE in page.text  # shown as the characters it is
    assert page.figures >= 1 and page.drawn == page.figures
