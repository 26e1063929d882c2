"""Read a Darshan log into the model, safely.

Darshan's C library (libdarshan-util, as PyDarshan bundles it; :mod:`pario.log.darshan_lib`
binds it without importing PyDarshan, which imports pandas) trusts the file: a damaged log
can make it abort on an assertion, read out of bounds or loop.  So a log goes through two
gates before it becomes a :class:`~pario.model.Profile`:

1. :func:`check_darshan_log` validates, in Python, everything the library
   would trust: the version, the magic number, the compression type, the
   region map (every region inside the file, none overlapping, the job
   region where it must be), that every region inflates completely, and that
   the job record and the name records are well formed -- exactly as far as
   libdarshan-util needs them, so that every log it reads passes.  Modules
   pario can do without (HEATMAP, APMPI, DXT, ...) are only inflated; a module
   id the library does not know, and such a module whose region is cut short or
   does not inflate, are left out of the copy the library reads.
2. The library itself then runs in a forked child process with a time limit;
   if it still crashes or hangs, the child dies, not ``pario``.

The records of a module the library hands over as the log stores them (the current versions
of the file and library modules, :data:`darshan_lib.STORED_AS_READ`, in a log of this machine's
byte order) are decoded at once from the region the check inflated, instead of one library call
and copy per record, and so are the names (formats from 3.10 on, the check's walk of them in
``libpario_log.so``); the library reads the rest (job, mounts, Lustre, APMPI, HEATMAP, DXT,
older versions and the other byte order), the LUSTRE records in one call to ``libpario_log.so``
that loops over the library's.  A read without the trace leaves the DXT regions alone: neither
inflated nor checked.  The child sends back plain tables (:class:`~pario.table.Table`); the
model is built here.
As in PyDarshan's ``DarshanReport``, a record without a name record is left out.  Per-rank
time classes for records that Darshan reduced over all ranks are estimated
as described in :mod:`pario.model.rankio` and docs/metrics.md.

Darshan's DFS and DAOS records (DAOS's file-system library and object API, Darshan 3.4 and
later) become the ``dfs`` and ``daos`` layers, which a profile has only when its log has them
(so that a log without them reads as it did before they were read).  A DFS file's reads and
writes are DAOS array calls on its object, whose DAOS record has the DFS record's id: that DAOS
record is beneath DFS, as the POSIX record of an MPI-IO file is beneath MPI-IO
(:func:`pario.model.rankio.outermost_records`).  DAOS registers objects without a name, so
a DAOS record that no other module names is named by its object id, ``<DAOS object HI.LO>``.

Darshan's H5F, H5D, PNETCDF_FILE and PNETCDF_VAR records (Darshan 3.4 and later) become
the ``h5f``, ``h5d``, ``pnetcdf_file`` and ``pnetcdf_var`` layers with pario's column
names (``*_MAX_READ_TIME_SIZE`` -> ``max_read_size``, as pario's counters say it).
Darshan has no per-rank time classes; as for pario logs, time in a library call is the
library's: the ranks' ``hdf5_*`` / ``pnetcdf_*`` time is their datasets' and variables'
time plus their files' own (metadata) time, and the MPI-IO and POSIX records of those
files leave the outermost time (:func:`pario.model.rankio.time_records`,
docs/metrics.md "I/O libraries").

Darshan's APMPI records (MPI time per rank and call type) fill the rank table's MPI columns
(:mod:`pario.log.apmpi`; ``Job.metadata["mpi_time_source"]`` says what they cover), and its
HEATMAP records become ``Profile.heatmap`` (:mod:`pario.log.heatmap`); a log without them has
no MPI time and no heat map, and one whose region of them is damaged is read without them.
Its DXT_POSIX and DXT_MPIIO segments become ``Profile.trace`` (:mod:`pario.log.dxt`, docs/trace.md
"Darshan DXT traces"), likewise left out when their region is damaged (:func:`_dxt_damage`).

Two things read differently from libdarshan-util (docs/metrics.md, "Darshan logs"):

* the run time of a log whose job times are whole seconds (formats before 3.41, and Darshan
  3.4.0's 3.41 logs) comes from the records' file timestamps, kept within what the job times
  allow (:func:`job_runtime`); the sentence saying how is ``Job.metadata["runtime_source"]``;
* a log cut short, or damaged, inside the region of a module pario can do without (HEATMAP,
  APMPI, DXT, ...) is read without that module and marked partial, instead of being refused.
"""

from __future__ import annotations

import bz2
import contextlib
import faulthandler
import os
import pickle
import select
import signal
import struct
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pario import units
from pario.errors import LogFormatError, TooManyRanks
from pario.log import darshan_lib
from pario.log.apmpi import ApmpiTime, apmpi_time, coverage, exclusive
from pario.log.dxt import dxt_trace
from pario.log.heatmap import build_heatmap
from pario.model import (
    LAYER_TABLE,
    LAYERS,
    LIBRARIES,
    LIBRARY_LAYERS,
    Job,
    Profile,
    add_derived_rank_columns,
    counter_column,
    empty_layer,
)
from pario.model.rankio import ProfileIO
from pario.table import Table, constant_column, unique_index

DARSHAN_MAGIC = 6567223
#: Log format versions libdarshan-util 3.4/3.5 reads, with their DARSHAN_MAX_MODS.
SUPPORTED_VERSIONS: dict[str, int] = {"3.00": 16, "3.10": 16, "3.20": 16, "3.21": 16, "3.41": 64}
#: Darshan module name -> model layer.
LAYER_OF_MODULE: dict[str, str] = {x.module: x.name for x in LAYER_TABLE}
#: The layers a profile has even without records, in the order ``pario dump`` has always printed
#: them; the others (DFS, DAOS) it has only when the log has their module.
_LISTED_LAYERS: tuple[str, ...] = ("posix", "mpiio", "stdio", *LIBRARY_LAYERS)
#: The storage layers in the order of the rank table's columns (the same: listed first).
_RANK_LAYERS: tuple[str, ...] = (*(x for x in _LISTED_LAYERS if x in LAYERS),
                                 *(x for x in LAYERS if x not in _LISTED_LAYERS))
#: Darshan column -> pario column in the library layers (the rest is named alike).
_LIBRARY_RENAMES: dict[str, str] = {"max_read_time_size": "max_read_size",
                                    "max_write_time_size": "max_write_size"}
