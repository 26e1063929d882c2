"""NumPy loaded with its BLAS on one thread (and, for one-shot commands, without huge pages).

pario does no linear algebra, but the OpenBLAS that NumPy's wheels bundle starts a thread per core
when NumPy loads, and those threads spin: on a 2-core machine 0.03 s of CPU at the import and
0.08 s over a whole `pario report` of a small log, more on a login node with dozens of cores.
The commands that read logs load NumPy through :func:`load_numpy`, which sets
``OPENBLAS_NUM_THREADS=1`` for the load only (a value the user set is kept) and then puts the
environment back, so that the programs pario starts (``pario tune``'s trials) see the user's own.
The one-shot commands (``pario report``, ``diagnose``, ``dump``) also load it without its advice
to back large arrays with huge pages (:data:`HUGE_PAGES`).
"""

from __future__ import annotations

import importlib
import os
import sys

VARIABLE = "OPENBLAS_NUM_THREADS"
#: NumPy's switch (read when it loads) for advising the kernel to back its large arrays with huge
#: pages. Where transparent huge pages are "madvise" with defrag "madvise" (Debian's default),
#: each such fault may compact memory first: on this project's 2-core machine a fresh 500 MB
#: array took 0.05-0.97 s to fill with that advice and 0.20-0.24 s without it, and `pario report`
#: of a 100 000-rank log 5.06-5.82 s against 4.93-5.02 s (docs/performance.md).
HUGE_PAGES = "NUMPY_MADVISE_HUGEPAGE"


def load_numpy(one_shot: bool = False) -> None:
    """Import NumPy, its BLAS on one thread unless the environment says otherwise; for a
    ``one_shot`` command (its arrays filled once and read a few times) without huge-page advice
    either, unless the environment says otherwise. The environment is put back after the
    import."""
    if "numpy" in sys.modules:
        return
    wanted = {VARIABLE: "1", **({HUGE_PAGES: "0"} if one_shot else {})}
    added = [name for name in wanted if name not in os.environ]
    os.environ.update({name: wanted[name] for name in added})
    try:
        importlib.import_module("numpy")
    finally:
        for name in added:
            del os.environ[name]
