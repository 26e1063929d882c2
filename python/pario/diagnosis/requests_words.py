"""The words of the request-shape rules (requests.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, file_subject
from pario.diagnosis.hits import Hit, Words

if TYPE_CHECKING:
    from pario.diagnosis.facts import Facts
    from pario.diagnosis.layout import Layout
    from pario.diagnosis.requests import (
        LatencyBound,
        LibrarySmall,
        Misaligned,
        RandomAccess,
        Redundant,
        RedundantFile,
        Small,
    )

FIX_RANDOM = {
    "read": "read the whole region in large blocks and pick the pieces in memory",
    "write": "assemble them in memory and write whole regions",
}
LAYER_NAMES = {"mpiio": "MPI-IO"}  # the others: upper case
UPPER_SMALL = (
    "upper bound: the slowest rank's time in the small {kind}s (each file's {kind} time x its share of "
    "small {kind}s); larger requests would save part of it"
)


def _lost(hit: Hit) -> float:
    """The hit's time at stake (every hit of these rules has one)."""
    return hit.time_lost if hit.time_lost is not None else 0.0


def small(hit: Small, facts: Facts, cfg: RuleConfig) -> Words:
    kind, lib, lost = hit.kind, hit.library, _lost(hit)
    n_small, n_total, total_bytes, bound_bytes = hit.small, hit.requests, hit.bytes, hit.small_bytes_max
    share = n_small / n_total
    bytes_share = bound_bytes / total_bytes if total_bytes > 0 else 1.0
    mean_size = total_bytes / n_total if n_total else 0.0
    subjects = [
        file_subject(
            f.name,
            f.fid,
            Metric(f"small_{kind}s", f"{kind}s {cfg.small_label()}", int(f.small), "count"),
            Metric(
                "share_of_requests",
                f"share of the file's {kind}s",
                float(f.small / f.total) if f.total else 0.0,
                "share",
            ),
            Metric(
                "mean_request",
                f"mean {kind} size",
                float(f.bytes / f.total) if f.total else 0.0,
                "B",
            ),
            Metric("time", f"time in small {kind}s (all ranks)", float(f.time), "s"),
        )
        for f in hit.files
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
        statement += " " + _library_statement(lib, kind)
    evidence = [
        Metric(f"small_{kind}s", f"{verb} {cfg.small_label()}", int(n_small), "count"),
        Metric(f"all_{kind}s", f"all {verb} (file-system level)", int(n_total), "count"),
        Metric("share_of_requests", f"small {verb} / all {verb}", share, "share"),
        Metric("small_bytes_max", f"bytes moved by small {verb} (at most)", bound_bytes, "B"),
        Metric("share_of_bytes_max", "share of the bytes (at most)", bytes_share, "share"),
        Metric("mean_request", f"mean {kind} size", mean_size, "B"),
        Metric("time_at_stake", f"slowest rank's time in small {verb}", lost, "s", approximate=not hit.exact),
    ]
    if lib is not None:
        evidence.append(Metric(f"library_small_{kind}s", f"small {verb} beneath {_library_what(lib)}",
                               int(lib.small), "count"))
    return Words(
        statement,
        evidence,
        _small_recs(hit, verb),
        time_basis=UPPER_SMALL.format(kind=kind),
        subjects=subjects,
        subjects_total=hit.nfiles,
    )


def _small_recs(hit: Small, verb: str) -> list[Recommendation]:
    kind, lib, n_small = hit.kind, hit.library, hit.small
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
    if (lib is None or lib.small < n_small) and hit.independent_mpiio:
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
        recs.extend(_library_recs(lib, kind))
    if hit.hdf5:
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
    return recs


def _library_what(lib: LibrarySmall) -> str:
    return f"{' and '.join(lib.libraries)} file{'s' if lib.files > 1 else ''} with large application requests"


def _library_statement(lib: LibrarySmall, kind: str) -> str:
    req, libs = lib.requests, lib.libraries
    lib_text = " and ".join(libs)
    call = {"HDF5": f"H5D{kind}", "PnetCDF": "ncmpi_put_*" if kind == "write" else "ncmpi_get_*"}[req.library]
    own = {"HDF5": f"HDF5's own metadata {kind}s (superblock, object headers, heaps, B-trees)",
           "PnetCDF": f"PnetCDF's own header {kind}s (dimensions, attributes, variables, record count)"}
    return (
        f"{fmt.count(lib.small)} of the small {kind}s are beneath {lib.files} {lib_text} "
        f"file{'s' if lib.files > 1 else ''} (e.g. {lib.example}) whose application {kind}s through the "
        f"library are large ({fmt.count(req.calls)} {call} calls, {fmt.nbytes(req.nbytes / req.calls)} on "
        "average): "
        f"they are {' and '.join(own[x] for x in libs)}, not the application's data."
    )


def _library_recs(lib: LibrarySmall, kind: str) -> list[Recommendation]:
    recs: list[Recommendation] = []
    if lib.hdf5_mpiio:
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
    if "PnetCDF" in lib.libraries:
        recs.append(Recommendation(
            "code",
            "PnetCDF's header is written by rank 0 at ncmpi_enddef and ncmpi_close (and read at "
            "ncmpi_open): define every dimension, variable and attribute before one ncmpi_enddef, and "
            "avoid ncmpi_redef and ncmpi_sync in loops.",
        ))
    return recs


def misaligned(hit: Misaligned, facts: Facts, cfg: RuleConfig) -> Words:
    n_bad, n_all, aligns, stripes = hit.misaligned, hit.requests, hit.alignments, hit.stripes
    subjects = [
        file_subject(
            f.name,
            f.fid,
            Metric("misaligned", "requests not aligned", int(f.misaligned), "count"),
            Metric(
                "share",
                "share of the file's requests",
                float(f.misaligned / f.requests) if f.requests else 0.0,
                "share",
            ),
            Metric("alignment", "alignment (file system block)", f.alignment, "B"),
            *(
                [Metric("stripe_size", "stripe size", stripes[f.fid], "B")]
                if f.fid in stripes
                else []
            ),
            Metric("mean_request", "mean request size", float(f.mean), "B"),
        )
        for f in hit.files
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
        which = "The files are" if len(stripes) == hit.nfiles else f"{len(stripes)} of the files are"
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
            _lost(hit),
            "s",
            approximate=not hit.exact,
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
    if hit.layout is not None:
        recs.append(_striping(hit.layout))
    return Words(
        statement,
        evidence,
        recs,
        time_basis=(
            "upper bound: the slowest rank's read and write time on these files x the misaligned share; "
            "aligning saves part of it"
        ),
        subjects=subjects,
        subjects_total=hit.nfiles,
    )


def _striping(layout: Layout) -> Recommendation:
    """The recommended layout of the costliest Lustre file (the same command as LUSTRE-STRIPE-SIZE's)."""
    base = layout.name.rsplit("/", 1)[-1]
    return Recommendation(
        "striping",
        f"Or give {base} a stripe size its {fmt.nbytes(layout.request)} requests fit (the "
        "layout LUSTRE-STRIPE-SIZE recommends; set on the directory before the file is created):",
        layout.command(),
    )


def _random_mpiio_recs(facts: Facts, kind: str) -> list[Recommendation]:
    """MPI-IO's way to order scattered pieces; the collective call only when several ranks can share it."""
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


def random_access(hit: RandomAccess, facts: Facts, cfg: RuleConfig) -> Words:
    kind, n_back, n_all, lost = hit.kind, hit.backward, hit.requests, _lost(hit)
    verb = f"{kind}s"
    subjects = [
        file_subject(
            f.name,
            f.fid,
            Metric("backward", f"{verb} going backwards", int(f.backward), "count"),
            Metric(
                "share",
                f"share of the file's {verb}",
                float(f.backward / f.requests) if f.requests else 0.0,
                "share",
            ),
            Metric("time", "time in them (all ranks)", float(f.time), "s"),
        )
        for f in hit.files
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
            "time_at_stake", f"slowest rank's time in random {verb}", lost, "s", approximate=not hit.exact
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
        *(_random_mpiio_recs(facts, kind) if hit.mpiio else []),
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis=(
            f"upper bound: the slowest rank's {kind} time on these files x the share of backward {verb}"
        ),
        subjects=subjects,
        subjects_total=hit.nfiles,
    )


def redundant(hit: Redundant, facts: Facts, cfg: RuleConfig) -> Words:
    kind, extra, lost = hit.kind, hit.extra, _lost(hit)
    verb = "read" if kind == "read" else "written"
    subjects = [
        file_subject(
            f.name,
            f.fid,
            Metric("bytes", f"bytes {verb}", float(f.bytes), "B"),
            Metric("extent", "distinct bytes (highest offset + 1)", float(f.extent), "B"),
            Metric("factor", f"times each byte is {verb}", float(f.factor), "x"),
            Metric("ranks", "ranks", int(f.ranks), "count"),
            *_sharing_metrics(f),
        )
        for f in hit.files[: cfg.top_subjects]
    ]
    top = hit.files[0]
    by = f", by {fmt.count(float(top.ranks))} ranks" if top.ranks >= 2 else ""
    if top.ranks >= 2 and top.sharing is not None and top.sharing.across == 0:
        by += ", each re-reading only bytes of its own: the trace shows no byte read by two ranks"
    statement = (
        f"{fmt.nbytes(extra)} are {verb} more than once: {hit.nfiles} file(s) are {verb} on average "
        f"{fmt.times(float(hit.factor))} over (largest: {top.name}, "
        f"{fmt.times(float(top.factor))}{by})."
    )
    if top.hdf5_self_reads:
        statement += " " + _hdf5_self_read_cause(top, kind)
    evidence = [
        Metric("repeated_bytes", f"bytes {verb} beyond each file's extent", extra, "B"),
        Metric("files", "files", hit.nfiles, "count"),
        Metric("files_across_ranks", "of which shared by several ranks", hit.shared, "count"),
        Metric("time_at_stake", f"slowest rank's time in repeated {kind}s", lost, "s"),
    ]
    return Words(
        statement,
        evidence,
        _redundant_recs(hit),
        subjects=subjects,
        subjects_total=hit.nfiles,
        time_basis=(
            f"upper bound: the slowest rank's {kind} time on these files x the share of bytes {verb} beyond "
            "the extent"
        ),
    )


def _sharing_metrics(f: RedundantFile) -> tuple[Metric, ...]:
    if f.sharing is None:
        return ()
    return (
        Metric("read_by_several", "bytes read by two ranks or more (trace)", float(f.sharing.across), "B"),
        Metric("read_back", "bytes read by the rank that wrote them (trace)", float(f.sharing.own_written),
               "B"),
    )


def _hdf5_self_read_cause(f: RedundantFile, kind: str) -> str:
    """Why an HDF5 file the program only writes is read (and written) over and over."""
    own = ""
    if f.sharing is not None and f.sharing.read and f.sharing.own_written >= 0.9 * f.sharing.read:
        own = ", each rank reading back the elements it writes"
    said = (f"The program calls H5Dwrite on {f.name} and never H5Dread: these reads are HDF5's own, made "
            f"inside H5Dwrite{own}." if kind == "read" else
            f"HDF5 also reads {f.name} inside these H5Dwrite calls (the program calls no H5Dread on it).")
    return (said + " HDF5 does that when a write does not cover whole elements: with a compound memory type "
            "of only some of the members, it reads the elements back, fills in the members given and writes "
            "the elements whole (a read-modify-write per H5Dwrite).")


#: HDF5 writes of whole elements instead of a few members each
_WHOLE_ELEMENTS = Recommendation(
    "code",
    (
        "Write whole elements: one H5Dwrite whose memory type holds every member of the compound type "
        "(or one dataset per member), so that HDF5 writes each element once and reads nothing back."
    ),
    (
        "hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(struct particle));\n"
        "H5Tinsert(t, \"x\", HOFFSET(struct particle, x), H5T_NATIVE_DOUBLE); /* ... every member */\n"
        "H5Dwrite(dset, t, memspace, filespace, dxpl, particles);"
    ),
)


def _redundant_recs(hit: Redundant) -> list[Recommendation]:
    if all(f.hdf5_self_reads for f in hit.files):
        return [_WHOLE_ELEMENTS]
    recs = []
    if hit.kind == "read":
        # ranks re-reading only their own bytes (the trace says so for every file shown)
        own_only = all(f.sharing is not None and f.sharing.across == 0 for f in hit.files)
        if hit.shared and not own_only:
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
        if hit.single or own_only:
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
    return recs


def latency_bound(hit: LatencyBound, facts: Facts, cfg: RuleConfig) -> Words:
    lost = _lost(hit)
    subjects = [
        file_subject(
            f.name,
            f.fid,
            Metric("layer", "layer", LAYER_NAMES.get(f.layer, str(f.layer).upper()), "text"),
            Metric("bytes", "bytes moved", float(f.bytes), "B"),
            Metric("time", "I/O time (all ranks)", float(f.time), "s"),
            Metric("rate", "bytes / slowest rank's time on it", float(f.rate), "B/s"),
            Metric("requests", "read and write calls", int(f.ops), "count"),
            Metric("flushes", "flush / sync calls", int(f.flushes), "count"),
            Metric(
                "meta_time", "of which metadata (open, close, flush, seek...)", float(f.meta_time), "s"
            ),
        )
        for f in hit.files[: cfg.top_subjects]
    ]
    top = hit.files[0]
    who = f"rank {int(top.rank)}" if top.rank >= 0 else "the slowest rank"
    statement = (
        f"{hit.nfiles} file(s) move data at under {fmt.rate(cfg.latency_max_rate)} while taking time: "
        f"{top.name} costs {who} {fmt.seconds(float(top.max_rank))} for "
        f"{fmt.nbytes(float(top.bytes))} "
        f"({fmt.rate(float(top.rate))}, {fmt.count(float(top.ops))} "
        f"calls{', ' + fmt.count(float(top.flushes)) + ' flushes/syncs' if top.flushes else ''})."
    )
    evidence = [
        Metric("files", "latency-bound files", hit.nfiles, "count"),
        Metric("bytes", "bytes they move", hit.bytes, "B"),
        Metric("time", "their I/O time (all ranks)", hit.time, "s"),
        Metric("time_at_stake", "largest time one rank spends on one of them", lost, "s"),
    ]
    recs = []
    if hit.flushes > 0:
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
    if hit.meta_time > 0.5 * hit.time:
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
    return Words(
        statement,
        evidence,
        recs,
        subjects=subjects,
        subjects_total=hit.nfiles,
        time_basis="upper bound: the largest time one rank spends on one of these files",
    )
