"""The RANK blocks of a large pario log (format 4) read in bulk by ``libpario_log.so``
(src/logread/rank_blocks.c): their headers walked, their checksums checked, each inflated and
its parts found in one C call, and each layer's records decoded into its array in another.

A log of 100 000 ranks has 100 000 RANK blocks; read one by one in Python (header, checksum,
inflation, parse, a copy of the records to decode later) they cost about 1.6 s of a 2 s read
(docs/performance.md).  Only a log whose blocks are all sound is read this way: anything
unexpected (a damaged block, a block out of place) and the reader reads the log block by block
as before, which names the problem.
"""

from __future__ import annotations

import ctypes
import functools
import mmap
import os
from dataclasses import dataclass

import numpy as np

from pario.log import _format as fmt
from pario.paths import PACKAGE_DIR

#: Logs with fewer RANK blocks are read block by block (the library's load costs more than it
#: saves on a few blocks, and a small report's start stays without ctypes).
MIN_BLOCKS = 256

_I64 = np.ctypeslib.ndpointer(np.int64, flags="C_CONTIGUOUS")
_U32 = np.ctypeslib.ndpointer(np.uint32, flags="C_CONTIGUOUS")
_U8 = np.ctypeslib.ndpointer(np.uint8, flags="C_CONTIGUOUS")


class NotClean(Exception):
    """A RANK block the bulk reader does not take as it is: the log is read block by block."""


@functools.lru_cache(maxsize=1)
def _library() -> ctypes.CDLL | None:
    path = PACKAGE_DIR / "lib" / "libpario_log.so"
    if not path.is_file():
        return None
    lib = ctypes.CDLL(str(path))
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    lib.pario_log_scan.argtypes = [ptr, i64, i64, ctypes.c_int32, i64, ptr, ptr, ptr, ptr, ptr, ptr]
    lib.pario_log_scan.restype = i64
    lib.pario_log_rank_blocks.argtypes = [ptr, i64, _I64, _I64, _I64, _U32, _I64, _U8, i64, _I64, i64,
                                          _I64, _I64, _I64, _I64, _I64, _I64, _I64, _I64, _I64, _I64, i64]
    lib.pario_log_rank_blocks.restype = i64
    lib.pario_log_gather.argtypes = [_U8, i64, _I64, _I64, ptr]
    lib.pario_log_gather.restype = None
    lib.pario_log_decode.argtypes = [_U8, i64, ptr, ptr, i64, i64, i64, ptr]
    lib.pario_log_decode.restype = None
    return lib


@dataclass
class Blocks:
    """Every block of a log: kind, rank, inflated and compressed size, checksum and where its
    compressed bytes start."""

    kinds: np.ndarray
    ranks: np.ndarray
    ulens: np.ndarray
    clens: np.ndarray
    crcs: np.ndarray
    offsets: np.ndarray


def plan(data: bytes) -> Blocks | None:
    """The blocks of a log to read in bulk: a sound format-4 log of at least :data:`MIN_BLOCKS`
    RANK blocks, its META block first and its END block last (None otherwise, and when
    ``libpario_log.so`` is not installed)."""
    if len(data) < fmt.FILE_HEADER.size:
        return None
    magic, version, header_size = fmt.FILE_HEADER.unpack_from(data, 0)
    if magic != fmt.MAGIC or version not in fmt.VERSIONS or version < fmt.SPLIT_VERSION:
        return None
    # a cheap bound before the library is loaded: a RANK block takes at least a header
    if (len(data) - header_size) // fmt.BLOCK_HEADER.size < MIN_BLOCKS:
        return None
    lib = _library()
    if lib is None:
        return None
    max_kind = max(fmt.BLOCK_KINDS)
    n = lib.pario_log_scan(data, len(data), header_size, max_kind, 0, None, None, None, None, None, None)
    if n < MIN_BLOCKS:
        return None
    b = Blocks(np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.int64), np.empty(n, np.int64),
               np.empty(n, np.uint32), np.empty(n, np.int64))
    got = lib.pario_log_scan(data, len(data), header_size, max_kind, n, *(
        a.ctypes.data for a in (b.kinds, b.ranks, b.ulens, b.clens, b.crcs, b.offsets)))
    if got != n:
        return None
    kinds = b.kinds
    if (kinds[0] != fmt.BLOCK_META or kinds[-1] != fmt.BLOCK_END
            or np.count_nonzero(kinds == fmt.BLOCK_META) != 1 or np.count_nonzero(kinds == fmt.BLOCK_END) != 1
            or np.count_nonzero(kinds == fmt.BLOCK_RANK) < MIN_BLOCKS):
        return None
    return b


