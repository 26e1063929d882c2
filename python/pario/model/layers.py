"""The layers of the model, listed once (:data:`LAYER_TABLE`), and the column names made from them.

Below everything else of the model: the per-rank I/O derivation (:mod:`pario.model.rankio`) and
the profile (:mod:`pario.model`) are built on it."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from pario.table import Table


@dataclass(frozen=True)
class LayerInfo:
    """One layer of the model.  Every list of layers (:data:`LAYERS`, :data:`ALL_LAYERS`,
    :data:`TIME_LAYERS`, the Darshan reader's modules, the reports' labels, the operation counters
    of :data:`OPS`...) is made from :data:`LAYER_TABLE`, so that a new layer is one more row there."""

    #: the ``Profile.files`` key, and the rank table's time-class prefix of a storage layer
    name: str
    #: the Darshan module whose records it holds
    module: str
    #: its counters' prefix (Darshan's counter names; pario's logs use the same)
    prefix: str
    #: what reports call it
    label: str
    #: the I/O library whose layer it is ("hdf5", "pnetcdf": the rank table's time-class prefix
    #: of its layers); "" for a storage layer
    library: str = ""
    #: its operation counters (model columns; a log without one skips it): reads, writes and
    #: metadata calls
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    metas: tuple[str, ...] = ()
    #: its request-size histogram counts aggregate requests (``size_read_agg_*``: a collective
    #: call's or a library call's whole request), not the calls of a file system
    aggregate_sizes: bool = False
    #: the layer whose calls on the same file (or object) are made of this layer's calls: a record
    #: with the id of a record of that layer is beneath it (POSIX beneath MPI-IO, DAOS beneath DFS)
    inside: str = ""


#: The layers, in the order reports list them: the storage layers, then the I/O libraries'.
#: DFS_NB_READS / NB_WRITES count the non-blocking ones among the reads and writes, DAOS_NB_OPS the
#: non-blocking calls among all: not calls of their own.  The libraries' file records count their
#: datasets' (variables') reads and writes in their bytes and (pario) times, not as calls of their own.
LAYER_TABLE: tuple[LayerInfo, ...] = (
    LayerInfo("posix", "POSIX", "POSIX_", "POSIX", reads=("reads",), writes=("writes",),
              metas=("opens", "stats", "seeks", "fsyncs", "fdsyncs", "truncates", "unlinks"), inside="mpiio"),
    LayerInfo("stdio", "STDIO", "STDIO_", "STDIO", reads=("reads",), writes=("writes",),
              metas=("opens", "fdopens", "seeks", "flushes")),
    LayerInfo("mpiio", "MPI-IO", "MPIIO_", "MPI-IO",
              reads=("indep_reads", "coll_reads", "split_reads", "nb_reads", "shared_reads"),
              writes=("indep_writes", "coll_writes", "split_writes", "nb_writes", "shared_writes"),
              metas=("indep_opens", "coll_opens", "syncs", "views", "hints", "set_sizes"),
              aggregate_sizes=True),
    LayerInfo("dfs", "DFS", "DFS_", "DFS", reads=("reads", "readxs"), writes=("writes", "writexs"),
              metas=("opens", "global_opens", "lookups", "dups", "get_sizes", "punches", "removes", "stats")),
    LayerInfo("daos", "DAOS", "DAOS_", "DAOS", reads=("obj_fetches", "array_reads", "kv_gets"),
              writes=("obj_updates", "array_writes", "kv_puts"),
              metas=("obj_opens", "obj_punches", "obj_dkey_punches", "obj_akey_punches", "obj_dkey_lists",
                     "obj_akey_lists", "obj_recx_lists", "array_opens", "array_get_sizes", "array_set_sizes",
                     "array_stats", "array_punches", "array_destroys", "kv_opens", "kv_removes", "kv_lists",
                     "kv_destroys"), inside="dfs"),
    LayerInfo("h5f", "H5F", "H5F_", "HDF5 files", "hdf5", metas=("opens", "creates", "flushes")),
    LayerInfo("h5d", "H5D", "H5D_", "HDF5 datasets", "hdf5", reads=("reads",), writes=("writes",),
              metas=("opens", "creates", "flushes"), aggregate_sizes=True),
    LayerInfo("pnetcdf_file", "PNETCDF_FILE", "PNETCDF_FILE_", "PnetCDF files", "pnetcdf",
              metas=("creates", "opens", "redefs", "enddefs", "syncs", "indep_waits", "coll_waits")),
    LayerInfo("pnetcdf_var", "PNETCDF_VAR", "PNETCDF_VAR_", "PnetCDF variables", "pnetcdf",
              reads=("indep_reads", "coll_reads", "nb_reads"),
              writes=("indep_writes", "coll_writes", "nb_writes"),
              metas=("opens",), aggregate_sizes=True),
)
#: The storage layers: the file systems' (POSIX, STDIO), MPI-IO, and DAOS's file-system library
#: (DFS) and object API (DAOS).  Their records are files (a DAOS record: an object), their bytes
#: reach storage.
LAYERS: tuple[str, ...] = tuple(x.name for x in LAYER_TABLE if not x.library)
#: The I/O libraries' layers, above MPI-IO: files and datasets (HDF5), files and variables (PnetCDF).
LIBRARY_LAYERS: tuple[str, ...] = tuple(x.name for x in LAYER_TABLE if x.library)
ALL_LAYERS: tuple[str, ...] = tuple(x.name for x in LAYER_TABLE)
#: inner layer -> the layer its records are beneath (LayerInfo.inside)
NESTED_IN: dict[str, str] = {x.name: x.inside for x in LAYER_TABLE if x.inside}
#: The labels reports give the layers.
LAYER_LABELS: dict[str, str] = {x.name: x.label for x in LAYER_TABLE}
#: Operation counters of each layer, by kind (read, write, meta).
OPS: dict[str, dict[str, tuple[str, ...]]] = {
    x.name: {"read": x.reads, "write": x.writes, "meta": x.metas} for x in LAYER_TABLE}


@dataclass(frozen=True)
class LibraryInfo:
    """An I/O library: its two layers of :data:`LAYER_TABLE` (the rows naming it, files first)."""

    #: the ``library`` of its layers, and the rank table's time-class prefix of their times
    name: str
    #: what reports call it
    label: str
    #: its calls that its file layer counts, as reports list them
    file_calls: str
    #: its file layer, and its dataset (HDF5) or variable (PnetCDF) layer
    files: str = ""
    data: str = ""


def _library(name: str, label: str, file_calls: str) -> LibraryInfo:
    files, data = (x.name for x in LAYER_TABLE if x.library == name)
    return LibraryInfo(name, label, file_calls, files, data)


HDF5 = _library("hdf5", "HDF5", "H5Fcreate/open/flush/close, groups, attributes")
PNETCDF = _library("pnetcdf", "PnetCDF", "ncmpi_create/open/redef/enddef/sync/close")
#: The I/O libraries, in the order of their layers in LAYER_TABLE.
LIBRARY_TABLE: tuple[LibraryInfo, ...] = (HDF5, PNETCDF)
assert {x.library for x in LAYER_TABLE if x.library} == {lib.name for lib in LIBRARY_TABLE}
#: library -> (its file layer, its dataset/variable layer)
LIBRARIES: dict[str, tuple[str, str]] = {lib.name: (lib.files, lib.data) for lib in LIBRARY_TABLE}
#: The libraries' file layers and dataset/variable layers, and the library of each.
LIBRARY_FILE_LAYERS: dict[str, str] = {lib.files: lib.name for lib in LIBRARY_TABLE}
LIBRARY_DATA_LAYERS: dict[str, str] = {lib.data: lib.name for lib in LIBRARY_TABLE}
#: The file layer of each dataset/variable layer.
FILE_LAYER_OF_DATA: dict[str, str] = {lib.data: lib.files for lib in LIBRARY_TABLE}
#: The rank table's time-class prefixes: the storage layers, then the libraries.
TIME_LAYERS: tuple[str, ...] = (*LAYERS, *LIBRARIES)

IO_KINDS: tuple[str, ...] = ("read", "write", "meta")
IO_TIME_COLUMNS: tuple[str, ...] = tuple(f"{layer}_{kind}" for layer in TIME_LAYERS for kind in IO_KINDS)
MPI_TIME_COLUMNS: tuple[str, ...] = ("mpi_coll", "mpi_p2p", "mpi_other")

#: The ten request-size buckets shared by Darshan and pario (upper bounds, bytes).
SIZE_BUCKETS: tuple[str, ...] = (
    "0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M",
    "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS",
)


#: The counter prefixes with an underscore inside (PNETCDF_FILE_): the others end at the first one.
_LONG_PREFIXES: tuple[str, ...] = tuple(x.prefix for x in LAYER_TABLE if x.prefix.count("_") > 1)
#: The layers whose histograms count aggregate requests.
_AGGREGATE_SIZES: frozenset[str] = frozenset(x.name for x in LAYER_TABLE if x.aggregate_sizes)


@functools.lru_cache(maxsize=4096)
def counter_column(name: str) -> str:
    """Model column for a Darshan/pario counter name (``POSIX_F_READ_TIME`` -> ``read_time``,
    ``PNETCDF_VAR_F_READ_TIME`` -> ``read_time``)."""
    long = next((p for p in _LONG_PREFIXES if name.startswith(p)), None)
    if long:
        rest = name[len(long):]
    else:
        _, _, rest = name.partition("_")
    if rest.startswith("F_"):
        rest = rest[2:]
    return rest.lower()


def size_columns(layer: str, direction: str) -> list[str]:
    """Histogram columns of a layer for ``direction`` in {"read", "write"}."""
    middle = f"{direction}_agg" if layer in _AGGREGATE_SIZES else direction
    return [f"size_{middle}_{b}".lower() for b in SIZE_BUCKETS]


def empty_layer() -> Table:
    """A layer without records: the key columns, no rows."""
    return Table({"id": np.zeros(0, dtype=np.uint64), "rank": np.zeros(0, dtype=np.int64),
                  "name": np.zeros(0, dtype=object)})
