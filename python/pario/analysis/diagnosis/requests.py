"""Request-shape rules: small, misaligned, random and repeated requests; latency-bound files.

Requests are judged where they reach the file system: the POSIX records
(including the calls MPI-IO makes, so collective I/O that merges small
requests is credited for it), and MPI-IO records of files without POSIX
records.  STDIO is buffered by the C library, so its request sizes say
little about the file system; STDIO files are judged by rate instead
(IO-LATENCY-BOUND) and by volume (IFACE-STDIO-BULK).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import pario.analysis.diagnosis._fmt as fmt
from pario.analysis.diagnosis._frames import isin, per_file, sort_order
from pario.analysis.diagnosis._frames import top as top_rows
from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.diagnosis.facts import (
    BYTES_COLS,
    TIME_COLS,
    Facts,
    counter,
    hex_id,
    layer_counter,
    layer_ids,
    layer_nranks,
    layer_ops,
    layer_unique,
    layer_values,
    name_suffix_rows,
    outer_unique,
    small_bytes_bound,
    small_ops,
    stake_rows,
)
from pario.analysis.diagnosis.findings import Finding, Metric, Recommendation, Subject
from pario.analysis.diagnosis.layout import layout_of
from pario.analysis.diagnosis.registry import finding, rule
from pario.analysis.rankio import float_values
from pario.table import Table, as_table, group_codes, group_reduce

FAMILY = "requests"
FIX_RANDOM = {
    "read": "read the whole region in large blocks and pick the pieces in memory",
    "write": "assemble them in memory and write whole regions",
}
LAYER_NAMES = {"mpiio": "MPI-IO"}  # the others: upper case
UPPER_SMALL = (
    "upper bound: the slowest rank's time in the small {kind}s (each file's {kind} time x its share of "
    "small {kind}s); larger requests would save part of it"
)


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
    frame = facts.layer(layer)
    mine: dict[str, np.ndarray] = {}

    def get(name: str) -> np.ndarray:
        if not name.startswith("size_"):
            return layer_counter(facts, layer, name)
        if name not in mine:
            mine[name] = counter(frame, name)
        return mine[name]

    return get


def _part(v: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    return v if rows is None else v[rows]


def _files(grouped: Any) -> Table:
    """A result of :func:`per_file` or :func:`top_rows` (grouped by file id) as a Table whose
    "id" column is the file id."""
    per = as_table(grouped)
    if "id" not in per:  # ids 0..n-1 look like row positions to as_table, which drops them
        per = Table({"id": np.arange(len(per)), **dict(per.items())}, length=len(per))
    return per


def _file_subject(r: dict[str, Any], metrics: tuple[Metric, ...]) -> Subject:
    return Subject("file", str(r["name"]), metrics, hex_id(r["id"]))


def _small(facts: Facts, cfg: RuleConfig, kind: str, rule_id: str) -> Iterator[Finding]:
    limit = cfg.small_request_bytes
    rows: list[dict[str, np.ndarray]] = []
    picked: list[tuple[str, np.ndarray, np.ndarray]] = []  # layer, rows with small requests, their share
    parts = _fs_parts(facts, kind)
    for layer, part in parts:
        frame = facts.layer(layer)
        column = _histogram_column(facts, layer)
        total = _part(layer_ops(facts, layer, kind), part)
        small = _part(small_ops(frame, layer, kind, limit, column), part)
        nbytes = _part(layer_counter(facts, layer, BYTES_COLS[kind]), part)
        bound = _part(small_bytes_bound(frame, layer, kind, limit, column), part)
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(total > 0, small / np.where(total > 0, total, 1.0), 0.0)
        sel = small > 0
        if not sel.any():
            continue
        pos = _positions(part, sel)
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
    if not rows:
        return
    data = {k: np.concatenate([r[k] for r in rows]) for k in rows[0] if k != "id"}
    grouped = per_file(
        np.concatenate([r["id"] for r in rows]),
        data,
        {
            "name": ("name", "first"),
            "small": ("small", "sum"),
            "total": ("total", "sum"),
            "bytes": ("bytes", "sum"),
            "bound": ("bound", "sum"),
            "time": ("time", "sum"),
        },
        # the MPI-IO part holds only files without POSIX records
        unique=all(layer_unique(facts, layer) for layer, _, _ in picked),
    )
    per = _files(grouped)
    n_small = float(per["small"].sum())
    n_total = float(sum(_part(layer_ops(facts, lay, kind), p).sum() for lay, p in parts))
    total_bytes = float(sum(_part(layer_counter(facts, lay, BYTES_COLS[kind]), p).sum() for lay, p in parts))
    if n_small < cfg.small_min_requests or n_total <= 0 or n_small / n_total < cfg.small_min_share:
        return
    share = n_small / n_total
    bound_bytes = float(per["bound"].sum())
    # the time at stake, per rank: only for a finding the counts above leave possible
    stakes = [stake_rows(facts, layer, pos, {kind: frac}) for layer, pos, frac in picked]
    per_rank = np.sum([s.per_rank for s in stakes], axis=0) if stakes else np.zeros(1)
    lost = float(per_rank.max()) if len(per_rank) else 0.0
    bytes_share = bound_bytes / total_bytes if total_bytes > 0 else 1.0
    if bytes_share < cfg.small_min_bytes_share and lost < cfg.severity_warning_share * facts.runtime:
        return  # a few small requests (headers, metadata) among large ones, and cheap: nothing to gain
    exact = all(s.exact for s in stakes)
    mean_size = total_bytes / n_total if n_total else 0.0
    lib = _library_small(facts, cfg, kind, per)
    head = _files(top_rows(grouped, ["time", "small"], cfg.top_subjects))
    subjects = [
        _file_subject(
            r,
            (
                Metric(f"small_{kind}s", f"{kind}s {cfg.small_label()}", int(r["small"]), "count"),
                Metric(
                    "share_of_requests",
                    f"share of the file's {kind}s",
                    float(r["small"] / r["total"]) if r["total"] else 0.0,
                    "share",
                ),
                Metric(
                    "mean_request",
                    f"mean {kind} size",
                    float(r["bytes"] / r["total"]) if r["total"] else 0.0,
                    "B",
                ),
                Metric("time", f"time in small {kind}s (all ranks)", float(r["time"]), "s"),
            ),
        )
        for r in head.rows()
    ]
    verb = "reads" if kind == "read" else "writes"
    lost_share = lost / facts.runtime if facts.runtime > 0 else 0.0
    statement = (
        f"{fmt.pct(share)} of the {verb} ({fmt.count(n_small)} of {fmt.count(n_total)}) are "
        f"{cfg.small_label()}; the mean {kind} is {fmt.nbytes(mean_size)}."
    )
    if lost_share < cfg.severity_warning_share:
        statement += (
            f" They cost at most {fmt.seconds(lost)} on the slowest rank ({fmt.pct(lost_share)} of the run): "
            "harmless at this size, but the cost grows with the number of requests."
        )
    else:
        statement += (
            f" The slowest rank spends up to {fmt.seconds(lost)} in them ({fmt.pct(lost_share)} of the run)."
        )
    if lib is not None:
        statement += " " + lib.statement
    evidence = [
        Metric(f"small_{kind}s", f"{verb} {cfg.small_label()}", int(n_small), "count"),
        Metric(f"all_{kind}s", f"all {verb} (file-system level)", int(n_total), "count"),
        Metric("share_of_requests", f"small {verb} / all {verb}", share, "share"),
        Metric("small_bytes_max", f"bytes moved by small {verb} (at most)", bound_bytes, "B"),
        Metric("share_of_bytes_max", "share of the bytes (at most)", bytes_share, "share"),
        Metric("mean_request", f"mean {kind} size", mean_size, "B"),
        Metric("time_at_stake", f"slowest rank's time in small {verb}", lost, "s", approximate=not exact),
    ]
    if lib is not None:
        evidence.append(Metric(f"library_small_{kind}s", f"small {verb} beneath {lib.what}", int(lib.small),
                               "count"))
    recs = [] if lib is not None and lib.small >= n_small else [
        Recommendation(
            "code",
            (
                f"Aggregate small {verb} in memory and issue requests of at least 1 MiB (on Lustre: a "
                "multiple of the stripe size)."
                if kind == "write"
                else "Read larger blocks (at least 1 MiB) once and serve the small accesses from memory."
            ),
            (
                "/* instead of one write per item: */\nmemcpy(buf + used, item, n); used += n;\nif (used >= "
                "(1 << 20)) { write(fd, buf, used); used = 0; }"
            )
            if kind == "write"
            else "",
        )
    ]
    mpiio = facts.layer("mpiio")
    # collective calls merge the requests of several ranks: nothing to merge in a 1-rank job
    if len(mpiio) and facts.nprocs > 1 and (lib is None or lib.small < n_small):
        indep = float(
            layer_ops(facts, "mpiio", kind).sum() - layer_counter(facts, "mpiio", f"coll_{kind}s").sum()
        )
        if indep > 0:
            recs.append(
                Recommendation(
                    "code",
                    (
                        "The files are accessed through MPI-IO: use the collective calls "
                        f"(MPI_File_{kind}_all / MPI_File_{kind}_at_all) so that the MPI-IO layer merges the "
                        "ranks' small requests into large contiguous ones (two-phase I/O)."
                    ),
                    f"MPI_File_{kind}_at_all(fh, offset, buf, count, MPI_BYTE, MPI_STATUS_IGNORE);",
                )
            )
    if lib is not None:
        recs.extend(lib.recommendations)
    if _hdf5_files(facts, per, [(layer, pos) for layer, pos, _ in picked]):
        recs.append(
            Recommendation(
                "code",
                (
                    "HDF5: small requests usually come from metadata and unchunked small datasets; enlarge "
                    "the metadata block and align objects, and with parallel HDF5 make metadata operations "
                    "collective."
                ),
                "H5Pset_meta_block_size(fapl, 1 << 20);\nH5Pset_alignment(fapl, 1 << 16, 1 << "
                "20);\nH5Pset_all_coll_metadata_ops(fapl, 1); H5Pset_coll_metadata_write(fapl, 1);",
            )
        )
    yield finding(
        rule_id,
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=lost,
        time_basis=UPPER_SMALL.format(kind=kind),
        subjects=subjects,
        subjects_total=len(per),
    )


@dataclass(frozen=True)
class _LibrarySmall:
    """The small requests of IO-SMALL-* beneath HDF5/PnetCDF files whose application requests are
    large: the library's own (metadata, headers)."""

    small: float
    what: str
    statement: str
    recommendations: tuple[Recommendation, ...]