@dataclass
class RankParts:
    """The RANK blocks inflated one after another into ``buffer``, and where each one's parts
    are in it (docs/log-format.md, "RANK block")."""

    buffer: np.ndarray
    ranks: np.ndarray
    starts: np.ndarray  # each block's first byte
    ends: np.ndarray
    counts: np.ndarray  # (blocks, layers) records
    where: np.ndarray  # (blocks, layers) their columns' first byte
    rows: np.ndarray
    names: np.ndarray
    nnames: np.ndarray
    name_bytes: np.ndarray
    hints: np.ndarray
    nhints: np.ndarray
    injected: np.ndarray  # -1: the block has no section of injected hints
    ninjected: np.ndarray

    def gather(self, starts: np.ndarray, lengths: np.ndarray) -> bytes:
        """The pieces of the buffer at ``starts``, ``lengths`` bytes each, one after another."""
        lengths = np.ascontiguousarray(lengths, dtype=np.int64)
        out = np.empty(int(lengths.sum()), dtype=np.uint8)
        lib = _library()
        assert lib is not None
        lib.pario_log_gather(self.buffer, len(starts), np.ascontiguousarray(starts, dtype=np.int64),
                             lengths, out.ctypes.data)
        return out.tobytes()

    def decode(self, layer: int, nwords: int, out: np.ndarray) -> None:
        """Layer ``layer``'s records of every block, decoded into ``out`` (``nwords`` rows of
        8-byte words, a view of columns of a C-contiguous array: its last axis contiguous)."""
        if out.dtype != np.dtype("<u8") or out.shape != (nwords, int(self.counts[:, layer].sum())) \
                or (out.size and out.strides[1] != 8):
            raise ValueError(f"out has shape {out.shape}, the blocks make {nwords} rows of "
                             f"{int(self.counts[:, layer].sum())} words")
        if not out.size:
            return
        lib = _library()
        assert lib is not None
        counts, where = self.counts[:, layer:], self.where[:, layer:]
        lib.pario_log_decode(self.buffer, len(self.counts), counts.ctypes.data, where.ctypes.data,
                             self.counts.shape[1], nwords, out.strides[0] // 8, out.ctypes.data)


def _fresh(size: int) -> np.ndarray:
    """``size`` bytes of fresh memory, mapped for this read alone and unmapped once let go, and
    never advised to the kernel as huge pages (NumPy's large arrays are, and where the kernel
    then compacts memory for each fault, filling 0.5 GB took 0.05-0.97 s here against 0.2 s)."""
    return np.frombuffer(mmap.mmap(-1, max(size, 1)), dtype=np.uint8, count=size)


def threads() -> int:
    """Threads to inflate the blocks: the cores this process may run on, at most 8, and at most
    ``OMP_NUM_THREADS`` when it is set (as Dask's nanny sets it to 1 for a survey's workers, each
    of which is one core's)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = 1
    try:
        cap = int(os.environ.get("OMP_NUM_THREADS", "") or 8)
    except ValueError:
        cap = 8
    return max(1, min(cores, 8, cap))


def read(data: bytes, blocks: Blocks, itemsizes: list[int], nfields: int) -> RankParts:
    """Inflate the RANK blocks of ``blocks`` and find their parts; :class:`NotClean` when one
    fails (its checksum, its size, its parts)."""
    lib = _library()
    assert lib is not None
    which = np.flatnonzero(blocks.kinds == fmt.BLOCK_RANK)
    ulens = np.ascontiguousarray(blocks.ulens[which])
    ends = np.cumsum(ulens)
    total = int(ends[-1]) if len(ends) else 0
    if total > 1100 * len(data):  # more than zlib can inflate from these bytes: damaged sizes
        raise NotClean("sizes")
    n, nlayers = len(which), len(itemsizes)
    parts = RankParts(
        buffer=_fresh(total), ranks=blocks.ranks[which].astype(np.int64),
        starts=ends - ulens, ends=ends, counts=np.empty((n, nlayers), np.int64),
        where=np.empty((n, nlayers), np.int64),
        **{k: np.empty(n, np.int64) for k in ("rows", "names", "nnames", "name_bytes", "hints",
                                               "nhints", "injected", "ninjected")})
    failed = lib.pario_log_rank_blocks(
        data, n, np.ascontiguousarray(blocks.offsets[which]), np.ascontiguousarray(blocks.clens[which]),
        ulens, np.ascontiguousarray(blocks.crcs[which]), parts.starts, parts.buffer, nlayers,
        np.array(itemsizes, dtype=np.int64), nfields, parts.counts, parts.where, parts.rows, parts.names,
        parts.nnames, parts.name_bytes, parts.hints, parts.nhints, parts.injected, parts.ninjected,
        threads())
    if failed:
        raise NotClean(f"RANK block {failed - 1}")
    return parts
