"""Write a Profile back as a pario log (same format as the runtime's writer).

Used to build large synthetic logs for benchmarks and to produce test logs.
The counter lists come from the log the profile was read from (the runtime
writes them into every log's META block), kept in ``job.metadata["schema"]``.
The profile's tables may be :class:`~pario.table.Table` or DataFrames.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np

from pario.errors import ParioError
from pario.log import _format as fmt
from pario.model import LAYERS, Profile, counter_column
from pario.table import Table, as_table


def _filled(table: Table, name: str, dtype: type) -> np.ndarray:
    """A column as ``dtype``, 0 where it is NaN; zeros if the table has no such column."""
    if name not in table:
        return np.zeros(len(table), dtype=dtype)
    values = np.asarray(table[name])
    if values.dtype.kind == "f":
        values = np.where(np.isnan(values), 0.0, values)
    return values.astype(dtype)


def _record_array(records: Any, layer: dict) -> np.ndarray:
    """A layer's records (a Table or a DataFrame) as the on-disk structured array, sorted by
    rank (stable)."""
    counters = [counter_column(n) for n in layer["counters"]]
    fcounters = [counter_column(n) for n in layer["fcounters"]]
    dtype = fmt.record_dtype(len(counters), len(fcounters))
    if records is None or not len(records):
        return np.zeros(0, dtype=dtype)
    table = as_table(records)
    rec = np.zeros(len(table), dtype=dtype)
    rec["id"] = np.asarray(table["id"]).astype(np.uint64)
    rec["rank"] = np.asarray(table["rank"]).astype(np.int64)
    for i, name in enumerate(counters):
        rec["c"][:, i] = _filled(table, name, np.int64)
    for i, name in enumerate(fcounters):
        rec["f"][:, i] = _filled(table, name, np.float64)
    return rec[np.argsort(rec["rank"], kind="stable")]


def _columnar_strings(ids: list[int], texts: list[str], layers: list[int] | None = None) -> bytes:
    """u32 n, [u32 layers[n]], u64 ids[n], u32 lens[n], the UTF-8 bytes."""
    raw = [t.encode("utf-8") for t in texts]
    out = [struct.pack("<I", len(raw))]
    if layers is not None:
        out.append(np.asarray(layers, dtype="<u4").tobytes())
    out.append(np.asarray(ids, dtype="<u8").tobytes())
    out.append(np.asarray([len(r) for r in raw], dtype="<u4").tobytes())
    out.append(b"".join(raw))
    return b"".join(out)


def write_pario_log(profile: Profile, path: str | Path) -> None:
    """Write ``profile`` (read from a pario log, possibly modified) to ``path``."""
    schema = profile.job.metadata.get("schema")
    if not isinstance(schema, dict):
        raise ParioError("write_pario_log needs a profile read from a pario log (no counter schema)")
    layers: list[dict] = schema["layers"]
    rank_fields: list[str] = schema["rank_fields"]
    job = profile.job
    meta = {
        "format": "pario-log", "version": fmt.VERSION, "exe": job.exe, "argv": list(job.argv),
        "nprocs": job.nprocs, "complete": job.complete, "start_time": job.start_time,
        "end_time": job.end_time, "records_overflowed": 0, "hostname": job.hostname, "jobid": job.jobid,
        "mpi_library": job.mpi_library, "ranks_in_log": "all", "rank_fields": rank_fields,
        "layers": layers,
        # lustre_striping is derived from the POSIX records by the reader, not stored
        **{k: v for k, v in job.metadata.items() if k not in ("schema", "lustre_striping")},
    }
    tables = [profile.files.get(lay["name"]) for lay in layers]
    arrays = [_record_array(f, lay) for f, lay in zip(tables, layers, strict=True)]
    empty = struct.pack("<I", 0)

    with open(path, "wb") as out:
        out.write(fmt.FILE_HEADER.pack(fmt.MAGIC, fmt.VERSION, fmt.FILE_HEADER.size))
        out.write(fmt.block(fmt.BLOCK_META, -1, json.dumps(meta).encode("utf-8")))
        shared = b"".join(
            struct.pack("<I", int((a["rank"] == -1).sum())) + fmt.columns_of_records(a[a["rank"] == -1])
            for a in arrays
        )
        out.write(fmt.block(fmt.BLOCK_SHARED, -1, shared + struct.pack("<I", 0)))

        # each layer's records of rank r are the slice [lo[r], hi[r]) of its sorted array
        ranks = as_table(profile.ranks)
        # a rank table's rank column, when the log lacks some ranks' data; else its positions
        rank_ids = (np.asarray(ranks["rank"]).astype(np.int64) if "rank" in ranks
                    else np.arange(len(ranks), dtype=np.int64))
        bounds = [(np.searchsorted(a["rank"], rank_ids, "left"),
                   np.searchsorted(a["rank"], rank_ids, "right")) for a in arrays]
        names: dict[int, str] = {}
        for f in tables:
            if f is not None:
                t = as_table(f)
                ids = np.asarray(t["id"]).astype(np.uint64).tolist()
                names.update(zip(ids, np.asarray(t["name"]).tolist(), strict=True))
        mpiio = next((k for k, lay in enumerate(layers) if lay["name"] == "mpiio"), 0)
        hint_ids = list(profile.hints)
        hint_texts = ["".join(f"{k}={v}\n" for k, v in profile.hints[i].items()) for i in hint_ids]
        injected_ids = list(profile.injected_hints)
        injected_texts = ["".join(f"{k}={v}\n" for k, v in profile.injected_hints[i].items())
                          for i in injected_ids]
        row_values = np.zeros((len(ranks), len(rank_fields)))
        for j, name in enumerate(rank_fields):
            row_values[:, j] = _filled(ranks, name, np.float64)
        count = 2
        for i, rank in enumerate(rank_ids.tolist()):
            parts = [row_values[i].tobytes()]
            for a, (lo, hi) in zip(arrays, bounds, strict=True):
                part = a[lo[i]:hi[i]]
                parts.append(struct.pack("<I", len(part)) + fmt.columns_of_records(part))
            if i == 0:  # all names and hints travel in the first rank's block
                parts.append(_columnar_strings(list(names), list(names.values())))
                parts.append(_columnar_strings(hint_ids, hint_texts, [mpiio] * len(hint_ids)))
                parts.append(_columnar_strings(injected_ids, injected_texts, [mpiio] * len(injected_ids)))
            else:
                parts.append(empty + empty + empty)
            out.write(fmt.block(fmt.BLOCK_RANK, int(rank), b"".join(parts)))
            count += 1
        out.write(fmt.block(fmt.BLOCK_END, -1, struct.pack("<Q", count)))


__all__ = ["write_pario_log", "LAYERS"]
