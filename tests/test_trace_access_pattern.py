"""TRACE-ACCESS-PATTERN: strided and random orders of small requests, read from the offsets of a
trace (Darshan DXT here, built through libdarshan-util with known segments)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from darshan_logs import LOGS
from darshan_recipes import Segment, dxt_segments, job, log, module
from pario.analysis.diagnosis import Finding, diagnose
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
                  "strided": NPROCS * (PIECES - 1), "backward": 0, "irregular": 0,
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
