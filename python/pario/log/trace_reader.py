"""Turn a pario log's TRACE / TRACE_INDEX blocks into a :class:`pario.trace.model.Trace`.

The log reader (pario.log.pario_reader) hands over each rank's raw block payloads; this
module checks them (every rank's blocks in order, as many events as its index says) and
puts the events on the job's time base (docs/trace.md, "Time base"): rank 0's clock, 0 at
rank 0's origin.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field

import numpy as np

from pario.errors import LogFormatError
from pario.trace.format import EVENT_DTYPE, Kind
from pario.trace.model import RankTrace, Trace

#: a TRACE block's payload starts with u64 first, u32 n
_TRACE_HEAD = struct.Struct("<QI")


@dataclass
class RankParts:
    """One rank's trace blocks as read: (first, events) per TRACE block, and its index."""

    blocks: list[tuple[int, np.ndarray]] = field(default_factory=list)
    index: dict | None = None


def trace_block(payload: bytes, where: str) -> tuple[int, np.ndarray]:
    """A TRACE block's payload: the index of its first event and its events (no copy)."""
    if len(payload) < _TRACE_HEAD.size:
        raise LogFormatError(f"{where}: corrupt pario log (a TRACE block is shorter than its header)")
    first, n = _TRACE_HEAD.unpack_from(payload, 0)
    if len(payload) != _TRACE_HEAD.size + n * EVENT_DTYPE.itemsize:
        raise LogFormatError(f"{where}: corrupt pario log (a TRACE block of {n} events holds "
                             f"{len(payload) - _TRACE_HEAD.size} bytes)")
    return int(first), np.frombuffer(payload, dtype=EVENT_DTYPE, count=n, offset=_TRACE_HEAD.size)


def trace_index(payload: bytes, where: str) -> dict:
    """A TRACE_INDEX block's JSON."""
    try:
        index = json.loads(payload.decode("utf-8"))
    except (UnicodeError, ValueError):
        raise LogFormatError(f"{where}: corrupt pario log (a TRACE_INDEX block is not JSON)") from None
    if not isinstance(index, dict):
        raise LogFormatError(f"{where}: corrupt pario log (a TRACE_INDEX block is not a JSON object)")
    return index


def _number(index: dict, key: str, where: str, rank: int) -> float:
    value = index.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LogFormatError(f"{where}: corrupt pario log (rank {rank}'s trace index has no number {key!r})")
    return float(value)


def _count(index: dict, key: str, where: str, rank: int) -> int:
    value = index.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LogFormatError(f"{where}: corrupt pario log (rank {rank}'s trace index: bad {key!r})")
    return value


