"""Byte layout of a pario log (see docs/log-format.md), shared by reader and writer."""

from __future__ import annotations

import struct

import numpy as np

MAGIC = b"PARIOLOG"
VERSION = 1
FILE_HEADER = struct.Struct("<8sII")  # magic, version, header size (16)
BLOCK_HEADER = struct.Struct("<IiQQII")  # kind, rank, ulen, clen, crc32, reserved

BLOCK_META = 1
BLOCK_RANK = 2
BLOCK_SHARED = 3
BLOCK_END = 4
BLOCK_KINDS = {BLOCK_META: "META", BLOCK_RANK: "RANK", BLOCK_SHARED: "SHARED", BLOCK_END: "END"}

#: Refuse to inflate a single block beyond this (a corrupt length must not
#: make the reader allocate the machine's memory).
MAX_BLOCK_BYTES = 1 << 34


def record_dtype(ncounters: int, nfcounters: int) -> np.dtype:
    """One file record: id, rank (-1 when reduced over ranks), counters, fcounters."""
    return np.dtype(
        [("id", "<u8"), ("rank", "<i8"), ("c", "<i8", (ncounters,)), ("f", "<f8", (nfcounters,))]
    )
