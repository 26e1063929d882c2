"""Build Darshan logs byte by byte, the way darshan-runtime 3.4 writes them (format "3.41").

Layout (include/darshan-log-format.h, darshan-runtime/lib/darshan-core.c):

- header, uncompressed, 1328 bytes: ``char version[8]``, ``int64 magic``, ``uint8 comp_type``
  (padded to 8), ``uint64 partial_flag`` (one bit per module id), the name-record map
  ``{uint64 off, uint64 len}``, 64 module maps, 64 ``uint32`` module versions;
- the job region: ``struct darshan_job`` (uid, start sec/nsec, end sec/nsec, nprocs, jobid,
  ``char metadata[1024]``) followed by the exe line, the mount table (``"\\n<type>\\t<path>"``
  per mount) and a NUL, in one compressed stream;
- the name records: ``uint64 id`` + NUL-terminated name, back to back, one compressed stream
  per rank that has any (a record registered without a name, as DAOS objects are, has the
  empty name; a name given later is appended as a second record with the same id);
- one region per module, in module-id order, each one compressed stream per writing rank:
  ``{uint64 id, int64 rank}``, the module's int64 counters, its double counters, and for
  DFS and DAOS the pool and container UUIDs (and the DAOS object id).

Only the test suite uses this: it checks every log it builds against PyDarshan.
"""

from __future__ import annotations

import bz2
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MAGIC = 6567223
VERSION = b"3.41"
MAX_MODS = 64
HEADER_SIZE = 8 + 8 + 8 + 8 + 16 + MAX_MODS * 16 + MAX_MODS * 4
COMPRESSION = {"zlib": 0, "bzip2": 1}

_BUCKETS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M",
            "100M_1G", "1G_PLUS")
_TIMES = ("OPEN_START_TIMESTAMP", "READ_START_TIMESTAMP", "WRITE_START_TIMESTAMP",
          "CLOSE_START_TIMESTAMP", "OPEN_END_TIMESTAMP", "READ_END_TIMESTAMP", "WRITE_END_TIMESTAMP",
          "CLOSE_END_TIMESTAMP", "READ_TIME", "WRITE_TIME", "META_TIME", "MAX_READ_TIME",
          "MAX_WRITE_TIME", "FASTEST_RANK_TIME", "SLOWEST_RANK_TIME")
_RANKS = ("FASTEST_RANK", "FASTEST_RANK_BYTES", "SLOWEST_RANK", "SLOWEST_RANK_BYTES")


def _common(prefix: str, head: Sequence[str], *middle: Sequence[str]) -> tuple[str, ...]:
    """head, size histograms, the given middle groups, the fastest/slowest rank counters."""
    names = [*head, *(f"SIZE_READ_{b}" for b in _BUCKETS), *(f"SIZE_WRITE_{b}" for b in _BUCKETS)]
    for group in middle:
        names += group
    return tuple(f"{prefix}_{n}" for n in [*names, *_RANKS])


_ACCESS = tuple(f"ACCESS{i}_ACCESS" for i in range(1, 5)) + tuple(f"ACCESS{i}_COUNT" for i in range(1, 5))
_STRIDE = tuple(f"STRIDE{i}_STRIDE" for i in range(1, 5)) + tuple(f"STRIDE{i}_COUNT" for i in range(1, 5))


@dataclass(frozen=True)
class ModuleFormat:
    """One module's id, record version and record layout in format 3.41."""

    mod_id: int
    version: int
    counters: tuple[str, ...]
    fcounters: tuple[str, ...]
    tail: int = 0  # bytes after the counters (DFS/DAOS: UUIDs, object id)

    @property
    def record_size(self) -> int:
        return 16 + 8 * len(self.counters) + 8 * len(self.fcounters) + self.tail


