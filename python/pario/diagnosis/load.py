"""Load rules: I/O imbalance across ranks, stragglers, and few ranks doing all the I/O.

The statistics do not fade as the rank count grows (Drishti's ratios shrink
as 1/N): load balance mean/max, the time lost max - mean (POP's "lost to
imbalance" restricted to I/O) as a share of the run, the slowest rank's
z-score, and ratios to the median rank.  All use per-rank I/O time at the
outermost layer (what each rank waits for), from :mod:`pario.analysis.times`.
Detectors only: the words are in load_words.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from pario.diagnosis import load_words as words
from pario.diagnosis._table_ops import per_file
from pario.diagnosis.columns import counter, nranks
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts, Records, Striping
from pario.diagnosis.file_facts import Participation, hint, participation
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.layout import Layout, layout_of
from pario.diagnosis.registry import rule
from pario.model.layers import LAYERS, OPS
from pario.model.rankio import float_values, rank_io
from pario.table import Table, as_table
from pario.table import median as float_median

FAMILY = "load"


@record
class FileExcess:
    """How much more time one rank spends on a file than the average rank."""

    fid: int
    name: str
    layer: str
    rank_time: float
    mean_time: float

    @property
    def excess(self) -> float:
        return self.rank_time - self.mean_time


def rank_file_excess(facts: Facts, rank: int) -> list[FileExcess]:
    """The files (up to 10 per layer) on which ``rank`` spends the most I/O time above the average rank's."""
    out: list[FileExcess] = []
    n = max(facts.nprocs, 1)
    for layer, records in facts.outermost().items():
        if not len(records):
            continue
        t = counter(records, "read_time") + counter(records, "write_time") + counter(records, "meta_time")
        r = np.asarray(records["rank"], dtype=np.int64)
        fast, slow = counter(records, "fastest_rank_time"), counter(records, "slowest_rank_time")
        fr = _int(records, "fastest_rank")
        sr = _int(records, "slowest_rank")
        k = nranks(records, facts.nprocs)
        shared = r < 0
        rest = np.where(
            k > 2, np.clip(t - fast - slow, 0.0, None) / np.maximum(k - 2, 1.0), t / np.maximum(k, 1)
        )
        mine = np.where(r == rank, t, 0.0)
        mine = np.where(shared & (sr == rank), slow, mine)
        mine = np.where(shared & (sr != rank) & (fr == rank), fast, mine)
        mine = np.where(shared & (sr != rank) & (fr != rank), rest, mine)
        per = per_file(
            np.asarray(records["id"]),
            {"name": np.asarray(records["name"]), "mine": mine, "t": t},
            {"name": ("name", "first"), "mine": ("mine", "sum"), "t": ("t", "sum")},
        )
        excess = per["mine"] - per["t"] / n
        ahead = per[excess > 0]
        for row in ahead[_largest(excess[excess > 0], 10)].rows():
            out.append(
                FileExcess(int(row["id"]), str(row["name"]), layer, float(row["mine"]), float(row["t"] / n))
            )
    out.sort(key=lambda e: e.excess, reverse=True)
    return out


def _largest(v: np.ndarray, n: int) -> np.ndarray:
    """Positions of the ``n`` largest values (no NaN), largest first, ties in order of
    position."""
    return np.argsort(-v, kind="stable")[:n]


def _int(records: Records, name: str) -> np.ndarray:
    if name not in records:
        return -np.ones(len(records))
    return float_values(records[name], -1.0)


def _is_collective(facts: Facts, fid: int) -> bool:
    m = facts.layer("mpiio")
    if not len(m):
        return False
    rec = m[np.asarray(m["id"]).astype(np.uint64) == np.uint64(fid)]
    return float((counter(rec, "coll_writes") + counter(rec, "coll_reads")).sum()) > 0


@record
class SlowFile:
    """A file that explains part of a slow rank's time, and what the data say of why."""

    file: FileExcess
    #: the rank is this file's only collective-I/O aggregator (None: it is not)
    sole: Participation | None = None
    #: ... and the file is striped over a single OST (None: it is not, or not known)
    one_ost: Striping | None = None
    #: ... and the MPI-IO hint cb_nodes=1 is in effect
    cb_nodes_one: bool = False
    #: the file's recommended Lustre layout, where it is on a single OST
    layout: Layout | None = None


