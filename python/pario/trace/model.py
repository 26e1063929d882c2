"""The in-memory model of a trace: per-rank events on one time base (docs/trace.md).

Readers (the pario log reader, hand-built test traces) produce a ``Trace``; the
replay, the metrics and the timeline consume it and never look at the log.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from pario.trace.format import EVENT_DTYPE


@dataclass(frozen=True)
class RankTrace:
    """One rank's events, in the order the rank made them."""

    rank: int
    #: the raw records (EVENT_DTYPE); ``t0``/``t1`` there are the rank's timer ticks
    events: np.ndarray
    #: entry / exit of each event in seconds on the job's time base (rank 0's clock,
    #: 0 at rank 0's origin): what every analysis uses
    t0: np.ndarray
    t1: np.ndarray
    #: world ranks of the members of communicator i (entry 0: MPI_COMM_WORLD)
    comms: tuple[np.ndarray, ...]
    #: the rank's origin (MPI_Init exit) and the end of its timeline (MPI_Finalize
    #: entered; the last event's exit if the rank has no FINALIZE event), job time base
    start: float
    end: float
    #: events not recorded because the trace reached its cap, and from when (local s)
    dropped: int = 0
    dropped_from: float | None = None
    #: calls made by other threads (counted, not recorded)
    untraced_events: int = 0
    #: nonblocking requests the runtime's table could not hold (completions with aux 0)
    untracked_requests: int = 0

    def __post_init__(self) -> None:
        if self.events.dtype != EVENT_DTYPE:
            raise ValueError("events must have pario.trace.format.EVENT_DTYPE")
        if not (len(self.events) == len(self.t0) == len(self.t1)):
            raise ValueError("events, t0 and t1 must have the same length")


#: Where a trace comes from: pario's runtime (every MPI and I/O call), or a Darshan log's DXT
#: modules (the POSIX and MPI-IO reads and writes only; docs/trace.md, "Darshan DXT traces").
SOURCE_PARIO = "pario"
SOURCE_DXT = "darshan-dxt"


@dataclass(frozen=True)
class Trace:
    """The traces of a job's ranks."""

    nprocs: int
    #: by rank; a rank without a trace is absent.  Only the outermost calls: a rank's events do
    #: not nest (a POSIX call made inside an MPI-IO call is in ``inner``, not here)
    ranks: tuple[RankTrace, ...]
    #: file record id -> path (from the log's RANK blocks, or Darshan's name records)
    files: dict[int, str] = field(default_factory=dict)
    #: SOURCE_PARIO or SOURCE_DXT
    source: str = SOURCE_PARIO
    #: by rank, the calls made inside the calls of ``ranks`` (DXT: the POSIX reads and writes inside
    #: an MPI-IO call of the same rank); pario's runtime records none
    inner: tuple[RankTrace, ...] = ()

    @property
    def has_mpi(self) -> bool:
        """Whether the MPI calls were traced (the gaps between events are then computation)."""
        return self.source == SOURCE_PARIO

    @functools.cached_property
    def flat(self) -> FlatEvents:
        """``ranks``' events as one set of columns (:func:`flat_events`), made once."""
        return flat_events(self.ranks)

    @functools.cached_property
    def flat_inner(self) -> FlatEvents:
        """``inner``'s events as one set of columns, made once."""
        return flat_events(self.inner)

    @property
    def nevents(self) -> int:
        return sum(len(r.events) for r in self.ranks)

    @property
    def dropped(self) -> int:
        return sum(r.dropped for r in self.ranks)

    @property
    def complete(self) -> bool:
        """Every rank traced and nothing dropped: a replay is meaningful."""
        return len(self.ranks) == self.nprocs and self.dropped == 0


@dataclass(frozen=True)
class FlatEvents:
    """The events of several ranks, one after the other in rank order, as one set of columns."""

    rank: np.ndarray  # int64, per event
    events: np.ndarray  # EVENT_DTYPE
    t0: np.ndarray  # float64, job time base
    t1: np.ndarray  # float64
    #: the ranks, in order, and where each one's events start (len(ranks) + 1 bounds)
    ranks: np.ndarray
    bounds: np.ndarray


def flat_events(traces: tuple[RankTrace, ...]) -> FlatEvents:
    """``traces`` (any order) as one set of columns, ranks in order: for whole-trace NumPy work
    instead of a loop over thousands of ranks."""
    rts = sorted(traces, key=lambda r: r.rank)
    counts = np.array([len(r.events) for r in rts], dtype=np.int64)
    ranks = np.array([r.rank for r in rts], dtype=np.int64)
    if not rts:
        return FlatEvents(np.zeros(0, np.int64), np.zeros(0, EVENT_DTYPE), np.zeros(0), np.zeros(0), ranks,
                          np.zeros(1, np.int64))
    return FlatEvents(rank=np.repeat(ranks, counts), events=np.concatenate([r.events for r in rts]),
                      t0=np.concatenate([r.t0 for r in rts]).astype(np.float64, copy=False),
                      t1=np.concatenate([r.t1 for r in rts]).astype(np.float64, copy=False),
                      ranks=ranks, bounds=np.concatenate(([0], np.cumsum(counts))))
