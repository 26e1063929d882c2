"""The CSV form of the report: one file per table in a directory (docs/report-json.md)."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pario.analysis.run import RunAnalysis
from pario.analysis.scaling import ScalingAnalysis
from pario.errors import ParioError
from pario.model import SIZE_BUCKETS
from pario.report.data import plain, run_dict
from pario.table import Table, as_table

VALUE_KEYS = {"value", "unit", "approximate", "note", "reason"}


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


def _column(values: Sequence[Any]) -> np.ndarray:
    """Python values as one column: ints alone stay ints; numbers with a float or a missing value
    (None) among them are all floats, NaN where missing, so that a column prints its numbers one
    way; anything else as objects."""
    present = [v for v in values if v is not None]
    numbers = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
                  for v in present)
    if not numbers:
        objects = np.empty(len(values), dtype=object)
        for i, v in enumerate(values):  # one by one: a list value stays one value
            objects[i] = v
        return objects
    if len(present) == len(values) and all(isinstance(v, (int, np.integer)) for v in present):
        return np.array(values, dtype=np.int64)
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _from_rows(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> Table:
    """A table of records: ``columns``, or every key in order of first appearance."""
    if columns is None:
        columns = list(dict.fromkeys(k for row in rows for k in row))
    return Table({c: _column([row.get(c) for row in rows]) for c in columns}, length=len(rows))


def metrics_table(runs: Sequence[RunAnalysis]) -> Table:
    rows = []
    for i, run in enumerate(runs):
        data = run_dict(run, top=0)
        for key in ("ranks", "files", "job", "notes", "findings", "libraries"):
            data.pop(key, None)
        for name, v in _walk("", data):
            rows.append({"run": i, "log": run.job.path, "metric": name, **v})
    return _from_rows(rows, ["run", "log", "metric", *sorted(VALUE_KEYS)])


def _with_run(tables: Sequence[tuple[int, RunAnalysis, Table]]) -> Table:
    """The runs' tables one after the other, each row with its run's index and log first.

    Columns are the union of the tables' (in order of appearance), missing values NaN; a
    column whose types differ between runs takes NumPy's common type.
    """
    if not tables:
        return Table()
    names = list(dict.fromkeys(c for _, _, t in tables for c in t.columns))
    n = sum(len(t) for _, _, t in tables)
    runs = np.concatenate([np.full(len(t), i, dtype=np.int64) for i, _, t in tables])
    logs = np.concatenate([np.full(len(t), run.job.path, dtype=object) for _, run, t in tables])
    out = Table({"run": runs, "log": logs}, length=n)
    for c in names:
        out[c] = np.concatenate([t[c] if c in t else np.full(len(t), np.nan) for _, _, t in tables])
    return out


def histograms_table(runs: Sequence[RunAnalysis]) -> Table:
    rows = []
    for i, run in enumerate(runs):
        for lay in run.io.layers:
            for direction, hist in (("read", lay.histogram_read), ("write", lay.histogram_write)):
                if hist is None:
                    continue
                for bucket, n in zip(SIZE_BUCKETS, hist, strict=True):
                    rows.append({"run": i, "log": run.job.path, "layer": lay.layer, "direction": direction,
                                 "bucket": bucket, "requests": n})
    return _from_rows(rows, ["run", "log", "layer", "direction", "bucket", "requests"])


def scaling_table(scaling: ScalingAnalysis | None) -> Table:
    if scaling is None:
        return Table()
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
    return _from_rows(rows)


def findings_table(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None) -> Table:
    """One row per finding: run (-1: across the runs), id, severity, statement, time lost, first fix."""
    from pario.diagnosis import finding_dict

    rows = []
    sources = [(i, r.findings) for i, r in enumerate(runs)] + [(-1, scaling.findings if scaling else ())]
    for index, findings in sources:
        for f in findings:
            d = finding_dict(f)
            rows.append({"run": index, "id": d["id"], "severity": d["severity"], "statement": d["statement"],
                         "time_lost_s": d["time_lost_s"], "time_lost_share": d["time_lost_share"],
                         "recommendation": d["recommendations"][0]["text"] if d["recommendations"] else ""})
    columns = ["run", "id", "severity", "statement", "time_lost_s", "time_lost_share", "recommendation"]
    return _from_rows(rows, columns)


def libraries_table(runs: Sequence[RunAnalysis]) -> Table:
    """One row per library file: bytes asked and moved beneath, library time, beneath, overhead."""
    rows = []
    for i, run in enumerate(runs):
        for f in run.libraries.files:
            flat: dict[str, Any] = {"run": i, "log": run.job.path}
            for key, val in plain(f).items():
                flat[key] = val["value"] if isinstance(val, dict) else val
            rows.append(flat)
    return _from_rows(rows)


def _cells(column: np.ndarray) -> list[Any]:
    """A column's CSV fields: numbers as NumPy prints them (the shortest text that reads back as
    the same number), missing values (NaN, None) empty, objects as they are (the csv module
    prints them)."""
    if column.dtype.kind in "biu":
        return column.astype(str).tolist()
    if column.dtype.kind == "f":
        cells = column.astype(str)
        cells[np.isnan(column)] = ""
        return cells.tolist()
    return ["" if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in column.tolist()]


def _write_table(table: Table, path: Path) -> None:
    columns = [_cells(table[c]) for c in table.columns]
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(table.columns)
        writer.writerows(zip(*columns, strict=True))


def write_csv(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None, directory: str) -> list[Path]:
    """Write every table of the report as CSV files into ``directory``: created if it is missing,
    in a folder that must exist (as --html and --json need theirs)."""
    out = Path(directory)
    try:
        out.mkdir(exist_ok=True)
    except OSError as exc:
        raise ParioError(f"{out}: cannot create the CSV directory: {exc.strerror}") from None
    if not out.is_dir():
        raise ParioError(f"{out}: not a directory")
    tables = {
        "metrics.csv": metrics_table(runs),
        "ranks.csv": _with_run([(i, r, as_table(r.ranks)) for i, r in enumerate(runs)]),
        "files.csv": _with_run([(i, r, as_table(r.files)) for i, r in enumerate(runs)]),
        "histograms.csv": histograms_table(runs),
        "scaling.csv": scaling_table(scaling),
        "findings.csv": findings_table(runs, scaling),
    }
    if any(r.libraries.present for r in runs):
        tables["libraries.csv"] = libraries_table(runs)
        tables["datasets.csv"] = _with_run([(i, r, as_table(r.libraries.datasets)) for i, r in enumerate(runs)
                                            if r.libraries.datasets is not None])
    written = []
    for name, table in tables.items():
        path = out / name
        try:
            _write_table(table, path)
        except OSError as exc:
            raise ParioError(f"{path}: cannot write: {exc.strerror}") from None
        written.append(path)
    return written
