"""Write a pario log as a Darshan log, through libdarshan-util's own write functions.

The pario model (:class:`~pario.model.Profile`) is first mapped, by pure functions, onto what a
Darshan log holds: the job record, the executable line, a mount table, the name records and
each module's records (:class:`DarshanLog`).  :func:`write_darshan_log` then hands these to the
library PyDarshan ships (:mod:`pario.log.darshan_lib`): ``darshan_log_create``,
``darshan_log_put_job``, ``_put_exe``, ``_put_mounts``, ``_put_namehash``, each record through
its module's ``log_put_record`` (``mod_logutils[module]``), and ``darshan_log_close``, which
writes the header.  Nothing here encodes the Darshan format itself.

Counters are mapped by name: pario's counter names are Darshan's where the meaning is the same.
Where they differ, :data:`DERIVED` says how a Darshan counter is made from pario's; a Darshan
counter pario does not record is written as :data:`NOT_RECORDED` (-1, Darshan's own value for a
counter it did not record, as ``POSIX_MMAPS`` without mmap tracing).  docs/export.md lists them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pario import __version__
from pario.errors import ParioError
from pario.log.darshan_lib import DxtSegments
from pario.model import FS_TYPES, Profile, counter_column
from pario.table import Table

#: Darshan's value of a counter it did not record.
NOT_RECORDED = -1
#: pario layer -> Darshan module, in Darshan's module-id order (the order records go into the log).
MODULE_OF_LAYER: dict[str, str] = {
    "posix": "POSIX", "mpiio": "MPI-IO", "h5f": "H5F", "h5d": "H5D", "pnetcdf_file": "PNETCDF_FILE",
    "pnetcdf_var": "PNETCDF_VAR", "stdio": "STDIO",
}
#: Darshan module -> the library's ``struct darshan_mod_logutil_funcs`` of it (darshan-logutils.c).
LOGUTILS: dict[str, str] = {
    "POSIX": "posix_logutils", "MPI-IO": "mpiio_logutils", "H5F": "hdf5_file_logutils",
    "H5D": "hdf5_dataset_logutils", "PNETCDF_FILE": "pnetcdf_file_logutils",
    "PNETCDF_VAR": "pnetcdf_var_logutils", "LUSTRE": "lustre_logutils", "STDIO": "stdio_logutils",
    "DXT_POSIX": "dxt_posix_logutils", "DXT_MPIIO": "dxt_mpiio_logutils",
}
#: Room for the exe line and the mount table in Darshan's job region (DARSHAN_EXE_LEN).
EXE_MOUNTS_BYTES = 3015
#: Longest exe line written (the rest of the region is left to the mount table).
MAX_EXE_CHARS = 2048
#: Darshan's job metadata: ``key=value`` lines in 1024 bytes.
METADATA_BYTES = 1023
#: Darshan's value of the LUSTRE component counters it cannot read (as for its version 1 records).
_LUSTRE_UNKNOWN: dict[str, int] = {"LUSTRE_COMP_STRIPE_PATTERN": -1, "LUSTRE_COMP_FLAGS": -1,
                                   "LUSTRE_COMP_EXT_START": 0, "LUSTRE_COMP_EXT_END": -1,
                                   "LUSTRE_COMP_MIRROR_ID": -1}


def _sum(*columns: str) -> Callable[[Table], np.ndarray]:
    def derive(table: Table) -> np.ndarray:
        total = np.zeros(len(table), dtype=np.int64)
        for col in columns:
            if col in table:
                total = total + np.asarray(table[col]).astype(np.int64)
        return total
    return derive


def _zero(table: Table) -> np.ndarray:
    return np.zeros(len(table), dtype=np.int64)


#: Darshan counters made from pario's under other names (each documented in docs/export.md).
DERIVED: dict[str, Callable[[Table], np.ndarray]] = {
    # Darshan counts MPI_File_read/write_shared as independent calls; pario keeps the shared and
    # ordered calls apart (MPIIO_SHARED_*), Darshan has no counter of its own for them
    "MPIIO_INDEP_READS": _sum("indep_reads", "shared_reads"),
    "MPIIO_INDEP_WRITES": _sum("indep_writes", "shared_writes"),
    # Darshan's H5F_OPENS and H5D_OPENS count the creates too
    "H5F_OPENS": _sum("opens", "creates"),
    "H5D_OPENS": _sum("opens", "creates"),
    # pario's STDIO_OPENS counts the fdopen calls with the fopen calls
    "STDIO_FDOPENS": _zero,
}


@dataclass(frozen=True)
class ModuleRecords:
    """One Darshan module's records, row i of every array being record i."""

    module: str
    ids: np.ndarray  # uint64
    ranks: np.ndarray  # int64, -1 for a record reduced over several ranks
    counters: np.ndarray  # int64 (records, the library's counters)
    fcounters: np.ndarray  # float64 (records, the library's fcounters)
    file_rec_ids: np.ndarray | None = None  # uint64, H5D and PNETCDF_VAR


