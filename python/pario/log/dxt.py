"""A Darshan log's DXT segments as a :class:`pario.trace.model.Trace` (docs/trace.md, "Darshan DXT traces").

Darshan's DXT modules record, per file and rank, each POSIX (DXT_POSIX) and MPI-IO (DXT_MPIIO)
read and write: its offset, its length, and its start and end in seconds since the job's start
(the time base of the whole job).  Each segment becomes one I/O event: ``IO_WRITE`` or
``IO_READ`` of its layer, ``bytes`` = the length, ``aux`` = the offset (-1 where Darshan did
not record it: DXT_MPIIO version 1), ``file`` = the record id; its times are kept as Darshan
stored them (``RankTrace.t0``/``t1``), and as nanoseconds in the raw ``t0``/``t1`` fields.

As in a pario trace, a rank's events are its outermost calls: a POSIX segment that lies inside
an MPI-IO segment of the same rank (the POSIX calls MPI-IO made) is put in ``Trace.inner``,
where the access-pattern checks still see it.  Every rank's timeline runs from the job's start
(0) to its end (the run time T, or the last segment's end if later).  The trace holds no MPI
call and no open, close or seek: the time between two events is not computation.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pario.log.darshan_lib import DxtSegments
from pario.trace.format import EVENT_DTYPE, LAYER_SHIFT, LAYERS, NONE, Kind
from pario.trace.model import SOURCE_DXT, RankTrace, Trace

#: DXT module -> pario trace layer (bits 8-10 of ``flags``)
LAYER_OF_DXT: dict[str, int] = {"DXT_POSIX": LAYERS.index("posix"), "DXT_MPIIO": LAYERS.index("mpiio")}


def dxt_trace(dxt: Mapping[str, DxtSegments], names: Mapping[int, str], nprocs: int,
              runtime: float) -> Trace | None:
    """The trace of a log's DXT modules (None without any segment); ``names``: record id -> path."""
    parts = [_flat(mod, seg) for mod, seg in dxt.items() if mod in LAYER_OF_DXT]
    if not parts or not sum(len(p["rank"]) for p in parts):
        return None
    cols = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    order = np.lexsort((cols["layer"], cols["end"], cols["start"], cols["rank"]))
    cols = {k: v[order] for k, v in cols.items()}
    inner = _nested(cols["rank"], cols["start"], cols["end"], cols["layer"] == LAYER_OF_DXT["DXT_MPIIO"])
    events = _events(cols)
    outer = _rank_traces(cols["rank"][~inner], events[~inner], cols["start"][~inner], cols["end"][~inner],
                         runtime)
    nested = _rank_traces(cols["rank"][inner], events[inner], cols["start"][inner], cols["end"][inner],
                          runtime)
    ids = np.unique(cols["file"]).tolist()
    files = {int(i): names[int(i)] for i in ids if int(i) in names}
    return Trace(nprocs=nprocs, ranks=outer, files=files, source=SOURCE_DXT, inner=nested)


def _flat(mod: str, seg: DxtSegments) -> dict[str, np.ndarray]:
    """One column per field, one row per segment: rank, file, write?, layer, offset, length, times."""
    counts = seg.write_counts + seg.read_counts
    n = int(counts.sum())
    first = np.cumsum(counts) - counts  # each record's first segment
    within = np.arange(n, dtype=np.int64) - np.repeat(first, counts)
    s = seg.segments
    return {
        "rank": np.repeat(seg.ranks, counts), "file": np.repeat(seg.ids, counts),
        "write": within < np.repeat(seg.write_counts, counts),
        "layer": np.full(n, LAYER_OF_DXT[mod], dtype=np.int64),
        "offset": s["offset"].astype(np.int64), "length": s["length"].astype(np.int64),
        "start": s["start"].astype(np.float64), "end": s["end"].astype(np.float64),
    }


def _nested(rank: np.ndarray, start: np.ndarray, end: np.ndarray, outer: np.ndarray) -> np.ndarray:
    """Which segments lie inside an ``outer`` segment of the same rank (rows sorted by rank, start).

    A segment is inside when some outer segment of its rank starts at or before it and ends at or
    after it: the latest end among the outer segments that start no later than it reaches its end.
    """
    nested = np.zeros(len(rank), dtype=bool)
    if not outer.any() or outer.all():
        return nested
    bounds = np.flatnonzero(np.diff(rank)) + 1
    starts = np.concatenate(([0], bounds))
    stops = np.concatenate((bounds, [len(rank)]))
    has_outer = np.add.reduceat(outer.astype(np.int64), starts) > 0
    for a, b in zip(starts[has_outer].tolist(), stops[has_outer].tolist(), strict=True):
        o = outer[a:b]
        o_idx = np.flatnonzero(o)
        o_start = start[a:b][o_idx]
        o_reach = np.maximum.accumulate(end[a:b][o_idx])  # o_start is sorted (rows are)
        i_idx = np.flatnonzero(~o)
        if not len(i_idx):
            continue
        j = np.searchsorted(o_start, start[a:b][i_idx], side="right") - 1
        ok = j >= 0
        inside = np.zeros(len(i_idx), dtype=bool)
        inside[ok] = o_reach[j[ok]] >= end[a:b][i_idx][ok]
        nested[a + i_idx[inside]] = True
    return nested


def _events(cols: dict[str, np.ndarray]) -> np.ndarray:
    n = len(cols["rank"])
    ev = np.zeros(n, dtype=EVENT_DTYPE)
    # the raw fields hold nanoseconds since the job's start (the times themselves are t0/t1)
    ev["t0"] = np.round(np.clip(cols["start"], 0, None) * 1e9).astype(np.uint64)
    ev["t1"] = np.round(np.clip(cols["end"], 0, None) * 1e9).astype(np.uint64)
    ev["kind"] = np.where(cols["write"], Kind.IO_WRITE, Kind.IO_READ).astype(np.uint16)
    ev["flags"] = (cols["layer"] << LAYER_SHIFT).astype(np.uint16)
    ev["comm"] = NONE
    ev["peer"] = NONE
    ev["tag"] = NONE
    ev["bytes"] = np.clip(cols["length"], 0, None).astype(np.uint64)
    ev["aux"] = cols["offset"]
    ev["file"] = cols["file"]
    return ev


def _rank_traces(rank: np.ndarray, events: np.ndarray, t0: np.ndarray, t1: np.ndarray,
                 runtime: float) -> tuple[RankTrace, ...]:
    """One RankTrace per rank present (rows sorted by rank): from 0 to the run's end."""
    if not len(rank):
        return ()
    bounds = np.flatnonzero(np.diff(rank)) + 1
    out = []
    for a, b in zip(np.concatenate(([0], bounds)).tolist(), np.concatenate((bounds, [len(rank)])).tolist(),
                    strict=True):
        end = max(float(runtime), float(t1[a:b].max()))
        out.append(RankTrace(rank=int(rank[a]), events=events[a:b], t0=t0[a:b].copy(), t1=t1[a:b].copy(),
                             comms=(), start=0.0, end=end))
    return tuple(out)
