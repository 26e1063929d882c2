"""The collective-write engine's fallbacks and errors (tests/programs/coll_errors.c, 4 ranks,
``pario run --collective ALGO:SHUFFLE -- mpirun ...``).

Fallbacks: atomic mode, an ``external32`` view and ``MPI_MODE_SEQUENTIAL`` go to the MPI library
(ompio and romio321 both): the log counts each such call in ``engine_fallbacks`` under its
reason, the calls the engine can serve in the same run are served, and the file holds what the
library writes.  In sequential mode MPI allows only shared-pointer calls; the program makes a
``write_ordered`` (not a call the engine replaces) and then the erroneous ``write_all``:
romio321 refuses it (``MPI_ERR_UNSUPPORTED_OPERATION``, nothing written), ompio does not check
and writes it.  Either way the engine must hand it over untouched.

Errors: one rank, an aggregator (``cb_nodes`` = ranks and ``cb_config_list=*:*``: every rank
aggregates), lowers its ``RLIMIT_FSIZE`` to 0 and ignores SIGXFSZ, so each of its ``pwrite``s
fails with EFBIG.  With the engine every rank's ``MPI_File_write_all`` returns ``MPI_ERR_IO``
(docs/collective.md: the aggregator keeps shuffling, an allreduce at the end gives every rank
the error), no rank hangs (the job runs under a timeout and its process group is killed after
it), the next collective write on the same file, after the limit is restored, succeeds on every
rank and the file is right, and the program and pario's log finish normally.

What the MPI library does in the same situation, on this machine (Open MPI 4.1.4), both hang:
- romio321 (ROMIO 3.2.1): the failing aggregator leaves the cycle loop of
  ``ADIOI_GEN_WriteStridedColl`` at its first failed write and waits in the final
  ``MPI_Allreduce`` of error codes, while the other ranks wait in the next cycle's
  ``MPI_Alltoall`` for it: every rank hangs inside ``MPI_File_write_all``.
- ompio (fcoll vulcan): the failing aggregator returns ``MPI_SUCCESS`` (the error is lost)
  and the other ranks wait forever for its data in ``ompi_request_default_wait_all``.
So the engine's behaviour (an error on every rank) is what is asserted here; the library's is
not run (a hang costs the timeout).

Time: about 15 s (12 runs of 4 ranks).
"""

from __future__ import annotations

import os
import signal
import subprocess

import numpy as np
import pytest

from pario.log import read_log
from record_helpers import one_record

pytestmark = pytest.mark.slow

NP = 4
NB, BLK = 8, 1000  # coll_errors.c: blocks per rank and bytes per block
REGION = NP * NB * BLK
TIMEOUT = 60


def pattern(start: int, stop: int) -> bytes:
    """coll_errors.c's bytes at file offsets [start, stop) of a native region."""
    o = np.arange(start, stop, dtype=np.uint64)
    b = o * np.uint64(131) + (o >> np.uint64(8)) * np.uint64(7) + np.uint64(17)
    return (b & np.uint64(0xFF)).astype(np.uint8).tobytes()


def external32_ints(start: int, stop: int) -> bytes:
    """The ints value(i) = i*40503 + 12345 (mod 2^32) at offsets [start, stop), big-endian."""
    i = np.arange(start // 4, stop // 4, dtype=np.uint64)
    return ((i * np.uint64(40503) + np.uint64(12345)) & np.uint64(0xFFFFFFFF)).astype(">u4").tobytes()


def run_bounded(cmd: list[str], env: dict[str, str], timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """Run cmd in its own process group; a hang kills the group (pario, mpirun, the ranks) and fails."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)  # mpirun takes its ranks down
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        pytest.fail(f"hung for {timeout} s: {' '.join(cmd)}\n{out}\n{err[-3000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def calls_of(stdout: str) -> dict[tuple[int, int], tuple[str, int]]:
    """{(rank, call): (error class, bytes)} from the lines 'rank R call C CLASS count N'."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("pario:"):
            continue
        words = line.split()
        assert len(words) == 7 and words[0] == "rank" and words[2] == "call" and words[5] == "count", line
        out[(int(words[1]), int(words[3]))] = (words[4], int(words[6]))
    return out


@pytest.fixture
def coll_errors(tmp_path, compile_program, pario_cmd, mpi_env):
    exe = compile_program("coll_errors.c", extra=("-Wextra",))
    env = {k: v for k, v in mpi_env.items() if k not in ("PARIO_COLL", "LD_PRELOAD")}

    def _run(mode: str, collective: str, io: str, *extra: str):
        path, log = tmp_path / f"{mode}.dat", tmp_path / f"{mode}.pario"
        cmd = [*pario_cmd, "run", "--log", str(log), "--collective", collective, "--",
               "mpirun", "-np", str(NP), "--mca", "io", io, str(exe), mode, str(path), *extra]
        proc = run_bounded(cmd, env)
        where = f"reproduce: {' '.join(cmd)}"
        assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-3000:]}\n{where}"
        profile = read_log(log)
        assert profile.job.complete and profile.job.nprocs == NP
        rec = one_record(profile.layer("mpiio"), str(path))
        return calls_of(proc.stdout), path.read_bytes(), rec, where

    return _run


