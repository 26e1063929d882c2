"""NumPy loaded with its BLAS on one thread.

pario does no linear algebra, but the OpenBLAS that NumPy's wheels bundle starts a thread per core
when NumPy loads, and those threads spin: on a 2-core machine 0.03 s of CPU at the import and
0.08 s over a whole `pario report` of a small log, more on a login node with dozens of cores.
The commands that read logs load NumPy through :func:`load_numpy`, which sets
``OPENBLAS_NUM_THREADS=1`` for the load only (a value the user set is kept) and then puts the
environment back, so that the programs pario starts (``pario tune``'s trials) see the user's own.
"""

from __future__ import annotations

import importlib
import os
import sys

VARIABLE = "OPENBLAS_NUM_THREADS"


def load_numpy() -> None:
    """Import NumPy, its BLAS on one thread unless the environment says otherwise."""
    if "numpy" in sys.modules:
        return
    if VARIABLE in os.environ:
        importlib.import_module("numpy")
        return
    os.environ[VARIABLE] = "1"
    try:
        importlib.import_module("numpy")
    finally:
        del os.environ[VARIABLE]
