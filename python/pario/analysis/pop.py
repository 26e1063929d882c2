"""POP efficiency metrics, classic and with I/O (docs/metrics.md, "POP metrics").

Per rank p: T_p wall time, U_p useful computation, IO_p I/O time, M_p MPI
time, T the job's run time.

* PE = avg(U)/T = LB x CommE, LB = avg(U)/max(U), CommE = max(U)/T
* PE = IOE x LB' x CommE', IOE = sum(U)/sum(U+IO), LB' = avg(U+IO)/max(U+IO),
  CommE' = max(U+IO)/T
* 1 - PE = avg(IO)/T + (max(U+IO) - avg(U+IO))/T + (T - max(U+IO))/T

Serialisation and transfer efficiency (with and without I/O) and the I/O transfer
efficiency come from the replays of an event trace (pario.trace.metrics), when the run
was traced (``pario run --trace``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from pario.analysis.times import RankTimes
from pario.values import Value, ratio

if TYPE_CHECKING:
    from pario.trace.metrics import TraceMetrics

#: POP's rule of thumb: an efficiency below this needs attention.
RULE_OF_THUMB = 0.8

NEEDS_REPLAY = "needs a replay of an event trace: run with pario run --trace"


@dataclass(frozen=True)
class PopMetrics:
    """The POP table of one run; every entry is a fraction (1 = ideal)."""

    parallel_efficiency: Value
    load_balance: Value
    communication_efficiency: Value
    serialisation_efficiency: Value
    transfer_efficiency: Value
    io_efficiency: Value
    load_balance_io: Value
    communication_efficiency_io: Value
    loss_io: Value
    loss_imbalance: Value
    loss_communication: Value
    #: from the replays of the trace: SerE', TE', T_io0 / T, and the measured replay's error
    serialisation_efficiency_io: Value = Value.unavailable(NEEDS_REPLAY)
    transfer_efficiency_io: Value = Value.unavailable(NEEDS_REPLAY)
    io_transfer_efficiency: Value = Value.unavailable(NEEDS_REPLAY)
    replay_error: Value = Value.unavailable(NEEDS_REPLAY)
    #: where the MPI time M_p comes from, when not from pario's own wrappers (Darshan's APMPI
    #: module: what it times and what it does not); "" otherwise
    mpi_note: str = ""

    def rows(self) -> list[tuple[str, str, Value, int]]:
        """(key, label, value, indent) in the order of the POP table."""
        return [
            ("parallel_efficiency", "Parallel efficiency", self.parallel_efficiency, 0),
            ("load_balance", "Load balance", self.load_balance, 1),
            ("communication_efficiency", "Communication efficiency", self.communication_efficiency, 1),
            ("serialisation_efficiency", "Serialisation efficiency", self.serialisation_efficiency, 2),
            ("transfer_efficiency", "Transfer efficiency", self.transfer_efficiency, 2),
            ("io_efficiency", "I/O efficiency (IOE)", self.io_efficiency, 1),
            ("load_balance_io", "Load balance with I/O (LB')", self.load_balance_io, 1),
            ("communication_efficiency_io", "Communication efficiency with I/O (CommE')",
             self.communication_efficiency_io, 1),
            ("serialisation_efficiency_io", "Serialisation efficiency with I/O (SerE')",
             self.serialisation_efficiency_io, 2),
            ("transfer_efficiency_io", "Transfer efficiency with I/O (TE')", self.transfer_efficiency_io, 2),
            ("io_transfer_efficiency", "I/O transfer efficiency (T_io0/T)", self.io_transfer_efficiency, 1),
        ]

    def losses(self) -> list[tuple[str, str, Value]]:
        """The additive breakdown of 1 - PE."""
        return [
            ("loss_io", "Lost to I/O: avg(IO)/T", self.loss_io),
            ("loss_imbalance", "Lost to imbalance: (max(U+IO) - avg(U+IO))/T", self.loss_imbalance),
            ("loss_communication", "Lost to communication: (T - max(U+IO))/T", self.loss_communication),
        ]


def pop_metrics(rt: RankTimes, trace: TraceMetrics | None = None) -> PopMetrics:
    """POP metrics of one run (unavailable entries say why); ``trace``: the replays' factors."""
    base = replace(_profile_metrics(rt), mpi_note=rt.mpi_note)
    if trace is None:
        return base
    return replace(base, serialisation_efficiency=trace.serialisation_efficiency,
                   transfer_efficiency=trace.transfer_efficiency,
                   serialisation_efficiency_io=trace.serialisation_efficiency_io,
                   transfer_efficiency_io=trace.transfer_efficiency_io,
                   io_transfer_efficiency=trace.io_transfer_efficiency, replay_error=trace.replay_error)