def engine_counters(rec) -> dict[str, int]:
    names = ("engine_writes", "engine_fallbacks", "engine_fb_atomic", "engine_fb_datarep",
             "engine_fb_sequential", "engine_fb_datatype", "engine_fb_other")
    return {n: int(rec[n]) for n in names}


def fallbacks(served: int, **reasons: int) -> dict[str, int]:
    out = {"engine_writes": served, "engine_fallbacks": sum(reasons.values())}
    for reason in ("atomic", "datarep", "sequential", "datatype", "other"):
        out[f"engine_fb_{reason}"] = reasons.get(reason, 0)
    return out


IOS = ["ompio", "romio321"]


@pytest.mark.parametrize("io", IOS)
def test_atomic_mode_goes_to_the_library(coll_errors, io):
    """write_all and write_at_all_begin/end in atomic mode fall back; write_at_all after
    set_atomicity(0) is the engine's."""
    calls, data, rec, where = coll_errors("atomic", "write-comm:rma-fence", io)
    assert calls == {(r, c): ("MPI_SUCCESS", NB * BLK) for r in range(NP) for c in range(3)}, where
    assert data == pattern(0, 3 * REGION), where
    assert engine_counters(rec) == fallbacks(1, atomic=2), where
    assert (int(rec["engine_algorithm"]), int(rec["engine_shuffle"])) == (4, 2), where


@pytest.mark.parametrize("io", IOS)
def test_external32_view_goes_to_the_library(coll_errors, io):
    calls, data, rec, where = coll_errors("datarep", "write-comm-2:p2p", io)
    assert calls == {(r, c): ("MPI_SUCCESS", NB * BLK) for r in range(NP) for c in range(2)}, where
    assert data == external32_ints(0, REGION) + pattern(REGION, 2 * REGION), where
    assert engine_counters(rec) == fallbacks(1, datarep=1), where
    assert (int(rec["engine_algorithm"]), int(rec["engine_shuffle"])) == (5, 1), where


@pytest.mark.parametrize("io", IOS)
def test_sequential_mode_goes_to_the_library(coll_errors, io):
    calls, data, rec, where = coll_errors("sequential", "none:rma-lock", io)
    ordered = {(r, 0): ("MPI_SUCCESS", NB * BLK) for r in range(NP)}
    if io == "romio321":  # ROMIO refuses the write_all: the file is the ordered writes only
        assert calls == ordered | {(r, 1): ("MPI_ERR_UNSUPPORTED_OPERATION", -1) for r in range(NP)}, where
        assert data == pattern(0, REGION), where
    else:  # ompio writes it, every rank's 0xEE at offset 0 of the default view
        assert calls == ordered | {(r, 1): ("MPI_SUCCESS", NB * BLK) for r in range(NP)}, where
        assert data == b"\xee" * (NB * BLK) + pattern(NB * BLK, REGION), where
    assert engine_counters(rec) == fallbacks(0, sequential=1), where
    assert int(rec["shared_writes"]) == NP


EFBIG_CASES = [  # (algorithm:shuffle, failing rank, MPI library under the engine, mode)
    ("none:p2p", 3, "ompio", "efbig"),
    ("comm:rma-fence", 0, "romio321", "efbig"),
    ("write:rma-lock", 1, "ompio", "efbig"),
    ("write-comm:p2p", 2, "romio321", "efbig"),
    ("write-comm-2:rma-fence", 3, "romio321", "efbig"),
    ("write-comm-2:rma-lock", 0, "ompio", "efbig"),
    ("auto:p2p", 1, "ompio", "efbig"),
    # the failing write is the file's first (the engine sets up then); not on rank 0 with an RMA
    # shuffle: its window's shared-memory segment would be a file over the limit too
    ("write-comm:p2p", 0, "ompio", "efbig-first"),
    ("write-comm:rma-lock", 2, "romio321", "efbig-first"),
]


@pytest.mark.parametrize("collective,failrank,io,mode", EFBIG_CASES, ids=lambda v: str(v))
def test_efbig_on_one_aggregator_reaches_every_rank(coll_errors, collective, failrank, io, mode):
    calls, data, rec, where = coll_errors(mode, collective, io, str(failrank))
    ok = ("MPI_SUCCESS", NB * BLK)
    before = [0] if mode == "efbig" else []  # a write_at_all that succeeds first
    failing, after = len(before), len(before) + 1
    assert len(calls) == NP * (after + 1), where
    for c in before:
        assert {r: calls[(r, c)] for r in range(NP)} == {r: ok for r in range(NP)}, where
    got = {r: calls[(r, failing)] for r in range(NP)}
    assert got == {r: ("MPI_ERR_IO", -1) for r in range(NP)}, f"the write_all with EFBIG: {got}; {where}"
    # the limit restored, the same file takes the same write again on every rank
    assert {r: calls[(r, after)] for r in range(NP)} == {r: ok for r in range(NP)}, where
    assert data == pattern(0, REGION), where
    assert engine_counters(rec) == fallbacks(after + 1), where
    assert int(rec["engine_aggregators"]) == NP, where
