"""Computation phases of a trace: the time each rank computes between collectives on
MPI_COMM_WORLD (docs/metrics.md, "Computation load balance").

A rank computes when it is in no traced call: the gaps between its outermost events, from
its origin (MPI_Init's exit) to the end of its timeline.  The collectives every rank makes on
MPI_COMM_WORLD cut the run into phases that all ranks share: phase k ends when a rank enters
the k-th such collective (the last phase ends with the timeline).  Where ranks compute for
different times in one phase, the faster ones wait in the collective that closes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pario.trace.format import COLLECTIVES, FLAG_CONT, Kind
from pario.trace.model import RankTrace, Trace


@dataclass(frozen=True)
class ComputePhase:
    """One phase: from the collective before it (or the start) to the one that closes it."""

    index: int  # 0: before the first collective on MPI_COMM_WORLD
    start: float  # the earliest rank's entry into the phase (job time base, s)
    end: float  # the latest rank's entry into the closing collective (or end of timeline)
    closing: str  # the call that closes it ("MPI_Allreduce"; "the end of the run" for the last)
    max_compute: float  # the slowest rank's computation in the phase (s)
    mean_compute: float
    slowest: int  # that rank

    @property
    def lost(self) -> float:
        """What the other ranks wait on average for the slowest: max - mean."""
        return self.max_compute - self.mean_compute


@dataclass(frozen=True)
class ComputePhases:
    """The phases of a run, the most imbalanced first (at most ``keep`` of them)."""

    count: int  # phases in the run
    lost: float  # the sum of every phase's max - mean
    top: tuple[ComputePhase, ...]


def call_name(kind: int) -> str:
    """The MPI call an event kind stands for: ``MPI_Allreduce``."""
    return "MPI_" + Kind(kind).name.capitalize()


def _is_world_collective(events: np.ndarray) -> np.ndarray:
    kinds = events["kind"].astype(np.int64)
    coll = np.isin(kinds, np.fromiter(COLLECTIVES, dtype=np.int64))
    return coll & (events["comm"] == 0) & ((events["flags"] & FLAG_CONT) == 0)


def _rank_compute(rt: RankTrace, cuts: np.ndarray) -> np.ndarray:
    """Computation of one rank per phase (len(cuts) + 1 phases), ``cuts``: its collectives' positions."""
    t0, t1 = rt.t0.astype(np.float64), rt.t1.astype(np.float64)
    if not len(t0):
        return np.array([max(rt.end - rt.start, 0.0)])
    busy = np.maximum.accumulate(t1)  # the end of the calls so far (parts of a call may overlap)
    gaps = np.empty(len(t0) + 1)
    gaps[0] = t0[0] - rt.start
    gaps[1:-1] = t0[1:] - busy[:-1]
    gaps[-1] = rt.end - busy[-1]
    # the gap before event i belongs to the phase of the collectives before i
    phase = np.searchsorted(cuts, np.arange(len(t0) + 1), side="left")
    return np.bincount(phase, weights=np.clip(gaps, 0.0, None), minlength=len(cuts) + 1)


def compute_phases(trace: Trace, keep: int = 3) -> ComputePhases | None:
    """The phases of ``trace`` and the ``keep`` most imbalanced, or None where they cannot be
    told: no MPI calls traced, ranks missing or with dropped events, or ranks that made
    different numbers of collectives on MPI_COMM_WORLD."""
    ranks = sorted(trace.ranks, key=lambda r: r.rank)
    if not (trace.has_mpi and ranks and len(ranks) == trace.nprocs) or any(r.dropped for r in ranks):
        return None
    cuts = [np.flatnonzero(_is_world_collective(r.events)) for r in ranks]
    m = len(cuts[0])
    if any(len(c) != m for c in cuts):
        return None
    total = np.zeros(m + 1)
    most = np.full(m + 1, -1.0)
    who = np.zeros(m + 1, dtype=np.int64)
    start = np.full(m + 1, np.inf)
    end = np.full(m + 1, -np.inf)
    for rt, cut in zip(ranks, cuts, strict=True):
        c = _rank_compute(rt, cut)
        total += c
        who = np.where(c > most, rt.rank, who)
        most = np.maximum(most, c)
        enter = np.concatenate(([rt.start], rt.t1[cut])) if m else np.array([rt.start])
        leave = np.concatenate((rt.t0[cut], [rt.end])) if m else np.array([rt.end])
        start = np.minimum(start, enter)
        end = np.maximum(end, leave)
    mean = total / len(ranks)
    lost = most - mean
    kinds = ranks[0].events["kind"][cuts[0]]
    order = np.argsort(-lost, kind="stable")[:keep]
    top = tuple(
        ComputePhase(int(k), float(start[k]), float(end[k]),
                     call_name(int(kinds[k])) if k < m else "the end of the run",
                     float(most[k]), float(mean[k]), int(who[k]))
        for k in order if lost[k] > 0
    )
    return ComputePhases(m + 1, float(lost.sum()), top)
