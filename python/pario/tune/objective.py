"""The objective of a trial, read from its pario log, and the workload it describes.

* ``write-bw`` (maximised): bytes written to the selected files over the slowest rank's write
  plus metadata time on them, outermost layer only (MPI-IO if the file was opened with
  MPI-IO, else POSIX or STDIO), so that open, set_view, sync and close count;
* ``read-bw`` (maximised): the same for reads;
* ``io-time`` (minimised): the slowest rank's I/O time on the selected files;
* ``wall-time`` (minimised): the job's run time (the longest rank's wall time).

A file written or read through HDF5 or PnetCDF is measured at the library: the data bytes the
program handed to H5Dwrite/ncmpi_put_* (not the library's metadata beneath) over the time in
the library's calls (its datasets' or variables' transfers and the file's own create, open,
flush, enddef, close), every call counted once (pario.model.rankio.time_records).

The selected files are those whose path matches ``--files`` (a glob with a '/' is matched
against the whole path, one without against the base name; default: every file written or
read by the program, except the runtime's lock-test and /dev files).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pario import units
from pario.launch.hints import section_matches
from pario.model import LAYERS, LIBRARIES, Profile
from pario.model.rankio import (
    combine,
    counter_column,
    data_file_ids,
    layer_members,
    rank_io,
    time_records,
)
from pario.table import Table, as_table
from pario.tune.choices import MAXIMISE


class NoObjective(Exception):
    """The log has nothing to measure (no bytes on the selected files): the trial failed."""


def direction(objective: str) -> str:
    return "maximize" if objective in MAXIMISE else "minimize"


def better(objective: str, a: float, b: float) -> bool:
    """True when value ``a`` is better than ``b`` for ``objective``."""
    return a > b if objective in MAXIMISE else a < b


def matches(path: str, glob: str | None) -> bool:
    """Is ``path`` one of the --files (every file without a glob)?  The rule of a PARIO_HINTS
    section, so that the files measured are the files the trial's hints went to."""
    return glob is None or section_matches(glob, path)


#: files the MPI library makes next to the program's (OMPIO's lock tests, its shared-file-pointer segments
#: ``<file>_cid-<n>-<pid>.sm`` and Open MPI's session directories): never the program's data
LIBRARY_FILES = ("*.locktest.*", "*_cid-*.sm", "*/ompi.*/*")


def library_file(path: str) -> bool:
    return any(fnmatch.fnmatchcase(path, p) for p in LIBRARY_FILES)


def _ignored_by_default(path: str) -> bool:
    """Not the program's data unless --files names it: devices and kernel files (but /dev/shm,
    where programs keep real files, is data) and the standard streams."""
    system = path.startswith(("/dev/", "/proc/", "/sys/")) and not path.startswith("/dev/shm/")
    return system or path in ("<STDOUT>", "<STDERR>", "<STDIN>")


def _measured(name: str, glob: str | None) -> bool:
    # the MPI library's own files are never the program's data, even when a glob matches them
    return (matches(name, glob) and not library_file(name)
            and (glob is not None or not _ignored_by_default(name)))


def selected_files(profile: Profile, glob: str | None) -> dict[str, Table]:
    """Each layer's records of the files the objective measures: the file-system layers', the
    I/O libraries' file records, and the datasets and variables of those files."""
    out: dict[str, Table] = {}
    file_layers = (*LAYERS, *(files for files, _ in LIBRARIES.values()))
    for layer in file_layers:
        table = as_table(profile.layer(layer))
        if len(table):
            table = table[np.array([_measured(str(n), glob) for n in table["name"]], dtype=bool)]
        out[layer] = table
    for files_layer, data_layer in LIBRARIES.values():
        records = profile.layer(data_layer)
        data = as_table(records)
        if len(data):
            ids = data_file_ids(records, profile.layer(files_layer))
            chosen = np.asarray(out[files_layer]["id"], dtype=np.uint64)
            data = data[np.isin(ids, chosen) & (ids != 0)]
        out[data_layer] = data
    return out


@dataclass(frozen=True)
class Measurement:
    objective: str
    value: float  # bytes/s for the bandwidths, seconds for the times
    bytes: float  # bytes read + written on the selected files
    seconds: float  # the time the value divides by (or the value itself for the times)
    files: tuple[str, ...]


