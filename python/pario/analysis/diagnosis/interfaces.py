"""Interface rules: independent MPI-IO on shared files, file per process, STDIO bulk data, metadata load."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

import pario.analysis.diagnosis._fmt as fmt
from pario.analysis.diagnosis._frames import isin, per_file, sort_order
from pario.analysis.diagnosis.commands import autotune, tune_command
from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.diagnosis.facts import (
    Facts,
    counter,
    hex_id,
    layer_counter,
    layer_ops,
    layer_values,
    mpiio_files,
    nranks,
    ops,
    outer_unique,
    stake,
    stake_rows,
)
from pario.analysis.diagnosis.findings import Finding, Metric, Recommendation, Severity, Subject
from pario.analysis.diagnosis.registry import finding, rule

FAMILY = "interfaces"


@rule(
    "IFACE-INDEPENDENT-SHARED",
    title="Independent MPI-IO on a shared file where collective I/O would merge requests",
    family=FAMILY,
    config=("independent_min_share", "independent_min_requests", "collective_max_request_bytes"),
)
def independent_shared(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Ranks access a shared file with independent MPI-IO calls in pieces that collective I/O would merge."""
    files = mpiio_files(facts)
    if not len(files):
        return
    rows = []
    cand = files[
        (files["ranks"] >= 2)
        & ((files["indep_writes"] + files["indep_reads"]) >= cfg.independent_min_requests)
    ]
    for r in cand.rows():
        fid = r["id"]
        for kind in ("write", "read"):
            indep = float(r[f"indep_{kind}s"])
            alln = indep + float(r[f"coll_{kind}s"]) + float(r[f"other_{kind}s"])
            nbytes = float(r["bytes_written" if kind == "write" else "bytes_read"])
            if alln <= 0 or indep < cfg.independent_min_requests or indep / alln < cfg.independent_min_share:
                continue
            mean = nbytes / alln
            if mean >= cfg.collective_max_request_bytes and not r["noncontig"]:
                continue
            rows.append(
                (
                    int(fid),
                    str(r["name"]),
                    kind,
                    indep,
                    alln,
                    mean,
                    bool(r["noncontig"]),
                    int(r["ranks"]),
                    float(r[f"{kind}_time"]) * indep / alln,
                )
            )
    if not rows:
        return
    rows.sort(key=lambda x: x[8], reverse=True)
    m = facts.layer("mpiio")
    ids = {fid for fid, *_ in rows}
    kinds = {k for _, _, k, *_ in rows}
    m_ids = np.asarray(m["id"])
    sel = isin(m_ids, np.array(sorted(ids), dtype=m_ids.dtype))
    allops = {k: ops(m, "mpiio", k) for k in ("read", "write")}
    w = {
        k: np.where(allops[k][sel] > 0, counter(m, f"indep_{k}s")[sel] / np.maximum(allops[k][sel], 1.0), 0.0)
        for k in kinds
    }
    st = stake(facts, "mpiio", m[sel], w)
    n_indep = sum(x[3] for x in rows)
    subjects = [
        Subject(
            "file",
            name,
            (
                Metric("direction", "direction", kind + "s", "text"),
                Metric("independent", f"independent {kind}s", int(indep), "count"),
                Metric("share", f"share of the file's {kind}s", indep / alln, "share"),
                Metric("mean_request", "mean request size", mean, "B"),
                Metric("ranks", "ranks sharing the file", ranks, "count"),
                Metric("noncontig_view", "non-contiguous file view", "yes" if nc else "no", "text"),
            ),
            hex_id(fid),
        )
        for fid, name, kind, indep, alln, mean, nc, ranks, _ in rows
    ]
    top = rows[0]
    statement = (
        f"{top[7]} ranks access {top[1]} with independent MPI-IO {top[2]}s ({fmt.count(top[3])} calls, mean "
        f"{fmt.nbytes(top[5])}{', non-contiguous view' if top[6] else ''}): each rank's pieces reach the "
        "file system separately, where collective I/O would merge them into large contiguous requests."
    )
    evidence = [
        Metric("files", "shared files accessed independently", len({x[0] for x in rows}), "count"),
        Metric("independent", "independent requests on them", int(n_indep), "count"),
        Metric("mean_request", "mean request size (largest file)", top[5], "B"),
        Metric(
            "time_at_stake",
            "slowest rank's time in these independent calls",
            st.max,
            "s",
            approximate=not st.exact,
        ),
    ]
    k = top[2]
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
            [top[1]],
            f"{k}-bw",
        ),
    ]
    yield finding(
        "IFACE-INDEPENDENT-SHARED",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=st.max,
        subjects=subjects,
        subjects_total=len(rows),
        time_basis=(
            "upper bound: the slowest rank's time in the independent calls on these files (collective I/O "
            "replaces it by a shorter exchange + write)"
        ),
    )


