"""Computation load imbalance: POP's load balance as a finding (docs/diagnosis.md, "Load").

Per rank, useful computation U = wall - I/O - MPI (:mod:`pario.analysis.times`), from a pario
log or a Darshan log with APMPI.  The ranks that compute less wait in MPI for the one that
computes most: max(U) - mean(U) is the time the run loses to it, what balancing the work would
save.  A pario trace also says in which phases (between collectives on MPI_COMM_WORLD) it arises.
Detector only: the words are in compute_load_words.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from pario.diagnosis import compute_load_words as words
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.load import FAMILY, idle_mpi
from pario.diagnosis.registry import rule
from pario.trace.compute import ComputePhases, compute_phases


@record
class ComputeImbalance(Hit):
    max_compute: float = 0.0  # the slowest rank's computation (s)
    mean_compute: float = 0.0
    min_compute: float = 0.0
    ranks: tuple[int, ...] = ()  # the ranks that compute most, most first (top_subjects of them)
    heavy: tuple[int, ...] = ()  # those of them nearer the maximum than the mean: the ones to lighten
    ranks_total: int = 0
    others_mpi: float | None = None  # the other ranks' mean time in MPI collectives and messages
    phases: ComputePhases | None = None  # from a pario trace (None: no trace, or phases not told)
    traced: bool = False  # the log holds a trace of the MPI calls
    approx: bool = False  # per-rank I/O (so computation) is partly estimated


@rule(
    "LOAD-COMPUTE-IMBALANCE",
    title="Computation imbalanced across ranks: the others wait in MPI",
    family=FAMILY,
    config=("load_min_lost_share", "compute_min_lost_seconds"),
    words=words.compute_imbalance,
    time_class="compute",
)
def compute_imbalance(facts: Facts, cfg: RuleConfig) -> Iterator[ComputeImbalance]:
    """Some ranks compute longer than the others, which wait for them in MPI calls."""
    t = facts.times
    if t.mpi is None or t.nranks < 2 or facts.runtime <= 0:
        return
    useful = t.useful
    mean, mx = float(useful.mean()), float(useful.max())
    lost = mx - mean
    if lost < max(cfg.load_min_lost_share * facts.runtime, cfg.compute_min_lost_seconds, 1e-9):
        return
    approx = not t.exact_ranks("io")
    if approx and lost <= float(t.io.max()):
        return  # per-rank I/O is estimated (shared records): an error in it could make the imbalance
    order = np.argsort(-useful, kind="stable")
    trace = facts.profile.trace
    traced = trace is not None and trace.has_mpi
    phases = compute_phases(trace, max(cfg.top_subjects, 1)) if trace is not None and traced else None
    if phases is not None:  # the phases that hold a tenth of the imbalance or more
        phases = replace(phases, top=tuple(p for p in phases.top if p.lost >= 0.1 * phases.lost))
    labels = np.asarray(t.ranks, dtype=np.int64)
    top = order[: max(cfg.top_subjects, 1)]
    heavy = top[useful[top] >= mean + 0.5 * lost]
    yield ComputeImbalance(
        time_lost=lost, max_compute=mx, mean_compute=mean, min_compute=float(useful.min()),
        ranks=tuple(int(r) for r in labels[top]), heavy=tuple(int(r) for r in labels[heavy]),
        ranks_total=t.nranks,
        others_mpi=idle_mpi(facts, [int(r) for r in labels[order[1:]]]), phases=phases, traced=traced,
        approx=approx,
    )
