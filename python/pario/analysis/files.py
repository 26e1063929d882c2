"""Per-file table: I/O time and bytes of every file at its outermost layer (a file written or read
through HDF5 or PnetCDF: the library's, its datasets' or variables' time, bytes and calls plus the
file's own calls; the MPI-IO and POSIX calls beneath are the Libraries table's)."""

from __future__ import annotations

import numpy as np

from pario.model import ALL_LAYERS, LIBRARIES, Profile
from pario.model.layers import OPS
from pario.model.rankio import LIBRARY_DATA_LAYERS, data_file_ids, float_values
from pario.names import matching
from pario.table import Table, as_table, group_codes, group_reduce, group_sum, unique_index

#: The MPI library's own files, which the application did not ask for: Open MPI's lock tests of a
#: file system (``FILE.locktest.N``) and its shared-memory segments (``/tmp/ompi.*/…cid-….sm``).
#: Reports list them apart (one line), and the diagnosis takes no evidence from them.
MPI_LIBRARY_FILES: tuple[str, ...] = ("*.locktest.*", "*/ompi.*/*", "*_cid-*.sm")

FILE_COLUMNS: tuple[str, ...] = ("layer", "id", "name", "ranks", "read_time", "write_time", "meta_time",
                                 "time", "bytes_read", "bytes_written", "reads", "writes")
_SUMS = ("read_time", "write_time", "meta_time", "bytes_read", "bytes_written")
#: The read and write calls of each layer (a library file's are its datasets' or variables').
_READS = {layer: ops["read"] for layer, ops in OPS.items()}
_WRITES = {layer: ops["write"] for layer, ops in OPS.items()}
#: The file layer of each dataset/variable layer.
_FILE_LAYER = {data: file for file, data in LIBRARIES.values()}


def _values(records: Table, cols: tuple[str, ...]) -> np.ndarray:
    present = [c for c in cols if c in records]
    if not present:
        return np.zeros(len(records))
    # the row sum of the columns, added in column order
    total = np.clip(float_values(records[present[0]], 0.0), 0.0, None)
    for c in present[1:]:
        total = total + np.clip(float_values(records[c], 0.0), 0.0, None)
    return total


def directories(files: Table) -> np.ndarray:
    """Rows that are directories, not files: no data moved and (a record of an older pario log
    or a Darshan log) a name under which other files were recorded, or no activity at all."""
    idle = (files["bytes_read"] + files["bytes_written"] + files["reads"] + files["writes"]) == 0
    if not idle.any():  # the parents of a million names are only needed to judge an idle one
        return idle
    names = [str(n) for n in files["name"]]
    parents = set()  # every name's part before each "/" after its first character
    for n in names:
        i = n.find("/", 1)
        while i >= 0:
            parents.add(n[:i])
            i = n.find("/", i + 1)
    named = np.array([n.rstrip("/") in parents for n in names], dtype=bool)
    empty = idle & (files["time"] == 0)
    return idle & (named | empty)


def file_table(profile: Profile) -> Table:
    """One row per (layer, file), sorted by I/O time, slowest first.

    ``ranks`` counts the ranks that touched the file (for a record reduced
    over ranks: its ``nranks`` counter, else every rank).
    """
    nprocs = profile.job.nprocs
    parts = []
    for layer, records in profile.per_rank_io().time_records(ALL_LAYERS).items():
        if not len(records):
            continue
        rank = np.asarray(records["rank"]).astype(np.int64)
        if "nranks" in records:
            shared_n = float_values(records["nranks"], float(nprocs))
        else:
            shared_n = np.full(len(records), float(nprocs))
        data = {"id": records["id"], "name": records["name"], "ranks": np.where(rank >= 0, 1.0, shared_n)}
        for c in _SUMS:
            data[c] = _values(records, (c,))
        data["reads"] = _values(records, _READS.get(layer, ()))
        data["writes"] = _values(records, _WRITES.get(layer, ()))
        if layer in LIBRARY_DATA_LAYERS:  # a dataset or variable counts in its file's row
            frec = as_table(profile.layer(_FILE_LAYER[layer]))
            fid = data_file_ids(records, frec)
            known = fid != 0
            data = {k: np.asarray(v)[known] for k, v in data.items()}
            data["id"] = fid[known].astype(frec["id"].dtype)  # int64 ids: the same bits
            data["name"] = np.array([""] * int(known.sum()), dtype=object)
            data["ranks"] = np.zeros(int(known.sum()))  # the file record counts the ranks
            layer = _FILE_LAYER[layer]
        n = len(data["id"])
        parts.append(Table({"layer": np.full(n, layer, dtype=object),
                            "layer_code": np.full(n, ALL_LAYERS.index(layer)), **data}, length=n))
    if not parts:
        return Table({c: np.zeros(0) for c in FILE_COLUMNS}, length=0)
    return _sorted_files(_per_file(Table.concat(parts), nprocs))


def _per_file(rows: Table, nprocs: int) -> Table:
    """One row per (layer, id), in order of first appearance: the longest name (a library's
    dataset rows have none), the counts and times summed."""
    layer_code = rows["layer_code"]  # the layer as a number: no hashing of a million strings
    ids, _, id_code = unique_index(rows["id"])
    _, codes = group_codes(layer_code.reshape(-1) * len(ids) + id_code.reshape(-1), sort=False)
    ngroups = int(codes.max()) + 1 if len(codes) else 0
    first = group_reduce(np.arange(len(rows)), codes, ngroups, "min")
    if ngroups == len(rows):  # every file one row: its name (no sort of a million names)
        name = rows["name"][first]
    else:
        names, name_code = np.unique(rows["name"], return_inverse=True)
        name = names[group_reduce(name_code.reshape(-1), codes, ngroups, "max")]
    out = Table({"layer": rows["layer"][first], "id": rows["id"][first], "name": name}, length=ngroups)
    for c in ("ranks", *_SUMS, "reads", "writes"):
        out[c] = group_sum(rows[c], codes, ngroups)
    out["ranks"] = np.minimum(out["ranks"], nprocs).astype(np.int64)
    out["time"] = out["read_time"] + out["write_time"] + out["meta_time"]
    return out[list(FILE_COLUMNS)]


def _sorted_files(files: Table) -> Table:
    """The files without the directories, slowest first (then most bytes written, read)."""
    files = files[~directories(files)]
    order = np.lexsort((-files["bytes_read"], -files["bytes_written"], -files["time"]))
    return files[order]


def mpi_library_rows(files: Table) -> np.ndarray:
    """Rows of the per-file table that are the MPI library's own files (:data:`MPI_LIBRARY_FILES`)."""
    return matching(np.asarray(files["name"], dtype=object), MPI_LIBRARY_FILES)


def application_files(files: Table) -> tuple[Table, Table]:
    """The per-file table split in two: the application's files, and the MPI library's own."""
    own = mpi_library_rows(files)
    return (files[~own], files[own]) if own.any() else (files, files[own])


def mpi_library_line(library: Table) -> str:
    """One line for the MPI library's own files ("" when there are none)."""
    from pario.units import nbytes, seconds

    if not len(library):
        return ""
    n = len(library)
    moved = float(np.sum(library["bytes_read"]) + np.sum(library["bytes_written"]))
    time = seconds(float(np.sum(library["time"])))
    return (f"Not listed: {n:,} file{'s' if n != 1 else ''} of the MPI library itself (Open MPI's lock "
            f"tests and shared-memory segments: *.locktest.*, /tmp/ompi.*), {time} in I/O summed over "
            f"ranks, {nbytes(moved)} moved.")

