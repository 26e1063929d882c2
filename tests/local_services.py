"""What the tests' private servers share (tests/slurm_cluster.py, tests/postgres_server.py,
the optuna-dashboard test): finding a daemon's program, a free loopback port, a log's tail."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

SBIN = ("/usr/sbin", "/sbin")  # daemons live here, which a non-root PATH may lack


def find_program(name: str, error: type[Exception], hint: str = "") -> str:
    """The path of ``name`` on PATH or in the sbin directories; ``error`` (with ``hint``) if absent."""
    path = shutil.which(name) or shutil.which(name, path=os.pathsep.join(SBIN))
    if path is None:
        raise error(f"{name} not found{hint}")
    return path


def free_port() -> int:
    """A TCP port nothing listens on now (the kernel's choice, so it clashes with no fixed port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log_tail(path: Path, lines: int = 30) -> str:
    if not path.exists():
        return f"({path} was not written)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