@dataclass(frozen=True)
class LustreComponent:
    """A component of a file's Lustre layout."""

    counters: dict[str, int]  # LUSTRE_COMP_* counter -> value
    ost_ids: tuple[int, ...]  # stripe count of them
    pool_name: str = ""


@dataclass(frozen=True)
class LustreRecord:
    """A file's Lustre layout (pario writes one component per file: the one it keeps)."""

    id: int
    rank: int
    components: tuple[LustreComponent, ...]


@dataclass(frozen=True)
class DarshanJob:
    """Darshan's ``struct darshan_job``."""

    uid: int
    start_time_sec: int
    start_time_nsec: int
    end_time_sec: int
    end_time_nsec: int
    nprocs: int
    jobid: int
    metadata: str


@dataclass(frozen=True)
class DarshanLog:
    """Everything written to the Darshan log, in the order it is written."""

    job: DarshanJob
    exe: str
    mounts: tuple[tuple[str, str], ...]  # (mount point, file system type)
    names: dict[int, str]
    modules: tuple[ModuleRecords, ...]
    lustre: tuple[LustreRecord, ...]
    partial_modules: tuple[str, ...]  # modules holding pario's overflow record
    #: DXT module -> its records and segments (none from a pario profile: built logs, benchmarks)
    dxt: dict[str, DxtSegments] = field(default_factory=dict)


# --------------------------------------------------------------------------
# the mapping (pure functions)
# --------------------------------------------------------------------------

def darshan_log(profile: Profile, counter_names: Callable[[str, bool], tuple[str, ...]],
                uid: int = 0) -> DarshanLog:
    """The Darshan log of a pario profile; ``counter_names(module, floating)`` gives the library's
    counter names of a module (:func:`pario.log.darshan_lib.counter_names`), ``uid`` the user."""
    modules = tuple(module_records(MODULE_OF_LAYER[layer], profile.layer(layer),
                                   counter_names(MODULE_OF_LAYER[layer], False),
                                   counter_names(MODULE_OF_LAYER[layer], True))
                    for layer in MODULE_OF_LAYER if len(profile.layer(layer)))
    return DarshanLog(
        job=job_record(profile, uid), exe=exe_line(profile), mounts=mount_table(profile),
        names=name_records(profile), modules=modules,
        lustre=lustre_records(profile.layer("posix"), counter_names("LUSTRE_COMP", False)),
        partial_modules=tuple(m.module for m in modules if (m.ids == 0).any()))


def job_record(profile: Profile, uid: int = 0) -> DarshanJob:
    """The job record: Darshan's run time (end - start, to the nanosecond) is pario's (the longest
    rank's wall time), from pario's start time; the metadata says who wrote the log."""
    job = profile.job
    start_ns = round(job.start_time * 1e9)
    end_ns = start_ns + round(job.runtime * 1e9)
    return DarshanJob(uid=uid,
                      start_time_sec=start_ns // 10**9, start_time_nsec=start_ns % 10**9,
                      end_time_sec=end_ns // 10**9, end_time_nsec=end_ns % 10**9,
                      nprocs=job.nprocs, jobid=_jobid(job.jobid), metadata=job_metadata(profile))


def _jobid(text: str) -> int:
    """Darshan's job id is a number: Slurm's, else 0 (pario's log says 0 without a scheduler)."""
    head = text.split(".", 1)[0].split("_", 1)[0]
    return int(head) if head.isdigit() else 0


