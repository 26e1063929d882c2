"""Byte layout of a pario log (see docs/log-format.md), shared by reader and writer."""

from __future__ import annotations

import struct

import numpy as np

MAGIC = b"PARIOLOG"
#: the version written; every version in VERSIONS reads (2 added the trace blocks)
VERSION = 2
VERSIONS = (1, 2)
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
