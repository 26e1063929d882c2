"""Trace rules: what only the offsets and times of each call show (Darshan DXT, ``pario run --trace``).

The counters say how many requests there were and how long they took in total; a trace says
when each one ran and which bytes it touched.  These rules read the calls at the file-system
level (POSIX and STDIO: for a Darshan log the DXT_POSIX segments, including those made inside
MPI-IO calls), on the application's files only (``ignored_path_patterns``).  Detectors only: the
words are in trace_access_words.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np

from pario.diagnosis import trace_access_words as words
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts
from pario.diagnosis.findings import Severity
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.registry import rule
from pario.names import glob_regex
from pario.table import median as float_median
from pario.trace.activity import Phase, io_activity
from pario.trace.format import LAYER_MASK, LAYER_SHIFT, LAYERS, Kind
from pario.trace.model import FlatEvents, Trace, flat_events

FAMILY = "trace"
#: The layers whose calls reach the file system (bits 8-10 of an event's flags).
_FS_LAYERS = (LAYERS.index("posix"), LAYERS.index("stdio"))


@record
class Calls:
    """Calls as columns: rank, start, end, file, kind, offset (-1 unknown), bytes."""

    rank: np.ndarray
    start: np.ndarray
    end: np.ndarray
    file: np.ndarray
    kind: np.ndarray
    offset: np.ndarray
    nbytes: np.ndarray

    def __len__(self) -> int:
        return len(self.rank)

    def take(self, index: np.ndarray) -> Calls:
        return Calls(*(getattr(self, f)[index] for f in _CALL_FIELDS))


_CALL_FIELDS = ("rank", "start", "end", "file", "kind", "offset", "nbytes")


def _concat_calls(a: Calls, b: Calls) -> Calls:
    return Calls(*(np.concatenate((getattr(a, f), getattr(b, f))) for f in _CALL_FIELDS))


def _columns(flat: FlatEvents, select: str) -> Calls:
    """The I/O calls of ``flat``: ``select`` "fs" (file-system layers) or "outer" (any layer)."""
    ev = flat.events
    keep = (ev["kind"] == Kind.IO_READ) | (ev["kind"] == Kind.IO_WRITE)
    if select == "fs":
        keep &= np.isin((ev["flags"] & LAYER_MASK) >> LAYER_SHIFT, _FS_LAYERS)
    idx = np.flatnonzero(keep)
    return Calls(flat.rank[idx], flat.t0[idx], flat.t1[idx], ev["file"][idx], ev["kind"][idx],
                 ev["aux"][idx].astype(np.int64), ev["bytes"][idx].astype(np.int64))


def app_files(trace: Trace, cfg: RuleConfig) -> np.ndarray:
    """The record ids of the trace's files that are the application's (sorted uint64)."""
    pattern = glob_regex(tuple(cfg.ignored_path_patterns))
    ids = [fid for fid, name in trace.files.items() if not pattern.match(name)]
    return np.array(sorted(ids), dtype=np.uint64)


def fs_calls(facts: Facts, cfg: RuleConfig) -> Calls:
    """The trace's reads and writes at the file-system level on the application's files, by start."""
    trace = facts.profile.trace

    def make() -> Calls:
        if trace is None:
            return _columns(flat_events(()), "fs")
        calls = _concat_calls(_columns(trace.flat, "fs"), _columns(trace.flat_inner, "fs"))
        calls = calls.take(np.flatnonzero(np.isin(calls.file, app_files(trace, cfg))))
        return calls.take(np.argsort(calls.start, kind="stable"))

    return facts.cached(("trace-fs-calls", tuple(cfg.ignored_path_patterns)), make)


def _traced_calls(facts: Facts, cfg: RuleConfig) -> tuple[Trace, Calls] | None:
    """The trace and its calls at the file-system level (:func:`fs_calls`); None without a trace
    (the calls are not made then) or without such calls."""
    trace = facts.profile.trace
    if trace is None:
        return None
    calls = fs_calls(facts, cfg)
    return (trace, calls) if len(calls) else None


def _time_shared(start: np.ndarray, end: np.ndarray) -> tuple[float, float]:
    """(busy, shared): the time at least one call is in flight, and at least two are."""
    times = np.concatenate((start, end))
    steps = np.concatenate((np.ones(len(start), np.int64), -np.ones(len(end), np.int64)))
    order = np.lexsort((steps, times))
    t, level = times[order], np.cumsum(steps[order])
    dt = np.diff(t)
    return float(dt[level[:-1] >= 1].sum()), float(dt[level[:-1] >= 2].sum())


# ---------------------------------------------------------------------------
# TRACE-SERIALISED-IO
# ---------------------------------------------------------------------------

@record
class Serialised(Hit):
    direction: str = "write"  # "write" or "read"
    ranks: int = 0
    calls: int = 0
    nbytes: int = 0
    files: tuple[str, ...] = ()  # by calls, most first
    file_calls: tuple[int, ...] = ()
    first: float = 0.0
    last: float = 0.0
    busy: float = 0.0  # time with a call in flight
    shared: float = 0.0  # time with two calls or more in flight
    longest_rank: float = 0.0  # the most time one rank spends in these calls
    mean_call: float = 0.0
    #: the slowest rank's time inside its outer calls (MPI-IO) that hold these calls, beyond them:
    #: its wait for its turn; None when the calls are not made inside outer calls
    wait: float | None = None
    wait_rank: int = -1
    #: every file is accessed by one rank only (a file per rank): the turns are not about sharing a file
    own_files: bool = False


@rule("TRACE-SERIALISED-IO", title="Ranks take turns doing I/O", family=FAMILY,
      config=("trace_serial_min_ranks", "trace_serial_max_shared"), words=words.serialised)
def serialised_io(facts: Facts, cfg: RuleConfig) -> Iterator[Serialised]:
    """Several ranks read (or write) at the file-system level, but never at the same time: one rank's
    call ends before the next rank's starts (a lock, a token, a rank-ordered loop)."""
    traced = _traced_calls(facts, cfg)
    if traced is None:
        return
    trace, calls = traced
    for kind, direction in ((Kind.IO_WRITE, "write"), (Kind.IO_READ, "read")):
        sel = calls.take(np.flatnonzero(calls.kind == kind))
        ranks = np.unique(sel.rank)
        if len(ranks) < cfg.trace_serial_min_ranks:
            continue
        busy, shared = _time_shared(sel.start, np.maximum(sel.end, sel.start))
        if busy <= 0 or shared > cfg.trace_serial_max_shared * busy:
            continue
        per_rank = np.bincount(np.searchsorted(ranks, sel.rank), weights=sel.end - sel.start)
        fids, counts = np.unique(sel.file, return_counts=True)
        names = [trace.files.get(int(f), f"record {int(f):#x}") for f in fids.tolist()]
        order = sorted(range(len(fids)), key=lambda i: (-int(counts[i]), names[i]))  # most calls first
        wait, wait_rank = _wait_in_outer(trace, sel)
        pairs = np.unique(np.stack([sel.file.astype(np.uint64), sel.rank.astype(np.uint64)]), axis=1)
        own = len(np.unique(pairs[0])) == pairs.shape[1]  # one rank per file
        yield Serialised(
            time_lost=wait, severity=None if wait is not None else Severity.INFO,
            direction=direction, ranks=len(ranks), calls=len(sel), nbytes=int(sel.nbytes.sum()),
            files=tuple(names[i] for i in order), file_calls=tuple(int(counts[i]) for i in order),
            first=float(sel.start.min()), last=float(sel.end.max()), busy=busy, shared=shared,
            longest_rank=float(per_rank.max()), mean_call=float(np.mean(sel.end - sel.start)),
            wait=wait, wait_rank=wait_rank, own_files=own)


