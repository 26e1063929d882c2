"""The words of the trace rules (trace_access.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, Subject
from pario.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.diagnosis.facts import Facts
    from pario.diagnosis.trace_access import (
        AccessPattern,
        PatternFile,
        PhaseStragglers,
        Serialised,
        WriteOverlap,
    )

#: The names of trace_access's step kinds (the module imports this one: not from there).
SEQUENTIAL, STRIDED, BACKWARD, IRREGULAR = "sequential", "strided", "backward", "irregular"
REPEATED = "repeated"


def serialised(hit: Serialised, facts: Facts, cfg: RuleConfig) -> Words:
    rw = hit.direction
    share = hit.shared / hit.busy if hit.busy > 0 else 0.0
    statement = (
        f"{hit.ranks} ranks {rw} at the file-system level, but one at a time: of the "
        f"{fmt.seconds(hit.busy)} during which one of their {fmt.count(hit.calls)} {rw}s was in flight, "
        f"two were in flight for {fmt.pct(share)}. Between {fmt.seconds(hit.first)} and "
        f"{fmt.seconds(hit.last)} the file system served one rank after another, although no rank spent "
        f"more than {fmt.seconds(hit.longest_rank)} in these {rw}s."
    )
    if hit.wait is not None:
        statement += (
            f" The ranks wait for their turn inside their MPI-IO calls: rank {hit.wait_rank} spent "
            f"{fmt.seconds(hit.wait)} in the MPI-IO calls that hold its {rw}s, beyond the {rw}s themselves."
        )
        basis = (f"estimate: the slowest rank's time inside the MPI-IO calls that hold these {rw}s, "
                 f"beyond the {rw}s themselves (its wait for its turn)")
    else:
        statement += (
            " No traced I/O call holds the time between the turns, so what the ranks did meanwhile (waiting, "
            "or computing) is not known."
        )
        basis = "not estimated: the time between the ranks' turns is outside every traced I/O call"
    evidence = [
        Metric("ranks", f"ranks that {rw}", hit.ranks, "count"),
        Metric("calls", f"{rw}s at the file-system level", hit.calls, "count"),
        Metric("bytes", "bytes", hit.nbytes, "B"),
        Metric("busy", f"time with a {rw} in flight", hit.busy, "s"),
        Metric("shared_share", f"... with two {rw}s or more in flight", share, "share"),
        Metric("span", f"from the first {rw} to the last", hit.last - hit.first, "s"),
        Metric("longest_rank", f"the most time one rank spends in these {rw}s", hit.longest_rank, "s"),
        Metric("mean_call", f"mean {rw}", hit.mean_call, "s"),
    ]
    if hit.wait is not None:
        evidence.append(Metric("wait", f"rank {hit.wait_rank}'s wait inside MPI-IO calls", hit.wait, "s"))
    subjects = [Subject("file", name, (Metric("calls", f"{rw}s", n, "count"),))
                for name, n in zip(hit.files, hit.file_calls, strict=True)]
    recs = [Recommendation(
        "investigate",
        ("Find what orders the ranks: a loop over the ranks with a barrier in it (each rank writing in "
         "turn), a token passed from rank to rank, or a lock on the file (fcntl or flock; NFS; MPI-IO's own "
         "locks for data sieving, or on file systems without POSIX consistency)."))]
    if hit.wait is not None:
        ds = "romio_ds_write" if rw == "write" else "romio_ds_read"
        recs.append(Recommendation(
            "hint",
            (f"If ROMIO's data sieving is what locks the file, turn it off for {rw}s (it takes a lock around "
             f"each independent {rw} that has holes):"),
            f"{ds} disable"))
        call = "MPI_File_write_at_all" if rw == "write" else "MPI_File_read_at_all"
        recs.append(Recommendation(
            "code",
            (f"Let the ranks {rw} at the same time: each its own part of the file in one collective call "
             f"({call}), so that the aggregators move large pieces in parallel."),
            f"MPI_File_set_view(fh, disp, etype, filetype, \"native\", info);\n{call}(fh, 0, buf, count, "
            "MPI_BYTE, MPI_STATUS_IGNORE);"))
    elif hit.own_files:
        recs.append(Recommendation(
            "code",
            (f"The ranks already {rw} one file each, and still take turns: what orders them is not a shared "
             f"file. Let each rank {rw} as soon as its data is ready: take the {rw}s out of any rank-ordered "
             "loop or barrier, and check the directory's metadata load (creating files in one directory "
             "at once serialises on some file systems).")))
    else:
        recs.append(Recommendation(
            "code",
            (f"Let the ranks {rw} at the same time: if a rank-ordered loop or a lock is what makes them "
             f"wait, each rank can {rw} its own file (or its own part of a shared file) without waiting for "
             "the others.")))
    return Words(statement, evidence, recs, time_basis=basis, subjects=subjects)


def write_overlap(hit: WriteOverlap, facts: Facts, cfg: RuleConfig) -> Words:
    top = hit.files[0]
    n = len(hit.files)
    what = f"{n} files have" if n > 1 else "A file has"
    statement = (
        f"{what} bytes written by more than one rank: {top.name} has {fmt.nbytes(top.overlap_bytes)} "
        f"written by two ranks or more ({fmt.ranks(top.ranks)}), of the {fmt.nbytes(top.written_bytes)} "
        f"written. Unless the program orders these writes, the file holds whichever one landed last, and "
        f"the ranks contend for the same blocks (locks, read-modify-write)."
    )
    notes = []
    if hit.through_mpiio:
        notes.append(
            "These writes were made inside MPI-IO calls. ROMIO's data sieving writes back whole buffers, the "
            "holes between a rank's pieces included, so independent writes of interleaved pieces overlap at "
            "the file-system level, under a lock that serialises them.")
    evidence = [
        Metric("files", "files written by more than one rank on the same bytes", n, "count"),
        Metric("overlap_bytes", "bytes written by two ranks or more",
               sum(f.overlap_bytes for f in hit.files), "B"),
        Metric("top_ranks", f"ranks writing the same bytes of {top.name}", fmt.ranks(top.ranks), "text"),
    ]
    subjects = [Subject("file", f.name, (
        Metric("overlap_bytes", "bytes written by two ranks or more", f.overlap_bytes, "B"),
        Metric("written_bytes", "distinct bytes written", f.written_bytes, "B"),
        Metric("writers", "ranks writing", f.writers, "count"))) for f in hit.files]
    recs = [Recommendation(
        "code",
        ("Have one rank write each byte: give each rank its own region (rank r writes from r x block), and "
         "let a single rank write what all share (a header, metadata):"),
        "if (rank == 0) pwrite(fd, header, header_len, 0);\n"
        "pwrite(fd, block, block_len, header_len + (off_t)rank * block_len);")]
    if hit.through_mpiio:
        recs.append(Recommendation(
            "hint",
            "Turn ROMIO's data sieving off for writes, or write collectively (MPI_File_write_at_all):",
            "romio_ds_write disable"))
    return Words(statement, evidence, recs, subjects=subjects, notes=notes,
                 time_basis="not estimated: this finding is about what the file holds")


def access_pattern(hit: AccessPattern, facts: Facts, cfg: RuleConfig) -> Words:
    rw = hit.direction
    top = hit.files[0]
    moved = sum(top.steps.values())
    size = fmt.nbytes(top.request)
    if top.pattern == STRIDED:
        how = (f"each rank's {rw}s of {size} skip {fmt.nbytes(top.stride)} after each other "
               f"({fmt.pct(top.steps[STRIDED] / moved)} of them): a strided pattern")
    elif top.pattern == REPEATED:
        how = (f"each rank {rw}s the same {size} again and again, mostly at offset {top.offset} "
               f"({fmt.pct(top.steps[REPEATED] / moved)} of its {rw}s start where the previous one started): "
               "a repeated pattern")
    else:
        back, other = top.steps[BACKWARD], top.steps[IRREGULAR]
        how = (f"each rank's {rw}s of {size} jump about the file ({fmt.pct((back + other) / moved)} of them: "
               f"{fmt.count(back)} backwards, {fmt.count(other)} forward by irregular gaps): a random "
               "pattern")
    if hit.nprocs == 1:
        how = how.replace("each rank's", "the program's", 1)
    more = f" ({len(hit.files) - 1} more file(s) likewise)" if len(hit.files) > 1 else ""
    merged = " (or a collective call that merges the ranks' pieces)" if hit.nprocs > 1 else ""
    statement = (
        f"In {top.name}, {how}{more}. Every such request is a separate file-system call with its own "
        f"latency{' and lock' if top.ranks > 1 else ''}, where one large request{merged} would move the same "
        "bytes at once."
    )
    evidence = [
        Metric("requests", f"{rw}s on these files", hit.calls, "count"),
        Metric("mean_request", f"mean {rw} ({top.name})", top.request, "B"),
        Metric("sequential", "requests that continue the previous one", top.steps[SEQUENTIAL], "count"),
        Metric("strided", "requests after the rank's usual gap", top.steps[STRIDED], "count"),
        Metric("repeated", "requests at the previous one's offset", top.steps[REPEATED], "count"),
        Metric("backward", "requests before the previous one", top.steps[BACKWARD], "count"),
        Metric("irregular", "requests after another gap", top.steps[IRREGULAR], "count"),
        Metric("time_at_stake", f"slowest rank's time in these {rw}s", hit.time_lost, "s"),
    ]
    if top.pattern == STRIDED:
        evidence.insert(2, Metric("stride", "gap skipped between a rank's requests", top.stride, "B"))
    subjects = [Subject("file", f.name, (
        Metric("pattern", "pattern", f.pattern if f.pattern in (STRIDED, REPEATED) else "random", "text"),
        Metric("requests", f"{rw}s", f.calls, "count"),
        Metric("mean_request", "mean request", f.request, "B"),
        Metric("ranks", "ranks", f.ranks, "count"))) for f in hit.files]
    recs = []
    if top.pattern == STRIDED and hit.nprocs > 1:
        recs.append(_strided_view(rw, top))
    elif top.pattern == STRIDED:
        every = fmt.nbytes(top.request + top.stride)
        text = (f"Read the region in one call and pick the pieces ({every} apart) in memory." if rw == "read"
                else f"Assemble the region in memory (the pieces, {every} apart, and what lies between them) "
                     "and write it in one call.")
        recs.append(Recommendation("code", text))
    elif top.pattern == REPEATED:
        text = ("Read these bytes once and keep them in memory; where the program polls the file for a "
                "change, wait for a message (MPI) or sleep between reads instead." if rw == "read"
                else "Keep the value in memory and write it once (at the end, or at each checkpoint), "
                     "instead of overwriting the same bytes at every step.")
        recs.append(Recommendation("code", text))
    else:
        then = "read the region once and pick the pieces" if rw == "read" else "assemble them, then write"
        recs.append(Recommendation(
            "code", f"Sort {'the program' if hit.nprocs == 1 else 'each rank'}'s {rw}s by offset, or gather "
                    f"the pieces in memory and {rw} whole regions: {then}."))
    if hit.mpiio:
        recs.append(Recommendation(
            "hint",
            (f"These calls are made inside MPI-IO calls: ROMIO's data sieving {rw}s larger blocks around "
             "scattered pieces of independent calls:"),
            f"romio_ds_{rw} enable"))
    basis = (f"upper bound: the slowest rank's time in the {rw}s on these files; larger requests save part "
             "of it")
    return Words(statement, evidence, recs, time_basis=basis, subjects=subjects)


def _strided_view(d: str, top: PatternFile) -> Recommendation:
    """A strided file view and one collective call for the ranks' strided pieces."""
    block, every = int(top.request), int(top.request + top.stride)
    call = "MPI_File_write_all" if d == "write" else "MPI_File_read_all"
    return Recommendation(
        "code",
        (f"Describe each rank's pieces once with a strided file view (MPI_Type_vector of "
         f"{fmt.nbytes(block)} blocks every {fmt.nbytes(every)}) and {d} them in one collective call: the "
         "MPI-IO layer then merges them across ranks into large contiguous requests (two-phase I/O)."),
        f"MPI_Type_vector(count, {block}, {every}, MPI_BYTE, &filetype);\n"
        "MPI_Type_commit(&filetype);\n"
        "MPI_File_set_view(fh, disp, MPI_BYTE, filetype, \"native\", MPI_INFO_NULL);\n"
        f"{call}(fh, buf, count * {block}, MPI_BYTE, MPI_STATUS_IGNORE);")


