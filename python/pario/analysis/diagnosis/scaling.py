"""Rules across several runs of one application: write contention, I/O time outgrowing the data.

Runs are compared smallest to largest rank count.  Each run is summarised
by :func:`run_io`: writers (ranks that wrote), bytes, per-process write rate
(bytes written / write time summed over ranks, docs/metrics.md) and the
slowest rank's I/O time (the I/O part of the wall-clock time).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

import pario.analysis.diagnosis._fmt as fmt
from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.diagnosis.facts import Facts
from pario.analysis.diagnosis.findings import Finding, Metric, Recommendation, Subject
from pario.analysis.diagnosis.registry import finding, rule
from pario.analysis.rankio import rank_io

FAMILY = "scaling"


@dataclass(frozen=True)
class RunIO:
    label: str
    nprocs: int
    runtime: float
    writers: int
    bytes_written: float
    bytes: float
    write_time_sum: float
    write_time_max: float
    io_time_max: float
    exe: str

    @property
    def write_rate(self) -> float:
        """Per-process write rate: bytes written / write time summed over ranks."""
        return self.bytes_written / self.write_time_sum if self.write_time_sum > 0 else float("nan")


def run_io(facts: Facts) -> RunIO:
    n = facts.nprocs
    written = np.zeros(n)
    moved = np.zeros(n)
    for layer, frame in facts.outermost().items():
        if len(frame):
            t = rank_io(frame, n, facts.members(layer)).table
            written += np.asarray(t["bytes_written"], dtype=np.float64)
            moved += np.asarray(t["bytes"], dtype=np.float64)
    t = facts.times
    return RunIO(
        facts.label,
        n,
        facts.runtime,
        int(np.count_nonzero(written > 0)),
        float(written.sum()),
        float(moved.sum()),
        float(t.io_write.sum()),
        float(t.io_write.max(initial=0.0)),
        float(t.io.max(initial=0.0)),
        facts.profile.job.exe,
    )


def _runs(facts_list: Sequence[Facts]) -> list[RunIO]:
    runs = sorted((run_io(f) for f in facts_list), key=lambda r: (r.nprocs, r.runtime))
    return runs if len({r.nprocs for r in runs}) >= 2 else []


def _notes(runs: list[RunIO]) -> list[str]:
    exes = {r.exe.rsplit("/", 1)[-1] for r in runs if r.exe}
    if len(exes) > 1:
        return [
            "The logs come from different executables (" + ", ".join(sorted(exes)) + "): the comparison "
            "assumes they are runs of one application."
        ]
    return []


def _subjects(runs: list[RunIO]) -> list[Subject]:
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


@rule(
    "SCALE-CONTENTION",
    title="Writers contend: the per-process write rate falls as more processes write",
    family=FAMILY,
    across_runs=True,
    config=("contention_max_rate_ratio", "contention_min_writer_growth", "min_time_lost_share"),
)
def contention(facts_list: Sequence[Facts], cfg: RuleConfig) -> Iterator[Finding]:
    """With more writers, each writes slower: they compete for the same storage."""
    runs = [r for r in _runs(facts_list) if r.writers > 0 and r.write_time_sum > 0]
    if len(runs) < 2:
        return
    small = min(runs, key=lambda r: r.writers)
    large = max(runs, key=lambda r: r.writers)
    if large.writers < cfg.contention_min_writer_growth * small.writers:
        return
    ratio = large.write_rate / small.write_rate
    if not ratio <= cfg.contention_max_rate_ratio:
        return
    lost = large.write_time_max * (1.0 - ratio)
    if lost < cfg.min_time_lost_share * large.runtime:
        return
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
    best = max(runs, key=lambda r: r.bytes_written / r.write_time_max if r.write_time_max > 0 else 0.0)
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
    yield finding(
        "SCALE-CONTENTION",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=large.runtime,
        time_lost=lost,
        subjects=_subjects(runs),
        subjects_total=len(runs),
        notes=_notes(runs),
        time_basis=(
            "estimate: in the largest run, the slowest rank's write time x (1 - rate ratio): the time saved "
            "if each process wrote at the smaller run's rate"
        ),
    )


@rule(
    "SCALE-IO-GROWTH",
    title="I/O time grows faster than the data",
    family=FAMILY,
    across_runs=True,
    config=("growth_min_excess", "min_time_lost_share"),
)
def io_growth(facts_list: Sequence[Facts], cfg: RuleConfig) -> Iterator[Finding]:
    """From the smallest to the largest run, the I/O time grows by more than the bytes moved."""
    runs = [r for r in _runs(facts_list) if r.bytes > 0 and r.io_time_max > 0]
    if len(runs) < 2:
        return
    small, large = runs[0], runs[-1]
    if large.nprocs == small.nprocs:
        return
    g_bytes = large.bytes / small.bytes
    g_time = large.io_time_max / small.io_time_max
    excess = g_time / g_bytes
    if excess < cfg.growth_min_excess:
        return
    lost = large.io_time_max - small.io_time_max * g_bytes
    if lost < cfg.min_time_lost_share * large.runtime:
        return
    statement = (
        f"From {fmt.nranks(small.nprocs)} to {fmt.nranks(large.nprocs)} the data grows {fmt.times(g_bytes)} "
        "but the I/O time "
        f"(slowest rank) grows {fmt.times(g_time)}, from {fmt.seconds(small.io_time_max)} to "
        f"{fmt.seconds(large.io_time_max)}: I/O does not scale with the job."
    )
    evidence = [
        Metric("bytes_growth", "growth of the bytes moved", g_bytes, "x"),
        Metric("time_growth", "growth of the slowest rank's I/O time", g_time, "x"),
        Metric("excess", "time growth / data growth", excess, "x"),
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
    yield finding(
        "SCALE-IO-GROWTH",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=large.runtime,
        time_lost=lost,
        subjects=_subjects(runs),
        subjects_total=len(runs),
        notes=_notes(runs),
        time_basis=(
            "estimate: the largest run's I/O time minus the smallest run's scaled by the data growth"
        ),
    )
