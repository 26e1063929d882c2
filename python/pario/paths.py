"""Where the installed native parts live (inside the package, put there by CMake)."""

from __future__ import annotations

from pathlib import Path

from pario.errors import ParioError

PACKAGE_DIR = Path(__file__).resolve().parent


def runtime_library() -> Path:
    """Absolute path of libpario.so."""
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
