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
    :data:`TIME_LAYERS`, the Darshan reader's modules, the reports' labels...) is made from
    :data:`LAYER_TABLE`, so that a new layer is one more row there."""

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


#: The layers, in the order reports list them: the storage layers, then the I/O libraries'.
LAYER_TABLE: tuple[LayerInfo, ...] = (
    LayerInfo("posix", "POSIX", "POSIX_", "POSIX"),
    LayerInfo("stdio", "STDIO", "STDIO_", "STDIO"),
    LayerInfo("mpiio", "MPI-IO", "MPIIO_", "MPI-IO"),
    LayerInfo("dfs", "DFS", "DFS_", "DFS"),
    LayerInfo("daos", "DAOS", "DAOS_", "DAOS"),
    LayerInfo("h5f", "H5F", "H5F_", "HDF5 files", "hdf5"),
    LayerInfo("h5d", "H5D", "H5D_", "HDF5 datasets", "hdf5"),
    LayerInfo("pnetcdf_file", "PNETCDF_FILE", "PNETCDF_FILE_", "PnetCDF files", "pnetcdf"),
    LayerInfo("pnetcdf_var", "PNETCDF_VAR", "PNETCDF_VAR_", "PnetCDF variables", "pnetcdf"),
)
#: The storage layers: the file systems' (POSIX, STDIO), MPI-IO, and DAOS's file-system library
#: (DFS) and object API (DAOS).  Their records are files (a DAOS record: an object), their bytes
#: reach storage.
LAYERS: tuple[str, ...] = tuple(x.name for x in LAYER_TABLE if not x.library)
#: The I/O libraries' layers, above MPI-IO: files and datasets (HDF5), files and variables (PnetCDF).
LIBRARY_LAYERS: tuple[str, ...] = tuple(x.name for x in LAYER_TABLE if x.library)
ALL_LAYERS: tuple[str, ...] = tuple(x.name for x in LAYER_TABLE)


def _libraries() -> dict[str, tuple[str, str]]:
    layers: dict[str, list[str]] = {}
    for x in LAYER_TABLE:
        if x.library:
            layers.setdefault(x.library, []).append(x.name)
    return {lib: (files, data) for lib, (files, data) in layers.items()}


#: library -> (its file layer, its dataset/variable layer), as LAYER_TABLE lists them
LIBRARIES: dict[str, tuple[str, str]] = _libraries()
#: The labels reports give the layers.
LAYER_LABELS: dict[str, str] = {x.name: x.label for x in LAYER_TABLE}
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


@functools.lru_cache(maxsize=4096)
def counter_column(name: str) -> str:
    """Model column for a Darshan/pario counter name (``POSIX_F_READ_TIME`` -> ``read_time``,
    ``PNETCDF_VAR_F_READ_TIME`` -> ``read_time``)."""
    if name.startswith(("PNETCDF_FILE_", "PNETCDF_VAR_")):
        rest = name[len("PNETCDF_FILE_"):] if name.startswith("PNETCDF_FILE_") else name[len("PNETCDF_VAR_"):]
    else:
        _, _, rest = name.partition("_")
    if rest.startswith("F_"):
        rest = rest[2:]
    return rest.lower()


def size_columns(layer: str, direction: str) -> list[str]:
    """Histogram columns of a layer for ``direction`` in {"read", "write"}."""
    middle = f"{direction}_agg" if layer in ("mpiio", "h5d", "pnetcdf_var") else direction
    return [f"size_{middle}_{b}".lower() for b in SIZE_BUCKETS]


def empty_layer() -> Table:
    """A layer without records: the key columns, no rows."""
    return Table({"id": np.zeros(0, dtype=np.uint64), "rank": np.zeros(0, dtype=np.int64),
                  "name": np.zeros(0, dtype=object)})