def _library_small(facts: Facts, cfg: RuleConfig, kind: str, per: Table) -> _LibrarySmall | None:
    """None when no file of ``per`` with small requests is such a library file (always without
    library records: runs without HDF5 or PnetCDF are judged on their file records alone)."""
    if not any(len(facts.profile.layer(x)) for x in ("h5f", "pnetcdf_file")):
        return None
    from pario.analysis.diagnosis.libraries import large_request_files

    files = large_request_files(facts, kind, cfg.small_request_bytes, cfg.small_min_share)
    names = [str(n) for n in per["name"]]
    small = np.asarray(per["small"], dtype=np.float64)
    mine = [(n, s) for n, s in zip(names, small.tolist(), strict=True) if n in files and s > 0]
    if not mine:
        return None
    n_small = float(sum(s for _, s in mine))
    name = max(mine, key=lambda x: x[1])[0]
    req = files[name]
    libs = sorted({files[n].library for n, _ in mine})
    lib_text = " and ".join(libs)
    call = {"HDF5": f"H5D{kind}", "PnetCDF": "ncmpi_put_*" if kind == "write" else "ncmpi_get_*"}[req.library]
    own = {"HDF5": f"HDF5's own metadata {kind}s (superblock, object headers, heaps, B-trees)",
           "PnetCDF": f"PnetCDF's own header {kind}s (dimensions, attributes, variables, record count)"}
    what = f"{lib_text} file{'s' if len(mine) > 1 else ''} with large application requests"
    statement = (
        f"{fmt.count(n_small)} of the small {kind}s are beneath {len(mine)} {lib_text} "
        f"file{'s' if len(mine) > 1 else ''} (e.g. {name}) whose application {kind}s through the library are "
        f"large ({fmt.count(req.calls)} {call} calls, {fmt.nbytes(req.nbytes / req.calls)} on average): "
        f"they are {' and '.join(own[x] for x in libs)}, not the application's data."
    )
    recs: list[Recommendation] = []
    h5f = as_table(facts.profile.layer("h5f"))
    hdf5_names = {n for n, _ in mine if files[n].library == "HDF5"}
    mpio = float_values(h5f["use_mpiio"], -1.0) if "use_mpiio" in h5f else None
    if hdf5_names and (mpio is None or any(
            m > 0 for n, m in zip(h5f["name"].astype(str), mpio.tolist(), strict=True) if n in hdf5_names)):
        key, call_c = (("hdf5.coll_metadata_write", "H5Pset_coll_metadata_write") if kind == "write"
                       else ("hdf5.coll_metadata_ops", "H5Pset_all_coll_metadata_ops"))
        recs.append(Recommendation(
            "hint",
            "Parallel HDF5 "
            + ("writes its metadata from each rank in small independent writes; collective metadata writes "
               "gather them into collective MPI-IO calls" if kind == "write"
               else "reads its metadata from every rank; collective metadata reads let one rank read and "
               "broadcast")
            + f" (PARIO_HINTS, without recompiling; in the program: {call_c}(fapl, 1)):",
            f"{key} true",
        ))
    if "PnetCDF" in libs:
        recs.append(Recommendation(
            "code",
            "PnetCDF's header is written by rank 0 at ncmpi_enddef and ncmpi_close (and read at "
            "ncmpi_open): define every dimension, variable and attribute before one ncmpi_enddef, and "
            "avoid ncmpi_redef and ncmpi_sync in loops.",
        ))
    return _LibrarySmall(n_small, what, statement, tuple(recs))


