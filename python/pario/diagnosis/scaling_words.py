"""The words of the rules across runs (scaling.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.analysis.scaling import told_apart
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, Subject
from pario.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.diagnosis.facts import Facts
    from pario.diagnosis.scaling import Contention, IOGrowth, RunIO


def _notes(runs: Sequence[RunIO]) -> list[str]:
    exes = sorted({r.exe for r in runs if r.exe})
    if len(exes) > 1:
        return [
            "The logs come from different executables (" + ", ".join(told_apart(exes)) + "): the comparison "
            "assumes they are runs of one application."
        ]
    return []


def _subjects(runs: Sequence[RunIO]) -> list[Subject]:
    return [
        Subject(
            "run",
            r.label,
            (
                Metric("nprocs", "ranks", r.nprocs, "count"),
                Metric("writers", "ranks that write", r.writers, "count"),
                Metric("bytes_written", "bytes written", r.bytes_written, "B"),
                Metric("write_rate", "write rate per process", r.write_rate, "B/s"),
                Metric(
                    "aggregate_rate",
                    "aggregate write rate",
                    r.bytes_written / r.write_time_max if r.write_time_max > 0 else None,
                    "B/s",
                ),
                Metric("io_time_max", "slowest rank's I/O time", r.io_time_max, "s"),
            ),
        )
        for r in runs
    ]


def contention(hit: Contention, facts: Sequence[Facts], cfg: RuleConfig) -> Words:
    small, large, best, ratio = hit.small, hit.large, hit.best, hit.ratio
    agg_small = small.bytes_written / small.write_time_max if small.write_time_max > 0 else float("nan")
    agg_large = large.bytes_written / large.write_time_max if large.write_time_max > 0 else float("nan")
    statement = (
        f"Going from {small.writers} to {large.writers} writing processes, each process writes at "
        f"{fmt.rate(large.write_rate)} instead of {fmt.rate(small.write_rate)} ({fmt.pct(ratio)} of the "
        f"rate); the aggregate rate moves from {fmt.rate(agg_small)} to {fmt.rate(agg_large)}: the writers "
        "compete for the same storage."
    )
    evidence = [
        Metric("writers_small", f"writers in {small.label}", small.writers, "count"),
        Metric("writers_large", f"writers in {large.label}", large.writers, "count"),
        Metric("rate_small", "per-process write rate, fewer writers", small.write_rate, "B/s"),
        Metric("rate_large", "per-process write rate, more writers", large.write_rate, "B/s"),
        Metric("rate_ratio", "rate ratio (more / fewer writers)", ratio, "x"),
        Metric("aggregate_small", "aggregate write rate, fewer writers", agg_small, "B/s"),
        Metric("aggregate_large", "aggregate write rate, more writers", agg_large, "B/s"),
    ]
    recs = [
        Recommendation(
            "hint",
            (
                "Write through fewer processes: collective MPI-IO with a limited number of aggregators (the "
                f"best aggregate rate here was with {best.writers} writers)."
            ),
            f"cb_nodes {max(best.writers, 1)}",
        ),
        Recommendation(
            "code",
            (
                "Or let only a subset of ranks write (one per node, or one per group of ranks gathering "
                "their data first), instead of every rank at once."
            ),
        ),
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis=(
            "estimate: in the largest run, the slowest rank's write time x (1 - rate ratio): the time saved "
            "if each process wrote at the smaller run's rate"
        ),
        subjects=_subjects(hit.runs),
        subjects_total=len(hit.runs),
        notes=_notes(hit.runs),
    )


def io_growth(hit: IOGrowth, facts: Sequence[Facts], cfg: RuleConfig) -> Words:
    small, large, g_bytes, g_time = hit.small, hit.large, hit.bytes_growth, hit.time_growth
    statement = (
        f"From {fmt.nranks(small.nprocs)} to {fmt.nranks(large.nprocs)} the data grows {fmt.times(g_bytes)} "
        "but the I/O time "
        f"(slowest rank) grows {fmt.times(g_time)}, from {fmt.seconds(small.io_time_max)} to "
        f"{fmt.seconds(large.io_time_max)}: I/O does not scale with the job."
    )
    evidence = [
        Metric("bytes_growth", "growth of the bytes moved", g_bytes, "x"),
        Metric("time_growth", "growth of the slowest rank's I/O time", g_time, "x"),
        Metric("excess", "time growth / data growth", g_time / g_bytes, "x"),
        Metric("io_time_small", f"I/O time with {fmt.nranks(small.nprocs)}", small.io_time_max, "s"),
        Metric("io_time_large", f"I/O time with {fmt.nranks(large.nprocs)}", large.io_time_max, "s"),
    ]
    recs = [
        Recommendation(
            "investigate",
            (
                "Compare the findings of the largest run with those of the smallest: contention (more "
                "writers than the storage serves well), metadata load (files per process), imbalance or a "
                "single aggregator usually appear only at scale."
            ),
        ),
        Recommendation(
            "hint",
            "Keep the number of processes touching the file system bounded as the job grows (collective "
            "I/O with aggregators matched to the storage targets):",
            "cb_nodes <OSTs>",
        ),
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis=(
            "estimate: the largest run's I/O time minus the smallest run's scaled by the data growth"
        ),
        subjects=_subjects(hit.runs),
        subjects_total=len(hit.runs),
        notes=_notes(hit.runs),
    )
