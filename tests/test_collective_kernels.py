"""The collective-write engine (src/collective) against ROMIO, kernel by kernel.

Each kernel (block in its strided layout, s3d, bt, tile, vpic: every one's collective writes
are non-contiguous across ranks, s3d's, bt's and tile's through non-contiguous views too) writes
its file once with Open MPI's ROMIO and no pario (``mpirun --mca io romio321``): the reference,
itself checked byte for byte against the independent pattern of kernel_helpers.  Then the
engine writes the same file under libpario (``mpirun -x LD_PRELOAD -x PARIO_LOG -x
PARIO_COLL=ALGO:SHUFFLE``), for the six algorithms (``none comm write write-comm write-comm-2
auto``) by the three shuffles (``p2p rma-fence rma-lock``), and the file must hash the same.
The hints are ``cb_buffer_size=2048`` (every call takes several buffer cycles),
``cb_config_list=*:*`` (else ROMIO's one aggregator per node leaves one aggregator on this one
machine) and ``cb_nodes`` 1, 2 or 3, rotating.  The MPI library under the engine alternates
between ompio and romio321 (it still opens the file and sets the views).  From the log's record
of the file: ``engine_writes`` is the number of collective write calls the kernel made (from its
parameters, counted once per call), ``engine_fallbacks`` is 0, ``engine_algorithm`` and
``engine_shuffle`` are those selected (for ``auto``, the one its rule gives: ``direct``, 7, where
each rank's bytes are one contiguous range that no other rank's interleaves, block's and vpic's
calls and any kernel on one rank, else ``write-comm``), ``engine_aggregators`` is min(cb_nodes,
ranks), and ``engine_cycles`` is at least the sum over calls of ceil(distinct bytes of the call /
(aggregators x cb_buffer_size)), which is more than one cycle per call for every configuration
here (0 cycles for ``direct``).

Which runs: every algorithm x shuffle (18) for every kernel at 4 ranks (90 runs); at 1 and at 9
ranks a rotating fifth of them per kernel (combination j goes to kernel j mod 5 at 1 rank and
to kernel (j - 2) mod 5 at 9 ranks), so that each combination still runs once at each rank
count, 36 runs: 126 engine runs, about 70 s here.  The full product (270 runs, set
PARIO_COLL_FULL_MATRIX=1) took 207 s on this 2-core machine, 9-rank runs oversubscribed being
the slowest (up to 2 s each), which is too large a share of ``make test`` for what it adds: the
9-rank runs differ from the 4-rank ones in the process grid, not in what the engine does per
algorithm.

MPICH: the kernels are compiled a second time with ``mpicc.mpich`` (a few seconds) and run at 4
ranks under ``mpiexec.mpich`` with the same hints; MPICH's ROMIO (a newer ROMIO than Open MPI's
romio321) must write the same bytes as the reference.  9 ranks are left out there: MPICH's
ranks poll and take about 5 s a run oversubscribed.

Time (2 cores, shared): about 85 s for the whole file.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kernel_helpers import (
    S3D_GRID,
    TILE,
    TILE_GRID,
    TIMEOUT,
    assert_file_is_pattern,
    expected_bytes,
    kernel_args,
    kernel_exe,
    mpi_env,
    one_json,
    sha256,
)
from pario.log import read_log
from record_helpers import one_record

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ("block", "s3d", "bt", "vpic", "tile")
ALGORITHMS = {"none": 1, "comm": 2, "write": 3, "write-comm": 4, "write-comm-2": 5, "auto": None}
DIRECT = 7  # auto's choice when two-phase would only add a copy (docs/collective.md)
SHUFFLES = {"p2p": 1, "rma-fence": 2, "rma-lock": 3}
COMBOS = [(a, s) for a in ALGORITHMS for s in SHUFFLES]
CB_BUFFER = 2048
STEPS = 2

# block and vpic smaller than kernel_helpers' configurations (those reach MiBs at 9 ranks)
BLOCK, TRANSFER, SEGMENTS = 8192, 4096, 2
PARTICLES = 640
BT_SIZE = 13


def args_of(kernel: str, nprocs: int) -> list[str]:
    """The kernel's parameters (a few hundred KiB at most), with STEPS steps."""
    steps = ["--steps", str(STEPS)]
    if kernel == "block":
        return ["--layout", "strided", "--block-size", str(BLOCK), "--transfer-size", str(TRANSFER),
                "--segments", str(SEGMENTS), *steps]
    if kernel == "vpic":
        return ["--particles", str(PARTICLES), *steps]
    args = kernel_args(kernel, nprocs)  # s3d, bt, tile: the kernel tests' own small configurations
    assert args[-2:] == steps and (kernel != "bt" or args[1] == str(BT_SIZE))
    return args