def _wait_in_outer(trace: Trace, inner: Calls) -> tuple[float | None, int]:
    """The slowest rank's time in its outer calls (MPI-IO or a library above the file system)
    that hold some of ``inner``'s calls, beyond those calls; (None, -1) when none holds one."""
    outer = _columns(trace.flat, "outer")
    outer = outer.take(np.flatnonzero(~np.isin(_layer_of(trace.flat), _FS_LAYERS)))
    if not len(outer):
        return None, -1
    o = outer.take(np.lexsort((outer.start, outer.rank)))
    i = inner.take(np.lexsort((inner.start, inner.rank)))
    o_bounds = _bounds(o.rank)
    i_bounds = _bounds(i.rank)
    waits: dict[int, float] = {}
    for r, (ia, ib) in i_bounds.items():
        if r not in o_bounds:
            continue
        oa, ob = o_bounds[r]
        os_, oe = o.start[oa:ob], o.end[oa:ob]
        is_, ie = i.start[ia:ib], i.end[ia:ib]
        j = np.searchsorted(os_, is_, side="right") - 1
        jj = np.maximum(j, 0)
        inside = (j >= 0) & (oe[jj] >= ie)
        if not inside.any():
            continue
        holders = np.unique(j[inside])
        held = np.bincount(j[inside], weights=(ie - is_)[inside], minlength=len(os_))
        waits[r] = float(np.sum((oe - os_)[holders] - held[holders]))
    if not waits:
        return None, -1
    rank = max(waits, key=lambda k: waits[k])
    return waits[rank], rank


