"""I/O library rules (HDF5, PnetCDF): chunks too small, no alignment on a striped file system,
independent dataset transfers where collective ones are possible, many small blocking PnetCDF
puts, library metadata dominating, PnetCDF variable alignment off the stripe, and a library
moving far more bytes than it was asked for (docs/diagnosis.md, "I/O libraries").

The rules read the library layers of the profile (``h5f``, ``h5d``, ``pnetcdf_file``,
``pnetcdf_var``); a counter a source does not record (Darshan has no HDF5 alignment, layout
or PnetCDF alignment) keeps its rule silent.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import pario.analysis.diagnosis._fmt as fmt
from pario.analysis.diagnosis.commands import autotune
from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.diagnosis.facts import Facts, counter, hex_id, small_ops
from pario.analysis.diagnosis.facts import ops as request_ops
from pario.analysis.diagnosis.findings import Finding, Metric, Recommendation, Subject
from pario.analysis.diagnosis.registry import finding, rule
from pario.analysis.rankio import data_file_ids, float_values
from pario.table import Table, as_table, group_codes, group_reduce

FAMILY = "libraries"
_CHUNK_DIMS = tuple(f"chunk_size_d{i}" for i in range(1, 6))
_FILE_LAYER = {"h5d": "h5f", "pnetcdf_var": "pnetcdf_file"}


def _layer(facts: Facts, layer: str) -> Table:
    """All records of a library layer (every file: the rules judge each library file), once per Facts."""
    return facts.cached(("libraries", layer), lambda: as_table(facts.profile.layer(layer)))


def _file_ids(facts: Facts, layer: str) -> np.ndarray:
    """Per dataset/variable record of ``layer``: its file's id (0 when not found)."""
    # the profile's own tables: data_file_ids takes what the readers make
    return data_file_ids(facts.profile.layer(layer), facts.profile.layer(_FILE_LAYER[layer]))


def _ids(t: Table) -> np.ndarray:
    return np.asarray(t["id"]).astype(np.uint64)


def _by_id(t: Table, values: np.ndarray) -> dict[int, Any]:
    """Per id: ``values`` of its last record (plain Python values)."""
    return dict(zip(_ids(t).tolist(), np.asarray(values).tolist(), strict=True))


def _nranks(t: Table, nprocs: int) -> np.ndarray:
    rank = np.asarray(t["rank"]).astype(np.int64)
    n = counter(t, "nranks") if "nranks" in t else np.zeros(len(t))
    return np.where(rank >= 0, 1.0, np.where(n > 0, n, float(nprocs)))


def _grouped(t: Table, cols: tuple[str, ...], nprocs: int) -> list[dict[str, Any]]:
    """Per dataset/variable id (in order of first record): its id, name, the sums of ``cols`` and
    the ranks (records of one rank summed), as plain Python values."""
    keys, codes = group_codes(_ids(t), sort=False)
    n = len(keys)
    out = Table({"id": keys, "name": group_reduce(np.asarray(t["name"]), codes, n, "first")}, length=n)
    out["ranks"] = np.minimum(group_reduce(_nranks(t, nprocs), codes, n, "sum"), nprocs)
    for c in cols:
        out[c] = group_reduce(counter(t, c), codes, n, "sum")
    values = [out[c].tolist() for c in out.columns]
    return [dict(zip(out.columns, row, strict=True)) for row in zip(*values, strict=True)]


def _first(t: Table, column: str) -> dict[int, float]:
    """Per id: the largest recorded value of a property counter (-1 when never recorded)."""
    if column not in t or not len(t):
        return {}
    keys, codes = group_codes(_ids(t), sort=False)
    most = group_reduce(float_values(t[column], -1.0), codes, len(keys), "max")
    return dict(zip(keys.tolist(), np.maximum(most, -1.0).tolist(), strict=True))


def _lost(facts: Facts, seconds_summed: float) -> float:
    """Seconds summed over ranks as a per-rank mean (the rules' time at stake)."""
    return seconds_summed / max(facts.nprocs, 1)


@dataclass(frozen=True)
class LibraryRequests:
    """What the application asked of an I/O library on one file, in one direction."""

    library: str  # "HDF5" or "PnetCDF"
    calls: float  # H5Dread/H5Dwrite, ncmpi_get_*/ncmpi_put_* (all ranks)
    nbytes: float


