"""The JSON form of the report (docs/report-json.md)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pario.analysis.run import RunAnalysis
from pario.analysis.scaling import ScalingAnalysis
from pario.errors import ParioError
from pario.report.data import DEFAULT_TOP, report_dict


def to_json(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None, *, top: int = DEFAULT_TOP) -> str:
    return json.dumps(report_dict(runs, scaling, top=top), allow_nan=False, ensure_ascii=False)


def write_json(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None, path: str, *,
               top: int = DEFAULT_TOP) -> None:
    """Write the JSON report to ``path`` ('-' for standard output)."""
    _write(to_json(runs, scaling, top=top), path, "the JSON report")


def _write(text: str, path: str, what: str) -> None:
    """``text`` and a newline to ``path``, or to standard output for '-'; one line if it cannot."""
    if path == "-":
        sys.stdout.write(text + "\n")
        return
    try:
        Path(path).write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise ParioError(f"{path}: cannot write {what}: {exc.strerror}") from None


def replay_dict(log: str, m: Any) -> dict[str, Any]:
    """``pario replay --json``: the replays and factors of a TraceMetrics (docs/report-json.md)."""
    from pario.report.data import plain, value_dict

    replays = [{"network": r.network, "io": r.io, "runtime": r.T, "error": r.error,
                "rank_ends": plain(r.rank_ends.tolist()), "busy": plain(r.busy.tolist()),
                "ranks": [int(x) for x in r.ranks]} for r in m.replays]
    return {"log": log,
            "runtimes": {key: value_dict(v) for key, _, v in m.runtimes()},
            "replay_error": value_dict(m.replay_error),
            "factors": {key: value_dict(v) for key, _, v in m.factors()},
            "replays": replays}


def write_replay_json(log: str, m: Any, path: str) -> None:
    """Write ``replay_dict`` to ``path`` ('-' for standard output)."""
    _write(json.dumps(replay_dict(log, m), allow_nan=False, ensure_ascii=False), path, "the JSON")
