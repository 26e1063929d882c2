"""Helpers for tests/test_kernels.py: running the installed kernels, an independent
implementation of their data pattern, and the expected byte counts of each kernel
computed from its parameters (not from the kernel)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from conftest import MPI_VARS
from pario import paths

TIMEOUT = 120  # seconds for one mpirun; a hang fails the test instead of the suite
MASK64 = (1 << 64) - 1


def mpi_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for the kernels: MPI_VARS, without any kernel hints or preload."""
    env = {**os.environ, **MPI_VARS}
    for key in ("PARIO_KERNEL_HINTS", "PARIO_KERNEL_HINTS_FILE", "ROMIO_HINTS", "LD_PRELOAD"):
        env.pop(key, None)
    if extra:
        env.update(extra)
    return env


def kernel_exe(name: str) -> Path:
    return paths.program(f"pario-kernel-{name}")


def small_independent_writes(path: Path) -> list[str]:
    """The block kernel making 4 KiB independent writes to the shared file ``path`` (the diagnosis
    suggests hints for them)."""
    return [str(kernel_exe("block")), "--transfer-size", "4k", "--block-size", "256k", "--independent",
            "-o", str(path)]


def mpirun(
    exe: Path | str,
    args: list[str],
    np_: int,
    io: str | None = None,
    quiet: bool = False,
    env: dict[str, str] | None = None,
    timeout: float = TIMEOUT,
) -> subprocess.CompletedProcess:
    cmd = ["mpirun", "--oversubscribe", "-np", str(np_)]
    if quiet:
        cmd.append("-q")
    if io:
        cmd += ["--mca", "io", io]
    cmd += [str(exe), *args]
    return subprocess.run(cmd, env=mpi_env(env), capture_output=True, text=True, timeout=timeout)


def one_json(stdout: str) -> dict:
    """The kernel prints exactly one line on stdout: a JSON object."""
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected one line on stdout, got {stdout!r}"
    return json.loads(lines[0])


# ---- the data pattern (an independent implementation of kernel_common.c's) -------------

def file_seed(seed: int = 0, index: int = 0) -> int:
    return ((seed << 32) + index) & MASK64


def pattern(start: int, length: int, seed: int = 0) -> bytes:
    """Bytes [start, start+length) of a file written with the given file seed:
    byte o is byte (o mod 8), little-endian, of splitmix64(o div 8 + (seed+1)*golden)."""
    if length == 0:
        return b""
    w0, w1 = start // 8, (start + length + 7) // 8
    with np.errstate(over="ignore"):
        z = np.arange(w0, w1, dtype=np.uint64)
        z = z + np.uint64(((seed + 1) * 0x9E3779B97F4A7C15) & MASK64)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    raw = z.astype("<u8").tobytes()
    skip = start - w0 * 8
    return raw[skip:skip + length]


def assert_file_is_pattern(path: Path, size: int, seed: int = 0) -> None:
    """Every byte of the file is the pattern of its offset, and the file has the expected size."""
    data = path.read_bytes()
    assert len(data) == size, f"{path}: {len(data)} bytes, expected {size}"
    ref = pattern(0, size, seed)
    if data != ref:
        first = next(i for i in range(size) if data[i] != ref[i])
        raise AssertionError(
            f"{path}: byte {first} is {data[first]:#04x}, the pattern says {ref[first]:#04x}"
        )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- test configurations and their expected sizes ---------------------------------------

S3D_GRID = (12, 12, 6)
S3D_PROCS = {1: (1, 1, 1), 4: (2, 1, 2), 9: (3, 3, 1)}
TILE = dict(tile_x=16, tile_y=12, element_size=24, overlap_x=2, overlap_y=1)
TILE_GRID = {1: (1, 1), 4: (2, 2), 9: (3, 3)}
STEPS = 2


