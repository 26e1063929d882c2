"""I/O library rules (HDF5, PnetCDF): chunks too small, no alignment on a striped file system,
independent dataset transfers where collective ones are possible, many small blocking PnetCDF
puts, library metadata dominating, PnetCDF variable alignment off the stripe, and a library
moving far more bytes than it was asked for (docs/diagnosis.md, "I/O libraries").

The rules read the library layers of the profile (``h5f``, ``h5d``, ``pnetcdf_file``,
``pnetcdf_var``, through :mod:`~pario.diagnosis.library_records`); a counter a source
does not record (Darshan has no HDF5 alignment, layout or PnetCDF alignment) keeps its rule
silent.  The PnetCDF-only rules are in pnetcdf.py.  Detectors only: the words are in
libraries_words.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from pario.diagnosis import libraries_words as words
from pario.diagnosis.columns import counter
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts, Striping
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.library_records import (
    CHUNK_DIMS,
    LibraryRequests,
    by_id,
    chunked_extent,
    file_ids,
    first,
    grouped,
    ids,
    large_request_files,
    layer,
    per_rank,
)
from pario.diagnosis.registry import rule
from pario.diagnosis.run_description import describe
from pario.diagnosis.stake import stake_rows
from pario.model.layers import HDF5, LIBRARY_TABLE, OPS, PNETCDF
from pario.table import Table

FAMILY = "libraries"

__all__ = ["LibraryRequests", "large_request_files"]  # where the request rules look for them

# ------------------------------------------------------------------------------------------
# HDF5
# ------------------------------------------------------------------------------------------


@record
class SmallChunkDataset:
    did: int
    name: str
    shape: tuple[int, ...]  # of a chunk, in HDF5's order (slowest dimension first)
    chunk: float  # bytes
    reference: float  # the stripe size, or the mean transfer (bytes)
    what: str  # "stripe size" or "mean transfer"
    transfer: float  # mean bytes per read or write
    time: float  # read + write time (summed over ranks)


@record
class SmallChunks(Hit):
    datasets: tuple[SmallChunkDataset, ...] = ()
    worst: SmallChunkDataset | None = None  # the smallest chunk for its reference


def _small_chunk_datasets(facts: Facts, d: Table, cfg: RuleConfig) -> Iterator[SmallChunkDataset]:
    elem = first(d, "datatype_size")
    dims = {c: first(d, c) for c in CHUNK_DIMS if c in d}
    file_of = by_id(d, file_ids(facts, HDF5.data))
    cols = ("bytes_read", "bytes_written", "reads", "writes", "read_time", "write_time")
    for row in grouped(d, cols, facts.nprocs):
        did = int(row["id"])
        # chunk_size_d1 is the fastest-varying (last) dimension (Darshan's order): the shape in
        # HDF5's order (slowest first, as H5Pset_chunk and h5dump take it) is the reverse
        shape = [int(dims[c].get(did, 0)) for c in reversed(dims) if dims[c].get(did, 0) > 0]
        if not shape or elem.get(did, -1) <= 0:
            continue
        chunk = float(np.prod(shape)) * elem[did]
        nbytes = row["bytes_read"] + row["bytes_written"]
        calls = row["reads"] + row["writes"]
        if nbytes < cfg.library_min_bytes or calls <= 0:
            continue
        stripe = facts.striping.get(file_of.get(did, 0))
        ref, what = (
            (float(stripe.stripe_size), "stripe size")
            if stripe is not None
            else (nbytes / calls, "mean transfer")
        )
        if chunk > cfg.hdf5_chunk_max_ratio * ref:
            continue
        yield SmallChunkDataset(did, str(row["name"]), tuple(shape), chunk, ref, what, nbytes / calls,
                                row["read_time"] + row["write_time"])


@rule(
    "LIB-HDF5-SMALL-CHUNKS",
    title="HDF5 chunks far smaller than the stripe or the transfers",
    family=FAMILY,
    config=("hdf5_chunk_max_ratio", "library_min_bytes"),
    words=words.hdf5_small_chunks,
)
def hdf5_small_chunks(facts: Facts, cfg: RuleConfig) -> Iterator[SmallChunks]:
    """A chunked dataset whose chunk is at most hdf5_chunk_max_ratio of the file's stripe size (or,
    off Lustre, of the mean transfer): each transfer touches many chunks, each a separate I/O and a
    B-tree entry."""
    d = layer(facts, HDF5.data)
    if not len(d) or not any(c in d for c in CHUNK_DIMS):
        return
    found = tuple(_small_chunk_datasets(facts, d, cfg))
    worst = None
    for s in found:
        if worst is None or s.chunk / s.reference < worst.chunk / worst.reference:
            worst = s
    if not found or worst is None:
        return
    yield SmallChunks(time_lost=per_rank(facts, sum(s.time for s in found)), datasets=found, worst=worst)


@record
class UnalignedFile:
    fid: int
    name: str
    bytes: float  # through HDF5
    stripe: Striping | None


@record
class NoAlignment(Hit):
    files: tuple[UnalignedFile, ...] = ()
    stripe_size: int = 0  # the largest of their stripe sizes (0: none on Lustre)


@rule(
    "LIB-HDF5-NO-ALIGNMENT",
    title="HDF5 objects not aligned on a striped or large file",
    family=FAMILY,
    config=("hdf5_align_min_bytes",),
    words=words.hdf5_no_alignment,
)
def hdf5_no_alignment(facts: Facts, cfg: RuleConfig) -> Iterator[NoAlignment]:
    """H5F_ALIGNMENT 1 (HDF5's default: no alignment) on a file on Lustre or of at least
    hdf5_align_min_bytes: datasets start anywhere, so transfers straddle stripes and file-system blocks."""
    f = layer(facts, HDF5.files)
    if not len(f) or "alignment" not in f:
        return
    written = {
        int(r["id"]): r["bytes_read"] + r["bytes_written"]
        for r in grouped(f, ("bytes_read", "bytes_written"), facts.nprocs)
    }
    names = by_id(f, f["name"])
    found = []
    for fid, a in first(f, "alignment").items():
        stripe = facts.striping.get(fid)
        if a != 1 or (stripe is None and written.get(fid, 0.0) < cfg.hdf5_align_min_bytes):
            continue
        found.append(UnalignedFile(fid, str(names[fid]), written.get(fid, 0.0), stripe))
    if not found:
        return
    stripe_size = max(0, *(u.stripe.stripe_size if u.stripe is not None else 0 for u in found))
    yield NoAlignment(files=tuple(found), stripe_size=stripe_size)


# ------------------------------------------------------------------------------------------
# both libraries: transfers of HDF5 datasets and PnetCDF variables
# ------------------------------------------------------------------------------------------


@record
class IndependentObject:
    """A dataset or variable transferred by several ranks with independent I/O only."""

    kind: str  # "dataset" or "variable"
    oid: int
    name: str
    ranks: float
    transfers: float  # independent transfers
    bytes: float
    time: float  # read + write time (summed over ranks)


@record
class IndependentTransfers(Hit):
    objects: tuple[IndependentObject, ...] = ()
    libraries: tuple[str, ...] = ()  # "HDF5", "PnetCDF", sorted


def _mpio_files(facts: Facts) -> np.ndarray | None:
    """The HDF5 files opened with the MPI-IO driver (None: not recorded)."""
    h5f = layer(facts, HDF5.files)
    if "use_mpiio" not in h5f:
        return None
    return np.array([i for i, u in first(h5f, "use_mpiio").items() if u > 0], dtype=np.uint64)


def _transfer_counts(r: dict[str, Any], d: Table, name: str) -> tuple[float, float]:
    """A dataset's or variable's (collective, independent) transfers."""
    if name == HDF5.data:
        coll = (
            r.get("coll_reads", 0.0) + r.get("coll_writes", 0.0)
            if "coll_writes" in d
            else r.get("use_mpiio_collective", 0.0)
        )
        return coll, r["reads"] + r["writes"] - (coll if "coll_writes" in d else 0.0)
    coll = r["coll_reads"] + r["coll_writes"] + r["nb_reads"] + r["nb_writes"]
    return coll, r["indep_reads"] + r["indep_writes"]


def _independent_objects(facts: Facts, name: str, cfg: RuleConfig) -> Iterator[IndependentObject]:
    """The datasets (``h5d``) or variables (``pnetcdf_var``) transferred independently only."""
    d = layer(facts, name)
    if not len(d):
        return
    calls = (*OPS[name]["read"], *OPS[name]["write"])
    cols = (
        *calls,
        *(c for c in ("coll_reads", "coll_writes") if c not in calls),
        "bytes_read",
        "bytes_written",
        "read_time",
        "write_time",
        *(("use_mpiio_collective",) if "use_mpiio_collective" in d else ()),
    )
    mpio_files = _mpio_files(facts) if name == HDF5.data else None
    via_mpio = (
        None if mpio_files is None else set(ids(d)[np.isin(file_ids(facts, HDF5.data), mpio_files)].tolist())
    )
    for r in grouped(d, tuple(dict.fromkeys(cols)), facts.nprocs):
        if via_mpio is not None and int(r["id"]) not in via_mpio:
            continue  # an HDF5 file without the MPI-IO driver cannot transfer collectively
        nbytes = r["bytes_read"] + r["bytes_written"]
        if r["ranks"] < cfg.library_collective_min_ranks or nbytes < cfg.library_min_bytes:
            continue
        coll, indep = _transfer_counts(r, d, name)
        if coll > 0 or indep <= 0:
            continue
        yield IndependentObject("dataset" if name == HDF5.data else "variable", int(r["id"]), str(r["name"]),
                                r["ranks"], indep, nbytes, r["read_time"] + r["write_time"])


@rule(
    "LIB-INDEPENDENT-TRANSFERS",
    title="Independent dataset transfers where collective ones are possible",
    family=FAMILY,
    config=("library_collective_min_ranks", "library_min_bytes"),
    words=words.independent_transfers,
)
def independent_transfers(facts: Facts, cfg: RuleConfig) -> Iterator[IndependentTransfers]:
    """Several ranks read or write one HDF5 dataset (through the MPI-IO driver) or one PnetCDF
    variable with independent transfers only: MPI-IO cannot aggregate their requests."""
    found = (*_independent_objects(facts, "h5d", cfg), *_independent_objects(facts, PNETCDF.data, cfg))
    if not found:
        return
    libs = sorted({"HDF5" if o.kind == "dataset" else "PnetCDF" for o in found})
    yield IndependentTransfers(time_lost=per_rank(facts, sum(o.time for o in found)), objects=found,
                               libraries=tuple(libs))


@record
class CollectiveNotDone:
    """One HDF5 file whose collective transfers HDF5 did independently, in one direction."""

    fid: int
    name: str
    kind: str  # "read" or "write"
    asked: float  # H5Dread / H5Dwrite calls with H5FD_MPIO_COLLECTIVE in the transfer list
    calls: float  # all H5Dread / H5Dwrite calls on the file's datasets
    independent: float  # the file's independent MPI-IO calls in that direction (HDF5's)
    collective: float  # its collective MPI-IO calls in that direction


@record
class CollectiveBroken(Hit):
    files: tuple[CollectiveNotDone, ...] = ()  # the most asked first


@rule(
    "LIB-COLLECTIVE-NOT-DONE",
    title="HDF5 was asked for collective transfers and did them independently",
    family=FAMILY,
    words=words.collective_not_done,
)
def collective_not_done(facts: Facts, cfg: RuleConfig) -> Iterator[CollectiveBroken]:
    """The program asks HDF5 for collective transfers (H5FD_MPIO_COLLECTIVE), but the MPI-IO calls
    beneath are independent: HDF5 broke collective I/O (a type conversion, a selection or a
    layout it cannot do collectively), so MPI-IO could not aggregate the ranks' requests."""
    if not len(layer(facts, HDF5.data)):
        return  # without HDF5 dataset records no transfer asked to be collective (run_description)
    found = [
        CollectiveNotDone(a.fid, a.name, kind, a.hdf5_collective[kind], a.hdf5_calls[kind],
                          a.independent[kind], a.collective[kind])
        for a in describe(facts).files.values()
        for kind in ("write", "read")
        if a.hdf5_collective[kind] > 0 and a.independent[kind] > 0
        and a.collective[kind] < 0.5 * a.hdf5_collective[kind]
    ]
    if not found:
        return
    found.sort(key=lambda f: -f.asked)
    mids = np.asarray(facts.layer("mpiio")["id"]).astype(np.uint64)
    rows = np.isin(mids, np.array([f.fid for f in found], dtype=np.uint64))
    kinds = {f.kind for f in found}
    at_stake = stake_rows(facts, "mpiio", rows, {k: 1.0 for k in kinds}).max
    yield CollectiveBroken(time_lost=at_stake, files=tuple(found))


# ------------------------------------------------------------------------------------------
# PnetCDF (pnetcdf.py: its rules take their place in the catalogue here)
# ------------------------------------------------------------------------------------------

from pario.diagnosis import pnetcdf as _pnetcdf  # noqa: E402, F401

# ------------------------------------------------------------------------------------------
# both libraries
# ------------------------------------------------------------------------------------------


@record
class MetadataDominates(Hit):
    library: str = ""  # "HDF5" or "PnetCDF"
    meta: float = 0.0  # metadata time in the library (all ranks)
    data: float = 0.0  # data time in the library (all ranks)
    opens: float = 0.0  # file creates and opens
    records: int = 0  # file records
    redefs: float = 0.0  # re-entries in define mode (PnetCDF)
    chunked: bool = False  # the run has chunked HDF5 datasets (HDF5)
    flushes: float = 0.0  # H5Fflush / H5Dflush calls (HDF5)
    fsyncs: float = 0.0  # fsync/fdatasync calls beneath, on the library's files (POSIX records)


def _library_times(f: Table, d: Table) -> tuple[float, float]:
    """A library's (metadata, data) time, all ranks."""
    meta = float(counter(f, "meta_time").sum() + counter(d, "meta_time").sum())
    data = float(counter(d, "read_time").sum() + counter(d, "write_time").sum())
    if "read_time" not in f:  # Darshan's PnetCDF waits: data movement of the file's requests
        data += float(counter(f, "wait_time").sum())
    return meta, data


@rule(
    "LIB-METADATA-DOMINATES",
    title="Library metadata operations dominate the library's time",
    family=FAMILY,
    config=("library_meta_min_share", "min_time_lost_share"),
    words=words.metadata_dominates,
)
def metadata_dominates(facts: Facts, cfg: RuleConfig) -> Iterator[MetadataDominates]:
    """HDF5 (H5F/H5D create, open, flush, close) or PnetCDF (create, open, redef, enddef, sync,
    close, def_var) metadata takes at least library_meta_min_share of the library's time."""
    for library in LIBRARY_TABLE:
        lib = library.label
        f, d = layer(facts, library.files), layer(facts, library.data)
        if not len(f) and not len(d):
            continue
        meta, data = _library_times(f, d)
        total = meta + data
        lost = per_rank(facts, meta)
        if (
            total <= 0
            or meta / total < cfg.library_meta_min_share
            or lost < cfg.min_time_lost_share * facts.runtime
        ):
            continue
        yield MetadataDominates(
            time_lost=lost, library=lib, meta=meta, data=data, records=len(f),
            opens=float(sum(counter(f, c).sum() for c in ("opens", "creates"))),
            redefs=float(counter(f, "redefs").sum()), chunked=lib == "HDF5" and bool(chunked_extent(facts)),
            flushes=_flushes(f, d) if lib == "HDF5" else 0.0,
            fsyncs=_syncs_beneath(facts, f) if lib == "HDF5" else 0.0,
        )


def _flushes(f: Table, d: Table) -> float:
    """H5Fflush and H5Dflush calls of an HDF5 run."""
    return float(counter(f, "flushes").sum() + counter(d, "flushes").sum())


def _syncs_beneath(facts: Facts, files: Table) -> float:
    """fsync and fdatasync calls on these library files, from their POSIX records."""
    posix = facts.layer("posix")
    if not len(posix) or not len(files):
        return 0.0
    mine = np.isin(np.asarray(posix["id"]).astype(np.uint64), np.asarray(files["id"]).astype(np.uint64))
    return float((counter(posix, "fsyncs") + counter(posix, "fdsyncs"))[mine].sum())


#: The extra bytes beneath an HDF5 file, as a share of its chunked datasets' full size, at or above
#: which the fill values written when the chunks were allocated explain them.
_FILL_SHARE = 0.9


@record
class AmplifiedFile:
    name: str
    asked: float  # bytes asked of the library
    moved: float  # bytes moved beneath it
    chunked: float | None = None  # its chunked datasets' full size, when their fill values explain it


@record
class Amplification(Hit):
    files: tuple[AmplifiedFile, ...] = ()
    asked: float = 0.0  # all of them
    moved: float = 0.0


@rule(
    "LIB-AMPLIFICATION",
    title="The library moves far more bytes than the application asked for",
    family=FAMILY,
    config=("library_amplification_min", "library_min_bytes"),
    words=words.amplification,
)
def amplification(facts: Facts, cfg: RuleConfig) -> Iterator[Amplification]:
    """Per library file: bytes moved beneath (MPI-IO, else POSIX) / bytes asked of the library at
    least library_amplification_min (tiny datasets or variables whose metadata, headers and
    padding outweigh the data), or an HDF5 file whose extra bytes beneath are its chunked datasets'
    full size (at least library_min_bytes): the fill values written when the chunks were
    allocated."""
    from pario.analysis.libraries import library_summary

    if not any(len(facts.profile.layer(x)) for lib in LIBRARY_TABLE for x in (lib.files, lib.data)):
        return  # no library records: no library file to compare (library_summary)
    extent = chunked_extent(facts)
    h5f = layer(facts, HDF5.files)
    fids = dict(zip(np.asarray(h5f["name"]).astype(str).tolist(), ids(h5f).tolist(), strict=True))
    found = []
    for lf in library_summary(facts.profile).files:
        asked = (lf.asked_read.value or 0.0) + (lf.asked_written.value or 0.0)
        moved = (lf.moved_read.value or 0.0) + (lf.moved_written.value or 0.0)
        if not lf.beneath_layer or asked <= 0:
            continue
        chunked = extent.get(fids.get(lf.name, 0), 0.0) if lf.library == HDF5.name else 0.0
        filled = chunked > 0 and chunked >= cfg.library_min_bytes and moved - asked >= _FILL_SHARE * chunked
        if moved < cfg.library_amplification_min * asked and not filled:
            continue
        found.append(AmplifiedFile(lf.name, asked, moved, chunked if filled else None))
    if not found:
        return
    yield Amplification(files=tuple(found), asked=sum(f.asked for f in found),
                        moved=sum(f.moved for f in found))
