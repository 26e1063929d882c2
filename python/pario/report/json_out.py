"""The JSON form of the report (docs/report-json.md)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pario.analysis.run import RunAnalysis
from pario.analysis.scaling import ScalingAnalysis
from pario.errors import ParioError
from pario.report.data import DEFAULT_TOP, report_dict


def to_json(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None, *, top: int = DEFAULT_TOP) -> str:
    return json.dumps(report_dict(runs, scaling, top=top), allow_nan=False, ensure_ascii=False)


def write_json(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None, path: str, *,
               top: int = DEFAULT_TOP) -> None:
    """Write the JSON report to ``path`` ('-' for standard output)."""
    text = to_json(runs, scaling, top=top)
    if path == "-":
        sys.stdout.write(text + "\n")
        return
    try:
        Path(path).write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise ParioError(f"{path}: cannot write the JSON report: {exc.strerror}") from None
