"""The words of the activity rules (activity.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, Subject
from pario.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.diagnosis.activity import Bursts, Staggered
    from pario.diagnosis.facts import Facts

#: What a heat map can and cannot tell, said once per finding.
RESOLUTION = ("A heat map spreads each call's bytes over the time bins it spans; a rank is in I/O in a "
              "bin where it moved at least activity_min_bin_share of its busiest bin's bytes.")


def _span(start: float, end: float) -> str:
    return f"{fmt.seconds(start)} to {fmt.seconds(end)}"


def bursts(hit: Bursts, facts: Facts, cfg: RuleConfig) -> Words:
    n = len(hit.bursts)
    first = hit.bursts[0]
    statement = (
        f"{fmt.pct(hit.bytes_share)} of the bytes move in {n} burst{'s' if n != 1 else ''} covering "
        f"{fmt.pct(hit.time_share)} of the run (the largest from {_span(first.start, first.end)}, "
        f"{fmt.nbytes(first.nbytes)}), with on average {fmt.pct(hit.concurrency)} of the {hit.io_ranks} "
        f"ranks doing I/O in I/O at once: they contend for the file system at {fmt.rate(hit.burst_rate)} "
        f"during the bursts, while over the whole run it moves {fmt.rate(hit.run_rate)}. The run spends "
        f"{fmt.pct(hit.io_share)} of its time in I/O; spreading the bursts over the time between them, or "
        "overlapping them with computation, hides part of it."
    )
    evidence = [
        Metric("bursts", "bursts (runs of consecutive burst bins)", n, "count"),
        Metric("time_share", "share of the run's time bins in bursts", hit.time_share, "share"),
        Metric("bytes_share", "share of the bytes moved in bursts", hit.bytes_share, "share"),
        Metric("concurrency", "ranks in I/O at once in the bursts (share of the ranks doing I/O, by bytes)",
               hit.concurrency, "share"),
        Metric("io_ranks", "ranks doing I/O", hit.io_ranks, "count"),
        Metric("burst_rate", "bytes per second during the bursts", hit.burst_rate, "B/s"),
        Metric("run_rate", "bytes per second over the run", hit.run_rate, "B/s"),
        Metric("io_share", "mean I/O time per rank / run time", hit.io_share, "share"),
        Metric("bin_width", "heat-map bin width", hit.bin_width, "s"),
    ]
    evidence += [Metric(f"burst_{i}", f"burst {i}",
                        f"{_span(b.start, b.end)}: {fmt.nbytes(b.nbytes)}, {fmt.nranks(b.ranks)} in I/O",
                        "text")
                 for i, b in enumerate(hit.bursts[:cfg.top_subjects], 1)]
    recs = [
        Recommendation(
            "code",
            "Overlap the I/O with computation: write from a copy of the data with nonblocking MPI-IO "
            "(MPI_File_iwrite_at_all) or a dedicated I/O thread, or hand it to an asynchronous I/O layer "
            "(ADIOS2's BP engines, HDF5's asynchronous VOL), so that the burst does not stop the run.",
        ),
        Recommendation(
            "code",
            "Fewer writers at once: collective I/O through a few aggregators (cb_nodes) instead of every "
            "rank, or a node-local burst buffer drained in the background.",
        ),
    ]
    return Words(statement, evidence, recs,
                 time_basis="not estimated: the heat map shows when the bytes moved, not what the contention "
                 "cost", notes=(RESOLUTION,))


def staggered(hit: Staggered, facts: Facts, cfg: RuleConfig) -> Words:
    lost = hit.time_lost or 0.0
    T = facts.runtime
    statement = (
        f"The ranks doing I/O take turns: on average {fmt.pct(hit.concurrency)} of the {hit.io_ranks} ranks "
        f"doing I/O are in I/O at once, and the I/O phase lasts {fmt.seconds(hit.phase)} where an average "
        f"rank spends {fmt.seconds(hit.mean_busy)} in I/O. Each rank is idle in I/O while the others do "
        f"theirs: up to {fmt.seconds(lost)} ({fmt.pct(lost / T) if T > 0 else '-'} of the run) if it waits "
        "for them."
    )
    evidence = [
        Metric("phase", "I/O phase (time bins with any rank in I/O)", hit.phase, "s"),
        Metric("mean_busy", "an average rank's own time in I/O (its busy bins)", hit.mean_busy, "s"),
        Metric("ratio", "I/O phase / an average rank's time in I/O", hit.phase / hit.mean_busy, "x"),
        Metric("concurrency", "ranks in I/O at once (share of the ranks doing I/O, by bytes)",
               hit.concurrency, "share"),
        Metric("io_ranks", "ranks doing I/O", hit.io_ranks, "count"),
        Metric("bin_width", "heat-map bin width", hit.bin_width, "s"),
    ]
    if hit.mpi_mean is not None:
        evidence.append(Metric("mpi_mean", "mean MPI time per rank", hit.mpi_mean, "s"))
    subjects = [
        Subject("rank", f"rank {t.rank}", (
            Metric("first", "first in I/O at", t.first, "s"),
            Metric("last", "last in I/O until", t.last, "s"),
            Metric("busy", "time in I/O (bins)", t.busy, "s"),
            Metric("bytes", "bytes", t.nbytes, "B"),
        ))
        for t in hit.ranks[:cfg.top_subjects]
    ]
    recs = [
        Recommendation(
            "code",
            "Let the ranks do their I/O at the same time: remove the token, lock or rank loop that orders "
            "them (for one shared file, MPI_File_write_at_all from every rank at once; for a file per rank, "
            "open and write them all in the same phase).",
        ),
        Recommendation(
            "investigate",
            "If the order is the file system's (a lock on a shared file or directory), see which files the "
            "ranks share: pario report lists them, and a DXT trace (DXT_ENABLE_IO_TRACE=1) shows every call.",
        ),
    ]
    basis = ("upper bound: the I/O phase minus an average rank's own time in I/O, lost where the ranks "
             "wait for each other's turn")
    return Words(statement, evidence, recs, time_basis=basis, subjects=subjects,
                 subjects_total=len(hit.ranks), notes=(RESOLUTION,))