def call_bytes(kernel: str, nprocs: int) -> list[int]:
    """Distinct file bytes of each collective write call, in order (one entry per call that
    every rank makes): the length of the list is the number of calls."""
    if kernel == "block":
        return [nprocs * TRANSFER] * (BLOCK // TRANSFER * SEGMENTS * STEPS)
    if kernel == "s3d":
        points = math.prod(S3D_GRID)
        return [points * 8 * comps for comps in (11, 3, 1, 1)] * STEPS
    if kernel == "bt":
        return [BT_SIZE ** 3 * 5 * 8] * STEPS
    if kernel == "vpic":
        return [nprocs * PARTICLES * 4] * (8 * STEPS)
    if kernel == "tile":
        tx, ty = TILE_GRID[nprocs]
        sx, sy, e = TILE["tile_x"], TILE["tile_y"], TILE["element_size"]
        ox, oy = TILE["overlap_x"], TILE["overlap_y"]
        return [(tx * sx - (tx - 1) * ox) * (ty * sy - (ty - 1) * oy) * e] * STEPS
    raise ValueError(kernel)


def hints(cb_nodes: int) -> list[str]:
    return ["--hints", f"cb_buffer_size={CB_BUFFER},cb_nodes={cb_nodes},cb_config_list=*:*"]


def min_cycles(kernel: str, nprocs: int, aggregators: int) -> int:
    """No two-phase write can move more than aggregators x cb_buffer_size bytes in a cycle."""
    return sum(math.ceil(n / (aggregators * CB_BUFFER)) for n in call_bytes(kernel, nprocs))


def expected_algorithm(kernel: str, nprocs: int, algo: str, aggregators: int) -> int:
    """The algorithm the log gives (that of the last call). auto writes 'direct' when each
    rank's bytes are one contiguous range of the file and of memory and the ranks' ranges do
    not interleave (block's and vpic's calls, every kernel on one rank), else 'none' when the
    call fits in one buffer cycle and 'write' (its static choice) when it does not."""
    if ALGORITHMS[algo] is not None:
        return ALGORITHMS[algo]
    if kernel in ("block", "vpic") or nprocs == 1:
        return DIRECT
    last = call_bytes(kernel, nprocs)[-1]
    assert last > aggregators * CB_BUFFER  # so some aggregator has more than one buffer to write
    return ALGORITHMS["write"]


Case = tuple[str, int, str, str, int, str]  # kernel, ranks, algorithm, shuffle, cb_nodes, MPI-IO component


def cases(full: bool = os.environ.get("PARIO_COLL_FULL_MATRIX") == "1") -> list[Case]:
    out = []
    for ki, kernel in enumerate(KERNELS):
        for j, (algo, shuffle) in enumerate(COMBOS):
            cb_nodes = 1 + (j + ki) % 3
            io = ("ompio", "romio321")[(j + ki) % 2]
            out.append((kernel, 4, algo, shuffle, cb_nodes, io))
            if full or j % 5 == ki:
                out.append((kernel, 1, algo, shuffle, 1, io))
            if full or j % 5 == (ki + 2) % 5:
                out.append((kernel, 9, algo, shuffle, cb_nodes, io))
    return out


CASES = cases()


def run(cmd: list[str], timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, env=mpi_env(), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)}\nexit {proc.returncode}: {proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory):
    """reference(kernel, nprocs) -> (sha256, JSON result) of the file ROMIO writes without pario,
    checked against the pattern once."""
    base = tmp_path_factory.mktemp("romio-reference")
    cache: dict[tuple[str, int], tuple[str, dict]] = {}

    def _ref(kernel: str, nprocs: int) -> tuple[str, dict]:
        if (kernel, nprocs) not in cache:
            path = base / f"{kernel}-{nprocs}.dat"
            proc = run(["mpirun", "--oversubscribe", "-np", str(nprocs), "--mca", "io", "romio321",
                        str(kernel_exe(kernel)), *args_of(kernel, nprocs), *hints(2), "--path", str(path)])
            result = one_json(proc.stdout)
            size = sum(call_bytes(kernel, nprocs))
            # bytes passed to the calls (tile's overlaps once per writer), and the file's size
            assert (result["bytes_written"], result["file_bytes"]) == (
                expected_bytes(kernel, nprocs) if kernel in ("s3d", "bt", "tile") else (size, size))
            assert result["file_bytes"] == size
            assert_file_is_pattern(path, size)
            cache[(kernel, nprocs)] = (sha256(path), result)
            path.unlink()
        return cache[(kernel, nprocs)]

    return _ref


