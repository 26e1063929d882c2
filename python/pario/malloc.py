"""glibc's malloc thresholds (mallopt(3)) for the processes pario runs its analyses in.

By default glibc maps each allocation over 128 KiB-32 MiB (its dynamic threshold) afresh and
gives freed memory back at once past a 128 KiB trim threshold, so an analysis that makes
arrays of a million values, again and again, pays the kernel's page faults each time: a
`pario report` of a 100 000-rank log took 848 000 page faults and 1.8 s of system time
(docs/performance.md, "Report speed").  Larger thresholds keep that memory in the heap to be
used again.
"""

from __future__ import annotations

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: (trim, mmap) thresholds of a survey's worker: it lives long and holds one batch of rows.
WORKER = (64 << 20, 4 << 20)
#: (trim, mmap) thresholds of a one-shot command (pario.cli.ONE_SHOT): it ends once its report is
#: printed, so nothing is given back before the end; 32 MiB is the largest mmap threshold
#: mallopt takes on a 64-bit system.
ONE_SHOT = (1 << 30, 32 << 20)


def set_thresholds(trim: int, mmap: int) -> bool:
    """Set this process's malloc trim and mmap thresholds (glibc; False elsewhere, or when
    glibc refuses a value)."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_TRIM_THRESHOLD, trim)) and bool(mallopt(M_MMAP_THRESHOLD, mmap))
