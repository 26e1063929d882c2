"""The words of the interface rules (interfaces.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.commands import autotune, tune_command
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, file_subject
from pario.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.diagnosis.facts import Facts
    from pario.diagnosis.interfaces import (
        FilePerProcess,
        IndependentShared,
        MetadataHeavy,
        StdioBulk,
    )


def independent_shared(hit: IndependentShared, facts: Facts, cfg: RuleConfig) -> Words:
    files = hit.files
    n_indep = sum(f.independent for f in files)
    subjects = [
        file_subject(
            f.name,
            f.fid,
            Metric("direction", "direction", f.kind + "s", "text"),
            Metric("independent", f"independent {f.kind}s", int(f.independent), "count"),
            Metric("share", f"share of the file's {f.kind}s", f.independent / f.calls, "share"),
            Metric("mean_request", "mean request size", f.mean, "B"),
            Metric("ranks", "ranks sharing the file", f.ranks, "count"),
            Metric("noncontig_view", "non-contiguous file view", "yes" if f.noncontig else "no", "text"),
        )
        for f in files
    ]
    top = files[0]
    statement = (
        f"{top.ranks} ranks access {top.name} with independent MPI-IO {top.kind}s "
        f"({fmt.count(top.independent)} calls, mean "
        f"{fmt.nbytes(top.mean)}{', non-contiguous view' if top.noncontig else ''}): each rank's pieces "
        "reach the file system separately, where collective I/O would merge them into large contiguous "
        "requests."
    )
    evidence = [
        Metric("files", "shared files accessed independently", len({f.fid for f in files}), "count"),
        Metric("independent", "independent requests on them", int(n_indep), "count"),
        Metric("mean_request", "mean request size (largest file)", top.mean, "B"),
        Metric(
            "time_at_stake",
            "slowest rank's time in these independent calls",
            hit.time_lost,
            "s",
            approximate=not hit.exact,
        ),
    ]
    k = top.kind
    recs = [
        Recommendation(
            "code",
            (
                f"Use the collective form of the call on every rank (MPI_File_{k}_at_all, or "
                f"MPI_File_set_view with a datatype describing each rank's pieces and one MPI_File_{k}_all): "
                "the MPI-IO layer then exchanges data so that a few aggregators issue large contiguous "
                "requests."
            ),
            f"MPI_File_{k}_at_all(fh, offset, buf, count, datatype, MPI_STATUS_IGNORE);",
        ),
        Recommendation(
            "hint", "Keep collective buffering on for these calls (ROMIO):", f"romio_cb_{k} enable"
        ),
        Recommendation(
            "tune",
            "Compare independent and collective settings on this run (one hints file per trial):",
            tune_command(facts),
        ),
        autotune(
            facts,
            f"the I/O component and ROMIO's data sieving (romio_ds_{k}), which act on independent calls,",
            [top.name],
            f"{k}-bw",
        ),
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis=(
            "upper bound: the slowest rank's time in the independent calls on these files (collective I/O "
            "replaces it by a shorter exchange + write)"
        ),
        subjects=subjects,
        subjects_total=len(files),
    )


def file_per_process(hit: FilePerProcess, facts: Facts, cfg: RuleConfig) -> Words:
    nfiles, owners, lost = hit.files, hit.owners, hit.time_lost or 0.0
    statement = (
        f"{owners} ranks each write their own files: {fmt.count(nfiles)} files in all "
        f"({fmt.plain(nfiles / max(owners, 1))} per rank). Every file costs creates, opens and closes on the "
        "metadata servers, which all jobs share; at this scale that load slows this job and others (the "
        f"slowest rank spends {fmt.seconds(lost)} in metadata calls on them)."
    )
    evidence = [
        Metric("files", "files written by a single rank", nfiles, "count"),
        Metric("ranks", "ranks writing their own files", owners, "count"),
        Metric(
            "metadata_ops",
            "metadata calls on them (open, stat, seek, ...)",
            hit.metadata_ops,
            "count",
        ),
        Metric("metadata_time", "metadata time on them (all ranks)", hit.metadata_time, "s"),
        Metric("time_at_stake", "slowest rank's metadata time on them", lost, "s"),
    ]
    recs = [
        Recommendation(
            "code",
            (
                "Write one shared file (MPI-IO collective writes at each rank's offset, or HDF5 / PnetCDF / "
                "ADIOS2 on top of it), or group the ranks: one file per node or per group of ranks written "
                "through MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) sub-communicators."
            ),
            "MPI_Comm node;\nMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, "
            "MPI_INFO_NULL, &node);\n/* one file per node, written collectively on `node` */",
        ),
    ]
    if hit.lustre:
        recs.append(Recommendation(
            "striping",
            "If files per process stay, keep each one on a single OST:",
            f"lfs setstripe -c 1 {hit.directory}",
        ))
    return Words(
        statement,
        evidence,
        recs,
        time_basis=(
            "upper bound: the slowest rank's metadata time on these files (the load on the shared metadata "
            "servers, which slows other jobs too, is not counted)"
        ),
        subjects=(),
        subjects_total=nfiles,
    )


def stdio_bulk(hit: StdioBulk, facts: Facts, cfg: RuleConfig) -> Words:
    s_bytes, total, mean_call = hit.bytes, hit.total, hit.mean_call
    subjects = [
        file_subject(
            f.name,
            f.fid,
            Metric("bytes", "bytes", f.bytes, "B"),
            Metric("calls", "fread/fwrite calls", f.calls, "count"),
            Metric("time", "time (all ranks)", f.time, "s"),
            Metric("ranks", "ranks", f.ranks, "count"),
        )
        for f in hit.files
    ]
    statement = (
        f"{fmt.nbytes(s_bytes)} ({fmt.pct(s_bytes / total)} of all data) go through STDIO streams (fwrite, "
        f"fread, fprintf) in {hit.nfiles} file(s), {fmt.nbytes(mean_call)} per call on average"
    )
    if hit.buffered:
        statement += (
            ": calls this small are copied through the stream's buffer and reach the file system "
            f"{fmt.nbytes(cfg.stdio_buffered_call_bytes)} at a time, and streams have no offsets or parallel "
            "semantics for data several ranks share."
        )
    else:
        statement += (
            ": calls this large pass almost straight to write(), so STDIO costs little speed here; but "
            "streams have no offsets, no sharing between ranks and no MPI-IO hints, which rules out "
            "collective or tuned I/O for this data."
        )
    evidence = [
        Metric("stdio_bytes", "bytes through STDIO", s_bytes, "B"),
        Metric("share", "share of all bytes", s_bytes / total, "share"),
        Metric("files", "STDIO files with data", hit.nfiles, "count"),
        Metric("mean_call", "mean bytes per fread/fwrite call", mean_call, "B"),
        Metric("time_at_stake", "slowest rank's STDIO time", hit.at_stake, "s", approximate=not hit.exact),
    ]
    recs = [
        Recommendation(
            "code",
            (
                "Write bulk data with write()/pwrite() of large blocks (or MPI-IO for data several ranks "
                "share); keep STDIO for text and small logs."
            ),
            "ssize_t n = pwrite(fd, buf, nbytes, offset);  /* instead of fwrite(buf, 1, nbytes, fp) */",
        ),
        Recommendation(
            "code",
            "If the stream stays, give it a large buffer before the first write:",
            "setvbuf(fp, NULL, _IOFBF, 4 << 20);",
        ),
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis=(
            "upper bound: the slowest rank's time in STDIO calls (a faster interface saves part of it)"
            if hit.buffered
            else "not estimated: with calls this large, replacing STDIO by write() saves little time"
        ),
        subjects=subjects,
        subjects_total=hit.nfiles,
    )


def metadata_heavy(hit: MetadataHeavy, facts: Facts, cfg: RuleConfig) -> Words:
    lost, nfiles, nbytes = hit.time_lost or 0.0, hit.nfiles, hit.bytes
    mib = max(nbytes / (1 << 20), 1e-9)
    statement = (
        f"Metadata calls take {fmt.pct(hit.share)} of the I/O time: the slowest rank spends "
        f"{fmt.seconds(lost)} in opens, stats, seeks, closes and syncs ({fmt.count(hit.opens)} opens "
        f"and {fmt.count(hit.stats)} stats on {nfiles} file{'' if nfiles == 1 else 's'} for "
        f"{fmt.nbytes(nbytes)} of data)."
    )
    evidence = [
        Metric("meta_share", "metadata time / I/O time", hit.share, "share"),
        Metric("max_meta", "slowest rank's metadata time", lost, "s", approximate=not hit.exact),
        Metric("opens", "opens", hit.opens, "count"),
        Metric("stats", "stats", hit.stats, "count"),
        Metric("seeks", "seeks", hit.seeks, "count"),
        Metric("syncs", "flushes and syncs", hit.syncs, "count"),
        Metric("opens_per_mib", "opens per MiB moved", hit.opens / mib, ""),
        Metric("files", "files with metadata calls", nfiles, "count"),
        Metric("bytes", "bytes moved", nbytes, "B"),
    ]
    subjects = [
        file_subject(
            f.name,
            f.fid,
            Metric("meta_time", "metadata time (all ranks)", f.time, "s"),
            Metric("meta_ops", "metadata calls", f.calls, "count"),
        )
        for f in hit.files
    ]
    recs = [
        Recommendation(
            "code",
            (
                "Open each file once and keep it open across time steps; use pread/pwrite with explicit "
                "offsets instead of lseek + read/write; do not stat files to test for existence in loops; "
                "merge many small files into one (or a few) larger files."
            ),
        )
    ]
    if hit.syncs > hit.opens:
        recs.append(Recommendation("code", "Sync and flush only at checkpoints, not after every write."))
    return Words(
        statement,
        evidence,
        recs,
        time_basis="upper bound: the slowest rank's metadata time",
        subjects=subjects,
        subjects_total=nfiles,
    )