def _profile_metrics(rt: RankTimes) -> PopMetrics:
    run_time = rt.runtime
    io = rt.io
    n = rt.nranks
    no_runtime = "the run time is zero"
    if n == 0 or run_time <= 0:
        u = Value.unavailable(no_runtime if n else "no rank data")
        return PopMetrics(u, u, u, _replay(), _replay(), u, u, u, u, u, u)
    loss_io = ratio(float(io.mean()), run_time, when_zero=no_runtime)
    if rt.mpi is None:
        why = rt.no_mpi_reason or "no MPI time recorded"
        u = Value.unavailable(f"{why}: computation and MPI cannot be separated")
        return PopMetrics(u, u, u, _replay(), _replay(), u, u, u, loss_io, u, u)
    U = rt.useful
    UIO = U + io
    # U_p = max(T_p - IO_p - M_p, 0).  Where per-rank I/O is estimated (shared Darshan records),
    # max(U) takes an estimate; avg(U), sum(U) and U_p + IO_p = T_p - M_p do not, unless some
    # rank's U_p was clipped at 0 (then U_p + IO_p = IO_p, an estimate).
    estimated = not rt.exact_ranks("io")
    by_max = rt.io_note if estimated else ""  # LB and CommE: max(U)
    clipped = estimated and bool((rt.wall - io - rt.mpi < 0).any())
    by_clip = rt.io_note if clipped else ""  # the rest
    pe = ratio(float(U.mean()), run_time, when_zero=no_runtime, approximate=clipped, note=by_clip)
    lb = ratio(float(U.mean()), float(U.max()), when_zero="no computation time", approximate=estimated,
               note=by_max)
    comm = ratio(float(U.max()), run_time, when_zero=no_runtime, approximate=estimated, note=by_max)
    ioe = ratio(float(U.sum()), float(UIO.sum()), when_zero="no computation or I/O time",
                approximate=clipped, note=by_clip)
    lb_io = ratio(float(UIO.mean()), float(UIO.max()), when_zero="no computation or I/O time",
                  approximate=clipped, note=by_clip)
    comm_io = ratio(float(UIO.max()), run_time, when_zero=no_runtime, approximate=clipped, note=by_clip)
    loss_imb = ratio(float(UIO.max() - UIO.mean()), run_time, when_zero=no_runtime, approximate=clipped,
                     note=by_clip)
    loss_comm = ratio(float(run_time - UIO.max()), run_time, when_zero=no_runtime, approximate=clipped,
                      note=by_clip)
    return PopMetrics(pe, lb, comm, _replay(), _replay(), ioe, lb_io, comm_io, loss_io, loss_imb, loss_comm)


def _replay() -> Value:
    return Value.unavailable(NEEDS_REPLAY)


def efficiency_level(value: float | None) -> str:
    """'good' (>= 0.8), 'fair' (0.6 - 0.8), 'poor' (< 0.6) or 'unknown'."""
    if value is None or not np.isfinite(value):
        return "unknown"
    if value >= RULE_OF_THUMB:
        return "good"
    return "fair" if value >= 0.6 else "poor"