def sync_points(index: dict, where: str, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """The clock sync points (local seconds, offset seconds), sorted; an empty list (a rank
    that did not reach MPI_Finalize) is offset 0."""
    raw = index.get("sync", [])
    try:
        pts = np.asarray(raw, dtype=np.float64).reshape(-1, 2)
    except (TypeError, ValueError):
        raise LogFormatError(f"{where}: corrupt pario log (rank {rank}'s trace index: bad 'sync')") from None
    if not len(pts):
        return np.zeros(1), np.zeros(1)
    order = np.argsort(pts[:, 0], kind="stable")
    return pts[order, 0], pts[order, 1]


def to_job_seconds(ticks: np.ndarray, origin: int, ticks_per_second: float,
                   sync: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Raw ticks -> seconds on the job's time base (docs/trace.md): local seconds plus the
    clock offset interpolated linearly between the sync points (constant with one)."""
    local = (ticks.astype(np.int64) - np.int64(origin)).astype(np.float64) / ticks_per_second
    xs, offs = sync
    if len(xs) == 1 or xs[-1] == xs[0]:
        return local + offs[0]
    slope = (offs[-1] - offs[0]) / (xs[-1] - xs[0])
    return local + offs[0] + (local - xs[0]) * slope


def comm_members(entry: object, where: str, rank: int) -> np.ndarray:
    """``{"range": [first, count, stride]}`` or ``{"ranks": [...]}`` -> world ranks."""
    if isinstance(entry, dict) and "range" in entry:
        rng = entry["range"]
        if (isinstance(rng, list) and len(rng) == 3 and all(isinstance(v, int) for v in rng)
                and rng[1] >= 0):
            first, count, stride = rng
            return first + stride * np.arange(count, dtype=np.int64)
    elif isinstance(entry, dict) and isinstance(entry.get("ranks"), list):
        ranks = entry["ranks"]
        if all(isinstance(v, int) for v in ranks):
            return np.asarray(ranks, dtype=np.int64)
    raise LogFormatError(f"{where}: corrupt pario log (rank {rank}'s trace index: bad communicator entry)")


def rank_trace(rank: int, parts: RankParts, where: str) -> RankTrace:
    """One rank's events, checked, with their times on the job's time base."""
    index = parts.index
    if index is None:
        raise LogFormatError(f"{where}: corrupt pario log (rank {rank} has TRACE blocks but no TRACE_INDEX)")
    expected = 0
    for first, block in parts.blocks:
        if first != expected:
            raise LogFormatError(f"{where}: corrupt pario log (rank {rank}'s TRACE blocks are not in order "
                                 "or one is missing)")
        expected += len(block)
    nevents = _count(index, "events", where, rank)
    if expected != nevents or len(parts.blocks) != _count(index, "blocks", where, rank):
        raise LogFormatError(f"{where}: corrupt pario log (rank {rank}'s trace index says {nevents} events "
                             f"in {index.get('blocks')} blocks, the log holds {expected} in "
                             f"{len(parts.blocks)})")
    tps = _number(index, "ticks_per_second", where, rank)
    origin = int(_number(index, "origin_ticks", where, rank))
    if not tps > 0:
        raise LogFormatError(f"{where}: corrupt pario log (rank {rank}'s trace index: "
                             f"ticks_per_second {tps})")
    events = (np.concatenate([ev for _, ev in parts.blocks]) if len(parts.blocks) != 1
              else parts.blocks[0][1])
    if not len(events):
        events = np.zeros(0, dtype=EVENT_DTYPE)
    sync = sync_points(index, where, rank)
    t0 = to_job_seconds(events["t0"], origin, tps, sync)
    t1 = to_job_seconds(events["t1"], origin, tps, sync)
    # the rank's timeline starts pre_init seconds before its origin (MPI_Init's exit): the time
    # from the library's start to MPI_Init's entry, which the profile's wall time includes
    pre_init = _number(index, "pre_init", where, rank) if "pre_init" in index else 0.0
    if not 0.0 <= pre_init < 1e9:
        raise LogFormatError(f"{where}: corrupt pario log (rank {rank}'s trace index: pre_init {pre_init})")
    start = float(to_job_seconds(np.array([origin], dtype=np.uint64), origin, tps, sync)[0]) - pre_init
    fin = np.flatnonzero(events["kind"] == Kind.FINALIZE)
    end = float(t0[fin[0]]) if len(fin) else (float(t1.max()) if len(t1) else start)
    comms_raw = index.get("comms", [])
    if not isinstance(comms_raw, list):
        raise LogFormatError(f"{where}: corrupt pario log (rank {rank}'s trace index: bad 'comms')")
    dropped_from = index.get("dropped_from")
    return RankTrace(
        rank=rank, events=events, t0=t0, t1=t1,
        comms=tuple(comm_members(c, where, rank) for c in comms_raw),
        start=start, end=end,
        dropped=_count(index, "dropped", where, rank),
        dropped_from=float(dropped_from) if isinstance(dropped_from, (int, float)) else None,
        untraced_events=_count(index, "untraced_events", where, rank),
        untracked_requests=_count(index, "untracked_requests", where, rank),
    )


def build_trace(nprocs: int, ranks: dict[int, RankParts], names: tuple[np.ndarray, np.ndarray],
                where: str) -> Trace:
    """The job's trace from every rank's parts; ``names`` = (sorted file ids, their paths)."""
    traces = tuple(rank_trace(r, ranks[r], where) for r in sorted(ranks))
    ids = np.unique(np.concatenate([t.events["file"] for t in traces])) if traces else np.zeros(0, np.uint64)
    ids = ids[ids != 0]
    files: dict[int, str] = {}
    known_ids, known_names = names
    if len(ids) and len(known_ids):
        pos = np.minimum(np.searchsorted(known_ids, ids), len(known_ids) - 1)
        for fid, p in zip(ids.tolist(), pos.tolist(), strict=True):
            if int(known_ids[p]) == fid:
                files[int(fid)] = str(known_names[p])
    return Trace(nprocs=nprocs, ranks=traces, files=files)


def merge_traces(traces: list[Trace | None], nprocs: int) -> Trace | None:
    """One trace from per-rank logs' traces (None if none has one)."""
    present: list[Trace] = [t for t in traces if t is not None]
    if not present:
        return None
    files: dict[int, str] = {}
    for t in present:
        files.update(t.files)
    ranks = sorted((r for t in present for r in t.ranks), key=lambda r: r.rank)
    return Trace(nprocs=nprocs, ranks=tuple(ranks), files=files)
