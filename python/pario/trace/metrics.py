"""POP factors from the replays of a trace (docs/metrics.md, "Serialisation and transfer").

With U_p, IO_p from the trace (the gaps between events; the I/O calls' transfer times, so a
collective MPI-IO call's wait for the last member of its communicator is not I/O work) and T
the measured run time (the latest rank end, from the job's origin):

* SerE = max U / T_ideal,          TE = T_ideal / T,   CommE = max U / T = SerE x TE
* SerE' = max(U + IO) / T_net0,    TE' = T_net0 / T,   CommE' = max(U + IO) / T = SerE' x TE'
* I/O transfer efficiency = T_io0 / T (1 - T_io0 / T: the share of the run the I/O system costs)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pario.trace.match import ReplayError
from pario.trace.model import Trace
from pario.trace.replay import Prepared, Replay, prepare, replays
from pario.values import Value, ratio

NO_TRACE = "no event trace: run with pario run --trace"
#: Why a Darshan DXT trace gives no replay: it holds the reads and writes only.
NO_MPI_EVENTS = ("the trace is Darshan's DXT: it holds only the POSIX and MPI-IO reads and writes, "
                 "not the MPI calls, so the time between them is not computation and the waits between "
                 "ranks are unknown; a replay needs pario run --trace")


@dataclass(frozen=True)
class TraceMetrics:
    """The replays' run times and the POP factors they give (every entry a Value)."""

    runtime: Value
    replay_runtime: Value
    replay_error: Value
    ideal_network_runtime: Value
    ideal_io_runtime: Value
    ideal_runtime: Value
    communication_efficiency: Value
    serialisation_efficiency: Value
    transfer_efficiency: Value
    communication_efficiency_io: Value
    serialisation_efficiency_io: Value
    transfer_efficiency_io: Value
    io_transfer_efficiency: Value
    #: the four replays (pario.trace.replay.MODES order); empty when unavailable
    replays: tuple[Replay, ...] = ()

    @classmethod
    def unavailable(cls, reason: str) -> TraceMetrics:
        s = Value.unavailable(reason, "s")
        u = Value.unavailable(reason)
        return cls(s, s, u, s, s, s, u, u, u, u, u, u, u)

    def runtimes(self) -> list[tuple[str, str, Value]]:
        """(key, label, value) of the run times, measured first."""
        return [
            ("runtime", "Measured (T)", self.runtime),
            ("replay_runtime", "Replay, measured network and I/O (T_replay)", self.replay_runtime),
            ("ideal_network_runtime", "Replay, ideal network (T_net0)", self.ideal_network_runtime),
            ("ideal_io_runtime", "Replay, ideal I/O (T_io0)", self.ideal_io_runtime),
            ("ideal_runtime", "Replay, ideal network and I/O (T_ideal)", self.ideal_runtime),
        ]

    def factors(self) -> list[tuple[str, str, Value]]:
        """(key, label, value) of the POP factors the replays give."""
        return [
            ("communication_efficiency", "Communication efficiency (trace)", self.communication_efficiency),
            ("serialisation_efficiency", "Serialisation efficiency", self.serialisation_efficiency),
            ("transfer_efficiency", "Transfer efficiency", self.transfer_efficiency),
            ("communication_efficiency_io", "Communication efficiency with I/O (trace)",
             self.communication_efficiency_io),
            ("serialisation_efficiency_io", "Serialisation efficiency with I/O (SerE')",
             self.serialisation_efficiency_io),
            ("transfer_efficiency_io", "Transfer efficiency with I/O (TE')", self.transfer_efficiency_io),
            ("io_transfer_efficiency", "I/O transfer efficiency", self.io_transfer_efficiency),
        ]


def trace_metrics(trace: Trace | None) -> TraceMetrics:
    """The replays of ``trace`` and their POP factors; unavailable entries say why."""
    if trace is None:
        return TraceMetrics.unavailable(NO_TRACE)
    if not trace.has_mpi:
        return TraceMetrics.unavailable(NO_MPI_EVENTS)
    try:
        p = prepare(trace)
        runs = replays(p)
    except ReplayError as exc:
        return TraceMetrics.unavailable(f"no replay: {exc}")
    return metrics_of(p, runs)


def metrics_of(p: Prepared, runs: tuple[Replay, ...]) -> TraceMetrics:
    """The factors of the four replays of one prepared trace (MODES order)."""
    measured, net0, io0, ideal = runs
    T = p.measured_T
    no_time = "the trace's run time is zero"
    max_u = float(p.useful.max())
    max_uio = float(np.max(p.useful + p.io_time))
    error = Value.of(measured.error, "") if measured.error is not None else Value.unavailable(no_time)
    return TraceMetrics(
        runtime=_seconds(T),
        replay_runtime=_seconds(measured.T),
        replay_error=error,
        ideal_network_runtime=_seconds(net0.T),
        ideal_io_runtime=_seconds(io0.T),
        ideal_runtime=_seconds(ideal.T),
        communication_efficiency=ratio(max_u, T, when_zero=no_time),
        serialisation_efficiency=ratio(max_u, ideal.T, when_zero="the ideal replay takes no time"),
        transfer_efficiency=ratio(ideal.T, T, when_zero=no_time),
        communication_efficiency_io=ratio(max_uio, T, when_zero=no_time),
        serialisation_efficiency_io=ratio(max_uio, net0.T,
                                          when_zero="the ideal-network replay takes no time"),
        transfer_efficiency_io=ratio(net0.T, T, when_zero=no_time),
        io_transfer_efficiency=ratio(io0.T, T, when_zero=no_time),
        replays=runs,
    )


def _seconds(t: float) -> Value:
    return Value.of(t, "s")