#: Module ids libdarshan-util 3.4/3.5 knows (darshan-log-format.h); a log may have data for
#: higher ids (a newer Darshan), which the library cannot even list.
KNOWN_MODULES: tuple[str, ...] = (
    "NULL", "POSIX", "MPI-IO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "BG/Q", "LUSTRE", "STDIO",
    "DXT_POSIX", "DXT_MPIIO", "MDHIM", "APXC", "APMPI", "HEATMAP", "DFS", "DAOS",
)
#: Modules whose records pario reads: damage in their regions refuses the log.
_READ_MODULES: frozenset[str] = frozenset({*LAYER_OF_MODULE, "LUSTRE"})
#: The byte order of this machine, as struct writes it.
_NATIVE_ORDER = "<" if sys.byteorder == "little" else ">"
#: Largest job a log may claim (a corrupt count must not allocate the machine's memory).
MAX_NPROCS = 1 << 26
#: Largest size any region may inflate to.
MAX_INFLATED_BYTES = 1 << 34
#: Time the library may take: DEFAULT_TIMEOUT plus TIMEOUT_PER_MIB per MiB of log.
DEFAULT_TIMEOUT = 120.0
TIMEOUT_PER_MIB = 2.0
_JOB_RECORD_SIZE = 4096
_CHUNK = 1 << 24


@dataclass(frozen=True)
class DarshanHeader:
    """What :func:`check_darshan_log` learned from the file itself."""

    version: str
    byte_order: str  # "<" or ">"
    compression: str  # "zlib", "bzip2" or "none"
    partial_flags: int
    nprocs: int
    regions: dict[int, tuple[int, int]]  # module index -> (offset, length)
    module_versions: dict[int, int]
    unknown_modules: tuple[int, ...] = ()  # module ids with data that the library does not know
    #: header slots of modules pario does not read whose region is cut short or does not inflate
    #: -> why (a sentence); the library reads the log without them
    dropped_modules: dict[int, str] = field(default_factory=dict)
    #: DXT modules whose segments are newer than libdarshan-util's (40 bytes, with the thread id):
    #: header slot -> (module, segments) decoded here; the library reads the log without them
    own_dxt: dict[int, tuple[str, darshan_lib.DxtSegments]] = field(default_factory=dict)
    #: record id -> name, for the records of ``own_dxt``
    own_dxt_names: dict[int, str] = field(default_factory=dict)
    #: module -> its region inflated, for the modules whose records the library reads as they are
    #: stored (darshan_lib.stored_as_read) in a log of this machine's byte order: decoded here
    stored: dict[str, bytes] = field(default_factory=dict)
    #: the name records inflated, in a log of this machine's byte order from format 3.10 on
    #: (darshan_lib.decode_names reads them as the library does); None: the library reads them
    names: bytes | None = None


@dataclass
class _RawDarshan:
    """What the reading child sends back: plain, picklable data."""

    job: dict[str, Any]
    exe: str
    mounts: list[tuple[str, str]]
    modules: dict[str, dict[str, Any]]
    #: module -> its named records: rank, id, name, the counters and fcounters (Darshan's names)
    records: dict[str, Table] = field(default_factory=dict)
    #: the LUSTRE components of named records: rank, id and the counters; None without any
    lustre: Table | None = None
    #: the APMPI records (darshan_lib.ApmpiRecords) and the heat map (model.Heatmap); None without
    apmpi: Any = None
    heatmap: Any = None
    #: module -> why its records could not be read
    not_read: dict[str, str] = field(default_factory=dict)
    #: the DXT modules' named records and their segments (darshan_lib.DxtSegments), by module
    dxt: dict[str, Any] = field(default_factory=dict)
    #: record id -> name of the DXT records
    dxt_names: dict[int, str] = field(default_factory=dict)


# --------------------------------------------------------------------------
# gate 1: structural validation
# --------------------------------------------------------------------------

