"""One description of the run that every piece of advice is checked against.

:func:`describe` reads it once per run from the rules' :class:`Facts`: the MPI library, per
MPI-IO file its component (ROMIO or OMPIO) and access mode (independent or collective calls
per direction, whether a file view was set, how many ranks shared it), the I/O libraries that
opened it (HDF5, PnetCDF), whether the log records the hints in effect (pario logs do, Darshan
logs never), and the recorded command.  :mod:`.advice_fit` uses it to drop recommendations
that cannot act in this run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pario.analysis.filesystems import FileSystems
from pario.diagnosis.columns import mpiio_files
from pario.diagnosis.commands import recorded
from pario.diagnosis.facts import Facts
from pario.diagnosis.file_facts import io_component
from pario.diagnosis.library_records import file_sums as library_file_sums
from pario.model import LAYER_TABLE
from pario.model.layers import HDF5
from pario.table import as_table

#: which I/O library each library layer belongs to
_LIBRARY_OF = {x.name: x.library for x in LAYER_TABLE if x.library}


@dataclass(frozen=True)
class FileAccess:
    """How the run accessed one file through MPI-IO."""

    fid: int
    name: str
    #: "romio", "ompio" or "" (unknown)
    component: str
    independent: dict[str, float]  # by direction ("read", "write"): independent calls
    collective: dict[str, float]  # collective (and split collective) calls
    other: dict[str, float]  # non-blocking and shared-pointer calls
    #: MPI_File_set_view calls (0: the default view, every access contiguous in the file)
    views: float
    noncontig: bool
    ranks: int
    #: the I/O libraries with records of this file ("hdf5", "pnetcdf")
    libraries: frozenset[str]
    #: by direction: H5Dread / H5Dwrite calls on the file's datasets, and those of them that asked
    #: for collective transfers (H5FD_MPIO_COLLECTIVE; pario logs: Darshan records no such count)
    hdf5_calls: dict[str, float] = field(default_factory=lambda: {"read": 0.0, "write": 0.0})
    hdf5_collective: dict[str, float] = field(default_factory=lambda: {"read": 0.0, "write": 0.0})

    def calls(self, kind: str) -> float:
        return self.independent[kind] + self.collective[kind] + self.other[kind]

    def collective_share(self, kind: str) -> float | None:
        """The share of this direction's calls that were collective (None: no calls)."""
        n = self.calls(kind)
        return self.collective[kind] / n if n > 0 else None


@dataclass(frozen=True)
class RunDescription:
    source: str  # "pario" or "darshan"
    mpi_library: str
    #: whether the log records the MPI-IO hints in effect (Darshan logs never do)
    hints_recorded: bool
    #: the I/O libraries with records in the run
    libraries: frozenset[str]
    files: dict[int, FileAccess]
    #: the command the log records ("" when none)
    command: str
    #: whether the log would hold HDF5 records had the program used HDF5 (pario's runtime
    #: records HDF5 whenever the program calls it; a Darshan log only with its H5F module)
    records_hdf5: bool = True
    #: whether the log holds the command given to pario run, launcher options included
    launch_recorded: bool = True
    #: the file systems of the application's files (types as pario.analysis.filesystems names them)
    file_systems: frozenset[str] = frozenset()


def _libraries(facts: Facts) -> tuple[frozenset[str], dict[int, set[str]]]:
    """The I/O libraries with records in the run, and by MPI-IO file id those with records of it
    (``Facts.files`` holds only the storage layers: these come from the profile's layers)."""
    present: set[str] = set()
    by_file: dict[int, set[str]] = {}
    for layer, library in _LIBRARY_OF.items():
        records = as_table(facts.profile.layer(layer))
        if not len(records):
            continue
        present.add(library)
        for name in set(np.asarray(records["name"]).tolist()):
            # a dataset's or variable's record is named FILE:/DATASET or FILE:VARIABLE
            by_file.setdefault(_file_id_of(facts, str(name)), set()).add(library)
    return frozenset(present), by_file