def slow_files(facts: Facts, rank: int, excess: list[FileExcess], lost: float,
               cfg: RuleConfig) -> tuple[SlowFile, ...]:
    """Why ``rank`` is slow, from its top files (up to 3).

    Only files that explain at least a tenth of ``lost`` are named.  A file gets the
    single-aggregator / single-OST explanation only when the data show it.
    """
    out = []
    for e in [e for e in excess if e.excess >= 0.1 * lost][:3]:
        part = participation(facts, e.fid)
        stripes = facts.striping.get(e.fid)
        coll = e.layer == "mpiio" and _is_collective(facts, e.fid)
        sole = (
            coll and part is not None and part.top_rank == rank and part.effective <= 1.5 and part.ranks >= 2
        )
        if not (sole and part is not None):
            out.append(SlowFile(e))
            continue
        one_ost = stripes if stripes is not None and stripes.stripe_count == 1 else None
        layout = layout_of(facts, e.fid, cfg) if one_ost is not None else None
        out.append(SlowFile(e, part, one_ost, hint(facts, e.fid, "cb_nodes") == "1", layout))
    return tuple(out)


@record
class ExtraCall:
    """A call a rank makes clearly more often than the other ranks on average."""

    layer: str
    kind: str  # "read", "write" or "meta"
    call: str  # the counter: "unlinks", "writes"...
    mine: int
    others: float  # the other ranks' mean count
    name: str  # the file that holds most of the rank's calls


def _own_calls(facts: Facts, outermost: bool) -> dict[tuple[str, str, str], np.ndarray] | None:
    """Per-rank counts of every call counter, from the records of one rank each: (layer, kind,
    counter) -> counts by rank.  None where a record shared by several ranks holds calls (their
    split over the ranks is unknown).  ``outermost``: only the calls the program asked for (the
    POSIX calls beneath MPI-IO are an aggregator's, not the program's); else every layer's."""
    tables = facts.outermost() if outermost else {k: v for k, v in facts.files.items() if k in LAYERS}
    n = facts.nprocs
    out: dict[tuple[str, str, str], np.ndarray] = {}
    for layer, records in tables.items():
        if not len(records):
            continue
        rank = np.asarray(records["rank"], dtype=np.int64)
        own = (rank >= 0) & (rank < n)
        for kind, calls in OPS.get(layer, {}).items():
            for call in calls:
                values = counter(records, call)
                if not values.any():
                    continue
                if (values[~own] > 0).any():
                    return None
                out[(layer, kind, call)] = np.bincount(rank[own], weights=values[own], minlength=n)[:n]
    return out


def even_work(facts: Facts) -> bool | None:
    """Whether every rank moves the same bytes in the same calls (counts within 10% or one call,
    bytes within 10%), at the layers the program called; None where the records cannot tell
    (records shared by several ranks, no I/O)."""
    calls = facts.cached(("own_calls", True), lambda: _own_calls(facts, True))
    if not calls or facts.nprocs < 2:
        return None

    def spread(v: np.ndarray) -> float:
        return float(v.max() - v.min())

    if any(spread(v) >= max(1.0, 0.1 * float(v.max())) for v in calls.values()):
        return False
    moved = facts.cached("outermost_bytes_per_rank", lambda: _outermost_bytes(facts))
    return spread(moved) <= 0.1 * float(moved.max())


def extra_calls(facts: Facts, rank: int, driver: str, limit: int = 3) -> tuple[ExtraCall, ...]:
    """The calls ``rank`` makes at least twice (and one more than) the other ranks' mean, those of
    kind ``driver`` first; reads and writes beneath MPI-IO (an aggregator's) left out."""
    calls = facts.cached(("own_calls", False), lambda: _own_calls(facts, False))
    n = facts.nprocs
    if not calls or n < 2 or not 0 <= rank < n:
        return ()
    outer = facts.cached(("own_calls", True), lambda: _own_calls(facts, True)) or {}
    found = []
    for (layer, kind, call), v in calls.items():
        if kind != "meta" and (layer, kind, call) not in outer:
            continue
        mine = float(v[rank])
        others = (float(v.sum()) - mine) / (n - 1)
        if mine >= others + 1 and mine >= 2 * others:
            busiest = _busiest_file(facts, layer, call, rank)
            found.append(ExtraCall(layer, kind, call, int(mine), others, busiest))
    found.sort(key=lambda c: (c.kind != driver, -(c.mine - c.others)))
    return tuple(found[:limit])


