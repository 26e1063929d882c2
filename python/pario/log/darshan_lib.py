"""Darshan logs through libdarshan-util, the C library PyDarshan bundles, without PyDarshan.

``import darshan`` imports pandas (a quarter of a second) before it reads a byte, which
alone made ``pario report`` slower than PyDarshan loading the log.  This module uses only
what PyDarshan ships for its own C binding: the library (found as PyDarshan's
``discover_darshan.find_utils`` finds it) and the C declarations that match it
(``darshan/backend/api_def_c.py``, a module holding one string, executed by file path so
that the ``darshan`` package itself never runs).  It is a binding, not a parser: the
library opens, inflates, byte-swaps and up-converts every record; here the records are
only copied into NumPy arrays, as PyDarshan's ``cffi_backend`` copies them (the LUSTRE
records by ``libpario_log.so``, src/logread/darshan_lustre.c, whose loop calls the library's
``darshan_log_get_record`` for each, when it is installed).

What is read is what ``darshan.DarshanReport`` gives for the same log: the job (with its
run time and metadata), the executable line, the mounts, the modules, the name records,
the records of the modules asked for (id, rank, the H5D/PNETCDF_VAR file id, the DAOS object
id, the counters under the library's counter names) and the LUSTRE records' layout components.  As
PyDarshan, every record is given, named or not (``DarshanReport`` keeps only records with
a name record; that choice is the caller's).  The APMPI records (MPI time per rank) and the
HEATMAP records (bytes per time bin) are read too (:func:`read_apmpi`, :func:`read_heatmap`).

The write side of the library (:data:`WRITE_DECLARATIONS`, which PyDarshan does not declare) is
declared too, for :mod:`pario.log.darshan_writer` (``pario export --darshan``).
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import importlib.util
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pario.cdecl import declared
from pario.paths import PACKAGE_DIR

#: The modules whose records are files (DAOS's: objects), and their C record structs (PyDarshan's
#: _structdefs).
RECORD_STRUCTS: dict[str, str] = {
    "POSIX": "struct darshan_posix_file", "MPI-IO": "struct darshan_mpiio_file",
    "STDIO": "struct darshan_stdio_file", "H5F": "struct darshan_hdf5_file",
    "H5D": "struct darshan_hdf5_dataset", "PNETCDF_FILE": "struct darshan_pnetcdf_file",
    "PNETCDF_VAR": "struct darshan_pnetcdf_var", "DFS": "struct darshan_dfs_file",
    "DAOS": "struct darshan_daos_object",
}


#: The write side of libdarshan-util, which PyDarshan's declarations leave out: the functions of
#: darshan-logutils.h (3.4/3.5) that write a log, with the handle as ``void *``.  A name record
#: as ``darshan_log_put_namehash`` reads it is the id followed by the NUL-terminated name, and
#: the hash it takes is a uthash (1.9.2) table, of which it only follows ``hlink.next`` from
#: element to element; a module's ``log_put_record`` is the second member of its
#: ``struct darshan_mod_logutil_funcs`` (only the first two members are declared: the struct is
#: only read through pointers).
WRITE_DECLARATIONS = """
struct pario_ut_hash_handle {
    void *tbl; void *prev; void *next; void *hh_prev; void *hh_next; void *key;
    unsigned keylen; unsigned hashv;
};
struct pario_name_record_ref {
    void *name_record;
    struct pario_ut_hash_handle hlink;
};
struct pario_mod_logutil_funcs {
    int (*log_get_record)(void *, void **);
    int (*log_put_record)(void *, void *);
};
extern struct pario_mod_logutil_funcs *mod_logutils[];
extern struct pario_mod_logutil_funcs posix_logutils;
extern struct pario_mod_logutil_funcs mpiio_logutils;
extern struct pario_mod_logutil_funcs hdf5_file_logutils;
extern struct pario_mod_logutil_funcs hdf5_dataset_logutils;
extern struct pario_mod_logutil_funcs pnetcdf_file_logutils;
extern struct pario_mod_logutil_funcs pnetcdf_var_logutils;
extern struct pario_mod_logutil_funcs lustre_logutils;
extern struct pario_mod_logutil_funcs stdio_logutils;
extern struct pario_mod_logutil_funcs dxt_posix_logutils;
extern struct pario_mod_logutil_funcs dxt_mpiio_logutils;
void *darshan_log_create(const char *, int, int);
int darshan_log_put_job(void *, struct darshan_job *);
int darshan_log_put_exe(void *, char *);
int darshan_log_put_mounts(void *, struct darshan_mnt_info *, int);
int darshan_log_put_namehash(void *, struct pario_name_record_ref *);
"""

#: What the APMPI reader needs beyond PyDarshan's declarations: the names of the module's
#: counters (only declared by PyDarshan's optional ``backend/apmpi.py``) and
#: ``darshan_log_get_mod``, which hands out a module's inflated bytes (the library's own APMPI
#: record reader tells its header record from the others by a static flag, set once per
#: process: a second APMPI log read in one process comes back garbled, :func:`read_apmpi`).
READ_DECLARATIONS = """
int darshan_log_get_mod(void *, int, void *, int);
extern char *apmpi_counter_names[];
extern char *apmpi_f_mpiop_totaltime_counter_names[];
extern char *apmpi_f_mpiop_synctime_counter_names[];
extern char *apmpi_f_mpi_global_counter_names[];
struct pario_lustre {
    int64_t records, comps, osts;
    uint64_t *ids; int64_t *ranks; int64_t *ncomps; uint8_t *counts; int64_t *ost_ids;
};
int pario_lustre_read(int (*)(void *, int, void **), void (*)(void *), void *, int, int64_t, int64_t,
                      struct pario_lustre *);
