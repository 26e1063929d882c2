"""A metric value that knows whether it is available and whether it is exact."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Value:
    """One metric: a number with its unit, or the reason it cannot be computed.

    ``value`` is None when the data cannot give the metric (``reason`` says
    why); renderers print "unavailable (reason)" and never a made-up number.
    ``approximate`` marks values derived from estimates (for example Darshan's
    shared-file records, which only give totals and the fastest and slowest
    rank); ``note`` says what was estimated.
    """

    value: float | None
    unit: str = ""
    reason: str = ""
    approximate: bool = False
    note: str = ""

    @property
    def available(self) -> bool:
        return self.value is not None

    @classmethod
    def of(cls, value: float, unit: str = "", *, approximate: bool = False, note: str = "") -> Value:
        """An available value (NaN or infinity become unavailable)."""
        v = float(value)
        if math.isnan(v) or math.isinf(v):
            return cls(None, unit, reason="not a finite number")
        return cls(v, unit, approximate=approximate, note=note if approximate else "")

    @classmethod
    def unavailable(cls, reason: str, unit: str = "") -> Value:
        return cls(None, unit, reason=reason)


def ratio(num: float, den: float, *, unit: str = "", when_zero: str, approximate: bool = False,
          note: str = "") -> Value:
    """``num / den`` as a Value, unavailable with ``when_zero`` if ``den`` is 0 or not finite."""
    if not math.isfinite(den) or den <= 0.0 or not math.isfinite(num):
        return Value.unavailable(when_zero, unit)
    return Value.of(num / den, unit, approximate=approximate, note=note)


def combine_notes(*values: Value) -> tuple[bool, str]:
    """Whether any input is approximate, and their notes joined."""
    notes = [v.note for v in values if v.approximate and v.note]
    uniq = list(dict.fromkeys(notes))
    return any(v.approximate for v in values), "; ".join(uniq)