def _busiest_file(facts: Facts, layer: str, call: str, rank: int) -> str:
    records = facts.layer(layer)
    mine = np.asarray(records["rank"], dtype=np.int64) == rank
    values = np.where(mine, counter(records, call), 0.0)
    return str(records["name"][int(np.argmax(values))]) if values.any() else ""


def _stragglers(io: np.ndarray, cfg: RuleConfig) -> tuple[list[int], float]:
    """Ranks at or above straggler_min_ratio x the median rank (if few enough), and the median."""
    n = len(io)
    if n < 3:
        return [], 0.0
    med = float_median(io)
    if med <= 0:
        return [], med
    idx = np.flatnonzero(io >= cfg.straggler_min_ratio * med)
    limit = max(1, int(math.floor(cfg.straggler_max_share * n)))
    if not len(idx) or len(idx) > limit:
        return [], med
    return [int(i) for i in idx[np.argsort(-io[idx])]], med


def _driver(facts: Facts) -> str:
    """The most imbalanced kind of I/O time (max - mean): "read", "write" or "meta"."""
    kinds = {k: facts.times.io_of(k) for k in ("read", "write", "meta")}
    return max(kinds, key=lambda k: float(kinds[k].max() - kinds[k].mean()))


def _straggler_fires(facts: Facts, cfg: RuleConfig) -> bool:
    io = facts.times.io
    strag, med = _stragglers(io, cfg)
    return bool(strag) and float(io.max()) - med >= cfg.load_min_lost_share * facts.runtime


def _mpi_wait(ranks: Table, columns: list[str], which: list[int]) -> np.ndarray:
    """Per rank of ``which``: the sum of its ``columns`` in the rank table, NaN when they
    are all NaN or the table has no row for it."""
    if "rank" in ranks:  # some ranks left no row: rows are found by their rank
        labels = np.asarray(ranks["rank"], dtype=np.int64)
    else:
        labels = np.arange(len(ranks))
    values = np.column_stack([np.asarray(ranks[c], dtype=np.float64) for c in columns])
    per_row = np.where(np.isnan(values).all(axis=1), np.nan, np.nansum(values, axis=1))
    # each wanted rank's row, if it has one
    order = np.argsort(labels, kind="stable")
    wanted = np.asarray(which, dtype=np.int64)
    at = np.minimum(np.searchsorted(labels[order], wanted), max(len(order) - 1, 0))
    found = (labels[order][at] == wanted) if len(order) else np.zeros(len(wanted), dtype=bool)
    return np.where(found, per_row[order][at] if len(order) else np.nan, np.nan)


def idle_mpi(facts: Facts, idle: list[int]) -> float | None:
    """The mean time of ranks ``idle`` in MPI collectives and messages (None: the log has no MPI time)."""
    ranks = as_table(facts.profile.ranks)
    waits = [c for c in ("mpi_coll", "mpi_p2p") if c in ranks]
    if not (facts.profile.job.has_mpi_time and waits and idle):
        return None
    # collectives and point-to-point only: "other" MPI time includes MPI_Init and MPI_Finalize
    wait = _mpi_wait(ranks, waits, idle)
    return float(np.nanmean(wait)) if np.isfinite(wait).any() else float("nan")


@record
class Concentration:
    doers: list[int]  # ranks carrying few_ranks_bytes_share of the bytes, largest first
    per_rank_bytes: np.ndarray
    total: float