void pario_lustre_free(struct pario_lustre *);
int64_t pario_darshan_names(const uint8_t *, int64_t, int64_t, uint64_t *, int64_t *, int64_t *, int64_t *);
"""


@dataclass(frozen=True)
class Records:
    """One module's records in log order: row i of every array is record i."""

    ids: np.ndarray  # uint64
    ranks: np.ndarray  # int64, -1 for a record reduced over all ranks
    counters: np.ndarray  # int64, (records, counters)
    fcounters: np.ndarray  # float64, (records, fcounters)
    counter_names: tuple[str, ...]
    fcounter_names: tuple[str, ...]
    file_rec_ids: np.ndarray | None = None  # uint64, H5D and PNETCDF_VAR: the record of their file
    oids: np.ndarray | None = None  # uint64, (records, 2), DAOS: the object id (hi, lo)


@dataclass(frozen=True)
class LustreComponents:
    """The layout components of the LUSTRE records, one row per component, records in log order."""

    ids: np.ndarray  # uint64: the record (file) of each component
    ranks: np.ndarray  # int64
    counters: np.ndarray  # int64, (components, counters)
    counter_names: tuple[str, ...]
    pool_names: tuple[str, ...]
    ost_ids: tuple[np.ndarray, ...]  # int64, the component's OSTs (its stripe count of them)


#: The DXT modules: one record per file and rank, its reads and writes as segments.
DXT_MODULES: tuple[str, ...] = ("DXT_POSIX", "DXT_MPIIO")
#: A DXT segment as the library gives it (``segment_info``): offset, length, start and end
#: (seconds since the job's start); offset -1 where the module's version did not record it.
SEGMENT_DTYPE = np.dtype([("offset", "=i8"), ("length", "=i8"), ("start", "=f8"), ("end", "=f8")])


@dataclass(frozen=True)
class DxtSegments:
    """One DXT module's records in log order, and their segments one record after the other:
    record i's ``write_counts[i]`` writes, then its ``read_counts[i]`` reads, as stored."""

    ids: np.ndarray  # uint64, per record
    ranks: np.ndarray  # int64, per record
    hostnames: tuple[str, ...]
    write_counts: np.ndarray  # int64, per record
    read_counts: np.ndarray  # int64, per record
    segments: np.ndarray  # SEGMENT_DTYPE, sum(write_counts + read_counts) rows

    def take(self, keep: np.ndarray) -> DxtSegments:
        """The records where ``keep`` (a bool per record) is true, with their segments."""
        counts = self.write_counts + self.read_counts
        return DxtSegments(self.ids[keep], self.ranks[keep],
                           tuple(h for h, k in zip(self.hostnames, keep.tolist(), strict=True) if k),
                           self.write_counts[keep], self.read_counts[keep],
                           self.segments[np.repeat(keep, counts)])


@dataclass(frozen=True)
class DarshanLog:
    """What :func:`read_log` read: plain, picklable data."""

    job: dict[str, Any]
    exe: str
    mounts: list[tuple[str, str]]
    modules: dict[str, dict[str, Any]]  # name -> len, ver, idx, partial_flag
    names: dict[int, str]
    records: dict[str, Records]
    lustre: LustreComponents | None
    #: the DXT modules' segments (:func:`read_dxt`), by module; empty unless asked for
    dxt: dict[str, DxtSegments] = dataclasses.field(default_factory=dict)
    #: the APMPI and HEATMAP records (:func:`read_apmpi`, :func:`read_heatmap`), None without
    apmpi: ApmpiRecords | None = None
    heatmap: HeatmapRecords | None = None
    #: module -> why its records were not read (a layout the binding does not know)
    not_read: dict[str, str] = dataclasses.field(default_factory=dict)


class _Library:
    """The cffi declarations and the loaded library."""

    def __init__(self, ffi: Any, lib: Any) -> None:
        self.ffi = ffi
        self.lib = lib


@functools.lru_cache(maxsize=1)
def library() -> _Library:
    """PyDarshan's libdarshan-util with PyDarshan's declarations of it (loaded once)."""
    spec = importlib.util.find_spec("darshan")  # finds the package, does not run it
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("reading Darshan logs needs PyDarshan (pip install darshan)")
    root = spec.submodule_search_locations[0]
    api = importlib.util.spec_from_file_location("_pario_darshan_api_def_c",
                                                 os.path.join(root, "backend", "api_def_c.py"))
    if api is None or api.loader is None:
        raise ImportError(f"PyDarshan at {root} has no backend/api_def_c.py")
    declarations = importlib.util.module_from_spec(api)
    api.loader.exec_module(declarations)  # defines a string and a function that returns it
    ffi = declared(declarations.load_darshan_header(WRITE_DECLARATIONS + READ_DECLARATIONS),
                   "_pario_darshan_ffi")
    return _Library(ffi, _open_library(ffi, root))


