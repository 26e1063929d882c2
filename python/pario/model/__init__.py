"""The in-memory model: the single interface between log readers and analyses.

A pario log and a Darshan log both become a :class:`Profile`.  The model is
columnar: one table of ranks and one table of file records per layer
(:class:`pario.table.Table`: named 1-D NumPy columns), never a Python object per
record, so a 65 536-rank log stays cheap.

Column conventions
------------------
``Profile.ranks`` (row i: rank i; when some ranks left no data, a ``rank``
column says which rank a row is), float64 columns, seconds unless noted, NaN
when the source does not know the value (Darshan records no MPI time without its APMPI module):

* ``wall``; I/O time by layer and kind: ``posix_read``, ``posix_write``,
  ``posix_meta``, ``stdio_*``, ``mpiio_*``, DAOS's ``dfs_*`` and ``daos_*`` (in
  the profile of a Darshan log with DFS or DAOS records), and the I/O libraries'
  ``hdf5_*`` and ``pnetcdf_*`` (outermost layer only, so they add up without
  double counting: time in an HDF5 call is ``hdf5_*`` time, not the MPI-IO or
  POSIX time of the calls it makes, and time in a DFS call is ``dfs_*`` time,
  not the DAOS time of the calls it makes);
* MPI: ``mpi_coll``, ``mpi_p2p``, ``mpi_other`` and ``mpi_coll_bytes``,
  ``mpi_p2p_bytes``, ``mpi_*_calls``; ``mpi_init`` (time in MPI_Init, which
  pario logs keep outside ``wall`` and the MPI classes, as Darshan does);
* ``maxrss`` (bytes), ``cpu_user``, ``cpu_sys``;
* derived by :func:`add_derived_rank_columns`: ``io``, ``io_read``,
  ``io_write``, ``io_meta``, ``mpi``, ``useful`` (= wall - io - mpi).

``Profile.files[layer]`` for layer in ``LAYERS`` (the storage layers: POSIX,
STDIO, MPI-IO, and DAOS's ``dfs`` files and ``daos`` objects) and
``LIBRARY_LAYERS`` (HDF5's files ``h5f`` and datasets ``h5d``, PnetCDF's files
``pnetcdf_file`` and variables ``pnetcdf_var``), all listed once in
``LAYER_TABLE``: columns ``id`` (uint64 hash of the path; a dataset's or
variable's path is ``FILE:/DATASET`` / ``FILE:VARIABLE``; a DFS file's or DAOS
object's id is Darshan's hash of its pool, container and object id, the same
for the file and its object), ``rank`` (-1 for a record reduced over
several ranks), ``name`` (an object array of str), then the layer's counters
(int64 or float64) named as Darshan names them, without the layer prefix and
``F_``, lower case: ``POSIX_BYTES_READ`` -> ``bytes_read``,
``POSIX_F_READ_TIME`` -> ``read_time``,
``MPIIO_SIZE_WRITE_AGG_0_100`` -> ``size_write_agg_0_100``,
``PNETCDF_VAR_PUT_VARA`` -> ``put_vara``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from pario.model.layers import (
    ALL_LAYERS,
    IO_KINDS,
    IO_TIME_COLUMNS,
    LAYER_LABELS,
    LAYER_TABLE,
    LAYERS,
    LIBRARIES,
    LIBRARY_LAYERS,
    MPI_TIME_COLUMNS,
    SIZE_BUCKETS,
    TIME_LAYERS,
    LayerInfo,
    counter_column,
    empty_layer,
    size_columns,
)
from pario.model.rankio import ProfileIO
from pario.table import Table, as_table

if TYPE_CHECKING:
    import pandas as pd

    from pario.trace.model import Trace


#: the layer names (pario.model.layers) are the model's too
__all__ = [
    "ALL_LAYERS",
    "IO_KINDS",
    "IO_TIME_COLUMNS",
    "LAYER_LABELS",
    "LAYER_TABLE",
    "LAYERS",
    "LIBRARIES",
    "LIBRARY_LAYERS",
    "MPI_TIME_COLUMNS",
    "SIZE_BUCKETS",
    "TIME_LAYERS",
    "LayerInfo",
    "counter_column",
    "empty_layer",
    "size_columns",
    "ProfileIO",
    "FS_TYPES",
    "Heatmap",
    "HeatmapLayer",
    "Job",
    "MountTable",
    "Profile",
    "add_derived_rank_columns",
    "fs_name",
    "rank_ids",
]


@dataclass(frozen=True)
class Job:
    """What is known about the run as a whole."""

    source: str  # "pario" or "darshan"
    path: str
    exe: str
    nprocs: int
    start_time: float  # seconds since the epoch
    end_time: float
    runtime: float  # T: the longest rank's wall time, seconds
    argv: tuple[str, ...] = ()
    hostname: str = ""
    jobid: str = ""
    mpi_library: str = ""
    #: False when some data is missing: ranks without a log, records that
    #: overflowed a memory cap, modules Darshan marked partial.
    complete: bool = True
    partial_reasons: tuple[str, ...] = ()
    #: Darshan logs carry no MPI time (unless they have APMPI records), and no per-rank time classes for
    #: shared files; analyses must say "unavailable" rather than guess.
    has_mpi_time: bool = True
    has_rank_times: bool = True
    metadata: dict[str, Any] = field(default_factory=dict)  # JSON-like values, by key


@dataclass(frozen=True)
class HeatmapLayer:
    """The bytes one module (POSIX, MPI-IO, STDIO...) moved in each time bin, per rank."""

    #: the ranks with data, ascending (a rank without a row moved nothing through the module)
    ranks: np.ndarray  # int64
    read: np.ndarray  # int64, (len(ranks), nbins)
    write: np.ndarray  # int64, (len(ranks), nbins)


@dataclass(frozen=True)
class Heatmap:
    """I/O activity over time: bytes read and written per time bin, per rank, per module.

    Bin i covers ``[i * bin_width, (i + 1) * bin_width)`` seconds after the job's start.  Darshan's
    HEATMAP module fills it (docs/metrics.md, "I/O activity over time"): an access's bytes are
    spread over the bins its call spans, in proportion to the time spent in each.  Layers nest as
    the file layers do: MPI-IO's bytes are also POSIX's.
    """

    bin_width: float  # seconds
    nbins: int
    layers: dict[str, HeatmapLayer]  # "POSIX", "MPIIO", "STDIO", "DFS", "DAOS", in log order


@dataclass
class Profile:
    """One run: job metadata, per-rank table, per-layer file tables, hints."""

    job: Job
    ranks: Table
    files: dict[str, Table]
    #: file id -> MPI-IO hints in effect after open (key -> value)
    hints: dict[int, dict[str, str]] = field(default_factory=dict)
    #: file id -> MPI-IO hints pario injected at its open (PARIO_HINTS: the global hints
    #: and the matching sections'); files without any are absent
    injected_hints: dict[int, dict[str, str]] = field(default_factory=dict)
    #: (layer, file id) -> sorted array of the ranks that touched a shared file
    file_ranks: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)
    #: the event trace (``pario run --trace``, docs/trace.md); None without one
    trace: Trace | None = None
    #: I/O activity over time (a Darshan log's HEATMAP module); None without one
    heatmap: Heatmap | None = None
    #: the per-rank I/O of ``files`` (:meth:`per_rank_io`), kept by the first analysis or by
    #: the reader that computed it, so that each is computed once per profile
    io: ProfileIO | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # a profile built by hand from DataFrames (tests, scripts) gets the model's Tables
        self.ranks = as_table(self.ranks)
        self.files = {layer: as_table(records) for layer, records in self.files.items()}

    def per_rank_io(self) -> ProfileIO:
        """The per-rank I/O of the layers (:mod:`pario.model.rankio`), each computed on first use
        and kept with the profile (whose files must not change after)."""
        if self.io is None:
            self.io = ProfileIO(self.files, self.job.nprocs, self.file_ranks)
        return self.io

    def layer(self, name: str) -> Table:
        """File records of a layer (an empty table if the layer has none)."""
        records = self.files.get(name)
        return records if records is not None else empty_layer()


def rank_ids(ranks: Table) -> np.ndarray:
    """The rank of each row of a rank table: its ``rank`` column when it has one (a log
    without some ranks' data), else the row's position."""
    if "rank" in ranks:
        return np.asarray(ranks["rank"], dtype=np.int64)
    return np.arange(len(ranks), dtype=np.int64)


def add_derived_rank_columns(ranks: Table | pd.DataFrame) -> Table:
    """Return ``ranks`` (a DataFrame built by hand is taken as :func:`pario.table.as_table`
    takes it) with io, io_read/write/meta, mpi and useful columns added.

    A sum over columns skips missing values and is missing only when all its terms are; the
    terms are added in column order.
    """
    table = as_table(ranks)
    return table.assign(**_derived_rank_columns(table))


def _derived_rank_columns(ranks: Table) -> dict[str, np.ndarray]:
    """The derived columns of :func:`add_derived_rank_columns`, in their order."""
    n = len(ranks)

    def column(name: str) -> np.ndarray:
        return np.asarray(ranks[name], dtype=np.float64) if name in ranks else derived[name]

    def row_sum(cols: list[str]) -> np.ndarray:
        if not cols:
            return np.full(n, np.nan)
        values = [column(c) for c in cols]
        # without a missing value (the usual case: a NaN term would make the plain sum NaN) the
        # plain sum, in the same order, is the sum below
        plain = values[0].copy()
        for v in values[1:]:
            plain += v
        if not np.isnan(plain).any():
            return plain
        missing = np.isnan(values[0])
        total = np.where(missing, 0.0, values[0])
        for v in values[1:]:
            nan = np.isnan(v)
            total = total + np.where(nan, 0.0, v)
            missing &= nan
        total[missing] = np.nan
        return total

    derived: dict[str, np.ndarray] = {}
    for kind in IO_KINDS:
        terms = (f"{layer}_{kind}" for layer in TIME_LAYERS)
        derived[f"io_{kind}"] = row_sum([c for c in terms if c in ranks])
    derived["io"] = row_sum(["io_read", "io_write", "io_meta"])
    derived["mpi"] = row_sum([c for c in MPI_TIME_COLUMNS if c in ranks])
    io, mpi = derived["io"], derived["mpi"]
    rest = np.asarray(ranks["wall"], dtype=np.float64) - (np.where(np.isnan(io), 0.0, io)
                                                          + np.where(np.isnan(mpi), 0.0, mpi))
    derived["useful"] = np.where((rest >= 0.0) | np.isnan(rest), rest, 0.0)
    return derived


#: statfs(2) f_type magic numbers of the file systems HPC users meet.
FS_TYPES: dict[int, str] = {
    0xEF53: "ext4", 0x58465342: "xfs", 0x01021994: "tmpfs", 0x6969: "nfs", 0x0BD00BD0: "lustre",
    0x47504653: "gpfs", 0x19830326: "beegfs", 0x794C7630: "overlayfs", 0x9123683E: "btrfs",
    0x00C36400: "cephfs", 0x2FC12FC1: "zfs", 0x65735546: "fuse", 0xAAD7AAEA: "panfs",
    0x6B414653: "afs", 0x517B: "smb", 0xFE534D42: "smb2", 0xFF534D42: "cifs",
}


class MountTable:
    """A Darshan log's mount table (``[[point, type], ...]``, ``job.metadata["mounts"]``), read
    once for the many names of a log: the longest mount point that is the name or holds it gives
    the name's type."""

    def __init__(self, mounts: object) -> None:
        entries: list[tuple[str, str]] = []
        for m in mounts or []:  # type: ignore[attr-defined]  # metadata values are JSON-like: a list here
            try:
                entries.append((str(m[0]), str(m[1])))
            except (IndexError, TypeError):
                continue
        # longest point first (the sort is stable: of equal lengths, the first listed wins)
        entries.sort(key=lambda e: -len(e[0]))
        self._prefixes = [(point.rstrip("/") + "/", fstype) for point, fstype in entries]
        self._exact: dict[str, str] = {}
        for point, fstype in entries:
            self._exact.setdefault(point, fstype)
        self._by_dir: dict[str, str] = {}

    def _holding(self, name: str) -> str:
        for prefix, fstype in self._prefixes:
            if name.startswith(prefix):
                return fstype
        return ""

    def fs_type(self, name: str) -> str:
        """The name's type, "" when no mount point is or holds it (a point equal to the name is
        longer than any that holds it)."""
        return self._exact[name] if name in self._exact else self._holding(name)

    def distinct(self, names: Iterable[str]) -> list[int]:
        """The positions of one name for each type :meth:`fs_types` can give ``names`` a different
        one: one per directory (a point holds ``dir/base`` exactly when it holds ``dir/``), and
        every name without a directory or equal to a mount point."""
        seen: dict[str, int] = {}
        exact = self._exact
        for i, name in enumerate(names):
            head, sep, _ = name.rpartition("/")
            seen.setdefault(head if sep and name not in exact else "\0" + name, i)
        return list(seen.values())

    def fs_types(self, names: Iterable[str]) -> list[str]:
        """:meth:`fs_type` of each name, each directory looked up once: a point holds
        ``dir/base`` exactly when it holds ``dir/``, since a base has no slash."""
        out = []
        for name in names:
            head, sep, _ = name.rpartition("/")
            if not sep or name in self._exact:
                out.append(self.fs_type(name))
                continue
            kind = self._by_dir.get(head)
            if kind is None:
                kind = self._by_dir[head] = self._holding(head + "/")
            out.append(kind)
        return out


def fs_name(magic: int | float) -> str:
    """Name of a file system from its statfs magic ("unknown (0x...)" if not known, "" for 0)."""
    value = int(magic)
    if value == 0:
        return ""
    return FS_TYPES.get(value, f"unknown (0x{value:x})")