def check_darshan_log(path: str | os.PathLike[str], *, trace: bool = True) -> DarshanHeader:
    """Validate a Darshan log's structure; raise LogFormatError naming the problem.  ``trace``
    False leaves the DXT regions unchecked, for a reader that leaves them unread."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise LogFormatError(f"{p}: cannot read: {exc.strerror}") from None
    return _check_bytes(data, str(p), trace)


def _fail(where: str, what: str) -> LogFormatError:
    return LogFormatError(f"{where}: corrupt Darshan log ({what})")


def _check_bytes(data: bytes, where: str, trace: bool = True) -> DarshanHeader:
    if len(data) < 16:
        raise LogFormatError(f"{where}: truncated Darshan log (shorter than its header)")
    version = data[:8].split(b"\0", 1)[0].decode("ascii", errors="replace")
    if version not in SUPPORTED_VERSIONS:
        supported = ", ".join(SUPPORTED_VERSIONS)
        raise LogFormatError(f"{where}: Darshan log format version {version!r} is not supported "
                             f"(supported: {supported})")
    max_mods = SUPPORTED_VERSIONS[version]
    order = _byte_order(data, where)
    wide = max_mods == 64  # 3.41: 64-bit partial flag, 64 module slots
    map_at = 32 if wide else 24
    header_size = map_at + 16 + max_mods * 16 + max_mods * 4
    if len(data) < header_size:
        raise LogFormatError(f"{where}: truncated Darshan log (shorter than its header)")
    (comp_type,) = struct.unpack_from(order + "i", data, 16)
    partial = struct.unpack_from(order + ("Q" if wide else "I"), data, 24 if wide else 20)[0]
    compression = {0: "zlib", 1: "bzip2", 2: "none"}.get(comp_type)
    if compression is None:
        raise _fail(where, f"unknown compression type {comp_type}")
    name_map = struct.unpack_from(order + "QQ", data, map_at)
    maps = [struct.unpack_from(order + "QQ", data, map_at + 16 + 16 * i) for i in range(max_mods)]
    vers = struct.unpack_from(order + f"{max_mods}I", data, map_at + 16 + 16 * max_mods)

    regions, dropped = _check_region_map(name_map, maps, header_size, len(data), where, version)
    job_end = _job_region_end(name_map, maps, len(data))
    if not header_size < job_end <= min([off for off, _ in regions.values()], default=len(data)):
        raise _fail(where, "the job region has no valid extent")
    job = _inflate_all(data[header_size:job_end], compression, where, "job data", keep=True)
    nprocs = _check_job(job, order, wide, where)
    names = b""
    if name_map[1]:
        names = _inflate_all(data[name_map[0]:name_map[0] + name_map[1]], compression, where,
                             "name records", keep=True)
        _check_name_records(names, version, order, where)
    module_versions: dict[int, int] = {}
    own_dxt: dict[int, tuple[str, darshan_lib.DxtSegments]] = {}
    stored: dict[str, bytes] = {}
    native = order == _NATIVE_ORDER
    for idx, (off, length) in regions.items():
        if idx < 0:
            continue
        module_versions[idx] = vers[idx]
        _check_module_version(idx, vers[idx], where)
        name = module_name(version, idx)
        if idx in dropped or (not trace and name in darshan_lib.DXT_MODULES):
            continue
        as_stored = native and name in LAYER_OF_MODULE and darshan_lib.stored_as_read(name, vers[idx])
        try:
            blob = _inflate(data[off:off + length], compression, f"module {idx} data",
                            keep=as_stored or name in darshan_lib.DXT_MODULES)
        except _Damaged as exc:
            if name in _READ_MODULES:
                raise exc.error(where) from None
            # a module pario does not read: the rest of the log is still worth reading
            dropped[idx] = f"the {name} region (bytes {off} to {off + length}) {exc.how}: not read"
            continue
        if as_stored:
            stored[name] = blob
        if name in darshan_lib.DXT_MODULES:
            segment = dxt_segment_size(name, vers[idx])
            if why := _dxt_damage(blob, order, segment):
                # a trace is an extra: the log's counters are still worth reading without it
                dropped[idx] = f"the {name} region (bytes {off} to {off + length}) {why}: not read"
            elif segment != _DXT_SEGMENT_SIZE:
                own_dxt[idx] = (name, decode_dxt(blob, order, segment))
    unknown = tuple(i for i in module_versions if i >= len(KNOWN_MODULES))
    wanted = {int(i) for _, segs in own_dxt.values() for i in segs.ids.tolist()}
    return DarshanHeader(version, order, compression, int(partial), nprocs,
                         {k: v for k, v in regions.items() if k >= 0}, module_versions, unknown,
                         dict(sorted(dropped.items())), own_dxt,
                         _name_records(names, order, wanted) if wanted else {}, stored,
                         names if native and version != "3.00" else None)


def module_name(version: str, slot: int) -> str:
    """The module libdarshan-util reads a header slot of a ``version`` log as.

    The library up-converts the module ids of older formats, whose lists lacked modules added
    since: 3.00 and 3.10 had no H5D and one PNETCDF module (slot 4, read as PNETCDF_FILE; slot 5
    on is two ids lower), 3.20 and 3.21 one PNETCDF module (slot 6 on is one id lower).  Found
    by asking the library to list a region put in each slot of each format
    (tests/test_darshan_time_and_cuts.py asks it again).
    """
    if version in ("3.00", "3.10"):
        module_id = slot + (2 if slot >= 5 else 1 if slot == 4 else 0)
    else:
        module_id = slot + (1 if version in ("3.20", "3.21") and slot >= 6 else 0)
    return KNOWN_MODULES[module_id] if module_id < len(KNOWN_MODULES) else f"unknown module {slot}"


def _byte_order(data: bytes, where: str) -> str:
    for order in ("<", ">"):
        if struct.unpack_from(order + "q", data, 8)[0] == DARSHAN_MAGIC:
            return order
    raise _fail(where, "bad magic number")


def _check_region_map(name_map: tuple[int, int], maps: list[tuple[int, int]], header_size: int,
                      size: int, where: str, version: str
                      ) -> tuple[dict[int, tuple[int, int]], dict[int, str]]:
    """The regions (-1: the name records) and, for the modules pario does not read whose region
    the end of the file cuts short, why they are dropped; a cut elsewhere refuses the log."""
    regions: dict[int, tuple[int, int]] = {}
    if name_map[1]:
        regions[-1] = name_map
    for i, (off, length) in enumerate(maps):
        if length:
            regions[i] = (off, length)
        elif off and off > size:
            raise _fail(where, f"module {i} region starts beyond the end of the file")
    dropped: dict[int, str] = {}
    for idx, (off, length) in sorted(regions.items(), key=lambda item: item[1]):
        if off < header_size + 1 or off + length > size or off + length < off:
            if off + length > size and off > header_size and idx >= 0 \
                    and module_name(version, idx) not in _READ_MODULES:
                dropped[idx] = _cut_reason(module_name(version, idx), off, off + length, size)
                continue
            if off + length > size:
                raise LogFormatError(f"{where}: truncated Darshan log (a region ends at byte "
                                     f"{off + length}, the file has {size})")
            raise _fail(where, f"a region starts at byte {off}, inside the header")
    spans = sorted(regions.values())
    for (a_off, a_len), (b_off, _) in zip(spans, spans[1:], strict=False):
        if a_off + a_len > b_off:
            raise _fail(where, "overlapping regions")
    return regions, dropped


def _cut_reason(name: str, start: int, end: int, size: int) -> str:
    """Why a module's region, bytes ``start`` to ``end``, is not read from a file of ``size`` bytes."""
    if size <= start:
        return f"the {name} region is missing (the file ends at byte {size}, it starts at byte {start})" \
            ": not read"
    return f"the {name} region is cut short at byte {size} (it runs to byte {end}): not read"


def _job_region_end(name_map: tuple[int, int], maps: list[tuple[int, int]], size: int) -> int:
    """Where the job region ends, computed the way libdarshan-util does."""
    if name_map[0]:
        return name_map[0]
    return next((off for off, _ in maps if off), size)


class _Damaged(Exception):
    """A region that does not inflate: ``text`` is what the error says, ``how`` the same without
    the region's name; ``truncated`` when its data stops before the end of its stream."""

    def __init__(self, text: str, how: str, *, truncated: bool = False) -> None:
        super().__init__(text)
        self.text, self.how, self.truncated = text, how, truncated

    def error(self, where: str) -> LogFormatError:
        if self.truncated:
            return LogFormatError(f"{where}: truncated Darshan log ({self.text})")
        return _fail(where, self.text)


def _inflate_all(blob: bytes, compression: str, where: str, what: str, *, keep: bool) -> bytes:
    """Inflate a region (one or more concatenated streams); keep the output if asked."""
    try:
        return _inflate(blob, compression, what, keep=keep)
    except _Damaged as exc:
        raise exc.error(where) from None


