"""Load rules: I/O imbalance across ranks, stragglers, and few ranks doing all the I/O.

The statistics do not fade as the rank count grows (Drishti's ratios shrink
as 1/N): load balance mean/max, the time lost max - mean (POP's "lost to
imbalance" restricted to I/O) as a share of the run, the slowest rank's
z-score, and ratios to the median rank.  All use per-rank I/O time at the
outermost layer (what each rank waits for), from :mod:`pario.analysis.times`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

import pario.analysis.diagnosis._fmt as fmt
from pario.analysis.diagnosis._frames import per_file
from pario.analysis.diagnosis.commands import tune_command
from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.diagnosis.facts import Facts, Records, counter, hex_id, hint, nranks, participation
from pario.analysis.diagnosis.findings import Finding, Metric, Recommendation, Subject
from pario.analysis.diagnosis.registry import finding, rule
from pario.analysis.rankio import float_values, rank_io
from pario.table import Table, as_table

FAMILY = "load"


@dataclass(frozen=True)
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
    for layer, frame in facts.outermost().items():
        if not len(frame):
            continue
        t = counter(frame, "read_time") + counter(frame, "write_time") + counter(frame, "meta_time")
        r = np.asarray(frame["rank"], dtype=np.int64)
        fast, slow = counter(frame, "fastest_rank_time"), counter(frame, "slowest_rank_time")
        fr = _int(frame, "fastest_rank")
        sr = _int(frame, "slowest_rank")
        k = nranks(frame, facts.nprocs)
        shared = r < 0
        rest = np.where(
            k > 2, np.clip(t - fast - slow, 0.0, None) / np.maximum(k - 2, 1.0), t / np.maximum(k, 1)
        )
        mine = np.where(r == rank, t, 0.0)
        mine = np.where(shared & (sr == rank), slow, mine)
        mine = np.where(shared & (sr != rank) & (fr == rank), fast, mine)
        mine = np.where(shared & (sr != rank) & (fr != rank), rest, mine)
        per = per_file(
            np.asarray(frame["id"]),
            {"name": np.asarray(frame["name"]), "mine": mine, "t": t},
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


def _int(frame: Records, name: str) -> np.ndarray:
    if name not in frame:
        return -np.ones(len(frame))
    return float_values(frame[name], -1.0)


def _is_collective(facts: Facts, fid: int) -> bool:
    m = facts.layer("mpiio")
    if not len(m):
        return False
    rec = m[np.asarray(m["id"]).astype(np.uint64) == np.uint64(fid)]
    return float((counter(rec, "coll_writes") + counter(rec, "coll_reads")).sum()) > 0


def cause_notes(
    facts: Facts, rank: int, excess: list[FileExcess], lost: float
) -> tuple[list[str], list[str], list[Recommendation]]:
    """Why ``rank`` is slow, from its top files: (short causes, notes, recommendations).

    Only files that explain at least a tenth of ``lost`` are named.  A file gets the
    single-aggregator / single-OST explanation only when the data show it.
    """
    causes: list[str] = []
    notes: list[str] = []
    recs: list[Recommendation] = []
    for e in [e for e in excess if e.excess >= 0.1 * lost][:3]:
        layer = "MPI-IO" if e.layer == "mpiio" else e.layer.upper()
        part = participation(facts, e.fid)
        stripes = facts.striping.get(e.fid)
        coll = e.layer == "mpiio" and _is_collective(facts, e.fid)
        sole = (
            coll and part is not None and part.top_rank == rank and part.effective <= 1.5 and part.ranks >= 2
        )
        text = (
            f"Rank {rank} spends {fmt.seconds(e.rank_time)} on {e.name} ({layer}), {fmt.seconds(e.excess)} "
            "more than the average rank."
        )
        cause = f"{e.name} (+{fmt.seconds(e.excess)}, {layer}"
        if sole and part is not None:
            text += (
                f" It is the only rank doing this file's file-system I/O ({fmt.pct(part.top_share)} of its "
                f"{fmt.nbytes(part.bytes)} at the POSIX level, for {fmt.nranks(part.ranks)}): the single "
                "collective-I/O aggregator."
            )
            cause += ": the only aggregator"
            if stripes is not None and stripes.stripe_count == 1:
                text += (
                    " The file is striped over a single OST (stripe count 1), and MPI-IO on Lustre uses one "
                    "aggregator per OST by default: the single-OST striping is why one rank does the "
                    "file-system I/O for all the others."
                )
                cause += " because the file is striped over a single OST"
                recs.append(
                    Recommendation(
                        "striping",
                        (
                            f"Stripe {e.name.rsplit('/', 1)[-1]} over several OSTs (set on the directory "
                            "before the file is created, or with the hints striping_factor / striping_unit "
                            "when MPI-IO creates it), so that MPI-IO uses one aggregator per OST:"
                        ),
                        f"lfs setstripe -c 16 -S {stripes.stripe_size} {e.name.rsplit('/', 1)[0] or '/'}",
                    )
                )
            cb = hint(facts, e.fid, "cb_nodes")
            if cb == "1":
                text += " The MPI-IO hint cb_nodes=1 in effect makes a single rank the aggregator."
                cause += ", cb_nodes=1"
        causes.append(cause + ")")
        notes.append(text)
    return causes, notes, recs


def _stragglers(io: np.ndarray, cfg: RuleConfig) -> tuple[list[int], float]:
    """Ranks at or above straggler_min_ratio x the median rank (if few enough), and the median."""
    n = len(io)
    if n < 3:
        return [], 0.0
    med = float(np.median(io))
    if med <= 0:
        return [], med
    idx = np.flatnonzero(io >= cfg.straggler_min_ratio * med)
    limit = max(1, int(math.floor(cfg.straggler_max_share * n)))
    if not len(idx) or len(idx) > limit:
        return [], med
    return [int(i) for i in idx[np.argsort(-io[idx])]], med


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


@dataclass(frozen=True)
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
    for layer, frame in facts.outermost().items():
        if len(frame):
            per_rank += np.asarray(rank_io(frame, facts.nprocs, facts.members(layer)).table["bytes"],
                                   dtype=np.float64)
    return per_rank


def _few_fires(facts: Facts, cfg: RuleConfig) -> bool:
    io = facts.times.io  # the cheap test first
    if not len(io) or float(io.max() - io.mean()) < cfg.load_min_lost_share * facts.runtime:
        return False
    return concentration(facts, cfg) is not None


def _rank_subjects(facts: Facts, order: list[int], io: np.ndarray) -> list[Subject]:
    t = facts.times
    return [
        Subject(
            "rank",
            f"rank {r}",
            (
                Metric("io_time", "I/O time", float(io[r]), "s", approximate=not t.exact_ranks("io")),
                Metric("read_time", "reads", float(t.io_read[r]), "s", approximate=not t.exact_ranks("read")),
                Metric(
                    "write_time", "writes", float(t.io_write[r]), "s", approximate=not t.exact_ranks("write")
                ),
                Metric(
                    "meta_time", "metadata", float(t.io_meta[r]), "s", approximate=not t.exact_ranks("meta")
                ),
            ),
        )
        for r in order
    ]


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


@rule(
    "LOAD-IMBALANCE",
    title="I/O time imbalanced across ranks",
    family=FAMILY,
    config=("load_min_lost_share",),
)
def imbalance(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Per-rank I/O time is spread unevenly, so the run waits for the slowest rank."""
    io = facts.times.io
    n = len(io)
    T = facts.runtime
    if n < 2 or T <= 0 or float(io.max()) <= 0:
        return
    mean, mx = float(io.mean()), float(io.max())
    lb = mean / mx
    lost = mx - mean
    if lost < cfg.load_min_lost_share * T:
        return
    if _straggler_fires(facts, cfg) or _few_fires(facts, cfg):
        return  # LOAD-STRAGGLERS or LOAD-FEW-RANKS explains it better
    approx = not facts.times.exact_max("io")
    z = _z_of_max(io)
    slowest = int(np.argmax(io))
    order = [int(r) for r in np.argsort(-io, kind="stable")[: max(cfg.top_subjects, 1)]]
    kinds = {k: facts.times.io_of(k) for k in ("read", "write", "meta")}
    driver = max(kinds, key=lambda k: float(kinds[k].max() - kinds[k].mean()))
    excess = rank_file_excess(facts, slowest)
    causes, notes, cause_recs = cause_notes(facts, slowest, excess, lost)
    if approx:
        notes.append(
            "Per-rank times of files shared by all ranks are estimated from the fastest and slowest rank "
            "Darshan records (the rest spread evenly); the maximum and mean are exact for a single shared "
            "file."
        )
    statement = (
        f"I/O load balance is {lb:.2f} (mean/max of per-rank I/O time): the slowest rank ({slowest}) spends "
        f"{fmt.seconds(mx)} in I/O, the average rank {fmt.seconds(mean)}; the run loses {fmt.seconds(lost)} "
        f"({fmt.pct(lost / T)} of it) waiting for the slowest rank."
        + (f" Rank {slowest} is slower mainly on " + "; ".join(causes) + "." if causes else "")
    )
    evidence = [
        Metric("load_balance", "I/O load balance mean/max", lb, "", approximate=approx),
        Metric("max_io", "slowest rank's I/O time", mx, "s", approximate=approx),
        Metric("mean_io", "mean I/O time per rank", mean, "s"),
        Metric("median_io", "median I/O time", float(np.median(io)), "s", approximate=approx),
        Metric("min_io", "fastest rank's I/O time", float(io.min()), "s", approximate=approx),
        Metric("imbalance", "(max - mean) / max", lost / mx, "share", approximate=approx),
        Metric(
            "z_max",
            "slowest rank's z-score (max - mean) / std",
            z if math.isfinite(z) else None,
            "",
            approximate=approx,
        ),
        Metric("time_lost", "time lost: max - mean", lost, "s", approximate=approx),
        Metric("driver", "most imbalanced kind", driver, "text"),
    ]
    recs = list(cause_recs)
    recs.append(
        Recommendation(
            "code",
            (
                "Give every rank an equal share of the data to move; where one rank writes extra (headers, "
                "metadata, logs), make it collective or move it off the critical path."
            ),
        )
    )
    recs.append(
        Recommendation(
            "tune",
            "Try other MPI-IO settings (aggregators, buffering) on this run, one hints file per trial:",
            tune_command(facts),
        )
    )
    yield finding(
        "LOAD-IMBALANCE",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=T,
        time_lost=lost,
        subjects=_rank_subjects(facts, order, io),
        subjects_total=n,
        notes=notes,
        time_basis="exact: max - mean of per-rank I/O time (what balancing would save)"
        + (" (per-rank values estimated)" if approx else ""),
    )


