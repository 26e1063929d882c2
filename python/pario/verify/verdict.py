"""Whether a change helps, from paired rounds: a pure function of the measured times.

Round i measures the unchanged run (``base[i]``) and the changed one (``trial[i]``) back to back,
in an order that turns every round, so that the machine's drift falls on both.  The paired
difference ``trial[i] - base[i]`` is what is judged: its median, its range, and how many rounds
agree on its sign.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

HELPS, NO_EFFECT, HARMS, FAILED, TOO_FEW = "helps", "no effect", "harms", "failed", "too few rounds"

#: paired rounds needed for a verdict
MIN_ROUNDS = 3


@dataclass(frozen=True)
class Verdict:
    verdict: str
    rounds: int
    base_median: float  # seconds, the unchanged run
    trial_median: float  # seconds, with the change
    change: float  # median of the paired differences (trial - base), seconds; < 0 is faster
    low: float  # smallest paired difference
    high: float  # largest paired difference
    agree: int  # rounds whose difference has the verdict's sign (all rounds for "no effect")

    @property
    def share(self) -> float:
        """The median change as a share of the unchanged run's median time."""
        return self.change / self.base_median if self.base_median > 0 else math.nan


def judge(base: Sequence[float], trial: Sequence[float], *, min_change: float = 0.05,
          failed: bool = False) -> Verdict:
    """The verdict on ``trial`` against ``base`` (equal lengths, paired by round).

    helps: the median paired difference saves at least ``min_change`` of the unchanged run's
    median, and at least 80% of the rounds are faster with the change; harms: the same the other
    way; otherwise no effect.  A change whose run failed or timed out is "failed", never a gain."""
    n = min(len(base), len(trial))
    diffs = [t - b for b, t in zip(base[:n], trial[:n], strict=True)]
    bmed = statistics.median(base[:n]) if n else math.nan
    tmed = statistics.median(trial[:n]) if n else math.nan
    change = statistics.median(diffs) if n else math.nan
    low, high = (min(diffs), max(diffs)) if n else (math.nan, math.nan)
    faster, slower = sum(d < 0 for d in diffs), sum(d > 0 for d in diffs)
    need = math.ceil(0.8 * n)
    if failed:
        return Verdict(FAILED, n, bmed, tmed, change, low, high, 0)
    if n < MIN_ROUNDS:
        return Verdict(TOO_FEW, n, bmed, tmed, change, low, high, 0)
    if change <= -min_change * bmed and faster >= need:
        return Verdict(HELPS, n, bmed, tmed, change, low, high, faster)
    if change >= min_change * bmed and slower >= need:
        return Verdict(HARMS, n, bmed, tmed, change, low, high, slower)
    return Verdict(NO_EFFECT, n, bmed, tmed, change, low, high, n)

