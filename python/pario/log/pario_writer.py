"""Write a Profile back as a pario log (same format as the runtime's writer).

Used to build large synthetic logs for benchmarks and to produce test logs.
The counter lists come from the log the profile was read from (the runtime
writes them into every log's META block), kept in ``job.metadata["schema"]``.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import numpy as np

from pario.errors import ParioError
from pario.log import _format as fmt
from pario.model import LAYERS, Profile, counter_column


def _block(kind: int, rank: int, payload: bytes) -> bytes:
    comp = zlib.compress(payload, 1)
    header = fmt.BLOCK_HEADER.pack(kind, rank, len(payload), len(comp), zlib.crc32(comp) & 0xFFFFFFFF, 0)
    return header + comp


def _records(frame, layer: dict, mask: np.ndarray) -> bytes:
    counters = [counter_column(n) for n in layer["counters"]]
    fcounters = [counter_column(n) for n in layer["fcounters"]]
    dtype = fmt.record_dtype(len(counters), len(fcounters))
    sub = frame[mask] if len(frame) else frame
    rec = np.zeros(len(sub), dtype=dtype)
    if len(sub):
        rec["id"] = sub["id"].to_numpy(dtype=np.uint64)
        rec["rank"] = sub["rank"].to_numpy(dtype=np.int64)
        rec["c"] = sub[counters].to_numpy(dtype=np.int64)
        rec["f"] = sub[fcounters].to_numpy(dtype=np.float64)
    return struct.pack("<I", len(rec)) + rec.tobytes()


def _text(value: str) -> bytes:
    raw = value.encode("utf-8")
    return struct.pack("<I", len(raw)) + raw


def write_pario_log(profile: Profile, path: str | Path) -> None:
    """Write ``profile`` (read from a pario log, possibly modified) to ``path``."""
    schema = profile.job.metadata.get("schema")
    if not isinstance(schema, dict):
        raise ParioError("write_pario_log needs a profile read from a pario log (no counter schema)")
    layers: list[dict] = schema["layers"]
    rank_fields: list[str] = schema["rank_fields"]
    job = profile.job
    meta = {
        "format": "pario-log", "version": fmt.VERSION, "exe": job.exe, "argv": list(job.argv),
        "nprocs": job.nprocs, "complete": job.complete, "start_time": job.start_time,
        "end_time": job.end_time, "records_overflowed": 0, "hostname": job.hostname, "jobid": job.jobid,
        "mpi_library": job.mpi_library, "ranks_in_log": "all", "rank_fields": rank_fields,
        "layers": layers,
        **{k: v for k, v in job.metadata.items() if k != "schema"},
    }
    frames = [profile.files.get(lay["name"]) for lay in layers]
    empty = np.zeros(0, dtype=bool)

    with open(path, "wb") as out:
        out.write(fmt.FILE_HEADER.pack(fmt.MAGIC, fmt.VERSION, fmt.FILE_HEADER.size))
        out.write(_block(fmt.BLOCK_META, -1, json.dumps(meta).encode("utf-8")))
        shared = b"".join(
            _records(f, lay, (f["rank"] == -1).to_numpy()) if f is not None else struct.pack("<I", 0)
            for f, lay in zip(frames, layers, strict=False)
        )
        out.write(_block(fmt.BLOCK_SHARED, -1, shared + struct.pack("<I", 0)))

        # group each layer's per-rank records once (not one scan per rank)
        by_rank: list[dict[int, np.ndarray]] = []
        for f in frames:
            groups: dict[int, np.ndarray] = {}
            if f is not None and len(f):
                ranks = f["rank"].to_numpy()
                order = np.argsort(ranks, kind="stable")
                uniq, starts = np.unique(ranks[order], return_index=True)
                bounds = list(starts[1:]) + [len(order)]
                for r, s, e in zip(uniq, starts, bounds, strict=False):
                    if r >= 0:
                        groups[int(r)] = order[s:e]
            by_rank.append(groups)

        rows = profile.ranks.reindex(columns=rank_fields).fillna(0.0)
        names = {int(i): n for f in frames if f is not None for i, n in zip(f["id"], f["name"], strict=False)}
        count = 2
        for i, (rank, row) in enumerate(zip(rows.index, rows.to_numpy(dtype=np.float64), strict=False)):
            parts = [row.tobytes()]
            for f, lay, groups in zip(frames, layers, by_rank, strict=False):
                idx = groups.get(int(rank))
                if f is None or idx is None:
                    parts.append(struct.pack("<I", 0))
                    continue
                mask = np.zeros(len(f), dtype=bool) if len(f) else empty
                mask[idx] = True
                parts.append(_records(f, lay, mask))
            if i == 0:  # all names and hints travel in the first rank's block
                parts.append(struct.pack("<I", len(names)))
                parts.extend(struct.pack("<Q", rid) + _text(n) for rid, n in names.items())
                mpiio = next((k for k, lay in enumerate(layers) if lay["name"] == "mpiio"), 0)
                parts.append(struct.pack("<I", len(profile.hints)))
                for rid, hints in profile.hints.items():
                    text = "".join(f"{k}={v}\n" for k, v in hints.items())
                    parts.append(struct.pack("<IQ", mpiio, rid) + _text(text))
            else:
                parts.append(struct.pack("<II", 0, 0))
            out.write(_block(fmt.BLOCK_RANK, int(rank), b"".join(parts)))
            count += 1
        out.write(_block(fmt.BLOCK_END, -1, struct.pack("<Q", count)))


__all__ = ["write_pario_log", "LAYERS"]
