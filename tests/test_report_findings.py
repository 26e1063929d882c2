"""The diagnosis appears in every form of the report (terminal, JSON, CSV, HTML)."""

from __future__ import annotations

import csv
import json
import os
import subprocess

import pytest

from darshan_logs import LOGS
from pario.diagnosis import diagnose
from pario.log import read_log

IMBALANCED = LOGS / "imbalanced-io.darshan"

@pytest.fixture(scope="module")
def outputs(tmp_path_factory, pario_cmd):
    out = tmp_path_factory.mktemp("findings")
    proc = subprocess.run(
        [*pario_cmd, "report", str(IMBALANCED), "--json", str(out / "r.json"), "--csv", str(out / "csv"),
         "--html", str(out / "r.html")],
        capture_output=True, text=True, timeout=300, cwd=out,  # suggested hints files of a read-only log
    )
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout


@pytest.mark.slow
def test_same_findings_as_diagnose(outputs):
    out, _ = outputs
    expected = [f.id for f in diagnose(read_log(IMBALANCED))]
    assert "LOAD-IMBALANCE" in expected and "LUSTRE-STRIPE-COUNT" in expected
    data = json.loads((out / "r.json").read_text())
    assert [f["id"] for f in data["runs"][0]["findings"]] == expected
    with open(out / "csv" / "findings.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["id"] for r in rows] == expected
    assert all(r["run"] == "0" and r["recommendation"] for r in rows)


def test_terminal_and_html_show_findings(outputs):
    out, text = outputs
    assert "Diagnosis" in text and "LOAD-IMBALANCE" in text and "lfs setstripe" in text
    html = (out / "r.html").read_text()
    findings = json.loads((out / "r.json").read_text())["runs"][0]["findings"]
    assert html.count('<div class="finding ') == len(findings)
    assert "LUSTRE-STRIPE-COUNT" in html


@pytest.mark.slow
def test_no_diagnosis_option(pario_cmd, tmp_path):
    """--no-diagnosis says the diagnosis was not run; it does not say "no problems found"."""
    proc = subprocess.run([*pario_cmd, "report", str(IMBALANCED), "--no-diagnosis", "--json", "-"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["runs"][0]["findings"] is None
    html = tmp_path / "r.html"
    text = subprocess.run([*pario_cmd, "report", str(IMBALANCED), "--no-diagnosis", "--html", str(html)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "120"})
    assert text.returncode == 0 and "Diagnosis: not run (--no-diagnosis)." in text.stdout
    assert "No problems found" not in text.stdout and "0 findings" not in text.stdout
    assert "Not run (--no-diagnosis)." in html.read_text() and "No problems found" not in html.read_text()
