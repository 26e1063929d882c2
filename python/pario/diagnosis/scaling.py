"""Rules across several runs of one application: write contention, I/O time outgrowing the data.

Runs are compared smallest to largest rank count.  Each run is summarised
by :func:`run_io`: writers (ranks that wrote), bytes, per-process write rate
(bytes written / write time summed over ranks, docs/metrics.md) and the
slowest rank's I/O time (the I/O part of the wall-clock time).  Detectors
only: the words are in scaling_words.py.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from pario.diagnosis import scaling_words as words
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.registry import rule
from pario.model.rankio import rank_io

FAMILY = "scaling"


@record
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


#: No run (a hit's default).
NO_RUN = RunIO("", 0, 0.0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, "")


def run_io(facts: Facts) -> RunIO:
    n = facts.nprocs
    written = np.zeros(n)
    moved = np.zeros(n)
    for layer, records in facts.outermost().items():
        if len(records):
            t = rank_io(records, n, facts.members(layer)).table
            written += np.asarray(t["bytes_written"], dtype=np.float64)
            moved += np.asarray(t["bytes"], dtype=np.float64)
    times = facts.times
    return RunIO(
        facts.label,
        n,
        facts.runtime,
        int(np.count_nonzero(written > 0)),
        float(written.sum()),
        float(moved.sum()),
        float(times.io_write.sum()),
        float(times.io_write.max(initial=0.0)),
        float(times.io.max(initial=0.0)),
        facts.profile.job.exe,
    )


def _runs(facts_list: Sequence[Facts]) -> list[RunIO]:
    runs = sorted((run_io(f) for f in facts_list), key=lambda r: (r.nprocs, r.runtime))
    return runs if len({r.nprocs for r in runs}) >= 2 else []


@record
class Contention(Hit):
    """``runtime``: the run time of the run with the most writers."""

    runs: tuple[RunIO, ...] = ()  # the runs compared, smallest rank count first
    small: RunIO = NO_RUN  # the run with the fewest writers
    large: RunIO = NO_RUN  # ... with the most
    best: RunIO = NO_RUN  # ... with the best aggregate write rate
    ratio: float = 0.0  # per-process write rate, the most writers / the fewest


@rule(
    "SCALE-CONTENTION",
    title="Writers contend: the per-process write rate falls as more processes write",
    family=FAMILY,
    across_runs=True,
    config=("contention_max_rate_ratio", "contention_min_writer_growth", "min_time_lost_share"),
    words=words.contention,
)
def contention(facts_list: Sequence[Facts], cfg: RuleConfig) -> Iterator[Contention]:
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
    best = max(runs, key=lambda r: r.bytes_written / r.write_time_max if r.write_time_max > 0 else 0.0)
    yield Contention(time_lost=lost, runtime=large.runtime, runs=tuple(runs), small=small, large=large,
                     best=best, ratio=ratio)


@record
class IOGrowth(Hit):
    """``runtime``: the run time of the largest run."""

    runs: tuple[RunIO, ...] = ()  # the runs compared, smallest rank count first
    small: RunIO = NO_RUN  # the smallest run
    large: RunIO = NO_RUN  # the largest
    bytes_growth: float = 0.0  # bytes moved, largest run / smallest
    time_growth: float = 0.0  # slowest rank's I/O time, largest run / smallest


@rule(
    "SCALE-IO-GROWTH",
    title="I/O time grows faster than the data",
    family=FAMILY,
    across_runs=True,
    config=("growth_min_excess", "min_time_lost_share"),
    words=words.io_growth,
)
def io_growth(facts_list: Sequence[Facts], cfg: RuleConfig) -> Iterator[IOGrowth]:
    """From the smallest to the largest run, the I/O time grows by more than the bytes moved."""
    runs = [r for r in _runs(facts_list) if r.bytes > 0 and r.io_time_max > 0]
    if len(runs) < 2:
        return
    small, large = runs[0], runs[-1]
    if large.nprocs == small.nprocs:
        return
    g_bytes = large.bytes / small.bytes
    g_time = large.io_time_max / small.io_time_max
    if g_time / g_bytes < cfg.growth_min_excess:
        return
    lost = large.io_time_max - small.io_time_max * g_bytes
    if lost < cfg.min_time_lost_share * large.runtime:
        return
    yield IOGrowth(time_lost=lost, runtime=large.runtime, runs=tuple(runs), small=small, large=large,
                   bytes_growth=g_bytes, time_growth=g_time)
