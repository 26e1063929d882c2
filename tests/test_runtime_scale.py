"""The runtime as the job grows (src/runtime/shared.c, log.c, bench/scale_probe.c): files shared by
some ranks are found exactly, and the memory the runtime adds to a rank does not grow with the
ranks: neither the heap it takes to write the log (counted by src/runtime/heap.c) nor the rank's
peak memory."""

from __future__ import annotations

import re
import statistics
import subprocess
from pathlib import Path

import pytest

from pario.log.pario_reader import read_pario_log

PROBE = Path(__file__).resolve().parent.parent / "bench" / "scale_probe.c"


@pytest.fixture(scope="module")
def probe(compile_program) -> Path:
    return compile_program(str(PROBE))


def _run(probe: Path, mpi_env: dict[str, str], tmp_path: Path, nprocs: int, shape: str,
         lib: Path | None, *x_env: str) -> tuple[list[int], Path, str]:
    """VmHWM (kB) of each rank after MPI_Finalize, the log, and stderr."""
    data, log = tmp_path / f"d{nprocs}{shape}", tmp_path / f"{nprocs}{shape}.pario"
    data.mkdir(exist_ok=True)
    x = ["-x", f"LD_PRELOAD={lib}", "-x", f"PARIO_LOG={log}"] if lib else []
    env = dict(mpi_env)
    for kv in x_env:
        key, value = kv.split("=", 1)
        env[key] = value
        x += ["-x", key]
    out = subprocess.run(["mpirun", "-np", str(nprocs), *x, str(probe), str(data), shape], env=env,
                         check=True, capture_output=True, text=True, timeout=300)
    return [int(line.split()[1]) for line in out.stdout.splitlines()], log, out.stderr


@pytest.mark.slow
def test_files_shared_by_some_ranks(probe: Path, mpi_env, libpario: Path, tmp_path: Path):
    """5 ranks (not a power of two): a file for all, one per pair and one per 3 ranks."""
    _, log, _ = _run(probe, mpi_env, tmp_path, 5, "mix", libpario)
    profile = read_pario_log(log)
    posix = profile.files["posix"]
    rows = zip(posix["name"], posix["rank"], posix["nranks"], strict=True)
    names = {Path(str(n)).name: (int(r), int(k)) for n, r, k in rows if not Path(str(n)).name.startswith("r")}
    assert names == {"common": (-1, 5), "pair0": (-1, 2), "pair1": (-1, 2), "pair2": (4, 1),
                     "trio0": (-1, 3), "trio1": (-1, 2)}
    members = {Path(str(n)).name: list(profile.file_ranks[("posix", int(i))])
               for n, i, r in zip(posix["name"], posix["id"], posix["rank"], strict=True) if int(r) == -1}
    assert members == {"common": [0, 1, 2, 3, 4], "pair0": [0, 1], "pair1": [2, 3], "trio0": [0, 1, 2],
                       "trio1": [3, 4]}
    assert len(posix) == 5 * 20 + 6  # each rank's 20 files of its own, as its own records


def test_more_shared_files_than_one_reduction_step(probe: Path, mpi_env, libpario: Path, tmp_path: Path):
    """150 shared files (the reduction takes 64 records a step): each has its exact ranks, bytes
    and members; rank 0 skipped every third file."""
    _, log, _ = _run(probe, mpi_env, tmp_path, 5, "wide", libpario)
    profile = read_pario_log(log)
    posix = profile.files["posix"]
    ranks = profile.file_ranks
    got = {Path(str(n)).name: (int(r), int(k), int(w), [int(x) for x in ranks[("posix", int(i))]])
           for n, r, k, w, i in zip(posix["name"], posix["rank"], posix["nranks"], posix["bytes_written"],
                                    posix["id"], strict=True)}
    want = {f"wide{i}": (-1, 4, 400, [1, 2, 3, 4]) if i % 3 == 2 else (-1, 5, 500, [0, 1, 2, 3, 4])
            for i in range(150)}
    assert got == want


def _added_kb(probe: Path, mpi_env, tmp_path: Path, nprocs: int, lib: Path) -> float:
    """Median over 2 interleaved rounds of the mean VmHWM the runtime adds to a rank."""
    added = []
    for _ in range(2):
        without, _, _ = _run(probe, mpi_env, tmp_path, nprocs, "a", None)
        with_rt, _, _ = _run(probe, mpi_env, tmp_path, nprocs, "a", lib)
        added.append(statistics.fmean(with_rt) - statistics.fmean(without))
    return statistics.median(added)


@pytest.mark.slow
def test_memory_per_rank_does_not_grow_with_the_ranks(probe: Path, mpi_env, libpario: Path, tmp_path: Path):
    """The peak memory the runtime adds to each rank at 64 ranks is within 0.5 MB of that at 4
    (an exchange with every peer, or buffers sized by the ranks, add about 1 MB at 16)."""
    at4 = _added_kb(probe, mpi_env, tmp_path, 4, libpario)
    at64 = _added_kb(probe, mpi_env, tmp_path, 64, libpario)
    assert abs(at64 - at4) < 512, (at4, at64)


HEAP = re.compile(r"heap at most (\d+) bytes on rank 0, (\d+) on any other rank")


def _heap(probe: Path, mpi_env, tmp_path: Path, nprocs: int, lib: Path) -> tuple[int, int, int]:
    """The most heap the runtime took to write the log on rank 0 and on any other rank, and the
    log's bytes (shape a: 20 files per rank and one shared by all)."""
    _, log, err = _run(probe, mpi_env, tmp_path, nprocs, "a", lib, "PARIO_FINALIZE_TIMES=1")
    found = HEAP.search(err)
    assert found, err
    return int(found.group(1)), int(found.group(2)), log.stat().st_size


@pytest.mark.slow
def test_heap_per_rank_does_not_grow_with_the_ranks(probe: Path, mpi_env, libpario: Path, tmp_path: Path):
    """A rank other than 0 takes the same heap at 64 ranks as at 4, within 8 bytes per added rank
    (its own records and keys; four ints per rank, as an all-to-all needs, would add 960 bytes);
    rank 0 more only by the log it writes (its window holds up to 4 MiB of it) and 40
    bytes per rank (the ranks' sizes, a window's counts and displacements)."""
    root4, other4, log4 = _heap(probe, mpi_env, tmp_path, 4, libpario)
    root64, other64, log64 = _heap(probe, mpi_env, tmp_path, 64, libpario)
    assert 0 < other4 and abs(other64 - other4) <= 8 * (64 - 4), (other4, other64)
    assert root64 - root4 <= (log64 - log4) + 40 * (64 - 4) + 1024, (root4, root64, log4, log64)
