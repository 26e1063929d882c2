"""The in-memory model of a trace: per-rank events on one time base (docs/trace.md).

Readers (the pario log reader, hand-built test traces) produce a ``Trace``; the
replay, the metrics and the timeline consume it and never look at the log.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class Trace:
    """The traces of a job's ranks."""

    nprocs: int
    #: by rank; a rank without a trace is absent
    ranks: tuple[RankTrace, ...]
    #: file record id -> path (from the log's RANK blocks)
    files: dict[int, str] = field(default_factory=dict)

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