def _open_library(ffi: Any, root: str) -> Any:
    """The library as PyDarshan's find_utils finds it: the wheel's own copy, else the system's."""
    bundled = sorted(glob.glob(os.path.join(os.path.dirname(root), "darshan.libs", "libdarshan-util*.so*")))
    if bundled:
        return ffi.dlopen(bundled[0])
    for name in ("libdarshan-util.so", "libdarshan-util.dylib"):
        try:
            return ffi.dlopen(name)
        except OSError:
            continue
    raise ImportError("libdarshan-util not found: PyDarshan's wheel bundles it, or install darshan-util")


def read_log(path: str, modules: Iterable[str] = tuple(RECORD_STRUCTS), *, lustre: bool = True,
             dxt: bool = False, names: dict[int, str] | None = None) -> DarshanLog:
    """Read ``path``: its job, exe, mounts, modules, names, the records of ``modules`` present in
    the log, with ``lustre`` the LUSTRE components and with ``dxt`` the DXT segments, and the
    APMPI and HEATMAP records (``not_read`` says why they could not be); ``names``: the log's
    names when already at hand (:func:`decode_names`).  RuntimeError if it cannot be opened."""
    dl = library()
    handle = dl.lib.darshan_log_open(os.fsencode(path))
    if handle == dl.ffi.NULL:
        raise RuntimeError("Failed to open file.")
    try:
        job = _job(dl, handle)
        exe = _exe(dl, handle)
        mounts = _mounts(dl, handle)
        mods = _modules(dl, handle)
        names = _names(dl, handle) if names is None else names
        records = {m: _records(dl, handle, m, mods[m]["idx"]) for m in modules if m in mods}
        comps = _lustre(dl, handle, mods["LUSTRE"]["idx"]) if lustre and "LUSTRE" in mods else None
        traces = {m: read_dxt(dl, handle, mods[m]["idx"]) for m in DXT_MODULES if dxt and m in mods}
        not_read: dict[str, str] = {}
        apmpi = _optional(read_apmpi, dl, handle, mods, "APMPI", not_read)
        heatmap = _optional(read_heatmap, dl, handle, mods, "HEATMAP", not_read)
    finally:
        dl.lib.darshan_log_close(handle)
    return DarshanLog(job=job, exe=exe, mounts=mounts, modules=mods, names=names, records=records,
                      lustre=comps, dxt=traces, apmpi=apmpi, heatmap=heatmap, not_read=not_read)


def _string(dl: _Library, chars: Any) -> str:
    return str(dl.ffi.string(chars).decode("utf-8"))


def _job(dl: _Library, handle: Any) -> dict[str, Any]:
    """The job record, its run time and metadata, as PyDarshan's log_get_job gives them."""
    ffi, lib = dl.ffi, dl.lib
    rec = ffi.new("struct darshan_job *")
    lib.darshan_log_get_job(handle, rec)
    job: dict[str, Any] = {k: int(getattr(rec, k)) for k in (
        "uid", "start_time_sec", "start_time_nsec", "end_time_sec", "end_time_nsec", "nprocs", "jobid")}
    runtime = ffi.new("double *")
    lib.darshan_log_get_job_runtime(handle, rec[0], runtime)
    job["run_time"] = float(runtime[0])
    # the format version opens the log handle's struct (PyDarshan reads it the same way)
    job["log_ver"] = _string(dl, ffi.cast("char *", handle))
    # "key=value" lines; like PyDarshan, what follows the last newline is not a line
    lines = _string(dl, rec.metadata).split("\n")[:-1]
    job["metadata"] = dict(line.split("=", maxsplit=1) for line in lines)
    return job


def _exe(dl: _Library, handle: Any) -> str:
    buf = dl.ffi.new("char[]", 4096)
    dl.lib.darshan_log_get_exe(handle, buf)
    return _string(dl, buf)


def _mounts(dl: _Library, handle: Any) -> list[tuple[str, str]]:
    ffi, lib = dl.ffi, dl.lib
    mnts = ffi.new("struct darshan_mnt_info **")
    count = ffi.new("int *")
    lib.darshan_log_get_mounts(handle, mnts, count)
    try:
        return [(_string(dl, mnts[0][i].mnt_path), _string(dl, mnts[0][i].mnt_type)) for i in range(count[0])]
    finally:
        lib.darshan_free(mnts[0])