MODULES: dict[str, ModuleFormat] = {
    "POSIX": ModuleFormat(1, 4, _common("POSIX", (
        "OPENS", "FILENOS", "DUPS", "READS", "WRITES", "SEEKS", "STATS", "MMAPS", "FSYNCS", "FDSYNCS",
        "RENAME_SOURCES", "RENAME_TARGETS", "RENAMED_FROM", "MODE", "BYTES_READ", "BYTES_WRITTEN",
        "MAX_BYTE_READ", "MAX_BYTE_WRITTEN", "CONSEC_READS", "CONSEC_WRITES", "SEQ_READS", "SEQ_WRITES",
        "RW_SWITCHES", "MEM_NOT_ALIGNED", "MEM_ALIGNMENT", "FILE_NOT_ALIGNED", "FILE_ALIGNMENT",
        "MAX_READ_TIME_SIZE", "MAX_WRITE_TIME_SIZE"), _STRIDE, _ACCESS),
        tuple(f"POSIX_F_{t}" for t in (*_TIMES, "VARIANCE_RANK_TIME", "VARIANCE_RANK_BYTES"))),
    "STDIO": ModuleFormat(9, 2, tuple(f"STDIO_{n}" for n in (
        "OPENS", "FDOPENS", "READS", "WRITES", "SEEKS", "FLUSHES", "BYTES_WRITTEN", "BYTES_READ",
        "MAX_BYTE_READ", "MAX_BYTE_WRITTEN", *_RANKS)),
        tuple(f"STDIO_F_{t}" for t in (
            "META_TIME", "WRITE_TIME", "READ_TIME", "OPEN_START_TIMESTAMP", "CLOSE_START_TIMESTAMP",
            "WRITE_START_TIMESTAMP", "READ_START_TIMESTAMP", "OPEN_END_TIMESTAMP", "CLOSE_END_TIMESTAMP",
            "WRITE_END_TIMESTAMP", "READ_END_TIMESTAMP", "FASTEST_RANK_TIME", "SLOWEST_RANK_TIME",
            "VARIANCE_RANK_TIME", "VARIANCE_RANK_BYTES"))),
    "DFS": ModuleFormat(16, 1, _common("DFS", (
        "OPENS", "GLOBAL_OPENS", "LOOKUPS", "DUPS", "READS", "READXS", "WRITES", "WRITEXS", "NB_READS",
        "NB_WRITES", "GET_SIZES", "PUNCHES", "REMOVES", "STATS", "BYTES_READ", "BYTES_WRITTEN",
        "RW_SWITCHES", "MAX_READ_TIME_SIZE", "MAX_WRITE_TIME_SIZE"), _ACCESS, ("CHUNK_SIZE",)),
        tuple(f"DFS_F_{t}" for t in _TIMES), tail=32),
    "DAOS": ModuleFormat(17, 1, _common("DAOS", (
        "OBJ_OPENS", "OBJ_FETCHES", "OBJ_UPDATES", "OBJ_PUNCHES", "OBJ_DKEY_PUNCHES", "OBJ_AKEY_PUNCHES",
        "OBJ_DKEY_LISTS", "OBJ_AKEY_LISTS", "OBJ_RECX_LISTS", "ARRAY_OPENS", "ARRAY_READS",
        "ARRAY_WRITES", "ARRAY_GET_SIZES", "ARRAY_SET_SIZES", "ARRAY_STATS", "ARRAY_PUNCHES",
        "ARRAY_DESTROYS", "KV_OPENS", "KV_GETS", "KV_PUTS", "KV_REMOVES", "KV_LISTS", "KV_DESTROYS",
        "NB_OPS", "BYTES_READ", "BYTES_WRITTEN", "RW_SWITCHES", "MAX_READ_TIME_SIZE",
        "MAX_WRITE_TIME_SIZE"), _ACCESS, ("OBJ_OTYPE", "ARRAY_CELL_SIZE", "ARRAY_CHUNK_SIZE")),
        tuple(f"DAOS_F_{t}" for t in _TIMES), tail=48),
}


@dataclass(frozen=True)
class Record:
    """One module record; counters not given are 0 (timestamps and times 0.0)."""

    module: str
    rec_id: int
    rank: int  # -1: shared by all ranks, reduced
    counters: Mapping[str, int] = field(default_factory=dict)
    fcounters: Mapping[str, float] = field(default_factory=dict)
    tail: bytes = b""  # DFS: pool + container UUID; DAOS: those and oid hi, lo
    writer: int = 0  # which rank's compressed block carries it

    def pack(self, order: str = "<") -> bytes:
        fmt = MODULES[self.module]
        unknown = (set(self.counters) - set(fmt.counters)) | (set(self.fcounters) - set(fmt.fcounters))
        if unknown:
            raise KeyError(f"not {self.module} counters: {sorted(unknown)}")
        if len(self.tail) != fmt.tail:
            raise ValueError(f"{self.module} records end with {fmt.tail} bytes, got {len(self.tail)}")
        ints = [int(self.counters.get(n, 0)) for n in fmt.counters]
        floats = [float(self.fcounters.get(n, 0.0)) for n in fmt.fcounters]
        body = struct.pack(f"{order}Qq{len(ints)}q{len(floats)}d", self.rec_id, self.rank, *ints, *floats)
        return body + self.tail