def job_metadata(profile: Profile) -> str:
    """``key=value`` lines: the writer, the library, and pario's job facts Darshan has no field
    for; values cut to fit Darshan's 1 KiB, no newline inside a value."""
    job = profile.job
    pairs = [("lib_ver", ""), ("pario", __version__), ("pario_log", os.path.basename(job.path)),
             ("hostname", job.hostname), ("mpi_library", job.mpi_library)]
    lines: list[str] = []
    used = 0
    for key, value in pairs:
        if key == "lib_ver":
            continue  # filled in by write_darshan_log, which knows the library
        line = f"{key}={' '.join(str(value).split())}\n"
        if value and used + len(line) <= METADATA_BYTES - 64:  # 64: room for lib_ver
            lines.append(line)
            used += len(line)
    return "".join(lines)


def exe_line(profile: Profile) -> str:
    """The command line, as Darshan records it (arguments joined by blanks), at most
    :data:`MAX_EXE_CHARS` characters and without newlines."""
    job = profile.job
    text = " ".join(job.argv) if job.argv else job.exe
    return " ".join(text.split())[:MAX_EXE_CHARS]


def mount_table(profile: Profile) -> tuple[tuple[str, str], ...]:
    """One entry per directory of the exported files, with the file system type pario read from
    statfs (``POSIX_FS_TYPE``/``MPIIO_FS_TYPE``), so that Darshan tools, which take a file's
    file system from the longest mount point above it, find each file's type.  pario records no
    mount table: these are the files' directories, not the system's mount points.  A file with
    no type recorded falls under ``/`` of type ``unknown``, which Darshan needs at least one entry
    of (its reader finds the end of the exe line at the first mount entry)."""
    dirs: dict[str, str] = {}
    for layer in ("mpiio", "posix"):
        table = profile.layer(layer)
        if not len(table) or "fs_type" not in table:
            continue
        for name, magic in zip(table["name"].tolist(), np.asarray(table["fs_type"]).tolist(), strict=True):
            if int(magic) > 0 and str(name).startswith("/"):
                dirs.setdefault(os.path.dirname(str(name)) or "/", _fs_type_name(int(magic)))
    entries = sorted(((path, kind) for path, kind in dirs.items() if " " not in path and "\t" not in path),
                     key=lambda e: (-len(e[0]), e[0]))
    entries.append(("/", "unknown"))
    return _fitting(entries, EXE_MOUNTS_BYTES - MAX_EXE_CHARS - 1)


def _fs_type_name(magic: int) -> str:
    return FS_TYPES.get(magic, f"0x{magic:x}")


def _fitting(entries: list[tuple[str, str]], room: int) -> tuple[tuple[str, str], ...]:
    """The entries that fit in ``room`` bytes as Darshan writes them ("\\nTYPE\\tPATH"), the
    catch-all ``/`` always among them."""
    *specific, last = entries
    room -= len(last[0]) + len(last[1]) + 2
    kept: list[tuple[str, str]] = []
    for path, kind in specific:
        size = len(path.encode()) + len(kind) + 2
        if size <= room:
            kept.append((path, kind))
            room -= size
    return (*kept, last)


def name_records(profile: Profile) -> dict[int, str]:
    """Record id -> name, for every exported record (pario's overflow record keeps its name)."""
    names: dict[int, str] = {}
    for layer in MODULE_OF_LAYER:
        table = profile.layer(layer)
        if len(table):
            for rid, name in zip(np.asarray(table["id"]).astype(np.uint64).tolist(), table["name"].tolist(),
                                 strict=True):
                names.setdefault(int(rid), str(name))
    return names