def _modules(dl: _Library, handle: Any) -> dict[str, dict[str, Any]]:
    ffi, lib = dl.ffi, dl.lib
    mods = ffi.new("struct darshan_mod_info **")
    count = ffi.new("int *")
    lib.darshan_log_get_modules(handle, mods, count)
    try:
        out: dict[str, dict[str, Any]] = {}
        for i in range(count[0]):
            m = mods[0][i]
            out[_string(dl, m.name)] = {"len": int(m.len), "ver": int(m.ver), "idx": int(m.idx),
                                        "partial_flag": bool(m.partial_flag)}
        return out
    finally:
        lib.darshan_free(mods[0])


def _names(dl: _Library, handle: Any) -> dict[int, str]:
    """Record id -> name (a later record of an id replaces an earlier one, as in PyDarshan)."""
    ffi, lib = dl.ffi, dl.lib
    recs = ffi.new("struct darshan_name_record **")
    count = ffi.new("int *")
    lib.darshan_log_get_name_records(handle, recs, count)
    names: dict[int, str] = {}
    try:
        for i in range(count[0]):
            names[int(recs[0][i].id)] = _string(dl, recs[0][i].name)
    finally:
        for i in range(count[0]):
            lib.darshan_free(recs[0][i].name)
        lib.darshan_free(recs[0])
    return names


_RECORD_ID = struct.Struct("=Q")


def name_records(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The name records back to back in ``data`` (``uint64`` id, then the name and a NUL; formats
    from 3.10 on) as the library walks them, while at least 9 bytes are left: each one's id (as
    stored: this machine's byte order), where its name starts and ends, and where the last one
    ends (``len(data)`` when nothing is left over)."""
    bulk = _bulk_reader()
    if bulk is None:
        return _walk_names(data)
    ffi = library().ffi
    end = ffi.new("int64_t *")
    raw = ffi.from_buffer(data)
    count = bulk.pario_darshan_names(raw, len(data), 0, ffi.NULL, ffi.NULL, ffi.NULL, end)
    ids = np.empty(count, dtype=np.uint64)
    starts, ends = np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64)
    if count:
        buffer = ffi.from_buffer
        bulk.pario_darshan_names(raw, len(data), count, buffer("uint64_t[]", ids),
                                 buffer("int64_t[]", starts), buffer("int64_t[]", ends), end)
    return ids, starts, ends, int(end[0])


def _walk_names(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """:func:`name_records` one record at a time (without libpario_log.so)."""
    ids: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    pos, size = 0, len(data)
    while size - pos >= 9:
        end = data.find(b"\0", pos + 8)
        if end < 0:
            break
        ids.append(_RECORD_ID.unpack_from(data, pos)[0])
        starts.append(pos + 8)
        ends.append(end)
        pos = end + 1
    return (np.array(ids, dtype=np.uint64), np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64),
            pos)


def decode_names(data: bytes) -> dict[int, str]:
    """Record id -> name, from name records back to back (:func:`name_records`), as the library
    reads them: the first record of an id names it, unless its name is empty and a later
    record's is not."""
    ids, starts, ends, _ = name_records(data)
    keys = ids.tolist()
    spans = zip(starts.tolist(), ends.tolist(), strict=True)
    if len(set(keys)) == len(keys):  # the usual log: one record per id
        return dict(zip(keys, [data[a:b].decode("utf-8") for a, b in spans], strict=True))
    out: dict[int, str] = {}
    for rid, (a, b) in zip(keys, spans, strict=True):
        if rid not in out or (not out[rid] and b > a):
            out[rid] = data[a:b].decode("utf-8")
    return out


@functools.lru_cache(maxsize=64)
def counter_names(mod: str, *, floating: bool = False) -> tuple[str, ...]:
    """The library's names of a module's counters (``LUSTRE_COMP`` for the Lustre components),
    as PyDarshan's counter_names gets them: up to the ``*_NUM_INDICES`` entry."""
    dl = library()
    prefix = "MPIIO" if mod == "MPI-IO" else mod
    f = "f_" if floating else ""
    names = getattr(dl.lib, f"{prefix.lower()}_{f}counter_names")
    end = f"{prefix.upper()}_{f.upper()}NUM_INDICES"
    out: list[str] = []
    while (name := _string(dl, names[len(out)])) != end:
        out.append(name)
    return tuple(out)


@functools.lru_cache(maxsize=32)
def record_dtype(mod: str) -> np.dtype:
    """The NumPy layout of a module's record struct (:data:`RECORD_STRUCTS`), at the C offsets."""
    return _record_dtype(library(), RECORD_STRUCTS[mod])


def _record_dtype(dl: _Library, struct: str) -> np.dtype:
    """The NumPy layout of a record struct (base_rec, [file_rec_id], counters, fcounters, and for
    DFS and DAOS the pool and container UUIDs [and the object id]) at the C offsets, so that all
    records are decoded by one ``frombuffer``."""
    ctype = dl.ffi.typeof(struct)
    names, offsets = ["id", "rank"], [0, 8]
    formats: list[np.dtype[Any]] = [np.dtype("=u8"), np.dtype("=i8")]
    kinds = {"file_rec_id": "=u8", "counters": "=i8", "fcounters": "=f8", "pool_uuid": "u1",
             "cont_uuid": "u1", "oid_hi": "=u8", "oid_lo": "=u8"}
    for name, field in ctype.fields:
        if name == "base_rec":
            continue
        names.append(name)
        length = field.type.length if field.type.kind == "array" else None
        formats.append(np.dtype((kinds[name], (length,))) if length else np.dtype(kinds[name]))
        offsets.append(field.offset)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                     "itemsize": dl.ffi.sizeof(ctype)})


