"""Activity rules: when the I/O happened, from a heat map (Darshan's HEATMAP module).

The counters say how much time the ranks spent in I/O; a heat map says when their bytes moved,
bin by bin (:mod:`pario.analysis.activity`).  Two shapes of a run show there and nowhere else:
all ranks doing their I/O at once in a few short bursts (they contend for the file system while
it idles the rest of the run), and ranks doing theirs one after another (each idle in I/O while
the others do theirs).  Detectors only: the words are in activity_words.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from pario.analysis.activity import Activity, activity
from pario.diagnosis import activity_words as words
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts
from pario.diagnosis.findings import Severity
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.registry import rule


@record
class Burst:
    """A run of consecutive burst bins."""

    start: float  # s since the job's start
    end: float
    nbytes: int
    ranks: int  # ranks in I/O in its busiest bin


@record
class Bursts(Hit):
    bursts: tuple[Burst, ...] = ()
    time_share: float = 0.0  # the burst bins, as a share of the bins
    bytes_share: float = 0.0  # the bytes they carry
    concurrency: float = 0.0  # byte-weighted share of the I/O ranks in I/O at once, in the bursts
    io_ranks: int = 0
    burst_rate: float = 0.0  # bytes / time of the burst bins
    run_rate: float = 0.0  # bytes / the heat map's duration
    io_share: float = 0.0  # mean I/O time per rank / run time
    bin_width: float = 0.0
    nbins: int = 0


@record
class RankTurn:
    rank: int
    busy: float  # s in I/O (busy bins x bin width)
    first: float  # start of its first busy bin
    last: float  # end of its last busy bin
    nbytes: int


@record
class Staggered(Hit):
    phase: float = 0.0  # s: the bins where any I/O rank is in I/O
    mean_busy: float = 0.0  # s: an average I/O rank's own busy bins
    concurrency: float = 0.0  # byte-weighted share of the I/O ranks in I/O at once
    io_ranks: int = 0
    ranks: tuple[RankTurn, ...] = ()  # by first busy bin
    bin_width: float = 0.0
    mpi_mean: float | None = None  # mean MPI time per rank, where known


def _activity(facts: Facts) -> Activity | None:
    return facts.cached("activity", lambda: activity(facts.profile.heatmap, facts.nprocs))


def _usable(a: Activity | None, cfg: RuleConfig) -> bool:
    """A heat map fine enough to tell when I/O happened, of at least two ranks that moved bytes."""
    return a is not None and a.nbins >= cfg.activity_min_bins and len(a.ranks) >= 2 \
        and (a.volume.sum() > 0 or a.nested.sum() > 0)


def _weights(a: Activity) -> np.ndarray:
    """Bytes per bin: the file system's, or the nested modules' where the file system has none."""
    v = a.volume.astype(np.float64)
    return v if v.sum() > 0 else a.nested.sum(axis=0).astype(np.float64)


@rule("TIME-IO-BURSTS", title="All ranks do their I/O at once, in short bursts", family="time",
      config=("activity_min_bins", "activity_min_bin_share", "burst_bytes_share", "burst_max_time_share",
              "burst_min_ranks_share", "burst_min_io_share", "io_bound_min_share"),
      words=words.bursts)
def io_bursts(facts: Facts, cfg: RuleConfig) -> Iterator[Bursts]:
    """Most bytes move in a few short bursts in which (nearly) every rank doing I/O is in I/O at once:
    they contend for the file system, which idles the rest of the run."""
    act = _activity(facts)
    if not _usable(act, cfg):
        return
    assert act is not None
    T = facts.runtime
    io_share = float(facts.times.io.mean()) / T if T > 0 and facts.times.nranks else 0.0
    if io_share < cfg.burst_min_io_share:
        return
    v = _weights(act)
    order = np.argsort(-v, kind="stable")
    need = cfg.burst_bytes_share * v.sum()
    k = int(np.searchsorted(np.cumsum(v[order]), need * (1 - 1e-12))) + 1
    chosen = np.zeros(act.nbins, dtype=bool)
    chosen[order[:k]] = True
    time_share = k / act.nbins
    if time_share > cfg.burst_max_time_share:
        return
    busy = act.busy(cfg.activity_min_bin_share)
    share_busy = busy.sum(axis=0) / len(act.ranks)
    concurrency = float((v[chosen] * share_busy[chosen]).sum() / v[chosen].sum())
    if concurrency < cfg.burst_min_ranks_share:
        return
    bursts = []
    edges = np.flatnonzero(np.diff(np.concatenate([[0], chosen.astype(np.int8), [0]])))
    for s, e in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
        bursts.append(Burst(s * act.bin_width, e * act.bin_width, int(v[s:e].sum()),
                            int(busy[:, s:e].sum(axis=0).max())))
    bursts.sort(key=lambda b: -b.nbytes)
    moved = float(v[chosen].sum())
    yield Bursts(
        severity=Severity.WARNING if io_share >= cfg.io_bound_min_share else Severity.INFO,
        bursts=tuple(bursts), time_share=time_share, bytes_share=moved / float(v.sum()),
        concurrency=concurrency, io_ranks=len(act.ranks), burst_rate=moved / (k * act.bin_width),
        run_rate=float(v.sum()) / act.duration, io_share=io_share, bin_width=act.bin_width, nbins=act.nbins)


@rule("LOAD-IO-STAGGERED", title="Ranks do their I/O one after another", family="load",
      config=("activity_min_bins", "activity_min_bin_share", "stagger_max_ranks_share", "stagger_min_ratio",
              "load_min_lost_share"),
      words=words.staggered, time_class="wait")
def io_staggered(facts: Facts, cfg: RuleConfig) -> Iterator[Staggered]:
    """The ranks doing I/O take turns: few are in I/O at once, and the I/O phase lasts several times
    one rank's own I/O, each rank idle in I/O while the others do theirs.  A run with a trace is
    left to TRACE-SERIALISED-IO, which sees each call."""
    if facts.profile.trace is not None:
        return
    a = _activity(facts)
    if not _usable(a, cfg):
        return
    assert a is not None
    busy = a.busy(cfg.activity_min_bin_share)
    phase_bins = busy.any(axis=0)
    per_rank = busy.sum(axis=1)
    mean_busy = float(per_rank.mean())
    phase = int(phase_bins.sum())
    if mean_busy <= 0 or phase / mean_busy < cfg.stagger_min_ratio:
        return
    v = _weights(a)
    share_busy = busy.sum(axis=0) / len(a.ranks)
    concurrency = float((v * share_busy).sum() / v.sum())
    if concurrency > cfg.stagger_max_ranks_share:
        return
    lost = (phase - mean_busy) * a.bin_width
    T = facts.runtime
    if T <= 0 or lost < cfg.load_min_lost_share * T:
        return
    firsts = np.argmax(busy, axis=1)
    lasts = a.nbins - 1 - np.argmax(busy[:, ::-1], axis=1)
    nbytes = (a.per_rank + a.nested * (a.per_rank.sum(axis=1) == 0)[:, None]).sum(axis=1)
    order = np.lexsort((a.ranks, firsts))
    turns = tuple(RankTurn(int(a.ranks[i]), float(per_rank[i]) * a.bin_width, float(firsts[i]) * a.bin_width,
                           float(lasts[i] + 1) * a.bin_width, int(nbytes[i])) for i in order.tolist())
    mpi = facts.times.mpi
    yield Staggered(
        time_lost=lost, phase=phase * a.bin_width, mean_busy=mean_busy * a.bin_width, concurrency=concurrency,
        io_ranks=len(a.ranks), ranks=turns, bin_width=a.bin_width,
        mpi_mean=float(mpi.mean()) if mpi is not None and len(mpi) else None)
