"""Human-readable numbers for statements and evidence (plain strings, no markup)."""

from __future__ import annotations

import math


def seconds(x: float) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    a = abs(x)
    if a == 0:
        return "0 s"
    if a < 1e-3:
        return f"{x * 1e6:.3g} µs"
    if a < 1:
        return f"{x * 1e3:.3g} ms"
    if a < 1000:
        return f"{x:.3g} s"
    return f"{x:,.0f} s"


def nbytes(x: float) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    if abs(x) < 1024:
        return f"{x:.0f} B"
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        x /= 1024.0
        if abs(x) < 1024 or unit == "PiB":
            return f"{x:.3g} {unit}"
    return f"{x:.3g} PiB"  # pragma: no cover


def rate(x: float) -> str:
    return nbytes(x) + "/s" if x is not None and math.isfinite(x) else "-"


def count(x: float) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{int(round(x)):,}"


def pct(x: float) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    p = 100.0 * x
    if p != 0 and abs(p) < 0.1:
        return f"{p:.2g}%"
    if 99.95 <= p < 100:
        return ">99.9%"
    return f"{p:.1f}%"


def times(x: float) -> str:
    return f"{x:.3g}×" if x is not None and math.isfinite(x) else "-"


def ranks(rs: list[int] | tuple[int, ...], limit: int = 8) -> str:
    """'rank 3' / 'ranks 0, 5, 7' / 'ranks 0, 1, 2, ... (12 in all)'."""
    rs = list(rs)
    if not rs:
        return "no rank"
    if len(rs) == 1:
        return f"rank {rs[0]}"
    shown = ", ".join(str(r) for r in rs[:limit])
    more = f", ... ({len(rs)} in all)" if len(rs) > limit else ""
    return f"ranks {shown}{more}"


def value(v: float | int | str | None, unit: str) -> str:
    """A metric value with its unit, for display."""
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if unit == "B":
        return nbytes(float(v))
    if unit == "s":
        return seconds(float(v))
    if unit == "B/s":
        return rate(float(v))
    if unit == "share":
        return pct(float(v))
    if unit == "x":
        return times(float(v))
    if unit == "count":
        return count(float(v))
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)