def _records(dl: _Library, handle: Any, mod: str, idx: int) -> Records:
    """All records of a module: each copied whole out of the library's buffer, decoded at once."""
    ffi, lib = dl.ffi, dl.lib
    struct = RECORD_STRUCTS[mod]
    size = ffi.sizeof(struct)
    buf = ffi.new("void **")  # the library allocates the record once and reuses it
    chunks: list[bytes] = []
    try:
        while lib.darshan_log_get_record(handle, idx, buf) > 0:
            chunks.append(ffi.buffer(buf[0], size)[:])
    finally:
        if buf[0] != ffi.NULL:
            lib.darshan_free(buf[0])
    return decode_records(mod, b"".join(chunks))


#: The module versions whose records libdarshan-util hands over as the log stores them (no
#: up-conversion; Darshan 3.5's formats), with their size in bytes: a region of one of them, in
#: the machine's byte order, is its records back to back, decoded by :func:`decode_records`
#: without the library (pario.log.darshan_reader).
STORED_AS_READ: dict[str, tuple[int, int]] = {
    "POSIX": (4, 704), "MPI-IO": (3, 560), "STDIO": (2, 248), "H5F": (3, 80), "H5D": (2, 912),
    "PNETCDF_FILE": (3, 152), "PNETCDF_VAR": (1, 1120), "DFS": (1, 584), "DAOS": (1, 696),
}


def stored_as_read(mod: str, version: int) -> bool:
    """Whether the library reads ``mod``'s records of ``version`` as they are stored (and its
    declarations of them have the stored size)."""
    known = STORED_AS_READ.get(mod)
    return known is not None and known[0] == version and record_dtype(mod).itemsize == known[1]