def daos_tail(pool: bytes, cont: bytes, oid: tuple[int, int] | None = None, order: str = "<") -> bytes:
    """The bytes after a DFS (pool, container) or DAOS (pool, container, oid hi, lo) record's counters."""
    assert len(pool) == 16 and len(cont) == 16
    return pool + cont + (struct.pack(f"{order}QQ", *oid) if oid is not None else b"")


def name_record(rec_id: int, name: str | bytes, order: str = "<") -> bytes:
    raw = name.encode() if isinstance(name, str) else name
    assert b"\0" not in raw
    return struct.pack(f"{order}Q", rec_id) + raw + b"\0"


@dataclass
class DarshanLog:
    """The contents of one log; :meth:`to_bytes` lays them out."""

    nprocs: int
    exe: str
    names: list[tuple[int, str | bytes]]  # in log order; ``name_writers`` says which rank wrote each
    records: list[Record]
    mounts: list[tuple[str, str]] = field(default_factory=list)  # (type, path)
    name_writers: list[int] | None = None  # rank writing each name record (default: all rank 0)
    uid: int = 1000
    jobid: int = 4242
    start: tuple[int, int] = (1_700_000_000, 0)
    end: tuple[int, int] = (1_700_000_060, 500_000_000)
    metadata: str = "lib_ver=3.4.4\nh=romio_no_indep_rw=true;cb_nodes=4\n"
    compression: str = "zlib"
    order: str = "<"
    partial_modules: tuple[str, ...] = ()
    #: module id -> (version, raw record bytes): modules this builder has no layout for
    raw_modules: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    #: the inflated name region as given, instead of ``names`` (to build malformed ones)
    raw_names: bytes | None = None

    def _compress(self, data: bytes) -> bytes:
        if self.compression == "bzip2":
            return bz2.compress(data)
        return zlib.compress(data)

    def _blocks(self, pieces: Sequence[tuple[int, bytes]]) -> bytes:
        """One compressed stream per writing rank, in rank order (ranks with nothing write nothing)."""
        by_rank: dict[int, list[bytes]] = {}
        for rank, data in pieces:
            by_rank.setdefault(rank, []).append(data)
        return b"".join(self._compress(b"".join(by_rank[r])) for r in sorted(by_rank))

    def job_region(self) -> bytes:
        meta = self.metadata.encode()
        assert len(meta) < 1024
        job = struct.pack(f"{self.order}7q1024s", self.uid, *self.start, *self.end, self.nprocs, self.jobid,
                          meta)
        exemnt = self.exe.encode() + b"".join(f"\n{t}\t{p}".encode() for t, p in self.mounts) + b"\0"
        return self._compress(job + exemnt)

    def name_region(self) -> bytes:
        if self.raw_names is not None:
            return self._compress(self.raw_names)
        writers = self.name_writers or [0] * len(self.names)
        assert len(writers) == len(self.names)
        return self._blocks([(w, name_record(i, n, self.order)) for w, (i, n) in zip(writers, self.names,
                                                                                        strict=True)])

    def module_regions(self) -> dict[int, tuple[int, bytes]]:
        """module id -> (version, compressed region)."""
        out: dict[int, tuple[int, bytes]] = {}
        for name, fmt in MODULES.items():
            recs = [r for r in self.records if r.module == name]
            if recs:
                out[fmt.mod_id] = (fmt.version, self._blocks([(r.writer, r.pack(self.order)) for r in recs]))
        for mod_id, (version, raw) in self.raw_modules.items():
            out[mod_id] = (version, self._compress(raw))
        return dict(sorted(out.items()))

    def to_bytes(self) -> bytes:
        job = self.job_region()
        names = self.name_region()
        modules = self.module_regions()
        off = HEADER_SIZE + len(job)
        name_map = (off, len(names)) if names else (0, 0)
        off += len(names)
        maps = [(0, 0)] * MAX_MODS
        vers = [0] * MAX_MODS
        body = [job, names]
        for mod_id, (version, region) in modules.items():
            maps[mod_id] = (off, len(region))
            vers[mod_id] = version
            off += len(region)
            body.append(region)
        partial = 0
        for mod in self.partial_modules:
            partial |= 1 << MODULES[mod].mod_id
        o = self.order
        header = (VERSION.ljust(8, b"\0") + struct.pack(f"{o}q", MAGIC)
                  + struct.pack(f"{o}B7xQ", COMPRESSION[self.compression], partial)
                  + struct.pack(f"{o}QQ", *name_map)
                  + b"".join(struct.pack(f"{o}QQ", *m) for m in maps)
                  + struct.pack(f"{o}{MAX_MODS}I", *vers))
        assert len(header) == HEADER_SIZE
        return header + b"".join(body)

    def write(self, path: Path) -> Path:
        path.write_bytes(self.to_bytes())
        return path