def _inflate(blob: bytes, compression: str, what: str, *, keep: bool) -> bytes:
    """:func:`_inflate_all`, raising _Damaged."""
    if compression == "none":
        return blob if keep else b""
    if not blob:
        raise _Damaged(f"empty {what}", "is empty")
    out: list[bytes] = []
    total = 0
    rest = blob
    while rest:
        dec: Any = zlib.decompressobj() if compression == "zlib" else bz2.BZ2Decompressor()
        try:
            chunk = rest
            while not dec.eof:
                piece = dec.decompress(chunk, _CHUNK)
                total += len(piece)
                if total > MAX_INFLATED_BYTES:
                    raise _Damaged(f"{what} inflates beyond {MAX_INFLATED_BYTES} bytes",
                                   f"inflates beyond {MAX_INFLATED_BYTES} bytes")
                if keep:
                    out.append(piece)
                if dec.eof:
                    break
                chunk = dec.unconsumed_tail if compression == "zlib" else b""
                starved = (not chunk and not piece) if compression == "zlib" else dec.needs_input
                if starved:
                    raise _Damaged(f"{what} is cut short", "is cut short inside its compressed data",
                                   truncated=True)
        except (zlib.error, OSError, EOFError, ValueError) as exc:
            raise _Damaged(f"{what} does not decompress: {exc}", f"does not decompress ({exc})") from None
        rest = dec.unused_data
    return b"".join(out)


def _check_job(job: bytes, order: str, wide: bool, where: str) -> int:
    job_struct = 7 * 8 + 1024 if wide else 5 * 8 + 1024
    if len(job) <= job_struct:
        raise _fail(where, "job record too short")
    (nprocs,) = struct.unpack_from(order + "q", job, 40 if wide else 24)
    if not 1 <= nprocs <= MAX_NPROCS:
        raise _fail(where, f"job claims {nprocs} processes")
    return int(nprocs)


def _check_name_records(buf: bytes, version: str, order: str, where: str) -> None:
    """Name records are ``uint64 id`` + NUL-terminated name, back to back.

    The name may be empty: Darshan 3.4 registers DAOS objects without a name, so their
    record is the id and one NUL (9 bytes), and a name given later follows as a second
    record with the same id.  libdarshan-util reads a record while at least 9 bytes are
    left and fails on anything left over, so that is what is checked here.
    Version 3.00 logs store ``uint64 id``, ``uint32 length`` and the path instead.
    """
    pos, n = 0, len(buf)
    if version == "3.00":
        while n - pos >= 12:
            (length,) = struct.unpack_from(order + "I", buf, pos + 8)
            pos += 12 + length
        if pos != n:
            raise _fail(where, "malformed name records")
        return
    pos = darshan_lib.name_records(buf)[3]
    if pos != n:
        raise _fail(where, f"malformed name records: {n - pos} bytes at the end are not a record")


#: ``struct dxt_file_record``: base record (id, rank), shared_record, hostname[64], write_count,
#: read_count; then write_count + read_count ``segment_info`` (offset, length, start, end, and
#: from DXT_POSIX version 2 and DXT_MPIIO version 3 on the thread id).
_DXT_RECORD = struct.Struct("Qqq64sqq")
#: the segment libdarshan-util reads (PyDarshan 3.5.0: without the thread id)
_DXT_SEGMENT_SIZE = 32
#: the first module version whose segments carry the thread id (Darshan's development line after 3.5.0)
_DXT_THREAD_ID_SINCE = {"DXT_POSIX": 2, "DXT_MPIIO": 3}


def dxt_segment_size(module: str, version: int) -> int:
    """Bytes of one segment of a DXT module of this version: 40 with the thread id, else 32."""
    return 40 if version >= _DXT_THREAD_ID_SINCE.get(module, 1 << 30) else _DXT_SEGMENT_SIZE


def decode_dxt(blob: bytes, order: str, segment: int) -> darshan_lib.DxtSegments:
    """A DXT region's records and segments (a region :func:`_dxt_damage` found whole), decoded here
    for the versions libdarshan-util does not read."""
    head = struct.Struct(order + _DXT_RECORD.format)
    fields = [("offset", order + "i8"), ("length", order + "i8"), ("start", order + "f8"),
              ("end", order + "f8")] + ([("thread", order + "u8")] if segment == 40 else [])
    dtype = np.dtype(fields)
    ids, ranks, hosts, writes, reads, parts = [], [], [], [], [], []
    pos = 0
    while pos < len(blob):
        rid, rank, _, host, nw, nr = head.unpack_from(blob, pos)
        pos += head.size
        seg = np.frombuffer(blob, dtype=dtype, count=nw + nr, offset=pos)
        pos += (nw + nr) * segment
        ids.append(rid)
        ranks.append(rank)
        hosts.append(host.split(b"\0", 1)[0].decode("utf-8", errors="replace"))
        writes.append(nw)
        reads.append(nr)
        out = np.empty(len(seg), dtype=darshan_lib.SEGMENT_DTYPE)
        for name in ("offset", "length", "start", "end"):
            out[name] = seg[name]
        parts.append(out)
    segments = np.concatenate(parts) if parts else np.empty(0, dtype=darshan_lib.SEGMENT_DTYPE)
    return darshan_lib.DxtSegments(np.array(ids, dtype=np.uint64), np.array(ranks, dtype=np.int64),
                                   tuple(hosts), np.array(writes, dtype=np.int64),
                                   np.array(reads, dtype=np.int64), segments)


def _name_records(buf: bytes, order: str, wanted: set[int]) -> dict[int, str]:
    """The names of the records ``wanted`` (``uint64 id`` + NUL-terminated name, back to back; a
    later record of an id gives its name)."""
    out: dict[int, str] = {}
    pos, n = 0, len(buf)
    while n - pos >= 9:
        (rid,) = struct.unpack_from(order + "Q", buf, pos)
        end = buf.find(b"\0", pos + 8)
        if end < 0:
            break
        if rid in wanted and end > pos + 8:
            out[rid] = buf[pos + 8:end].decode("utf-8", errors="replace")
        pos = end + 1
    return out


