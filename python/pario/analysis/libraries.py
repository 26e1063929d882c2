"""The I/O libraries (HDF5, PnetCDF) over MPI-IO and POSIX: per file, the bytes the application
asked the library for and the bytes moved beneath it, and the library's own time (docs/metrics.md,
"I/O libraries").

* asked: the bytes of the file's datasets' (HDF5) or variables' (PnetCDF) reads and writes;
* moved beneath: the bytes of the file's MPI-IO records, or of its POSIX records when the library
  wrote without MPI-IO (HDF5's sec2 driver);
* library time: the datasets' or variables' read, write and metadata time plus the file's own
  metadata time (H5Fcreate/open/flush/close, groups, attributes; ncmpi_create/open/redef/enddef/sync/close; a
  Darshan log's PnetCDF waits), summed over ranks;
* overhead: library time - the time of the calls beneath on the same file (MPI-IO, else POSIX),
  summed over ranks: the time the library spends in itself (its metadata, data conversion,
  chunk bookkeeping, synchronisation) rather than in moving the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pario.model import LIBRARIES, Profile
from pario.model.layers import LIBRARY_TABLE, OPS
from pario.model.rankio import (
    LIBRARY_DATA_LAYERS,
    LIBRARY_FILE_LAYERS,
    counter_column,
    data_file_ids,
    float_values,
)
from pario.table import Table, as_table, group_codes, group_reduce, group_sum
from pario.values import Value, ratio

NOTHING_BENEATH = "no MPI-IO or POSIX records of the file"
LIBRARY_LABELS: dict[str, str] = {lib.name: lib.label for lib in LIBRARY_TABLE}

#: Call counters of the dataset/variable layers, by direction.
DATA_CALLS: dict[str, dict[str, tuple[str, ...]]] = {
    lib.data: {"read": OPS[lib.data]["read"], "write": OPS[lib.data]["write"]} for lib in LIBRARY_TABLE}
DATA_COLUMNS: tuple[str, ...] = ("library", "layer", "id", "name", "file", "ranks", "read_time", "write_time",
                                 "meta_time", "time", "bytes_read", "bytes_written", "reads", "writes")
_TIMES = ("read_time", "write_time", "meta_time")


@dataclass(frozen=True)
class LibraryFile:
    """One file written or read through an I/O library."""

    library: str  # "hdf5" or "pnetcdf"
    name: str
    datasets: int  # datasets (HDF5) or variables (PnetCDF) with records
    asked_read: Value
    asked_written: Value
    beneath_layer: str  # "mpiio", "posix" or "" (no records beneath)
    moved_read: Value
    moved_written: Value
    #: bytes moved beneath / bytes asked (None when nothing was asked)
    amplification: Value
    library_time: Value
    beneath_time: Value
    overhead: Value
    overhead_share: Value


@dataclass(frozen=True)
class LibrarySummary:
    """The library files of a run (slowest first) and their datasets/variables, listed like files."""

    files: tuple[LibraryFile, ...] = ()
    #: one row per dataset or variable (DATA_COLUMNS), slowest first
    datasets: Table | None = None

    @property
    def present(self) -> bool:
        return bool(self.files)


def _sum(records: Table, cols: tuple[str, ...]) -> np.ndarray:
    total = np.zeros(len(records))
    for c in cols:
        total = total + counter_column(records, c)
    return total


def _by_id(records: Table | None, ids: np.ndarray, values: np.ndarray) -> dict[int, float]:
    """Per id, in order of first appearance, the sum of its values in record order."""
    if records is None or not len(records):
        return {}
    uniq, codes = group_codes(ids, sort=False)
    sums = np.bincount(codes, weights=np.asarray(values, dtype=np.float64), minlength=len(uniq))
    return dict(zip((int(i) for i in uniq.tolist()), sums.tolist(), strict=True))


def _layer_ids(records: Table | None) -> np.ndarray:
    if records is None or not len(records):
        return np.zeros(0, dtype=np.uint64)
    return np.asarray(records["id"]).astype(np.uint64)


def _beneath(files: Mapping[str, Table], fid: int) -> tuple[str, float, float, float]:
    """(layer, bytes read, bytes written, time) of the records beneath the library on file ``fid``."""
    for layer in ("mpiio", "posix"):
        table = files.get(layer)
        if table is None or not len(table):
            continue
        rows = table[_layer_ids(table) == np.uint64(fid)]
        if len(rows):
            return (layer, float(counter_column(rows, "bytes_read").sum()),
                    float(counter_column(rows, "bytes_written").sum()), float(_sum(rows, _TIMES).sum()))
    return ("", 0.0, 0.0, 0.0)


def _file_own_time(records: Table) -> np.ndarray:
    """A library file record's own time: metadata, plus a Darshan PnetCDF file's waits (its
    variables' times leave them out; a pario file record's read/write time is its variables')."""
    own = counter_column(records, "meta_time")
    if "read_time" not in records:
        own = own + counter_column(records, "wait_time")
    return own


def library_summary(profile: Profile) -> LibrarySummary:
    """Per library file: bytes asked vs moved beneath, library time and overhead; per dataset or
    variable: a row like the file table's."""
    files: dict[str, Table] = {}
    rows: list[LibraryFile] = []
    data_parts: list[Table] = []
    for library, (file_layer, data_layer) in LIBRARIES.items():
        frec = as_table(profile.layer(file_layer))
        drec = as_table(profile.layer(data_layer))
        if not len(frec) and not len(drec):
            continue
        files = files or {layer: as_table(profile.layer(layer)) for layer in ("mpiio", "posix")}
        fids = _layer_ids(frec)
        dfid = data_file_ids(drec, frec)
        dtime = _sum(drec, _TIMES)
        asked_r = _by_id(drec, dfid, counter_column(drec, "bytes_read"))
        asked_w = _by_id(drec, dfid, counter_column(drec, "bytes_written"))
        lib_time = _by_id(drec, dfid, dtime)
        for fid, t in _by_id(frec, fids, _file_own_time(frec)).items():
            lib_time[fid] = lib_time.get(fid, 0.0) + t
        names = ({int(i): str(n) for i, n in zip(fids.tolist(), frec["name"], strict=True)}
                 if len(frec) else {})
        for fid in dict.fromkeys([*names, *lib_time]):
            if fid == 0:
                continue
            layer, mr, mw, btime = _beneath(files, fid)
            if fid not in asked_r and fid in names:  # no dataset records: the file record's own bytes
                own = frec[fids == np.uint64(fid)]
                asked_r[fid] = float(counter_column(own, "bytes_read").sum())
                asked_w[fid] = float(counter_column(own, "bytes_written").sum())
            asked = asked_r.get(fid, 0.0) + asked_w.get(fid, 0.0)
            ltime = lib_time.get(fid, 0.0)
            over = max(ltime - btime, 0.0)
            rows.append(LibraryFile(
                library=library, name=names.get(fid, f"<file {fid:016x}>"),
                datasets=len(np.unique(drec["id"][dfid == np.uint64(fid)])) if len(drec) else 0,
                asked_read=Value.of(asked_r.get(fid, 0.0), "B"),
                asked_written=Value.of(asked_w.get(fid, 0.0), "B"),
                beneath_layer=layer,
                moved_read=Value.of(mr, "B") if layer else Value.unavailable(NOTHING_BENEATH, "B"),
                moved_written=Value.of(mw, "B") if layer else Value.unavailable(NOTHING_BENEATH, "B"),
                amplification=(ratio(mr + mw, asked, unit="x", when_zero="no bytes asked") if layer
                               else Value.unavailable(NOTHING_BENEATH, "x")),
                library_time=Value.of(ltime, "s"),
                beneath_time=Value.of(btime, "s") if layer else Value.unavailable("no records beneath", "s"),
                overhead=Value.of(over, "s") if layer else Value.unavailable("no records beneath", "s"),
                overhead_share=(ratio(over, ltime, when_zero="no time in the library") if layer
                                else Value.unavailable("no records beneath")),
            ))
        if len(drec):
            data_parts.append(_data_rows(library, data_layer, drec, dfid, names, profile.job.nprocs))
    rows.sort(key=lambda f: -(f.library_time.value or 0.0))
    datasets = (Table.concat(data_parts) if data_parts
                else Table({c: np.zeros(0) for c in DATA_COLUMNS}, length=0))
    if len(datasets):
        datasets = datasets[np.lexsort((-datasets["bytes_written"], -datasets["time"]))]
    return LibrarySummary(tuple(rows), datasets)


def _data_rows(library: str, layer: str, drec: Table, dfid: np.ndarray, names: Mapping[int, str],
               nprocs: int) -> Table:
    """One row per dataset or variable (its records summed, in order of first appearance)."""
    rank = np.asarray(drec["rank"]).astype(np.int64)
    shared_n = (float_values(drec["nranks"], float(nprocs)) if "nranks" in drec
                else np.full(len(drec), float(nprocs)))
    ids, codes = group_codes(drec["id"], sort=False)
    n = len(ids)
    first = group_reduce(np.arange(len(drec)), codes, n, "min")
    files = np.array([names.get(int(i), "") for i in dfid[first].tolist()], dtype=object)
    out = Table({"library": np.full(n, library, dtype=object), "layer": np.full(n, layer, dtype=object),
                 "id": ids, "name": drec["name"][first], "file": files}, length=n)
    ranks = group_sum(np.where(rank >= 0, 1.0, shared_n), codes, n)
    out["ranks"] = np.minimum(ranks, nprocs).astype(np.int64)
    for c in (*_TIMES, "bytes_read", "bytes_written"):
        out[c] = group_sum(counter_column(drec, c), codes, n)
    out["reads"] = group_sum(_sum(drec, DATA_CALLS[layer]["read"]), codes, n)
    out["writes"] = group_sum(_sum(drec, DATA_CALLS[layer]["write"]), codes, n)
    out["time"] = out["read_time"] + out["write_time"] + out["meta_time"]
    return out[list(DATA_COLUMNS)]


__all__ = ["DATA_COLUMNS", "LIBRARY_FILE_LAYERS", "LIBRARY_DATA_LAYERS", "LIBRARY_LABELS", "LibraryFile",
           "LibrarySummary", "data_file_ids", "library_summary"]
