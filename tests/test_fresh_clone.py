"""A clone of the repository with nothing beside it passes its tests: no test reads a path outside the
repository, and none skips there for want of data.

The clone is `git clone` of this checkout's committed tree into a temporary folder; it runs one test of
each kind (real Darshan logs read, diagnosed and reported; a program run under `pario run` with mpirun;
a kernel) with the installed package, and every one of them must pass.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow

#: one test of each kind, as node ids relative to the clone
KINDS = [
    "tests/test_darshan_reader.py::test_imbalanced_io_shows_posix_imbalance_under_balanced_mpiio",
    "tests/test_diagnosis_logs.py::test_imbalanced_io_imbalance_and_its_single_ost_cause",
    "tests/test_report_findings.py::test_same_findings_as_diagnose",
    "tests/test_terminal_width.py::test_skew_app_numbers_are_plain",
    "tests/test_runtime.py::test_counters_are_those_of_the_program",
    "tests/test_kernels.py::test_block_file_per_process",
]


def test_a_clone_with_nothing_beside_it_passes(tmp_path: Path, mpi_env: dict[str, str]) -> None:
    assert (ROOT / ".git").exists(), f"{ROOT} is not a git checkout"
    clone = tmp_path / "alone" / "pario"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True,
                   timeout=120)
    assert not (clone.parent / "shared").exists()
    shutil.rmtree(clone / ".git")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *KINDS],
        cwd=clone, env=mpi_env, capture_output=True, text=True, timeout=600,
    )
    tail = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    summary = re.search(r"(\d+) passed", proc.stdout)
    assert summary and int(summary[1]) == len(KINDS), tail
    assert "skipped" not in proc.stdout.splitlines()[-1], tail
