"""Request-shape rules: small, misaligned, random and repeated requests; latency-bound files.

Requests are judged where they reach the file system: the POSIX records
(including the calls MPI-IO makes, so collective I/O that merges small
requests is credited for it), and MPI-IO records of files without POSIX
records; the request-size rules (IO-SMALL-*) also count the requests that reach
DAOS without POSIX: the DFS records, and the DAOS records of objects without DFS
records (a DFS file's DAOS record holds the same requests again).  The other
rules read counters DFS and DAOS do not keep (offsets, alignment, sequential
accesses).  STDIO is buffered by the C library, so its request sizes say
little about the file system; STDIO files are judged by rate instead
(IO-LATENCY-BOUND) and by volume (IFACE-STDIO-BULK).  Detectors only: the
words are in requests_words.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

import numpy as np

from pario.diagnosis import requests_words as words
from pario.diagnosis._table_ops import per_file, sort_order
from pario.diagnosis._table_ops import top as top_rows
from pario.diagnosis.columns import (
    counter,
    layer_counter,
    layer_ids,
    layer_nranks,
    layer_ops,
    layer_unique,
    layer_values,
    outer_unique,
    small_bytes_bound,
    small_ops,
)
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import BYTES_COLS, TIME_COLS, Facts, name_suffix_rows
from pario.diagnosis.file_rows import files_of, part
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.layout import Layout, layout_of
from pario.diagnosis.library_records import LibraryRequests
from pario.diagnosis.library_records import file_sums as library_file_sums
from pario.diagnosis.registry import rule
from pario.diagnosis.stake import stake_rows
from pario.model.layers import HDF5, LIBRARY_TABLE
from pario.model.rankio import float_values
from pario.table import Table, as_table, group_codes, group_reduce, isin, run_heads

if TYPE_CHECKING:
    from pario.diagnosis.trace_access import ReadSharing

FAMILY = "requests"


Part = tuple[str, "np.ndarray | None"]


def _fs_parts(facts: Facts, kind: str | None = None) -> list[Part]:
    """POSIX records, and MPI-IO records of files that have no POSIX record.

    With ``kind``, POSIX records of files whose MPI-IO records move no bytes of that kind
    are left out: those requests were made by the MPI-IO library itself (the reads of
    ROMIO's read-modify-write during collective writes), not by the application.

    Each part is a layer and which of ``facts.layer(layer)``'s rows it holds (a boolean
    mask, None for all); parts without rows are left out.  Cached per Facts.
    """

    def make() -> list[Part]:
        posix = facts.layer("posix")
        mpiio = facts.layer("mpiio")
        keep = None
        if kind is not None and len(posix) and len(mpiio):
            files, codes = group_codes(layer_values(facts, "mpiio", "id"))
            moved = group_reduce(layer_counter(facts, "mpiio", BYTES_COLS[kind]), codes, len(files), "sum")
            library = files[moved <= 0]  # (bytes are never negative: these move none)
            if len(library):
                drop = isin(layer_values(facts, "posix", "id"), library)
                if drop.any():
                    keep = ~drop
        out: list[Part] = []
        if len(posix) if keep is None else keep.any():
            out.append(("posix", keep))
        if len(mpiio):
            rest = None
            if len(posix):
                nested = isin(layer_values(facts, "mpiio", "id"), layer_ids(facts, "posix"))
                rest = ~nested if nested.any() else None
            if rest is None or rest.any():
                out.append(("mpiio", rest))
        return out

    return facts.cached(("fs_parts", kind), make)


def _request_parts(facts: Facts, kind: str) -> list[Part]:
    """:func:`_fs_parts`, and the requests that reach DAOS without POSIX: the DFS records, and the
    DAOS records of objects without DFS records (the others hold the DFS requests again)."""
    out = list(_fs_parts(facts, kind))
    for layer in ("dfs", "daos"):
        keep = facts.outer_rows(layer)
        if len(facts.layer(layer)) and (keep is None or keep.any()):
            out.append((layer, keep))
    return out


def _positions(rows: np.ndarray | None, sel: np.ndarray) -> np.ndarray:
    """Positions in the layer of the part's rows picked by ``sel`` (a mask over the part)."""
    return np.flatnonzero(sel) if rows is None else np.flatnonzero(rows)[sel]


HDF5_SUFFIXES = (".h5", ".hdf5", ".he5", ".nc")


def _hdf5(facts: Facts, names: list[str]) -> bool:
    mods = facts.profile.job.metadata.get("modules_not_analysed") or []
    return any(str(m).startswith("H5") for m in mods) or any(n.endswith(HDF5_SUFFIXES) for n in names)