def concentration(facts: Facts, cfg: RuleConfig) -> Concentration | None:
    """The few ranks carrying most of the bytes, when they are few (else None)."""
    n = facts.nprocs
    if n < cfg.few_ranks_min_nprocs:
        return None
    per_rank = facts.cached("outermost_bytes_per_rank", lambda: _outermost_bytes(facts))
    total = float(per_rank.sum())
    if total <= 0:
        return None
    order = np.argsort(-per_rank, kind="stable")
    cum = np.cumsum(per_rank[order])
    k = int(np.searchsorted(cum, cfg.few_ranks_bytes_share * total - 1e-9 * total) + 1)
    if k > cfg.few_ranks_max_share * n:
        return None
    return Concentration([int(r) for r in order[:k]], per_rank, total)


def _outermost_bytes(facts: Facts) -> np.ndarray:
    """Bytes per rank, each call counted at its outermost layer."""
    per_rank = np.zeros(facts.nprocs)
    for layer, records in facts.outermost().items():
        if len(records):
            per_rank += np.asarray(rank_io(records, facts.nprocs, facts.members(layer)).table["bytes"],
                                   dtype=np.float64)
    return per_rank


def _few_fires(facts: Facts, cfg: RuleConfig) -> bool:
    io = facts.times.io  # the cheap test first
    if not len(io) or float(io.max() - io.mean()) < cfg.load_min_lost_share * facts.runtime:
        return False
    return concentration(facts, cfg) is not None


def _z_of_max(io: np.ndarray) -> float:
    """How many standard deviations the slowest rank is above the mean (inf when all are equal).

    Computed on times scaled by the maximum: the same z, without squaring huge values.
    """
    mx = float(io.max(initial=0.0))
    if not (mx > 0 and math.isfinite(mx)):
        return math.inf
    scaled = io / mx
    std = float(scaled.std())
    return (1.0 - float(scaled.mean())) / std if std > 0 else math.inf


@record
class Imbalance(Hit):
    max_io: float = 0.0  # the slowest rank's I/O time
    mean_io: float = 0.0
    median_io: float = 0.0
    min_io: float = 0.0
    z: float = math.inf  # the slowest rank's z-score
    slowest: int = 0
    ranks: tuple[int, ...] = ()  # the slowest ranks, slowest first (top_subjects of them)
    ranks_total: int = 0
    driver: str = ""  # the most imbalanced kind: "read", "write" or "meta"
    files: tuple[SlowFile, ...] = ()  # why the slowest rank is slow
    approx: bool = False  # the slowest rank's time is estimated
    even: bool = False  # every rank makes the same calls and moves the same bytes
    calls: tuple[ExtraCall, ...] = ()  # the calls the slowest rank makes more than the others


@rule(
    "LOAD-IMBALANCE",
    title="I/O time imbalanced across ranks",
    family=FAMILY,
    config=("load_min_lost_share", "load_even_work_min_seconds"),
    words=words.imbalance,
)
def imbalance(facts: Facts, cfg: RuleConfig) -> Iterator[Imbalance]:
    """Per-rank I/O time is spread unevenly, so the run waits for the slowest rank."""
    io = facts.times.io
    n = len(io)
    if n < 2 or facts.runtime <= 0 or float(io.max()) <= 0:
        return
    mean, mx = float(io.mean()), float(io.max())
    lost = mx - mean
    if lost < cfg.load_min_lost_share * facts.runtime:
        return
    even = even_work(facts)
    if even and lost < cfg.load_even_work_min_seconds:
        return  # the same work on every rank: a difference this small is the system's noise
    if _straggler_fires(facts, cfg) or _few_fires(facts, cfg):
        return  # LOAD-STRAGGLERS or LOAD-FEW-RANKS explains it better
    if not facts.words:  # what follows is the words'
        yield Imbalance(time_lost=lost)
        return
    slowest = int(np.argmax(io))
    driver = _driver(facts)
    yield Imbalance(
        time_lost=lost, max_io=mx, mean_io=mean, median_io=float_median(io), min_io=float(io.min()),
        z=_z_of_max(io), slowest=slowest, ranks_total=n,
        ranks=tuple(int(r) for r in np.argsort(-io, kind="stable")[: max(cfg.top_subjects, 1)]),
        driver=driver, files=slow_files(facts, slowest, rank_file_excess(facts, slowest), lost, cfg),
        approx=not facts.times.exact_max("io"), even=bool(even), calls=extra_calls(facts, slowest, driver),
    )


