"""The per-rank timeline of a traced run (docs/trace.md): segments, binning, the Plotly figure.

A rank's timeline is a partition of its time, from its origin to its end, into calls
(one segment per call: a record and its ``CONT`` parts) and the gaps between them, which
are computation.  Each segment has a class: computation, MPI collective, MPI
point-to-point, other MPI, read, write, metadata.

Above a budget of drawn segments (:data:`BUDGET`), short segments that follow each other
on a rank are merged into bins of about one bin width: a bin is drawn as one bar per class
whose lengths are the class's total time in the bin, laid end to end, so that every rank's
time per class stays exact and the page stays a few MB.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import numpy as np

from pario.trace.format import COLLECTIVES, FLAG_CONT, FLAG_NONBLOCKING, LAYER_MASK, LAYER_SHIFT, Kind
from pario.trace.model import FlatEvents, RankTrace, Trace, flat_events

#: Segment classes, in drawing and stacking order.
CLASSES = ("compute", "collective", "p2p", "mpi_other", "read", "write", "meta")
COMPUTE, COLLECTIVE, P2P, MPI_OTHER, READ, WRITE, META = range(len(CLASSES))
CLASS_LABELS = ("computation", "MPI collective", "MPI point-to-point", "MPI other", "read", "write",
                "metadata")
CLASS_COLOURS = ("#4caf50", "#1565c0", "#64b5f6", "#b0bec5", "#ff9800", "#e53935", "#9c27b0")
#: At most this many segments are drawn; above it the timeline is binned.
BUDGET = 20_000
LAYER_LABELS = ("POSIX", "STDIO", "MPI-IO", "HDF5 file", "HDF5 dataset", "PnetCDF file", "PnetCDF variable")
#: Below this many ranks every rank's row is labelled.
MAX_LABELLED_RANKS = 64

#: The gaps of a trace without MPI calls (Darshan's DXT): not computation, only not traced I/O.
DXT_GAP_LABEL = "no read or write traced"
DXT_GAP_COLOUR = "#eceff1"
_IO_KINDS = (Kind.IO_READ, Kind.IO_WRITE, Kind.IO_META)

_P2P_KINDS = (Kind.SEND, Kind.SSEND, Kind.RECV, Kind.ISEND, Kind.ISSEND, Kind.IRECV, Kind.WAIT,
              Kind.COMPLETE)


def _class_table() -> np.ndarray:
    table = np.full(1 << 16, MPI_OTHER, dtype=np.int8)
    table[list(_P2P_KINDS)] = P2P
    table[sorted(COLLECTIVES)] = COLLECTIVE
    table[Kind.IO_READ] = READ
    table[Kind.IO_WRITE] = WRITE
    table[Kind.IO_META] = META
    return table


_CLASS_OF_KIND = _class_table()


@dataclass(frozen=True)
class Segments:
    """Segments as columns, ordered by rank then start (seconds on the job's time base)."""

    rank: np.ndarray  # int64
    start: np.ndarray  # float64
    end: np.ndarray  # float64
    cls: np.ndarray  # int8, an index in CLASSES
    #: the call's event kind (its first record); 0 for computation and merged segments
    kind: np.ndarray  # uint16
    #: the flags of the call's first record (the I/O layer); 0 for computation and merged
    flags: np.ndarray  # uint16
    #: bytes of the call's records (all its parts), or of the calls merged
    nbytes: np.ndarray  # uint64
    #: the file record id of an I/O call; 0 otherwise
    file: np.ndarray  # uint64
    #: calls the segment covers (0 for computation)
    calls: np.ndarray  # int64
    #: segments merged into this one (1: as recorded)
    merged: np.ndarray  # int64
    #: the file offset of an I/O call (its first record's ``aux``); -1 unknown, merged or not I/O
    offset: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.rank)

    @property
    def duration(self) -> np.ndarray:
        return self.end - self.start

    def take(self, index: np.ndarray) -> Segments:
        return Segments(*(getattr(self, name)[index] for name in _COLUMNS))

    def totals(self) -> dict[tuple[int, int], float]:
        """(rank, class) -> total seconds."""
        out: dict[tuple[int, int], float] = {}
        for r, c, d in zip(self.rank.tolist(), self.cls.tolist(), self.duration.tolist(), strict=True):
            out[(r, c)] = out.get((r, c), 0.0) + d
        return out


_COLUMNS = ("rank", "start", "end", "cls", "kind", "flags", "nbytes", "file", "calls", "merged", "offset")
_DTYPES = (np.int64, np.float64, np.float64, np.int8, np.uint16, np.uint16, np.uint64, np.uint64, np.int64,
           np.int64, np.int64)


