"""The words of the I/O library rules (libraries.py): statement, evidence and recommendations of
each hit.  The PnetCDF-only rules' words are in pnetcdf_words.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.commands import autotune
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, Subject, file_subject, hex_id
from pario.diagnosis.hits import Words
from pario.diagnosis.library_records import per_rank

if TYPE_CHECKING:
    from pario.diagnosis.facts import Facts
    from pario.diagnosis.libraries import (
        Amplification,
        CollectiveBroken,
        IndependentTransfers,
        MetadataDominates,
        NoAlignment,
        SmallChunks,
    )


def hdf5_small_chunks(hit: SmallChunks, facts: Facts, cfg: RuleConfig) -> Words:
    subjects = [
        Subject(
            "dataset",
            s.name,
            (
                Metric("chunk_bytes", "chunk size", s.chunk, "B"),
                Metric("reference", s.what, s.reference, "B"),
                Metric("chunks_per_transfer", "chunks per transfer (at least)", s.transfer / s.chunk, "x"),
                Metric("time", "read + write time (summed over ranks)", s.time, "s"),
            ),
            hex_id(s.did),
        )
        for s in hit.datasets
    ]
    assert hit.worst is not None
    w = hit.worst
    ratio, shape, ref, what, name = w.chunk / w.reference, list(w.shape), w.reference, w.what, w.name
    scale = max(int(round((ref / w.chunk) ** (1.0 / len(shape)))), 2)
    better = [d_ * scale for d_ in shape]
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
    evidence = [
        Metric("datasets", "datasets with small chunks", len(subjects), "count"),
        Metric("chunk_ratio", f"smallest chunk / {what}", ratio, "share"),
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis="upper bound: the mean per-rank read and write time of these datasets",
        subjects=subjects,
    )


def hdf5_no_alignment(hit: NoAlignment, facts: Facts, cfg: RuleConfig) -> Words:
    stripe_size = hit.stripe_size
    subjects = [
        file_subject(
            f.name,
            f.fid,
            Metric("bytes", "bytes through HDF5", f.bytes, "B"),
            Metric("stripe_size", "stripe size", float(f.stripe.stripe_size) if f.stripe else None, "B"),
        )
        for f in hit.files
    ]
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
    evidence = [
        Metric("files", "HDF5 files without alignment", len(subjects), "count"),
        Metric("alignment", "H5F_ALIGNMENT", 1, "B"),
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis="not estimated: what the change saves depends on the file system",
        subjects=subjects,
    )


def independent_transfers(hit: IndependentTransfers, facts: Facts, cfg: RuleConfig) -> Words:
    libs = hit.libraries
    subjects = [
        Subject(
            o.kind,
            o.name,
            (
                Metric("ranks", "ranks", o.ranks, "count"),
                Metric("transfers", "independent transfers", o.transfers, "count"),
                Metric("bytes", "bytes", o.bytes, "B"),
                Metric("time", "read + write time (summed)", o.time, "s"),
            ),
            hex_id(o.oid),
        )
        for o in hit.objects
    ]
    statement = (
        f"{len(subjects)} dataset{'s' if len(subjects) > 1 else ''} or "
        f"variable{'s' if len(subjects) > 1 else ''} ({', '.join(libs)}; "
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
    # pario tune leaves hdf5.transfer out of its default space (forcing collective transfers can
    # deadlock a program whose transfers are not made by every rank): the trial above tries it
    recs.append(
        autotune(facts, "the MPI-IO hints for these files (hdf5.transfer only with a --space file that "
                 "adds it)", [s.name.split(":")[0] for s in subjects])
    )
    evidence = [
        Metric("objects", "datasets/variables with independent transfers only", len(subjects), "count")
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis="upper bound: the mean per-rank read and write time of these datasets/variables",
        subjects=subjects,
    )


#: What a library's metadata calls are, by library.
_METADATA_CALLS = {
    "HDF5": "file, dataset, group and attribute calls",
    "PnetCDF": "create/open/redef/enddef/sync/close and def_var",
}


def metadata_dominates(hit: MetadataDominates, facts: Facts, cfg: RuleConfig) -> Words:
    lib, meta, data = hit.library, hit.meta, hit.data
    total = meta + data
    lost = hit.time_lost
    statement = (
        f"{lib} metadata ({_METADATA_CALLS[lib]}) takes {fmt.pct(meta / total)} of the time in {lib} calls: "
        f"{fmt.seconds(lost)} per rank, against {fmt.seconds(per_rank(facts, data))} reading and writing "
        f"data ({fmt.count(hit.opens)} file creates/opens over {fmt.count(hit.records)} file records)."
    )
    if lib == "HDF5":
        recs = []
        if hit.chunked:
            statement += (
                " With chunked datasets, H5Dcreate also writes the fill values of every chunk "
                "(parallel HDF5 allocates them all there) and H5Dclose writes the chunks still in "
                "the chunk cache: that data movement counts here."
            )
            recs.append(Recommendation(
                "code", "When every element is written anyway, skip the fill values at H5Dcreate:",
                "H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);"))
        if hit.flushes > 0 and hit.fsyncs > 0:
            statement += (
                f" The {fmt.count(hit.flushes)} H5Fflush/H5Dflush calls count here too, and a flush "
                "writes the cached raw data and syncs the file to storage (" + fmt.count(hit.fsyncs)
                + " fsync calls beneath): that is data movement and a wait for the disk, not metadata."
            )
            recs.append(Recommendation(
                "code", "Flush only where the data must be on storage (a checkpoint's end), not after "
                "each write: H5Fclose flushes anyway."))
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
        if hit.redefs:
            statement += f" The run re-enters define mode {fmt.count(hit.redefs)} times."
    recs.append(
        autotune(facts, f"the {lib} metadata settings with the MPI-IO hints", objective="io-time")
    )
    evidence = [
        Metric("meta_share", f"{lib} metadata time / {lib} time", meta / total, "share"),
        Metric("meta_time", "metadata time per rank", lost, "s"),
        Metric("data_time", "data time per rank", per_rank(facts, data), "s"),
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis="upper bound: the mean per-rank metadata time in the library",
    )


def _times(x: float) -> str:
    """A ratio as '2.2x' or '1,593x'."""
    return f"{x:,.0f}x" if x >= 10 else f"{x:.1f}x"


def amplification(hit: Amplification, facts: Facts, cfg: RuleConfig) -> Words:
    asked_total, moved_total = hit.asked, hit.moved
    subjects = []
    for f in hit.files:
        metrics = [
            Metric("asked", "bytes asked", f.asked, "B"),
            Metric("moved", "bytes moved beneath", f.moved, "B"),
            Metric("ratio", "moved / asked", f.moved / f.asked, "x"),
        ]
        if f.chunked is not None:
            metrics.append(Metric("chunked", "full size of the chunked datasets", f.chunked, "B"))
        subjects.append(Subject("file", f.name, tuple(metrics)))
    fill = [f.name for f in hit.files if f.chunked is not None]
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
    evidence = [
        Metric("asked", "bytes asked", asked_total, "B"),
        Metric("moved", "bytes moved beneath", moved_total, "B"),
        Metric("ratio", "moved / asked", moved_total / asked_total, "x"),
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis="not estimated: the extra bytes cost part of the library time (the Libraries table)",
        subjects=subjects,
    )


#: What HDF5 reports after a transfer: whether it was collective, and why not.
_ASK_HDF5 = (
    "H5D_mpio_actual_io_mode_t mode;\n"
    "uint32_t local_cause, global_cause;\n"
    "H5Pget_mpio_actual_io_mode(dxpl, &mode);  /* after H5Dwrite(..., dxpl, ...) */\n"
    "H5Pget_mpio_no_collective_cause(dxpl, &local_cause, &global_cause);"
)


def collective_not_done(hit: CollectiveBroken, facts: Facts, cfg: RuleConfig) -> Words:
    top = hit.files[0]
    call = "H5Dwrite" if top.kind == "write" else "H5Dread"
    more = f" ({len(hit.files) - 1} more file(s) or direction(s) likewise)" if len(hit.files) > 1 else ""
    statement = (
        f"The program asks HDF5 for collective transfers in {fmt.count(top.asked)} of its "
        f"{fmt.count(top.calls)} {call} calls on {top.name}, but the MPI-IO {top.kind}s beneath are "
        f"independent ({fmt.count(top.independent)} independent, {fmt.count(top.collective)} collective)"
        f"{more}: HDF5 broke collective I/O, so MPI-IO could not merge the ranks' requests into large "
        "ones. Asking again (H5Pset_dxpl_mpio) changes nothing: what breaks it must go."
    )
    evidence = [
        Metric("asked", f"{call} calls asking for collective I/O", top.asked, "count"),
        Metric("calls", f"{call} calls", top.calls, "count"),
        Metric("independent", f"independent MPI-IO {top.kind}s beneath", top.independent, "count"),
        Metric("collective", f"collective MPI-IO {top.kind}s beneath", top.collective, "count"),
        Metric("time_at_stake", f"slowest rank's MPI-IO {top.kind} time on these files", hit.time_lost, "s"),
    ]
    recs = [
        Recommendation(
            "investigate",
            (
                "Ask HDF5 why, after one of these transfers: H5Pget_mpio_no_collective_cause gives the "
                "cause (on the rank, and on any rank). The usual ones: a datatype conversion (the "
                "memory type is not the file's: give H5Dwrite the dataset's own type), a point or "
                "irregular selection, a chunked dataset with filters (HDF5 before 1.10.2), a data "
                "transform, or a file opened without the MPI-IO driver on some rank. The calls, with the "
                "transfer list given to the transfer:"
            ),
            _ASK_HDF5,
        ),
    ]
    subjects = [
        file_subject(f.name, f.fid, Metric("asked", f"{f.kind}s asking for collective I/O", f.asked, "count"),
                     Metric("independent", f"independent MPI-IO {f.kind}s", f.independent, "count"))
        for f in hit.files
    ]
    return Words(statement, evidence, recs,
                 time_basis="upper bound: the slowest rank's MPI-IO time in these directions on these files; "
                 "collective I/O saves part of it", subjects=subjects)

