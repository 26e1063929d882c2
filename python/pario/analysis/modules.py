"""The Darshan modules a log carries that pario does not analyse, and what each one holds.

The reader lists them in ``job.metadata["modules_not_analysed"]``.  Some hold I/O that no
analysed layer sees (MDHIM's key-value calls, a newer Darshan's modules): then the I/O figures
miss it, and the report, the diagnosis and the survey must say so rather than find nothing.  The
others describe I/O that POSIX and MPI-IO already count (traces, heat maps) or something else
(network).

DFS and DAOS (DAOS's file-system library and object API) are analysed: they are the model's
``dfs`` and ``daos`` layers (:mod:`pario.log.darshan_reader`).  APMPI (MPI time) and HEATMAP
(bytes per time bin) are analysed too (:mod:`pario.log.apmpi`, :mod:`pario.log.heatmap`): they
are listed only when their region is damaged, or when APMPI does not hold one record per rank;
their entries below say what is then left unread.
"""

from __future__ import annotations

from dataclasses import dataclass

from pario.model import Job

#: Holds I/O that no analysed layer counts.
UNSEEN_IO = "unseen-io"
#: Describes I/O the analysed layers count (traces, time bins).
IO_DETAIL = "io-detail"
#: Holds something other than file I/O.
OTHER = "other"

#: Darshan module -> (kind, what its records hold).
MODULE_CONTENTS: dict[str, tuple[str, str]] = {
    "MDHIM": (UNSEEN_IO, "key-value operations through MDHIM"),
    "DXT_POSIX": (IO_DETAIL, "a trace of every POSIX read and write (offset, length, start, end)"),
    "DXT_MPIIO": (IO_DETAIL, "a trace of every MPI-IO read and write (offset, length, start, end)"),
    "HEATMAP": (IO_DETAIL, "the bytes read and written in each time bin"),
    "APMPI": (OTHER, "MPI time per rank and per call"),
    "APXC": (OTHER, "Cray Aries network counters"),
    "BG/Q": (OTHER, "Blue Gene/Q machine facts"),
}
_UNKNOWN = (UNSEEN_IO, "data of a module the Darshan reader library does not know (written by a newer "
            "Darshan), which may hold I/O")
_LIBRARY = (IO_DETAIL, "an I/O library's calls, whose I/O the MPI-IO and POSIX layers beneath count")


@dataclass(frozen=True)
class SkippedModule:
    """A module of the log that pario does not analyse."""

    name: str
    kind: str  # UNSEEN_IO, IO_DETAIL or OTHER
    holds: str


def skipped_modules(job: Job) -> tuple[SkippedModule, ...]:
    """The modules of ``job``'s log that pario does not analyse, in the reader's order."""
    names = job.metadata.get("modules_not_analysed") or []
    return tuple(SkippedModule(str(m), *_contents(str(m))) for m in names)


def _contents(name: str) -> tuple[str, str]:
    if name in MODULE_CONTENTS:
        return MODULE_CONTENTS[name]
    if name.startswith("unknown module"):
        return _UNKNOWN
    if name.startswith(("H5", "PNETCDF", "ADIOS")):
        return _LIBRARY
    return (OTHER, "data pario does not read")


def unseen_io_modules(job: Job) -> tuple[SkippedModule, ...]:
    """The skipped modules that hold I/O no analysed layer counts."""
    return tuple(m for m in skipped_modules(job) if m.kind == UNSEEN_IO)


def unseen_io_phrase(job: Job) -> str:
    """"the I/O in Darshan's MDHIM records", empty when no module holds unseen I/O."""
    mods = [m.name for m in unseen_io_modules(job)]
    if not mods:
        return ""
    names = " and ".join([", ".join(mods[:-1]), mods[-1]] if len(mods) > 1 else mods)
    return f"the I/O in Darshan's {names} records"