# --------------------------------------------------------------------------
# IOR on DAOS, as Darshan 3.4 records it
# --------------------------------------------------------------------------

POOL_UUID = bytes.fromhex("1f3a2b4c5d6e4f708192a3b4c5d6e7f8")
CONT_UUID = bytes.fromhex("9b2c7d1e0a4f4e3bb5c6d7e8f9a0b1c2")
POOL, CONT = "1f3a2b4c-5d6e-4f70-8192-a3b4c5d6e7f8", "9b2c7d1e-0a4f-4e3b-b5c6-d7e8f9a0b1c2"
MIB = 1 << 20

DFUSE_FILE = f"/tmp/dfuse/{POOL}/{CONT}/ior-posix.dat"
CONFIG_FILE = "/home/alice/" + "campaign-2024/" * 20 + "ior-daos.cfg"
CSV_FILE = "/home/alice/ior/résultats ior.csv"
# record ids (Darshan hashes names, and DFS/DAOS the pool, container and object id)
ID_DFUSE, ID_CONFIG = 0x81B90C5D6766CD90, 0x0D3A5F1E22B7C401
ID_CSV, ID_STDOUT = 0x5E7A91C3D2F0B846, 0x7ACC7A12F35A0099
ID_SB, ID_ROOT = 0x2F1D0E7C6B5A4938, 0xC4B3A29180F7E6D5
ID_TESTFILE, ID_EXTRA = 0x9E8D7C6B5A493827, 0xFEDCBA9876543210


