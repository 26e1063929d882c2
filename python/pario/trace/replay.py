"""The replay of a trace on measured or ideal machines (docs/trace.md, "Replay").

Each call's measured duration splits into a wait (until its dependencies were met on the
measured timeline) and a transfer (``t1 - max(t0, dependencies)``, at least 0).  A replay
runs every call as ``end = max(start, dependencies) + transfer x factor`` with the factor 1
(measured) or 0 (ideal), for the network (MPI calls) and the I/O independently, and keeps
the computation gaps.  The event loop is C (src/replay/replay.c), the preparation NumPy.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from functools import cache
from typing import Literal

import numpy as np

from pario.errors import ParioError
from pario.paths import PACKAGE_DIR
from pario.trace.format import IO_KINDS
from pario.trace.match import Dependencies, ReplayError, dependencies, kind_in, replay_library
from pario.trace.model import Trace

Mode = Literal["measured", "ideal"]
#: (network, I/O) of the four replays, in the order of the table
MODES: tuple[tuple[Mode, Mode], ...] = (("measured", "measured"), ("ideal", "measured"),
                                         ("measured", "ideal"), ("ideal", "ideal"))


@dataclass(frozen=True)
class Prepared:
    """A trace ready to replay: its calls, dependencies and measured times."""

    deps: Dependencies
    #: world rank of each row of the per-rank arrays
    ranks: np.ndarray
    #: the job's origin (the earliest rank start), job time base (s)
    origin: float
    #: the measured run time: the latest rank end, from the origin (s)
    measured_T: float
    rank_start: np.ndarray
    tail: np.ndarray
    #: per call: computation before it, its transfer time, whether it is I/O
    gap: np.ndarray
    transfer: np.ndarray
    is_io: np.ndarray
    #: per rank, from the trace (s): computation (the gaps between events); I/O work (the I/O
    #: calls' transfer times: a collective MPI-IO call's wait for the last member of its
    #: communicator is in ``io_wait``, not here); time in MPI calls
    useful: np.ndarray
    io_time: np.ndarray
    io_wait: np.ndarray
    mpi_time: np.ndarray


@dataclass(frozen=True)
class Replay:
    """One replay's result (times in seconds from the job's origin)."""

    network: Mode
    io: Mode
    #: the replayed run time: the latest replayed rank end
    T: float
    #: per rank (``ranks`` order): replayed end and time spent in calls (waits + transfers)
    rank_ends: np.ndarray
    busy: np.ndarray
    ranks: np.ndarray
    measured_T: float
    #: the measured replay's relative error (T - measured T) / measured T; None for the others
    error: float | None
    #: per call (pario.trace.match.Records' calls): replayed start and end, job time base
    call_start: np.ndarray
    call_end: np.ndarray


def prepare(trace: Trace) -> Prepared:
    """Match the trace and split every call into wait and transfer (ReplayError if impossible)."""
    deps = dependencies(trace)
    rec = deps.records
    ranks = sorted(trace.ranks, key=lambda r: r.rank)
    rank_start = np.array([r.start for r in ranks], np.float64)
    rank_end = np.array([r.end for r in ranks], np.float64)
    head = rec.head
    t0 = rec.t0[head]
    t1 = rec.t1[head]
    call_ptr = rec.call_ptr
    has_calls = call_ptr[1:] > call_ptr[:-1]
    prev = np.empty(len(head), np.float64)
    prev[1:] = t1[:-1]
    prev[call_ptr[:-1][has_calls]] = rank_start[has_calls]
    gap = np.clip(t0 - prev, 0.0, None)
    last_t1 = rank_start.copy()
    last_t1[has_calls] = t1[call_ptr[1:][has_calls] - 1]
    tail = np.clip(rank_end - last_t1, 0.0, None)
    depm = _measured_dependency(deps, t0)
    transfer = np.clip(t1 - np.maximum(t0, depm), 0.0, None)
    kind = rec.events["kind"][head]
    is_io = kind_in(kind, IO_KINDS)
    duration = np.clip(t1 - t0, 0.0, None)
    n = len(ranks)
    io_flag = is_io.astype(np.uint8)
    sums = [np.zeros(n) for _ in range(4)]  # useful, io_time, io_wait, mpi_time
    _library().pario_rank_sums(n, _i64(call_ptr), _f64(gap), _f64(transfer), _f64(duration), io_flag, *sums)
    useful, io_time, io_wait, mpi_time = sums
    useful += tail
    origin = float(rank_start.min())
    return Prepared(deps, rec.world, origin, float(rank_end.max()) - origin, rank_start, tail, gap, transfer,
                    io_flag, useful, io_time, io_wait, mpi_time)


def _measured_dependency(deps: Dependencies, t0: np.ndarray) -> np.ndarray:
    """Per call: when its dependencies were met on the measured timeline (-inf: none)."""
    out = np.full(deps.ncalls, -np.inf)
    if not len(deps.dep_idx):
        return out
    group_t = np.full(len(deps.grp_ptr) - 1, -np.inf)
    gsizes = np.diff(deps.grp_ptr)
    if len(deps.grp_idx):
        nonempty = gsizes > 0
        group_t[nonempty] = np.maximum.reduceat(t0[deps.grp_idx], deps.grp_ptr[:-1][nonempty])
    node_t = np.concatenate([t0, group_t])
    values = node_t[deps.dep_idx]
    nonempty = np.diff(deps.dep_ptr) > 0
    out[nonempty] = np.maximum.reduceat(values, deps.dep_ptr[:-1][nonempty])
    return out


def replay(data: Trace | Prepared, network: Mode = "measured", io: Mode = "measured") -> Replay:
    """Replay the trace with the network and the I/O as measured or ideal (ReplayError on a deadlock)."""
    p = data if isinstance(data, Prepared) else prepare(data)
    d = p.deps
    n = len(p.ranks)
    ncalls = d.ncalls
    start = np.full(ncalls, np.nan)
    end = np.full(ncalls, np.nan)
    rank_end = np.zeros(n)
    busy = np.zeros(n)
    blocked = np.full(n, -1, np.int64)
    status = _library().pario_replay(
        n, _i64(d.records.call_ptr), _f64(p.rank_start), _f64(p.tail),
        ncalls, _f64(p.gap), _f64(p.transfer), _u8(p.is_io),
        0.0 if network == "ideal" else 1.0, 0.0 if io == "ideal" else 1.0,
        _i64(d.dep_ptr), _i64(d.dep_idx), len(d.grp_ptr) - 1, _i64(d.grp_ptr), _i64(d.grp_idx),
        _f64(start), _f64(end), _f64(rank_end), _f64(busy), _i64(blocked))
    if status == 2:
        raise ReplayError("the replay ran out of memory")
    if status == 1:
        raise ReplayError(_deadlock_message(d, blocked, start))
    T = float(rank_end.max()) - p.origin
    measured = network == "measured" and io == "measured"
    error = (T - p.measured_T) / p.measured_T if measured and p.measured_T > 0 else None
    return Replay(network, io, T, rank_end - p.origin, busy, p.ranks, p.measured_T, error, start, end)


def replays(data: Trace | Prepared) -> tuple[Replay, ...]:
    """The four replays of MODES (measured, ideal network, ideal I/O, both ideal), on as many
    threads as the process has cores, up to four: each is one call into the C event loop, which
    runs without the interpreter's lock."""
    p = data if isinstance(data, Prepared) else prepare(data)
    threads = min(len(MODES), _cores())
    if threads < 2:
        return tuple(replay(p, net, io) for net, io in MODES)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        return tuple(pool.map(lambda mode: replay(p, *mode), MODES))


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _deadlock_message(d: Dependencies, blocked: np.ndarray, start: np.ndarray) -> str:
    rec = d.records
    parts = []
    for c in blocked[blocked >= 0][:4]:
        waits = ""
        for node in d.dep_idx[d.dep_ptr[c]:d.dep_ptr[c + 1]]:
            if node < d.ncalls:
                pending = [int(node)] if np.isnan(start[node]) else []
            else:
                members = d.grp_idx[d.grp_ptr[node - d.ncalls]:d.grp_ptr[node - d.ncalls + 1]]
                pending = [int(m) for m in members if np.isnan(start[m])]
            if pending:
                waits = f" waits for {rec.describe(int(rec.head[pending[0]]))}"
                break
        parts.append(rec.describe(int(rec.head[c])) + waits)
    more = int((blocked >= 0).sum()) - len(parts)
    return "replay deadlock: " + "; ".join(parts) + (f" (and {more} more ranks)" if more > 0 else "")


def _i64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.int64)


def _f64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.float64)


def _u8(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.uint8)


@cache
def _library() -> ctypes.CDLL:
    """libpario_replay.so (pario.trace.match.replay_library), which the replay cannot do without."""
    lib = replay_library()
    if lib is None:
        raise ParioError(f"libpario_replay.so is not installed at {PACKAGE_DIR / 'lib'}; "
                         "reinstall pario (pip install .)")
    return lib
