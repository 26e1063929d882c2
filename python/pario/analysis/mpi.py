"""MPI time by class (collective, point-to-point, other), with bytes and rates."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pario.model import Profile
from pario.table import Table, as_table
from pario.values import Value, ratio

CLASSES: tuple[tuple[str, str], ...] = (("coll", "collective"), ("p2p", "point-to-point"), ("other", "other"))


@dataclass(frozen=True)
class MpiClass:
    name: str
    time_mean: Value
    time_max: Value
    share_of_runtime: Value
    bytes: Value | None  # None where not applicable ("other")
    rate: Value | None
    calls: Value


@dataclass(frozen=True)
class MpiSummary:
    available: bool
    reason: str
    time_mean: Value
    time_max: Value
    share_of_runtime: Value
    classes: tuple[MpiClass, ...]


def _col(ranks: Table, name: str) -> np.ndarray | None:
    if name not in ranks:
        return None
    return np.nan_to_num(np.asarray(ranks[name], dtype=np.float64), nan=0.0)


def mpi_summary(profile: Profile, runtime: float) -> MpiSummary:
    job = profile.job
    ranks = as_table(profile.ranks)
    if not job.has_mpi_time:
        source = {"darshan": "Darshan"}.get(job.source, job.source)
        reason = f"{source} logs record no MPI time"
        u = Value.unavailable(reason)
        return MpiSummary(False, reason, u, u, u, ())
    n = len(ranks)
    classes = []
    total = np.zeros(n)
    for key, name in CLASSES:
        t = _col(ranks, f"mpi_{key}")
        if t is None:
            continue
        total += t
        b = _col(ranks, f"mpi_{key}_bytes")
        c = _col(ranks, f"mpi_{key}_calls")
        tsum = float(t.sum())
        bytes_v: Value | None = None
        rate: Value | None = None
        if key != "other" and b is None:
            bytes_v = Value.unavailable("not recorded", "B")
            rate = Value.unavailable("bytes not recorded", "B/s")
        elif key != "other" and b is not None:
            bytes_v = Value.of(float(b.sum()), "B")
            rate = (ratio(float(b.sum()), tsum, unit="B/s", when_zero=f"no time in {name} calls")
                    if b.sum() > 0 else Value.unavailable(f"no bytes in {name} calls", "B/s"))
        classes.append(MpiClass(
            name=name,
            time_mean=Value.of(tsum / n if n else 0.0, "s"),
            time_max=Value.of(float(t.max(initial=0.0)), "s"),
            share_of_runtime=ratio(tsum / n if n else 0.0, runtime, when_zero="the run time is zero"),
            bytes=bytes_v,
            rate=rate,
            calls=Value.of(float(c.sum()), "calls") if c is not None else Value.unavailable("not recorded"),
        ))
    mean = float(total.mean()) if n else 0.0
    return MpiSummary(True, "", Value.of(mean, "s"), Value.of(float(total.max(initial=0.0)), "s"),
                      ratio(mean, runtime, when_zero="the run time is zero"), tuple(classes))