def _hdf5_files(facts: Facts, per: Table, picked: list[tuple[str, np.ndarray]]) -> bool:
    """``_hdf5(facts, names of per)``; ``per`` groups by file the records at ``picked`` (layer, positions)."""
    masks = [name_suffix_rows(facts, layer, HDF5_SUFFIXES) for layer, _ in picked]
    if len(per) != sum(len(pos) for _, pos in picked) or any(m is None for m in masks):
        return _hdf5(facts, [str(n) for n in per["name"]])
    # one record per file: the files' names are the records' names
    mods = facts.profile.job.metadata.get("modules_not_analysed") or []
    return any(str(m).startswith("H5") for m in mods) or any(
        bool(m[pos].any()) for m, (_, pos) in zip(masks, picked, strict=True) if m is not None
    )


def _histogram_column(facts: Facts, layer: str) -> Callable[[str], np.ndarray]:
    """The ``column`` argument of :func:`small_ops` and :func:`small_bytes_bound`.

    The request-size histogram is read by these two only: its columns are kept for this
    call, not for the whole diagnosis (a million records x 20 columns is 160 MB).
    """
    table = facts.layer(layer)
    mine: dict[str, np.ndarray] = {}

    def get(name: str) -> np.ndarray:
        if not name.startswith("size_"):
            return layer_counter(facts, layer, name)
        if name not in mine:
            mine[name] = counter(table, name)
        return mine[name]

    return get


def _files(grouped: Any) -> Table:
    """A result of :func:`per_file` or :func:`top_rows` (grouped by file id) as a Table whose
    "id" column is the file id."""
    per = as_table(grouped)
    if "id" not in per:  # ids 0..n-1 look like row positions to as_table, which drops them
        per = Table({"id": np.arange(len(per)), **dict(per.items())}, length=len(per))
    return per


