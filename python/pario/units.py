"""Human-readable numbers, one spelling for every output (report, diagnosis, dump).

Each function takes a float (None or non-finite gives "-") and returns plain text:
binary byte units from 1 KiB up, times in µs / ms / s / min / h, three significant digits.
"""

from __future__ import annotations

import math


def _ok(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def seconds(x: float | None) -> str:
    if not _ok(x):
        return "-"
    assert x is not None
    a = abs(x)
    if a == 0:
        return "0 s"
    if a < 1e-3:
        return f"{x * 1e6:.3g} µs"
    if a < 1:
        return f"{x * 1e3:.3g} ms"
    if a < 100:
        return f"{x:.3g} s"
    if a < 6000:
        return f"{x / 60:.3g} min"
    return f"{x / 3600:.3g} h"


def nbytes(x: float | None) -> str:
    if not _ok(x):
        return "-"
    assert x is not None
    if abs(x) < 1024:
        return f"{x:.0f} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        x /= 1024.0
        if abs(x) < 1024:
            return f"{x:.3g} {unit}"
    return f"{x / 1024.0:.3g} PiB"


def rate(x: float | None) -> str:
    return nbytes(x) + "/s" if _ok(x) else "-"


def count(x: float | None) -> str:
    return f"{int(round(x)):,}" if _ok(x) else "-"  # type: ignore[arg-type]


def percent(x: float | None) -> str:
    """A share in [0, 1] as a percentage; tiny shares keep two digits, almost-all is not 100%."""
    if not _ok(x):
        return "-"
    assert x is not None
    p = 100.0 * x
    if p != 0 and abs(p) < 0.1:
        return f"{p:.2g}%"
    if 99.95 <= p < 100:
        return ">99.9%"
    return f"{p:.1f}%"


def times(x: float | None) -> str:
    """A ratio: '3.2×'."""
    return f"{x:.3g}×" if _ok(x) else "-"
