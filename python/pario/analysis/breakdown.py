"""Where the time went: compute / MPI / I/O shares, the verdict, and per-rank bars."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pario.analysis.times import RankTimes
from pario.analysis.values import Value, ratio
from pario.table import Table

COMPUTE, MPI, IO = "compute", "MPI", "I/O"


@dataclass(frozen=True)
class TimeShares:
    """Fractions of the ranks' total time (sum of T_p) in each class.

    ``bound`` is the class with the largest share ("compute", "MPI", "I/O"),
    or None when the data cannot tell (``verdict`` then says why).
    """

    compute: Value
    mpi: Value
    io: Value
    compute_and_mpi: Value
    bound: str | None
    verdict: str


def time_shares(rt: RankTimes, unseen_io: str = "") -> TimeShares:
    """The shares and the verdict; ``unseen_io`` names I/O the log holds but pario does not count
    (:func:`pario.analysis.modules.unseen_io_phrase`): then only an I/O-bound verdict can stand."""
    shares = _time_shares(rt)
    io = shares.io.value
    if not unseen_io or shares.bound == IO or io is None:
        return shares
    verdict = (f"Whether this run is I/O-bound cannot be told: {unseen_io} is not measured, and the I/O "
               f"pario measures takes {io:.1%} of the time.")
    return TimeShares(shares.compute, shares.mpi, shares.io, shares.compute_and_mpi, None, verdict)


def _time_shares(rt: RankTimes) -> TimeShares:
    total = float(rt.wall.sum())
    why = "no wall time recorded"
    io = ratio(float(rt.io.sum()), total, when_zero=why)
    non_io = ratio(float(np.clip(rt.wall - rt.io, 0.0, None).sum()), total, when_zero=why)
    if rt.mpi is None:
        reason = f"{rt.no_mpi_reason}: computation and MPI cannot be separated"
        compute = mpi = Value.unavailable(reason)
        bound, verdict = _bound_without_mpi(io, non_io, rt.no_mpi_reason)
        return TimeShares(compute, mpi, io, non_io, bound, verdict)
    compute = ratio(float(rt.useful.sum()), total, when_zero=why)
    mpi = ratio(float(rt.mpi.sum()), total, when_zero=why)
    if not (compute.available and mpi.available and io.available):
        return TimeShares(compute, mpi, io, non_io, None, "no time was recorded")
    shares = {COMPUTE: compute.value or 0.0, MPI: mpi.value or 0.0, IO: io.value or 0.0}
    bound = max(shares, key=lambda k: shares[k])
    verdict = f"This run is {bound}-bound: {shares[bound]:.1%} of the time is spent in {_what(bound)}."
    return TimeShares(compute, mpi, io, non_io, bound, verdict)


def _bound_without_mpi(io: Value, non_io: Value, why: str) -> tuple[str | None, str]:
    """With only I/O and the rest known: I/O is the largest of three classes if > 1/2,
    cannot be if < 1/3 (one of the other two has at least half of the rest)."""
    if not io.available or io.value is None:
        return None, "no time was recorded"
    share = io.value
    if share > 0.5:
        return IO, f"This run is I/O-bound: {share:.1%} of the time is spent in I/O."
    if share < 1.0 / 3.0:
        return None, (f"This run is compute- or MPI-bound, not I/O-bound: {share:.1%} of the time is in I/O "
                      f"({why}, so computation and MPI cannot be told apart).")
    return None, (f"{share:.1%} of the time is in I/O; whether I/O, computation or MPI dominates cannot be "
                  f"told ({why}).")


def _what(bound: str) -> str:
    return {COMPUTE: "computation", MPI: "MPI", IO: "I/O"}[bound]


def rank_breakdown(rt: RankTimes) -> Table:
    """One row per rank: rank, wall, compute, mpi, read, write, meta, io and non_io seconds.

    ``compute`` and ``mpi`` are NaN when MPI time is not recorded.
    """
    n = rt.nranks
    no_mpi = np.full(n, np.nan)
    io = rt.io
    return Table({
        "rank": rt.ranks,
        "wall": rt.wall,
        "compute": rt.useful if rt.mpi is not None else no_mpi,
        "mpi": rt.mpi if rt.mpi is not None else no_mpi.copy(),
        "read": rt.io_read,
        "write": rt.io_write,
        "meta": rt.io_meta,
        "io": io,
        "non_io": np.clip(rt.wall - io, 0.0, None),
    }, length=n)
