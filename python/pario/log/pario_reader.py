"""Read a pario log (docs/log-format.md) into the model.

The log is a sequence of zlib-compressed, CRC-checked blocks; every record
array is turned into NumPy with one ``frombuffer`` per block and the tables
(:class:`~pario.table.Table`) are built once at the end, so a log of 10^5 ranks
reads in seconds.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from pario.errors import LogFormatError
from pario.log import _format as fmt
from pario.log import rank_blocks, trace_reader
from pario.log.dump import rank_ranges
from pario.model import Job, Profile, add_derived_rank_columns, counter_column
from pario.model import rank_ids as ranks_of_rows
from pario.table import Table, as_table

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class _LayerInfo:
    name: str
    counters: list[str]
    fcounters: list[str]
    dtype: np.dtype


@dataclass
class _Parts:
    rows: list[bytes] = field(default_factory=list)
    rank_ids: list[int] = field(default_factory=list)
    #: per layer, each RANK block's records, decoded once at the end: raw bytes (row-major,
    #: format versions 1 and 2), or the block's (columns, records) array of 8-byte words
    #: (column-major, versions 3 and 4; blocks without records left out)
    records: dict[str, list[memoryview | np.ndarray]] = field(default_factory=dict)
    #: per layer, the RANK blocks' records (format 4): (records, bytes copied out of the block),
    #: decoded at the end straight into the layer's array, a batch of blocks at a time
    pending: dict[str, list[tuple[int, bytes]]] = field(default_factory=dict)
    #: each RANK block's names: their ids (u64) and byte lengths (u32) as stored, their UTF-8
    name_ids: list[bytes] = field(default_factory=list)
    name_lens: list[bytes] = field(default_factory=list)
    name_blobs: list[bytes] = field(default_factory=list)
    hints: dict[int, dict[str, str]] = field(default_factory=dict)
    injected: dict[int, dict[str, str]] = field(default_factory=dict)
    shared: dict[str, np.ndarray] = field(default_factory=dict)
    bitmaps: dict[str, np.ndarray] = field(default_factory=dict)
    #: rank -> its TRACE blocks and TRACE_INDEX (format version 2)
    traces: dict[int, trace_reader.RankParts] = field(default_factory=dict)
    #: the log's format version (3 on: record arrays column-major, 4 on: counter columns split)
    version: int = 0
    #: the RANK blocks read in bulk (format 4, :mod:`pario.log.rank_blocks`; ``records`` and
    #: ``pending`` then empty) and each layer's position in them
    bulk: rank_blocks.RankParts | None = None
    bulk_layers: dict[str, int] = field(default_factory=dict)


_U32 = struct.Struct("<I")


@functools.lru_cache(maxsize=64)
def _u32s(n: int) -> struct.Struct:
    """``n`` little-endian u32 (a RANK block's name lengths: the same few counts again and again)."""
    return struct.Struct(f"<{n}I")


class _Cursor:
    """Bounds-checked reads from one decompressed payload."""

    def __init__(self, data: bytes, where: str) -> None:
        self.data = memoryview(data)
        self.pos = 0
        self.where = where

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise LogFormatError(f"{self.where}: block shorter than its contents")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def u32(self) -> int:
        if self.pos + 4 > len(self.data):
            raise LogFormatError(f"{self.where}: block shorter than its contents")
        (value,) = _U32.unpack_from(self.data, self.pos)
        self.pos += 4
        return int(value)

    def array(self, dtype: np.dtype, count: int) -> np.ndarray:
        return np.frombuffer(self.take(dtype.itemsize * count), dtype=dtype, count=count)


#: What a damaged log's bytes raise while they are parsed, besides LogFormatError: read_pario_log
#: names the file and the exception.
_CORRUPT = (ValueError, KeyError, TypeError, IndexError, struct.error, zlib.error, UnicodeError)
#: Everything reading a damaged log raises.
_DAMAGED = (LogFormatError, *_CORRUPT)


def read_pario_log(path: str | Path) -> Profile:
    """Read a pario log; raise LogFormatError naming the file if it is damaged."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise LogFormatError(f"{p}: cannot read: {exc.strerror}") from None
    try:
        return _parse(data, str(p))
    except LogFormatError:
        raise
    except _CORRUPT as exc:
        raise LogFormatError(f"{p}: corrupt pario log ({exc.__class__.__name__}: {exc})") from None


def read_meta(path: str | Path) -> dict:
    """Only the job metadata of a pario log (its first block): cheap, for listing logs."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            head = fh.read(fmt.FILE_HEADER.size + fmt.BLOCK_HEADER.size)
            _, _, header_size = fmt.FILE_HEADER.unpack_from(head, 0)
            fh.seek(header_size)
            block_head = fh.read(fmt.BLOCK_HEADER.size)
            _, _, _, clen, _, _ = fmt.BLOCK_HEADER.unpack_from(block_head, 0)
            data = head[: fmt.FILE_HEADER.size].ljust(header_size, b"\0") + block_head + fh.read(clen)
    except (OSError, struct.error) as exc:
        raise LogFormatError(f"{p}: cannot read its metadata ({exc})") from None
    try:
        for kind, _, payload in _blocks(data, str(p)):
            if kind == fmt.BLOCK_META:
                return dict(json.loads(payload.decode("utf-8")))
            break
    except (ValueError, UnicodeError, zlib.error) as exc:
        raise LogFormatError(f"{p}: corrupt pario log ({exc})") from None
    raise LogFormatError(f"{p}: corrupt pario log (no META block first)")


def rejected_hints(meta: dict) -> dict:
    """The PARIO_HINTS lines the runtime skipped (``rejected_hints``: line, text, reason), how
    many in all, and the opens retried without the injected hints; empty for older logs."""
    if "rejected_hints" not in meta:
        return {}
    def count(v: object) -> int:  # a damaged log may hold anything
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0

    entries = meta.get("rejected_hints")
    rejected = [
        {"line": count(e.get("line")), "text": str(e.get("text", "")), "reason": str(e.get("reason", ""))}
        for e in (entries if isinstance(entries, list) else []) if isinstance(e, dict)
    ]
    return {
        "rejected_hints": rejected,
        "rejected_hints_total": max(count(meta.get("rejected_hints_total")), len(rejected)),
        "hints_fallback_opens": count(meta.get("hints_fallback_opens")),
    }


def _blocks(data: bytes, where: str):
    if len(data) < fmt.FILE_HEADER.size:
        raise LogFormatError(f"{where}: truncated pario log (no header)")
    magic, version, header_size = fmt.FILE_HEADER.unpack_from(data, 0)
    if magic != fmt.MAGIC:
        raise LogFormatError(f"{where}: not a pario log")
    if version not in fmt.VERSIONS:
        raise LogFormatError(f"{where}: pario log format version {version} is not supported "
                             f"(this pario reads versions {', '.join(map(str, fmt.VERSIONS))})")
    pos = header_size
    # once per block of a 100 000-rank log: the block is inflated from a view, not a copy
    view, end, head = memoryview(data), len(data), fmt.BLOCK_HEADER
    while pos < end:
        if pos + head.size > end:
            raise LogFormatError(f"{where}: truncated pario log (partial block header at byte {pos})")
        kind, rank, ulen, clen, crc, _ = head.unpack_from(data, pos)
        pos += head.size
        if kind not in fmt.BLOCK_KINDS or (version < 2 and kind >= fmt.BLOCK_TRACE):
            raise LogFormatError(f"{where}: corrupt pario log (unknown block kind {kind} at byte {pos})")
        if pos + clen > end:
            raise LogFormatError(f"{where}: truncated pario log (block at byte {pos} is cut short)")
        if ulen > fmt.MAX_BLOCK_BYTES:
            raise LogFormatError(f"{where}: corrupt pario log (block claims {ulen} bytes)")
        yield kind, rank, _inflate(view[pos : pos + clen], kind, ulen, crc, where)
        pos += clen


def _inflate(comp: memoryview, kind: int, ulen: int, crc: int, where: str) -> bytes:
    """A block's payload, its checksum and size checked."""
    if zlib.crc32(comp) & 0xFFFFFFFF != crc:
        block = fmt.BLOCK_KINDS[kind]
        raise LogFormatError(f"{where}: corrupt pario log (checksum mismatch in a {block} block)")
    d = zlib.decompressobj()
    payload = d.decompress(comp, ulen + 1)
    if len(payload) != ulen or not d.eof:
        raise LogFormatError(f"{where}: corrupt pario log (block does not inflate to its size)")
    return payload


def _other_blocks(data: bytes, blocks: rank_blocks.Blocks, where: str):
    """(index, (kind, rank, payload)) of the blocks that are not RANK blocks, in order."""
    view = memoryview(data)
    for i in np.flatnonzero(blocks.kinds != fmt.BLOCK_RANK).tolist():
        start, clen = int(blocks.offsets[i]), int(blocks.clens[i])
        kind = int(blocks.kinds[i])
        yield i, (kind, int(blocks.ranks[i]), _inflate(view[start:start + clen], kind, int(blocks.ulens[i]),
                                                     int(blocks.crcs[i]), where))


def _parse(data: bytes, where: str) -> Profile:
    """The profile of a log's bytes: the RANK blocks of a large sound log in bulk
    (:mod:`pario.log.rank_blocks`), any other log block by block (so is a large one the bulk
    reader finds anything amiss in: the block-by-block reading then says what)."""
    blocks = rank_blocks.plan(data)
    if blocks is not None:
        try:
            return _parse_blocks(data, where, blocks)
        except (rank_blocks.NotClean, MemoryError, *_DAMAGED):
            pass
    return _parse_blocks(data, where, None)


def _parse_blocks(data: bytes, where: str, bulk: rank_blocks.Blocks | None) -> Profile:
    meta: dict | None = None
    layers: list[_LayerInfo] = []
    rank_fields: list[str] = []
    parts = _Parts()
    parts.version = fmt.FILE_HEADER.unpack_from(data, 0)[1] if len(data) >= fmt.FILE_HEADER.size else 0
    ended = False
    in_order = enumerate(_blocks(data, where)) if bulk is None else _other_blocks(data, bulk, where)
    for nblocks, (kind, rank, payload) in in_order:
        if ended:
            raise LogFormatError(f"{where}: corrupt pario log (data after the END block)")
        if kind == fmt.BLOCK_META:
            if meta is not None:
                raise LogFormatError(f"{where}: corrupt pario log (two META blocks)")
            meta = json.loads(payload.decode("utf-8"))
            layers = [
                _LayerInfo(lay["name"], list(lay["counters"]), list(lay["fcounters"]),
                           fmt.record_dtype(len(lay["counters"]), len(lay["fcounters"])))
                for lay in meta["layers"]
            ]
            rank_fields = list(meta["rank_fields"])
            parts.records = {lay.name: [] for lay in layers}
            parts.pending = {lay.name: [] for lay in layers}
        elif meta is None:
            raise LogFormatError(f"{where}: corrupt pario log (data before the META block)")
        elif kind == fmt.BLOCK_SHARED:
            _read_shared(_Cursor(payload, where), layers, parts)
        elif kind == fmt.BLOCK_RANK:
            _read_rank(_Cursor(payload, where), rank, layers, len(rank_fields), parts)
        elif kind == fmt.BLOCK_TRACE:
            parts.traces.setdefault(rank, trace_reader.RankParts()).blocks.append(
                trace_reader.trace_block(payload, where))
        elif kind == fmt.BLOCK_TRACE_INDEX:
            rank_parts = parts.traces.setdefault(rank, trace_reader.RankParts())
            if rank_parts.index is not None:
                raise LogFormatError(f"{where}: corrupt pario log (two TRACE_INDEX blocks for rank {rank})")
            rank_parts.index = trace_reader.trace_index(payload, where)
        elif kind == fmt.BLOCK_END:
            (expected,) = struct.unpack("<Q", payload[:8]) if len(payload) >= 8 else (None,)
            if expected != nblocks:
                raise LogFormatError(f"{where}: corrupt pario log (END says {expected} blocks, "
                                     f"found {nblocks})")
            ended = True
    if meta is None:
        raise LogFormatError(f"{where}: truncated pario log (no META block)")
    if not ended:
        raise LogFormatError(f"{where}: truncated pario log (no END block; the job may have "
                             "been killed while writing it)")
    if bulk is not None:
        _read_rank_blocks(rank_blocks.read(data, bulk, [lay.dtype.itemsize for lay in layers],
                                           len(rank_fields)), layers, len(rank_fields), parts)
    return _build(meta, layers, rank_fields, parts, where)


def _read_shared(cur: _Cursor, layers: list[_LayerInfo], parts: _Parts) -> None:
    for lay in layers:
        n = cur.u32()
        raw = cur.take(n * lay.dtype.itemsize)
        parts.shared[lay.name] = (fmt.records_from_columns(raw, lay.dtype, n, parts.version)
                                  if parts.version >= fmt.COLUMNAR_VERSION
                                  else np.frombuffer(raw, dtype=lay.dtype, count=n))
    bm_bytes = cur.u32()
    if bm_bytes:
        for lay in layers:
            n = len(parts.shared[lay.name])
            parts.bitmaps[lay.name] = cur.array(np.dtype(np.uint8), n * bm_bytes).reshape(n, bm_bytes)


def _read_rank(cur: _Cursor, rank: int, layers: list[_LayerInfo], nfields: int, parts: _Parts) -> None:
    # Hot loop (once per rank): keep raw bytes, decode all ranks at once later.  What is kept is
    # copied out of the inflated block (its row, its names' ids and lengths; the records are
    # decoded into arrays of their own), so that the block is freed once read: a view into it
    # would keep every rank's inflated block alive until the end (about 0.7 GB at 100 000 ranks
    # of 10 files each).  Logs of formats 1-3 keep views of their records (format 4's are
    # decoded into new arrays).
    parts.rows.append(bytes(cur.take(8 * nfields)))
    parts.rank_ids.append(rank)
    if parts.version >= fmt.SPLIT_VERSION:
        _read_rank_records(cur, layers, parts)
    else:
        for lay in layers:
            n = cur.u32()
            if parts.version < fmt.COLUMNAR_VERSION:
                parts.records[lay.name].append(cur.take(n * lay.dtype.itemsize))
            elif n:
                parts.records[lay.name].append(fmt.words_from_columns(
                    cur.take(n * lay.dtype.itemsize), lay.dtype.itemsize // 8, n, parts.version))
    # names: u32 n, u64 ids[n], u32 lens[n], bytes (columnar, see docs/log-format.md)
    # (no NumPy call per block: a few cost more than the rest of a small block's reading)
    n = cur.u32()
    if n:
        parts.name_ids.append(bytes(cur.take(8 * n)))
        lens = bytes(cur.take(4 * n))
        parts.name_lens.append(lens)
        parts.name_blobs.append(bytes(cur.take(sum(_u32s(n).unpack(lens)))))
    # hints in effect: u32 n, u32 layers[n], u64 ids[n], u32 lens[n], bytes
    _read_hint_texts(cur, parts.hints)
    # hints injected (absent from logs written before the runtime recorded them)
    if cur.pos < len(cur.data):
        _read_hint_texts(cur, parts.injected)


def _read_rank_blocks(bulk: rank_blocks.RankParts, layers: list[_LayerInfo], nfields: int,
                      parts: _Parts) -> None:
    """The parts of every RANK block read in bulk, as :func:`_read_rank` keeps them (the records
    stay in ``bulk`` until :func:`_layer_words` decodes them into place)."""
    parts.rows.append(bulk.gather(bulk.rows, np.full(len(bulk.rows), 8 * nfields)))
    parts.rank_ids.extend(bulk.ranks.tolist())
    parts.bulk = bulk
    parts.bulk_layers = {lay.name: i for i, lay in enumerate(layers)}
    n = bulk.nnames
    parts.name_ids.append(bulk.gather(bulk.names, 8 * n))
    parts.name_lens.append(bulk.gather(bulk.names + 8 * n, 4 * n))
    parts.name_blobs.append(bulk.gather(bulk.names + 12 * n, bulk.name_bytes))
    for i in np.flatnonzero((bulk.nhints > 0) | (bulk.ninjected > 0)).tolist():
        start = int(bulk.starts[i])  # the sections were checked in C: the cursor reads within them
        cur = _Cursor(bulk.buffer[start:int(bulk.ends[i])].tobytes(), "RANK block")
        cur.pos = int(bulk.hints[i]) - start
        _read_hint_texts(cur, parts.hints)
        if bulk.injected[i] >= 0:
            _read_hint_texts(cur, parts.injected)


#: RANK blocks whose records are decoded together (format 4): the per-block cost of NumPy calls
#: is shared, and each batch's decoding stays small (a few MB).
_DECODE_BATCH = 1024


def _read_rank_records(cur: _Cursor, layers: list[_LayerInfo], parts: _Parts) -> None:
    """A RANK block's records (format 4), each layer's a u32 count and its columns: copied out to
    be decoded with other blocks' (once per layer of every rank: the cursor's reads inlined)."""
    data, pos, end = cur.data, cur.pos, len(cur.data)
    for lay in layers:
        if pos + 4 > end:
            raise LogFormatError(f"{cur.where}: block shorter than its contents")
        (n,) = _U32.unpack_from(data, pos)
        size = n * lay.dtype.itemsize
        if pos + 4 + size > end:
            raise LogFormatError(f"{cur.where}: block shorter than its contents")
        if n:
            parts.pending[lay.name].append((n, data[pos + 4:pos + 4 + size].tobytes()))
        pos += 4 + size
    cur.pos = pos


def _read_hint_texts(cur: _Cursor, out: dict[int, dict[str, str]]) -> None:
    """One columnar hints section: u32 n, u32 layers[n], u64 ids[n], u32 lens[n], bytes."""
    n = cur.u32()
    if n:
        cur.array(np.dtype("<u4"), n)
        ids = cur.array(np.dtype("<u8"), n)
        lens = cur.array(np.dtype("<u4"), n)
        blob = bytes(cur.take(int(lens.sum(dtype=np.int64))))
        # an HDF5 file's H5F record (layer 3: its hdf5.* properties) has the id of its MPI-IO
        # record (the MPI-IO hints): one file, the two merged
        for rid, text in zip(ids.tolist(), _split(blob, lens), strict=True):
            out.setdefault(rid, {}).update(_parse_hints(text))


def _split(blob: bytes, lens: np.ndarray) -> list[str]:
    """Cut a blob of concatenated UTF-8 strings at the given byte lengths."""
    ends = np.cumsum(lens, dtype=np.int64)
    starts = ends - lens
    spans = zip(starts.tolist(), ends.tolist(), strict=True)
    if blob.isascii():
        text = blob.decode("ascii")
        return [text[a:b] for a, b in spans]
    return [blob[a:b].decode("utf-8", errors="replace") for a, b in spans]


def _names(parts: _Parts) -> tuple[np.ndarray, np.ndarray]:
    """(sorted unique ids, their names as an object array)."""
    if not parts.name_ids:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=object)
    ids = np.frombuffer(b"".join(parts.name_ids), dtype="<u8")
    lens = np.frombuffer(b"".join(parts.name_lens), dtype="<u4")
    names = np.array(_split(b"".join(parts.name_blobs), lens), dtype=object)
    order = np.argsort(ids, kind="stable")  # sorted for searchsorted; an id's first name wins
    return ids[order], names[order]


def _parse_hints(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key] = value
    return out


OVERFLOW_NAME = "<overflow: other files>"


def _layer_words(shared: np.ndarray, chunks: list[np.ndarray], pending: list[tuple[int, bytes]],
                 nwords: int, bulk: tuple[rank_blocks.RankParts, int] | None = None) -> np.ndarray:
    """A layer's (column, record) array of 8-byte words: the shared records, then every rank's
    (``chunks`` decoded, format 3; ``pending`` raw, format 4, each batch of blocks decoded into
    its place and its bytes let go; or ``bulk``: the RANK blocks read in bulk, and the layer's
    position in them)."""
    in_bulk = int(bulk[0].counts[:, bulk[1]].sum()) if bulk is not None else 0
    total = len(shared) + sum(c.shape[1] for c in chunks) + sum(n for n, _ in pending) + in_bulk
    words = np.empty((nwords, total), dtype="<u8")
    words[:, :len(shared)] = shared.view("<u8").reshape(len(shared), nwords).T
    at = len(shared)
    for chunk in chunks:
        words[:, at:at + chunk.shape[1]] = chunk
        at += chunk.shape[1]
    for first in range(0, len(pending), _DECODE_BATCH):
        batch = pending[first:first + _DECODE_BATCH]
        n = sum(count for count, _ in batch)
        fmt.words_from_column_blocks(batch, nwords, out=words[:, at:at + n])
        at += n
        pending[first:first + _DECODE_BATCH] = [(0, b"")] * len(batch)
    if bulk is not None:
        bulk[0].decode(bulk[1], nwords, words[:, at:at + in_bulk])
    return words


def _layer_records(lay: _LayerInfo, shared: np.ndarray, chunks: list[memoryview | np.ndarray],
                   pending: list[tuple[int, bytes]], names: tuple[np.ndarray, np.ndarray],
                   columnar: bool, bulk: tuple[rank_blocks.RankParts, int] | None = None) -> Table:
    """A layer's records: id, rank, name, then its counters and fcounters (model names)."""
    counter_names = [counter_column(n) for n in lay.counters]
    fcounter_names = [counter_column(n) for n in lay.fcounters]
    if columnar:
        # the shared records first, then every rank's: one copy into a (column, record) array
        words = _layer_words(shared, cast("list[np.ndarray]", chunks), pending, lay.dtype.itemsize // 8, bulk)
        ids, ranks = words[0], words[1].view("<i8")
        counters = Table({name: words[2 + i].view("<i8") for i, name in enumerate(counter_names)},
                         length=words.shape[1])
        first = 2 + len(counter_names)
        fcounters = Table({name: words[first + i].view("<f8") for i, name in enumerate(fcounter_names)},
                          length=words.shape[1])
    else:
        # the shared records first, then every rank's: one join, one copy
        # memoryviews and arrays are buffers, which join reads without a copy of each
        rec = np.frombuffer(b"".join([shared.tobytes(), *cast("list[bytes]", chunks)]), dtype=lay.dtype)
        ids, ranks = rec["id"], np.array(rec["rank"])
        counters = _columns(rec["c"], counter_names)
        fcounters = _columns(rec["f"], fcounter_names)
    known_ids, known_names = names
    name = np.empty(len(ids), dtype=object)
    found = np.zeros(len(ids), dtype=bool)
    if len(known_ids):
        pos = np.minimum(np.searchsorted(known_ids, ids), len(known_ids) - 1)
        found = known_ids[pos] == ids
        name[found] = known_names[pos[found]]
    for i in np.flatnonzero(~found):
        name[i] = OVERFLOW_NAME if ids[i] == 0 else f"<unknown {int(ids[i]):016x}>"
    return Table({"id": ids, "rank": ranks, "name": name, **dict(counters.items()),
                  **dict(fcounters.items())}, length=len(ids))


def _columns(block: np.ndarray, names: list[str]) -> Table:
    """The columns of a 2-D block, under ``names`` (one transposing copy: each column is then
    contiguous, and later row selections need not gather across rows)."""
    by_column = np.ascontiguousarray(block.T)
    return Table({name: by_column[i] for i, name in enumerate(names)}, length=len(block))


def _rank_table(columns: Table, rank_ids: np.ndarray) -> Table:
    """The rank table (row i: rank i): ``columns``, after a ``rank`` column when the ranks in
    the log are not 0..n-1 (some ranks left no data)."""
    if np.array_equal(rank_ids, np.arange(len(rank_ids))):
        return columns
    return Table({"rank": rank_ids, **dict(columns.items())}, length=len(rank_ids))


def _max(values: np.ndarray) -> float:
    """The largest value that is not NaN (NaN if there is none)."""
    values = values[~np.isnan(values)]
    return float(values.max()) if len(values) else float("nan")


def _build(meta: dict, layers: list[_LayerInfo], rank_fields: list[str], parts: _Parts,
           where: str) -> Profile:
    nprocs = int(meta["nprocs"])
    rows = np.frombuffer(b"".join(parts.rows), dtype="<f8").reshape(len(parts.rank_ids), len(rank_fields))
    rank_ids = np.array(parts.rank_ids, dtype=np.int64)
    order = np.argsort(rank_ids, kind="stable")
    rank_ids = rank_ids[order]
    if np.any(rank_ids[1:] == rank_ids[:-1]):
        raise LogFormatError(f"{where}: corrupt pario log (a rank appears twice)")
    ranks = add_derived_rank_columns(_rank_table(_columns(rows[order], rank_fields), rank_ids))

    files: dict[str, Table] = {}
    file_ranks: dict[tuple[str, int], np.ndarray] = {}
    names = _names(parts)
    for lay in layers:
        shared = parts.shared.get(lay.name, np.zeros(0, dtype=lay.dtype))
        files[lay.name] = _layer_records(lay, shared, parts.records[lay.name], parts.pending[lay.name],
                                           names, parts.version >= fmt.COLUMNAR_VERSION,
                                           (parts.bulk, parts.bulk_layers[lay.name]) if parts.bulk else None)
        bitmap = parts.bitmaps.get(lay.name)
        if bitmap is not None:
            bits = np.unpackbits(bitmap, axis=1, bitorder="little")[:, :nprocs]
            for rid, row in zip(shared["id"], bits, strict=True):
                file_ranks[(lay.name, int(rid))] = np.flatnonzero(row)
    parts.bulk = None  # every layer's records decoded: the inflated blocks are let go

    reasons: list[str] = []
    if not meta.get("complete", True):
        reasons.append(f"only ranks {meta.get('ranks_in_log')} of {nprocs}: the job did not reach "
                       "MPI_Finalize")
    missing = nprocs - len(ranks) if meta.get("complete", True) else 0
    if missing > 0:
        reasons.append(f"{missing} of {nprocs} ranks have no data")
    overflowed = int(meta.get("records_overflowed", 0))
    if overflowed:
        reasons.append(f"{overflowed} files were aggregated into an overflow record "
                       f"(PARIO_MEM={meta.get('mem_cap')} bytes was too small)")

    wall = np.asarray(ranks["wall"], dtype=np.float64) if "wall" in ranks else np.zeros(0)
    job = Job(
        source="pario",
        path=where,
        exe=str(meta.get("exe", "")),
        nprocs=nprocs,
        start_time=float(meta.get("start_time", 0.0)),
        end_time=float(meta.get("end_time", 0.0)),
        runtime=_max(wall) if len(wall) else 0.0,
        argv=tuple(str(a) for a in meta.get("argv", [])),
        hostname=str(meta.get("hostname", "")),
        jobid=str(meta.get("jobid", "")),
        mpi_library=str(meta.get("mpi_library", "")),
        complete=not reasons,
        partial_reasons=tuple(reasons),
        has_mpi_time=True,
        has_rank_times=True,
        metadata={
            **{k: meta[k] for k in ("timer", "mem_cap", "injected_hints", "version", "mpi_init_time",
                                    "library_layers")
               if k in meta},
            **rejected_hints(meta),
            **hint_sections(meta),
            # the counter lists, so that tests/pario_writer.py can write the profile back
            "schema": {"layers": meta["layers"], "rank_fields": rank_fields},
            "lustre_striping": lustre_striping(files.get("posix")),
            "launch": launch_command(meta.get("launch")),
        },
    )
    injected = {fid: h for fid, h in parts.injected.items() if h}
    trace = trace_reader.build_trace(nprocs, parts.traces, names, where) if parts.traces else None
    return Profile(job=job, ranks=ranks, files=files, hints=parts.hints, file_ranks=file_ranks,
                   injected_hints=injected, trace=trace)


def hint_sections(meta: dict) -> dict:
    """The ``[GLOB]`` sections of PARIO_HINTS (``injected_hint_sections``: glob and hints, in
    file order); empty for older logs and for a damaged entry."""
    raw = meta.get("injected_hint_sections")
    if not isinstance(raw, list):
        return {}
    sections = [{"glob": str(s.get("glob", "")),
                 "hints": {str(k): str(v) for k, v in s["hints"].items()} if isinstance(s.get("hints"), dict)
                 else {}}
                for s in raw if isinstance(s, dict)]
    return {"injected_hint_sections": sections}


def launch_command(text: object) -> list[str] | None:
    """The command given to ``pario run`` (JSON list in a string), or None."""
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, list) and value and all(isinstance(a, str) for a in value):
        return value
    return None


def lustre_striping(posix: Table | pd.DataFrame | None) -> dict[int, dict[str, int]]:
    """file id -> stripe size and count the runtime read from the file's "lustre.lov" attribute.

    The same shape as the Darshan reader's.  Files not on Lustre (counters 0) are left out, and so
    is every file of a log written before the runtime recorded layouts (no such counters).  A shared
    file's reduced record comes before the ranks' own records in the table, so it is the one kept.
    """
    if posix is None or "lustre_stripe_count" not in posix or "lustre_stripe_size" not in posix:
        return {}
    size = np.asarray(posix["lustre_stripe_size"]).astype(np.int64)
    count = np.asarray(posix["lustre_stripe_count"]).astype(np.int64)
    keep = np.flatnonzero((size > 0) & (count > 0))
    out: dict[int, dict[str, int]] = {}
    ids = np.asarray(posix["id"]).astype(np.uint64)
    for fid, s, c in zip(ids[keep].tolist(), size[keep].tolist(), count[keep].tolist(), strict=True):
        out.setdefault(int(fid), {"stripe_size": int(s), "stripe_count": int(c)})
    return out


def merge_rank_logs(profiles: list[Profile], where: str) -> Profile:
    """One profile from the per-rank logs (``<log>.rank<N>``) of a job that did not finish MPI.

    Nothing was reduced: a file several ranks touched has one record per rank.
    """
    first = profiles[0].job
    per_log = [as_table(p.ranks) for p in profiles]
    rank_ids = np.concatenate([ranks_of_rows(t) for t in per_log])
    order = np.argsort(rank_ids, kind="stable")
    rank_ids = rank_ids[order]
    if np.any(rank_ids[1:] == rank_ids[:-1]):
        raise LogFormatError(f"{where}: two per-rank logs hold the same rank")
    ranks = _rank_table(Table.concat([t.drop(["rank"]) for t in per_log])[order], rank_ids)
    files = {layer: Table.concat([as_table(p.files[layer]) for p in profiles]) for layer in profiles[0].files}
    hints: dict[int, dict[str, str]] = {}
    injected: dict[int, dict[str, str]] = {}
    for p in profiles:
        hints.update(p.hints)
        injected.update(p.injected_hints)
    present = rank_ranges(rank_ids)
    reason = (f"only ranks {present} of {first.nprocs} left data: the job did not reach MPI_Finalize "
              "(merged from its per-rank logs; files several ranks touched are not reduced)")
    wall = np.asarray(ranks["wall"], dtype=np.float64)
    job = dataclasses.replace(
        first, path=where, runtime=_max(wall) if len(ranks) else 0.0, complete=False,
        partial_reasons=(reason,), end_time=max(p.job.end_time for p in profiles),
        metadata={**first.metadata, "lustre_striping": lustre_striping(files.get("posix"))},
    )
    trace = trace_reader.merge_traces([p.trace for p in profiles], first.nprocs)
    return Profile(job=job, ranks=ranks, files=files, hints=hints, file_ranks={},
                   injected_hints=injected, trace=trace)
