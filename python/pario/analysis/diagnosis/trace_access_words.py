"""The words of the trace rules (trace_access.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pario.analysis.diagnosis._fmt as fmt
from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.diagnosis.findings import Metric, Recommendation, Subject
from pario.analysis.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.analysis.diagnosis.facts import Facts
    from pario.analysis.diagnosis.trace_access import Serialised, WriteOverlap


def serialised(hit: Serialised, facts: Facts, cfg: RuleConfig) -> Words:
    d = hit.direction
    share = hit.shared / hit.busy if hit.busy > 0 else 0.0
    statement = (
        f"{hit.ranks} ranks {d} at the file-system level, but one at a time: of the "
        f"{fmt.seconds(hit.busy)} during which one of their {fmt.count(hit.calls)} {d}s was in flight, "
        f"two were in flight for {fmt.pct(share)}. Between {fmt.seconds(hit.first)} and "
        f"{fmt.seconds(hit.last)} the file system served one rank after another, although no rank spent "
        f"more than {fmt.seconds(hit.longest_rank)} in these {d}s."
    )
    if hit.wait is not None:
        statement += (
            f" The ranks wait for their turn inside their MPI-IO calls: rank {hit.wait_rank} spent "
            f"{fmt.seconds(hit.wait)} in the MPI-IO calls that hold its {d}s, beyond the {d}s themselves."
        )
        basis = (f"estimate: the slowest rank's time inside the MPI-IO calls that hold these {d}s, "
                 f"beyond the {d}s themselves (its wait for its turn)")
    else:
        statement += (
            " No traced I/O call holds the time between the turns, so what the ranks did meanwhile (waiting, "
            "or computing) is not known."
        )
        basis = "not estimated: the time between the ranks' turns is outside every traced I/O call"
    evidence = [
        Metric("ranks", f"ranks that {d}", hit.ranks, "count"),
        Metric("calls", f"{d}s at the file-system level", hit.calls, "count"),
        Metric("bytes", "bytes", hit.nbytes, "B"),
        Metric("busy", f"time with a {d} in flight", hit.busy, "s"),
        Metric("shared_share", f"... with two {d}s or more in flight", share, "share"),
        Metric("span", f"from the first {d} to the last", hit.last - hit.first, "s"),
        Metric("longest_rank", f"the most time one rank spends in these {d}s", hit.longest_rank, "s"),
        Metric("mean_call", f"mean {d}", hit.mean_call, "s"),
    ]
    if hit.wait is not None:
        evidence.append(Metric("wait", f"rank {hit.wait_rank}'s wait inside MPI-IO calls", hit.wait, "s"))
    subjects = [Subject("file", name, (Metric("calls", f"{d}s", n, "count"),))
                for name, n in zip(hit.files, hit.file_calls, strict=True)]
    recs = [Recommendation(
        "investigate",
        ("Find what orders the ranks: a loop over the ranks with a barrier in it (each rank writing in "
         "turn), a token passed from rank to rank, or a lock on the file (fcntl or flock; NFS; MPI-IO's own "
         "locks for data sieving, or on file systems without POSIX consistency)."))]
    if hit.wait is not None:
        ds = "romio_ds_write" if d == "write" else "romio_ds_read"
        recs.append(Recommendation(
            "hint",
            (f"If ROMIO's data sieving is what locks the file, turn it off for {d}s (it takes a lock around "
             f"each independent {d} that has holes):"),
            f"{ds} disable"))
        call = "MPI_File_write_at_all" if d == "write" else "MPI_File_read_at_all"
        recs.append(Recommendation(
            "code",
            (f"Let the ranks {d} at the same time: each its own part of the file in one collective call "
             f"({call}), so that the aggregators move large pieces in parallel."),
            f"MPI_File_set_view(fh, disp, etype, filetype, \"native\", info);\n{call}(fh, 0, buf, count, "
            "MPI_BYTE, MPI_STATUS_IGNORE);"))
    else:
        recs.append(Recommendation(
            "code",
            (f"Let the ranks {d} at the same time: if a rank-ordered loop or a lock is what makes them wait, "
             f"each rank can {d} its own file (or its own part of a shared file) without waiting for the "
             "others.")))
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