def _layer_of(flat: FlatEvents) -> np.ndarray:
    """The layer of each read and write of ``flat``, in :func:`_columns`' order."""
    ev = flat.events
    keep = (ev["kind"] == Kind.IO_READ) | (ev["kind"] == Kind.IO_WRITE)
    return ((ev["flags"][keep] & LAYER_MASK) >> LAYER_SHIFT).astype(np.int64)


def _bounds(rank: np.ndarray) -> dict[int, tuple[int, int]]:
    """rank -> (first row, end row) of rows sorted by rank."""
    if not len(rank):
        return {}
    cut = np.flatnonzero(np.diff(rank)) + 1
    starts = np.concatenate(([0], cut))
    stops = np.concatenate((cut, [len(rank)]))
    return {int(rank[a]): (int(a), int(b)) for a, b in zip(starts, stops, strict=True)}


# ---------------------------------------------------------------------------
# TRACE-WRITE-OVERLAP
# ---------------------------------------------------------------------------

@record
class OverlapFile:
    name: str
    overlap_bytes: int  # bytes written by two ranks or more
    written_bytes: int  # distinct bytes written
    ranks: tuple[int, ...]  # ranks that wrote some of the overlapping bytes
    writers: int  # ranks that wrote the file


@record
class WriteOverlap(Hit):
    files: tuple[OverlapFile, ...] = ()  # most overlapping bytes first
    through_mpiio: bool = False  # the overlapping writes were made inside MPI-IO calls


@rule("TRACE-WRITE-OVERLAP", title="Ranks write the same bytes", family=FAMILY,
      config=("trace_overlap_min_bytes",), words=words.write_overlap)
def write_overlap(facts: Facts, cfg: RuleConfig) -> Iterator[WriteOverlap]:
    """Two ranks or more write the same bytes of a file (from the offsets of their writes): the
    file's content then depends on which write lands last."""
    traced = _traced_calls(facts, cfg)
    if traced is None:
        return
    trace, calls = traced
    w = calls.take(np.flatnonzero((calls.kind == Kind.IO_WRITE) & (calls.offset >= 0) & (calls.nbytes > 0)))
    found = []
    for fid in np.unique(w.file).tolist():
        f = w.take(np.flatnonzero(w.file == fid))
        if len(np.unique(f.rank)) < 2:
            continue
        overlap, written, ranks = _overlap(f.rank, f.offset, f.offset + f.nbytes)
        if overlap >= cfg.trace_overlap_min_bytes:
            name = trace.files.get(int(fid), f"record {int(fid):#x}")
            found.append(OverlapFile(name, overlap, written, ranks, len(np.unique(f.rank))))
    if not found:
        return
    found.sort(key=lambda o: -o.overlap_bytes)
    inner_ranks = {rt.rank for rt in trace.inner if len(rt.events)}
    through = bool(inner_ranks) and all(r in inner_ranks for o in found for r in o.ranks)
    yield WriteOverlap(severity=Severity.WARNING, files=tuple(found), through_mpiio=through)


