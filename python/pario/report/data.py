"""The report as plain data (dicts, lists, numbers): the JSON form, also used by CSV and HTML.

docs/report-json.md documents every key.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from pario import __version__
from pario.analysis.files import application_files
from pario.analysis.run import RunAnalysis
from pario.analysis.scaling import ScalingAnalysis
from pario.model import SIZE_BUCKETS
from pario.table import Table, as_table
from pario.values import Value

SCHEMA_VERSION = 1
DEFAULT_TOP = 20


def value_dict(v: Value | None) -> dict[str, Any] | None:
    if v is None:
        return None
    return {"value": v.value, "unit": v.unit, "approximate": v.approximate, "note": v.note or None,
            "reason": v.reason or None}


def is_table(obj: Any) -> bool:
    """A Table, or a DataFrame (which can only exist once something imported pandas)."""
    if isinstance(obj, Table):
        return True
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.DataFrame)


def plain(obj: Any) -> Any:
    """Dataclasses (without their tables), Values, NumPy scalars and containers as JSON-ready data."""
    if isinstance(obj, Value):
        return value_dict(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if not is_table(getattr(obj, f.name))}
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, np.generic):
        return plain(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def records(table: Table) -> list[dict[str, Any]]:
    """Rows of a table as dicts of Python values (NaN stays NaN)."""
    names = table.columns
    columns = [table[c].tolist() for c in names]
    return [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]


def table_records(table: Table) -> list[dict[str, Any]]:
    """Rows of a table as JSON-ready dicts: NaN as None, NumPy types as Python types."""
    return [{str(k): plain(v) for k, v in row.items()} for row in records(table)]


def table_columns(table: Table) -> dict[str, list[Any]]:
    """A table as {column: [values]} (compact for one row per rank)."""
    out: dict[str, list[Any]] = {}
    for col in table.columns:
        arr = table[col]
        if arr.dtype.kind == "f":
            values = arr.tolist()
            if np.isnan(arr).any():
                values = [None if math.isnan(x) else x for x in values]
        else:
            values = [plain(x) for x in arr.tolist()]
        out[str(col)] = values
    return out


def run_dict(run: RunAnalysis, *, top: int = DEFAULT_TOP) -> dict[str, Any]:
    pop = plain(run.pop)
    io = plain(run.io)
    io["size_buckets"] = io.pop("buckets", list(SIZE_BUCKETS))
    out = {
        "job": plain(run.job),
        "has_io": run.has_io,
        "notes": list(run.notes),
        "time_shares": plain(run.shares),
        "pop": pop,
        "io": io,
        "mpi": plain(run.mpi),
        "memory": plain(run.memory),
        "totals": plain(run.totals),
        "files": _files(run, top),
        "ranks": table_columns(as_table(run.ranks)),
        "findings": findings_list(run.findings) if run.diagnosed else None,
        "hints": run.hints.as_dict(),
        "collective_engine": [e.as_dict() for e in run.engine],
        "activity": run.activity.as_dict() if run.activity is not None else None,
    }
    if run.libraries.present:
        out["libraries"] = libraries_dict(run, top=top)
    return out


def libraries_dict(run: RunAnalysis, *, top: int = DEFAULT_TOP) -> dict[str, Any]:
    """The I/O libraries' files (all) and their datasets/variables (the ``top`` slowest)."""
    data = as_table(run.libraries.datasets) if run.libraries.datasets is not None else Table()
    return {"files": [plain(f) for f in run.libraries.files],
            "datasets": {"count": len(data), "top": table_records(data.head(top))}}


def findings_list(findings: Sequence[Any]) -> list[dict[str, Any]]:
    """Findings in the JSON form of docs/diagnosis.md."""
    from pario.diagnosis import finding_dict

    return [finding_dict(f) for f in findings]


def scaling_dict(scaling: ScalingAnalysis | None) -> dict[str, Any] | None:
    if scaling is None:
        return None
    out = plain(dataclasses.replace(scaling, findings=()))
    out["findings"] = findings_list(scaling.findings)
    return out


def report_dict(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None, *,
                top: int = DEFAULT_TOP) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "generator": f"pario {__version__}",
        "runs": [run_dict(r, top=top) for r in runs],
        "scaling": scaling_dict(scaling),
    }


def _files(run: RunAnalysis, top: int) -> dict[str, Any]:
    """The application's files (the top ones by I/O time), and how many are the MPI library's own."""
    own, library = application_files(as_table(run.files))
    return {"count": int(len(own)), "top": table_records(own.head(top)),
            "mpi_library_files": int(len(library))}