def _file_id_of(facts: Facts, name: str) -> int:
    """The id of the MPI-IO file whose path is ``name`` or prefixes it before a ':' (-1: none)."""
    index = facts.cached("run description: mpiio ids by name", lambda: _mpiio_ids_by_name(facts))
    if name in index:
        return index[name]
    head = name.rsplit(":", 1)[0] if ":" in name else name
    return index.get(head, -1)


def _mpiio_ids_by_name(facts: Facts) -> dict[str, int]:
    files = mpiio_files(facts)
    if not len(files):
        return {}
    return {str(n): int(i) for n, i in zip(files["name"], files["id"], strict=True)}


def describe(facts: Facts) -> RunDescription:
    """The run's description (computed once per Facts)."""
    return facts.cached("run description", lambda: _describe(facts))


def _describe(facts: Facts) -> RunDescription:
    job = facts.profile.job
    present, libs = _libraries(facts)
    files: dict[int, FileAccess] = {}
    table = mpiio_files(facts)
    hdf5 = _hdf5_transfers(facts)
    for r in table.rows() if len(table) else ():
        fid = int(r["id"])
        calls, asked = hdf5.get(fid, ({"read": 0.0, "write": 0.0}, {"read": 0.0, "write": 0.0}))
        files[fid] = FileAccess(
            fid=fid,
            name=str(r["name"]),
            component=io_component(facts, fid),
            independent={k: float(r[f"indep_{k}s"]) for k in ("read", "write")},
            collective={k: float(r[f"coll_{k}s"]) for k in ("read", "write")},
            other={k: float(r[f"other_{k}s"]) for k in ("read", "write")},
            views=float(r["views"]),
            noncontig=bool(r["noncontig"]),
            ranks=int(r["ranks"]),
            libraries=frozenset(libs.get(fid, ())),
            hdf5_calls=calls,
            hdf5_collective=asked,
        )
    return RunDescription(
        source=job.source,
        mpi_library=job.mpi_library,
        hints_recorded=job.source == "pario",
        libraries=present,
        files=files,
        command=" ".join(job.argv),
        records_hdf5=job.source == "pario" or HDF5.name in present or _darshan_has_hdf5_module(facts),
        launch_recorded=recorded(facts),
        file_systems=_file_systems(facts),
    )


def _hdf5_transfers(facts: Facts) -> dict[int, tuple[dict[str, float], dict[str, float]]]:
    """By file id: its datasets' H5Dread/H5Dwrite calls, and those that asked for collective
    transfers, per direction (files with HDF5 dataset records that count them only)."""
    sums = library_file_sums(facts, HDF5.data, ("reads", "writes", "coll_reads", "coll_writes"))
    return {fid: ({k: v[f"{k}s"] for k in ("read", "write")}, {k: v[f"coll_{k}s"] for k in ("read", "write")})
            for fid, v in sums.items()}


def _file_systems(facts: Facts) -> frozenset[str]:
    """The known file-system types of the application's files (outermost records)."""
    ids: list[np.ndarray] = []
    names: list[np.ndarray] = []
    for table in facts.outermost().values():
        if len(table):
            ids.append(np.asarray(table["id"]).astype(np.uint64))
            names.append(np.asarray(table["name"], dtype=object))
    kinds = FileSystems(facts.profile).kinds(np.concatenate(ids), np.concatenate(names)) if ids else set()
    return frozenset(k for k in kinds if k)


def _darshan_has_hdf5_module(facts: Facts) -> bool:
    """Whether the Darshan log was written by a runtime with its HDF5 module."""
    meta = facts.profile.job.metadata
    modules = [*_listed(meta.get("modules")), *_listed(meta.get("modules_not_analysed"))]
    return any(str(m).upper().startswith("H5") for m in modules)


def _listed(value: object) -> list[str]:
    """The names a metadata entry lists (a dict's keys, a list's items; none for anything else)."""
    return [str(v) for v in value] if isinstance(value, (dict, list, tuple)) else []
