"""Human-readable numbers for statements and evidence (plain strings, no markup)."""

from __future__ import annotations

from pario.units import count, nbytes, nranks, plain, rate, seconds, times
from pario.units import percent as pct

__all__ = ["count", "nbytes", "nranks", "pct", "plain", "rate", "ranks", "seconds", "times", "value"]


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
        return plain(float(v), 4)
    return str(v)