def _dxt_damage(blob: bytes, order: str, segment: int = _DXT_SEGMENT_SIZE) -> str:
    """Why a DXT region's records cannot be read as libdarshan-util reads them ('' if they can):
    every record whole, its counts not negative, its segments inside the region."""
    head = struct.Struct(order + _DXT_RECORD.format)
    pos, n = 0, len(blob)
    while pos < n:
        if n - pos < head.size:
            return f"ends inside a record ({n - pos} bytes after the last whole one)"
        *_, writes, reads = head.unpack_from(blob, pos)
        if writes < 0 or reads < 0:
            return f"holds a record with {writes} writes and {reads} reads"
        pos += head.size + (writes + reads) * segment
        if pos > n:
            return f"holds a record whose {writes + reads} segments run past its end"
    return ""


def _check_module_version(idx: int, ver: int, where: str) -> None:
    # Newer versions than the library knows are refused by the library itself.
    if ver == 0:
        raise _fail(where, f"module {idx} has data but version 0")


# --------------------------------------------------------------------------
# gate 2: libdarshan-util in a child process
# --------------------------------------------------------------------------

def _load_with_library(path: str, trace: bool = True, header: DarshanHeader | None = None) -> _RawDarshan:
    """Read the log with libdarshan-util (:mod:`pario.log.darshan_lib`) into plain tables (its
    DXT segments with ``trace``); the records of the modules ``header`` holds the regions of
    (DarshanHeader.stored), and its names, are decoded from what the check inflated instead."""
    stored = header.stored if header is not None else {}
    names_of = (darshan_lib.decode_names(header.names)
                if header is not None and header.names is not None else None)
    log = darshan_lib.read_log(path, [m for m in LAYER_OF_MODULE if m not in stored], dxt=trace,
                               names=names_of)
    raw = _RawDarshan(job=log.job, exe=log.exe, mounts=log.mounts,
                      modules={name: dict(info) for name, info in log.modules.items()})
    names = _name_lookup(log.names)
    for mod in LAYER_OF_MODULE:
        if mod in log.records:
            raw.records[mod] = _module_records(log.records[mod], names, mod)
        elif mod in stored and mod in log.modules:
            raw.records[mod] = _module_records(darshan_lib.decode_records(mod, stored[mod]), names, mod)
    for mod, segments in log.dxt.items():  # as PyDarshan, only the records with a name
        found, _ = _names_of(segments.ids, names)
        raw.dxt[mod] = segments.take(found)
        raw.dxt_names.update((int(i), log.names[int(i)]) for i in np.unique(segments.ids[found]).tolist())
    if log.lustre is not None:
        raw.lustre = _lustre_components(log.lustre, names)
    raw.apmpi = log.apmpi
    raw.heatmap = build_heatmap(log.heatmap, log.names) if log.heatmap is not None else None
    raw.not_read = dict(log.not_read)
    return raw


def _name_lookup(names: dict[int, str]) -> tuple[np.ndarray, np.ndarray]:
    """(sorted record ids, their names as an object array), for :func:`_names_of`."""
    ids = np.fromiter(names.keys(), dtype=np.uint64, count=len(names))
    values = np.empty(len(names), dtype=object)
    values[:] = list(names.values())
    order = np.argsort(ids, kind="stable")
    return ids[order], values[order]


def _names_of(ids: np.ndarray, names: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """For each id: whether it has a name record, and the name (None where it has none)."""
    known_ids, known_names = names
    out = np.empty(len(ids), dtype=object)
    if not len(known_ids):
        return np.zeros(len(ids), dtype=bool), out
    pos = np.minimum(np.searchsorted(known_ids, ids), len(known_ids) - 1)
    found = known_ids[pos] == ids
    out[found] = known_names[pos[found]]
    return found, out


def _module_records(records: darshan_lib.Records, names: tuple[np.ndarray, np.ndarray],
                    module: str = "") -> Table:
    """A module's named records: rank, id, name, then the counters and fcounters under Darshan's
    names; without any, only rank, id and name (PyDarshan made no counter columns then).  A DAOS
    object's empty name becomes its object id (:func:`daos_object_name`), any other record's
    empty name its record id (:func:`unnamed_record`): never a blank name in a table or a finding."""
    found, name = _names_of(records.ids, names)
    for i in np.flatnonzero(found & (name == "")).tolist():
        name[i] = (daos_object_name(int(records.oids[i, 0]), int(records.oids[i, 1]))
                   if records.oids is not None else unnamed_record(module, int(records.ids[i])))
    if not found.any():
        return Table({"rank": np.zeros(0, dtype=np.int64), "id": np.zeros(0, dtype=np.uint64),
                      "name": np.zeros(0, dtype=object)})
    keep = None if found.all() else found
    def rows(a: np.ndarray) -> np.ndarray:
        return a if keep is None else a[keep]

    cols = {"rank": rows(records.ranks), "id": rows(records.ids), "name": rows(name)}
    # one transposing copy per block: each counter column then is contiguous
    for block, columns in ((records.counters, records.counter_names),
                           (records.fcounters, records.fcounter_names)):
        by_column = np.ascontiguousarray(rows(block).T)
        for i, col in enumerate(columns):
            cols[col] = by_column[i]
    return Table.from_arrays(cols, len(cols["id"]))


def daos_object_name(hi: int, lo: int) -> str:
    """The name of a DAOS object that no module named (Darshan registers DAOS objects without a
    name): its object id as DAOS's tools print it, ``<DAOS object HI.LO>``."""
    return f"<DAOS object {hi}.{lo}>"


def unnamed_record(module: str, rec_id: int) -> str:
    """The name of a record whose name record is empty (a DFS file Darshan registered without its
    path): its module and record id, ``<DFS record 0123456789abcdef>``."""
    return f"<{module or 'unnamed'} record {rec_id:016x}>"


def _lustre_components(comps: darshan_lib.LustreComponents,
                       names: tuple[np.ndarray, np.ndarray]) -> Table | None:
    """The components of the named LUSTRE records (rank, id, counters), None without any."""
    found, _ = _names_of(comps.ids, names)
    if not found.any():
        return None
    table = Table({"rank": comps.ranks[found], "id": comps.ids[found]})
    for i, col in enumerate(comps.counter_names):
        table[col] = comps.counters[found, i]
    return table


def _run_guarded(path: str, timeout: float, trace: bool = True,
                 header: DarshanHeader | None = None) -> _RawDarshan:
    """Read the log in a forked child; turn a crash or hang into LogFormatError."""
    if not hasattr(os, "fork"):
        return _load_with_library(path, trace, header)
    darshan_lib.library()  # loaded once in the parent, so that children start warm

    with tempfile.TemporaryFile() as errlog:
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            _child(path, trace, header, rfd, wfd, errlog.fileno())
        os.close(wfd)
        try:
            payload, timed_out = _read_until(rfd, timeout)
        finally:
            os.close(rfd)
        if timed_out:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        errlog.seek(0)
        stderr = errlog.read().decode("utf-8", errors="replace")
    detail = _last_error_line(stderr)
    if timed_out:
        raise _fail(path, f"the Darshan reader did not finish within {timeout:.0f} s")
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status)).name
        raise _fail(path, f"the Darshan reader library crashed ({sig}){': ' + detail if detail else ''}")
    try:
        kind, value = pickle.loads(payload)
    except Exception:
        raise _fail(path, f"the Darshan reader stopped{': ' + detail if detail else ''}") from None
    if kind != "ok":
        raise _fail(path, f"{value}{'; ' + detail if detail else ''}")
    return value