def _concat(parts: list[Segments]) -> Segments:
    if not parts:
        return Segments(*(np.empty(0, dtype=dt) for dt in _DTYPES))
    return Segments(*(np.concatenate([getattr(p, name) for p in parts]).astype(dt, copy=False)
                      for name, dt in zip(_COLUMNS, _DTYPES, strict=True)))


def _sorted(segs: Segments) -> Segments:
    return segs.take(np.lexsort((segs.start, segs.rank)))


@dataclass(frozen=True)
class Timeline:
    segments: Segments
    #: the ranks traced, in order
    ranks: tuple[int, ...]
    #: the job's span on its time base (earliest rank origin, latest rank end)
    start: float
    end: float
    #: segments before binning
    recorded: int
    #: the bin width in seconds if short segments were merged, else None
    bin_width: float | None = None
    #: the most segments drawn
    budget: int = BUDGET
    #: what the gaps between calls are: computation when the MPI calls were traced (pario), else
    #: everything that is not a traced I/O call (a Darshan DXT trace)
    gap_label: str = CLASS_LABELS[COMPUTE]

    @property
    def binned(self) -> bool:
        return self.bin_width is not None


def call_classes(events: np.ndarray, first: np.ndarray, rank: np.ndarray | None = None) -> np.ndarray:
    """The class of each call (``first``: index of each call's first record; ``rank``: each
    record's rank when ``events`` are several ranks' one after the other).

    A wait whose completed requests are all nonblocking collectives is a collective; any
    other wait is point-to-point.  Request ids are the rank's own.
    """
    cls = _CLASS_OF_KIND[events["kind"][first]].copy()
    kinds = events["kind"]
    completes = kinds == Kind.COMPLETE
    of_coll = np.zeros(len(events), dtype=bool)
    done = np.flatnonzero(completes)
    if len(done):
        posted = np.flatnonzero((events["flags"] & FLAG_NONBLOCKING).astype(bool)
                                & np.isin(kinds, sorted(COLLECTIVES)))
        aux = events["aux"].astype(np.int64)
        if rank is None:
            of_coll[done] = np.isin(aux[done], aux[posted])
        else:  # (rank, request id) pairs
            pairs = np.stack((rank, aux), axis=1)
            key = np.unique(pairs[posted], axis=0) if len(posted) else np.zeros((0, 2), np.int64)
            of_coll[done] = _row_in(pairs[done], key)
    n_complete = np.add.reduceat(completes.astype(np.int64), first) if len(first) else first
    n_coll = np.add.reduceat(of_coll.astype(np.int64), first) if len(first) else first
    waits = (kinds[first] == Kind.WAIT) & (n_complete > 0) & (n_complete == n_coll)
    cls[waits] = COLLECTIVE
    return cls


