"""Where the installed native parts live (inside the package, put there by CMake)."""

from __future__ import annotations

import os
from pathlib import Path

from pario.errors import ParioError

PACKAGE_DIR = Path(__file__).resolve().parent


def runtime_library() -> Path:
    """Absolute path of libpario.so: $PARIO_RUNTIME if set (a runtime built against another MPI
    library, e.g. MPICH when the package was built with Open MPI), else the installed one."""
    chosen = os.environ.get("PARIO_RUNTIME")
    if chosen:
        lib = Path(chosen).resolve()
        if not lib.is_file():
            raise ParioError(f"PARIO_RUNTIME: no such file: {chosen}")
        return lib
    lib = PACKAGE_DIR / "lib" / "libpario.so"
    if not lib.is_file():
        raise ParioError(f"libpario.so is not installed at {lib}; reinstall pario (pip install .)")
    return lib


def program(name: str) -> Path:
    """Absolute path of an installed program (a kernel or a bundled example)."""
    exe = PACKAGE_DIR / "bin" / name
    if not exe.is_file():
        raise ParioError(f"program {name!r} is not installed in {exe.parent}")
    return exe