def _load_in_process(path: str, trace: bool, header: DarshanHeader) -> _RawDarshan:
    """Read the log in this process; the library's own errors become LogFormatError."""
    try:
        return _load_with_library(path, trace, header)
    except LogFormatError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the binding raises on a damaged log
        raise _fail(path, f"{type(exc).__name__}: {exc}") from None


def _child(path: str, trace: bool, header: DarshanHeader | None, rfd: int, wfd: int,
           errfd: int) -> None:  # pragma: no cover - runs in the child
    code = 0
    try:
        faulthandler.disable()  # a crash is reported by the parent, not dumped on the user's terminal
        os.close(rfd)
        os.dup2(errfd, 1)
        os.dup2(errfd, 2)
        try:
            result: tuple[str, Any] = ("ok", _load_with_library(path, trace, header))
        except BaseException as exc:  # noqa: B036 - everything must go back to the parent
            result = ("error", f"{type(exc).__name__}: {exc}")
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            n = os.write(wfd, view)
            view = view[n:]
        os.close(wfd)
    except BaseException:  # noqa: B036
        code = 1
    os._exit(code)


def _read_until(fd: int, timeout: float) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"".join(chunks), True
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)


def _last_error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower() or "assert" in ln.lower()]
    pick = errors[-1] if errors else (lines[-1] if lines else "")
    return pick[:200]


# --------------------------------------------------------------------------
# the model
# --------------------------------------------------------------------------

def read_darshan_log(path: str | os.PathLike[str], *, timeout: float | None = None,
                     isolated: bool = True, max_ranks: int | None = None, trace: bool = True) -> Profile:
    """Read a Darshan log; raise LogFormatError naming the file if it is damaged.

    ``timeout`` bounds the time the reading library may take (default: DEFAULT_TIMEOUT seconds plus
    TIMEOUT_PER_MIB per MiB of log); ``isolated`` False reads in this process (no timeout).
    ``max_ranks``: a log of a larger job raises TooManyRanks before anything per rank is made.
    ``trace`` False leaves the DXT segments unread (their regions neither inflated nor checked):
    ``Profile.trace`` is None.
    """
    p = Path(path)
    header = check_darshan_log(p, trace=trace)
    if max_ranks is not None and header.nprocs > max_ranks:
        raise TooManyRanks(f"{p}: a job of {header.nprocs:,} ranks (at most {max_ranks:,} here)",
                           header.nprocs)
    if timeout is None:
        timeout = DEFAULT_TIMEOUT + TIMEOUT_PER_MIB * p.stat().st_size / 2**20
    with _readable_by_library(p, header) as readable:
        raw = (_run_guarded(str(readable), timeout, trace, header) if isolated
               else _load_in_process(str(readable), trace, header))
    if trace:
        _add_own_dxt(raw, header)
    try:
        return _build_profile(raw, header, str(p), trace)
    except (KeyError, ValueError, TypeError, IndexError) as exc:
        raise _fail(str(p), f"unexpected content: {type(exc).__name__}: {exc}") from None


def _add_own_dxt(raw: _RawDarshan, header: DarshanHeader) -> None:
    """The DXT modules decoded here (:func:`decode_dxt`), their named records only, as the
    library's are; listed among the log's modules with their version."""
    for idx, (module, segments) in header.own_dxt.items():
        named = np.array([int(i) in header.own_dxt_names for i in segments.ids.tolist()], dtype=bool)
        raw.dxt[module] = segments.take(named)
        raw.dxt_names.update((int(i), header.own_dxt_names[int(i)]) for i in segments.ids[named].tolist())
        raw.modules[module] = {"len": header.regions[idx][1], "ver": header.module_versions[idx], "idx": idx,
                               "partial_flag": 0}


@contextlib.contextmanager
def _readable_by_library(path: Path, header: DarshanHeader) -> Iterator[Path]:
    """The log as libdarshan-util can open it: if some module ids are unknown to it (a newer
    Darshan's modules) or some modules pario does not read are damaged (cut short, not
    inflating), a temporary copy whose header leaves them out; else the log itself."""
    left_out = sorted({*header.unknown_modules, *header.dropped_modules, *header.own_dxt})
    if not left_out:
        yield path
        return
    data = bytearray(path.read_bytes())
    max_mods = SUPPORTED_VERSIONS[header.version]
    maps_at = 48 if max_mods == 64 else 40  # the module maps, after the name-record map
    for idx in left_out:
        # the length only: the offset still bounds the job region when there are no name records
        struct.pack_into(header.byte_order + "Q", data, maps_at + 16 * idx + 8, 0)
        struct.pack_into(header.byte_order + "I", data, maps_at + 16 * max_mods + 4 * idx, 0)
    with tempfile.TemporaryDirectory(prefix="pario-darshan-") as tmp:
        copy = Path(tmp) / path.name
        copy.write_bytes(bytes(data))
        yield copy