def _row_in(rows: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Whether each row of ``rows`` is a row of ``table`` (sorted, unique: np.unique(axis=0))."""
    if not len(table):
        return np.zeros(len(rows), dtype=bool)
    dt = np.dtype([("a", np.int64), ("b", np.int64)])
    t = np.ascontiguousarray(table).view(dt).ravel()
    r = np.ascontiguousarray(rows).view(dt).ravel()
    pos = np.minimum(np.searchsorted(t, r), len(t) - 1)
    return t[pos] == r


def rank_segments(rt: RankTrace) -> Segments:
    """One rank's calls and the computation between them, in time order.

    A ``FINALIZE`` event ends the timeline and is not a segment; gaps of zero or negative
    length are not segments.
    """
    return _segments(flat_events((rt,)), np.array([rt.start]), np.array([rt.end]))


def trace_segments(trace: Trace) -> Segments:
    """Every rank's segments, by rank then time (all ranks at once: a trace may have thousands)."""
    rts = sorted(trace.ranks, key=lambda r: r.rank)
    return _segments(flat_events(tuple(rts)), np.array([r.start for r in rts], dtype=np.float64),
                     np.array([r.end for r in rts], dtype=np.float64))


def _segments(flat: FlatEvents, starts: np.ndarray, ends: np.ndarray) -> Segments:
    """The calls and gaps of the ranks of ``flat`` (``starts``/``ends``: each rank's origin and end)."""
    ev = flat.events
    n = len(ev)
    nranks = len(flat.ranks)
    is_first = ~((ev["flags"] & FLAG_CONT).astype(bool))
    is_first[flat.bounds[:-1][np.diff(flat.bounds) > 0]] = True  # each rank's first record starts a call
    first = np.flatnonzero(is_first)
    call_end = np.maximum.reduceat(flat.t1, first) if n else np.empty(0)
    call_start = flat.t0[first]
    keep = ev["kind"][first] != Kind.FINALIZE
    ncalls = len(first)
    calls = Segments(
        rank=flat.rank[first], start=call_start.astype(np.float64),
        end=call_end.astype(np.float64),
        cls=call_classes(ev, first, flat.rank) if n else np.empty(0, np.int8),
        kind=ev["kind"][first], flags=ev["flags"][first],
        nbytes=np.add.reduceat(ev["bytes"], first) if n else np.empty(0, np.uint64),
        file=ev["file"][first], calls=np.ones(ncalls, dtype=np.int64), merged=np.ones(ncalls, dtype=np.int64),
        offset=np.where(np.isin(ev["kind"][first], _IO_KINDS)
                        & ~(ev["flags"][first] & FLAG_NONBLOCKING).astype(bool), ev["aux"][first], -1),
    ).take(np.flatnonzero(keep))
    # computation, per rank: from the origin to the first call, between calls, from the last call
    # to the end.  Rank i's rows are gap 0, call 0, gap 1, ..., call k-1, gap k from row base[i]:
    # already in time order when its calls are (they are: a rank's events are in call order)
    ri = np.searchsorted(flat.ranks, calls.rank)
    count = np.bincount(ri, minlength=nranks)
    base = np.cumsum(2 * count + 1) - (2 * count + 1)
    kth = np.arange(len(calls)) - (np.cumsum(count) - count)[ri]
    call_row = base[ri] + 2 * kth + 1
    gap_start = np.empty(len(calls) + nranks)
    gap_end = np.empty(len(calls) + nranks)
    at = np.cumsum(count + 1) - (count + 1)  # rank i's first gap among the gaps
    gap_start[at] = starts
    gap_start[at[ri] + kth + 1] = calls.end
    gap_end[at[ri] + kth] = calls.start
    last_end = np.full(nranks, -np.inf)
    has = count > 0
    last_end[has] = calls.end[np.cumsum(count)[has] - 1]
    gap_end[at + count] = np.maximum(ends, last_end)
    gap_rank = np.repeat(np.arange(nranks), count + 1)
    gap_row = base[gap_rank] + 2 * (np.arange(len(gap_start)) - at[gap_rank])
    total = len(calls) + len(gap_start)
    cols = {}
    for name, dt in zip(_COLUMNS, _DTYPES, strict=True):
        col = np.zeros(total, dtype=dt)
        col[call_row] = getattr(calls, name)
        cols[name] = col
    cols["rank"][gap_row] = flat.ranks[gap_rank]
    cols["start"][gap_row] = gap_start
    cols["end"][gap_row] = gap_end
    cols["cls"][gap_row] = COMPUTE
    cols["merged"][gap_row] = 1
    cols["offset"][gap_row] = -1
    keep = np.ones(total, dtype=bool)
    keep[gap_row] = gap_end > gap_start
    segs = Segments(**cols).take(np.flatnonzero(keep))
    # events out of time order in a rank (not made by pario's runtime nor by the DXT reader): sort
    if len(segs) > 1 and np.any((np.diff(segs.start) < 0) & (segs.rank[1:] == segs.rank[:-1])):
        return _sorted(segs)
    return segs


def merge_short(segs: Segments, width: float, origin: float) -> Segments:
    """Merge runs of segments shorter than ``width`` that start in the same bin of ``width``.

    ``segs`` must be ordered by rank then start, a rank's segments not overlapping.  A
    segment at least ``width`` long is kept, and so is a short one alone in its run and bin.
    A group of two or more becomes one segment per class present, laid end to end from the
    group's start in class order, each as long as the class's total in the group: per rank,
    the time of each class is unchanged.
    """
    n = len(segs)
    if n == 0:
        return segs
    short = segs.duration < width
    # a long segment, or another rank, starts a new run; a short one joins the group of the
    # previous short one if it is in the same run and the same bin
    run = np.cumsum(~short)
    bins = np.floor((segs.start - origin) / width).astype(np.int64)
    idx = np.flatnonzero(short)
    new_group = np.ones(len(idx), dtype=bool)
    if len(idx) > 1:
        prev, cur = idx[:-1], idx[1:]
        new_group[1:] = ((segs.rank[cur] != segs.rank[prev]) | (run[cur] != run[prev])
                         | (bins[cur] != bins[prev]))
    group = np.cumsum(new_group) - 1
    sizes = np.bincount(group)
    alone = sizes[group] == 1
    kept = segs.take(np.sort(np.concatenate((np.flatnonzero(~short), idx[alone]))))
    members = idx[~alone]
    mgroup = group[~alone]
    if not len(members):
        return kept
    # renumber the groups of two or more from 0
    _, g = np.unique(mgroup, return_inverse=True)
    ngroups = int(g.max()) + 1
    ncls = len(CLASSES)
    cell = g * ncls + segs.cls[members].astype(np.int64)
    total = np.bincount(cell, weights=segs.duration[members], minlength=ngroups * ncls).reshape(ngroups, ncls)
    # segments merged (an already merged segment counts its own)
    count = np.bincount(cell, weights=segs.merged[members], minlength=ngroups * ncls).reshape(ngroups, ncls)
    ncalls = np.bincount(cell, weights=segs.calls[members], minlength=ngroups * ncls).reshape(ngroups, ncls)
    nbytes = np.bincount(cell, weights=segs.nbytes[members].astype(np.float64),
                         minlength=ngroups * ncls).reshape(ngroups, ncls)
    first = members[np.unique(g, return_index=True)[1]]  # the first member of each group
    offsets = np.cumsum(total, axis=1) - total
    starts = segs.start[first][:, None] + offsets
    present = count > 0
    gi, ci = np.nonzero(present)
    m = len(gi)
    zeros = np.zeros(m, dtype=np.int64)
    merged = Segments(rank=segs.rank[first][gi], start=starts[gi, ci], end=starts[gi, ci] + total[gi, ci],
                      cls=ci.astype(np.int8), kind=zeros.astype(np.uint16), flags=zeros.astype(np.uint16),
                      nbytes=np.round(nbytes[gi, ci]).astype(np.uint64), file=zeros.astype(np.uint64),
                      calls=np.round(ncalls[gi, ci]).astype(np.int64),
                      merged=np.round(count[gi, ci]).astype(np.int64),
                      offset=np.full(m, -1, dtype=np.int64))
    return _sorted(_concat([kept, merged]))


def within_budget(segs: Segments, origin: float, span: float, nranks: int,
                  budget: int = BUDGET) -> tuple[Segments, float | None]:
    """``segs`` if there are at most ``budget``, else merged with the smallest bin width
    (doubling from span × ranks / budget) that brings them under it; and that width.

    Each doubling merges the previous result again (bins of 2w hold two bins of w, and a merged
    group starts where its first segment did), so only the first pass sees every segment."""
    if len(segs) <= budget or span <= 0:
        return segs, None
    width = span * max(nranks, 1) / budget
    out = segs
    while True:
        out = merge_short(out, width, origin)
        if len(out) <= budget or width > 2 * span:
            return out, width
        width *= 2


def timeline(trace: Trace, budget: int = BUDGET) -> Timeline:
    """The timeline of a trace, binned if it has more than ``budget`` segments."""
    segs = trace_segments(trace)
    ranks = tuple(sorted(r.rank for r in trace.ranks))
    starts = [r.start for r in trace.ranks]
    ends = [max(r.end, float(r.t1.max()) if len(r.t1) else r.end) for r in trace.ranks]
    start = min(starts) if starts else 0.0
    end = max(ends) if ends else 0.0
    drawn, width = within_budget(segs, start, end - start, len(ranks), budget)
    gaps = CLASS_LABELS[COMPUTE] if trace.has_mpi else DXT_GAP_LABEL
    return Timeline(drawn, ranks, start, end, len(segs), width, budget, gaps)


# ---------------------------------------------------------------------------
# the figure
# ---------------------------------------------------------------------------

def _duration_text(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} µs"


def _bytes_text(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def call_label(kind: int, flags: int) -> str:
    """What a call is: its kind, with the layer for I/O ('MPI-IO write', 'ALLREDUCE')."""
    try:
        k = Kind(kind)
    except ValueError:
        return f"kind {kind}"
    if k in (Kind.IO_READ, Kind.IO_WRITE, Kind.IO_META):
        layer = (flags & LAYER_MASK) >> LAYER_SHIFT
        name = LAYER_LABELS[layer] if layer < len(LAYER_LABELS) else f"layer {layer}"
        what = {Kind.IO_READ: "read", Kind.IO_WRITE: "write", Kind.IO_META: "metadata"}[k]
        return f"{name} {what}"
    return "other MPI call" if k == Kind.MPI_OTHER else k.name


def hover_texts(segs: Segments, files: dict[int, str], gap_label: str = CLASS_LABELS[COMPUTE]) -> list[str]:
    """One hover text per segment; file names are HTML-escaped (Plotly's hover labels read
    markup, and decode &lt; &gt; &amp; back to the characters)."""
    labels = (gap_label, *CLASS_LABELS[1:])
    out = []
    for i in range(len(segs)):
        cls = int(segs.cls[i])
        dur = float(segs.end[i] - segs.start[i])
        head = f"rank {int(segs.rank[i])} · "
        if segs.merged[i] > 1:
            what = labels[cls]
            calls = int(segs.calls[i])
            lines = [head + f"{what}, binned: {int(segs.merged[i])} segments"
                     + (f", {calls} calls" if calls else "")]
        elif cls == COMPUTE:
            lines = [head + gap_label]
        else:
            lines = [head + call_label(int(segs.kind[i]), int(segs.flags[i]))]
            fid = int(segs.file[i])
            if fid:
                lines.append("file: " + html.escape(files.get(fid, f"record {fid:#x}"), quote=False))
        if segs.nbytes[i] and segs.offset[i] >= 0:
            lines.append(f"{_bytes_text(int(segs.nbytes[i]))} at offset {int(segs.offset[i])}")
        elif segs.nbytes[i]:
            lines.append(_bytes_text(int(segs.nbytes[i])))
        lines.append(f"{_duration_text(dur)} from {float(segs.start[i]):.6f} s")
        out.append("<br>".join(lines))
    return out


def timeline_figure(tl: Timeline, files: dict[int, str]) -> dict[str, Any]:
    """A Plotly figure: one row per rank (rank 0 on top), time on x, one bar trace per class."""
    segs = tl.segments
    texts = np.array(hover_texts(segs, files, tl.gap_label), dtype=object)
    traces = []
    for c, (name, label) in enumerate(zip(CLASSES, (tl.gap_label, *CLASS_LABELS[1:]), strict=True)):
        sel = np.flatnonzero(segs.cls == c)
        if not len(sel):
            continue
        traces.append({
            "type": "bar", "orientation": "h", "name": label, "meta": name,
            "y": segs.rank[sel].tolist(), "base": np.round(segs.start[sel], 9).tolist(),
            "x": np.round(segs.duration[sel], 9).tolist(), "width": 0.8,
            "hovertext": texts[sel].tolist(), "hoverinfo": "text",
            "marker": {"color": _colour(c, tl.gap_label), "line": {"width": 0}},
        })
    nranks = len(tl.ranks)
    yaxis: dict[str, Any] = {"title": {"text": "rank"}, "autorange": "reversed", "fixedrange": True,
                             "zeroline": False}
    if nranks <= MAX_LABELLED_RANKS:
        yaxis.update(tickmode="array", tickvals=list(tl.ranks), ticktext=[f"rank {r}" for r in tl.ranks])
    title = "Timeline per rank"
    if tl.binned:
        title += f" (binned: {len(segs)} of {tl.recorded} segments drawn)"
    layout = {
        "title": {"text": title, "font": {"size": 15}, "x": 0, "xanchor": "left"}, "barmode": "overlay",
        "bargap": 0, "height": int(min(900, max(260, 26 * nranks + 170))), "hovermode": "closest",
        "dragmode": "zoom", "margin": {"l": 80, "r": 20, "t": 90, "b": 50},
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        "xaxis": {"title": {"text": "seconds (job time base)"}, "range": [tl.start, tl.end],
                  "zeroline": False},
        "yaxis": yaxis,
    }
    return {"data": traces, "layout": layout}


def _colour(cls: int, gap_label: str) -> str:
    """A class's colour; untraced gaps (a DXT trace) are pale grey, not computation's green."""
    if cls == COMPUTE and gap_label != CLASS_LABELS[COMPUTE]:
        return DXT_GAP_COLOUR
    return CLASS_COLOURS[cls]


def binning_note(tl: Timeline) -> str:
    """A sentence for the page when segments were merged ('' otherwise)."""
    if not tl.binned or tl.bin_width is None:
        return ""
    return (f"Binned: {tl.recorded} segments are more than the {tl.budget} that can be drawn, so on "
            f"each rank consecutive segments shorter than {_duration_text(tl.bin_width)} are merged "
            f"into bins of about that width, one bar per class with the class's total time in the bin "
            f"(times per class stay exact; zooming in does not split the bins).")
