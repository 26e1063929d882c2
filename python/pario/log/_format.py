"""Byte layout of a pario log (see docs/log-format.md), shared by reader and writer."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

import numpy as np

MAGIC = b"PARIOLOG"
#: the version written; every version in VERSIONS reads (2 added the trace blocks, 3 wrote the
#: record arrays column-major, 4 split the counters' columns into high-byte planes)
VERSION = 4
VERSIONS = (1, 2, 3, 4)
#: the first version whose record arrays are column-major
COLUMNAR_VERSION = 3
#: the first version whose counter columns are split (:func:`words_from_columns`)
SPLIT_VERSION = 4
FILE_HEADER = struct.Struct("<8sII")  # magic, version, header size (16)
BLOCK_HEADER = struct.Struct("<IiQQII")  # kind, rank, ulen, clen, crc32, reserved

BLOCK_META = 1
BLOCK_RANK = 2
BLOCK_SHARED = 3
BLOCK_END = 4
BLOCK_TRACE = 5  # docs/trace.md (pario.trace.format.BLOCK_TRACE)
BLOCK_TRACE_INDEX = 6
BLOCK_KINDS = {BLOCK_META: "META", BLOCK_RANK: "RANK", BLOCK_SHARED: "SHARED", BLOCK_END: "END",
               BLOCK_TRACE: "TRACE", BLOCK_TRACE_INDEX: "TRACE_INDEX"}

#: Refuse to inflate a single block beyond this (a corrupt length must not
#: make the reader allocate the machine's memory).
MAX_BLOCK_BYTES = 1 << 34


def record_dtype(ncounters: int, nfcounters: int) -> np.dtype:
    """One file record: id, rank (-1 when reduced over ranks), counters, fcounters."""
    return np.dtype(
        [("id", "<u8"), ("rank", "<i8"), ("c", "<i8", (ncounters,)), ("f", "<f8", (nfcounters,))]
    )


def words_from_columns(columns: bytes | memoryview, nwords: int, n: int, version: int) -> np.ndarray:
    """The ``(nwords, n)`` array of 8-byte words of ``n`` records stored column-major: every
    record's id, every record's rank, then each counter and float counter in turn. From
    version 4 on, each counter's column holds byte 6 of every value, then byte 7 of every
    value, then bytes 0-5 of each value (docs/log-format.md)."""
    if version < SPLIT_VERSION:
        return np.frombuffer(columns, dtype="<u8", count=nwords * n).reshape(nwords, n)
    return words_from_column_blocks([(n, columns)], nwords)


def words_from_column_blocks(blocks: Sequence[tuple[int, bytes | memoryview]], nwords: int,
                             out: np.ndarray | None = None) -> np.ndarray:
    """The split format's decoding (version 4 on) of several blocks at once: ``blocks`` are
    (records, bytes) in order, the result their ``(nwords, sum of records)`` words side by side
    (:func:`words_from_columns` of one block is this), written into ``out`` when given (columns
    of a larger array, its last axis contiguous: the words are decoded into their place).  The
    blocks with as many records are decoded together, a few NumPy operations for them all
    instead of several per block (a log of 100 000 ranks has 100 000 blocks)."""
    blocks = [b for b in blocks if b[0]]  # a block of no records adds no column
    counts = np.array([n for n, _ in blocks], dtype=np.int64)
    total = int(counts.sum())
    if out is None:
        out = np.empty((nwords, total), dtype="<u8")
    elif out.shape != (nwords, total) or out.dtype != np.dtype("<u8") or out.strides[1] != 8:
        raise ValueError(f"out has shape {out.shape}, the blocks make {(nwords, total)} 8-byte words")
    if not blocks:
        return out
    starts = np.zeros(len(blocks) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    sizes = sorted(set(counts.tolist()))  # not np.unique: it imports numpy.ma (pario.table.unique_index)
    if len(sizes) == 1:  # every block as many records: they are the columns in order
        _decode_alike([raw for _, raw in blocks], sizes[0], nwords, out)
        return out
    for n in sizes:
        which = np.flatnonzero(counts == n)
        alike = np.empty((nwords, len(which) * n), dtype="<u8")
        _decode_alike([blocks[i][1] for i in which.tolist()], n, nwords, alike)
        out[:, (starts[which][:, None] + np.arange(n)).ravel()] = alike
    return out


def _decode_alike(chunks: list[bytes | memoryview], n: int, nwords: int, dest: np.ndarray) -> None:
    """Decode blocks of ``n`` records each into ``dest``, their ``(nwords, len(chunks) * n)``
    words (its last axis contiguous): each 8-byte word written as four little-endian 16-bit
    parts, one strided copy per part, far faster than one of 6 bytes."""
    c = len(chunks)
    raw = np.frombuffer(chunks[0] if c == 1 else b"".join(chunks), dtype=np.uint8,
                        count=c * nwords * n * 8).reshape(c, nwords * n * 8)
    parts = dest.view("<u2").reshape(nwords, c, n, 4)  # splits the last axis only: a view
    # ids and ranks: whole 8-byte words
    parts[:2] = raw[:, :16 * n].view("<u2").reshape(c, 2, n, 4).transpose(1, 0, 2, 3)
    # each counter: byte 6 of every value, byte 7 of every value, then bytes 0-5 of each
    split = raw[:, 16 * n:].reshape(c, nwords - 2, 8 * n)
    parts[2:, :, :, 3] = (split[:, :, :n] | (split[:, :, n:2 * n].astype("<u2") << 8)).transpose(1, 0, 2)
    low = split[:, :, 2 * n:].view("<u2").reshape(c, nwords - 2, n, 3)
    for part in range(3):
        parts[2:, :, :, part] = low[:, :, :, part].transpose(1, 0, 2)


def records_from_columns(columns: bytes | memoryview, dtype: np.dtype, n: int, version: int) -> np.ndarray:
    """``n`` records stored column-major (:func:`words_from_columns`) as the record array of
    ``dtype``."""
    words = words_from_columns(columns, dtype.itemsize // 8, n, version)
    return np.ascontiguousarray(words.T).view(dtype).reshape(n)


def columns_of_records(rec: np.ndarray) -> bytes:
    """The column-major bytes of a record array as :data:`VERSION` stores them (the inverse of
    :func:`records_from_columns`)."""
    n, nwords = len(rec), rec.dtype.itemsize // 8
    words = np.ascontiguousarray(rec).view(np.uint8).reshape(n, nwords, 8).transpose(1, 0, 2)
    counters = words[2:]
    return b"".join([words[:2].tobytes(), *(b"".join([col[:, 6].tobytes(), col[:, 7].tobytes(),
                                                      col[:, :6].tobytes()]) for col in counters)])


def block(kind: int, rank: int, payload: bytes) -> bytes:
    """One block: its header, then ``payload`` compressed at zlib level 1, as the runtime does."""
    comp = zlib.compress(payload, 1)
    return BLOCK_HEADER.pack(kind, rank, len(payload), len(comp), zlib.crc32(comp) & 0xFFFFFFFF, 0) + comp