@pytest.mark.parametrize("kernel,nprocs,algo,shuffle,cb_nodes,io", CASES,
                         ids=[f"{k}-np{n}-{a}:{s}-cb{c}-{io}" for k, n, a, s, c, io in CASES])
@pytest.mark.slow
def test_engine_writes_the_bytes_romio_writes(tmp_path, reference, libpario, kernel, nprocs, algo, shuffle,
                                              cb_nodes, io):
    ref_sha, ref = reference(kernel, nprocs)
    path, log = tmp_path / f"{kernel}.dat", tmp_path / "run.pario"
    cmd = ["mpirun", "--oversubscribe", "-np", str(nprocs), "--mca", "io", io,
           "-x", f"LD_PRELOAD={libpario}", "-x", f"PARIO_LOG={log}", "-x", f"PARIO_COLL={algo}:{shuffle}",
           str(kernel_exe(kernel)), *args_of(kernel, nprocs), *hints(cb_nodes), "--path", str(path)]
    proc = run(cmd)
    where = ("reproduce: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
             f"OMPI_MCA_btl_vader_single_copy_mechanism=none {' '.join(cmd)}")
    assert one_json(proc.stdout)["file_bytes"] == ref["file_bytes"], where
    assert sha256(path) == ref_sha, f"the file differs from ROMIO's; {where}"

    rec = one_record(read_log(log).layer("mpiio"), str(path))
    calls = len(call_bytes(kernel, nprocs))
    aggregators = min(cb_nodes, nprocs)
    assert rec["coll_writes"] == nprocs * calls
    got = {k: int(rec[k]) for k in ("engine_writes", "engine_fallbacks", "engine_algorithm", "engine_shuffle",
                                    "engine_aggregators", "engine_cycles")}
    assert got["engine_writes"] == calls and got["engine_fallbacks"] == 0, f"{got}; {where}"
    assert got["engine_algorithm"] == expected_algorithm(kernel, nprocs, algo, aggregators), f"{got}; {where}"
    assert got["engine_shuffle"] == SHUFFLES[shuffle], f"{got}; {where}"
    assert got["engine_aggregators"] == aggregators, f"{got}; {where}"
    least = min_cycles(kernel, nprocs, aggregators)
    assert least > calls  # the configuration makes several cycles per call somewhere
    if got["engine_algorithm"] == DIRECT:
        assert got["engine_cycles"] == 0, f"{got}; {where}"
    else:
        assert got["engine_cycles"] >= least, f"{got}, at least {least} cycles expected; {where}"