def ior_daos_log(order: str = "<") -> DarshanLog:
    """A 4-rank IOR run on DAOS (``ior -a DFS``), modules POSIX, STDIO, DFS and DAOS, 10 name records.

    DAOS objects are registered without a name (empty name records); the DFS module then names
    two of them (the root ``/`` and ``/testFile``) with second records of the same ids.  The
    names include a dfuse path with the pool and container UUIDs, a 300-character path and a
    UTF-8 name with a space; rank 3 writes its own name block (the last record, unnamed) and
    its own DAOS record block.  POSIX: one file shared by the 4 ranks (64 MiB written and read
    in 1 MiB requests) and one configuration file read by rank 0.
    """
    names: list[tuple[int, str | bytes]] = [
        (ID_CONFIG, CONFIG_FILE), (ID_SB, ""), (ID_ROOT, ""), (ID_ROOT, "/"), (ID_TESTFILE, ""),
        (ID_TESTFILE, "/testFile"), (ID_DFUSE, DFUSE_FILE), (ID_CSV, CSV_FILE), (ID_STDOUT, "<STDOUT>"),
        (ID_EXTRA, ""),
    ]
    posix = [
        Record("POSIX", ID_DFUSE, -1, {
            "POSIX_OPENS": 8, "POSIX_READS": 64, "POSIX_WRITES": 64, "POSIX_SEEKS": 8,
            "POSIX_BYTES_READ": 64 * MIB, "POSIX_BYTES_WRITTEN": 64 * MIB,
            "POSIX_MAX_BYTE_READ": 64 * MIB - 1, "POSIX_MAX_BYTE_WRITTEN": 64 * MIB - 1,
            "POSIX_CONSEC_READS": 60, "POSIX_CONSEC_WRITES": 60,
            "POSIX_SEQ_READS": 64, "POSIX_SEQ_WRITES": 64,
            "POSIX_RW_SWITCHES": 4, "POSIX_MEM_ALIGNMENT": 8, "POSIX_FILE_ALIGNMENT": 4096,
            "POSIX_MAX_READ_TIME_SIZE": MIB, "POSIX_MAX_WRITE_TIME_SIZE": MIB,
            "POSIX_SIZE_READ_1M_4M": 64, "POSIX_SIZE_WRITE_1M_4M": 64,
            "POSIX_ACCESS1_ACCESS": MIB, "POSIX_ACCESS1_COUNT": 128,
            "POSIX_FASTEST_RANK": 2, "POSIX_FASTEST_RANK_BYTES": 32 * MIB,
            "POSIX_SLOWEST_RANK": 1, "POSIX_SLOWEST_RANK_BYTES": 32 * MIB,
        }, {
            "POSIX_F_OPEN_START_TIMESTAMP": 1.0, "POSIX_F_WRITE_START_TIMESTAMP": 1.25,
            "POSIX_F_WRITE_END_TIMESTAMP": 30.5, "POSIX_F_READ_START_TIMESTAMP": 31.0,
            "POSIX_F_READ_END_TIMESTAMP": 45.75, "POSIX_F_CLOSE_START_TIMESTAMP": 46.0,
            "POSIX_F_CLOSE_END_TIMESTAMP": 46.5, "POSIX_F_OPEN_END_TIMESTAMP": 31.0,
            "POSIX_F_READ_TIME": 6.5, "POSIX_F_WRITE_TIME": 12.25, "POSIX_F_META_TIME": 0.5,
            "POSIX_F_MAX_READ_TIME": 0.25, "POSIX_F_MAX_WRITE_TIME": 0.5,
            "POSIX_F_FASTEST_RANK_TIME": 4.25, "POSIX_F_SLOWEST_RANK_TIME": 5.5,
            "POSIX_F_VARIANCE_RANK_TIME": 0.25, "POSIX_F_VARIANCE_RANK_BYTES": 0.0,
        }),
        Record("POSIX", ID_CONFIG, 0, {
            "POSIX_OPENS": 1, "POSIX_READS": 2, "POSIX_BYTES_READ": 1234, "POSIX_MAX_BYTE_READ": 1233,
            "POSIX_SIZE_READ_1K_10K": 1, "POSIX_SIZE_READ_0_100": 1, "POSIX_SEQ_READS": 1,
        }, {"POSIX_F_READ_TIME": 0.001, "POSIX_F_META_TIME": 0.0025, "POSIX_F_OPEN_START_TIMESTAMP": 0.5}),
    ]
    stdio = [
        Record("STDIO", ID_CSV, 0, {"STDIO_OPENS": 1, "STDIO_WRITES": 20, "STDIO_BYTES_WRITTEN": 2048},
               {"STDIO_F_WRITE_TIME": 0.002, "STDIO_F_META_TIME": 0.001}),
        Record("STDIO", ID_STDOUT, 0, {"STDIO_WRITES": 50, "STDIO_BYTES_WRITTEN": 5000},
               {"STDIO_F_WRITE_TIME": 0.003}),
    ]
    tail = daos_tail(POOL_UUID, CONT_UUID)
    dfs = [
        Record("DFS", ID_ROOT, -1, {"DFS_LOOKUPS": 4}, {"DFS_F_META_TIME": 0.02}, tail=tail),
        Record("DFS", ID_TESTFILE, -1, {
            "DFS_OPENS": 8, "DFS_READS": 64, "DFS_WRITES": 64, "DFS_BYTES_READ": 64 * MIB,
            "DFS_BYTES_WRITTEN": 64 * MIB, "DFS_SIZE_READ_1M_4M": 64, "DFS_SIZE_WRITE_1M_4M": 64,
            "DFS_CHUNK_SIZE": MIB,
        }, {"DFS_F_READ_TIME": 2.5, "DFS_F_WRITE_TIME": 5.0, "DFS_F_META_TIME": 0.125}, tail=tail),
    ]
    daos = [
        Record("DAOS", ID_SB, -1, {"DAOS_OBJ_OPENS": 4, "DAOS_OBJ_FETCHES": 4},
               tail=daos_tail(POOL_UUID, CONT_UUID, (0, 0), order)),
        Record("DAOS", ID_ROOT, -1, {"DAOS_OBJ_OPENS": 4},
               tail=daos_tail(POOL_UUID, CONT_UUID, (0, 1), order)),
        Record("DAOS", ID_TESTFILE, -1, {
            "DAOS_ARRAY_OPENS": 8, "DAOS_ARRAY_READS": 64, "DAOS_ARRAY_WRITES": 64,
            "DAOS_BYTES_READ": 64 * MIB, "DAOS_BYTES_WRITTEN": 64 * MIB, "DAOS_ARRAY_CHUNK_SIZE": MIB,
            "DAOS_ARRAY_CELL_SIZE": 1,
        }, {"DAOS_F_READ_TIME": 2.25, "DAOS_F_WRITE_TIME": 4.75},
            tail=daos_tail(POOL_UUID, CONT_UUID, (0x100000000, 2), order)),
        Record("DAOS", ID_EXTRA, 3, {"DAOS_OBJ_OPENS": 1, "DAOS_OBJ_UPDATES": 1},
               tail=daos_tail(POOL_UUID, CONT_UUID, (7, 3), order), writer=3),
    ]
    return DarshanLog(
        nprocs=4, exe=f"/opt/ior/bin/ior -a DFS --dfs.pool {POOL} --dfs.cont {CONT} -w -r -t 1m -b 16m",
        names=names, name_writers=[0] * 9 + [3], records=posix + stdio + dfs + daos,
        mounts=[("fuse.daos", "/tmp/dfuse"), ("nfs", "/home"), ("rootfs", "/")], order=order,
    )
