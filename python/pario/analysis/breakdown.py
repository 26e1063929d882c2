"""Where the time went: compute / MPI / I/O shares, the verdict, and per-rank bars."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pario.analysis.pop import pop_metrics
from pario.analysis.times import RankTimes
from pario.table import Table
from pario.units import seconds
from pario.values import Value, ratio

COMPUTE, MPI, IO = "compute", "MPI", "I/O"
#: POP's rule of thumb: an efficiency below this needs attention.
POP_THRESHOLD = 0.8
#: The least share of the run time in I/O (mean per rank / T) that makes a run I/O-bound.
IO_BOUND_MIN_SHARE = 0.2


def is_io_bound(io_share: float, io_efficiency: float | None, *, min_share: float = IO_BOUND_MIN_SHARE,
                max_efficiency: float = POP_THRESHOLD) -> bool:
    """The one definition of an I/O-bound run, for the report's verdict and TIME-IO-BOUND alike:
    the mean I/O time per rank is at least ``min_share`` of the run time T, and the POP I/O
    efficiency, where MPI time is known, is below ``max_efficiency``."""
    return io_share >= min_share and (io_efficiency is None or io_efficiency < max_efficiency)


@dataclass(frozen=True)
class TimeShares:
    """Fractions of P x T (every rank's time up to the end of the slowest one, T the run time) in
    each class: the I/O share is the mean I/O time per rank over T, as in the I/O table.

    ``idle``: the ranks' time after their own end, waiting for the slowest (T - T_p).
    ``bound`` is the class with the largest share ("compute", "MPI", "I/O"), or None when the
    data cannot tell.  ``io_bound`` is :func:`is_io_bound` (None: I/O the log holds is not
    measured, so it cannot be told); ``verdict`` says it in a sentence.
    """

    compute: Value
    mpi: Value
    io: Value
    compute_and_mpi: Value
    idle: Value
    bound: str | None
    io_bound: bool | None
    verdict: str


def time_shares(rt: RankTimes, unseen_io: str = "", *, min_share: float = IO_BOUND_MIN_SHARE,
                max_efficiency: float = POP_THRESHOLD) -> TimeShares:
    """The shares and the verdict; ``unseen_io`` names I/O the log holds but pario does not count
    (:func:`pario.analysis.modules.unseen_io_phrase`): then only an I/O-bound verdict can stand.
    ``min_share`` and ``max_efficiency``: :func:`is_io_bound`'s thresholds (RuleConfig's)."""
    n, T = rt.nranks, float(rt.runtime)
    why = "no wall time recorded"
    total = n * T

    def share(values: np.ndarray) -> Value:
        return ratio(float(np.asarray(values).sum()), total, when_zero=why)

    io = share(rt.io)
    non_io = share(np.clip(rt.wall - rt.io, 0.0, None))
    idle = share(np.clip(T - rt.wall, 0.0, None))
    if rt.mpi is None:
        compute = mpi = Value.unavailable(f"{rt.no_mpi_reason}: computation and MPI cannot be separated")
        bound = IO if io.value is not None and io.value > 0.5 else None
    else:
        compute, mpi = share(rt.useful), share(rt.mpi)
        values = {COMPUTE: compute.value, MPI: mpi.value, IO: io.value}
        known = {k: v for k, v in values.items() if v is not None}
        bound = max(known, key=lambda k: known[k]) if len(known) == 3 else None
    if io.value is None:
        return TimeShares(compute, mpi, io, non_io, idle, bound, None, "no time was recorded")
    ioe = _io_efficiency(rt)
    io_bound = is_io_bound(io.value, ioe, min_share=min_share, max_efficiency=max_efficiency)
    if unseen_io and not io_bound:
        verdict = (f"Whether this run is I/O-bound cannot be told: {unseen_io} is not measured, and the I/O "
                   f"pario measures takes {io.value:.1%} of the time.")
        return TimeShares(compute, mpi, io, non_io, idle, bound, None, verdict)
    verdict = _verdict(io_bound, io.value, ioe, max_efficiency, bound, {COMPUTE: compute, MPI: mpi},
                       rt.no_mpi_reason if rt.mpi is None else "")
    if io_bound or io.value >= AT_STAKE_MIN_SHARE:
        verdict += " " + at_stake_sentence(rt)
    return TimeShares(compute, mpi, io, non_io, idle, bound, io_bound, verdict)


#: The I/O share from which the verdict says what faster I/O can save at most.
AT_STAKE_MIN_SHARE = 0.05


def at_stake_sentence(rt: RankTimes) -> str:
    """The one bound of a report on what faster I/O saves (:attr:`RankTimes.io_at_stake`)."""
    bound, T = rt.io_at_stake, float(rt.runtime)
    about = "" if rt.exact_max("io") else "about "
    return (f"Faster I/O saves the run at most {about}{seconds(bound)} ({bound / T:.1%}), the slowest rank's "
            "I/O time; each finding below bounds its own part of it.")


def _io_efficiency(rt: RankTimes) -> float | None:
    """POP's IOE (:func:`pario.analysis.pop.pop_metrics`), None where it cannot be computed."""
    return pop_metrics(rt).io_efficiency.value


def _verdict(io_bound: bool, io: float, ioe: float | None, max_efficiency: float, bound: str | None,
             others: dict[str, Value], no_mpi: str) -> str:
    if io_bound:
        # I/O-bound by POP's measure while another class takes more of the run: said without a
        # headline that contradicts its own numbers
        lead = ("I/O holds this run back" if bound in others else "This run is I/O-bound")
        text = f"{lead}: {io:.1%} of the run time is in I/O"
        if ioe is not None:
            text += f", and its I/O efficiency is {ioe:.2f}, below POP's {max_efficiency:g}"
        if bound in others:
            text += f" ({_what(bound)} takes the largest share, {others[bound].value:.1%})"
        return text + "."
    if no_mpi:
        return (f"This run is not I/O-bound: {io:.1%} of the run time is in I/O ({no_mpi}, so computation "
                "and MPI cannot be told apart).")
    if bound is None:
        return f"This run is not I/O-bound: {io:.1%} of the run time is in I/O."
    value = others[bound].value if bound in others else io
    text = f"This run is {bound}-bound: {value:.1%} of the time is spent in {_what(bound)}"
    if ioe is not None and io > 0:
        text += f"; I/O takes {io:.1%}, with an I/O efficiency of {ioe:.2f}"
    return text + "."


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