def test_every_combination_at_every_rank_count():
    for nprocs in (1, 4, 9):
        assert {(a, s) for k, n, a, s, c, io in CASES if n == nprocs} == set(COMBOS)
    assert {(k, c) for k, n, a, s, c, io in CASES if n == 4} == {(k, c) for k in KERNELS for c in (1, 2, 3)}


# ---- MPICH's ROMIO writes the same bytes ---------------------------------------------------------

@pytest.fixture(scope="module")
def mpich_kernels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The kernels compiled with MPICH's wrapper, straight from src/kernels."""
    mpicc = shutil.which("mpicc.mpich")
    assert mpicc, "mpicc.mpich not found: Debian's mpich and libmpich-dev are needed (make deps)"
    out = tmp_path_factory.mktemp("kernels-mpich")
    src = ROOT / "src" / "kernels"
    # the shared run's sources, as src/kernels/CMakeLists.txt lists them
    cmake = (src / "CMakeLists.txt").read_text()
    common = re.search(r"add_library\(pario_kernel_common STATIC ([^)]*)\)", cmake)
    assert common, "no pario_kernel_common library in src/kernels/CMakeLists.txt"
    sources = [str(src / name) for name in common[1].split()]
    built = {}
    for kernel in KERNELS:
        exe = out / f"pario-kernel-{kernel}"
        subprocess.run([mpicc, "-std=c11", "-O1", "-Wall", "-Wextra", "-I", str(ROOT / "include"),
                        "-o", str(exe), str(src / f"{kernel}.c"), *sources, "-lm"],
                       check=True, timeout=120)
        built[kernel] = exe
    return built


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.slow
def test_mpich_romio_writes_the_same_bytes(tmp_path, reference, mpich_kernels, kernel):
    mpiexec = shutil.which("mpiexec.mpich")
    assert mpiexec, "mpiexec.mpich not found"
    path = tmp_path / f"{kernel}.dat"
    proc = run([mpiexec, "-n", "4", str(mpich_kernels[kernel]), *args_of(kernel, 4), *hints(2),
                "--path", str(path)])
    result = one_json(proc.stdout)
    # MPICH's ROMIO reports the hints in effect: two aggregators, as asked
    assert result["hints"]["cb_nodes"] == "2" and result["hints"]["cb_buffer_size"] == str(CB_BUFFER)
    assert sha256(path) == reference(kernel, 4)[0]


MPICH_ENGINE = [("s3d", "write-comm-2", "rma-lock"), ("tile", "write-comm", "p2p"),
                ("bt", "none", "rma-fence"), ("vpic", "auto", "p2p")]


@pytest.mark.parametrize("kernel,algo,shuffle", MPICH_ENGINE,
                         ids=[f"{k}-{a}:{s}" for k, a, s in MPICH_ENGINE])
@pytest.mark.slow
def test_engine_under_mpich(tmp_path, reference, mpich_kernels, mpich_runtime, pario_cmd, kernel, algo,
                            shuffle):
    """The engine built against MPICH (libpario for MPICH, through pario run and Hydra's mpiexec)
    writes the bytes ROMIO writes, with every call served."""
    path, log = tmp_path / f"{kernel}.dat", tmp_path / "run.pario"
    cmd = [*pario_cmd, "run", "--collective", f"{algo}:{shuffle}", "--log", str(log), "--",
           shutil.which("mpiexec.mpich") or "mpiexec.mpich", "-n", "4", str(mpich_kernels[kernel]),
           *args_of(kernel, 4), *hints(2), "--path", str(path)]
    proc = subprocess.run(cmd, env=mpi_env({"PARIO_RUNTIME": str(mpich_runtime)}), capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sha256(path) == reference(kernel, 4)[0]
    rec = one_record(read_log(log).layer("mpiio"), str(path))
    calls = len(call_bytes(kernel, 4))
    assert (int(rec["engine_writes"]), int(rec["engine_fallbacks"])) == (calls, 0)
    assert int(rec["engine_algorithm"]) == expected_algorithm(kernel, 4, algo, 2)