@record
class Stragglers(Hit):
    ranks: tuple[int, ...] = ()  # the stragglers, slowest first
    max_io: float = 0.0
    median_io: float = 0.0
    z: float = math.inf
    top_files: tuple[FileExcess, ...] = ()  # the slowest rank's top files (up to 3)
    files: tuple[SlowFile, ...] = ()  # why it is slow
    approx: bool = False  # per-rank times are partly estimated
    calls: tuple[ExtraCall, ...] = ()  # the calls the slowest straggler makes more than the others


@rule(
    "LOAD-STRAGGLERS",
    title="A few ranks take much longer in I/O (stragglers)",
    family=FAMILY,
    config=(
        "straggler_min_ratio", "straggler_max_share", "load_min_lost_share", "load_even_work_min_seconds"
    ),
    words=words.stragglers,
)
def stragglers(facts: Facts, cfg: RuleConfig) -> Iterator[Stragglers]:
    """A few ranks spend several times the median rank's I/O time."""
    io = facts.times.io
    strag, med = _stragglers(io, cfg)
    if not strag or facts.runtime <= 0:
        return
    mx = float(io.max())
    lost = mx - med
    if lost < cfg.load_min_lost_share * facts.runtime or _few_fires(facts, cfg):
        return
    if lost < cfg.load_even_work_min_seconds and even_work(facts):
        return  # the same work on every rank: a difference this small is the system's noise
    if not facts.words:  # what follows is the words'
        yield Stragglers(time_lost=lost)
        return
    excess = rank_file_excess(facts, strag[0])
    yield Stragglers(
        time_lost=lost, ranks=tuple(strag), max_io=mx, median_io=med, z=_z_of_max(io),
        top_files=tuple(excess[:3]), files=slow_files(facts, strag[0], excess, lost, cfg),
        approx=not facts.times.exact_ranks("io"), calls=extra_calls(facts, strag[0], _driver(facts)),
    )


@record
class Doer:
    """A rank that moves a large share of the bytes."""

    rank: int
    bytes: float
    io_time: float


@record
class FewRanks(Hit):
    doers: tuple[Doer, ...] = ()  # the ranks carrying few_ranks_bytes_share of the bytes, largest first
    nprocs: int = 0
    total: float = 0.0  # bytes read and written by all ranks
    bytes_written: float = 0.0
    share: float = 0.0  # the doers' share of the bytes
    idle: int = 0  # ranks that move nothing
    idle_mpi: float | None = None  # their mean time in MPI collectives and messages (None: not measured)
    max_io: float = 0.0
    mean_io: float = 0.0


@rule(
    "LOAD-FEW-RANKS",
    title="Rank 0 or a few ranks do all the I/O while the others wait",
    family=FAMILY,
    config=("few_ranks_bytes_share", "few_ranks_max_share", "few_ranks_min_nprocs", "load_min_lost_share"),
    words=words.few_ranks,
)
def few_ranks(facts: Facts, cfg: RuleConfig) -> Iterator[FewRanks]:
    """Most bytes are moved by a small share of the ranks; the other ranks are idle meanwhile."""
    io = facts.times.io
    if facts.runtime <= 0 or not len(io):
        return
    mean, mx = float(io.mean()), float(io.max())
    if mx - mean < cfg.load_min_lost_share * facts.runtime:
        return  # the cheap test first: most runs stop here
    c = concentration(facts, cfg)
    if c is None:
        return
    idle = [r for r in range(facts.nprocs) if c.per_rank_bytes[r] <= 0]
    yield FewRanks(
        time_lost=mx - mean, nprocs=facts.nprocs, total=c.total,
        doers=tuple(Doer(r, float(c.per_rank_bytes[r]), float(io[r])) for r in c.doers),
        bytes_written=float(sum(counter(f, "bytes_written").sum() for f in facts.outermost().values())),
        share=float(c.per_rank_bytes[c.doers].sum() / c.total), idle=len(idle),
        idle_mpi=idle_mpi(facts, idle), max_io=mx, mean_io=mean,
    )