def phase_stragglers(hit: PhaseStragglers, facts: Facts, cfg: RuleConfig) -> Words:
    s = hit.stragglers
    worst = s[0]
    who = fmt.ranks(tuple(x.rank for x in s))
    late_start = worst.first - hit.median_first
    if late_start >= 0.5 * (worst.finish - hit.median_finish):
        why = (f"rank {worst.rank} starts its I/O {fmt.seconds(late_start)} after the median rank (what it "
               "did before the phase took longer: computation or communication)")
    elif worst.io_time >= cfg.straggler_min_ratio * hit.median_io:
        why = (f"rank {worst.rank} spends {fmt.seconds(worst.io_time)} in I/O calls, the median rank "
               f"{fmt.seconds(hit.median_io)} (more data, or slower calls)")
    else:
        why = f"rank {worst.rank}'s calls are spread out over the phase (waiting between them)"
    more = f" ({hit.phases - 1} more phase(s) likewise)" if hit.phases > 1 else ""
    statement = (
        f"In the I/O phase from {fmt.seconds(hit.start)} to {fmt.seconds(hit.end)}, {len(s)} of its "
        f"{hit.ranks} ranks ({who}) finish their I/O long after the others: rank {worst.rank} at "
        f"{fmt.seconds(worst.finish)}, {fmt.seconds(worst.finish - hit.median_finish)} after the median "
        f"rank{more}. Here {why}; at the next synchronisation every other rank waits for it."
    )
    evidence = [
        Metric("phase_start", "phase start", hit.start, "s"),
        Metric("phase_end", "phase end", hit.end, "s"),
        Metric("ranks", "ranks in the phase", hit.ranks, "count"),
        Metric("stragglers", "ranks that finish late", len(s), "count"),
        Metric("median_finish", "the median rank's finish", hit.median_finish, "s"),
        Metric("latest_finish", f"rank {worst.rank}'s finish", worst.finish, "s"),
        Metric("median_io", "the median rank's I/O time in the phase", hit.median_io, "s"),
        Metric("straggler_io", f"rank {worst.rank}'s I/O time in the phase", worst.io_time, "s"),
    ]
    subjects = [Subject("rank", f"rank {x.rank}", (
        Metric("finish", "finish", x.finish, "s"),
        Metric("delay", "after the median rank", x.finish - hit.median_finish, "s"),
        Metric("io_time", "I/O time in the phase", x.io_time, "s"),
        Metric("start_delay", "first call after the median rank's", x.first - hit.median_first, "s")))
        for x in s]
    recs = [Recommendation(
        "investigate",
        (f"See what rank {worst.rank} does that the others do not: more data to move (its bytes in the "
         "report's per-rank table), a slower file or storage target (the files of its calls in the "
         "timeline), or work before the phase that delays its start."))]
    if late_start < 0.5 * (worst.finish - hit.median_finish):
        recs.append(Recommendation(
            "code",
            "Give every rank an equal share of the data in the phase; where one rank writes extra (headers, "
            "metadata, logs), make it collective or move it off the critical path."))
    basis = ("upper bound: the latest rank's finish less the median rank's, in the costliest phase; the "
             "others wait that long only where a synchronisation follows the phase")
    return Words(statement, evidence, recs, time_basis=basis, subjects=subjects)
