"""The words of LOAD-COMPUTE-IMBALANCE (compute_load.py)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.commands import run_command
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, Subject
from pario.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.diagnosis.compute_load import ComputeImbalance
    from pario.diagnosis.facts import Facts
    from pario.trace.compute import ComputePhase

#: the log named in the command that records a trace
TRACE_LOG = "traced.pario"


def _phase_text(p: ComputePhase) -> str:
    where = (f"before {p.closing} #{p.index + 1}" if p.closing.startswith("MPI_")
             else f"after the last collective on MPI_COMM_WORLD, until {p.closing}")
    return (f"{where} (t = {max(p.start, 0.0):.2f} to {p.end:.2f} s): rank {p.slowest} computes "
            f"{fmt.seconds(p.max_compute)}, the average rank {fmt.seconds(p.mean_compute)}")


def _rank_subjects(facts: Facts, ranks: tuple[int, ...], approx: bool) -> list[Subject]:
    t = facts.times
    at = {int(r): i for i, r in enumerate(t.ranks)}
    useful = t.useful
    mpi = t.mpi if t.mpi is not None else useful * 0.0
    return [
        Subject(
            "rank",
            f"rank {r}",
            (
                Metric("compute_time", "computation", float(useful[at[r]]), "s", approximate=approx),
                Metric("mpi_time", "MPI", float(mpi[at[r]]), "s"),
                Metric("io_time", "I/O", float(t.io[at[r]]), "s", approximate=approx),
            ),
        )
        for r in ranks
        if r in at
    ]


def compute_imbalance(hit: ComputeImbalance, facts: Facts, cfg: RuleConfig) -> Words:
    T = facts.runtime
    mx, mean, lost, approx = hit.max_compute, hit.mean_compute, hit.time_lost or 0.0, hit.approx
    slowest = hit.ranks[0]
    lb = mean / mx
    others = hit.others_mpi if hit.others_mpi is not None and math.isfinite(hit.others_mpi) else None
    wait = (f"; the other ranks spend {fmt.seconds(others)} on average in MPI collectives and messages, "
            "waiting for it" if others is not None else "")
    statement = (
        f"Computation load balance is {lb:.2f} (mean/max of per-rank computation, POP's load balance): "
        f"rank {slowest} computes {fmt.seconds(mx)}, the average rank {fmt.seconds(mean)}{wait}. The run "
        f"loses {fmt.seconds(lost)} ({fmt.pct(lost / T)} of it) to the imbalance."
    )
    phases = hit.phases
    notes: list[str] = []
    if phases is not None and phases.top:
        top = phases.top[0]
        statement += f" It arises mostly {_phase_text(top)}."
        notes += [f"Phase {_phase_text(p)}; others wait {fmt.seconds(p.lost)}." for p in phases.top]
        notes.append(
            f"The {fmt.count(phases.count)} phases are cut by the collectives every rank makes on "
            f"MPI_COMM_WORLD; the imbalance of each (its max - mean) adds up to {fmt.seconds(phases.lost)}."
        )
    if facts.times.mpi_note:
        notes.append(facts.times.mpi_note)
    if approx:
        notes.append(
            "Per-rank I/O times of shared files are estimated, so per-rank computation (wall - I/O - MPI) "
            "is too."
        )
    evidence = [
        Metric("load_balance", "computation load balance mean/max", lb, "", approximate=approx),
        Metric("max_compute", "slowest rank's computation", mx, "s", approximate=approx),
        Metric("mean_compute", "mean computation per rank", mean, "s", approximate=approx),
        Metric("min_compute", "least computation of a rank", hit.min_compute, "s", approximate=approx),
        Metric("time_lost", "time lost: max - mean", lost, "s", approximate=approx),
    ]
    if others is not None:
        evidence.append(Metric("others_mpi", "other ranks' mean time in MPI collectives and messages",
                               others, "s"))
    if phases is not None:
        evidence.append(
            Metric("phases", "phases between collectives on MPI_COMM_WORLD", phases.count, "count")
        )
    recs = [
        Recommendation(
            "code",
            (
                f"Balance the work between ranks: give {fmt.ranks(hit.heavy)} a smaller share of the domain "
                "or of the tasks (or hand out work dynamically), so that the others no longer wait."
            ),
        )
    ]
    if not hit.traced:
        recs.append(
            Recommendation(
                "investigate",
                "Record a trace of the MPI calls to see in which phases the imbalance arises:",
                run_command(facts, f"--trace --log {TRACE_LOG}"),
            )
        )
    return Words(
        statement,
        evidence,
        recs,
        time_basis="exact: max - mean of per-rank computation, wall - I/O - MPI (what balancing would save)"
        + (" (per-rank values estimated)" if approx else ""),
        subjects=_rank_subjects(facts, hit.ranks, approx),
        subjects_total=hit.ranks_total,
        notes=notes,
    )