def module_records(module: str, table: Table, names: tuple[str, ...],
                   fnames: tuple[str, ...]) -> ModuleRecords:
    """A layer's records under the module's counters: by name where pario has the counter, through
    :data:`DERIVED` where Darshan's is made of pario's, :data:`NOT_RECORDED` otherwise."""
    n = len(table)
    counters = np.empty((n, len(names)), dtype=np.int64)
    for i, name in enumerate(names):
        counters[:, i] = counter_values(name, table)
    fcounters = np.empty((n, len(fnames)), dtype=np.float64)
    for i, name in enumerate(fnames):
        col = counter_column(name)
        fcounters[:, i] = np.asarray(table[col], dtype=np.float64) if col in table else float(NOT_RECORDED)
    file_ids = (np.asarray(table["file_rec_id"]).astype(np.int64).view(np.uint64)
                if module in ("H5D", "PNETCDF_VAR") and "file_rec_id" in table else None)
    if module in ("H5D", "PNETCDF_VAR") and file_ids is None:
        file_ids = np.zeros(n, dtype=np.uint64)
    return ModuleRecords(module=module, ids=np.asarray(table["id"]).astype(np.uint64),
                         ranks=np.asarray(table["rank"]).astype(np.int64), counters=counters,
                         fcounters=fcounters, file_rec_ids=file_ids)


def counter_values(name: str, table: Table) -> np.ndarray:
    """One Darshan integer counter of every record of ``table``."""
    if name in DERIVED:
        return DERIVED[name](table)
    col = counter_column(name)
    if col in table:
        return np.asarray(table[col]).astype(np.int64)
    return np.full(len(table), NOT_RECORDED, dtype=np.int64)


def lustre_records(posix: Table, comp_names: tuple[str, ...]) -> tuple[LustreRecord, ...]:
    """A LUSTRE record for each POSIX record with a Lustre layout (stripe size and count above 0):
    one component, pario's (the last instantiated one of a composite layout), with the OST of its
    first object first and the others unknown (-1), as pario reads only that one."""
    needed = ("lustre_stripe_size", "lustre_stripe_count", "lustre_stripe_offset")
    if not len(posix) or any(c not in posix for c in needed):
        return ()
    size = np.asarray(posix["lustre_stripe_size"]).astype(np.int64)
    count = np.asarray(posix["lustre_stripe_count"]).astype(np.int64)
    offset = np.asarray(posix["lustre_stripe_offset"]).astype(np.int64)
    ids = np.asarray(posix["id"]).astype(np.uint64)
    ranks = np.asarray(posix["rank"]).astype(np.int64)
    out: list[LustreRecord] = []
    for i in np.flatnonzero((size > 0) & (count > 0)).tolist():
        values = {"LUSTRE_COMP_STRIPE_SIZE": int(size[i]), "LUSTRE_COMP_STRIPE_COUNT": int(count[i])}
        comps = {name: values.get(name, _LUSTRE_UNKNOWN.get(name, NOT_RECORDED)) for name in comp_names}
        osts = (int(offset[i]),) + (NOT_RECORDED,) * (int(count[i]) - 1)
        out.append(LustreRecord(int(ids[i]), int(ranks[i]), (LustreComponent(comps, osts),)))
    return tuple(out)


# --------------------------------------------------------------------------
# the library calls
# --------------------------------------------------------------------------

def export_darshan(log: str | os.PathLike[str], out: str | os.PathLike[str]) -> DarshanLog:
    """Read the pario log ``log`` and write it to ``out`` as a Darshan log; ParioError (one line)
    for anything the user can fix."""
    from pario.log import darshan_lib, read_log

    profile = read_log(log)
    if profile.job.source != "pario":
        raise ParioError(f"{log}: is a Darshan log already; export takes a pario log")
    target = Path(out)
    check_output_path(target)
    try:
        darshan_lib.library()
    except ImportError as exc:
        raise ParioError(f"cannot write Darshan logs: {exc}") from None
    # pario's log has no user id: the log file's owner is the user who ran the job
    content = darshan_log(profile, lambda mod, floating: darshan_lib.counter_names(mod, floating=floating),
                          uid=os.stat(log).st_uid)
    write_darshan_log(content, target)
    return content


