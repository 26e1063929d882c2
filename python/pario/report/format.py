"""Human-readable numbers, shared by the terminal and HTML renderers."""

from __future__ import annotations

import datetime as _dt
import math

from pario.model import SIZE_BUCKETS
from pario.units import count, nbytes, percent, rate, seconds
from pario.values import Value

__all__ = ["APPROX", "BUCKET_LABELS", "bar", "count", "nbytes", "number", "percent", "rate", "seconds",
           "timestamp", "value"]

_BUCKET_LABELS = {
    "0_100": "0-100", "100_1K": "100-1K", "1K_10K": "1K-10K", "10K_100K": "10K-100K",
    "100K_1M": "100K-1M", "1M_4M": "1M-4M", "4M_10M": "4M-10M", "10M_100M": "10M-100M",
    "100M_1G": "100M-1G", "1G_PLUS": "1G+",
}
BUCKET_LABELS: tuple[str, ...] = tuple(_BUCKET_LABELS[b] for b in SIZE_BUCKETS)
APPROX = "≈"


def fraction(x: float) -> str:
    return f"{x:.2f}" if math.isfinite(x) else "-"


def number(v: Value, *, as_percent: bool = False) -> str:
    """The number alone ('-' when unavailable), with ≈ when approximate."""
    if v.value is None:
        return "-"
    x = v.value
    if v.unit == "s":
        text = seconds(x)
    elif v.unit == "B":
        text = nbytes(x)
    elif v.unit == "B/s":
        text = rate(x)
    elif v.unit == "calls":
        text = count(x)
    elif as_percent:
        text = percent(x)
    else:
        text = fraction(x)
    return (APPROX + text) if v.approximate else text


def value(v: Value | None, *, as_percent: bool = False) -> str:
    """A metric for display: its number, or 'unavailable (reason)'."""
    if v is None:
        return ""
    if v.value is None:
        return f"unavailable ({v.reason})" if v.reason else "unavailable"
    return number(v, as_percent=as_percent)


def timestamp(epoch: float) -> str:
    if not epoch or not math.isfinite(epoch):
        return "-"
    return _dt.datetime.fromtimestamp(epoch, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def bar(share: float, width: int = 30) -> str:
    """A text bar for a share in [0, 1]."""
    if not math.isfinite(share):
        return " " * width
    filled = max(0, min(width, int(round(share * width))))
    return "█" * filled + "░" * (width - filled)
