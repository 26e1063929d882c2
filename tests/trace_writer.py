"""Append TRACE / TRACE_INDEX blocks (docs/trace.md) to a pario log written by
tests/pario_writer.py: hand-built traces with known answers, for tests and benchmarks.

    write_pario_log(profile, path)
    append_trace(path, {0: RankEvents(events([...])), 1: RankEvents(...)})

The log's END block is replaced by the trace blocks and a new END that counts them.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pario.errors import ParioError
from pario.log import _format as fmt
from pario.trace.format import EVENT_DTYPE

#: defaults of the fields a row of events() leaves out
_DEFAULTS = {"comm": -1, "peer": -1, "tag": -1, "aux": 0, "file": 0, "bytes": 0, "flags": 0}


def events(rows: Sequence[Mapping[str, int]]) -> np.ndarray:
    """An EVENT_DTYPE array from dicts (t0, t1, kind required; comm/peer/tag -1, the rest 0)."""
    out = np.zeros(len(rows), dtype=EVENT_DTYPE)
    for i, row in enumerate(rows):
        for name in EVENT_DTYPE.names or ():
            out[name][i] = row.get(name, _DEFAULTS.get(name, 0))
    return out


@dataclass
class RankEvents:
    """One rank's trace as the runtime would write it: raw events and the index's values."""

    events: np.ndarray
    ticks_per_second: float = 1e9
    origin_ticks: int = 0
    sync: list[list[float]] = field(default_factory=lambda: [[0.0, 0.0]])
    #: communicator table; None: MPI_COMM_WORLD of the log's nprocs only
    comms: list[dict] | None = None
    #: events per TRACE block (None: all in one block; 0 events: no TRACE block)
    per_block: int | None = None
    dropped: int = 0
    dropped_from: float | None = None
    untraced_events: int = 0
    untracked_requests: int = 0




def rank_blocks(rank: int, spec: RankEvents, nprocs: int) -> list[bytes]:
    """The TRACE blocks and the TRACE_INDEX block of one rank."""
    ev = np.ascontiguousarray(spec.events, dtype=EVENT_DTYPE)
    step = spec.per_block or max(len(ev), 1)
    blocks = [
        fmt.block(fmt.BLOCK_TRACE, rank, struct.pack("<QI", first, len(ev[first:first + step]))
               + ev[first:first + step].tobytes())
        for first in range(0, len(ev), step)
    ]
    index = {
        "events": len(ev), "blocks": len(blocks), "dropped": spec.dropped, "dropped_from": spec.dropped_from,
        "untraced_events": spec.untraced_events, "untracked_requests": spec.untracked_requests,
        "origin_ticks": spec.origin_ticks, "ticks_per_second": spec.ticks_per_second, "sync": spec.sync,
        "comms": spec.comms if spec.comms is not None else [{"range": [0, nprocs, 1]}],
    }
    return [*blocks, fmt.block(fmt.BLOCK_TRACE_INDEX, rank, json.dumps(index).encode("utf-8"))]


def append_trace(path: str | Path, ranks: Mapping[int, RankEvents]) -> None:
    """Add the ranks' traces to the log at ``path`` (a log of version 2 or later without a trace)."""
    p = Path(path)
    data = p.read_bytes()
    magic, version, header_size = fmt.FILE_HEADER.unpack_from(data, 0)
    if magic != fmt.MAGIC or version < 2 or version not in fmt.VERSIONS:
        raise ParioError(f"{p}: append_trace needs a pario log of version 2 or later")
    pos, count, end_at, nprocs = header_size, 0, -1, 1
    while pos < len(data):
        kind, _, _, clen, _, _ = fmt.BLOCK_HEADER.unpack_from(data, pos)
        if kind == fmt.BLOCK_META:
            payload = zlib.decompress(data[pos + fmt.BLOCK_HEADER.size: pos + fmt.BLOCK_HEADER.size + clen])
            nprocs = int(json.loads(payload)["nprocs"])
        if kind == fmt.BLOCK_END:
            end_at = pos
            break
        if kind in (fmt.BLOCK_TRACE, fmt.BLOCK_TRACE_INDEX):
            raise ParioError(f"{p}: the log has a trace already")
        count += 1
        pos += fmt.BLOCK_HEADER.size + clen
    if end_at < 0:
        raise ParioError(f"{p}: no END block")
    extra = [b for rank in sorted(ranks) for b in rank_blocks(rank, ranks[rank], nprocs)]
    end = fmt.block(fmt.BLOCK_END, -1, struct.pack("<Q", count + len(extra)))
    p.write_bytes(data[:end_at] + b"".join(extra) + end)
