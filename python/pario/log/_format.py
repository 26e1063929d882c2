"""Byte layout of a pario log (see docs/log-format.md), shared by reader and writer."""

from __future__ import annotations

import struct
import zlib

import numpy as np

MAGIC = b"PARIOLOG"
#: the version written; every version in VERSIONS reads (2 added the trace blocks, 3 wrote the
#: record arrays column-major)
VERSION = 3
VERSIONS = (1, 2, 3)
#: the first version whose record arrays are column-major
COLUMNAR_VERSION = 3
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


def records_from_columns(columns: bytes | memoryview, dtype: np.dtype, n: int) -> np.ndarray:
    """``n`` records stored column-major (every record's id, every record's rank, then each
    counter and float counter in turn, 8 bytes a value) as the record array of ``dtype``."""
    words = np.frombuffer(columns, dtype="<u8", count=n * (dtype.itemsize // 8))
    return np.ascontiguousarray(words.reshape(dtype.itemsize // 8, n).T).view(dtype).reshape(n)


def columns_of_records(rec: np.ndarray) -> bytes:
    """The column-major bytes of a record array (the inverse of :func:`records_from_columns`)."""
    return np.ascontiguousarray(rec).view("<u8").reshape(len(rec), rec.dtype.itemsize // 8).T.tobytes()


def block(kind: int, rank: int, payload: bytes) -> bytes:
    """One block: its header, then ``payload`` compressed at zlib level 1, as the runtime does."""
    comp = zlib.compress(payload, 1)
    return BLOCK_HEADER.pack(kind, rank, len(payload), len(comp), zlib.crc32(comp) & 0xFFFFFFFF, 0) + comp
