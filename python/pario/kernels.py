"""The installed I/O kernels (``pario-kernel-<name>``): what they are and how to launch them.

The kernels are C MPI programs built with pario (``src/kernels``); each writes a
known pattern with MPI-IO, optionally reads it back and verifies every byte, and
prints one JSON line on stdout (documented in docs/kernels.md).  This module
builds the launch command (an argument list, never a shell string) and runs it.

Example::

    from pario import kernels
    res = kernels.run("block", ["--path", "/scratch/x.dat", "--verify"], np=4,
                      launcher_args=["--oversubscribe"], capture=True)
    res.returncode, res.result["bytes_written"]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pario import paths
from pario.errors import ParioError


@dataclass(frozen=True)
class Kernel:
    name: str
    description: str
    models: str  # the benchmark whose access pattern it models


KERNELS: tuple[Kernel, ...] = (
    Kernel("block", "IOR-like: segments x block bytes per rank in transfer-size requests; shared file "
           "(strided or contiguous) or file per process; MPI-IO or POSIX", "IOR"),
    Kernel("s3d", "S3D-IO pattern: 3-D block partition of four 3-D/4-D double arrays, each written "
           "through a subarray view; --pnetcdf: through PnetCDF (CDF-5)", "S3D-IO"),
    Kernel("bt", "NAS BT-IO pattern: diagonal multi-partitioning, 5 doubles per grid point, square "
           "process counts, time steps appended", "NAS BT-IO"),
    Kernel("vpic", "VPIC-IO pattern: 8 particle variables, each a contiguous 1-D block per rank in one "
           "shared file; --hdf5: through HDF5 (8 datasets per step)", "VPIC-IO"),
    Kernel("tile", "mpi-tile-io pattern: 2-D tiles, one per rank, configurable element size and overlap, "
           "subarray views", "mpi-tile-io"),
)

#: Launchers ``build_command`` knows, with the option that sets the process count.
LAUNCHERS: dict[str, str | None] = {"mpirun": "-np", "mpiexec": "-n", "srun": "-n", "none": None}


def names() -> list[str]:
    return [k.name for k in KERNELS]


def get(name: str) -> Kernel:
    """The kernel called ``name``; ParioError (one line) if there is none."""
    for k in KERNELS:
        if k.name == name:
            return k
    raise ParioError(f"unknown kernel {name!r}; the kernels are {', '.join(names())} (pario kernel --list)")


def program_name(name: str) -> str:
    return f"pario-kernel-{get(name).name}"


def executable(name: str) -> Path:
    """Absolute path of the installed kernel program."""
    return paths.program(program_name(name))


def build_command(
    name: str,
    kernel_args: Sequence[str] = (),
    *,
    np: int = 1,
    launcher: str = "mpirun",
    launcher_args: Sequence[str] = (),
) -> list[str]:
    """The argument list that runs kernel ``name`` on ``np`` processes.

    ``launcher`` is mpirun (``mpirun -np N``), mpiexec (``mpiexec -n N``), srun
    (``srun -n N``) or none (the kernel alone, one process).  ``launcher_args``
    go between the launcher's process count and the kernel (for example
    ``--oversubscribe`` or ``--mca io romio321``).
    """
    exe = executable(name)
    if launcher not in LAUNCHERS:
        raise ParioError(f"unknown launcher {launcher!r}; use one of {', '.join(LAUNCHERS)}")
    if isinstance(np, bool) or not isinstance(np, int) or np < 1:
        raise ParioError(f"the number of processes must be a positive integer (got {np!r})")
    if launcher == "none":
        if np != 1 or launcher_args:
            raise ParioError(
                "--launcher none runs one process without launcher arguments; use mpirun or srun"
            )
        return [str(exe), *kernel_args]
    found = shutil.which(launcher)
    if not found:
        raise ParioError(f"{launcher} is not on PATH; install MPI (or load its module) or choose --launcher")
    return [found, LAUNCHERS[launcher] or "-n", str(np), *launcher_args, str(exe), *kernel_args]


def parse_output(stdout: str) -> dict | None:
    """The kernel's JSON result: the last stdout line that is a JSON object with a "kernel" key."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and "kernel" in obj:
            return obj
    return None


@dataclass
class KernelRun:
    command: list[str]
    returncode: int
    stdout: str | None = None
    stderr: str | None = None
    result: dict | None = None  # the parsed JSON line (capture=True only)


def _exit_code(rc: int) -> int:
    # a process killed by a signal: report it as a shell does (128 + signal)
    return 128 - rc if rc < 0 else rc


def run(
    name: str,
    kernel_args: Sequence[str] = (),
    *,
    np: int = 1,
    launcher: str = "mpirun",
    launcher_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    capture: bool = False,
    timeout: float | None = None,
) -> KernelRun:
    """Run a kernel and wait for it.  ``env`` entries are added to the current environment.

    With ``capture`` the output is returned (and the JSON line parsed);
    otherwise it goes to this process's stdout/stderr.  The return code is the
    launcher's, which for mpirun and srun is the kernel's exit code: 0 ok,
    1 I/O error or verification failure, 2 bad parameters.
    """
    cmd = build_command(name, kernel_args, np=np, launcher=launcher, launcher_args=launcher_args)
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update(env)
    try:
        proc = subprocess.run(
            cmd, env=full_env, capture_output=capture, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ParioError(f"kernel {name} did not finish within {timeout:g} s: {' '.join(cmd)}") from exc
    except OSError as exc:
        raise ParioError(f"cannot run {cmd[0]}: {exc.strerror or exc}") from exc
    res = KernelRun(cmd, _exit_code(proc.returncode))
    if capture:
        res.stdout, res.stderr = proc.stdout, proc.stderr
        res.result = parse_output(proc.stdout or "")
    return res


__all__ = [
    "KERNELS",
    "LAUNCHERS",
    "Kernel",
    "KernelRun",
    "build_command",
    "executable",
    "get",
    "names",
    "parse_output",
    "program_name",
    "run",
]
