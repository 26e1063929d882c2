"""Human-readable numbers, one spelling for every output (report, diagnosis, dump).

Each function takes a float (None or non-finite gives "-") and returns plain text:
binary byte units from 1 KiB up, times in ns / µs / ms / s / min / h / d, three significant
digits, never scientific notation (large values get thousands separators: "1,230 d").
"""

from __future__ import annotations

import math


def _ok(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def plain(x: float, digits: int = 3) -> str:
    """``x`` with ``digits`` significant digits in plain notation (what ``:.3g`` gives, without
    its exponent): 0.0123, 4.5, 123, 12,345."""
    if not math.isfinite(x):
        return "-"
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 10 ** digits:
        return f"{x:,.0f}"
    decimals = max(0, digits - 1 - math.floor(math.log10(a)))
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _below(x: float, limit: float) -> bool:
    """|x| < limit once rounded to three significant digits (999.7 is not below 1000)."""
    return abs(float(plain(x).replace(",", ""))) < limit


def seconds(x: float | None) -> str:
    if not _ok(x):
        return "-"
    assert x is not None
    a = abs(x)
    if a == 0:
        return "0 s"
    if _below(x * 1e9, 1000):
        return f"{plain(x * 1e9)} ns"
    if _below(x * 1e6, 1000):
        return f"{plain(x * 1e6)} µs"
    if _below(x * 1e3, 1000):
        return f"{plain(x * 1e3)} ms"
    if _below(x, 100):
        return f"{plain(x)} s"
    if _below(x / 60, 100):
        return f"{plain(x / 60)} min"
    if _below(x / 3600, 48):
        return f"{plain(x / 3600)} h"
    return f"{plain(x / 86400)} d"


def signed_seconds(x: float) -> str:
    """A change of time with its sign: '+4.23 ms', '-51.9 ms', '0 s'."""
    return ("+" if x > 0 else "-" if x < 0 else "") + seconds(abs(x))


def nbytes(x: float | None) -> str:
    if not _ok(x):
        return "-"
    assert x is not None
    if abs(x) < 1024:
        return f"{x:.0f} B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        x /= 1024.0
        if _below(x, 1000):
            return f"{plain(x)} {unit}"
    return f"{plain(x / 1024.0)} PiB"


def rate(x: float | None) -> str:
    return nbytes(x) + "/s" if _ok(x) else "-"


def count(x: float | None) -> str:
    return f"{int(round(x)):,}" if _ok(x) else "-"  # type: ignore[arg-type]  # _ok says it is a number


def plural(n: int, word: str) -> str:
    """'1 rank', '2,048 ranks': a count and its noun, plural unless the count is 1."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def nranks(n: int) -> str:
    """'1 rank', '2,048 ranks'."""
    return plural(n, "rank")


def percent(x: float | None) -> str:
    """A share in [0, 1] as a percentage; tiny shares keep two digits, almost-all is not 100%."""
    if not _ok(x):
        return "-"
    assert x is not None
    p = 100.0 * x
    if p != 0 and abs(p) < 0.1:
        return f"{plain(p, 2)}%"
    if 99.95 <= p < 100:
        return ">99.9%"
    return f"{p:.1f}%"


def times(x: float | None) -> str:
    """A ratio: '3.2×'."""
    return f"{plain(x)}×" if _ok(x) else "-"  # type: ignore[arg-type]  # _ok says it is a number
