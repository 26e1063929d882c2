"""Run a launch command (mpirun, mpiexec, srun, or a plain program) under the runtime.

The runtime reaches the application's processes, and only them: Open MPI's
mpirun gets ``-x LD_PRELOAD=...``, MPICH's Hydra ``-genv``, srun
``--export=ALL,...``; a plain program gets the variables in its environment
(with ``PARIO_PARENT_PID`` so that programs it starts in turn stay silent).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pario import paths
from pario.errors import ParioError

MPIRUN_NAMES = ("mpirun", "mpiexec", "orterun", "prterun", "mpiexec.hydra", "mpiexec.openmpi",
                "mpirun.openmpi", "mpirun.mpich", "mpiexec.mpich")


@dataclass(frozen=True)
class Launch:
    """A fully prepared launch: argument list, environment, and where the log will be."""

    argv: list[str]
    env: dict[str, str]
    log: Path


@lru_cache(maxsize=8)
def mpirun_flavour(launcher: str) -> str:
    """'openmpi' or 'hydra' (MPICH, Intel MPI), from ``launcher --version``."""
    try:
        out = subprocess.run([launcher, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "openmpi"
    text = (out.stdout + out.stderr).lower()
    if "hydra" in text or "mpich" in text or "intel(r) mpi" in text:
        return "hydra"
    return "openmpi"


def default_log_name(command: list[str]) -> str:
    """``<program>-<date>-<time>.pario`` in the current directory."""
    program = _guess_program(command)
    return f"{program}-{time.strftime('%Y%m%d-%H%M%S')}.pario"


def _guess_program(command: list[str]) -> str:
    launcher = Path(command[0]).name
    if launcher in MPIRUN_NAMES or launcher == "srun":
        for arg in command[1:]:
            if not arg.startswith("-") and (Path(arg).is_file() or shutil.which(arg)):
                return Path(arg).name
        return "job"
    return launcher


def prepare(command: list[str], log: str | None = None, extra_env: dict[str, str] | None = None) -> Launch:
    """Build the argument list and environment that run ``command`` under libpario.so."""
    if not command:
        raise ParioError("no command given: use `pario run [--log PATH] -- <launch command>`")
    exe = shutil.which(command[0])
    if exe is None:
        raise ParioError(f"command not found: {command[0]}")
    lib = str(paths.runtime_library())
    log_path = Path(log) if log else Path(default_log_name(command))
    log_path = log_path.resolve()
    if log_path.is_dir():
        raise ParioError(f"--log {log_path} is a directory; give a file name")
    if not log_path.parent.is_dir():
        raise ParioError(f"--log: directory {log_path.parent} does not exist")

    pario_vars = {k: v for k, v in os.environ.items() if k.startswith("PARIO_")}
    pario_vars.update(extra_env or {})
    pario_vars["PARIO_LOG"] = str(log_path)
    # The command as the user gave it, recorded in the log so that the
    # report's suggestions can repeat the launcher's own options.
    pario_vars["PARIO_LAUNCH"] = json.dumps(command)
    # Only the profiled program writes the log: under a launcher, only MPI
    # ranks ("mpi" matches no parent pid); a plain program is the direct
    # child of this process.  Tools those processes spawn stay silent.
    pario_vars["PARIO_PARENT_PID"] = "mpi"
    preload = ":".join(p for p in (lib, os.environ.get("LD_PRELOAD", "")) if p)

    env = dict(os.environ)
    launcher = Path(command[0]).name
    if launcher in MPIRUN_NAMES:
        if mpirun_flavour(exe) == "hydra":
            inject = ["-genv", "LD_PRELOAD", preload]
            for k, v in sorted(pario_vars.items()):
                inject += ["-genv", k, v]
        else:
            inject = ["-x", f"LD_PRELOAD={preload}"]
            for k, v in sorted(pario_vars.items()):
                inject += ["-x", f"{k}={v}"]
        argv = [command[0], *inject, *command[1:]]
    elif launcher == "srun":
        # --export=ALL carries srun's own environment too: values with a
        # comma (the JSON command) travel that way.
        env["PARIO_LAUNCH"] = pario_vars.pop("PARIO_LAUNCH")
        values = {"LD_PRELOAD": preload, **pario_vars}
        bad = [k for k, v in values.items() if "," in v]
        if bad:
            raise ParioError(f"srun --export cannot carry a comma in {', '.join(bad)}; "
                             "use a path without commas")
        export = ",".join(["ALL", *(f"{k}={v}" for k, v in sorted(values.items()))])
        argv = [command[0], f"--export={export}", *command[1:]]
    else:
        env.update(pario_vars)
        env["LD_PRELOAD"] = preload
        env["PARIO_PARENT_PID"] = str(os.getpid())
        argv = list(command)
    return Launch(argv=argv, env=env, log=log_path)


def run(launch: Launch) -> int:
    """Run a prepared launch; return the command's exit code."""
    try:
        proc = subprocess.run(launch.argv, env=launch.env)
    except OSError as exc:
        raise ParioError(f"cannot run {launch.argv[0]}: {exc.strerror}") from None
    return proc.returncode
