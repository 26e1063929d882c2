"""Memory: the per-process high-water mark (mean and peak over ranks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pario.analysis.times import rank_ids
from pario.model import Profile
from pario.table import as_table
from pario.values import Value


@dataclass(frozen=True)
class MemorySummary:
    mean_per_process: Value
    peak_per_process: Value
    peak_rank: int | None


def memory_summary(profile: Profile) -> MemorySummary:
    """Mean and peak of the per-process memory high-water mark (bytes)."""
    ranks = as_table(profile.ranks)
    source = {"darshan": "Darshan"}.get(profile.job.source, profile.job.source)
    rss = np.asarray(ranks["maxrss"], dtype=np.float64) if "maxrss" in ranks else np.zeros(0)
    known = ~np.isnan(rss)
    if not known.any():
        u = Value.unavailable(f"{source} logs record no memory usage", "B")
        return MemorySummary(u, u, None)
    rss, ids = rss[known], rank_ids(ranks)[known]
    return MemorySummary(Value.of(float(rss.mean()), "B"), Value.of(float(rss.max()), "B"),
                         int(ids[int(np.argmax(rss))]))