def _extent_of(facts: Facts, kind: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Distinct bytes each file spans in one direction (highest offset + 1, POSIX and STDIO):
    the files' ids, sorted, and their extents (None when no file has one)."""
    key = "max_byte_read" if kind == "read" else "max_byte_written"
    ids, ext = [], []
    for layer in ("posix", "stdio"):
        records = facts.layer(layer)
        if key in records and len(records):
            mb = float_values(records[key], -1.0)
            keep = mb >= 0
            ids.append(layer_values(facts, layer, "id")[keep])
            ext.append(mb[keep] + 1.0)
    if not ids or not sum(len(i) for i in ids):
        return None
    all_ids, all_ext = np.concatenate(ids), np.concatenate(ext)
    if all_ids.dtype.kind not in "iu":
        files, codes = group_codes(all_ids)
        return files, group_reduce(all_ext, codes, len(files), "max")
    order = np.argsort(all_ids)  # the largest of each file's extents: any order will do
    sid, sext = all_ids[order], all_ext[order]
    starts = np.flatnonzero(run_heads(sid))
    return sid[starts], np.maximum.reduceat(sext, starts)


def _lookup(keys: np.ndarray, values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Per id of ``ids``: the value of its key (sorted distinct ``keys``), 0 where it has none."""
    if not len(keys):
        return np.zeros(len(ids))
    if keys.dtype != ids.dtype:  # compare the numbers (uint64 and int64 meet as floats in NumPy)
        keys, ids = keys.astype(object), ids.astype(object)
    i = np.minimum(np.searchsorted(keys, ids), len(keys) - 1)
    return np.where(keys[i] == ids, values[i], 0.0)


def _stripes_of(facts: Facts, per: Table) -> dict[int, int]:
    """The stripe size of each file of ``per`` on Lustre (by file id)."""
    out = {}
    for fid in per["id"].tolist():
        s = facts.striping.get(int(fid))
        if s is not None:
            out[int(fid)] = s.stripe_size
    return out


def _rereads(facts: Facts, kind: str, rows: np.ndarray | None, n: np.ndarray) -> np.ndarray:
    """Per POSIX record of the part: its whole extent (highest offset + 1) fits in its mean request,
    so a request that does not move forward reads (or writes) the same bytes again: a re-read
    (IO-REDUNDANT-*), not random access."""
    key = "max_byte_read" if kind == "read" else "max_byte_written"
    if key not in facts.layer("posix"):
        return np.zeros(len(n), dtype=bool)
    extent = part(float_values(layer_values(facts, "posix", key), -1.0), rows) + 1.0
    moved = part(layer_counter(facts, "posix", BYTES_COLS[kind]), rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, moved / np.where(n > 0, n, 1.0), 0.0)
    return (extent > 0) & (n > 0) & (extent <= mean)




# ------------------------------------------------------------------------------------------
# IO-SMALL-READS, IO-SMALL-WRITES
# ------------------------------------------------------------------------------------------


@record
class SmallFile:
    """One file's small requests of one direction."""

    fid: int
    name: str
    small: float  # small requests
    total: float  # all requests
    bytes: float
    time: float  # the time of the small requests (all ranks)


@record
class LibrarySmall:
    """The small requests beneath HDF5/PnetCDF files whose application requests are large: the
    library's own (metadata, headers)."""

    small: float
    files: int  # such library files
    example: str  # the one with the most small requests
    requests: LibraryRequests  # its application requests through the library
    libraries: tuple[str, ...]  # "HDF5", "PnetCDF", sorted
    #: some HDF5 file of them goes through MPI-IO (or it is not known): collective metadata applies
    hdf5_mpiio: bool


@record
class Small(Hit):
    kind: str = "read"
    small: float = 0.0  # small requests (file-system level)
    requests: float = 0.0  # all requests
    bytes: float = 0.0  # all bytes moved
    small_bytes_max: float = 0.0  # bytes the small requests move, at most
    exact: bool = True  # the slowest rank's time in them (time_lost) is exact
    files: tuple[SmallFile, ...] = ()  # the costliest (top_subjects of them)
    nfiles: int = 0  # files with small requests
    library: LibrarySmall | None = None
    independent_mpiio: bool = False  # several ranks, and independent MPI-IO calls of this kind
    hdf5: bool = False  # HDF5 files among them (or HDF5 modules not analysed)


Picked = tuple[str, np.ndarray, np.ndarray]  # a layer, rows with small requests, their share of small ones


def _small_rows(facts: Facts, kind: str, limit: int, parts: list[Part]) -> tuple[list[dict[str, np.ndarray]],
                                                                                list[Picked]]:
    """Per part with small requests: the columns IO-SMALL-* reads of its records that have some,
    and which records they are."""
    rows: list[dict[str, np.ndarray]] = []
    picked: list[Picked] = []
    for layer, rows_of in parts:
        table = facts.layer(layer)
        column = _histogram_column(facts, layer)
        small = part(small_ops(table, layer, kind, limit, column), rows_of)
        sel = small > 0
        if not sel.any():
            continue
        total = part(layer_ops(facts, layer, kind), rows_of)
        nbytes = part(layer_counter(facts, layer, BYTES_COLS[kind]), rows_of)
        bound = part(small_bytes_bound(table, layer, kind, limit, column), rows_of)
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(total > 0, small / np.where(total > 0, total, 1.0), 0.0)
        pos = _positions(rows_of, sel)
        picked.append((layer, pos, frac[sel]))
        rows.append(
            {
                "id": layer_values(facts, layer, "id")[pos],
                "name": layer_values(facts, layer, "name")[pos],
                "small": small[sel],
                "total": total[sel],
                "bytes": nbytes[sel],
                "bound": bound[sel],
                "time": layer_counter(facts, layer, TIME_COLS[kind])[pos] * frac[sel],
            }
        )
    return rows, picked


SMALL_AGG = {
    "name": ("name", "first"),
    "small": ("small", "sum"),
    "total": ("total", "sum"),
    "bytes": ("bytes", "sum"),
    "bound": ("bound", "sum"),
    "time": ("time", "sum"),
}


def _small(facts: Facts, cfg: RuleConfig, kind: str) -> Iterator[Small]:
    parts = _request_parts(facts, kind)
    rows, picked = _small_rows(facts, kind, cfg.small_request_bytes, parts)
    if not rows:
        return
    # the cheap test first, on the records' counts before they are grouped by file: added in
    # another order, the files' sum below can differ from this one by rounding alone
    n_total = float(sum(part(layer_ops(facts, lay, kind), p).sum() for lay, p in parts))
    below = 1.0 - 1e-9
    guess = float(sum(r["small"].sum() for r in rows))
    if (guess < below * cfg.small_min_requests or n_total <= 0
            or guess < below * cfg.small_min_share * n_total):
        return
    # the MPI-IO part holds only files without POSIX records, the DAOS part objects without DFS records
    grouped = files_of(rows, SMALL_AGG, unique=all(layer_unique(facts, layer) for layer, _, _ in picked))
    per = _files(grouped)
    n_small = float(per["small"].sum())
    total_bytes = float(sum(part(layer_counter(facts, lay, BYTES_COLS[kind]), p).sum() for lay, p in parts))
    if n_small < cfg.small_min_requests or n_total <= 0 or n_small / n_total < cfg.small_min_share:
        return
    bound_bytes = float(per["bound"].sum())
    # the time at stake, per rank: only for a finding the counts above leave possible
    stakes = [stake_rows(facts, layer, pos, {kind: frac}) for layer, pos, frac in picked]
    per_rank = np.sum([s.per_rank for s in stakes], axis=0) if stakes else np.zeros(1)
    lost = float(per_rank.max()) if len(per_rank) else 0.0
    bytes_share = bound_bytes / total_bytes if total_bytes > 0 else 1.0
    if bytes_share < cfg.small_min_bytes_share and lost < cfg.severity_warning_share * facts.runtime:
        return  # a few small requests (headers, metadata) among large ones, and cheap: nothing to gain
    if not facts.words:  # what follows is the words'
        yield Small(time_lost=lost, kind=kind)
        return
    head = _files(top_rows(grouped, ["time", "small"], cfg.top_subjects))
    yield Small(
        time_lost=lost, kind=kind, small=n_small, requests=n_total, bytes=total_bytes,
        small_bytes_max=bound_bytes, exact=all(s.exact for s in stakes), nfiles=len(per),
        files=tuple(SmallFile(int(r["id"]), str(r["name"]), float(r["small"]), float(r["total"]),
                              float(r["bytes"]), float(r["time"])) for r in head.rows()),
        library=_library_small(facts, cfg, kind, per), independent_mpiio=_independent_mpiio(facts, kind),
        hdf5=_hdf5_files(facts, per, [(layer, pos) for layer, pos, _ in picked]),
    )


def _independent_mpiio(facts: Facts, kind: str) -> bool:
    """Several ranks, and MPI-IO calls of ``kind`` that are not collective (collective calls
    merge the requests of several ranks: nothing to merge in a 1-rank job)."""
    if not len(facts.layer("mpiio")) or facts.nprocs <= 1:
        return False
    indep = float(
        layer_ops(facts, "mpiio", kind).sum() - layer_counter(facts, "mpiio", f"coll_{kind}s").sum()
    )
    return indep > 0


def _library_small(facts: Facts, cfg: RuleConfig, kind: str, per: Table) -> LibrarySmall | None:
    """None when no file of ``per`` with small requests is such a library file (always without
    library records: runs without HDF5 or PnetCDF are judged on their file records alone)."""
    if not any(len(facts.profile.layer(x)) for x in (lib.files for lib in LIBRARY_TABLE)):
        return None
    from pario.diagnosis.libraries import large_request_files

    files = large_request_files(facts, kind, cfg.small_request_bytes, cfg.small_min_share)
    names = [str(n) for n in per["name"]]
    small = np.asarray(per["small"], dtype=np.float64)
    mine = [(n, s) for n, s in zip(names, small.tolist(), strict=True) if n in files and s > 0]
    if not mine:
        return None
    name = max(mine, key=lambda x: x[1])[0]
    h5f = as_table(facts.profile.layer(HDF5.files))
    hdf5_names = {n for n, _ in mine if files[n].library == "HDF5"}
    mpio = float_values(h5f["use_mpiio"], -1.0) if "use_mpiio" in h5f else None
    hdf5_mpiio = bool(hdf5_names) and (mpio is None or any(
        m > 0 for n, m in zip(h5f["name"].astype(str), mpio.tolist(), strict=True) if n in hdf5_names))
    return LibrarySmall(float(sum(s for _, s in mine)), len(mine), name, files[name],
                        tuple(sorted({files[n].library for n, _ in mine})), hdf5_mpiio)


@rule(
    "IO-SMALL-READS",
    title="Many small reads",
    family=FAMILY,
    config=("small_request_bytes", "small_min_requests", "small_min_share", "small_min_bytes_share"),
    words=words.small,
)
def small_reads(facts: Facts, cfg: RuleConfig) -> Iterator[Small]:
    """Many reads (by count) are small, at the file-system level."""
    return _small(facts, cfg, "read")


@rule(
    "IO-SMALL-WRITES",
    title="Many small writes",
    family=FAMILY,
    config=("small_request_bytes", "small_min_requests", "small_min_share", "small_min_bytes_share"),
    words=words.small,
)
def small_writes(facts: Facts, cfg: RuleConfig) -> Iterator[Small]:
    """Many writes (by count) are small, at the file-system level."""
    return _small(facts, cfg, "write")


# ------------------------------------------------------------------------------------------
# IO-MISALIGNED
# ------------------------------------------------------------------------------------------


@record
class MisalignedFile:
    fid: int
    name: str
    misaligned: float  # requests not aligned
    requests: float  # requests of at least one block
    alignment: int  # the file system block
    mean: float  # mean request size


@record
class Misaligned(Hit):
    misaligned: float = 0.0  # requests of at least one block that start off a block boundary
    requests: float = 0.0  # requests of at least one block
    alignments: tuple[int, ...] = ()  # the files' blocks, smallest first
    stripes: Mapping[int, int] = field(default_factory=dict)  # stripe size by id, of the files on Lustre
    exact: bool = True  # the slowest rank's time in them (time_lost) is exact
    files: tuple[MisalignedFile, ...] = ()  # the costliest (top_subjects of them)
    nfiles: int = 0
    #: the costliest Lustre file's recommended layout, where it changes the stripe size (None: none)
    layout: Layout | None = None


def _misaligned_files(facts: Facts, pick: np.ndarray, cols: dict[str, np.ndarray]) -> Table:
    """The POSIX records at ``pick`` grouped by file (``cols``: per record, its misaligned
    requests, requests, block, mean request and time in the misaligned ones)."""
    return per_file(
        layer_values(facts, "posix", "id")[pick],
        {"name": layer_values(facts, "posix", "name")[pick], **{k: v[pick] for k, v in cols.items()}},
        {
            "name": ("name", "first"),
            "bad": ("_bad", "sum"),
            "reqs": ("_reqs", "sum"),
            "align": ("_align", "max"),
            "mean": ("_mean", "max"),
            "time": ("_time", "sum"),
        },
        unique=layer_unique(facts, "posix"),
    )


@rule(
    "IO-MISALIGNED",
    title="Requests not aligned to the file system block or stripe",
    family=FAMILY,
    config=("misaligned_min_share", "misaligned_min_requests"),
    words=words.misaligned,
)
def misaligned(facts: Facts, cfg: RuleConfig) -> Iterator[Misaligned]:
    """Requests of at least one block start off the file system's block (Lustre: stripe) boundaries."""
    if not len(facts.layer("posix")):
        return

    def c(name: str) -> np.ndarray:
        return layer_counter(facts, "posix", name)

    align = c("file_alignment")
    reqs = layer_ops(facts, "posix", "read") + layer_ops(facts, "posix", "write")
    nbytes = c("bytes_read") + c("bytes_written")
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(reqs > 0, nbytes / np.where(reqs > 0, reqs, 1.0), 0.0)
    # Requests smaller than a block cannot be aligned; IO-SMALL-* covers them.
    sel = (align > 0) & (reqs > 0) & (mean >= align)
    bad = np.minimum(c("file_not_aligned"), reqs)
    n_bad, n_all = float(bad[sel].sum()), float(reqs[sel].sum())
    # a finding needs at least one misaligned request, whatever the thresholds
    if n_bad < max(cfg.misaligned_min_requests, 1) or n_all <= 0 or n_bad / n_all < cfg.misaligned_min_share:
        return
    frac = np.where(reqs > 0, bad / np.where(reqs > 0, reqs, 1.0), 0.0)
    pick = sel & (bad > 0)
    st = stake_rows(facts, "posix", pick, {"read": frac[pick], "write": frac[pick]})
    time = (c("read_time") + c("write_time")) * frac
    grouped = _misaligned_files(facts, pick, {"_bad": bad, "_reqs": reqs, "_align": align, "_mean": mean,
                                              "_time": time})
    per = _files(grouped)
    head = _files(top_rows(grouped, "time", cfg.top_subjects))
    yield Misaligned(
        time_lost=st.max, misaligned=n_bad, requests=n_all,
        alignments=tuple(sorted({int(a) for a in per["align"]})), stripes=_stripes_of(facts, per),
        exact=st.exact, nfiles=len(per),
        files=tuple(MisalignedFile(int(r["id"]), str(r["name"]), float(r["bad"]), float(r["reqs"]),
                                   int(r["align"]), float(r["mean"])) for r in head.rows()),
        layout=_misaligned_layout(facts, cfg, per),
    )


def _misaligned_layout(facts: Facts, cfg: RuleConfig, per: Table) -> Layout | None:
    """The recommended layout of the costliest Lustre file, when it changes the stripe size (the
    same as LUSTRE-STRIPE-SIZE's); None when no stripe size would fit the requests."""
    for fid in per[sort_order(per, "time")]["id"].tolist():
        layout = layout_of(facts, int(fid), cfg)
        if layout is not None and layout.changes_size:
            return layout
    return None


# ------------------------------------------------------------------------------------------
# IO-RANDOM-ACCESS
# ------------------------------------------------------------------------------------------


@record
class RandomFile:
    fid: int
    name: str
    backward: float  # requests going backwards
    requests: float
    time: float  # the time of the backward ones (all ranks)


@record
class RandomAccess(Hit):
    kind: str = "read"  # the direction with the most backward requests
    backward: float = 0.0  # requests at a lower offset than the previous one
    requests: float = 0.0
    exact: bool = True  # the slowest rank's time in them (time_lost) is exact
    files: tuple[RandomFile, ...] = ()  # the costliest (top_subjects of them)
    nfiles: int = 0
    mpiio: bool = False  # some of the files are accessed through MPI-IO


def _backward(facts: Facts, cfg: RuleConfig) -> tuple[str, float, float, np.ndarray, np.ndarray,
                                                      np.ndarray | None] | None:
    """The direction with the most backward requests, if enough: it, their count, all requests,
    and per POSIX record of the part its backward and all requests, and which rows they are."""
    best = None
    for kind in ("read", "write"):
        parts = dict(_fs_parts(facts, kind))
        if "posix" not in parts or f"seq_{kind}s" not in facts.layer("posix"):
            continue  # without the sequential counter nothing can be said
        rows = parts["posix"]
        n = part(layer_counter(facts, "posix", f"{kind}s"), rows)
        seq = np.minimum(part(layer_counter(facts, "posix", f"seq_{kind}s"), rows), n)
        # the first request of each rank's sequence is never counted as sequential
        first = np.minimum(part(layer_nranks(facts, "posix"), rows), n)
        back = np.where(_rereads(facts, kind, rows, n), 0.0, np.clip(n - seq - first, 0.0, None))
        n_back, n_all = float(back.sum()), float(n.sum())
        # a finding needs at least one backward request, whatever the thresholds
        if n_back >= max(cfg.random_min_requests, 1) and n_all > 0 and n_back / n_all >= cfg.random_min_share:
            if best is None or n_back > best[1]:
                best = (kind, n_back, n_all, back, n, rows)
    return best


@rule(
    "IO-RANDOM-ACCESS",
    title="Random rather than sequential access",
    family=FAMILY,
    config=("random_min_share", "random_min_requests"),
    words=words.random_access,
)
def random_access(facts: Facts, cfg: RuleConfig) -> Iterator[RandomAccess]:
    """Many requests go backwards in the file instead of forwards."""
    best = _backward(facts, cfg)
    if best is None:
        return
    kind, n_back, n_all, back, n, rows = best
    frac = np.where(n > 0, back / np.where(n > 0, n, 1.0), 0.0)
    pick = back > 0
    pos = _positions(rows, pick)
    st = stake_rows(facts, "posix", pos, {kind: frac[pick]})
    grouped = per_file(
        layer_values(facts, "posix", "id")[pos],
        {
            "name": layer_values(facts, "posix", "name")[pos],
            "_back": back[pick],
            "_n": n[pick],
            "_t": layer_counter(facts, "posix", TIME_COLS[kind])[pos] * frac[pick],
        },
        {"name": ("name", "first"), "back": ("_back", "sum"), "n": ("_n", "sum"), "time": ("_t", "sum")},
        unique=layer_unique(facts, "posix"),
    )
    per = _files(top_rows(grouped, "time", cfg.top_subjects))
    yield RandomAccess(
        time_lost=st.max, kind=kind, backward=n_back, requests=n_all, exact=st.exact, nfiles=len(grouped),
        files=tuple(RandomFile(int(r["id"]), str(r["name"]), float(r["back"]), float(r["n"]),
                               float(r["time"])) for r in per.rows()),
        mpiio=_through_mpiio(facts, layer_values(facts, "posix", "id")[pos]),
    )


def _through_mpiio(facts: Facts, ids: np.ndarray) -> bool:
    """Some of the files ``ids`` are accessed through MPI-IO (never for a program without MPI-IO)."""
    mpiio = facts.layer("mpiio")
    return bool(len(mpiio)) and bool(isin(ids, layer_ids(facts, "mpiio")).any())


# ------------------------------------------------------------------------------------------
# IO-REDUNDANT-READS, IO-REDUNDANT-WRITES
# ------------------------------------------------------------------------------------------


@record
class RedundantFile:
    fid: int
    name: str
    bytes: float  # bytes moved
    extent: float  # distinct bytes (highest offset + 1)
    factor: float  # times each byte is moved
    ranks: float
    #: from the trace (reads only; None: no trace of the file's reads): whose bytes are re-read
    sharing: ReadSharing | None = None
    #: an HDF5 file the program writes with H5Dwrite and never reads with H5Dread: HDF5 itself
    #: reads it, inside the writes (read-modify-write of elements the writes do not cover whole)
    hdf5_self_reads: bool = False


@record
class Redundant(Hit):
    kind: str = "read"
    extra: float = 0.0  # bytes moved beyond each file's extent
    files: tuple[RedundantFile, ...] = ()  # the most repeated bytes first (top_subjects of them, at least 1)
    nfiles: int = 0
    shared: int = 0  # files of several ranks
    single: bool = False  # some file is a single rank's
    factor: float = 0.0  # bytes moved / extent, over the files


def _redundant_rows(facts: Facts, kind: str, extent: tuple[np.ndarray, np.ndarray]) -> tuple[
        list[dict[str, np.ndarray]], list[tuple[str, np.ndarray | None, int]]]:
    """Per outermost layer with records: the columns IO-REDUNDANT-* reads, and the layer, its rows
    (None: all) and how many."""
    parts: list[tuple[str, np.ndarray | None, int]] = []
    rows: list[dict[str, np.ndarray]] = []
    for layer, table in facts.outermost().items():
        if not len(table):
            continue
        keep = facts.outer_rows(layer)
        ids = part(layer_values(facts, layer, "id"), keep)
        parts.append((layer, keep, len(ids)))
        rows.append(
            {
                "id": ids,
                "name": part(layer_values(facts, layer, "name"), keep),
                "bytes": part(layer_counter(facts, layer, BYTES_COLS[kind]), keep),
                "extent": _lookup(*extent, ids),
                "nranks": part(layer_nranks(facts, layer), keep),
                "time": part(layer_counter(facts, layer, TIME_COLS[kind]), keep),
            }
        )
    return rows, parts


REDUNDANT_AGG = {
    "name": ("name", "first"),
    "bytes": ("bytes", "sum"),
    "extent": ("extent", "max"),
    "ranks": ("nranks", "sum"),
    "time": ("time", "sum"),
}


def _moved_again(nbytes: np.ndarray, extent: np.ndarray, cfg: RuleConfig) -> np.ndarray:
    """Per file: it moved at least ``redundant_min_factor`` times the bytes it spans."""
    return (extent > 0) & (nbytes >= cfg.redundant_min_factor * extent)


def _redundant(facts: Facts, cfg: RuleConfig, kind: str) -> Iterator[Redundant]:
    extent = _extent_of(facts, kind)
    if extent is None:
        return
    rows, parts = _redundant_rows(facts, kind, extent)
    if not rows:
        return
    unique = outer_unique(facts)
    if unique and not any(_moved_again(r["bytes"], r["extent"], cfg).any() for r in rows):
        return  # one record per file: the test below on each record, without grouping them
    grouped = files_of(rows, REDUNDANT_AGG, unique=unique)
    nbytes, span = grouped["bytes"], grouped["extent"]
    hit = _moved_again(nbytes, span, cfg)
    if not hit.any():
        return
    chosen = grouped[hit].assign(extra=(nbytes - span)[hit], factor=(nbytes / np.where(hit, span, 1.0))[hit])
    per = _files(chosen)
    extra = float(per["extra"].sum())
    # few bytes re-read in many small calls (a flag polled a million times) cost time all the same;
    # the files' time over all ranks bounds the slowest rank's, so most stay without a stake
    cheap = cfg.severity_warning_share * facts.runtime
    if extra < cfg.redundant_min_bytes and float(per["time"].sum()) < cheap:
        return
    lost = _redundant_stake(facts, kind, rows, parts, hit, per)
    if extra < cfg.redundant_min_bytes and lost < cheap:
        return
    head = _files(top_rows(chosen, "extra", max(cfg.top_subjects, 1)))
    across = per["ranks"] >= 2
    # imported here: the trace rules register after these (the registry's order is the rules' order)
    from pario.diagnosis.trace_access import read_sharing

    self_read = _hdf5_self_read_files(facts)
    yield Redundant(
        time_lost=lost, kind=kind, extra=extra, nfiles=len(per), shared=int(across.sum()),
        single=bool((~across).any()), factor=float(np.nansum(per["bytes"])) / float(np.nansum(per["extent"])),
        files=tuple(RedundantFile(int(r["id"]), str(r["name"]), float(r["bytes"]), float(r["extent"]),
                                  float(r["factor"]), float(r["ranks"]),
                                  sharing=read_sharing(facts, cfg, int(r["id"])) if kind == "read" else None,
                                  hdf5_self_reads=int(r["id"]) in self_read)
                    for r in head.rows()),
    )


def _hdf5_self_read_files(facts: Facts) -> set[int]:
    """The ids of HDF5 files whose datasets the program writes (H5Dwrite) and never reads
    (no H5Dread) while the file is read beneath: those reads are HDF5's own."""
    sums = library_file_sums(facts, HDF5.data, ("reads", "writes"))
    return {fid for fid, v in sums.items() if v["reads"] == 0 and v["writes"] > 0}


def _redundant_stake(facts: Facts, kind: str, rows: list[dict[str, np.ndarray]],
                     parts: list[tuple[str, np.ndarray | None, int]], hit: np.ndarray, per: Table) -> float:
    """The slowest rank's time on the files of ``per`` (picked by ``hit`` among all files) x the
    share of their bytes moved beyond the extent."""
    all_ids = np.concatenate([r["id"] for r in rows])
    share_extra = per["extra"] / per["bytes"]
    if len(hit) == len(all_ids):  # one record per file: the files are the records
        sel_all, frac_all = hit, share_extra
    else:
        sel_all = isin(all_ids, per["id"])
        order = np.argsort(per["id"])
        frac_all = _lookup(per["id"][order], share_extra[order], all_ids[sel_all])
    stakes = []
    start = done = 0
    for layer, keep, count in parts:
        sel = sel_all[start : start + count]
        start += count
        if not sel.any():
            continue
        k = int(sel.sum())
        stakes.append(stake_rows(facts, layer, _positions(keep, sel), {kind: frac_all[done : done + k]}))
        done += k
    per_rank = np.sum([s.per_rank for s in stakes], axis=0)
    return float(per_rank.max())


@rule(
    "IO-REDUNDANT-READS",
    title="The same bytes read repeatedly",
    family=FAMILY,
    config=("redundant_min_factor", "redundant_min_bytes"),
    words=words.redundant,
)
def redundant_reads(facts: Facts, cfg: RuleConfig) -> Iterator[Redundant]:
    """Files are read several times over (by one rank or by many)."""
    return _redundant(facts, cfg, "read")


@rule(
    "IO-REDUNDANT-WRITES",
    title="The same bytes written repeatedly",
    family=FAMILY,
    config=("redundant_min_factor", "redundant_min_bytes"),
    words=words.redundant,
)
def redundant_writes(facts: Facts, cfg: RuleConfig) -> Iterator[Redundant]:
    """Files are written several times over."""
    return _redundant(facts, cfg, "write")


# ------------------------------------------------------------------------------------------
# IO-LATENCY-BOUND
# ------------------------------------------------------------------------------------------


@record
class SlowFile:
    """A file that moves data at a crawl while taking time (in one layer)."""

    fid: int
    name: str
    layer: str
    bytes: float
    time: float  # I/O time, all ranks
    max_rank: float  # the longest time one rank spends on it
    rate: float  # bytes / max_rank
    ops: float  # read and write calls
    flushes: float  # flush and sync calls
    meta_time: float  # all ranks
    rank: int  # the rank of a file of one rank (-1: shared)


@record
class LatencyBound(Hit):
    files: tuple[SlowFile, ...] = ()  # the costliest first (top_subjects of them, at least 1)
    nfiles: int = 0
    bytes: float = 0.0  # of all of them
    time: float = 0.0
    flushes: float = 0.0
    meta_time: float = 0.0


LATENCY_AGG = {
    "name": ("name", "first"),
    "bytes": ("bytes", "sum"),
    "time": ("time", "sum"),
    "max_rank": ("max_rank", "max"),
    "ops": ("ops", "sum"),
    "meta_ops": ("meta_ops", "sum"),
    "meta_time": ("meta_time", "sum"),
    "flushes": ("flushes", "sum"),
    "rank": ("rank", "max"),
}


def _layer_files(facts: Facts, layer: str, floor: float) -> Table | None:
    """The outermost records of ``layer`` grouped by file, with the columns IO-LATENCY-BOUND reads;
    None when no record's slowest rank reaches ``floor`` (a file's is the largest of its records')."""
    keep = facts.outer_rows(layer)

    def c(name: str) -> np.ndarray:
        return part(layer_counter(facts, layer, name), keep)

    t = c("read_time") + c("write_time") + c("meta_time")
    rank = part(layer_values(facts, layer, "rank"), keep).astype(np.int64)
    slow = c("slowest_rank_time")
    per_rank_max = np.where(
        rank >= 0,
        t,
        np.where(slow > 0, slow, t / np.maximum(part(layer_nranks(facts, layer), keep), 1.0)),
    )
    if not (per_rank_max >= floor).any():
        return None
    data = {
        "name": part(layer_values(facts, layer, "name"), keep),
        "bytes": c("bytes_read") + c("bytes_written"),
        "time": t,
        "max_rank": per_rank_max,
        "ops": part(layer_ops(facts, layer, "read"), keep) + part(layer_ops(facts, layer, "write"), keep),
        "meta_ops": part(layer_ops(facts, layer, "meta"), keep),
        "meta_time": c("meta_time"),
        "flushes": c("flushes") + c("fsyncs") + c("fdsyncs") + c("syncs"),
        "rank": np.where(rank >= 0, rank, -1),
    }
    return _files(per_file(part(layer_values(facts, layer, "id"), keep), data, LATENCY_AGG,
                           unique=layer_unique(facts, layer)))


@rule(
    "IO-LATENCY-BOUND",
    title="Files where the time goes into per-call latency, not data",
    family=FAMILY,
    config=("latency_max_rate", "min_time_lost_share"),
    words=words.latency_bound,
)
def latency_bound(facts: Facts, cfg: RuleConfig) -> Iterator[LatencyBound]:
    """A file takes a noticeable share of the run while moving data at a crawl."""
    floor = cfg.min_time_lost_share * facts.runtime
    hits: list[Table] = []
    # grouped by (layer, id): the groups of each layer in turn
    for layer, records in facts.outermost().items():
        if not len(records):
            continue
        per = _layer_files(facts, layer, floor)
        if per is None:
            continue
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # a corrupt log's tiny times
            # the rate the run sees: bytes over the longest time one rank spends on the file
            rate = per["bytes"] / np.where(per["max_rank"] > 0, per["max_rank"], np.nan)
        # files whose time is mostly metadata calls are IFACE-METADATA-HEAVY's
        data_bound = per["meta_time"] < 0.5 * per["time"]
        sel = (per["bytes"] > 0) & (per["max_rank"] >= floor) & (rate < cfg.latency_max_rate) & data_bound
        if sel.any():
            hits.append(per.assign(rate=rate, layer=np.full(len(per), layer, dtype=object))[sel])
    if not hits:
        return
    hit = Table.concat(hits)
    if not facts.words:  # what follows is the words'
        yield LatencyBound(time_lost=float(hit["max_rank"].max()))
        return
    hit = hit[sort_order(hit, "max_rank")]
    yield LatencyBound(
        time_lost=float(hit["max_rank"].max()), nfiles=len(hit), bytes=float(hit["bytes"].sum()),
        time=float(hit["time"].sum()), flushes=float(hit["flushes"].sum()),
        meta_time=float(hit["meta_time"].sum()),
        files=tuple(
            SlowFile(int(r["id"]), str(r["name"]), str(r["layer"]), float(r["bytes"]), float(r["time"]),
                     float(r["max_rank"]), float(r["rate"]), float(r["ops"]), float(r["flushes"]),
                     float(r["meta_time"]), int(r["rank"]))
            for r in hit.head(max(cfg.top_subjects, 1)).rows()
        ),
    )
