"""Memory: the per-process high-water mark (mean and peak over ranks)."""

from __future__ import annotations

from dataclasses import dataclass

from pario.analysis.values import Value
from pario.model import Profile


@dataclass(frozen=True)
class MemorySummary:
    mean_per_process: Value
    peak_per_process: Value
    peak_rank: int | None


def memory_summary(profile: Profile) -> MemorySummary:
    """Mean and peak of the per-process memory high-water mark (bytes)."""
    ranks = profile.ranks
    source = {"darshan": "Darshan"}.get(profile.job.source, profile.job.source)
    if "maxrss" not in ranks or not ranks["maxrss"].notna().any():
        u = Value.unavailable(f"{source} logs record no memory usage", "B")
        return MemorySummary(u, u, None)
    rss = ranks["maxrss"].dropna()
    return MemorySummary(Value.of(float(rss.mean()), "B"), Value.of(float(rss.max()), "B"),
                         int(rss.idxmax()))