def check_output_path(out: Path) -> None:
    """One-line errors for an output the library could not create."""
    parent = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        raise ParioError(f"{out}: is a directory; give the Darshan log's file name")
    if not parent.is_dir():
        raise ParioError(f"{out}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise ParioError(f"{out}: directory {parent} is not writable")


def write_darshan_log(content: DarshanLog, out: Path) -> None:
    """Write ``content`` through libdarshan-util: under a temporary name beside ``out``, renamed
    once the library closed it, so a failure never leaves a partial log (nor replaces one)."""
    from pario.log import darshan_lib
    from pario.log.darshan_reader import KNOWN_MODULES

    dl = darshan_lib.library()
    mod_ids = {mod: _module_id(dl, mod, KNOWN_MODULES) for mod in LOGUTILS}
    partial = sum(1 << mod_ids[m] for m in content.partial_modules)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    os.unlink(tmp)  # darshan_log_create creates it (0400)
    keep: list[Any] = []  # cffi buffers the library reads until the log is closed
    try:
        with _library_errors(out) as errors:
            handle = dl.lib.darshan_log_create(os.fsencode(tmp), 0, partial)  # 0: DARSHAN_ZLIB_COMP
            if handle == dl.ffi.NULL:
                raise ParioError(f"{out}: libdarshan-util could not create the log{errors()}")
            failed = _put_all(dl, handle, content, mod_ids, keep)
            dl.lib.darshan_log_close(handle)  # writes the header
            if failed or not os.path.exists(tmp):
                raise ParioError(f"{out}: libdarshan-util could not write {failed or 'the log'}{errors()}")
        os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _module_id(dl: Any, mod: str, known: tuple[str, ...]) -> int:
    """The module's id, checked against the library: ``mod_logutils[id]`` must be its functions."""
    idx = known.index(mod)
    if dl.lib.mod_logutils[idx] != dl.ffi.addressof(dl.lib, LOGUTILS[mod]):
        raise ParioError(f"this libdarshan-util does not number its modules as Darshan 3.4/3.5 ({mod})")
    return idx


def _put_all(dl: Any, handle: Any, content: DarshanLog, mod_ids: dict[str, int], keep: list[Any]) -> str:
    """Every region in Darshan's order; what failed ("" if nothing did)."""
    ffi, lib = dl.ffi, dl.lib
    job = ffi.new("struct darshan_job *")
    for name in ("uid", "start_time_sec", "start_time_nsec", "end_time_sec", "end_time_nsec", "nprocs",
                 "jobid"):
        setattr(job, name, getattr(content.job, name))
    version = ffi.string(lib.darshan_log_get_lib_version()).decode()
    job.metadata = f"lib_ver={version}\n{content.job.metadata}".encode()[:METADATA_BYTES]
    if lib.darshan_log_put_job(handle, job) < 0:
        return "the job record"
    if lib.darshan_log_put_exe(handle, ffi.new("char[]", content.exe.encode())) < 0:
        return "the exe line"
    mounts = ffi.new("struct darshan_mnt_info[]", len(content.mounts))
    for i, (path, kind) in enumerate(content.mounts):
        mounts[i].mnt_path = path.encode()
        mounts[i].mnt_type = kind.encode()
    if lib.darshan_log_put_mounts(handle, mounts, len(content.mounts)) < 0:
        return "the mount table"
    if lib.darshan_log_put_namehash(handle, _name_hash(ffi, content.names, keep)) < 0:
        return "the name records"
    # each module's records in one run (a region is written once), modules in id order
    puts: list[tuple[int, Callable[[], str]]] = [
        (mod_ids[m.module], functools.partial(_put_module, dl, handle, m, mod_ids[m.module]))
        for m in content.modules]
    if content.lustre:
        puts.append((mod_ids["LUSTRE"], functools.partial(_put_lustre, dl, handle, content.lustre,
                                                          mod_ids["LUSTRE"])))
    for mod, segments in content.dxt.items():
        puts.append((mod_ids[mod], functools.partial(_put_dxt, dl, handle, mod, segments, mod_ids[mod])))
    for _, put in sorted(puts, key=lambda p: p[0]):
        failed = put()
        if failed:
            return failed
    return ""


def _name_hash(ffi: Any, names: dict[int, str], keep: list[Any]) -> Any:
    """The name records as the list ``darshan_log_put_namehash`` walks (``hlink.next``); NULL
    without any."""
    head = ffi.NULL
    for rid, name in sorted(names.items(), reverse=True):  # built backwards: written in id order
        data = name.encode("utf-8", errors="replace")
        record = ffi.new("char[]", 8 + len(data) + 1)
        ffi.memmove(record, int(rid).to_bytes(8, "little", signed=False) + data, 8 + len(data))
        ref = ffi.new("struct pario_name_record_ref *")
        ref.name_record = record
        ref.hlink.next = head
        keep += [record, ref]
        head = ref
    return head


def _put_module(dl: Any, handle: Any, records: ModuleRecords, mod_id: int) -> str:
    """Each record through the module's ``log_put_record``."""
    from pario.log import darshan_lib

    dtype = darshan_lib.record_dtype(records.module)
    rows = np.zeros(len(records.ids), dtype=dtype)
    rows["id"], rows["rank"] = records.ids, records.ranks
    rows["counters"], rows["fcounters"] = records.counters, records.fcounters
    if records.file_rec_ids is not None:
        rows["file_rec_id"] = records.file_rec_ids
    buf = dl.ffi.from_buffer(rows)
    put = dl.lib.mod_logutils[mod_id].log_put_record
    for i in range(len(rows)):
        if put(handle, buf + i * dtype.itemsize) < 0:
            return f"the {records.module} records"
    return ""


def _put_lustre(dl: Any, handle: Any, records: tuple[LustreRecord, ...], mod_id: int) -> str:
    """Each LUSTRE record: the fixed part, then its components and their OST ids, contiguous
    (as ``log_put_record`` writes them, from ``comps``)."""
    from pario.log import darshan_lib

    ffi = dl.ffi
    names = darshan_lib.counter_names("LUSTRE_COMP")
    put = dl.lib.mod_logutils[mod_id].log_put_record
    comp_size = ffi.sizeof("struct darshan_lustre_component")
    for rec in records:
        ost_ids = [ost for c in rec.components for ost in c.ost_ids]
        body = ffi.new("char[]", comp_size * len(rec.components) + 8 * len(ost_ids))
        comps = ffi.cast("struct darshan_lustre_component *", body)
        for i, component in enumerate(rec.components):
            for j, name in enumerate(names):
                comps[i].counters[j] = component.counters[name]
            comps[i].pool_name = component.pool_name.encode()[:15]
        osts = ffi.cast("int64_t *", body + comp_size * len(rec.components))
        for j, ost in enumerate(ost_ids):
            osts[j] = ost
        head = ffi.new("struct darshan_lustre_record *")
        head.base_rec.id, head.base_rec.rank = rec.id, rec.rank
        head.num_comps, head.num_stripes = len(rec.components), len(ost_ids)
        head.comps = comps
        head.ost_ids = osts
        if put(handle, head) < 0:
            return "the LUSTRE records"
    return ""


def _put_dxt(dl: Any, handle: Any, mod: str, records: DxtSegments, mod_id: int) -> str:
    """Each DXT record: ``struct dxt_file_record`` followed by its segments (its writes, then its
    reads), contiguous, as ``log_put_record`` writes them."""
    from pario.log.darshan_lib import SEGMENT_DTYPE

    ffi = dl.ffi
    head = ffi.sizeof("struct dxt_file_record")
    put = dl.lib.mod_logutils[mod_id].log_put_record
    counts = (records.write_counts + records.read_counts).tolist()
    first = 0
    for i, n in enumerate(counts):
        body = ffi.new("char[]", head + n * SEGMENT_DTYPE.itemsize)
        rec = ffi.cast("struct dxt_file_record *", body)
        rec.base_rec.id, rec.base_rec.rank = int(records.ids[i]), int(records.ranks[i])
        rec.shared_record = 0
        rec.hostname = records.hostnames[i].encode()[:63]
        rec.write_count, rec.read_count = int(records.write_counts[i]), int(records.read_counts[i])
        ffi.memmove(body + head, np.ascontiguousarray(records.segments[first:first + n]).tobytes(),
                    n * SEGMENT_DTYPE.itemsize)
        first += n
        if put(handle, body) < 0:
            return f"the {mod} records"
    return ""


@contextlib.contextmanager
def _library_errors(out: Path) -> Iterator[Callable[[], str]]:
    """The library prints its errors on stderr: kept aside while it runs, and offered as
    ``": <its last error line>"`` for the one-line error."""
    import sys

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)

        def last_line() -> str:
            capture.flush()
            capture.seek(0)
            text = capture.read().decode("utf-8", "replace")
            lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
            return f": {lines[-1][:200]}" if lines else ""

        try:
            yield last_line
        finally:
            os.dup2(saved, 2)
            os.close(saved)