def _overlap(rank: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[int, int, tuple[int, ...]]:
    """Bytes covered by two ranks or more, distinct bytes covered, and the ranks covering the former.

    Each rank's intervals are merged first (a rank rewriting its own bytes is not an overlap
    between ranks), then coverage is counted over all ranks' merged intervals."""
    r_all, s_all, e_all = [], [], []
    order = np.argsort(rank, kind="stable")
    rank, lo, hi = rank[order], lo[order], hi[order]
    for r, (a, b) in _bounds(rank).items():
        s, e = _merge(lo[a:b], hi[a:b])
        r_all.append(np.full(len(s), r, dtype=np.int64))
        s_all.append(s)
        e_all.append(e)
    rr, ss, ee = np.concatenate(r_all), np.concatenate(s_all), np.concatenate(e_all)
    points = np.concatenate((ss, ee))
    steps = np.concatenate((np.ones(len(ss), np.int64), -np.ones(len(ee), np.int64)))
    order = np.lexsort((steps, points))
    p, level = points[order], np.cumsum(steps[order])
    width = np.diff(p)
    overlap = int(width[level[:-1] >= 2].sum())
    written = int(width[level[:-1] >= 1].sum())
    if not overlap:
        return 0, written, ()
    # the stretches covered twice or more, and the ranks whose intervals meet them
    multi = np.flatnonzero((level[:-1] >= 2) & (width > 0))
    m_lo, m_hi = p[multi], p[multi + 1]
    ranks: set[int] = set()
    for a, b in zip(m_lo.tolist(), m_hi.tolist(), strict=True):
        ranks.update(rr[(ss < b) & (ee > a)].tolist())
        if len(ranks) >= 64:
            break
    return overlap, written, tuple(sorted(ranks))


def _merge(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of the intervals [lo, hi) as sorted, disjoint intervals."""
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    reach = np.maximum.accumulate(hi)
    new = np.empty(len(lo), dtype=bool)
    new[0] = True
    new[1:] = lo[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.concatenate((first[1:] - 1, [len(lo) - 1]))
    return lo[first], reach[last]


@record
class ReadSharing:
    """Whose bytes the ranks read of one file, from the offsets of its file-system reads."""

    read: int  # distinct bytes read (over all ranks)
    across: int  # of them, bytes read by two ranks or more
    own_written: int  # bytes a rank read that it wrote itself, summed over ranks


def read_sharing(facts: Facts, cfg: RuleConfig, fid: int) -> ReadSharing | None:
    """How the reads of file ``fid`` are shared between ranks (None: the trace has no read of it)."""
    calls = fs_calls(facts, cfg)
    known = (calls.offset >= 0) & (calls.nbytes > 0)
    mine = calls.take(np.flatnonzero((calls.file == np.uint64(fid)) & known))
    reading = mine.kind == Kind.IO_READ
    if not reading.any():
        return None
    r = mine.take(np.flatnonzero(reading))
    across, read, _ = _overlap(r.rank, r.offset, r.offset + r.nbytes)
    w = mine.take(np.flatnonzero(mine.kind == Kind.IO_WRITE))
    own = 0
    for rank in np.unique(r.rank).tolist():
        rr, ww = r.take(np.flatnonzero(r.rank == rank)), w.take(np.flatnonzero(w.rank == rank))
        if len(ww):
            # each side merged, so bytes covered by both are those read and written by this rank
            both = np.concatenate((np.zeros(len(rr), np.int64), np.ones(len(ww), np.int64)))
            own += _overlap(both, np.concatenate((rr.offset, ww.offset)),
                            np.concatenate((rr.offset + rr.nbytes, ww.offset + ww.nbytes)))[0]
    return ReadSharing(read=read, across=across, own_written=own)


# ---------------------------------------------------------------------------
# TRACE-ACCESS-PATTERN
# ---------------------------------------------------------------------------

#: How each request of a rank moves from the end of its previous one on the same file.
SEQUENTIAL, STRIDED, BACKWARD, IRREGULAR = words.SEQUENTIAL, words.STRIDED, words.BACKWARD, words.IRREGULAR
#: ... or starts where the previous one started: the same bytes again
REPEATED = words.REPEATED


@record
class PatternFile:
    name: str
    pattern: str  # STRIDED, REPEATED, or BACKWARD / IRREGULAR (random)
    calls: int  # requests in this direction
    steps: dict[str, int]  # requests after the first of each rank, by how they move
    request: float  # mean request size (bytes)
    stride: int  # the gap most strided steps skip (bytes; 0 when not strided)
    ranks: int
    time: float  # time in these calls, all ranks
    offset: int = -1  # the offset most repeated requests start at (REPEATED)


@record
class AccessPattern(Hit):
    direction: str = "write"
    files: tuple[PatternFile, ...] = ()  # the most time first
    calls: int = 0  # requests of the files named
    mpiio: bool = False  # the calls were made inside MPI-IO calls
    nprocs: int = 1


@rule("TRACE-ACCESS-PATTERN", title="Small requests in a strided or random order (from their offsets)",
      family=FAMILY, config=("trace_pattern_min_calls", "trace_pattern_min_share", "small_request_bytes"),
      words=words.access_pattern)
def access_pattern(facts: Facts, cfg: RuleConfig) -> Iterator[AccessPattern]:
    """Each rank's small requests to a file skip over the same gap again and again (strided) or jump
    about (random), read from the offsets of the calls: what the counters cannot tell apart."""
    traced = _traced_calls(facts, cfg)
    if traced is None:
        return
    trace, calls = traced
    inner = {rt.rank for rt in trace.inner if len(rt.events)}
    for kind, direction in ((Kind.IO_WRITE, "write"), (Kind.IO_READ, "read")):
        sel = calls.take(np.flatnonzero((calls.kind == kind) & (calls.offset >= 0) & (calls.nbytes > 0)))
        patterns = (_file_pattern(trace, sel.take(np.flatnonzero(sel.file == fid)), fid, cfg)
                    for fid in np.unique(sel.file).tolist())
        found = [f for f in patterns if f is not None]
        if not found:
            continue
        found.sort(key=lambda f: -f.time)
        named = calls.take(np.flatnonzero((calls.kind == kind) & np.isin(
            calls.file, [fid for fid, name in trace.files.items() if name in {f.name for f in found}])))
        per_rank = np.bincount(named.rank, weights=named.end - named.start, minlength=trace.nprocs)
        yield AccessPattern(time_lost=float(per_rank.max()), direction=direction, files=tuple(found),
                            calls=sum(f.calls for f in found), nprocs=trace.nprocs,
                            mpiio=bool(inner) and set(np.unique(named.rank).tolist()) <= inner)


def _file_pattern(trace: Trace, c: Calls, fid: int, cfg: RuleConfig) -> PatternFile | None:
    """The pattern of one file's requests in one direction, None when it is not worth a finding
    (few requests, large ones, or mostly sequential)."""
    if len(c) < cfg.trace_pattern_min_calls or float(c.nbytes.mean()) > cfg.small_request_bytes:
        return None
    steps, stride, offset = _steps(c)
    moved = sum(steps.values())
    if not moved:
        return None
    random = steps[BACKWARD] + steps[IRREGULAR]
    if steps[STRIDED] >= cfg.trace_pattern_min_share * moved:
        pattern = STRIDED
    elif steps[REPEATED] >= cfg.trace_pattern_min_share * moved and steps[REPEATED] >= random:
        pattern = REPEATED
    elif random >= cfg.trace_pattern_min_share * moved:
        pattern = BACKWARD if steps[BACKWARD] >= steps[IRREGULAR] else IRREGULAR
    else:
        return None
    name = trace.files.get(int(fid), f"record {int(fid):#x}")
    kept_stride = stride if pattern == STRIDED else 0
    ranks = len(np.unique(c.rank))
    return PatternFile(name, pattern, len(c), steps, float(c.nbytes.mean()), kept_stride, ranks,
                       float((c.end - c.start).sum()), offset if pattern == REPEATED else -1)


def _steps(c: Calls) -> tuple[dict[str, int], int, int]:
    """How each rank's requests (in the order they started) move from the previous one: onto its
    end (sequential), back to its start (repeated: the same bytes again), forward by the rank's
    most common gap (strided), backwards, or forward by another gap (irregular); the most common
    strided gap over all ranks, and the offset most repeated requests start at (-1: none)."""
    order = np.lexsort((c.start, c.rank))
    rank, lo = c.rank[order], c.offset[order]
    hi = lo + c.nbytes[order]
    same = rank[1:] == rank[:-1]
    gap = (lo[1:] - hi[:-1])[same]
    again = (lo[1:] == lo[:-1])[same]
    step_rank = rank[1:][same]
    strided = np.zeros(len(gap), dtype=bool)
    forward = gap > 0
    gaps: dict[int, int] = {}
    for r in np.unique(step_rank[forward]).tolist():
        mine = np.flatnonzero(forward & (step_rank == r))
        values, counts = np.unique(gap[mine], return_counts=True)
        common = values[np.argmax(counts)]
        if counts.max() >= 2:
            strided[mine[gap[mine] == common]] = True
            gaps[int(common)] = gaps.get(int(common), 0) + int(counts.max())
    out = {SEQUENTIAL: int(np.count_nonzero(gap == 0)), STRIDED: int(np.count_nonzero(strided)),
           REPEATED: int(np.count_nonzero(again & (gap < 0))),
           BACKWARD: int(np.count_nonzero((gap < 0) & ~again)),
           IRREGULAR: int(np.count_nonzero(forward & ~strided))}
    starts = lo[1:][same][again & (gap < 0)]
    offset = -1
    if len(starts):
        values, counts = np.unique(starts, return_counts=True)
        offset = int(values[np.argmax(counts)])
    return out, max(gaps, key=lambda g: gaps[g]) if gaps else 0, offset


# ---------------------------------------------------------------------------
# TRACE-PHASE-STRAGGLERS
# ---------------------------------------------------------------------------

@record
class Straggler:
    rank: int
    finish: float  # its last call's end in the phase
    io_time: float  # its time in I/O calls in the phase
    first: float  # its first call's start in the phase


@record
class PhaseStragglers(Hit):
    start: float = 0.0  # the phase, on the job's time base
    end: float = 0.0
    ranks: int = 0  # ranks in the phase
    median_finish: float = 0.0
    median_io: float = 0.0  # the median rank's I/O time in the phase
    median_first: float = 0.0  # the median rank's first call's start
    stragglers: tuple[Straggler, ...] = ()  # the latest first
    phases: int = 1  # phases with stragglers (this one is the costliest)


@rule("TRACE-PHASE-STRAGGLERS", title="A few ranks finish an I/O phase long after the others",
      family=FAMILY, config=("straggler_min_ratio", "straggler_max_share", "min_time_lost_share"),
      words=words.phase_stragglers, time_class="wait")
def phase_stragglers(facts: Facts, cfg: RuleConfig) -> Iterator[PhaseStragglers]:
    """Within one I/O phase of the trace (calls between idle gaps), a few ranks end their I/O much
    later than the median rank: the others wait for them at the next synchronisation."""
    trace = facts.profile.trace
    if trace is None:
        return
    apps = app_files(trace, cfg)
    act = facts.cached(("trace-activity", tuple(cfg.ignored_path_patterns)),
                       lambda: io_activity(trace, lambda ids: np.isin(ids, apps)))
    hits = [h for p in act.phases if (h := _stragglers_of(trace, p, apps, cfg)) is not None]
    hits = [h for h in hits if (h.time_lost or 0.0) >= cfg.min_time_lost_share * facts.runtime]
    if hits:
        worst = max(hits, key=lambda h: h.time_lost or 0.0)
        yield dataclasses.replace(worst, phases=len(hits))


def _stragglers_of(trace: Trace, p: Phase, apps: np.ndarray, cfg: RuleConfig) -> PhaseStragglers | None:
    """The ranks of phase ``p`` whose time from the phase's start to their finish is at least
    ``straggler_min_ratio`` times the median rank's, when they are few; None otherwise."""
    if len(p.ranks) < 4:
        return None
    took = p.finish - p.start
    median = float_median(took)
    late = np.flatnonzero(took >= cfg.straggler_min_ratio * median) if median > 0 else np.zeros(0, np.int64)
    if not len(late) or len(late) > max(1, int(cfg.straggler_max_share * len(p.ranks))):
        return None
    firsts = _first_starts(trace, p, apps)
    order = late[np.argsort(-p.finish[late])]
    stragglers = tuple(Straggler(int(p.ranks[i]), float(p.finish[i]), float(p.io_time[i]), float(firsts[i]))
                       for i in order)
    median_finish = p.start + median
    return PhaseStragglers(time_lost=float(p.finish[order[0]]) - median_finish, start=p.start, end=p.end,
                           ranks=len(p.ranks), median_finish=median_finish,
                           median_io=float_median(p.io_time), median_first=float_median(firsts),
                           stragglers=stragglers)


def _first_starts(trace: Trace, p: Phase, apps: np.ndarray) -> np.ndarray:
    """Each rank of phase ``p``: the start of its first outermost I/O call in the phase (on the
    application's files ``apps``)."""
    flat = trace.flat
    ev = flat.events
    io = (ev["kind"] >= Kind.IO_READ) & (ev["kind"] <= Kind.IO_META) & np.isin(ev["file"], apps)
    io &= (flat.t0 >= p.start) & (flat.t0 <= p.end)
    rank, t0 = flat.rank[io], flat.t0[io]
    first = np.full(len(p.ranks), np.inf)
    pos = np.searchsorted(p.ranks, rank)
    ok = (pos < len(p.ranks)) & (p.ranks[np.minimum(pos, len(p.ranks) - 1)] == rank)
    np.minimum.at(first, pos[ok], t0[ok])
    return first