def measure(profile: Profile, objective: str, glob: str | None = None) -> Measurement:
    """The objective of one run.  Raises NoObjective when there is nothing to measure."""
    files = selected_files(profile, glob)
    file_layers = (*LAYERS, *(files for files, _ in LIBRARIES.values()))
    names = sorted({str(n) for layer in file_layers for n in files[layer]["name"]})
    if objective == "wall-time":
        t = float(profile.job.runtime)
        if not (t > 0 and math.isfinite(t)):
            raise NoObjective("the log has no run time")
        return Measurement(objective, t, 0.0, t, tuple(names))
    if not names:
        what = f"no file matches --files {glob}" if glob else "the program did no file I/O"
        raise NoObjective(what)
    nprocs = profile.job.nprocs
    per_layer = [rank_io(records, nprocs, layer_members(profile.file_ranks, layer))
                 for layer, records in time_records(files).items()]
    table = as_table(combine(per_layer, nprocs).table)

    def col(name: str) -> np.ndarray:
        return np.asarray(table[name], dtype=np.float64)

    if objective == "io-time":
        t = _nanmax(col("time"))
        if not t > 0:
            raise NoObjective("no I/O time on the selected files")
        return Measurement(objective, t, float(np.nansum(col("bytes"))), t, tuple(names))
    kind = "write" if objective == "write-bw" else "read"
    column = "bytes_written" if kind == "write" else "bytes_read"
    nbytes = float(np.nansum(col(column)))
    seconds = _nanmax(col(f"{kind}_time") + col("meta_time"))
    if nbytes <= 0:
        raise NoObjective(f"no bytes {'written to' if kind == 'write' else 'read from'} the selected files")
    if seconds <= 0:
        raise NoObjective(f"no {kind} time on the selected files")
    return Measurement(objective, nbytes / seconds, nbytes, seconds, tuple(names))


def measure_steps(steps: Sequence[Profile], objective: str, glob: str | None = None) -> Measurement:
    """The objective of a command that started its MPI jobs itself, one after the other (a job
    script, ``pario kernel``): the jobs' logs (``steps``) hold the I/O, the command's own process
    none.  Bytes and times add up over the steps that touched the selected files; NoObjective
    when none did.  (``wall-time`` is the command's own run time: see :func:`measure`.)"""
    found: list[Measurement] = []
    first: NoObjective | None = None
    for profile in steps:
        try:
            found.append(measure(profile, objective, glob))
        except NoObjective as exc:
            first = first or exc
    if not found:
        raise first or NoObjective("the command started no MPI job")
    nbytes = sum(m.bytes for m in found)
    seconds = sum(m.seconds for m in found)
    names = tuple(sorted({n for m in found for n in m.files}))
    value = nbytes / seconds if objective in MAXIMISE else seconds
    return Measurement(objective, value, nbytes, seconds, names)


def _nanmax(values: np.ndarray) -> float:
    """The largest value that is not NaN; NaN if there is none."""
    present = values[~np.isnan(values)]
    return float(present.max()) if len(present) else math.nan


def workload_features(profile: Profile, glob: str | None = None) -> dict[str, float]:
    """What the prediction model knows of the workload: ranks, bytes, request sizes, access pattern."""
    files = selected_files(profile, glob)
    mpiio, posix = files["mpiio"], files["posix"]
    outer = mpiio if len(mpiio) else posix

    def total(records: Table, col: str) -> float:
        return float(counter_column(records, col).sum())

    written, read = total(outer, "bytes_written"), total(outer, "bytes_read")
    if len(mpiio):
        ops = sum(total(mpiio, c) for c in ("indep_writes", "coll_writes", "split_writes", "nb_writes",
                                             "indep_reads", "coll_reads", "split_reads", "nb_reads"))
        coll = sum(total(mpiio, c) for c in ("coll_writes", "coll_reads", "split_writes", "split_reads"))
        noncontig = total(mpiio, "noncontig_view")
    else:
        ops = total(posix, "writes") + total(posix, "reads")
        coll, noncontig = 0.0, 0.0
    pops = total(posix, "writes") + total(posix, "reads")
    seq = total(posix, "seq_writes") + total(posix, "seq_reads")
    return {
        "w_ranks": float(profile.job.nprocs),
        "w_log2_bytes": math.log2(max(written + read, 1.0)),
        "w_write_share": written / max(written + read, 1.0),
        "w_log2_request": math.log2(max((written + read) / max(ops, 1.0), 1.0)),
        "w_log2_posix_request": math.log2(max((written + read) / max(pops, 1.0), 1.0)),
        "w_collective_share": coll / max(ops, 1.0),
        "w_noncontig_view": float(noncontig > 0),
        "w_sequential_share": seq / max(pops, 1.0),
        "w_files": float(len(set(outer["name"])) if len(outer) else 0),
        "w_shared": float((np.asarray(outer["rank"]) < 0).any()) if len(outer) else 0.0,
    }


def show_value(objective: str, value: float | None) -> str:
    if value is None:
        return "-"
    return units.rate(value) if objective in MAXIMISE else units.seconds(value)