def large_request_files(facts: Facts, kind: str, limit: int, min_share: float) -> dict[str, LibraryRequests]:
    """Per file name: HDF5 and PnetCDF files whose application requests of ``kind`` (the dataset
    and variable records' calls) are large, fewer than ``min_share`` of them at most ``limit``
    bytes, and (HDF5) that hold no chunked dataset with chunks of at most ``limit`` bytes. The
    small requests beneath such a file are the library's own (metadata, headers), not the
    application's data (small chunks are data, split by the library: LIB-HDF5-SMALL-CHUNKS)."""
    out: dict[str, LibraryRequests] = {}
    for lib, flayer, dlayer in (("HDF5", "h5f", "h5d"), ("PnetCDF", "pnetcdf_file", "pnetcdf_var")):
        f, d = _layer(facts, flayer), _layer(facts, dlayer)
        if not len(f) or not len(d):
            continue
        calls, small = request_ops(d, dlayer, kind), small_ops(d, dlayer, kind, limit)
        nbytes = counter(d, "bytes_read" if kind == "read" else "bytes_written")
        chunk = np.zeros(len(d))
        if dlayer == "h5d" and "datatype_size" in d and any(c in d for c in _CHUNK_DIMS):
            dims = [counter(d, c) for c in _CHUNK_DIMS if c in d]
            chunk = np.where(dims[0] > 0, np.prod([np.where(x > 0, x, 1.0) for x in dims], axis=0), 0.0)
            chunk = chunk * counter(d, "datatype_size")
        # per file (in order of its first record): the sums over its datasets' or variables' records
        fids, codes = group_codes(_file_ids(facts, dlayer), sort=False)
        per = zip(
            fids.tolist(),
            *(group_reduce(x, codes, len(fids), "sum").tolist()
              for x in (calls, small, nbytes, ((chunk > 0) & (chunk <= limit)).astype(np.float64))),
            strict=True,
        )
        names = _by_id(f, f["name"])
        for fid, n, n_small, b, small_chunked in per:
            if fid and fid in names and n > 0 and n_small < min_share * n and not small_chunked:
                out[str(names[fid])] = LibraryRequests(lib, float(n), float(b))
    return out


# ------------------------------------------------------------------------------------------
# HDF5
# ------------------------------------------------------------------------------------------


