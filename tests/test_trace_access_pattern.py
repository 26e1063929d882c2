"""TRACE-ACCESS-PATTERN: strided and random orders of small requests, read from the offsets of a
trace (Darshan DXT here, built through libdarshan-util with known segments)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from darshan_logs import LOGS
from darshan_recipes import Segment, dxt_segments, job, log, module
from pario.diagnosis import Finding, diagnose
from pario.log import read_log
from pario.log.darshan_writer import write_darshan_log

FILE, FILE_ID = "/scratch/run/field.dat", 0x5EED5EED00000001
NPROCS, PIECES, KIB = 4, 128, 1024
CALL = 0.001  # seconds per call


def _log(tmp_path: Path, name: str, rows: list[Segment]) -> Path:
    """A Darshan log of ``rows`` (DXT_POSIX segments) with the POSIX counters they imply."""
    posix = module("POSIX", [(FILE_ID, r, {
        "POSIX_OPENS": 1,
        "POSIX_WRITES": sum(1 for x in rows if x[0] == r and x[2]),
        "POSIX_READS": sum(1 for x in rows if x[0] == r and not x[2]),
        "POSIX_BYTES_WRITTEN": sum(x[4] for x in rows if x[0] == r and x[2]),
        "POSIX_BYTES_READ": sum(x[4] for x in rows if x[0] == r and not x[2]),
        "POSIX_F_WRITE_TIME": sum(x[6] - x[5] for x in rows if x[0] == r and x[2]),
        "POSIX_F_READ_TIME": sum(x[6] - x[5] for x in rows if x[0] == r and not x[2])})
        for r in sorted({x[0] for x in rows})])
    content = dataclasses.replace(log(job(NPROCS, 1_700_000_000.0, 1_700_000_010.0), "./sim", {FILE_ID: FILE},
                                      [posix]), dxt={"DXT_POSIX": dxt_segments(rows)})
    path = tmp_path / name
    write_darshan_log(content, path)
    return path


def _calls(offsets: list[list[int]], size: int, write: bool) -> list[Segment]:
    """Rank r's calls at ``offsets[r]``, one after the other, CALL seconds each."""
    return [(r, FILE_ID, write, off, size, 1.0 + i * CALL, 1.0 + (i + 1) * CALL)
            for r, offs in enumerate(offsets) for i, off in enumerate(offs)]


def _pattern(path: Path) -> Finding | None:
    return next((f for f in diagnose(read_log(path)) if f.id == "TRACE-ACCESS-PATTERN"), None)


def test_interleaved_small_writes_are_strided(tmp_path: Path) -> None:
    """Rank r writes 4 KiB at (4 i + r) x 4 KiB: after each write it skips the 3 other ranks'
    12 KiB, 127 times."""
    offsets = [[(NPROCS * i + r) * 4 * KIB for i in range(PIECES)] for r in range(NPROCS)]
    f = _pattern(_log(tmp_path, "strided.darshan", _calls(offsets, 4 * KIB, True)))
    assert f is not None
    ev = {m.name: m.value for m in f.evidence}
    assert ev == {"requests": NPROCS * PIECES, "mean_request": 4096.0, "stride": 12288, "sequential": 0,
                  "strided": NPROCS * (PIECES - 1), "repeated": 0, "backward": 0, "irregular": 0,
                  "time_at_stake": pytest.approx(PIECES * CALL)}
    assert f.statement.startswith(f"In {FILE}, each rank's writes of 4 KiB skip 12 KiB after each other "
                                  "(100.0% of them): a strided pattern.")
    (view,) = [r for r in f.recommendations if r.kind == "code"]
    assert view.snippet.splitlines()[0] == "MPI_Type_vector(count, 4096, 16384, MPI_BYTE, &filetype);"
    assert view.snippet.splitlines()[-1] == (
        "MPI_File_write_all(fh, buf, count * 4096, MPI_BYTE, MPI_STATUS_IGNORE);")


def test_shuffled_small_reads_are_random(tmp_path: Path) -> None:
    """Each rank reads 128 pieces of 1 KiB of its own 128 KiB region in a shuffled order: the steps
    are counted here from the same offsets, as the rule must count them."""
    rng = np.random.default_rng(7)
    offsets = [[(r * PIECES + int(i)) * KIB for i in rng.permutation(PIECES)] for r in range(NPROCS)]
    f = _pattern(_log(tmp_path, "random.darshan", _calls(offsets, KIB, False)))
    assert f is not None
    gaps = [b - (a + KIB) for offs in offsets for a, b in zip(offs, offs[1:], strict=False)]
    back = sum(g < 0 for g in gaps)
    ev = {m.name: m.value for m in f.evidence}
    assert (ev["sequential"], ev["backward"]) == (sum(g == 0 for g in gaps), back)
    assert ev["strided"] + ev["irregular"] == sum(g > 0 for g in gaps)
    assert ev["backward"] + ev["irregular"] >= 0.5 * len(gaps)
    assert "a random pattern" in f.statement and f"{back} backwards" in f.statement
    assert any("Sort each rank's reads by offset" in r.text for r in f.recommendations)