def _layer_records(module: Table, nprocs: int, layer: str = "posix") -> Table:
    """A module's records as a model layer: id, rank, name, the counters under pario's names
    (:func:`~pario.model.counter_column`), then ``nranks`` (the job's size for a shared record)."""
    def model_name(col: str) -> str:
        name = counter_column(col)
        return name if layer in LAYERS else _LIBRARY_RENAMES.get(name, name)

    rank = np.asarray(module["rank"]).astype(np.int64)
    cols = {"id": np.asarray(module["id"]).astype(np.uint64), "rank": rank,
            "name": np.asarray(module["name"])}
    for col, values in module.items():
        if col not in ("id", "rank", "name"):
            cols[model_name(col)] = np.asarray(values)
    cols["nranks"] = np.where(rank < 0, nprocs, 1).astype(np.int64)
    return Table.from_arrays(cols, len(rank))


def _build_profile(raw: _RawDarshan, header: DarshanHeader, where: str, trace: bool = True) -> Profile:
    job = raw.job
    nprocs = int(job["nprocs"])
    if nprocs != header.nprocs or not 1 <= nprocs <= MAX_NPROCS:
        raise _fail(where, f"job claims {nprocs} processes")
    files = {layer: empty_layer() for layer in _LISTED_LAYERS}
    for mod, records in raw.records.items():
        files[LAYER_OF_MODULE[mod]] = _layer_records(records, nprocs, LAYER_OF_MODULE[mod])

    runtime, runtime_source = job_runtime(job, header.version, latest_timestamp(raw.records))
    io = ProfileIO(files, nprocs, {})  # kept with the profile: the analysis needs it again
    per_layer, combined = io.time_layers()
    mpi = apmpi_time(raw.apmpi, nprocs) if raw.apmpi is not None else None
    table = _rank_table(per_layer, nprocs, runtime)
    ranks = add_derived_rank_columns(table)
    io_time = np.asarray(ranks["io"], dtype=np.float64)
    longer, runtime_source = _at_least_the_io(io_time, runtime, runtime_source)
    changed = longer > runtime
    if changed:
        runtime = longer
        table = table.assign(wall=constant_column(nprocs, runtime))
    overlap = ""
    if mpi is not None and not mpi.reason:  # MPI time per rank (docs/metrics.md, "MPI time from APMPI")
        columns, shared = exclusive(mpi.columns, io_time, np.asarray(table["wall"], dtype=np.float64))
        table = table.assign(**columns)
        overlap = shared.text
        changed = True
    if changed:  # the wall or MPI columns are new: their derived columns again
        ranks = add_derived_rank_columns(table)

    start = float(job.get("start_time_sec", 0)) + float(job.get("start_time_nsec", 0)) * 1e-9
    end = float(job.get("end_time_sec", 0)) + float(job.get("end_time_nsec", 0)) * 1e-9
    argv = tuple(raw.exe.split())
    partial = sorted(m for m, info in raw.modules.items() if info.get("partial_flag"))
    reasons = tuple(f"Darshan's {m} module data is partial (it ran out of record memory, so some files "
                    "or counters are missing)" for m in partial) + tuple(header.dropped_modules.values()) \
        + tuple(f"Darshan's {m} records could not be read ({why})" for m, why in raw.not_read.items())
    meta = dict(job.get("metadata") or {})
    dropped = {module_name(header.version, i): i for i in header.dropped_modules}
    unknown = [f"unknown module {i}" for i in header.unknown_modules]
    # the DXT modules are read as the trace (left unread when no trace is asked for)
    traced = raw.dxt if trace else darshan_lib.DXT_MODULES
    other = sorted({*(m for m in raw.modules if m not in _READ_MODULES and m not in traced), *dropped}
                   - set(unknown)) + unknown
    other = [m for m in other if m not in _analysed_extras(raw, mpi)]
    modules: dict[str, dict[str, object]] = {
        m: {"records": len(raw.records[m]) if m in raw.records
            else len(raw.dxt[m].ids) if m in raw.dxt else None,
            "version": int(info.get("ver", 0)), "partial": bool(info.get("partial_flag"))}
        for m, info in raw.modules.items()}
    for m, i in dropped.items():  # left out of the library's copy, still listed
        modules[m] = {"records": None, "version": header.module_versions[i], "partial": False,
                      "damaged": header.dropped_modules[i]}
    for m, count in _extra_records(raw).items():
        modules[m]["records"] = count
    metadata: dict[str, object] = {
        "darshan_log_version": header.version,
        "darshan_library_version": str(meta.get("lib_ver", "")),
        # Hints Darshan used to write its own log, not the application's.
        "darshan_log_hints": str(meta.get("h", "")),
        "uid": int(job.get("uid", 0)),
        "compression": header.compression,
        "mounts": [list(m) for m in raw.mounts],
        # records: how many pario read (None for the modules it does not read); damaged: why a
        # module pario does not read was left out of the log the library read
        "modules": modules,
        "modules_not_analysed": other,
        "runtime_source": runtime_source,
        # where M_p comes from (APMPI), or why it is not used; "" without APMPI
        "mpi_time_source": coverage(mpi) + overlap if mpi is not None else "",
        "lustre_striping": _lustre_striping(raw.lustre),
    }
    profile = Profile(
        job=Job(source="darshan", path=where, exe=argv[0] if argv else "", nprocs=nprocs,
                start_time=start, end_time=end, runtime=runtime, argv=argv, jobid=str(job.get("jobid", "")),
                complete=not reasons, partial_reasons=reasons,
                has_mpi_time=mpi is not None and not mpi.reason,
                has_rank_times=all(combined.exact_ranks.values()), metadata=metadata),
        ranks=ranks, files=files, hints={}, file_ranks={},
    )
    profile.io = io
    profile.heatmap = raw.heatmap
    profile.trace = dxt_trace(raw.dxt, raw.dxt_names, nprocs, runtime) if trace else None
    return profile


def _analysed_extras(raw: _RawDarshan, mpi: ApmpiTime | None) -> set[str]:
    """The modules beyond the file layers that were read and used: APMPI when it gives every
    rank's MPI time, HEATMAP when it has records."""
    return {m for m, used in (("APMPI", mpi is not None and not mpi.reason),
                              ("HEATMAP", raw.heatmap is not None)) if used}


def _extra_records(raw: _RawDarshan) -> dict[str, int]:
    """How many APMPI and HEATMAP records were read (APMPI's header record not counted)."""
    out: dict[str, int] = {}
    if raw.apmpi is not None and "APMPI" in raw.modules:
        out["APMPI"] = len(raw.apmpi.ranks)
    if raw.heatmap is not None and "HEATMAP" in raw.modules:
        out["HEATMAP"] = sum(len(layer.ranks) for layer in raw.heatmap.layers.values())
    return out