@rule(
    "LOAD-STRAGGLERS",
    title="A few ranks take much longer in I/O (stragglers)",
    family=FAMILY,
    config=("straggler_min_ratio", "straggler_max_share", "load_min_lost_share"),
)
def stragglers(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """A few ranks spend several times the median rank's I/O time."""
    io = facts.times.io
    T = facts.runtime
    strag, med = _stragglers(io, cfg)
    if not strag or T <= 0:
        return
    mx = float(io.max())
    lost = mx - med
    if lost < cfg.load_min_lost_share * T or _few_fires(facts, cfg):
        return
    approx = not facts.times.exact_ranks("io")
    z = _z_of_max(io)
    worst = strag[0]
    excess = rank_file_excess(facts, worst)
    causes, notes, cause_recs = cause_notes(facts, worst, excess, lost)
    if approx:
        notes.append(
            "Per-rank I/O times are partly estimated (shared-file records keep only the fastest and slowest "
            "rank); the stragglers named are the slowest ranks Darshan recorded."
        )
    statement = (
        f"{fmt.ranks(strag)} take{'s' if len(strag) == 1 else ''} {fmt.times(mx / med)} the median rank's "
        f"I/O time ({fmt.seconds(mx)} against {fmt.seconds(med)}); the other ranks wait {fmt.seconds(lost)} "
        f"for {'it' if len(strag) == 1 else 'them'} ({fmt.pct(lost / T)} of the run)."
        + (f" Rank {worst} is slower mainly on " + "; ".join(causes) + "." if causes else "")
    )
    evidence = [
        Metric("stragglers", "stragglers", len(strag), "count"),
        Metric("max_io", "slowest rank's I/O time", mx, "s", approximate=approx),
        Metric("median_io", "median rank's I/O time", med, "s", approximate=approx),
        Metric("ratio", "slowest / median", mx / med, "x", approximate=approx),
        Metric("z_max", "slowest rank's z-score", z if math.isfinite(z) else None, "", approximate=approx),
        Metric("time_lost", "time lost: max - median", lost, "s", approximate=approx),
    ]
    recs = list(cause_recs)
    recs.append(
        Recommendation(
            "investigate",
            (
                f"See what {fmt.ranks(strag)} do differently (top files below): a rank that writes headers, "
                "metadata or logs alone should do it collectively or outside the timed phase; if the same "
                "ranks are slow in every run whatever they do, check their nodes and the storage targets of "
                "their files (lfs getstripe, OST load)."
            ),
        )
    )
    subjects = _rank_subjects(facts, strag, io)
    subjects += [
        Subject(
            "file",
            e.name,
            (
                Metric("rank_time", f"rank {worst}'s time on it", e.rank_time, "s", approximate=approx),
                Metric("mean_time", "average rank's time on it", e.mean_time, "s"),
            ),
            hex_id(e.fid),
        )
        for e in excess[:3]
    ]
    yield finding(
        "LOAD-STRAGGLERS",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=T,
        time_lost=lost,
        subjects=subjects,
        subjects_total=len(strag) + min(len(excess), 3),
        notes=notes,
        time_basis="estimate: slowest rank's I/O time - the median rank's "
        "(what the others wait if the stragglers ran at the median speed)",
    )


@rule(
    "LOAD-FEW-RANKS",
    title="Rank 0 or a few ranks do all the I/O while the others wait",
    family=FAMILY,
    config=("few_ranks_bytes_share", "few_ranks_max_share", "few_ranks_min_nprocs", "load_min_lost_share"),
)
def few_ranks(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Most bytes are moved by a small share of the ranks; the other ranks are idle meanwhile."""
    c = concentration(facts, cfg)
    T = facts.runtime
    if c is None or T <= 0:
        return
    io = facts.times.io
    n = facts.nprocs
    mean, mx = float(io.mean()), float(io.max())
    lost = mx - mean
    if lost < cfg.load_min_lost_share * T:
        return
    k = len(c.doers)
    share = float(c.per_rank_bytes[c.doers].sum() / c.total)
    idle = [r for r in range(n) if c.per_rank_bytes[r] <= 0]
    who = f"rank {c.doers[0]}" if k == 1 else fmt.ranks(c.doers)
    statement = (
        f"{who} move{'s' if k == 1 else ''} {fmt.pct(share)} of the {fmt.nbytes(c.total)} read and written "
        f"by the {n} ranks; {len(idle)} ranks move nothing and wait: the slowest rank spends "
        f"{fmt.seconds(mx)} in I/O, the average rank {fmt.seconds(mean)}."
    )
    evidence = [
        Metric("doers", f"ranks carrying {fmt.pct(cfg.few_ranks_bytes_share)} of the bytes", k, "count"),
        Metric("nprocs", "ranks", n, "count"),
        Metric("share", "their share of the bytes", share, "share"),
        Metric("idle_ranks", "ranks with no I/O", len(idle), "count"),
        Metric("max_io", "slowest rank's I/O time", mx, "s"),
        Metric("mean_io", "mean I/O time per rank", mean, "s"),
        Metric("time_lost", "time lost: max - mean", lost, "s"),
    ]
    notes = []
    ranks = as_table(facts.profile.ranks)
    waits = [c for c in ("mpi_coll", "mpi_p2p") if c in ranks]
    if facts.profile.job.has_mpi_time and waits and idle:
        # collectives and point-to-point only: "other" MPI time includes MPI_Init and MPI_Finalize
        wait = _mpi_wait(ranks, waits, idle)
        idle_mpi = float(np.nanmean(wait)) if np.isfinite(wait).any() else float("nan")
        evidence.append(
            Metric("idle_mpi", "mean time of the idle ranks in MPI collectives and messages", idle_mpi, "s")
        )
    else:
        notes.append(
            "This log has no MPI time, so how long the other ranks waited cannot be measured; max - mean of "
            "the I/O time is the estimate."
        )
    writes = float(sum(c2.sum() for c2 in [counter(f, "bytes_written") for f in facts.outermost().values()]))
    reads = c.total - writes
    recs = [
        Recommendation(
            "code",
            (
                "Let every rank move its own part instead of funnelling the data through "
                f"{'rank ' + str(c.doers[0]) if k == 1 else 'a few ranks'}: open one shared file with "
                "MPI_File_open on all ranks and write (or read) each rank's block with a collective call at "
                "its own offset; MPI-IO then chooses a sensible number of aggregators."
            ),
            "MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, "
            "&fh);\nMPI_File_write_at_all(fh, (MPI_Offset)rank * nbytes, buf, nbytes, MPI_BYTE, "
            "MPI_STATUS_IGNORE);",
        )
    ]
    if reads > writes:
        recs.append(
            Recommendation(
                "code",
                (
                    "For input read by one rank and sent to the others, read collectively "
                    "(MPI_File_read_at_all) or have a few ranks read and MPI_Scatter/MPI_Bcast."
                ),
            )
        )
    subjects = [
        Subject(
            "rank",
            f"rank {r}",
            (
                Metric("bytes", "bytes moved", float(c.per_rank_bytes[r]), "B"),
                Metric("io_time", "I/O time", float(io[r]), "s"),
            ),
        )
        for r in c.doers
    ]
    yield finding(
        "LOAD-FEW-RANKS",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=T,
        time_lost=lost,
        subjects=subjects,
        subjects_total=k,
        notes=notes,
        time_basis="estimate: max - mean of per-rank I/O time (spreading the I/O over all ranks "
        "would bring the slowest rank near the mean, if the file system keeps up)",
    )