def decode_records(mod: str, data: bytes) -> Records:
    """A module's records from their bytes back to back (a last partial record left out, as the
    library leaves it), in the machine's byte order."""
    dtype = record_dtype(mod)
    rec = np.frombuffer(data, dtype=dtype, count=len(data) // dtype.itemsize)
    names, fnames = counter_names(mod), counter_names(mod, floating=True)
    if rec["counters"].shape[1:] != (len(names),) or rec["fcounters"].shape[1:] != (len(fnames),):
        raise RuntimeError(f"{mod}: the library's counter names do not match its record layout")
    fields = rec.dtype.names or ()
    file_ids = rec["file_rec_id"].copy() if "file_rec_id" in fields else None
    oids = np.stack([rec["oid_hi"], rec["oid_lo"]], axis=1) if "oid_hi" in fields else None
    return Records(ids=rec["id"].copy(), ranks=rec["rank"].copy(), counters=rec["counters"].copy(),
                   fcounters=rec["fcounters"].copy(), counter_names=names, fcounter_names=fnames,
                   file_rec_ids=file_ids, oids=oids)


#: The most bytes each array of src/logread/darshan_lustre.c's bulk read may take.
_LUSTRE_LIMIT = 1 << 32


@functools.lru_cache(maxsize=1)
def _bulk_reader() -> Any:
    """libpario_log.so, whose ``pario_lustre_read`` reads the LUSTRE records in one call and
    ``pario_darshan_names`` walks the name records (None when it is not installed, or PyDarshan
    is not: they are read one by one)."""
    path = PACKAGE_DIR / "lib" / "libpario_log.so"
    if not path.is_file():
        return None
    try:
        ffi = library().ffi  # its declarations (PyDarshan's, with pario's)
    except ImportError:
        return None
    return ffi.dlopen(str(path))


@functools.lru_cache(maxsize=1)
def _lustre_calls() -> tuple[Any, Any, int, np.dtype]:
    """What :func:`_lustre` hands libpario_log.so: the library's get_record and free, the size of
    a component, and the NumPy layout of one (its counters, its pool name)."""
    dl = library()
    ffi = dl.ffi
    size = ffi.sizeof("struct darshan_lustre_component")
    layout = np.dtype({"names": ["counters", "pool"],
                       "formats": [np.dtype(("=i8", (len(counter_names("LUSTRE_COMP")),))), "S16"],
                       "offsets": [0, ffi.offsetof("struct darshan_lustre_component", "pool_name")],
                       "itemsize": size})
    return (ffi.cast("int (*)(void *, int, void **)", dl.lib.darshan_log_get_record),
            ffi.cast("void (*)(void *)", dl.lib.darshan_free), size, layout)


def _lustre(dl: _Library, handle: Any, idx: int) -> LustreComponents:
    """The LUSTRE records' components, read as PyDarshan's _log_get_lustre_record reads them
    (by libpario_log.so in one call, else one record at a time)."""
    bulk = _bulk_reader()
    if bulk is None:
        return _lustre_by_record(dl, handle, idx)
    ffi = dl.ffi
    get, release, comp_size, layout = _lustre_calls()
    out = ffi.new("struct pario_lustre *")
    if bulk.pario_lustre_read(get, release, handle, idx, comp_size, _LUSTRE_LIMIT, out) != 0:
        raise ValueError("the LUSTRE records do not fit in memory")
    try:
        def array(pointer: Any, count: int, dtype: Any) -> np.ndarray:
            if not count:
                return np.zeros(0, dtype=dtype)
            return np.frombuffer(ffi.buffer(pointer, count * np.dtype(dtype).itemsize), dtype=dtype).copy()

        ids, ranks = array(out.ids, out.records, np.uint64), array(out.ranks, out.records, np.int64)
        ncomps = array(out.ncomps, out.records, np.int64)
        comps, osts = array(out.counts, out.comps, layout), array(out.ost_ids, out.osts, np.int64)
    finally:
        bulk.pario_lustre_free(out)
    return _components(ids, ranks, ncomps, comps, osts)


def _components(ids: np.ndarray, ranks: np.ndarray, ncomps: np.ndarray, comps: np.ndarray,
                osts: np.ndarray) -> LustreComponents:
    """The components of records (``ncomps`` each; ``comps``: their counters and pool names)
    whose OST ids are ``osts``, each component's stripe count of them in turn."""
    names = counter_names("LUSTRE_COMP")
    values = comps["counters"].copy()
    stripes = values[:, names.index("LUSTRE_COMP_STRIPE_COUNT")]
    if (stripes < 0).any():
        raise ValueError("'length' cannot be negative")  # what ffi.unpack says of such a count
    ends = np.cumsum(stripes)
    if int(ends[-1] if ends.size else 0) != osts.size:
        raise ValueError("the LUSTRE components' stripe counts do not add up to their OST ids")
    return LustreComponents(
        ids=np.repeat(ids, ncomps), ranks=np.repeat(ranks, ncomps), counters=values, counter_names=names,
        pool_names=tuple(raw.split(b"\0", 1)[0].decode("utf-8") for raw in comps["pool"].tolist()),
        ost_ids=tuple(osts[end - k:end] for k, end in zip(stripes.tolist(), ends.tolist(), strict=True)))


def _lustre_by_record(dl: _Library, handle: Any, idx: int) -> LustreComponents:
    """The LUSTRE records' components, read one record at a time much as PyDarshan's
    _log_get_lustre_record reads them (:func:`_lustre`'s reference)."""
    ffi, lib = dl.ffi, dl.lib
    names = counter_names("LUSTRE_COMP")
    count_at = names.index("LUSTRE_COMP_STRIPE_COUNT")
    head = ffi.sizeof("struct darshan_lustre_record")
    ids: list[int] = []
    ranks: list[int] = []
    counters: list[bytes] = []  # each component's counters, decoded at once at the end
    pools: list[str] = []
    osts: list[int] = []  # every component's OSTs, one after the other
    stripes: list[int] = []
    while True:
        buf = ffi.new("void **")  # a record's size varies: a new one each time, as PyDarshan does
        if lib.darshan_log_get_record(handle, idx, buf) < 1:
            break
        if buf[0] == ffi.NULL:  # a record of no component: the library frees it, says it read it
            continue
        try:
            rec = ffi.cast("struct darshan_lustre_record **", buf)[0]
            # the components follow the record and the OST ids them (src/logread/darshan_lustre.c:
            # the library's comps and ost_ids may point into a freed buffer)
            comps = ffi.cast("struct darshan_lustre_component *", ffi.cast("char *", rec) + head)
            ost_ids = ffi.cast("int64_t *", comps + rec.num_comps)
            rid, rank = int(rec.base_rec.id), int(rec.base_rec.rank)
            used = 0
            for i in range(rec.num_comps):
                comp = comps[i]
                n = int(comp.counters[count_at])
                ids.append(rid)
                ranks.append(rank)
                counters.append(ffi.buffer(comp.counters)[:])
                pools.append(_string(dl, comp.pool_name))
                osts.extend(ffi.unpack(ost_ids + used, n))
                stripes.append(n)
                used += n
        finally:
            lib.darshan_free(buf[0])
    values = np.frombuffer(b"".join(counters), dtype=np.int64).reshape(len(counters), len(names)).copy()
    flat = np.array(osts, dtype=np.int64)
    ends = np.cumsum(stripes).tolist()
    per_comp = [flat[end - n:end] for n, end in zip(stripes, ends, strict=True)]
    return LustreComponents(
        ids=np.array(ids, dtype=np.uint64), ranks=np.array(ranks, dtype=np.int64), counters=values,
        counter_names=names, pool_names=tuple(pools), ost_ids=tuple(per_comp))


def read_dxt(dl: _Library, handle: Any, idx: int) -> DxtSegments:
    """A DXT module's records (``struct dxt_file_record`` followed by its ``segment_info``
    array, which the library allocates per record: a record's size varies), in log order."""
    ffi, lib = dl.ffi, dl.lib
    head = ffi.sizeof("struct dxt_file_record")
    item = ffi.sizeof("segment_info")
    if item != SEGMENT_DTYPE.itemsize:
        raise RuntimeError("DXT: the library's segment_info does not match its declared layout")
    ids: list[int] = []
    ranks: list[int] = []
    hosts: list[str] = []
    writes: list[int] = []
    reads: list[int] = []
    chunks: list[bytes] = []  # each record's segments, decoded at once at the end
    while True:
        buf = ffi.new("void **")  # NULL: the library allocates the record and its segments
        if lib.darshan_log_get_record(handle, idx, buf) < 1:
            break
        try:
            rec = ffi.cast("struct dxt_file_record *", buf[0])
            nw, nr = int(rec.write_count), int(rec.read_count)
            ids.append(int(rec.base_rec.id))
            ranks.append(int(rec.base_rec.rank))
            hosts.append(ffi.string(rec.hostname).decode("utf-8", errors="replace"))
            writes.append(nw)
            reads.append(nr)
            chunks.append(ffi.buffer(ffi.cast("char *", buf[0]) + head, (nw + nr) * item)[:])
        finally:
            lib.darshan_free(buf[0])
    return DxtSegments(ids=np.array(ids, dtype=np.uint64), ranks=np.array(ranks, dtype=np.int64),
                       hostnames=tuple(hosts), write_counts=np.array(writes, dtype=np.int64),
                       read_counts=np.array(reads, dtype=np.int64),
                       segments=np.frombuffer(b"".join(chunks), dtype=SEGMENT_DTYPE).copy())


# --------------------------------------------------------------------------
# APMPI (MPI time per rank and call type) and HEATMAP (bytes per time bin)
# --------------------------------------------------------------------------

#: The APMPI header record's magic number: "APMPI" in ASCII.
APMPI_MAGIC = 0x41504D5049
#: The APMPI counter groups: (name of the library's name array, its end marker).
_APMPI_GROUPS: tuple[tuple[str, str], ...] = (
    ("apmpi_counter_names", "APMPI_NUM_INDICES"),
    ("apmpi_f_mpiop_totaltime_counter_names", "APMPI_F_MPIOP_TOTALTIME_NUM_INDICES"),
    ("apmpi_f_mpiop_synctime_counter_names", "APMPI_F_MPIOP_SYNCTIME_NUM_INDICES"),
    ("apmpi_f_mpi_global_counter_names", "APMPI_F_MPI_GLOBAL_NUM_INDICES"),
)
#: Length of the node name that ends an APMPI record (darshan-apmpi-log-format.h, version 1).
_APMPI_NODE_NAME = 128


@dataclass(frozen=True)
class ApmpiRecords:
    """The APMPI module's records: one per rank, row i of every array is record i.

    ``counters``: per call type its calls, bytes and message-size buckets (``MPI_SEND_CALL_COUNT``,
    ``MPI_SEND_TOTAL_BYTES``, ...); ``times``: its total, shortest and longest call time
    (``MPI_SEND_TOTAL_TIME``, ...); ``sync``: per collective, the time in the barrier APMPI
    puts before it when its sync mode is on (``MPI_BARRIER_TOTAL_SYNC_TIME``, ...);
    ``totals``: ``MPI_TOTAL_COMM_TIME`` (every call's time plus the sync time) and
    ``MPI_TOTAL_COMM_SYNC_TIME``.
    """

    ranks: np.ndarray  # int64
    node_names: tuple[str, ...]
    counters: np.ndarray  # uint64, (records, counters)
    times: np.ndarray  # float64, (records, times)
    sync: np.ndarray  # float64, (records, sync times)
    totals: np.ndarray  # float64, (records, 2)
    counter_names: tuple[str, ...]
    time_names: tuple[str, ...]
    sync_names: tuple[str, ...]
    total_names: tuple[str, ...]
    #: the header record (written by rank 0): whether the sync mode was on, and the variance
    #: over ranks of the total MPI time and of the sync time
    sync_flag: bool = False
    variance_total_mpitime: float = 0.0
    variance_total_mpisynctime: float = 0.0


@dataclass(frozen=True)
class HeatmapRecords:
    """The HEATMAP module's records in log order: one per rank and instrumented module (its
    name record says which: ``heatmap:POSIX``...), each the bytes written and read per time bin."""

    ids: np.ndarray  # uint64
    ranks: np.ndarray  # int64
    bin_widths: np.ndarray  # float64, seconds
    write_bins: tuple[np.ndarray, ...]  # int64, per record
    read_bins: tuple[np.ndarray, ...]  # int64, per record


def _optional(reader: Any, dl: _Library, handle: Any, mods: dict[str, dict[str, Any]], mod: str,
              not_read: dict[str, str]) -> Any:
    """``reader``'s records of ``mod`` (None when the log has none, or when they cannot be read:
    then ``not_read[mod]`` says why, and the rest of the log is still read)."""
    if mod not in mods:
        return None
    try:
        return reader(dl, handle, mods[mod]["idx"])
    except (RuntimeError, AttributeError) as exc:  # AttributeError: a library without the module
        not_read[mod] = str(exc)
        return None


def _name_array(dl: _Library, array: str, end: str) -> tuple[str, ...]:
    names = getattr(dl.lib, array)
    out: list[str] = []
    while (name := _string(dl, names[len(out)])) != end:
        out.append(name)
    return tuple(out)


def read_apmpi(dl: _Library, handle: Any, idx: int) -> ApmpiRecords:
    """The APMPI module's records, read from its inflated bytes: the header record, then one
    record per rank, laid out as darshan-apmpi-log-format.h (version 1) says, the counters sized
    by the library's own name arrays; byte-swapped when the header's magic number says so.
    RuntimeError when the bytes do not fit that layout."""
    ffi, lib = dl.ffi, dl.lib
    groups = [_name_array(dl, array, end) for array, end in _APMPI_GROUPS]
    header = np.dtype({"names": ["id", "rank", "magic", "sync_flag", "var_time", "var_sync"],
                       "formats": ["u8", "i8", "i8", "u4", "f8", "f8"],
                       "offsets": [0, 8, 16, 24, 32, 40], "itemsize": 48})
    perf = np.dtype([("id", "u8"), ("rank", "i8"), ("counters", "u8", (len(groups[0]),)),
                     ("times", "f8", (len(groups[1]),)), ("sync", "f8", (len(groups[2]),)),
                     ("totals", "f8", (len(groups[3]),)), ("node_name", f"S{_APMPI_NODE_NAME}")])
    buf = ffi.new("char[]", perf.itemsize)
    got = lib.darshan_log_get_mod(handle, idx, buf, header.itemsize)
    if got != header.itemsize:
        raise RuntimeError(f"APMPI: the header record is {got} bytes, not {header.itemsize}")
    head = ffi.buffer(buf, header.itemsize)[:]
    for order in ("<", ">"):
        hdr = np.frombuffer(head, dtype=header.newbyteorder(order))[0]
        if int(hdr["magic"]) == APMPI_MAGIC:
            break
    else:
        raise RuntimeError("APMPI: the header record has no APMPI magic number")
    chunks: list[bytes] = []
    while (got := lib.darshan_log_get_mod(handle, idx, buf, perf.itemsize)) > 0:
        if got != perf.itemsize:
            raise RuntimeError(f"APMPI: a record of {got} bytes, not {perf.itemsize}: a layout this "
                               "reader does not know")
        chunks.append(ffi.buffer(buf, perf.itemsize)[:])
    if got < 0:
        raise RuntimeError("APMPI: the library could not read the module's data")
    rec = np.frombuffer(b"".join(chunks), dtype=perf.newbyteorder(order))
    return ApmpiRecords(
        ranks=rec["rank"].astype(np.int64), node_names=tuple(n.decode("utf-8", errors="replace")
                                                             for n in rec["node_name"].tolist()),
        counters=rec["counters"].astype(np.uint64), times=rec["times"].astype(np.float64),
        sync=rec["sync"].astype(np.float64), totals=rec["totals"].astype(np.float64),
        counter_names=groups[0], time_names=groups[1], sync_names=groups[2], total_names=groups[3],
        sync_flag=bool(hdr["sync_flag"]), variance_total_mpitime=float(hdr["var_time"]),
        variance_total_mpisynctime=float(hdr["var_sync"]))


#: More bins than a HEATMAP record can hold (Darshan keeps at most 200): a damaged record.
_MAX_HEATMAP_BINS = 1 << 20


def read_heatmap(dl: _Library, handle: Any, idx: int) -> HeatmapRecords:
    """The HEATMAP records (``struct darshan_heatmap_record``, its write and then its read bins
    trailing it; the library allocates each record: a record's size varies)."""
    ffi, lib = dl.ffi, dl.lib
    ids: list[int] = []
    ranks: list[int] = []
    widths: list[float] = []
    writes: list[np.ndarray] = []
    reads: list[np.ndarray] = []
    while True:
        buf = ffi.new("void **")
        if lib.darshan_log_get_record(handle, idx, buf) < 1:
            break
        try:
            rec = ffi.cast("struct darshan_heatmap_record *", buf[0])
            nbins = int(rec.nbins)
            if not 0 <= nbins <= _MAX_HEATMAP_BINS:
                raise RuntimeError(f"HEATMAP: a record of {nbins} bins")
            ids.append(int(rec.base_rec.id))
            ranks.append(int(rec.base_rec.rank))
            widths.append(float(rec.bin_width_seconds))
            size = 8 * nbins
            writes.append(np.frombuffer(ffi.buffer(rec.write_bins, size)[:], dtype=np.int64))
            reads.append(np.frombuffer(ffi.buffer(rec.read_bins, size)[:], dtype=np.int64))
        finally:
            lib.darshan_free(buf[0])
    return HeatmapRecords(ids=np.array(ids, dtype=np.uint64), ranks=np.array(ranks, dtype=np.int64),
                          bin_widths=np.array(widths, dtype=np.float64), write_bins=tuple(writes),
                          read_bins=tuple(reads))