def kernel_args(kernel: str, nprocs: int) -> list[str]:
    """Small configurations (a few hundred KiB) that work with 1, 4 and 9 processes."""
    steps = ["--steps", str(STEPS)]
    if kernel == "block":
        return ["--block-size", "64k", "--transfer-size", "16k", "--segments", "3", *steps]
    if kernel == "s3d":
        nx, ny, nz = S3D_GRID
        px, py, pz = S3D_PROCS[nprocs]
        return ["--nx", str(nx), "--ny", str(ny), "--nz", str(nz),
                "--px", str(px), "--py", str(py), "--pz", str(pz), *steps]
    if kernel == "bt":
        return ["--size", "13", *steps]  # 13 does not divide by 2 or 3: uneven cells, as in NPB
    if kernel == "vpic":
        return ["--particles", "3000", *steps]
    if kernel == "tile":
        tx, ty = TILE_GRID[nprocs]
        return ["--tiles-x", str(tx), "--tiles-y", str(ty), "--tile-x", str(TILE["tile_x"]),
                "--tile-y", str(TILE["tile_y"]), "--element-size", str(TILE["element_size"]),
                "--overlap-x", str(TILE["overlap_x"]), "--overlap-y", str(TILE["overlap_y"]), *steps]
    raise ValueError(kernel)


def expected_bytes(kernel: str, nprocs: int) -> tuple[int, int]:
    """(bytes written by all ranks together, size of the file) for kernel_args(kernel, nprocs)."""
    if kernel == "block":
        n = nprocs * 3 * 64 * 1024 * STEPS
        return n, n
    if kernel == "s3d":
        nx, ny, nz = S3D_GRID
        # yspecies (11 species) + u (3) + pressure + temperature, doubles
        n = nx * ny * nz * (11 + 3 + 1 + 1) * 8 * STEPS
        return n, n
    if kernel == "bt":
        n = 13 ** 3 * 5 * 8 * STEPS
        return n, n
    if kernel == "vpic":
        n = nprocs * 3000 * 8 * 4 * STEPS
        return n, n
    if kernel == "tile":
        tx, ty = TILE_GRID[nprocs]
        sx, sy, e = TILE["tile_x"], TILE["tile_y"], TILE["element_size"]
        ox, oy = TILE["overlap_x"], TILE["overlap_y"]
        written = nprocs * sx * sy * e * STEPS
        size = (tx * sx - (tx - 1) * ox) * (ty * sy - (ty - 1) * oy) * e * STEPS
        return written, size
    raise ValueError(kernel)


# ---- a session cache of kernel runs ------------------------------------------------------

@dataclass
class KernelRun:
    proc: subprocess.CompletedProcess
    result: dict
    path: Path
    digest: str


@pytest.fixture(scope="session")
def kernel_runs(tmp_path_factory: pytest.TempPathFactory):
    """run(kernel, nprocs, mode, io) -> KernelRun, each configuration run once per session
    with --verify; the file's digest is kept for the cross-mode comparison."""
    base = tmp_path_factory.mktemp("kernels")
    cache: dict[tuple[str, int, str, str], KernelRun] = {}

    def run(kernel: str, nprocs: int, mode: str, io: str) -> KernelRun:
        key = (kernel, nprocs, mode, io)
        if key not in cache:
            path = base / f"{kernel}-{nprocs}-{mode}-{io}.dat"
            args = [*kernel_args(kernel, nprocs), "--path", str(path), f"--{mode}", "--verify"]
            proc = mpirun(kernel_exe(kernel), args, nprocs, io=io)
            assert proc.returncode == 0, f"{kernel} failed ({proc.returncode}): {proc.stderr}"
            cache[key] = KernelRun(proc, one_json(proc.stdout), path, sha256(path))
        return cache[key]

    return run


def pario_cli(args: list[str], env: dict[str, str] | None = None, timeout: float = TIMEOUT):
    """Run `pario ARGS` (the installed CLI).  While cli.py does not list "kernel" in
    COMMANDS, the same main() is run with it added."""
    from pario import cli

    if "kernel" in cli.COMMANDS:
        exe = Path(sys.executable).parent / "pario"
        cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "pario"]
    else:
        shim = ("import sys, pario.cli as c; c.COMMANDS = tuple(c.COMMANDS) + ('kernel',); "
                "sys.exit(c.main(sys.argv[1:]))")
        cmd = [sys.executable, "-c", shim]
    return subprocess.run([*cmd, *args], env=mpi_env(env), capture_output=True, text=True, timeout=timeout)