def whole_seconds(job: dict[str, Any], version: str) -> bool:
    """Whether the job's start and end times are whole seconds: formats before 3.41 have no
    nanoseconds (the library gives 0), and Darshan 3.4.0 wrote 3.41 logs with both at 0."""
    return version != "3.41" or (int(job.get("start_time_nsec", 0)) == 0
                                 and int(job.get("end_time_nsec", 0)) == 0)


def latest_timestamp(records: dict[str, Table]) -> float | None:
    """The latest file timestamp (``*_TIMESTAMP`` counters: seconds since the job's start) of
    the records read, None without any; Darshan's -1 and 0 (not recorded) are not timestamps."""
    latest: float | None = None
    for table in records.values():
        stamps = [np.asarray(v, dtype=np.float64) for c, v in table.items() if c.endswith("_TIMESTAMP")]
        if not stamps or not len(table):
            continue
        values = np.stack(stamps)
        values = values[(values > 0) & (values < np.inf)]  # neither NaN nor infinite, and recorded
        if len(values):
            latest = max(float(values.max()), latest or 0.0)
    return latest


def job_runtime(job: dict[str, Any], version: str, latest: float | None) -> tuple[float, str]:
    """The run time T of a Darshan job and the sentence saying where it comes from.

    With nanosecond job times, T is the library's (end - start).  With whole seconds,
    end - start = d only says that T lies between d - 1 and d + 1 (each time is truncated),
    which the library turns into d + 1 (formats before 3.41) or d (3.41): 1 s for a 40 ms run.
    The records' file timestamps are precise and relative to the job's start, and the job ends
    after its last one: T is that latest timestamp, kept between max(0, d - 1) and d + 1 -- the
    shortest run time both allow.  Without any timestamp T stays the library's.
    """
    library = float(job.get("run_time") or 0.0)
    if not whole_seconds(job, version):
        return library, (f"Run time T = {units.seconds(library)}: from the job's start and end times, "
                         "which Darshan recorded to the nanosecond.")
    delta = int(job.get("end_time_sec", 0)) - int(job.get("start_time_sec", 0))
    low, high = max(0, delta - 1), delta + 1
    times = (f"Darshan stored the job's start and end times in whole seconds, {delta} s apart, so the "
             f"run took between {low} and {high} s")
    tools = f"Darshan's own tools say {library:g} s"
    if latest is None or delta < 0:
        why = "no record holds a file timestamp to narrow that down" if delta >= 0 else \
            "the end comes before the start"
        return library, f"Run time T = {library:g} s, as Darshan's own tools give it: {times}, and {why}."
    runtime = min(max(latest, float(low)), float(high))
    said = f"Run time T = {_exact_seconds(runtime)}"
    if runtime == latest:
        return runtime, f"{said}: the latest file timestamp in the log's records. {times} ({tools})."
    stamp = f"the latest file timestamp in the log's records ({_exact_seconds(latest)})"
    if runtime == high:
        return runtime, f"{said}: {times}, and {stamp} is later than that allows ({tools})."
    return runtime, f"{said}: {times}; {stamp} is earlier, so T is the shortest of these ({tools})."


def _at_least_the_io(io: np.ndarray, runtime: float, source: str) -> tuple[float, str]:
    """T, raised to the longest per-rank I/O time ``io`` where the job's own times make it shorter
    (a rank cannot spend longer in I/O than the run lasts; Darshan's development line after 3.5.0
    writes such logs), and the sentence saying so."""
    longest = float(np.nanmax(io, initial=0.0))
    if longest <= runtime:
        return runtime, source
    return longest, (f"{source} A rank spent {units.seconds(longest)} in I/O, longer than that: T is taken "
                     "as that time, so that no rank's I/O outlasts the run.")


def _exact_seconds(x: float) -> str:
    """A time next to whole seconds: as the report writes it below 100 s, else in seconds (7 digits)."""
    return units.seconds(x) if x < 100 else f"{units.plain(x, 7)} s"


#: Rank-table columns a Darshan log cannot fill (it has no memory or CPU data, and no MPI data
#: without its APMPI module, whose columns then replace these: pario.log.apmpi).
_NAN_RANK_COLUMNS: tuple[str, ...] = (
    "mpi_coll", "mpi_p2p", "mpi_other", "mpi_coll_bytes", "mpi_p2p_bytes", "mpi_coll_calls", "mpi_p2p_calls",
    "mpi_other_calls", "maxrss", "cpu_user", "cpu_sys")


def _rank_table(per_layer: dict[str, Any], nprocs: int, runtime: float) -> Table:
    """The per-rank table before the derived columns (row i: rank i)."""
    columns: dict[str, np.ndarray] = {"wall": constant_column(nprocs, runtime)}
    # a storage layer the profile does not have (DFS, DAOS) has no columns
    groups = {**{layer: (layer,) for layer in _RANK_LAYERS if layer in per_layer}, **LIBRARIES}
    for name, layers in groups.items():
        present = [layer for layer in layers if layer in per_layer]
        for kind in ("read", "write", "meta"):
            if not present:  # a library without records
                columns[f"{name}_{kind}"] = constant_column(nprocs, 0.0)
                continue
            total = np.zeros(nprocs)
            for layer in present:
                total = total + np.asarray(per_layer[layer].table[f"{kind}_time"], dtype=np.float64)
            columns[f"{name}_{kind}"] = total
    for col in _NAN_RANK_COLUMNS:
        columns[col] = constant_column(nprocs, np.nan)
    return Table(columns, length=nprocs)


def _lustre_striping(comps: Table | None) -> dict[int, dict[str, int]]:
    """file id -> stripe size and count of the file's first layout component."""
    if comps is None or not len(comps):
        return {}
    if "LUSTRE_COMP_STRIPE_SIZE" not in comps or "LUSTRE_COMP_STRIPE_COUNT" not in comps:
        return {}
    _, first, _ = unique_index(comps["id"])
    first.sort()  # files in the order of their first component
    out: dict[int, dict[str, int]] = {}
    for rid, size, count in zip(comps["id"][first].tolist(), comps["LUSTRE_COMP_STRIPE_SIZE"][first].tolist(),
                                comps["LUSTRE_COMP_STRIPE_COUNT"][first].tolist(), strict=True):
        out[int(rid)] = {"stripe_size": int(size), "stripe_count": int(count)}
    return out