@rule(
    "IFACE-FILE-PER-PROCESS",
    title="File per process at a scale where metadata load hurts",
    family=FAMILY,
    config=("fpp_min_files",),
)
def file_per_process(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Each rank writes its own files, and there are enough of them to load the metadata servers."""
    rows = []
    parts: list[tuple[str, np.ndarray | None, int]] = []
    for layer, frame in facts.outermost().items():
        if not len(frame):
            continue
        keep = facts.outer_rows(layer)

        def part(v: np.ndarray, keep: np.ndarray | None = keep) -> np.ndarray:
            return v if keep is None else v[keep]

        b = (part(layer_counter(facts, layer, "bytes_read"))
             + part(layer_counter(facts, layer, "bytes_written")))
        rows.append(
            {
                "id": part(layer_values(facts, layer, "id")),
                "rank": np.asarray(frame["rank"], dtype=np.int64),
                "bytes": b,
                "meta": part(layer_counter(facts, layer, "meta_time")),
                "opens": part(layer_ops(facts, layer, "meta")),
            }
        )
        parts.append((layer, keep, len(b)))
    if not rows:
        return
    all_ids = np.concatenate([r["id"] for r in rows])
    all_own = per_file(
        all_ids,
        {k: np.concatenate([r[k] for r in rows]) for k in rows[0] if k != "id"},
        {
            "rmin": ("rank", "min"),
            "rmax": ("rank", "max"),
            "bytes": ("bytes", "sum"),
            "meta": ("meta", "sum"),
            "opens": ("opens", "sum"),
        },
        unique=outer_unique(facts),
    )
    mine = (all_own["rmin"] >= 0) & (all_own["rmin"] == all_own["rmax"]) & (all_own["bytes"] > 0)
    own = all_own[mine]
    nfiles = len(own)
    owners = len(np.unique(own["rmin"])) if nfiles else 0
    if nfiles < cfg.fpp_min_files or owners < max(2, 0.5 * facts.nprocs):
        return
    # one record per file: the files are the records
    sel_all = mine if len(all_own) == len(all_ids) else isin(all_ids, own["id"])
    stakes = []
    start = 0
    for layer, keep, count in parts:
        sel = sel_all[start : start + count]
        start += count
        if sel.any():
            pos = np.flatnonzero(sel) if keep is None else np.flatnonzero(keep)[sel]
            stakes.append(stake_rows(facts, layer, pos, {"meta": 1.0}))
    per_rank = np.sum([s.per_rank for s in stakes], axis=0)
    lost = float(per_rank.max())
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
            float(own["opens"].sum()),
            "count",
        ),
        Metric("metadata_time", "metadata time on them (all ranks)", float(own["meta"].sum()), "s"),
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
        Recommendation(
            "striping",
            "If files per process stay, keep each one on a single OST:",
            "lfs setstripe -c 1 <output directory>",
        ),
    ]
    yield finding(
        "IFACE-FILE-PER-PROCESS",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=lost,
        floor=Severity.WARNING,
        subjects=(),
        subjects_total=nfiles,
        time_basis=(
            "upper bound: the slowest rank's metadata time on these files (the load on the shared metadata "
            "servers, which slows other jobs too, is not counted)"
        ),
    )


@rule(
    "IFACE-STDIO-BULK",
    title="STDIO used for bulk data",
    family=FAMILY,
    config=("stdio_bulk_min_bytes", "stdio_bulk_min_share", "stdio_buffered_call_bytes"),
)
def stdio_bulk(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Most of the data goes through fread/fwrite/fprintf streams."""
    stdio = facts.layer("stdio")
    if not len(stdio):
        return
    sb = counter(stdio, "bytes_read") + counter(stdio, "bytes_written")
    s_bytes = float(sb.sum())
    total = float(
        sum((counter(f, "bytes_read") + counter(f, "bytes_written")).sum()
            for f in facts.outermost().values())
    )
    if s_bytes < cfg.stdio_bulk_min_bytes or total <= 0 or s_bytes / total < cfg.stdio_bulk_min_share:
        return
    st = stake(facts, "stdio", stdio, {"read": 1.0, "write": 1.0, "meta": 1.0})
    per = per_file(
        np.asarray(stdio["id"]),
        {
            "name": np.asarray(stdio["name"]),
            "bytes": sb,
            "time": counter(stdio, "read_time") + counter(stdio, "write_time") + counter(stdio, "meta_time"),
            "ops": ops(stdio, "stdio", "read") + ops(stdio, "stdio", "write"),
            "ranks": nranks(stdio, facts.nprocs),
        },
        {
            "name": ("name", "first"),
            "bytes": ("bytes", "sum"),
            "time": ("time", "sum"),
            "ops": ("ops", "sum"),
            "ranks": ("ranks", "sum"),
        },
    )
    per = per[sort_order(per, "bytes")]
    per = per[per["bytes"] > 0]
    subjects = [
        Subject(
            "file",
            str(r["name"]),
            (
                Metric("bytes", "bytes", float(r["bytes"]), "B"),
                Metric("calls", "fread/fwrite calls", int(r["ops"]), "count"),
                Metric("time", "time (all ranks)", float(r["time"]), "s"),
                Metric("ranks", "ranks", int(r["ranks"]), "count"),
            ),
            hex_id(r["id"]),
        )
        for r in per.head(cfg.top_subjects).rows()  # the finding lists these; subjects_total counts all
    ]
    calls = float(per["ops"].sum())
    mean_call = s_bytes / calls if calls > 0 else 0.0
    buffered = mean_call < cfg.stdio_buffered_call_bytes
    statement = (
        f"{fmt.nbytes(s_bytes)} ({fmt.pct(s_bytes / total)} of all data) go through STDIO streams (fwrite, "
        f"fread, fprintf) in {len(per)} file(s), {fmt.nbytes(mean_call)} per call on average"
    )
    if buffered:
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
        Metric("files", "STDIO files with data", len(per), "count"),
        Metric("mean_call", "mean bytes per fread/fwrite call", mean_call, "B"),
        Metric("time_at_stake", "slowest rank's STDIO time", st.max, "s", approximate=not st.exact),
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
    yield finding(
        "IFACE-STDIO-BULK",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=st.max if buffered else None,
        subjects=subjects,
        subjects_total=len(per),
        severity=None if buffered else Severity.INFO,
        time_basis=(
            "upper bound: the slowest rank's time in STDIO calls (a faster interface saves part of it)"
            if buffered
            else "not estimated: with calls this large, replacing STDIO by write() saves little time"
        ),
    )


@rule(
    "IFACE-METADATA-HEAVY",
    title="Metadata-heavy I/O (opens, stats, seeks per byte moved)",
    family=FAMILY,
    config=("metadata_min_share_of_io", "metadata_min_calls", "metadata_min_time_share"),
)
def metadata_heavy(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Metadata calls take a large share of the I/O time."""
    t = facts.times
    T = facts.runtime
    io_total = float(t.io.sum())
    meta_total = float(t.io_meta.sum())
    if io_total <= 0 or T <= 0 or meta_total / io_total < cfg.metadata_min_share_of_io:
        return
    lost = float(t.io_meta.max())
    if lost < cfg.metadata_min_time_share * T:
        return
    counts = {"opens": 0.0, "stats": 0.0, "seeks": 0.0, "closes/flushes/syncs": 0.0}
    nbytes = 0.0
    rows: list[dict[str, np.ndarray]] = []
    for layer, frame in facts.files.items():
        if not len(frame):
            continue
        counts["opens"] += float(
            (
                counter(frame, "opens")
                + counter(frame, "indep_opens")
                + counter(frame, "coll_opens")
                + counter(frame, "fdopens")
            ).sum()
        )
        counts["stats"] += float(counter(frame, "stats").sum())
        counts["seeks"] += float(counter(frame, "seeks").sum())
        counts["closes/flushes/syncs"] += float(
            sum(counter(frame, c) for c in ("flushes", "fsyncs", "syncs", "fdsyncs")).sum()
        )
        rows.append(
            {
                "id": np.asarray(frame["id"]),
                "name": np.asarray(frame["name"]),
                "meta": counter(frame, "meta_time"),
                "metaops": ops(frame, layer, "meta"),
            }
        )
    for frame in facts.outermost().values():
        nbytes += float((counter(frame, "bytes_read") + counter(frame, "bytes_written")).sum())
    columns = ("id", "name", "meta", "metaops")
    every = {k: np.concatenate([r[k] for r in rows]) if rows else np.zeros(0) for k in columns}
    per = per_file(
        every.pop("id"),
        every,
        {"name": ("name", "first"), "meta": ("meta", "sum"), "ops": ("metaops", "sum")},
    )
    per = per[sort_order(per, "meta")]
    if counts["opens"] + counts["stats"] + counts["seeks"] < cfg.metadata_min_calls:
        return
    nfiles = int((per["ops"] > 0).sum()) if len(per) else 0
    mib = max(nbytes / (1 << 20), 1e-9)
    statement = (
        f"Metadata calls take {fmt.pct(meta_total / io_total)} of the I/O time: the slowest rank spends "
        f"{fmt.seconds(lost)} in opens, stats, seeks, closes and syncs ({fmt.count(counts['opens'])} opens "
        f"and {fmt.count(counts['stats'])} stats on {nfiles} files for {fmt.nbytes(nbytes)} of data)."
    )
    evidence = [
        Metric("meta_share", "metadata time / I/O time", meta_total / io_total, "share"),
        Metric("max_meta", "slowest rank's metadata time", lost, "s", approximate=not t.exact_max("meta")),
        Metric("opens", "opens", counts["opens"], "count"),
        Metric("stats", "stats", counts["stats"], "count"),
        Metric("seeks", "seeks", counts["seeks"], "count"),
        Metric("syncs", "flushes and syncs", counts["closes/flushes/syncs"], "count"),
        Metric("opens_per_mib", "opens per MiB moved", counts["opens"] / mib, ""),
        Metric("files", "files with metadata calls", nfiles, "count"),
        Metric("bytes", "bytes moved", nbytes, "B"),
    ]
    subjects = [
        Subject(
            "file",
            str(r["name"]),
            (
                Metric("meta_time", "metadata time (all ranks)", float(r["meta"]), "s"),
                Metric("meta_ops", "metadata calls", int(r["ops"]), "count"),
            ),
            hex_id(r["id"]),
        )
        for r in per[: cfg.top_subjects].rows()
        if r["meta"] > 0
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
    if counts["closes/flushes/syncs"] > counts["opens"]:
        recs.append(Recommendation("code", "Sync and flush only at checkpoints, not after every write."))
    yield finding(
        "IFACE-METADATA-HEAVY",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=T,
        time_lost=lost,
        subjects=subjects,
        subjects_total=nfiles,
        time_basis="upper bound: the slowest rank's metadata time",
    )
