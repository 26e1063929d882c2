"""MPI time per rank from Darshan's APMPI module (docs/metrics.md, "MPI time from APMPI").

APMPI (Darshan's "autoperf" MPI module, built with ``--enable-apmpi-mod``) wraps MPI calls
through MPI's profiling interface and keeps, per rank and per call type, the calls, the bytes
and the time inside them; with its sync mode on (``APMPI_SYNC=1`` at run time) it also puts
a barrier before every collective and keeps the time in it apart, the sync time.  Its total
per rank, ``MPI_TOTAL_COMM_TIME``, is every call type's time plus the sync time.

Here the call types are summed into the rank table's classes as pario's own runtime classes
its calls (src/runtime/mpi.c): collectives, blocking and nonblocking, with the sync time, in
``mpi_coll``; sends, receives, probes, tests and waits in ``mpi_p2p``; one-sided calls (puts,
gets, accumulates, window synchronisation) in ``mpi_other``; their calls and bytes alike
(one-sided bytes with point-to-point's, as pario counts them).  So
``mpi_coll + mpi_p2p + mpi_other`` is APMPI's own ``MPI_TOTAL_COMM_TIME`` on every rank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from pario import units
from pario.log.darshan_lib import ApmpiRecords

#: Collective operations (APMPI's names without ``MPI_``); their nonblocking forms start with I.
COLLECTIVE_OPS: frozenset[str] = frozenset({
    "BARRIER", "BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV", "ALLGATHER", "ALLGATHERV",
    "ALLTOALL", "ALLTOALLV", "ALLTOALLW", "REDUCE", "ALLREDUCE", "REDUCE_SCATTER", "SCAN", "EXSCAN",
})
#: Point-to-point operations, with the probes, tests and waits (pario charges a wait whose
#: request it did not see start to point-to-point too).
P2P_OPS: frozenset[str] = frozenset({
    "SEND", "SSEND", "RSEND", "BSEND", "ISEND", "ISSEND", "IRSEND", "IBSEND", "RECV", "IRECV",
    "SENDRECV", "SENDRECV_REPLACE", "PROBE", "IPROBE", "TEST", "TESTALL", "TESTANY", "TESTSOME",
    "WAIT", "WAITALL", "WAITANY", "WAITSOME",
})
_COUNTER = re.compile(r"^MPI_(.+?)_(CALL_COUNT|TOTAL_BYTES|MSG_SIZE_AGG_.+|TOTAL_TIME|MIN_TIME|MAX_TIME"
                      r"|TOTAL_SYNC_TIME)$")
#: The rank-table columns filled from APMPI.
COLUMNS: tuple[str, ...] = ("mpi_coll", "mpi_p2p", "mpi_other", "mpi_coll_bytes", "mpi_p2p_bytes",
                            "mpi_coll_calls", "mpi_p2p_calls", "mpi_other_calls")


def op_class(op: str) -> str:
    """'coll', 'p2p' or 'other' for an APMPI operation name (``ALLREDUCE``, ``ISEND``, ``PUT``)."""
    if op in COLLECTIVE_OPS or (op.startswith("I") and op[1:] in COLLECTIVE_OPS):
        return "coll"
    return "p2p" if op in P2P_OPS else "other"


def _split(name: str) -> tuple[str, str] | None:
    m = _COUNTER.match(name)
    return (m.group(1), m.group(2)) if m else None


@dataclass(frozen=True)
class ApmpiTime:
    """What APMPI gives the rank table, and what the report says about it."""

    #: rank-table column -> per-rank values (row i: rank i); empty when ``reason`` is set
    columns: dict[str, np.ndarray]
    #: APMPI's own total per rank, MPI_TOTAL_COMM_TIME (the columns' times add up to it)
    total: np.ndarray
    sync: np.ndarray  # MPI_TOTAL_COMM_SYNC_TIME per rank
    sync_flag: bool
    #: the call types with at least one call, by class: ((class, (op, ...)), ...)
    ops: tuple[tuple[str, tuple[str, ...]], ...]
    #: why APMPI cannot give every rank's MPI time ("" when it does)
    reason: str = ""


def apmpi_time(rec: ApmpiRecords, nprocs: int) -> ApmpiTime:
    """The rank table's MPI columns from APMPI's records; ``reason`` says why not, when some rank
    has no record (or several)."""
    ranks = np.asarray(rec.ranks, dtype=np.int64)
    empty = np.zeros(0)
    if len(ranks) != nprocs or not np.array_equal(np.sort(ranks), np.arange(nprocs)):
        reason = (f"Darshan's APMPI module holds {len(ranks)} records for {nprocs} ranks, not one per rank: "
                  "its MPI time is not used")
        return ApmpiTime({}, empty, empty, rec.sync_flag, (), reason)
    order = np.argsort(ranks, kind="stable")  # row i: rank i
    counters = np.asarray(rec.counters, dtype=np.float64)[order]
    times = np.asarray(rec.times, dtype=np.float64)[order]
    sync = np.asarray(rec.sync, dtype=np.float64)[order]
    columns = {c: np.zeros(nprocs) for c in COLUMNS}
    used: dict[str, list[str]] = {"coll": [], "p2p": [], "other": []}
    for i, name in enumerate(rec.counter_names):
        parts = _split(name)
        if parts is None:
            continue
        op, what = parts
        cls = op_class(op)
        if what == "CALL_COUNT":
            columns[f"mpi_{cls}_calls"] += counters[:, i]
            if counters[:, i].any():
                used[cls].append(op)
        elif what == "TOTAL_BYTES":
            columns["mpi_coll_bytes" if cls == "coll" else "mpi_p2p_bytes"] += counters[:, i]
    for i, name in enumerate(rec.time_names):
        parts = _split(name)
        if parts is not None and parts[1] == "TOTAL_TIME":
            columns[f"mpi_{op_class(parts[0])}"] += times[:, i]
    for i, name in enumerate(rec.sync_names):  # only collectives have a sync time
        parts = _split(name)
        if parts is not None and parts[1] == "TOTAL_SYNC_TIME":
            columns[f"mpi_{op_class(parts[0])}"] += sync[:, i]
    totals = np.asarray(rec.totals, dtype=np.float64)[order]
    names = list(rec.total_names)
    total = totals[:, names.index("MPI_TOTAL_COMM_TIME")] if "MPI_TOTAL_COMM_TIME" in names \
        else columns["mpi_coll"] + columns["mpi_p2p"] + columns["mpi_other"]
    synced = totals[:, names.index("MPI_TOTAL_COMM_SYNC_TIME")] if "MPI_TOTAL_COMM_SYNC_TIME" in names \
        else sync.sum(axis=1)
    ops = tuple((cls, tuple(dict.fromkeys(found))) for cls, found in used.items() if found)
    times_ok = all(np.isfinite(columns[c]).all() and (columns[c] >= 0).all() for c in COLUMNS)
    if not (times_ok and np.isfinite(total).all() and np.isfinite(synced).all()):
        reason = ("Darshan's APMPI module holds times, calls or bytes that are negative or not finite: its "
                  "MPI time is not used")
        return ApmpiTime({}, empty, empty, rec.sync_flag, (), reason)
    return ApmpiTime(columns, total, synced, rec.sync_flag, ops)


_CLASS_WORDS = {"coll": "collectives", "p2p": "point-to-point", "other": "one-sided"}


def coverage(t: ApmpiTime) -> str:
    """The sentence that says where M_p comes from and what APMPI does and does not time."""
    if t.reason:
        return t.reason + "."
    seen = "; ".join(f"{_CLASS_WORDS[cls]}: " + ", ".join(f"MPI_{op.title()}" for op in ops)
                     for cls, ops in t.ops) or "none"
    text = ("MPI time M_p from Darshan's APMPI module: per rank, the time inside the point-to-point, "
            "collective (blocking and nonblocking) and one-sided MPI calls it wraps (called here: "
            f"{seen}); mean {units.seconds(float(t.total.mean()))} per rank, "
            f"longest {units.seconds(float(t.total.max()))}. APMPI wraps no MPI_File_* call, so the time of "
            "MPI-IO calls is I/O only (Darshan's MPI-IO records), unless the MPI library makes the "
            "communication inside them through the calls APMPI wraps (docs/metrics.md); it does not time "
            "MPI_Init, MPI_Finalize or communicator and datatype calls, whose time counts as computation.")
    if t.sync_flag:
        text += (" Its sync mode was on: a barrier before each collective measured the wait for the "
                 f"other ranks apart (mean {units.seconds(float(t.sync.mean()))} per rank); that wait is "
                 "counted in the collectives' time, as APMPI's total counts it.")
    else:
        text += (" Its sync mode was off: the wait for the other ranks inside a collective is part of "
                 "the collective's time, not measured apart.")
    return text


@dataclass(frozen=True)
class Overlap:
    """MPI time that APMPI and the I/O records both counted, taken off the MPI classes."""

    #: per rank, seconds taken off the MPI time
    removed: np.ndarray

    @property
    def text(self) -> str:
        """The sentence the log's mpi_time_source gains ('' when nothing was removed)."""
        hit = self.removed > 0
        if not hit.any():
            return ""
        return (f" On {int(hit.sum()):,} of {len(hit):,} ranks APMPI's MPI time and the I/O time together "
                "exceeded the run: MPI calls made inside MPI-IO calls (the MPI library's two-phase exchange, "
                "through the calls APMPI wraps) were counted as MPI and again as I/O. The excess, "
                f"{units.seconds(float(self.removed.sum()))} in all and at most "
                f"{units.seconds(float(self.removed.max()))} on one rank, was taken off the MPI time (each "
                "class in proportion) and left in I/O, the outer call, so that each rank's computation, MPI "
                "and I/O add up to its run time at most; this is the least overlap the run shows, the MPI "
                "time inside MPI-IO can be more.")


def exclusive(columns: dict[str, np.ndarray], io: np.ndarray, wall: np.ndarray) -> tuple[
        dict[str, np.ndarray], Overlap]:
    """The MPI columns with the time they share with I/O removed per rank: where MPI + I/O exceeds
    the rank's wall time, the excess (at most the MPI time) comes off the three time classes in
    proportion; calls and bytes stay."""
    times = ("mpi_coll", "mpi_p2p", "mpi_other")
    mpi = sum((columns[c] for c in times), np.zeros(len(wall)))
    io = np.where(np.isnan(io), 0.0, io)
    removed = np.clip(mpi + io - wall, 0.0, mpi)
    keep = np.where(mpi > 0, (mpi - removed) / np.where(mpi > 0, mpi, 1.0), 1.0)
    out = dict(columns)
    for c in times:
        out[c] = columns[c] * keep
    return out, Overlap(removed)
