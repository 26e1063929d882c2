"""The words of the load rules (load.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.commands import tune_command
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, Subject, file_subject
from pario.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.diagnosis.facts import Facts
    from pario.diagnosis.load import ExtraCall, FewRanks, Imbalance, SlowFile, Stragglers

#: words of the call counters' prefixes
_CALL_WORDS = {"indep": "independent", "coll": "collective", "nb": "nonblocking", "obj": "object"}


def call_words(c: ExtraCall) -> str:
    """'1 POSIX unlink' / '40 MPI-IO independent writes'."""
    layer = "MPI-IO" if c.layer == "mpiio" else c.layer.upper()
    words = [_CALL_WORDS.get(w, w) for w in c.call.split("_")]
    name = " ".join(words)
    if c.mine == 1 and name.endswith("s"):
        name = name[:-1]
    return f"{fmt.count(c.mine)} {layer} {name}"


def _calls_text(rank: int, calls: Sequence[ExtraCall]) -> str:
    parts = [
        f"{call_words(c)} (the other ranks {fmt.plain(c.others, 3)} on average)"
        + (f" on {c.name}" if c.name else "")
        for c in calls
    ]
    return f" Rank {rank} makes calls the others do not, or fewer of: " + "; ".join(parts) + "."


def cause_notes(rank: int, files: Sequence[SlowFile]) -> tuple[list[str], list[str], list[Recommendation]]:
    """Why ``rank`` is slow, from its top files: (short causes, notes, recommendations)."""
    causes: list[str] = []
    notes: list[str] = []
    recs: list[Recommendation] = []
    for fileinfo in files:
        e = fileinfo.file
        layer = "MPI-IO" if e.layer == "mpiio" else e.layer.upper()
        text = (
            f"Rank {rank} spends {fmt.seconds(e.rank_time)} on {e.name} ({layer}), {fmt.seconds(e.excess)} "
            "more than the average rank."
        )
        cause = f"{e.name} (+{fmt.seconds(e.excess)}, {layer}"
        part = fileinfo.sole
        if part is not None:
            text += (
                f" It is the only rank doing this file's file-system I/O ({fmt.pct(part.top_share)} of its "
                f"{fmt.nbytes(part.bytes)} at the POSIX level, for {fmt.nranks(part.ranks)}): the single "
                "collective-I/O aggregator."
            )
            cause += ": the only aggregator"
            stripes = fileinfo.one_ost
            if stripes is not None:
                text += (
                    " The file is striped over a single OST (stripe count 1), and MPI-IO on Lustre uses one "
                    "aggregator per OST by default: the single-OST striping is why one rank does the "
                    "file-system I/O for all the others."
                )
                cause += " because the file is striped over a single OST"
                if fileinfo.layout is not None and fileinfo.layout.changes_count:
                    recs.append(
                        Recommendation(
                            "striping",
                            (
                                f"Stripe {e.name.rsplit('/', 1)[-1]} over {fileinfo.layout.stripe_count} "
                                "OSTs (set on the directory before the file is created, or with the hints "
                                "striping_factor / striping_unit when MPI-IO creates it), so that MPI-IO "
                                "uses one aggregator per OST:"
                            ),
                            fileinfo.layout.command(),
                        )
                    )
            if fileinfo.cb_nodes_one:
                text += " The MPI-IO hint cb_nodes=1 in effect makes a single rank the aggregator."
                cause += ", cb_nodes=1"
        causes.append(cause + ")")
        notes.append(text)
    return causes, notes, recs


def _rank_subjects(facts: Facts, order: Sequence[int]) -> list[Subject]:
    t = facts.times
    io = t.io
    return [
        Subject(
            "rank",
            f"rank {r}",
            (
                Metric("io_time", "I/O time", float(io[r]), "s", approximate=not t.exact_ranks("io")),
                Metric("read_time", "reads", float(t.io_read[r]), "s", approximate=not t.exact_ranks("read")),
                Metric(
                    "write_time", "writes", float(t.io_write[r]), "s", approximate=not t.exact_ranks("write")
                ),
                Metric(
                    "meta_time", "metadata", float(t.io_meta[r]), "s", approximate=not t.exact_ranks("meta")
                ),
            ),
        )
        for r in order
    ]


def _work_recs(rank: int, calls: Sequence[ExtraCall], even: bool) -> list[Recommendation]:
    """What to change in the work of the ranks: the calls only ``rank`` makes, else equal shares
    (or, where the work is already equal, where to look)."""
    if calls:
        return [
            Recommendation(
                "code",
                (
                    f"Rank {rank} alone makes {', '.join(call_words(c) for c in calls)} while the other "
                    "ranks wait for it: do these calls outside the phase the others wait in (before or "
                    "after the timed I/O, or overlapped with computation), or share them out over the "
                    "ranks."
                ),
            )
        ]
    if even:
        return [
            Recommendation(
                "investigate",
                (
                    "Rerun and see whether the same ranks are slow again: if they are, check their nodes "
                    "and the storage targets of their files (lfs getstripe, OST load); if not, the "
                    "difference is noise."
                ),
            )
        ]
    return [
        Recommendation(
            "code",
            (
                "Give every rank an equal share of the data to move; where one rank writes extra "
                "(headers, metadata, logs), make it collective or move it off the critical path."
            ),
        )
    ]


def imbalance(hit: Imbalance, facts: Facts, cfg: RuleConfig) -> Words:
    T = facts.runtime
    mean, mx, slowest, approx, zscore = hit.mean_io, hit.max_io, hit.slowest, hit.approx, hit.z
    lost = mx - mean
    lb = mean / mx
    causes, notes, cause_recs = cause_notes(slowest, hit.files)
    if approx:
        notes.append(
            "Per-rank times of files shared by all ranks are estimated from the fastest and slowest rank "
            "Darshan records (the rest spread evenly); the maximum and mean are exact for a single shared "
            "file."
        )
    statement = (
        f"I/O load balance is {lb:.2f} (mean/max of per-rank I/O time): the slowest rank ({slowest}) spends "
        f"{fmt.seconds(mx)} in I/O, the average rank {fmt.seconds(mean)}; the run loses {fmt.seconds(lost)} "
        f"({fmt.pct(lost / T)} of it) waiting for the slowest rank."
        + (f" Rank {slowest} is slower mainly on " + "; ".join(causes) + "." if causes else "")
        + (_calls_text(slowest, hit.calls) if hit.calls else "")
    )
    if hit.even:
        notes.append(
            "Every rank makes the same calls and moves the same bytes: the difference is the system's "
            "(contention on shared storage, a slow node, scheduling), not the program's."
        )
    evidence = [
        Metric("load_balance", "I/O load balance mean/max", lb, "", approximate=approx),
        Metric("max_io", "slowest rank's I/O time", mx, "s", approximate=approx),
        Metric("mean_io", "mean I/O time per rank", mean, "s"),
        Metric("median_io", "median I/O time", hit.median_io, "s", approximate=approx),
        Metric("min_io", "fastest rank's I/O time", hit.min_io, "s", approximate=approx),
        Metric("imbalance", "(max - mean) / max", lost / mx, "share", approximate=approx),
        Metric(
            "z_max",
            "slowest rank's z-score (max - mean) / std",
            zscore if math.isfinite(zscore) else None,
            "",
            approximate=approx,
        ),
        Metric("time_lost", "time lost: max - mean", lost, "s", approximate=approx),
        Metric("driver", "most imbalanced kind", hit.driver, "text"),
    ]
    recs = [*cause_recs, *_work_recs(slowest, hit.calls, hit.even)]
    recs.append(
        Recommendation(
            "tune",
            "Try other MPI-IO settings (aggregators, buffering) on this run, one hints file per trial:",
            tune_command(facts),
        )
    )
    return Words(
        statement,
        evidence,
        recs,
        time_basis="exact: max - mean of per-rank I/O time (what balancing would save)"
        + (" (per-rank values estimated)" if approx else ""),
        subjects=_rank_subjects(facts, hit.ranks),
        subjects_total=hit.ranks_total,
        notes=notes,
    )


def stragglers(hit: Stragglers, facts: Facts, cfg: RuleConfig) -> Words:
    T = facts.runtime
    strag, mx, med, approx, z = list(hit.ranks), hit.max_io, hit.median_io, hit.approx, hit.z
    lost = mx - med
    worst = strag[0]
    causes, notes, cause_recs = cause_notes(worst, hit.files)
    if approx:
        notes.append(
            "Per-rank I/O times are partly estimated (shared-file records keep only the fastest and slowest "
            "rank); the stragglers named are the slowest ranks Darshan recorded."
        )
    statement = (
        f"{fmt.ranks(strag)} take{'s' if len(strag) == 1 else ''} {fmt.times(mx / med)} the median rank's "
        f"I/O time ({fmt.seconds(mx)} against {fmt.seconds(med)}); the other ranks wait {fmt.seconds(lost)} "
        f"for {'it' if len(strag) == 1 else 'them'} ({fmt.pct(lost / T)} of the run)."
        + (f" Rank {worst} is slower mainly on " + "; ".join(causes) + "." if causes else "")
        + (_calls_text(worst, hit.calls) if hit.calls else "")
    )
    evidence = [
        Metric("stragglers", "stragglers", len(strag), "count"),
        Metric("max_io", "slowest rank's I/O time", mx, "s", approximate=approx),
        Metric("median_io", "median rank's I/O time", med, "s", approximate=approx),
        Metric("ratio", "slowest / median", mx / med, "x", approximate=approx),
        Metric("z_max", "slowest rank's z-score", z if math.isfinite(z) else None, "", approximate=approx),
        Metric("time_lost", "time lost: max - median", lost, "s", approximate=approx),
    ]
    recs = [*cause_recs, *(_work_recs(worst, hit.calls, False) if hit.calls else [])]
    recs.append(
        Recommendation(
            "investigate",
            (
                f"See what {fmt.ranks(strag)} do differently (top files below): a rank that writes headers, "
                "metadata or logs alone should do it collectively or outside the timed phase; if the same "
                "ranks are slow in every run whatever they do, check their nodes and the storage targets of "
                "their files (lfs getstripe, OST load)."
            ),
        )
    )
    subjects = _rank_subjects(facts, strag)
    subjects += [
        file_subject(
            e.name,
            e.fid,
            Metric("rank_time", f"rank {worst}'s time on it", e.rank_time, "s", approximate=approx),
            Metric("mean_time", "average rank's time on it", e.mean_time, "s"),
        )
        for e in hit.top_files
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis="estimate: slowest rank's I/O time - the median rank's "
        "(what the others wait if the stragglers ran at the median speed)",
        subjects=subjects,
        subjects_total=len(strag) + len(hit.top_files),
        notes=notes,
    )


def few_ranks(hit: FewRanks, facts: Facts, cfg: RuleConfig) -> Words:
    doers = [d.rank for d in hit.doers]
    ndoers, n, mx, mean, share = len(doers), hit.nprocs, hit.max_io, hit.mean_io, hit.share
    who = f"rank {doers[0]}" if ndoers == 1 else fmt.ranks(doers)
    statement = (
        f"{who} move{'s' if ndoers == 1 else ''} {fmt.pct(share)} of the {fmt.nbytes(hit.total)} read and "
        f"written by the {n} ranks; {hit.idle} ranks move nothing and wait: the slowest rank spends "
        f"{fmt.seconds(mx)} in I/O, the average rank {fmt.seconds(mean)}."
    )
    evidence = [
        Metric("doers", f"ranks carrying {fmt.pct(cfg.few_ranks_bytes_share)} of the bytes", ndoers, "count"),
        Metric("nprocs", "ranks", n, "count"),
        Metric("share", "their share of the bytes", share, "share"),
        Metric("idle_ranks", "ranks with no I/O", hit.idle, "count"),
        Metric("max_io", "slowest rank's I/O time", mx, "s"),
        Metric("mean_io", "mean I/O time per rank", mean, "s"),
        Metric("time_lost", "time lost: max - mean", hit.time_lost, "s"),
    ]
    notes = []
    if hit.idle_mpi is not None:
        evidence.append(
            Metric(
                "idle_mpi", "mean time of the idle ranks in MPI collectives and messages", hit.idle_mpi, "s"
            )
        )
    else:
        notes.append(
            "This log has no MPI time, so how long the other ranks waited cannot be measured; max - mean of "
            "the I/O time is the estimate."
        )
    recs = [
        Recommendation(
            "code",
            (
                "Let every rank move its own part instead of funnelling the data through "
                f"{'rank ' + str(doers[0]) if ndoers == 1 else 'a few ranks'}: open one shared file with "
                "MPI_File_open on all ranks and write (or read) each rank's block with a collective call at "
                "its own offset; MPI-IO then chooses a sensible number of aggregators."
            ),
            "MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, "
            "&fh);\nMPI_File_write_at_all(fh, (MPI_Offset)rank * nbytes, buf, nbytes, MPI_BYTE, "
            "MPI_STATUS_IGNORE);",
        )
    ]
    if hit.total - hit.bytes_written > hit.bytes_written:
        recs.append(
            Recommendation(
                "code",
                (
                    "For input read by one rank and sent to the others, read collectively "
                    "(MPI_File_read_at_all) or have a few ranks read and MPI_Scatter/MPI_Bcast."
                ),
            )
        )
    subjects = [
        Subject(
            "rank",
            f"rank {d.rank}",
            (
                Metric("bytes", "bytes moved", d.bytes, "B"),
                Metric("io_time", "I/O time", d.io_time, "s"),
            ),
        )
        for d in hit.doers
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis="estimate: max - mean of per-rank I/O time (spreading the I/O over all ranks "
        "would bring the slowest rank near the mean, if the file system keeps up)",
        subjects=subjects,
        subjects_total=ndoers,
        notes=notes,
    )