@rule(
    "LIB-HDF5-SMALL-CHUNKS",
    title="HDF5 chunks far smaller than the stripe or the transfers",
    family=FAMILY,
    config=("hdf5_chunk_max_ratio", "library_min_bytes"),
)
def hdf5_small_chunks(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """A chunked dataset whose chunk is at most hdf5_chunk_max_ratio of the file's stripe size (or,
    off Lustre, of the mean transfer): each transfer touches many chunks, each a separate I/O and a
    B-tree entry."""
    d = _layer(facts, "h5d")
    if not len(d) or not any(c in d for c in _CHUNK_DIMS):
        return
    g = _grouped(
        d, ("bytes_read", "bytes_written", "reads", "writes", "read_time", "write_time"), facts.nprocs
    )
    elem = _first(d, "datatype_size")
    dims = {c: _first(d, c) for c in _CHUNK_DIMS if c in d}
    file_of = _by_id(d, _file_ids(facts, "h5d"))
    subjects, lost, worst = [], 0.0, None
    for row in g:
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
        t = row["read_time"] + row["write_time"]
        lost += t
        scale = max(int(round((ref / chunk) ** (1.0 / len(shape)))), 2)
        if worst is None or chunk / ref < worst[0]:
            worst = (chunk / ref, shape, [d_ * scale for d_ in shape], ref, what, str(row["name"]))
        subjects.append(
            Subject(
                "dataset",
                str(row["name"]),
                (
                    Metric("chunk_bytes", "chunk size", chunk, "B"),
                    Metric("reference", what, ref, "B"),
                    Metric(
                        "chunks_per_transfer", "chunks per transfer (at least)", (nbytes / calls) / chunk, "x"
                    ),
                    Metric("time", "read + write time (summed over ranks)", t, "s"),
                ),
                hex_id(did),
            )
        )
    if not subjects or worst is None:
        return
    ratio, shape, better, ref, what, name = worst
    statement = (
        f"{len(subjects)} chunked HDF5 dataset{'s' if len(subjects) > 1 else ''} use chunks far smaller "
        f"than the {what}: {name} has {'x'.join(map(str, shape))}-element chunks, "
        f"{fmt.pct(ratio)} of its {what} ({fmt.nbytes(ref)}). Every transfer is split into many "
        "chunk I/Os, each with its own B-tree lookup and file-system request."
    )
    dims_c = ", ".join(map(str, better))
    recs = [
        Recommendation(
            "code",
            f"Make the chunks about the {what} (or a multiple of the transfer each rank "
            f"writes), e.g. {'x'.join(map(str, better))} elements, when creating the dataset:",
            f"hsize_t chunk[{len(better)}] = {{{dims_c}}};\nH5Pset_chunk(dcpl, {len(better)}, chunk);\n"
            "dset = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);",
        ),
        Recommendation(
            "code",
            "If the dataset is written once in full and never extended, a contiguous layout "
            "(no H5Pset_chunk) avoids chunking altogether.",
        ),
    ]
    yield finding(
        "LIB-HDF5-SMALL-CHUNKS",
        cfg,
        statement=statement,
        recommendations=recs,
        evidence=[
            Metric("datasets", "datasets with small chunks", len(subjects), "count"),
            Metric("chunk_ratio", f"smallest chunk / {what}", ratio, "share"),
        ],
        subjects=subjects,
        runtime=facts.runtime,
        time_lost=_lost(facts, lost),
        time_basis="upper bound: the mean per-rank read and write time of these datasets",
    )


@rule(
    "LIB-HDF5-NO-ALIGNMENT",
    title="HDF5 objects not aligned on a striped or large file",
    family=FAMILY,
    config=("hdf5_align_min_bytes",),
)
def hdf5_no_alignment(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """H5F_ALIGNMENT 1 (HDF5's default: no alignment) on a file on Lustre or of at least
    hdf5_align_min_bytes: datasets start anywhere, so transfers straddle stripes and file-system blocks."""
    f = _layer(facts, "h5f")
    if not len(f) or "alignment" not in f:
        return
    align = _first(f, "alignment")
    written = {
        int(r["id"]): r["bytes_read"] + r["bytes_written"]
        for r in _grouped(f, ("bytes_read", "bytes_written"), facts.nprocs)
    }
    names = _by_id(f, f["name"])
    subjects, stripe_size = [], 0
    for fid, a in align.items():
        if a != 1:
            continue
        stripe = facts.striping.get(fid)
        if stripe is None and written.get(fid, 0.0) < cfg.hdf5_align_min_bytes:
            continue
        stripe_size = max(stripe_size, stripe.stripe_size if stripe is not None else 0)
        subjects.append(
            Subject(
                "file",
                str(names[fid]),
                (
                    Metric("bytes", "bytes through HDF5", written.get(fid, 0.0), "B"),
                    Metric("stripe_size", "stripe size", float(stripe.stripe_size) if stripe else None, "B"),
                ),
                hex_id(fid),
            )
        )
    if not subjects:
        return
    size = stripe_size or 1 << 20
    statement = (
        f"{len(subjects)} HDF5 file{'s' if len(subjects) > 1 else ''} (e.g. {subjects[0].name}) "
        "use no alignment (H5Pset_alignment not set: alignment 1) "
        + ("on Lustre" if stripe_size else f"and move at least {fmt.nbytes(cfg.hdf5_align_min_bytes)}")
        + ": datasets start at arbitrary offsets, so their transfers straddle stripe and block "
        "boundaries and the collective buffering's file domains do not match the stripes."
    )
    recs = [
        Recommendation(
            "hint",
            "Without recompiling: pario sets the file-access alignment at H5Fcreate/H5Fopen "
            "from these PARIO_HINTS keys (objects of at least the threshold start on a multiple of "
            "the alignment):",
            f"hdf5.alignment_threshold {min(size, 1 << 20)}\nhdf5.alignment {size}",
        ),
        Recommendation(
            "code",
            "Or in the program, on the file-access property list:",
            f"H5Pset_alignment(fapl, {min(size, 1 << 20)}, {size});  /* threshold, alignment */",
        ),
        autotune(facts, "the HDF5 alignment with the MPI-IO hints", [s.name for s in subjects]),
    ]
    yield finding(
        "LIB-HDF5-NO-ALIGNMENT",
        cfg,
        statement=statement,
        recommendations=recs,
        evidence=[
            Metric("files", "HDF5 files without alignment", len(subjects), "count"),
            Metric("alignment", "H5F_ALIGNMENT", 1, "B"),
        ],
        subjects=subjects,
        runtime=facts.runtime,
        time_basis="not estimated: what the change saves depends on the file system",
    )


@rule(
    "LIB-INDEPENDENT-TRANSFERS",
    title="Independent dataset transfers where collective ones are possible",
    family=FAMILY,
    config=("library_collective_min_ranks", "library_min_bytes"),
)
def independent_transfers(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Several ranks read or write one HDF5 dataset (through the MPI-IO driver) or one PnetCDF
    variable with independent transfers only: MPI-IO cannot aggregate their requests."""
    subjects, lost, libs = [], 0.0, set()
    h5f = _layer(facts, "h5f")
    mpio_files = (
        np.array([i for i, u in _first(h5f, "use_mpiio").items() if u > 0], dtype=np.uint64)
        if "use_mpiio" in h5f
        else None
    )
    for layer, coll_cols in (
        ("h5d", ("coll_reads", "coll_writes")),
        ("pnetcdf_var", ("coll_reads", "coll_writes")),
    ):
        d = _layer(facts, layer)
        if not len(d):
            continue
        calls = (
            ("reads", "writes")
            if layer == "h5d"
            else ("indep_reads", "indep_writes", "coll_reads", "coll_writes", "nb_reads", "nb_writes")
        )
        cols = (
            *calls,
            *(c for c in coll_cols if c not in calls),
            "bytes_read",
            "bytes_written",
            "read_time",
            "write_time",
            *(("use_mpiio_collective",) if "use_mpiio_collective" in d else ()),
        )
        g = _grouped(d, tuple(dict.fromkeys(cols)), facts.nprocs)
        if layer == "h5d" and mpio_files is not None:
            via_mpio = set(_ids(d)[np.isin(_file_ids(facts, "h5d"), mpio_files)].tolist())
        else:
            via_mpio = None
        for r in g:
            if via_mpio is not None and int(r["id"]) not in via_mpio:
                continue  # an HDF5 file without the MPI-IO driver cannot transfer collectively
            nbytes = r["bytes_read"] + r["bytes_written"]
            if r["ranks"] < cfg.library_collective_min_ranks or nbytes < cfg.library_min_bytes:
                continue
            if layer == "h5d":
                coll = (
                    r.get("coll_reads", 0.0) + r.get("coll_writes", 0.0)
                    if "coll_writes" in d
                    else r.get("use_mpiio_collective", 0.0)
                )
                indep = r["reads"] + r["writes"] - (coll if "coll_writes" in d else 0.0)
            else:
                coll = r["coll_reads"] + r["coll_writes"] + r["nb_reads"] + r["nb_writes"]
                indep = r["indep_reads"] + r["indep_writes"]
            if coll > 0 or indep <= 0:
                continue
            libs.add("HDF5" if layer == "h5d" else "PnetCDF")
            t = r["read_time"] + r["write_time"]
            lost += t
            subjects.append(
                Subject(
                    "dataset" if layer == "h5d" else "variable",
                    str(r["name"]),
                    (
                        Metric("ranks", "ranks", r["ranks"], "count"),
                        Metric("transfers", "independent transfers", indep, "count"),
                        Metric("bytes", "bytes", nbytes, "B"),
                        Metric("time", "read + write time (summed)", t, "s"),
                    ),
                    hex_id(int(r["id"])),
                )
            )
    if not subjects:
        return
    statement = (
        f"{len(subjects)} dataset{'s' if len(subjects) > 1 else ''} or "
        f"variable{'s' if len(subjects) > 1 else ''} ({', '.join(sorted(libs))}; "
        f"e.g. {subjects[0].name}) are transferred by several ranks with independent I/O only: each "
        "rank's requests reach the file system on their own, where a "
        "collective transfer would let MPI-IO aggregate them into few large, stripe-aligned requests."
    )
    recs = []
    if "HDF5" in libs:
        recs += [
            Recommendation(
                "hint",
                "Without recompiling: pario makes HDF5's transfers collective from this PARIO_HINTS key:",
                "hdf5.transfer collective",
            ),
            Recommendation(
                "code",
                "Or in the program, on the transfer property list of H5Dwrite/H5Dread:",
                "hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);\n"
                "H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);\n"
                "H5Dwrite(dset, type, memspace, filespace, dxpl, buf);",
            ),
        ]
    if "PnetCDF" in libs:
        recs.append(
            Recommendation(
                "code",
                "Use the collective (_all) PnetCDF calls in data mode (every rank "
                "calls, with a zero-length request where it has nothing):",
                "ncmpi_put_vara_double_all(ncid, varid, start, count, buf);",
            )
        )
    recs.append(
        autotune(
            facts, "the collective transfer with the MPI-IO hints", [s.name.split(":")[0] for s in subjects]
        )
    )
    yield finding(
        "LIB-INDEPENDENT-TRANSFERS",
        cfg,
        statement=statement,
        recommendations=recs,
        evidence=[
            Metric("objects", "datasets/variables with independent transfers only", len(subjects), "count")
        ],
        subjects=subjects,
        runtime=facts.runtime,
        time_lost=_lost(facts, lost),
        time_basis="upper bound: the mean per-rank read and write time of these datasets/variables",
    )


# ------------------------------------------------------------------------------------------
# PnetCDF
# ------------------------------------------------------------------------------------------


@rule(
    "LIB-PNETCDF-SMALL-PUTS",
    title="Many small blocking PnetCDF puts",
    family=FAMILY,
    config=("pnetcdf_small_put_bytes", "pnetcdf_small_min_calls"),
)
def pnetcdf_small_puts(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """A variable written (or read) with at least pnetcdf_small_min_calls blocking calls of at most
    pnetcdf_small_put_bytes each on average, and no nonblocking ones: ncmpi_iput + ncmpi_wait_all
    would combine them into one MPI-IO call."""
    v = _layer(facts, "pnetcdf_var")
    if not len(v):
        return
    cols = (
        "indep_writes",
        "coll_writes",
        "nb_writes",
        "indep_reads",
        "coll_reads",
        "nb_reads",
        "bytes_written",
        "bytes_read",
        "write_time",
        "read_time",
    )
    g = _grouped(v, cols, facts.nprocs)
    subjects, lost, total_calls = [], 0.0, 0.0
    for r in g:
        for kind, calls, nb, nbytes, t in (
            ("put", r["indep_writes"] + r["coll_writes"], r["nb_writes"], r["bytes_written"],
             r["write_time"]),
            ("get", r["indep_reads"] + r["coll_reads"], r["nb_reads"], r["bytes_read"], r["read_time"]),
        ):
            if calls < cfg.pnetcdf_small_min_calls or nb > 0 or nbytes / calls > cfg.pnetcdf_small_put_bytes:
                continue
            lost += t
            total_calls += calls
            subjects.append(
                Subject(
                    "variable",
                    str(r["name"]),
                    (
                        Metric("calls", f"blocking {kind}s", calls, "count"),
                        Metric("mean", f"mean {kind}", nbytes / calls, "B"),
                        Metric("time", f"{kind} time (summed over ranks)", t, "s"),
                    ),
                    hex_id(int(r["id"])),
                )
            )
    if not subjects:
        return
    nvars = len({s.name for s in subjects})
    statement = (
        f"{fmt.count(total_calls)} blocking PnetCDF puts/gets of at most "
        f"{fmt.nbytes(cfg.pnetcdf_small_put_bytes)} on average go one by one to MPI-IO "
        f"({nvars} variable{'s' if nvars > 1 else ''}, e.g. {subjects[0].name}); "
        "posted as nonblocking requests and completed together, PnetCDF would merge them into one "
        "MPI-IO call per wait."
    )
    recs = [
        Recommendation(
            "code",
            "Post the puts as nonblocking requests and complete them together:",
            "int req[NVARS], st[NVARS];\n"
            "for (int i = 0; i < NVARS; i++)\n"
            "    ncmpi_iput_vara_double(ncid, varid[i], start, count, buf[i], &req[i]);\n"
            "ncmpi_wait_all(ncid, NVARS, req, st);  /* one collective MPI-IO write */",
        )
    ]
    yield finding(
        "LIB-PNETCDF-SMALL-PUTS",
        cfg,
        statement=statement,
        recommendations=recs,
        evidence=[Metric("calls", "small blocking puts/gets", total_calls, "count")],
        subjects=subjects,
        runtime=facts.runtime,
        time_lost=_lost(facts, lost),
        time_basis="upper bound: the mean per-rank time of these calls",
    )


@rule("LIB-PNETCDF-ALIGNMENT", title="PnetCDF variables not aligned to the stripe", family=FAMILY, config=())
def pnetcdf_alignment(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """A PnetCDF file on Lustre whose variable alignment (nc_var_align_size) is not a multiple of
    the stripe size: the variables' data starts in the middle of stripes."""
    f = _layer(facts, "pnetcdf_file")
    if not len(f) or "var_align" not in f:
        return
    align = _first(f, "var_align")
    names = _by_id(f, f["name"])
    subjects, stripe_size = [], 0
    for fid, a in align.items():
        stripe = facts.striping.get(fid)
        if stripe is None or a < 0 or stripe.stripe_size <= 0 or (a > 0 and a % stripe.stripe_size == 0):
            continue
        stripe_size = max(stripe_size, stripe.stripe_size)
        subjects.append(
            Subject(
                "file",
                str(names[fid]),
                (
                    Metric("var_align", "nc_var_align_size", a, "B"),
                    Metric("stripe_size", "stripe size", stripe.stripe_size, "B"),
                ),
                hex_id(fid),
            )
        )
    if not subjects:
        return
    statement = (
        f"{len(subjects)} PnetCDF file{'s' if len(subjects) > 1 else ''} on Lustre (e.g. "
        f"{subjects[0].name}) align their variables to {fmt.nbytes(subjects[0].metrics[0].value or 0)}, "
        f"not a multiple of the {fmt.nbytes(stripe_size)} stripe: every variable's first and last "
        "stripe is shared with its neighbours, so aggregators of different variables contend for it."
    )
    recs = [
        Recommendation(
            "hint",
            "Set PnetCDF's alignment hints to the stripe size (PARIO_HINTS passes them to "
            "ncmpi_create/ncmpi_open with the MPI-IO hints):",
            f"nc_var_align_size {stripe_size}\nnc_header_align_size {stripe_size}",
        ),
        autotune(facts, "PnetCDF's alignment with the MPI-IO hints", [s.name for s in subjects]),
    ]
    yield finding(
        "LIB-PNETCDF-ALIGNMENT",
        cfg,
        statement=statement,
        recommendations=recs,
        evidence=[Metric("files", "files with misaligned variables", len(subjects), "count")],
        subjects=subjects,
        runtime=facts.runtime,
        time_basis="not estimated: what the change saves depends on the file system",
    )


# ------------------------------------------------------------------------------------------
# both libraries
# ------------------------------------------------------------------------------------------


@rule(
    "LIB-METADATA-DOMINATES",
    title="Library metadata operations dominate the library's time",
    family=FAMILY,
    config=("library_meta_min_share", "min_time_lost_share"),
)
def metadata_dominates(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """HDF5 (H5F/H5D create, open, flush, close) or PnetCDF (create, open, redef, enddef, sync,
    close, def_var) metadata takes at least library_meta_min_share of the library's time."""
    for lib, flayer, dlayer, ops in (
        ("HDF5", "h5f", "h5d", "file, dataset, group and attribute calls"),
        ("PnetCDF", "pnetcdf_file", "pnetcdf_var", "create/open/redef/enddef/sync/close and def_var"),
    ):
        f, d = _layer(facts, flayer), _layer(facts, dlayer)
        if not len(f) and not len(d):
            continue
        meta = float(counter(f, "meta_time").sum() + counter(d, "meta_time").sum())
        data = float(counter(d, "read_time").sum() + counter(d, "write_time").sum())
        if "read_time" not in f:  # Darshan's PnetCDF waits: data movement of the file's requests
            data += float(counter(f, "wait_time").sum())
        total = meta + data
        lost = _lost(facts, meta)
        if (
            total <= 0
            or meta / total < cfg.library_meta_min_share
            or lost < cfg.min_time_lost_share * facts.runtime
        ):
            continue
        opens = float(sum(counter(f, c).sum() for c in ("opens", "creates")))
        redefs = float(counter(f, "redefs").sum())
        statement = (
            f"{lib} metadata ({ops}) takes {fmt.pct(meta / total)} of the time in {lib} calls: "
            f"{fmt.seconds(lost)} per rank, against {fmt.seconds(_lost(facts, data))} reading and writing "
            f"data ({fmt.count(opens)} file creates/opens over {fmt.count(len(f))} file records)."
        )
        if lib == "HDF5":
            recs = []
            if _chunked_extent(facts):
                statement += (
                    " With chunked datasets, H5Dcreate also writes the fill values of every chunk "
                    "(parallel HDF5 allocates them all there) and H5Dclose writes the chunks still in "
                    "the chunk cache: that data movement counts here."
                )
                recs.append(Recommendation(
                    "code", "When every element is written anyway, skip the fill values at H5Dcreate:",
                    "H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);"))
            recs += [
                Recommendation(
                    "code",
                    "Open each file once and keep it open; create datasets once, outside "
                    "loops; make metadata operations collective so that one rank reads and "
                    "broadcasts instead of every rank hitting the file system:",
                    "H5Pset_all_coll_metadata_ops(fapl, 1);\nH5Pset_coll_metadata_write(fapl, 1);",
                ),
                Recommendation(
                    "hint",
                    "Larger metadata blocks aggregate HDF5's small metadata writes "
                    "(PARIO_HINTS, without recompiling):",
                    "hdf5.meta_block_size 1048576",
                ),
            ]
        else:
            recs = [
                Recommendation(
                    "code",
                    "Define every dimension, variable and attribute before one ncmpi_enddef;"
                    " avoid ncmpi_redef (each moves the data if the header grows) and reserve header "
                    "space in advance:",
                    "ncmpi__enddef(ncid, 65536, 0, 0, 0);  /* header padding */",
                )
            ]
            if redefs:
                statement += f" The run re-enters define mode {fmt.count(redefs)} times."
        recs.append(
            autotune(facts, f"the {lib} metadata settings with the MPI-IO hints", objective="io-time")
        )
        yield finding(
            "LIB-METADATA-DOMINATES",
            cfg,
            statement=statement,
            recommendations=recs,
            evidence=[
                Metric("meta_share", f"{lib} metadata time / {lib} time", meta / total, "share"),
                Metric("meta_time", "metadata time per rank", lost, "s"),
                Metric("data_time", "data time per rank", _lost(facts, data), "s"),
            ],
            runtime=facts.runtime,
            time_lost=lost,
            time_basis="upper bound: the mean per-rank metadata time in the library",
        )


def _times(x: float) -> str:
    """A ratio as '2.2x' or '1,593x'."""
    return f"{x:,.0f}x" if x >= 10 else f"{x:.1f}x"


#: The extra bytes beneath an HDF5 file, as a share of its chunked datasets' full size, at or above
#: which the fill values written when the chunks were allocated explain them.
_FILL_SHARE = 0.9


def _chunked_extent(facts: Facts) -> dict[int, float]:
    """Per HDF5 file id: the full size of its chunked datasets (elements x element size), which
    HDF5 writes as fill values when it allocates their chunks (parallel HDF5 allocates every chunk
    at H5Dcreate) unless the fill time is H5D_FILL_TIME_NEVER."""
    d = _layer(facts, "h5d")
    if not len(d) or "layout" not in d:
        return {}
    layout, npoints, elem = _first(d, "layout"), _first(d, "dataspace_npoints"), _first(d, "datatype_size")
    file_of = _by_id(d, _file_ids(facts, "h5d"))
    out: dict[int, float] = {}
    for did, lay in layout.items():
        fid = int(file_of.get(did, 0))
        if lay == 2 and fid and npoints.get(did, -1) > 0 and elem.get(did, -1) > 0:
            out[fid] = out.get(fid, 0.0) + npoints[did] * elem[did]
    return out


@rule(
    "LIB-AMPLIFICATION",
    title="The library moves far more bytes than the application asked for",
    family=FAMILY,
    config=("library_amplification_min", "library_min_bytes"),
)
def amplification(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Per library file: bytes moved beneath (MPI-IO, else POSIX) / bytes asked of the library at
    least library_amplification_min (tiny datasets or variables whose metadata, headers and
    padding outweigh the data), or an HDF5 file whose extra bytes beneath are its chunked datasets'
    full size (at least library_min_bytes): the fill values written when the chunks were
    allocated."""
    from pario.analysis.libraries import library_summary

    extent = _chunked_extent(facts)
    h5f = _layer(facts, "h5f")
    fids = dict(zip(np.asarray(h5f["name"]).astype(str).tolist(), _ids(h5f).tolist(), strict=True))
    subjects, fill = [], []
    asked_total = moved_total = 0.0
    for lf in library_summary(facts.profile).files:
        asked = (lf.asked_read.value or 0.0) + (lf.asked_written.value or 0.0)
        moved = (lf.moved_read.value or 0.0) + (lf.moved_written.value or 0.0)
        if not lf.beneath_layer or asked <= 0:
            continue
        chunked = extent.get(fids.get(lf.name, 0), 0.0) if lf.library == "hdf5" else 0.0
        filled = chunked >= cfg.library_min_bytes and moved - asked >= _FILL_SHARE * chunked
        if moved < cfg.library_amplification_min * asked and not filled:
            continue
        asked_total += asked
        moved_total += moved
        metrics = [
            Metric("asked", "bytes asked", asked, "B"),
            Metric("moved", "bytes moved beneath", moved, "B"),
            Metric("ratio", "moved / asked", moved / asked, "x"),
        ]
        if filled:
            fill.append(lf.name)
            metrics.append(Metric("chunked", "full size of the chunked datasets", chunked, "B"))
        subjects.append(Subject("file", lf.name, tuple(metrics)))
    if not subjects:
        return
    n = len(subjects)
    statement = (
        f"{n} file{'s' if n > 1 else ''} written through an I/O library (e.g. {subjects[0].name}) "
        f"move{'' if n > 1 else 's'} {fmt.nbytes(moved_total)} beneath the library for "
        f"{fmt.nbytes(asked_total)} the application asked for ({_times(moved_total / asked_total)})"
    )
    recs = []
    if fill:
        which = "this file" if n == 1 else ("these files" if len(fill) == n else f"{len(fill)} of them")
        statement += (
            f": the chunked datasets of {which} are written twice in full, once as fill values when HDF5 "
            "allocates their chunks (parallel HDF5 allocates them all in H5Dcreate, whose time counts as "
            "metadata) and once as the data."
        )
        recs.append(
            Recommendation(
                "code",
                "When every element is written anyway, tell HDF5 not to write fill values, on the "
                "dataset creation property list:",
                "H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);",
            )
        )
    if len(fill) < n:
        statement += (
            ("; in the others" if fill else ":")
            + " the library's metadata, headers and padding outweigh the data, and the requests are tiny."
        )
        recs.append(
            Recommendation(
                "code",
                "Write fewer, larger datasets (or one dataset with a dimension per rank or "
                "step) instead of many tiny ones, and fewer files; store small values as attributes, "
                "or give tiny HDF5 datasets a compact layout:",
                "H5Pset_layout(dcpl, H5D_COMPACT);",
            )
        )
    yield finding(
        "LIB-AMPLIFICATION",
        cfg,
        statement=statement,
        recommendations=recs,
        evidence=[
            Metric("asked", "bytes asked", asked_total, "B"),
            Metric("moved", "bytes moved beneath", moved_total, "B"),
            Metric("ratio", "moved / asked", moved_total / asked_total, "x"),
        ],
        subjects=subjects,
        runtime=facts.runtime,
        time_basis="not estimated: the extra bytes cost part of the library time (the Libraries table)",
    )
