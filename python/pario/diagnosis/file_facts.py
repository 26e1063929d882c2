"""What the rules know of one file: the MPI-IO hints in effect and where they came from, the
MPI-IO component, which ranks took part, its size and its file system."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pario.analysis.filesystems import FileSystems
from pario.diagnosis.columns import counter, nranks
from pario.diagnosis.facts import Facts
from pario.model.rankio import float_values


def hint(facts: Facts, fid: int, key: str) -> str | None:
    return facts.hints.get(int(fid), {}).get(key)


def hint_origin(facts: Facts, key: str, value: str) -> str:
    """'PARIO_HINTS' if pario injected this hint with this value, else 'application'."""
    return "PARIO_HINTS" if facts.injected.get(key) == value else "application"


def io_component(facts: Facts, fid: int) -> str:
    """'romio', 'ompio' or '' (unknown) for a file's MPI-IO implementation."""
    mca = (hint(facts, fid, "mca:io") or "").lower()
    if mca.startswith("romio"):
        return "romio"
    if mca.startswith("ompio"):
        return "ompio"
    lib = facts.profile.job.mpi_library.lower()
    if "open mpi" in lib:
        return "ompio"
    if lib and ("mpich" in lib or "intel" in lib or "cray" in lib or "mvapich" in lib):
        return "romio"
    return ""


@dataclass(frozen=True)
class Participation:
    """How many ranks did a file's file-system (POSIX) I/O.

    ``effective`` is the participation ratio (sum b)^2 / sum b^2 over the ranks'
    bytes: k when k ranks move equal shares and the others nothing.  For a
    shared record it comes from the mean and variance of bytes per rank.
    """

    effective: float
    ranks: int
    top_rank: int
    top_share: float
    bytes: float


def participation(facts: Facts, fid: int) -> Participation | None:
    """File-system-level participation for file ``fid`` from its POSIX records (None if unknown)."""
    posix = facts.layer("posix")
    if not len(posix):
        return None
    rec = posix[uint64_ids(posix["id"]) == np.uint64(fid)]
    if not len(rec):
        return None
    b = counter(rec, "bytes_read") + counter(rec, "bytes_written")
    total = float(b.sum())
    if total <= 0:
        return None
    mpiio = facts.layer("mpiio")
    if len(mpiio):
        m = mpiio[uint64_ids(mpiio["id"]) == np.uint64(fid)]
        above = float((counter(m, "bytes_read") + counter(m, "bytes_written")).sum())
        if total < 0.5 * above:
            return None  # the POSIX records miss most of the data (partial log): no conclusion
    rank = np.asarray(rec["rank"], dtype=np.int64)
    if (rank >= 0).all():
        k = total * total / float((b * b).sum())
        i = int(np.argmax(b))
        return Participation(k, len(rec), int(rank[i]), float(b[i] / total), total)
    if len(rec) != 1:
        return None
    r = rec.row(0)
    n = float(nranks(rec, facts.nprocs)[0])
    var = float(r["variance_rank_bytes"]) if "variance_rank_bytes" in rec else math.nan
    slow_b = float(counter(rec, "slowest_rank_bytes")[0])
    fast_b = float(counter(rec, "fastest_rank_bytes")[0])
    top_rank, top_b = (
        (int(r["slowest_rank"]), slow_b) if slow_b >= fast_b else (int(r["fastest_rank"]), fast_b)
    )
    mean = total / n
    if math.isfinite(var) and var >= 0 and n >= 1:
        k = total * total / (n * (var + mean * mean))
    elif top_b >= 0.9 * total:
        k = 1.0
    else:
        return None
    return Participation(min(max(k, 1.0), n), int(n), top_rank, min(top_b / total, 1.0), total)


def uint64_ids(ids: Any) -> np.ndarray:
    """File ids as uint64 (whatever integer type the log gave them)."""
    return np.asarray(ids).astype(np.uint64)


def file_size(facts: Facts, fid: int) -> float:
    """What the run put through a file, for its layout: the bytes written to it or read from it
    (the larger, in the layer that counts more: MPI-IO's where the POSIX records are partial), at
    most its extent (highest byte written or read + 1).  A sparse file's extent says nothing of the
    load on its OSTs: 160 MiB written at offsets up to 40 GiB is 160 MiB."""
    extent, moved = 0.0, 0.0
    for layer in ("posix", "stdio", "mpiio"):
        records = facts.layer(layer)
        if not len(records):
            continue
        sel = records[uint64_ids(records["id"]) == np.uint64(fid)]
        for c in ("max_byte_written", "max_byte_read"):
            if c in sel and len(sel):
                v = float_values(sel[c], -1.0)
                if len(v) and np.nanmax(v) >= 0:
                    extent = max(extent, float(np.nanmax(v)) + 1.0)
        if len(sel):
            written = float(counter(sel, "bytes_written").sum())
            moved = max(moved, written, float(counter(sel, "bytes_read").sum()))
    if moved > 0:
        return min(extent, moved) if extent > 0 else moved
    return extent


def fs_of(facts: Facts, fid: int, name: str) -> str:
    """File-system type of a file ("" when unknown), by :mod:`pario.analysis.filesystems`'s rule."""
    fs = facts.cached("filesystems", lambda: FileSystems(facts.profile))
    return fs.of([fid], [name])[0]
