"""The CSV form of the report: one file per table in a directory (docs/report-json.md)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from pario.analysis.run import RunAnalysis
from pario.analysis.scaling import ScalingAnalysis
from pario.errors import ParioError
from pario.model import SIZE_BUCKETS
from pario.report.data import plain, run_dict

VALUE_KEYS = {"value", "unit", "approximate", "note", "reason"}
CSV_FILES = ("metrics.csv", "ranks.csv", "files.csv", "histograms.csv", "scaling.csv", "findings.csv")
#: Written too when a run used an I/O library (HDF5, PnetCDF).
LIBRARY_CSV_FILES = ("libraries.csv", "datasets.csv")


def _walk(prefix: str, obj: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every metric (a Value dict) inside a nested run dict, with its dotted name."""
    if isinstance(obj, dict):
        if set(obj) == VALUE_KEYS:
            yield prefix, obj
            return
        for key, val in obj.items():
            yield from _walk(f"{prefix}.{key}" if prefix else str(key), val)
    elif isinstance(obj, list):
        for item in obj:
            if isinstance(item, dict):
                name = item.get("layer") or item.get("name") or item.get("kind")
                if name is not None:
                    yield from _walk(f"{prefix}.{name}", item)


def metrics_frame(runs: Sequence[RunAnalysis]) -> pd.DataFrame:
    rows = []
    for i, run in enumerate(runs):
        data = run_dict(run, top=0)
        for key in ("ranks", "files", "job", "notes", "findings", "libraries"):
            data.pop(key, None)
        for name, v in _walk("", data):
            rows.append({"run": i, "log": run.job.path, "metric": name, **v})
    return pd.DataFrame(rows, columns=["run", "log", "metric", *sorted(VALUE_KEYS)])


def _with_run(frames: Sequence[tuple[int, RunAnalysis, pd.DataFrame]]) -> pd.DataFrame:
    parts = []
    for i, run, frame in frames:
        f = frame.copy()
        f.insert(0, "log", run.job.path)
        f.insert(0, "run", i)
        parts.append(f)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def histograms_frame(runs: Sequence[RunAnalysis]) -> pd.DataFrame:
    rows = []
    for i, run in enumerate(runs):
        for lay in run.io.layers:
            for direction, hist in (("read", lay.histogram_read), ("write", lay.histogram_write)):
                if hist is None:
                    continue
                for bucket, n in zip(SIZE_BUCKETS, hist, strict=True):
                    rows.append({"run": i, "log": run.job.path, "layer": lay.layer, "direction": direction,
                                 "bucket": bucket, "requests": n})
    return pd.DataFrame(rows, columns=["run", "log", "layer", "direction", "bucket", "requests"])


def scaling_frame(scaling: ScalingAnalysis | None) -> pd.DataFrame:
    if scaling is None:
        return pd.DataFrame()
    rows = []
    for row in scaling.rows:
        flat: dict[str, Any] = {"mode": scaling.mode}
        for key, val in plain(row).items():
            if isinstance(val, dict):
                flat[key] = val["value"]
                flat[f"{key}_approximate"] = val["approximate"]
            else:
                flat[key] = val
        rows.append(flat)
    return pd.DataFrame(rows)


def findings_frame(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None) -> pd.DataFrame:
    """One row per finding: run (-1: across the runs), id, severity, statement, time lost, first fix."""
    from pario.analysis.diagnosis import finding_dict

    rows = []
    sources = [(i, r.findings) for i, r in enumerate(runs)] + [(-1, scaling.findings if scaling else ())]
    for index, findings in sources:
        for f in findings:
            d = finding_dict(f)
            rows.append({"run": index, "id": d["id"], "severity": d["severity"], "statement": d["statement"],
                         "time_lost_s": d["time_lost_s"], "time_lost_share": d["time_lost_share"],
                         "recommendation": d["recommendations"][0]["text"] if d["recommendations"] else ""})
    columns = ["run", "id", "severity", "statement", "time_lost_s", "time_lost_share", "recommendation"]
    return pd.DataFrame(rows, columns=columns)


def libraries_frame(runs: Sequence[RunAnalysis]) -> pd.DataFrame:
    """One row per library file: bytes asked and moved beneath, library time, beneath, overhead."""
    rows = []
    for i, run in enumerate(runs):
        for f in run.libraries.files:
            flat: dict[str, Any] = {"run": i, "log": run.job.path}
            for key, val in plain(f).items():
                flat[key] = val["value"] if isinstance(val, dict) else val
            rows.append(flat)
    return pd.DataFrame(rows)


def write_csv(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None, directory: str) -> list[Path]:
    """Write every table of the report as CSV files into ``directory`` (created if needed)."""
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ParioError(f"{out}: cannot create the CSV directory: {exc.strerror}") from None
    if not out.is_dir():
        raise ParioError(f"{out}: not a directory")
    tables = {
        "metrics.csv": metrics_frame(runs),
        "ranks.csv": _with_run([(i, r, r.ranks) for i, r in enumerate(runs)]),
        "files.csv": _with_run([(i, r, r.files) for i, r in enumerate(runs)]),
        "histograms.csv": histograms_frame(runs),
        "scaling.csv": scaling_frame(scaling),
        "findings.csv": findings_frame(runs, scaling),
    }
    if any(r.libraries.present for r in runs):
        tables["libraries.csv"] = libraries_frame(runs)
        tables["datasets.csv"] = _with_run([(i, r, r.libraries.datasets) for i, r in enumerate(runs)
                                            if r.libraries.datasets is not None])
    written = []
    for name, frame in tables.items():
        path = out / name
        try:
            frame.to_csv(path, index=False)
        except OSError as exc:
            raise ParioError(f"{path}: cannot write: {exc.strerror}") from None
        written.append(path)
    return written
