"""When the ranks of a traced run were in I/O: the metrics a trace gives without MPI events.

Only the I/O calls are needed (a Darshan log's DXT modules hold nothing else), so these work on
both kinds of trace (docs/metrics.md, "I/O over time").  From the outermost I/O calls of the
ranks (reads and writes; a pario trace's metadata calls too):

* **I/O span**: from the first call's start to the last call's end;
* **I/O busy time**: the time during which at least one rank is in an I/O call (the union of
  the calls' intervals over all ranks), and its share of the run time T;
* **mean concurrency**: the ranks' summed I/O time / the busy time (how many ranks are in I/O
  on average while any is); **peak concurrency**: the most calls in flight at once;
* **I/O phases**: stretches of busy time separated by idle gaps of at least ``gap`` seconds;
  per phase its ranks, its I/O time and bytes, and each rank's finish (its last call's end).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pario.trace.format import Kind
from pario.trace.model import Trace

#: Idle gap, as a share of the run time, that separates two I/O phases by default.
PHASE_GAP_SHARE = 0.01


@dataclass(frozen=True)
class IOCalls:
    """The outermost I/O calls of a trace as columns, sorted by start."""

    rank: np.ndarray  # int64
    start: np.ndarray  # float64, job time base
    end: np.ndarray  # float64
    nbytes: np.ndarray  # int64
    file: np.ndarray  # uint64
    kind: np.ndarray  # uint16

    def __len__(self) -> int:
        return len(self.rank)

    def take(self, index: np.ndarray) -> IOCalls:
        return IOCalls(self.rank[index], self.start[index], self.end[index], self.nbytes[index],
                       self.file[index], self.kind[index])


@dataclass(frozen=True)
class Phase:
    """One stretch of I/O between idle gaps."""

    start: float
    end: float
    #: the ranks in the phase, and each one's finish (its last call's end) and I/O time in it
    ranks: np.ndarray  # int64, sorted
    finish: np.ndarray  # float64
    io_time: np.ndarray  # float64
    nbytes: int
    calls: int

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class IOActivity:
    """The I/O metrics of a trace (docs/metrics.md, "I/O over time"); ``calls == 0``: no I/O."""

    calls: int
    ranks: int  # ranks with at least one I/O call
    first: float
    last: float
    busy: float
    io_time: float  # summed over ranks
    peak: int
    runtime: float
    phases: tuple[Phase, ...]
    gap: float

    @property
    def span(self) -> float:
        return self.last - self.first

    @property
    def busy_share(self) -> float | None:
        return self.busy / self.runtime if self.runtime > 0 else None

    @property
    def mean_concurrency(self) -> float | None:
        return self.io_time / self.busy if self.busy > 0 else None


def io_calls(trace: Trace, keep_file: Callable[[np.ndarray], np.ndarray] | None = None) -> IOCalls:
    """The outermost I/O calls of ``trace`` (``keep_file(ids)``: which files to keep), by start."""
    flat = trace.flat
    ev = flat.events
    io = (ev["kind"] >= Kind.IO_READ) & (ev["kind"] <= Kind.IO_META)
    if keep_file is not None and io.any():
        io &= keep_file(ev["file"])
    idx = np.flatnonzero(io)
    calls = IOCalls(flat.rank[idx], flat.t0[idx], flat.t1[idx], ev["bytes"][idx].astype(np.int64),
                    ev["file"][idx], ev["kind"][idx])
    return calls.take(np.argsort(calls.start, kind="stable"))


def runtime_of(trace: Trace) -> float:
    """The traced run time: the latest rank end, from the job's origin (the earliest rank start)."""
    if not trace.ranks:
        return 0.0
    return max(r.end for r in trace.ranks) - min(r.start for r in trace.ranks)


def io_activity(trace: Trace, keep_file: Callable[[np.ndarray], np.ndarray] | None = None,
                gap: float | None = None, calls: IOCalls | None = None) -> IOActivity:
    """The I/O metrics of ``trace``; phases split at idle gaps of ``gap`` seconds (default:
    :data:`PHASE_GAP_SHARE` of the run time); ``calls``: its :func:`io_calls`, if at hand."""
    runtime = runtime_of(trace)
    if gap is None:
        gap = PHASE_GAP_SHARE * runtime
    if calls is None:
        calls = io_calls(trace, keep_file)
    if not len(calls):
        return IOActivity(0, 0, 0.0, 0.0, 0.0, 0.0, 0, runtime, (), gap)
    start, end = calls.start, np.maximum(calls.end, calls.start)
    reach = np.maximum.accumulate(end)
    # a new stretch of busy time starts where a call starts after every earlier call ended
    new = np.empty(len(calls), dtype=bool)
    new[0] = True
    new[1:] = start[1:] > reach[:-1]
    first_of = np.flatnonzero(new)
    ends = reach[np.concatenate((first_of[1:] - 1, [len(calls) - 1]))]
    busy = float(np.sum(ends - start[first_of]))
    # phases: busy stretches whose idle gaps are shorter than ``gap`` are one phase
    split = np.empty(len(calls), dtype=bool)
    split[0] = True
    split[1:] = start[1:] - reach[:-1] >= gap if gap > 0 else new[1:]
    bounds = np.concatenate((np.flatnonzero(split), [len(calls)]))
    phases = tuple(_phase(calls, end, int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    # peak concurrency: +1 at each start, -1 at each end (ends first at equal times)
    times = np.concatenate((start, end))
    steps = np.concatenate((np.ones(len(calls), np.int64), -np.ones(len(calls), np.int64)))
    order = np.lexsort((steps, times))
    peak = int(np.max(np.cumsum(steps[order])))
    return IOActivity(calls=len(calls), ranks=len(np.unique(calls.rank)), first=float(start[0]),
                      last=float(reach[-1]), busy=busy, io_time=float(np.sum(end - start)), peak=peak,
                      runtime=runtime, phases=phases, gap=gap)


def _phase(calls: IOCalls, end: np.ndarray, a: int, b: int) -> Phase:
    rank = calls.rank[a:b]
    ranks, inv = np.unique(rank, return_inverse=True)
    finish = np.full(len(ranks), -np.inf)
    np.maximum.at(finish, inv, end[a:b])
    io_time = np.bincount(inv, weights=end[a:b] - calls.start[a:b], minlength=len(ranks))
    return Phase(start=float(calls.start[a]), end=float(end[a:b].max()), ranks=ranks, finish=finish,
                 io_time=io_time, nbytes=int(calls.nbytes[a:b].sum()), calls=b - a)
