"""``pario dump``: every per-rank and per-file value of a log, as text or JSON."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterator
from typing import Any, TextIO

import numpy as np

from pario.model import Profile
from pario.table import Table, as_table

#: Columns that identify a record rather than count something.
KEY_COLUMNS = ("id", "rank", "name")


def _plain(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return None if math.isnan(v) else v
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value]
    return value


def to_dict(profile: Profile) -> dict[str, Any]:
    """The whole profile as plain JSON-able data (the documented JSON form)."""
    job = {k: _plain(v) for k, v in dataclasses.asdict(profile.job).items()}
    job["metadata"] = {k: v for k, v in profile.job.metadata.items() if k != "schema"}
    ranks = [{"rank": rank, **{col: _plain(val) for col, val in row.items()}}
             for rank, row in enumerate(_rows(as_table(profile.ranks)))]
    files: dict[str, list[dict[str, Any]]] = {}
    for layer, table in profile.files.items():
        records = []
        for row in _rows(as_table(table)):
            rec = {col: _plain(val) for col, val in row.items()}
            rec["id"] = f"{int(row['id']):016x}"
            ranks_of = profile.file_ranks.get((layer, int(row["id"])))
            if ranks_of is not None and int(row["rank"]) < 0:
                rec["ranks"] = [int(r) for r in ranks_of]
            records.append(rec)
        files[layer] = records
    hints = {f"{fid:016x}": dict(h) for fid, h in profile.hints.items()}
    return {"job": job, "ranks": ranks, "files": files, "hints": hints}


def write_json(profile: Profile, out: TextIO) -> None:
    json.dump(to_dict(profile), out, indent=1)
    out.write("\n")


def write_text(profile: Profile, out: TextIO) -> None:
    """darshan-parser-like lines: one value per line, tab-separated, greppable."""
    job = profile.job
    out.write(f"# pario dump of {job.path}\n")
    for key, value in dataclasses.asdict(job).items():
        if key == "metadata":
            value = {k: v for k, v in job.metadata.items() if k != "schema"}
        out.write(f"# {key}: {value}\n")
    out.write("\n# per-rank values: rank<TAB>field<TAB>value\n")
    for rank, row in enumerate(_rows(as_table(profile.ranks))):
        for col, val in row.items():
            out.write(f"{rank}\t{col}\t{_fmt(val)}\n")
    for layer, layer_records in profile.files.items():
        out.write(f"\n# {layer} records: layer<TAB>rank<TAB>file id<TAB>counter<TAB>value<TAB>file name "
                  "(rank -1: shared, reduced over ranks)\n")
        table = as_table(layer_records)
        counters = [c for c in table.columns if c not in KEY_COLUMNS]
        for d in _rows(table):
            rid = f"{int(d['id']):016x}"
            for c in counters:
                out.write(f"{layer}\t{int(d['rank'])}\t{rid}\t{c}\t{_fmt(d[c])}\t{d['name']}\n")
            ranks_of = profile.file_ranks.get((layer, int(d["id"])))
            if ranks_of is not None and int(d["rank"]) < 0:
                out.write(f"{layer}\t-1\t{rid}\tranks\t{rank_ranges(ranks_of)}\t{d['name']}\n")
    if profile.hints:
        out.write("\n# MPI-IO hints in effect: file id<TAB>key<TAB>value\n")
        for fid, hints in profile.hints.items():
            for k, v in sorted(hints.items()):
                out.write(f"{fid:016x}\t{k}\t{v}\n")


def _rows(table: Table) -> Iterator[dict[str, Any]]:
    """The rows of a table as dicts of Python values (row i of the rank table is rank i)."""
    names = table.columns
    for values in zip(*(table[c].tolist() for c in names), strict=True):
        yield dict(zip(names, values, strict=True))


def _fmt(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if v.is_integer() and abs(v) < 2**53:
            return str(int(v))
        return f"{v:.9g}"
    return str(value)


def rank_ranges(ranks: np.ndarray) -> str:
    """[0,1,2,5,7,8] -> '0-2,5,7-8'."""
    out: list[str] = []
    values = [int(r) for r in ranks]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        out.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(out)