def test_rereads_of_one_offset_are_repeated_not_random(tmp_path: Path) -> None:
    """Each rank reads 1 byte at offset 0, 128 times (a program polling a flag): the same bytes again,
    not a random order, and the fix is to read once, not to sort the reads."""
    f = _pattern(_log(tmp_path, "poll.darshan", _calls([[0] * PIECES] * NPROCS, 1, False)))
    assert f is not None
    ev = {m.name: m.value for m in f.evidence}
    assert (ev["repeated"], ev["backward"], ev["irregular"]) == (NPROCS * (PIECES - 1), 0, 0)
    assert ("each rank reads the same 1 B again and again, mostly at offset 0 (100.0% of its reads"
            in f.statement)
    assert f.subjects[0].metrics[0].value == "repeated"
    assert [r.text.split(";")[0] for r in f.recommendations if r.kind == "code"] == [
        "Read these bytes once and keep them in memory"]


@pytest.mark.parametrize(("size", "stride"), [(4 * KIB, 0), (1024 * KIB, 3)], ids=["sequential", "large"])
def test_sequential_or_large_requests_are_not_a_pattern(tmp_path: Path, size: int, stride: int) -> None:
    """Each rank writes its own block in order (4 KiB pieces), or 1 MiB pieces interleaved: silent."""
    offsets = [[(r * PIECES + i) * size if not stride else (NPROCS * i + r) * size for i in range(PIECES)]
               for r in range(NPROCS)]
    assert _pattern(_log(tmp_path, f"{size}.darshan", _calls(offsets, size, True))) is None


def test_one_process_gets_no_mpi_advice() -> None:
    """nonmpi_dxt_anonymized (one process, no MPI): its small writes with a regular gap are strided,
    and the fix offered is to assemble the region in memory, not an MPI file view."""
    f = _pattern(LOGS / "nonmpi_dxt_anonymized.darshan")
    assert f is not None and "the program's" in f.statement and "each rank" not in f.statement
    assert not any("MPI" in r.text or "MPI" in r.snippet for r in f.recommendations)


# --- TRACE-PHASE-STRAGGLERS --------------------------------------------------------------------

def _phase_log(tmp_path: Path, name: str, late: dict[int, tuple[float, float]]) -> Path:
    """8 ranks write 1 MiB each at 1.000 s for 10 ms; ``late`` rank -> (start, duration) instead."""
    rows: list[Segment] = []
    for r in range(8):
        start, took = late.get(r, (1.0, 0.01))
        rows.append((r, FILE_ID, True, r * 1024 * KIB, 1024 * KIB, start, start + took))
    return _log_n(tmp_path, name, rows, 8)


def _log_n(tmp_path: Path, name: str, rows: list[Segment], nprocs: int) -> Path:
    posix = module("POSIX", [(FILE_ID, r, {
        "POSIX_OPENS": 1, "POSIX_WRITES": 1, "POSIX_BYTES_WRITTEN": x[4], "POSIX_F_WRITE_TIME": x[6] - x[5]})
        for r, x in enumerate(rows)])
    content = dataclasses.replace(log(job(nprocs, 1_700_000_000.0, 1_700_000_010.0), "./sim", {FILE_ID: FILE},
                                      [posix]), dxt={"DXT_POSIX": dxt_segments(rows)})
    path = tmp_path / name
    write_darshan_log(content, path)
    return path


def _stragglers(path: Path) -> Finding | None:
    return next((f for f in diagnose(read_log(path)) if f.id == "TRACE-PHASE-STRAGGLERS"), None)


def test_a_rank_whose_write_is_slow_finishes_the_phase_late(tmp_path: Path) -> None:
    """Rank 5's 1 MiB write takes 200 ms, the others' 10 ms: it ends 190 ms after the median rank."""
    f = _stragglers(_phase_log(tmp_path, "slow.darshan", {5: (1.0, 0.2)}))
    assert f is not None
    ev = {m.name: m.value for m in f.evidence}
    assert ev == pytest.approx({"phase_start": 1.0, "phase_end": 1.2, "ranks": 8, "stragglers": 1,
                                "median_finish": 1.01, "latest_finish": 1.2, "median_io": 0.01,
                                "straggler_io": 0.2})
    assert f.time_lost == pytest.approx(0.19)
    assert "rank 5 spends 200 ms in I/O calls, the median rank 10 ms" in f.statement
    assert [s.name for s in f.subjects] == ["rank 5"]


def test_a_rank_that_starts_late_is_told_apart(tmp_path: Path) -> None:
    """Rank 2 starts its 30 ms write 90 ms after the others (an idle gap of 80 ms, under 1% of the
    10 s run: the same phase): its delay is mostly before its I/O."""
    f = _stragglers(_phase_log(tmp_path, "late.darshan", {2: (1.09, 0.03)}))
    assert f is not None
    assert "rank 2 starts its I/O 90 ms after the median rank" in f.statement
    assert f.time_lost == pytest.approx(0.11)


@pytest.mark.parametrize("late", [{}, {1: (1.0, 0.2), 6: (1.0, 0.2)}], ids=["even", "two-of-eight"])
def test_no_straggler_finding_when_even_or_not_a_few(tmp_path: Path,
                                                     late: dict[int, tuple[float, float]]) -> None:
    assert _stragglers(_phase_log(tmp_path, "even.darshan", late)) is None


@pytest.mark.parametrize("path", sorted(LOGS.glob("*.darshan")), ids=lambda p: p.name[:30])
def test_no_real_log_has_phase_stragglers(path: Path) -> None:
    """treddy's 32 ranks take turns (TRACE-SERIALISED-IO): their finishes spread evenly, no few late."""
    assert _stragglers(path) is None