@rule(
    "IO-SMALL-READS",
    title="Many small reads",
    family=FAMILY,
    config=("small_request_bytes", "small_min_requests", "small_min_share", "small_min_bytes_share"),
)
def small_reads(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Many reads (by count) are small, at the file-system level."""
    return _small(facts, cfg, "read", "IO-SMALL-READS")


@rule(
    "IO-SMALL-WRITES",
    title="Many small writes",
    family=FAMILY,
    config=("small_request_bytes", "small_min_requests", "small_min_share", "small_min_bytes_share"),
)
def small_writes(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Many writes (by count) are small, at the file-system level."""
    return _small(facts, cfg, "write", "IO-SMALL-WRITES")


@rule(
    "IO-MISALIGNED",
    title="Requests not aligned to the file system block or stripe",
    family=FAMILY,
    config=("misaligned_min_share", "misaligned_min_requests"),
)
def misaligned(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
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
    if n_bad < cfg.misaligned_min_requests or n_all <= 0 or n_bad / n_all < cfg.misaligned_min_share:
        return
    frac = np.where(reqs > 0, bad / np.where(reqs > 0, reqs, 1.0), 0.0)
    pick = sel & (bad > 0)
    st = stake_rows(facts, "posix", pick, {"read": frac[pick], "write": frac[pick]})
    grouped = per_file(
        layer_values(facts, "posix", "id")[pick],
        {
            "name": layer_values(facts, "posix", "name")[pick],
            "_bad": bad[pick],
            "_reqs": reqs[pick],
            "_align": align[pick],
            "_mean": mean[pick],
            "_time": (c("read_time") + c("write_time"))[pick] * frac[pick],
        },
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
    per = _files(grouped)
    aligns = sorted({int(a) for a in per["align"]})
    stripes = _stripes_of(facts, per)
    subjects = [
        _file_subject(
            r,
            (
                Metric("misaligned", "requests not aligned", int(r["bad"]), "count"),
                Metric(
                    "share",
                    "share of the file's requests",
                    float(r["bad"] / r["reqs"]) if r["reqs"] else 0.0,
                    "share",
                ),
                Metric("alignment", "alignment (file system block)", int(r["align"]), "B"),
                *(
                    [Metric("stripe_size", "stripe size", stripes[int(r["id"])], "B")]
                    if int(r["id"]) in stripes
                    else []
                ),
                Metric("mean_request", "mean request size", float(r["mean"]), "B"),
            ),
        )
        for r in _files(top_rows(grouped, "time", cfg.top_subjects)).rows()
    ]
    a_text = " or ".join(fmt.nbytes(a) for a in aligns[:3])
    statement = (
        f"{fmt.pct(n_bad / n_all)} of the requests of at least one block ({fmt.count(n_bad)} of "
        f"{fmt.count(n_all)}) start off a {a_text} boundary, so each touches one more block than it needs "
        "to, and neighbouring requests share blocks."
    )
    # on Lustre the stripe is what ranks contend for: a request off a block boundary is off the
    # stripe's too (a stripe size is a multiple of the block), so these are also misaligned there
    unit = max(stripes.values()) if stripes else aligns[0]
    if stripes:
        s_text = " or ".join(fmt.nbytes(v) for v in sorted(set(stripes.values()))[:3])
        which = "The files are" if len(stripes) == len(per) else f"{len(stripes)} of the files are"
        statement += (
            f" {which} on Lustre, where the {s_text} stripe is the unit that matters: these requests "
            "start off a stripe boundary too, so they straddle stripes that neighbouring ranks write."
        )
    evidence = [
        Metric("misaligned", "requests not aligned", int(n_bad), "count"),
        Metric("requests", "requests of at least one block", int(n_all), "count"),
        Metric("share", "misaligned share", n_bad / n_all, "share"),
        Metric(
            "alignment",
            "file system block (POSIX_FILE_ALIGNMENT)",
            aligns[0] if len(aligns) == 1 else ", ".join(fmt.nbytes(a) for a in aligns),
            "B" if len(aligns) == 1 else "text",
        ),
        *([Metric("stripe_size", "Lustre stripe size", unit, "B")] if stripes else []),
        Metric(
            "time_at_stake",
            "slowest rank's time in misaligned requests",
            st.max,
            "s",
            approximate=not st.exact,
        ),
    ]
    what = f"the {fmt.nbytes(unit)} stripe" if stripes else a_text
    recs = [
        Recommendation(
            "code",
            (
                f"Start requests at multiples of {what} and make their sizes multiples of it (pad records "
                "or headers to it); with HDF5 use H5Pset_alignment, with PnetCDF nc_var_align_size, with "
                "MPI-IO a file view whose displacement is aligned."
            ),
            f"off = ((off + {unit} - 1) / {unit}) * {unit};",
        )
    ]
    recs += _misaligned_striping(facts, cfg, per)
    yield finding(
        "IO-MISALIGNED",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=st.max,
        subjects=subjects,
        subjects_total=len(per),
        time_basis=(
            "upper bound: the slowest rank's read and write time on these files x the misaligned share; "
            "aligning saves part of it"
        ),
    )


def _stripes_of(facts: Facts, per: Table) -> dict[int, int]:
    """The stripe size of each file of ``per`` on Lustre (by file id)."""
    out = {}
    for fid in per["id"].tolist():
        s = facts.striping.get(int(fid))
        if s is not None:
            out[int(fid)] = s.stripe_size
    return out


def _misaligned_striping(facts: Facts, cfg: RuleConfig, per: Table) -> list[Recommendation]:
    """The recommended layout of the costliest Lustre file, when it changes the stripe size (the
    same command as LUSTRE-STRIPE-SIZE's); nothing when no stripe size would fit the requests."""
    for fid in per[sort_order(per, "time")]["id"].tolist():
        layout = layout_of(facts, int(fid), cfg)
        if layout is not None and layout.changes_size:
            base = layout.name.rsplit("/", 1)[-1]
            return [
                Recommendation(
                    "striping",
                    f"Or give {base} a stripe size its {fmt.nbytes(layout.request)} requests fit (the "
                    "layout LUSTRE-STRIPE-SIZE recommends; set on the directory before the file is created):",
                    layout.command(),
                )
            ]
    return []


def _rereads(facts: Facts, kind: str, rows: np.ndarray | None, n: np.ndarray) -> np.ndarray:
    """Per POSIX record of the part: its whole extent (highest offset + 1) fits in its mean request,
    so a request that does not move forward reads (or writes) the same bytes again: a re-read
    (IO-REDUNDANT-*), not random access."""
    key = "max_byte_read" if kind == "read" else "max_byte_written"
    if key not in facts.layer("posix"):
        return np.zeros(len(n), dtype=bool)
    extent = _part(float_values(layer_values(facts, "posix", key), -1.0), rows) + 1.0
    moved = _part(layer_counter(facts, "posix", BYTES_COLS[kind]), rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, moved / np.where(n > 0, n, 1.0), 0.0)
    return (extent > 0) & (n > 0) & (extent <= mean)


def _random_mpiio_recs(facts: Facts, kind: str, ids: np.ndarray) -> list[Recommendation]:
    """MPI-IO's way to order scattered pieces, for files the run accesses through MPI-IO (nothing
    for a program without MPI-IO); the collective call only when several ranks can share it."""
    mpiio = facts.layer("mpiio")
    if not len(mpiio) or not isin(ids, layer_ids(facts, "mpiio")).any():
        return []
    call = "one collective call" if facts.nprocs > 1 else "one call"
    fn = f"MPI_File_{kind}_all" if facts.nprocs > 1 else f"MPI_File_{kind}"
    return [
        Recommendation(
            "code",
            (
                "These files are accessed through MPI-IO: describe the pieces with a file view "
                f"(MPI_Type_create_indexed_block / subarray) and {call}: ROMIO then sorts and merges them."
            ),
            f"MPI_File_set_view(fh, 0, MPI_BYTE, filetype, \"native\", MPI_INFO_NULL);\n"
            f"{fn}(fh, buf, count, MPI_BYTE, MPI_STATUS_IGNORE);",
        ),
        Recommendation("hint", "With ROMIO, data sieving reads whole regions around the pieces:",
                       f"romio_ds_{kind} enable"),
    ]


@rule(
    "IO-RANDOM-ACCESS",
    title="Random rather than sequential access",
    family=FAMILY,
    config=("random_min_share", "random_min_requests"),
)
def random_access(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Many requests go backwards in the file instead of forwards."""
    best = None
    for kind in ("read", "write"):
        parts = dict(_fs_parts(facts, kind))
        if "posix" not in parts or f"seq_{kind}s" not in facts.layer("posix"):
            continue  # without the sequential counter nothing can be said
        rows = parts["posix"]
        n = _part(layer_counter(facts, "posix", f"{kind}s"), rows)
        seq = np.minimum(_part(layer_counter(facts, "posix", f"seq_{kind}s"), rows), n)
        # the first request of each rank's sequence is never counted as sequential
        first = np.minimum(_part(layer_nranks(facts, "posix"), rows), n)
        back = np.where(_rereads(facts, kind, rows, n), 0.0, np.clip(n - seq - first, 0.0, None))
        n_back, n_all = float(back.sum()), float(n.sum())
        if n_back >= cfg.random_min_requests and n_all > 0 and n_back / n_all >= cfg.random_min_share:
            if best is None or n_back > best[1]:
                best = (kind, n_back, n_all, back, n, rows)
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
    verb = f"{kind}s"
    subjects = [
        _file_subject(
            r,
            (
                Metric("backward", f"{verb} going backwards", int(r["back"]), "count"),
                Metric(
                    "share",
                    f"share of the file's {verb}",
                    float(r["back"] / r["n"]) if r["n"] else 0.0,
                    "share",
                ),
                Metric("time", "time in them (all ranks)", float(r["time"]), "s"),
            ),
        )
        for r in per.rows()
    ]
    statement = (
        f"{fmt.pct(n_back / n_all)} of the {verb} ({fmt.count(n_back)} of {fmt.count(n_all)}) jump backwards "
        "in the file: the access is random rather than sequential, which defeats read-ahead and "
        "write-behind and costs a seek (or a lock) each."
    )
    evidence = [
        Metric("backward", f"{verb} at a lower offset than the previous one", int(n_back), "count"),
        Metric("requests", f"all {verb}", int(n_all), "count"),
        Metric("share", "random share", n_back / n_all, "share"),
        Metric(
            "time_at_stake", f"slowest rank's time in random {verb}", st.max, "s", approximate=not st.exact
        ),
    ]
    recs = [
        Recommendation(
            "code",
            (
                f"Sort the {verb} by offset (or batch them and issue them in file order); for scattered "
                f"small pieces, {FIX_RANDOM[kind]}."
            ),
            "",
        ),
        *_random_mpiio_recs(facts, kind, layer_values(facts, "posix", "id")[pos]),
    ]
    yield finding(
        "IO-RANDOM-ACCESS",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=st.max,
        subjects=subjects,
        subjects_total=len(grouped),
        time_basis=(
            f"upper bound: the slowest rank's {kind} time on these files x the share of backward {verb}"
        ),
    )


def _extent_of(facts: Facts, kind: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Distinct bytes each file spans in one direction (highest offset + 1, POSIX and STDIO):
    the files' ids, sorted, and their extents (None when no file has one)."""
    key = "max_byte_read" if kind == "read" else "max_byte_written"
    ids, ext = [], []
    for layer in ("posix", "stdio"):
        frame = facts.layer(layer)
        if key in frame and len(frame):
            mb = float_values(frame[key], -1.0)
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
    starts = np.flatnonzero(np.r_[True, sid[1:] != sid[:-1]])
    return sid[starts], np.maximum.reduceat(sext, starts)


def _lookup(keys: np.ndarray, values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Per id of ``ids``: the value of its key (sorted distinct ``keys``), 0 where it has none."""
    if not len(keys):
        return np.zeros(len(ids))
    if keys.dtype != ids.dtype:  # compare the numbers (uint64 and int64 meet as floats in NumPy)
        keys, ids = keys.astype(object), ids.astype(object)
    i = np.minimum(np.searchsorted(keys, ids), len(keys) - 1)
    return np.where(keys[i] == ids, values[i], 0.0)


def _redundant(facts: Facts, cfg: RuleConfig, kind: str, rule_id: str) -> Iterator[Finding]:
    extent = _extent_of(facts, kind)
    if extent is None:
        return
    parts: list[tuple[str, np.ndarray | None, int]] = []
    rows: list[dict[str, np.ndarray]] = []
    for layer, frame in facts.outermost().items():
        if not len(frame):
            continue
        keep = facts.outer_rows(layer)
        ids = _part(layer_values(facts, layer, "id"), keep)
        parts.append((layer, keep, len(ids)))
        rows.append(
            {
                "id": ids,
                "name": _part(layer_values(facts, layer, "name"), keep),
                "bytes": _part(layer_counter(facts, layer, BYTES_COLS[kind]), keep),
                "extent": _lookup(*extent, ids),
                "nranks": _part(layer_nranks(facts, layer), keep),
                "time": _part(layer_counter(facts, layer, TIME_COLS[kind]), keep),
            }
        )
    if not rows:
        return
    all_ids = np.concatenate([r["id"] for r in rows])
    grouped = per_file(
        all_ids,
        {k: np.concatenate([r[k] for r in rows]) for k in rows[0] if k != "id"},
        {
            "name": ("name", "first"),
            "bytes": ("bytes", "sum"),
            "extent": ("extent", "max"),
            "ranks": ("nranks", "sum"),
            "time": ("time", "sum"),
        },
        unique=outer_unique(facts),
    )
    all_per = _files(grouped)
    nbytes, span = all_per["bytes"], all_per["extent"]
    hit = (span > 0) & (nbytes >= cfg.redundant_min_factor * span)
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
    share_extra = per["extra"] / per["bytes"]
    if len(all_per) == len(all_ids):  # one record per file: the files are the records
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
    lost = float(per_rank.max())
    if extra < cfg.redundant_min_bytes and lost < cheap:
        return
    head = _files(top_rows(chosen, "extra", max(cfg.top_subjects, 1)))
    across = per["ranks"] >= 2
    verb = "read" if kind == "read" else "written"
    subjects = [
        _file_subject(
            r,
            (
                Metric("bytes", f"bytes {verb}", float(r["bytes"]), "B"),
                Metric("extent", "distinct bytes (highest offset + 1)", float(r["extent"]), "B"),
                Metric("factor", f"times each byte is {verb}", float(r["factor"]), "x"),
                Metric("ranks", "ranks", int(r["ranks"]), "count"),
            ),
        )
        for r in head.head(cfg.top_subjects).rows()
    ]
    top = head.row(0)
    by = f", by {fmt.count(float(top['ranks']))} ranks" if top["ranks"] >= 2 else ""
    mean_factor = float(np.nansum(per["bytes"])) / float(np.nansum(per["extent"]))
    statement = (
        f"{fmt.nbytes(extra)} are {verb} more than once: {len(per)} file(s) are {verb} on average "
        f"{fmt.times(float(mean_factor))} over (largest: {top['name']}, "
        f"{fmt.times(float(top['factor']))}{by})."
    )
    evidence = [
        Metric("repeated_bytes", f"bytes {verb} beyond each file's extent", extra, "B"),
        Metric("files", "files", len(per), "count"),
        Metric("files_across_ranks", "of which shared by several ranks", int(across.sum()), "count"),
        Metric("time_at_stake", f"slowest rank's time in repeated {kind}s", lost, "s"),
    ]
    recs = []
    if kind == "read":
        if across.any():
            recs.append(
                Recommendation(
                    "code",
                    (
                        "Several ranks read the same bytes: read them once (on one rank, or collectively "
                        "with MPI_File_read_all, where each byte is read once and distributed) and "
                        "broadcast."
                    ),
                    "if (rank == 0) read_input(buf, n);\nMPI_Bcast(buf, n, MPI_BYTE, 0, comm);",
                )
            )
        if (~across).any():
            recs.append(
                Recommendation(
                    "code",
                    (
                        "A rank reads the same bytes several times: keep them in memory after the first "
                        "read (or mmap the file)."
                    ),
                    "",
                )
            )
    else:
        recs.append(
            Recommendation(
                "code",
                (
                    "The same bytes are written several times: write each region once, when it is final "
                    "(keep intermediate versions in memory), or write successive versions to different "
                    "offsets/files if they are all needed."
                ),
                "",
            )
        )
    yield finding(
        rule_id,
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=lost,
        subjects=subjects,
        subjects_total=len(per),
        time_basis=(
            f"upper bound: the slowest rank's {kind} time on these files x the share of bytes {verb} beyond "
            "the extent"
        ),
    )


@rule(
    "IO-REDUNDANT-READS",
    title="The same bytes read repeatedly",
    family=FAMILY,
    config=("redundant_min_factor", "redundant_min_bytes"),
)
def redundant_reads(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Files are read several times over (by one rank or by many)."""
    return _redundant(facts, cfg, "read", "IO-REDUNDANT-READS")


@rule(
    "IO-REDUNDANT-WRITES",
    title="The same bytes written repeatedly",
    family=FAMILY,
    config=("redundant_min_factor", "redundant_min_bytes"),
)
def redundant_writes(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Files are written several times over."""
    return _redundant(facts, cfg, "write", "IO-REDUNDANT-WRITES")


@rule(
    "IO-LATENCY-BOUND",
    title="Files where the time goes into per-call latency, not data",
    family=FAMILY,
    config=("latency_max_rate", "min_time_lost_share"),
)
def latency_bound(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """A file takes a noticeable share of the run while moving data at a crawl."""
    floor = cfg.min_time_lost_share * facts.runtime
    hits: list[Table] = []
    for layer, frame in facts.outermost().items():
        if not len(frame):
            continue
        keep = facts.outer_rows(layer)

        def c(name: str, layer: str = layer, keep: np.ndarray | None = keep) -> np.ndarray:
            return _part(layer_counter(facts, layer, name), keep)

        t = c("read_time") + c("write_time") + c("meta_time")
        rank = _part(layer_values(facts, layer, "rank"), keep).astype(np.int64)
        slow = c("slowest_rank_time")
        per_rank_max = np.where(
            rank >= 0,
            t,
            np.where(slow > 0, slow, t / np.maximum(_part(layer_nranks(facts, layer), keep), 1.0)),
        )
        flushes = c("flushes") + c("fsyncs") + c("fdsyncs") + c("syncs")
        # grouped by (layer, id): the groups of each layer in turn
        per = _files(per_file(
            _part(layer_values(facts, layer, "id"), keep),
            {
                "name": _part(layer_values(facts, layer, "name"), keep),
                "bytes": c("bytes_read") + c("bytes_written"),
                "time": t,
                "max_rank": per_rank_max,
                "ops": _part(layer_ops(facts, layer, "read"), keep)
                + _part(layer_ops(facts, layer, "write"), keep),
                "meta_ops": _part(layer_ops(facts, layer, "meta"), keep),
                "meta_time": c("meta_time"),
                "flushes": flushes,
                "rank": np.where(rank >= 0, rank, -1),
            },
            {
                "name": ("name", "first"),
                "bytes": ("bytes", "sum"),
                "time": ("time", "sum"),
                "max_rank": ("max_rank", "max"),
                "ops": ("ops", "sum"),
                "meta_ops": ("meta_ops", "sum"),
                "meta_time": ("meta_time", "sum"),
                "flushes": ("flushes", "sum"),
                "rank": ("rank", "max"),
            },
            unique=layer_unique(facts, layer),
        ))
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
    hit = hit[sort_order(hit, "max_rank")]
    lost = float(hit["max_rank"].max())
    subjects = [
        _file_subject(
            r,
            (
                Metric("layer", "layer", LAYER_NAMES.get(r["layer"], str(r["layer"]).upper()), "text"),
                Metric("bytes", "bytes moved", float(r["bytes"]), "B"),
                Metric("time", "I/O time (all ranks)", float(r["time"]), "s"),
                Metric("rate", "bytes / slowest rank's time on it", float(r["rate"]), "B/s"),
                Metric("requests", "read and write calls", int(r["ops"]), "count"),
                Metric("flushes", "flush / sync calls", int(r["flushes"]), "count"),
                Metric(
                    "meta_time", "of which metadata (open, close, flush, seek...)", float(r["meta_time"]), "s"
                ),
            ),
        )
        for r in hit.head(cfg.top_subjects).rows()
    ]
    top = hit.row(0)
    who = f"rank {int(top['rank'])}" if top["rank"] >= 0 else "the slowest rank"
    statement = (
        f"{len(hit)} file(s) move data at under {fmt.rate(cfg.latency_max_rate)} while taking time: "
        f"{top['name']} costs {who} {fmt.seconds(float(top['max_rank']))} for "
        f"{fmt.nbytes(float(top['bytes']))} "
        f"({fmt.rate(float(top['rate']))}, {fmt.count(float(top['ops']))} "
        f"calls{', ' + fmt.count(float(top['flushes'])) + ' flushes/syncs' if top['flushes'] else ''})."
    )
    evidence = [
        Metric("files", "latency-bound files", len(hit), "count"),
        Metric("bytes", "bytes they move", float(hit["bytes"].sum()), "B"),
        Metric("time", "their I/O time (all ranks)", float(hit["time"].sum()), "s"),
        Metric("time_at_stake", "largest time one rank spends on one of them", lost, "s"),
    ]
    recs = []
    if float(hit["flushes"].sum()) > 0:
        recs.append(
            Recommendation(
                "code",
                (
                    "Flush or sync less often: every fflush/fsync waits for the file system (on a shared "
                    "parallel file system, for its locks too). Flush at checkpoints, not after every line."
                ),
                "",
            )
        )
    if float(hit["meta_time"].sum()) > 0.5 * float(hit["time"].sum()):
        recs.append(
            Recommendation(
                "code",
                ("Most of the time is in open/close/seek/flush: open the file once and keep it open."),
                "",
            )
        )
    recs.append(
        Recommendation(
            "code",
            (
                "Collect the output in memory (or give the stream a large buffer) and write it in large "
                "pieces; write diagnostic logs from one rank to node-local storage and copy them at the end."
            ),
            "static char big[1 << 20];\nsetvbuf(fp, big, _IOFBF, sizeof big);",
        )
    )
    yield finding(
        "IO-LATENCY-BOUND",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=lost,
        subjects=subjects,
        subjects_total=len(hit),
        time_basis="upper bound: the largest time one rank spends on one of these files",
    )
