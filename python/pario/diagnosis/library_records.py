"""The I/O library layers (``h5f``, ``h5d``, ``pnetcdf_file``, ``pnetcdf_var``) as the library rules
read them: every record of a layer, grouped by dataset, variable or file, with plain Python values.

Shared by the library rules (libraries.py, pnetcdf.py) and the request rules (which ask
:func:`large_request_files` which files' small requests are the library's own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pario.diagnosis.columns import counter, small_ops
from pario.diagnosis.columns import ops as request_ops
from pario.diagnosis.facts import Facts
from pario.model.layers import FILE_LAYER_OF_DATA, HDF5, LIBRARY_TABLE
from pario.model.rankio import data_file_ids, float_values
from pario.table import Table, as_table, group_codes, group_reduce

CHUNK_DIMS = tuple(f"chunk_size_d{i}" for i in range(1, 6))


def layer(facts: Facts, name: str) -> Table:
    """All records of a library layer (every file: the rules judge each library file), once per Facts."""
    return facts.cached(("libraries", name), lambda: as_table(facts.profile.layer(name)))


def file_ids(facts: Facts, name: str) -> np.ndarray:
    """Per dataset/variable record of layer ``name``: its file's id (0 when not found)."""
    # the profile's own tables: data_file_ids takes what the readers make
    return data_file_ids(facts.profile.layer(name), facts.profile.layer(FILE_LAYER_OF_DATA[name]))


def file_sums(facts: Facts, name: str, columns: tuple[str, ...]) -> dict[int, dict[str, float]]:
    """By file id: the sums of ``columns`` over the file's records of layer ``name`` (datasets or
    variables); {} when the layer has no records or lacks one of the columns."""
    d = layer(facts, name)
    if not len(d) or any(c not in d for c in columns):
        return {}
    owner = file_ids(facts, name)
    out: dict[int, dict[str, float]] = {}
    for fid in np.unique(owner[owner > 0]).tolist():
        mine = owner == np.uint64(fid)
        out[int(fid)] = {c: float(counter(d, c)[mine].sum()) for c in columns}
    return out


def ids(t: Table) -> np.ndarray:
    return np.asarray(t["id"]).astype(np.uint64)


def by_id(t: Table, values: np.ndarray) -> dict[int, Any]:
    """Per id: ``values`` of its last record (plain Python values)."""
    return dict(zip(ids(t).tolist(), np.asarray(values).tolist(), strict=True))


def _nranks(t: Table, nprocs: int) -> np.ndarray:
    rank = np.asarray(t["rank"]).astype(np.int64)
    n = counter(t, "nranks") if "nranks" in t else np.zeros(len(t))
    return np.where(rank >= 0, 1.0, np.where(n > 0, n, float(nprocs)))


def grouped(t: Table, cols: tuple[str, ...], nprocs: int) -> list[dict[str, Any]]:
    """Per dataset/variable id (in order of first record): its id, name, the sums of ``cols`` and
    the ranks (records of one rank summed), as plain Python values."""
    keys, codes = group_codes(ids(t), sort=False)
    n = len(keys)
    out = Table({"id": keys, "name": group_reduce(np.asarray(t["name"]), codes, n, "first")}, length=n)
    out["ranks"] = np.minimum(group_reduce(_nranks(t, nprocs), codes, n, "sum"), nprocs)
    for c in cols:
        out[c] = group_reduce(counter(t, c), codes, n, "sum")
    values = [out[c].tolist() for c in out.columns]
    return [dict(zip(out.columns, row, strict=True)) for row in zip(*values, strict=True)]


def first(t: Table, column: str) -> dict[int, float]:
    """Per id: the largest recorded value of a property counter (-1 when never recorded)."""
    if column not in t or not len(t):
        return {}
    keys, codes = group_codes(ids(t), sort=False)
    most = group_reduce(float_values(t[column], -1.0), codes, len(keys), "max")
    return dict(zip(keys.tolist(), np.maximum(most, -1.0).tolist(), strict=True))


def per_rank(facts: Facts, seconds_summed: float) -> float:
    """Seconds summed over ranks as a per-rank mean (the rules' time at stake)."""
    return seconds_summed / max(facts.nprocs, 1)


def chunked_extent(facts: Facts) -> dict[int, float]:
    """Per HDF5 file id: the full size of its chunked datasets (elements x element size), which
    HDF5 writes as fill values when it allocates their chunks (parallel HDF5 allocates every chunk
    at H5Dcreate) unless the fill time is H5D_FILL_TIME_NEVER."""
    d = layer(facts, HDF5.data)
    if not len(d) or "layout" not in d:
        return {}
    layout, npoints, elem = first(d, "layout"), first(d, "dataspace_npoints"), first(d, "datatype_size")
    file_of = by_id(d, file_ids(facts, HDF5.data))
    out: dict[int, float] = {}
    for did, lay in layout.items():
        fid = int(file_of.get(did, 0))
        if lay == 2 and fid and npoints.get(did, -1) > 0 and elem.get(did, -1) > 0:
            out[fid] = out.get(fid, 0.0) + npoints[did] * elem[did]
    return out


@dataclass(frozen=True)
class LibraryRequests:
    """What the application asked of an I/O library on one file, in one direction."""

    library: str  # "HDF5" or "PnetCDF"
    calls: float  # H5Dread/H5Dwrite, ncmpi_get_*/ncmpi_put_* (all ranks)
    nbytes: float


def large_request_files(facts: Facts, kind: str, limit: int, min_share: float) -> dict[str, LibraryRequests]:
    """Per file name: HDF5 and PnetCDF files whose application requests of ``kind`` (the dataset
    and variable records' calls) are large, fewer than ``min_share`` of them at most ``limit``
    bytes, and (HDF5) that hold no chunked dataset with chunks of at most ``limit`` bytes. The
    small requests beneath such a file are the library's own (metadata, headers), not the
    application's data (small chunks are data, split by the library: LIB-HDF5-SMALL-CHUNKS)."""
    out: dict[str, LibraryRequests] = {}
    for lib in LIBRARY_TABLE:
        dlayer = lib.data
        f, d = layer(facts, lib.files), layer(facts, dlayer)
        if not len(f) or not len(d):
            continue
        calls, small = request_ops(d, dlayer, kind), small_ops(d, dlayer, kind, limit)
        nbytes = counter(d, "bytes_read" if kind == "read" else "bytes_written")
        chunk = np.zeros(len(d))
        if lib is HDF5 and "datatype_size" in d and any(c in d for c in CHUNK_DIMS):
            dims = [counter(d, c) for c in CHUNK_DIMS if c in d]
            chunk = np.where(dims[0] > 0, np.prod([np.where(x > 0, x, 1.0) for x in dims], axis=0), 0.0)
            chunk = chunk * counter(d, "datatype_size")
        # per file (in order of its first record): the sums over its datasets' or variables' records
        fids, codes = group_codes(file_ids(facts, dlayer), sort=False)
        per = zip(
            fids.tolist(),
            *(group_reduce(x, codes, len(fids), "sum").tolist()
              for x in (calls, small, nbytes, ((chunk > 0) & (chunk <= limit)).astype(np.float64))),
            strict=True,
        )
        names = by_id(f, f["name"])
        for fid, n, n_small, b, small_chunked in per:
            if fid and fid in names and n > 0 and n_small < min_share * n and not small_chunked:
                out[str(names[fid])] = LibraryRequests(lib.label, float(n), float(b))
    return out
