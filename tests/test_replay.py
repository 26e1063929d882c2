"""The replay of traces (docs/trace.md, "Replay"): hand-built traces with answers worked out
by hand, and the POP factors (docs/metrics.md) they give."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pario.trace.compute import compute_phases
from pario.trace.format import (
    ANY,
    EVENT_DTYPE,
    FLAG_COLLECTIVE,
    FLAG_CONT,
    FLAG_NONBLOCKING,
    LAYER_SHIFT,
    Kind,
)
from pario.trace.match import ReplayError, dependencies
from pario.trace.metrics import NO_TRACE, trace_metrics
from pario.trace.model import RankTrace, Trace
from pario.trace.replay import prepare, replay, replays

Ev = tuple  # (kind, t0, t1, {field: value})


def ev(kind: Kind, t0: float, t1: float, **fields: int) -> Ev:
    return (kind, t0, t1, fields)


def rank_trace(rank: int, events: Sequence[Ev], nprocs: int, *, start: float = 0.0,
               comms: Sequence[Sequence[int]] | None = None, finalize: bool = True) -> RankTrace:
    """A rank's trace from (kind, t0, t1, fields) in seconds; FINALIZE at the last exit."""
    events = list(events)
    if finalize:
        end = events[-1][2]
        events.append(ev(Kind.FINALIZE, end, end))
    arr = np.zeros(len(events), EVENT_DTYPE)
    for i, (kind, t0, t1, fields) in enumerate(events):
        arr[i]["kind"] = kind
        arr[i]["t0"] = round(t0 * 1e9)
        arr[i]["t1"] = round(t1 * 1e9)
        arr[i]["peer"] = fields.get("peer", -1)
        arr[i]["tag"] = fields.get("tag", 0)
        arr[i]["comm"] = fields.get("comm", 0 if kind < Kind.IO_READ else -1)
        arr[i]["flags"] = fields.get("flags", 0)
        arr[i]["aux"] = fields.get("aux", 0)
        arr[i]["bytes"] = fields.get("bytes", 0)
    t0 = np.array([e[1] for e in events])
    t1 = np.array([e[2] for e in events])
    members = comms if comms is not None else [range(nprocs)]
    return RankTrace(rank, arr, t0, t1, tuple(np.asarray(list(m), np.int64) for m in members),
                     start, float(t1.max()) if len(t1) else start)


def job(*per_rank: Sequence[Ev], **kw: object) -> Trace:
    n = len(per_rank)
    return Trace(n, tuple(rank_trace(r, evs, n, **kw) for r, evs in enumerate(per_rank)))


def times(trace: Trace) -> dict[tuple[str, str], float]:
    return {(r.network, r.io): r.T for r in replays(trace)}


def assert_exact(trace: Trace) -> None:
    """The measured replay reproduces the measured run time of a consistent trace."""
    r = replay(trace)
    assert r.T == pytest.approx(r.measured_T, abs=1e-9)
    assert r.error == pytest.approx(0.0, abs=1e-9)


def send_receive(send: tuple[float, float], receive: tuple[float, float], ends: tuple[float, float],
                 tag: int = 0) -> Trace:
    """Rank 0 sends to rank 1 from ``send[0]`` to ``send[1]``, rank 1 receives from ``receive[0]``
    to ``receive[1]``; then each computes until its end in ``ends`` (a last MPI call)."""
    return job(
        [ev(Kind.SEND, *send, peer=1, tag=tag), ev(Kind.MPI_OTHER, ends[0], ends[0])],
        [ev(Kind.RECV, *receive, peer=0, tag=tag), ev(Kind.MPI_OTHER, ends[1], ends[1])],
    )


# -- a send that waits -------------------------------------------------------------------

def test_receive_waiting_for_the_transfer_disappears_on_an_ideal_network() -> None:
    # the send is posted at 0.1 when the receive is: the receive's 0.8 s is all transfer;
    # rank 0 computes to 1.0 after its send, rank 1 to 2.0 after its receive
    trace = send_receive((0.1, 0.2), (0.1, 0.9), ends=(1.0, 2.0), tag=3)
    assert_exact(trace)
    t = times(trace)
    assert t["measured", "measured"] == pytest.approx(2.0)
    # ideal network: rank 1 = 0.1 + 1.1 of computation; rank 0 = 0.1 + 0.8
    assert t["ideal", "measured"] == pytest.approx(1.2)
    assert t["ideal", "ideal"] == pytest.approx(1.2)
    m = trace_metrics(trace)
    assert m.serialisation_efficiency.value == pytest.approx(1.0)
    assert m.transfer_efficiency.value == pytest.approx(0.6)
    assert m.communication_efficiency.value == pytest.approx(1.2 / 2.0)


def test_receive_waiting_for_a_late_sender_is_serialisation_and_stays() -> None:
    # rank 0 computes until 0.9 before it sends: rank 1's receive (posted at 0.1) waits 0.8 s
    trace = send_receive((0.9, 0.95), (0.1, 0.9), ends=(1.0, 2.0), tag=3)
    assert_exact(trace)
    t = times(trace)
    assert t["ideal", "ideal"] == pytest.approx(2.0)
    m = trace_metrics(trace)
    assert m.ideal_runtime.value == pytest.approx(2.0)
    assert m.serialisation_efficiency.value == pytest.approx(1.2 / 2.0)
    assert m.transfer_efficiency.value == pytest.approx(1.0)
    # CommE = SerE x TE on the trace
    assert m.communication_efficiency.value == pytest.approx(
        m.serialisation_efficiency.value * m.transfer_efficiency.value)


def test_synchronous_send_waits_for_the_receive_post() -> None:
    # rank 1 posts its receive at 1.0: rank 0's Ssend (0.1 - 1.05) waits 0.9 s, 0.05 s transfer
    trace = job(
        [ev(Kind.SSEND, 0.1, 1.05, peer=1, tag=0), ev(Kind.MPI_OTHER, 1.5, 1.5)],
        [ev(Kind.RECV, 1.0, 1.05, peer=0, tag=0), ev(Kind.MPI_OTHER, 1.2, 1.2)],
    )
    assert_exact(trace)
    r = replay(trace, "ideal", "ideal")
    # rank 0: Ssend ends at the receive's post (1.0), then 0.45 s of computation
    assert r.rank_ends[0] == pytest.approx(1.45)
    # rank 1: its receive waits for the Ssend's post (0.1): no wait; 1.0 + 0.15
    assert r.rank_ends[1] == pytest.approx(1.15)


# -- I/O ------------------------------------------------------------------------------

def test_serial_io_on_rank_0_while_the_others_wait_in_a_barrier() -> None:
    write = ev(Kind.IO_WRITE, 1.0, 3.0, flags=0, bytes=1 << 30)
    trace = job(
        [write, ev(Kind.BARRIER, 3.0, 3.01), ev(Kind.MPI_OTHER, 4.0, 4.0)],
        [ev(Kind.BARRIER, 1.0, 3.01), ev(Kind.MPI_OTHER, 4.0, 4.0)],
        [ev(Kind.BARRIER, 1.0, 3.01), ev(Kind.MPI_OTHER, 4.0, 4.0)],
    )
    assert_exact(trace)
    t = times(trace)
    # ideal I/O: everyone meets at the barrier at 1.0, 0.01 s of barrier, 0.99 s of computation
    assert t["measured", "ideal"] == pytest.approx(2.0)
    # ideal network: the write stays (rank 0 until 3.0), the barrier's 0.01 s goes
    assert t["ideal", "measured"] == pytest.approx(3.99)
    assert t["ideal", "ideal"] == pytest.approx(1.99)
    m = trace_metrics(trace)
    assert m.io_transfer_efficiency.value == pytest.approx(0.5)
    # U = 1.99 on every rank, IO_0 = 2
    assert m.serialisation_efficiency_io.value == pytest.approx(3.99 / 3.99)
    assert m.transfer_efficiency_io.value == pytest.approx(3.99 / 4.0)
    assert m.communication_efficiency_io.value == pytest.approx(3.99 / 4.0)
    assert m.serialisation_efficiency.value == pytest.approx(1.0)
    assert m.transfer_efficiency.value == pytest.approx(1.99 / 4.0)


def test_collective_mpiio_call_waits_for_the_file_communicator() -> None:
    # a collective write on a 2-rank communicator (entry 1 of the table): rank 1 arrives at 2.0
    coll = FLAG_COLLECTIVE | (2 << LAYER_SHIFT)
    comms = [[0, 1, 2], [0, 1]]
    trace = job(
        [ev(Kind.IO_WRITE, 0.5, 2.5, flags=coll, comm=1), ev(Kind.MPI_OTHER, 3.0, 3.0)],
        [ev(Kind.IO_WRITE, 2.0, 2.5, flags=coll, comm=1), ev(Kind.MPI_OTHER, 3.0, 3.0)],
        [ev(Kind.IO_WRITE, 0.5, 0.7), ev(Kind.MPI_OTHER, 1.0, 1.0)],
        comms=comms,
    )
    assert_exact(trace)
    t = times(trace)
    # ideal I/O: rank 0 waits for rank 1 until 2.0 (serialisation), then 0.5 s: 2.5
    assert t["measured", "ideal"] == pytest.approx(2.5)
    assert t["ideal", "measured"] == pytest.approx(3.0)
    # I/O work is the transfer: rank 0's 1.5 s wait for rank 1 is not
    p = prepare(trace)
    assert list(p.io_time) == pytest.approx([0.5, 0.5, 0.2])
    assert list(p.io_wait) == pytest.approx([1.5, 0.0, 0.0])
    assert list(p.useful) == pytest.approx([1.0, 2.5, 0.8])
    assert trace_metrics(trace).serialisation_efficiency_io.value == pytest.approx(3.0 / 3.0)


# -- collectives ------------------------------------------------------------------------

def test_collective_after_imbalanced_work_is_serialisation() -> None:
    # rank 0 computes 3 s then 1 s, rank 1 1 s then 3 s, with an allreduce (no transfer)
    # between and a barrier at the end: U = 4 on both (LB = 1), yet the run takes 6 s
    trace = job(
        [ev(Kind.ALLREDUCE, 3.0, 3.0, bytes=8), ev(Kind.BARRIER, 4.0, 6.0)],
        [ev(Kind.ALLREDUCE, 1.0, 3.0, bytes=8), ev(Kind.BARRIER, 6.0, 6.0)],
    )
    assert_exact(trace)
    m = trace_metrics(trace)
    assert m.ideal_runtime.value == pytest.approx(6.0)
    assert m.serialisation_efficiency.value == pytest.approx(4.0 / 6.0)
    assert m.transfer_efficiency.value == pytest.approx(1.0)
    assert m.replay_error.value == pytest.approx(0.0, abs=1e-9)


def test_compute_phases_find_imbalance_the_totals_hide() -> None:
    """The run above: both ranks compute 4 s (LB = 1), but rank 0 computes 3 s where rank 1 computes
    1 s before the allreduce, and the other way round before the barrier: 1 s lost in each phase."""
    trace = job(
        [ev(Kind.ALLREDUCE, 3.0, 3.0, bytes=8), ev(Kind.BARRIER, 4.0, 6.0)],
        [ev(Kind.ALLREDUCE, 1.0, 3.0, bytes=8), ev(Kind.BARRIER, 6.0, 6.0)],
    )
    phases = compute_phases(trace)
    assert phases is not None and phases.count == 3 and phases.lost == pytest.approx(2.0)
    first, second = phases.top  # the last phase (after the barrier) computes nothing on either rank
    assert (first.index, first.closing, first.slowest) == (0, "MPI_Allreduce", 0)
    assert (first.max_compute, first.mean_compute, first.start, first.end) == pytest.approx((3, 2, 0, 3))
    assert (second.index, second.closing, second.slowest) == (1, "MPI_Barrier", 1)
    assert (second.max_compute, second.lost, second.start, second.end) == pytest.approx((3, 1, 3, 6))
    # ranks that made different numbers of collectives on MPI_COMM_WORLD: no phases
    assert compute_phases(job([ev(Kind.BARRIER, 1.0, 1.0)], [ev(Kind.SEND, 1.0, 1.0, peer=0)])) is None


def test_rooted_and_prefix_collectives() -> None:
    # arrivals at 0, 2, 1; each rank computes 1 s after the collective
    def three(kind: Kind, root: int, ends: tuple[float, float, float]) -> Trace:
        arrive = (0.0, 2.0, 1.0)
        return job(*[[ev(kind, arrive[r], ends[r], peer=root), ev(Kind.MPI_OTHER, ends[r] + 1, ends[r] + 1)]
                     for r in range(3)])

    # BCAST from rank 1 (arrives at 2.0): everyone waits for it, the root for nobody
    r = replay(three(Kind.BCAST, 1, (2.1, 2.0, 2.1)), "ideal", "ideal")
    assert list(r.rank_ends) == pytest.approx([3.0, 3.0, 3.0])
    # GATHER to rank 0: only the root waits (for the last arrival, 2.0)
    r = replay(three(Kind.GATHER, 0, (2.1, 2.0, 1.0)), "ideal", "ideal")
    assert list(r.rank_ends) == pytest.approx([3.0, 3.0, 2.0])
    # SCAN: rank i waits for ranks 0..i: rank 0 for itself, ranks 1 and 2 for rank 1
    r = replay(three(Kind.SCAN, -1, (0.0, 2.0, 2.0)), "ideal", "ideal")
    assert list(r.rank_ends) == pytest.approx([1.0, 3.0, 3.0])
    for kind, root, ends in ((Kind.BCAST, 1, (2.1, 2.0, 2.1)), (Kind.SCAN, -1, (0.0, 2.0, 2.0))):
        assert_exact(three(kind, root, ends))


def test_nonblocking_collective_arrives_at_its_post_and_completes_at_its_wait() -> None:
    nb = FLAG_NONBLOCKING
    trace = job(
        [ev(Kind.ALLREDUCE, 0.0, 0.01, flags=nb, aux=1), ev(Kind.WAIT, 1.0, 2.05),
         ev(Kind.COMPLETE, 1.0, 2.05, flags=FLAG_CONT, aux=1), ev(Kind.MPI_OTHER, 2.55, 2.55)],
        [ev(Kind.ALLREDUCE, 2.0, 2.01, flags=nb, aux=1), ev(Kind.WAIT, 2.5, 2.6),
         ev(Kind.COMPLETE, 2.5, 2.6, flags=FLAG_CONT, aux=1)],
    )
    assert_exact(trace)
    r = replay(trace, "ideal", "ideal")
    # rank 0: waits from 0.99 until rank 1's post at 2.0, then 0.5 s; rank 1: 2.0 + 0.49
    assert list(r.rank_ends) == pytest.approx([2.5, 2.49])
    assert r.T == pytest.approx(2.5)


# -- point to point ------------------------------------------------------------------

def test_irecv_any_source_and_waitall() -> None:
    nb = FLAG_NONBLOCKING
    trace = job(
        # rank 0: two Irecv(ANY_SOURCE, ANY_TAG), computation, one Waitall; the first was
        # matched by rank 2's message, the second by rank 1's
        [ev(Kind.IRECV, 0.0, 0.01, peer=ANY, tag=ANY, flags=nb, aux=1),
         ev(Kind.IRECV, 0.01, 0.02, peer=ANY, tag=ANY, flags=nb, aux=2),
         ev(Kind.WAIT, 0.5, 2.0),
         ev(Kind.COMPLETE, 0.5, 2.0, flags=FLAG_CONT, aux=1, peer=2, tag=7),
         ev(Kind.COMPLETE, 0.5, 2.0, flags=FLAG_CONT, aux=2, peer=1, tag=7),
         ev(Kind.MPI_OTHER, 2.5, 2.5)],
        [ev(Kind.ISEND, 1.5, 1.6, peer=0, tag=7, flags=nb, aux=1), ev(Kind.WAIT, 1.6, 1.7),
         ev(Kind.COMPLETE, 1.6, 1.7, flags=FLAG_CONT, aux=1), ev(Kind.MPI_OTHER, 1.8, 1.8)],
        [ev(Kind.ISEND, 0.3, 0.35, peer=0, tag=7, flags=nb, aux=1), ev(Kind.WAIT, 0.35, 0.4),
         ev(Kind.COMPLETE, 0.35, 0.4, flags=FLAG_CONT, aux=1), ev(Kind.MPI_OTHER, 1.0, 1.0)],
    )
    d = dependencies(trace)
    rec = d.records
    wait = int(rec.call_of[2])  # rank 0's Waitall
    waited = sorted(int(rec.slot[rec.head[n]]) for n in d.dep_idx[d.dep_ptr[wait]:d.dep_ptr[wait + 1]])
    assert waited == [1, 2]
    assert_exact(trace)
    m = trace_metrics(trace)
    # ideal: the Waitall ends at rank 1's Isend post (1.5), then 0.5 s of computation
    assert m.ideal_runtime.value == pytest.approx(2.0)
    # U = 0.98, 1.6, 0.9
    assert m.serialisation_efficiency.value == pytest.approx(1.6 / 2.0)
    assert m.transfer_efficiency.value == pytest.approx(2.0 / 2.5)


def test_messages_match_in_order_per_source_and_tag() -> None:
    # rank 0 sends tag 1 then tag 2; rank 1 receives tag 2 first (posted at 0) then tag 1
    trace = job(
        [ev(Kind.SEND, 1.0, 1.0, peer=1, tag=1), ev(Kind.SEND, 2.0, 2.0, peer=1, tag=2),
         ev(Kind.MPI_OTHER, 3.0, 3.0)],
        [ev(Kind.RECV, 0.0, 2.0, peer=0, tag=2), ev(Kind.RECV, 2.0, 2.0, peer=0, tag=1),
         ev(Kind.MPI_OTHER, 2.5, 2.5)],
    )
    assert_exact(trace)
    r = replay(trace, "ideal", "ideal")
    # the tag-2 receive waits for the second send (2.0): rank 1 ends at 2.5, not at 1.5
    assert r.rank_ends[1] == pytest.approx(2.5)


def test_matching_without_packed_keys_gives_the_same_dependencies(monkeypatch) -> None:
    # the messages and the collectives are sorted on one packed int64 key when their ranges fit
    # in 62 bits, else with np.lexsort / np.unique(axis=1): both must match alike
    from pario.trace import match

    monkeypatch.setattr(match, "NATIVE", False)  # the NumPy matching of the messages too
    nb = FLAG_NONBLOCKING
    messages = job(
        [ev(Kind.SEND, 1.0, 1.0, peer=1, tag=1), ev(Kind.SEND, 2.0, 2.0, peer=1, tag=2),
         ev(Kind.SEND, 2.1, 2.1, peer=1, tag=1), ev(Kind.ALLREDUCE, 3.0, 3.1), ev(Kind.MPI_OTHER, 4.0, 4.0)],
        [ev(Kind.RECV, 0.0, 2.0, peer=0, tag=2), ev(Kind.IRECV, 2.0, 2.0, peer=ANY, tag=ANY, flags=nb, aux=1),
         ev(Kind.RECV, 2.0, 2.2, peer=0, tag=1), ev(Kind.WAIT, 2.2, 2.3),
         ev(Kind.COMPLETE, 2.2, 2.3, flags=FLAG_CONT, aux=1, peer=0, tag=1), ev(Kind.ALLREDUCE, 2.9, 3.1),
         ev(Kind.MPI_OTHER, 3.5, 3.5)],
    )
    packed = dependencies(messages)
    monkeypatch.setattr(match, "_KEY_ROOM", 1)
    assert match._packed_key([np.array([0, 1])]) is None
    unpacked = dependencies(messages)
    for name in ("dep_ptr", "dep_idx", "grp_ptr", "grp_idx"):
        assert np.array_equal(getattr(packed, name), getattr(unpacked, name)), name
    # receives match in the order they were posted: the Irecv (its status: tag 1) the first
    # tag-1 send, the blocking tag-1 receive after it the second
    rec = packed.records
    deps = {int(c): sorted(int(n) for n in packed.dep_idx[packed.dep_ptr[c]:packed.dep_ptr[c + 1]])
            for c in range(rec.ncalls)}
    recv_tag2, recv_tag1, wait = (int(rec.call_of[rec.rec_ptr[1] + i]) for i in (0, 2, 3))
    assert deps[recv_tag2] == [1] and deps[recv_tag1] == [2] and deps[wait] == [0]


def test_sendrecv_ring() -> None:
    compute = (1.0, 2.0, 0.5)
    ends = (1.1, 2.1, 2.1)
    per_rank = []
    for r in range(3):
        right, left = (r + 1) % 3, (r - 1) % 3
        per_rank.append([ev(Kind.SEND, compute[r], ends[r], peer=right, tag=0),
                         ev(Kind.RECV, compute[r], ends[r], peer=left, tag=0, flags=FLAG_CONT),
                         ev(Kind.MPI_OTHER, ends[r] + 1.0, ends[r] + 1.0)])
    trace = job(*per_rank)
    assert_exact(trace)
    r = replay(trace, "ideal", "ideal")
    assert list(r.rank_ends) == pytest.approx([2.0, 3.0, 3.0])
    m = trace_metrics(trace)
    assert m.serialisation_efficiency.value == pytest.approx(1.0)
    assert m.transfer_efficiency.value == pytest.approx(3.0 / 3.1)


def test_ranks_start_at_their_own_origin() -> None:
    # rank 1 leaves MPI_Init 0.5 s after rank 0: T counts from the earliest start
    trace = Trace(2, (rank_trace(0, [ev(Kind.BARRIER, 0.0, 1.5)], 2),
                      rank_trace(1, [ev(Kind.BARRIER, 1.5, 1.5)], 2, start=0.5)))
    r = replay(trace, "ideal", "ideal")
    assert r.T == pytest.approx(1.5)
    assert list(r.busy) == pytest.approx([1.5, 0.0])


def test_inconsistent_clocks_show_as_the_measured_replay_error() -> None:
    # rank 1's clock is behind: its receive ends (0.5) before the send was posted (0.6); the
    # transfer is clamped at 0, rank 1 runs 0.1 s later than measured: error 0.1 / 1.2
    trace = send_receive((0.6, 0.65), (0.1, 0.5), ends=(1.0, 1.2))
    r = replay(trace)
    assert r.T == pytest.approx(1.3)
    assert r.error == pytest.approx(0.1 / 1.2)
    assert trace_metrics(trace).replay_error.value == pytest.approx(0.1 / 1.2)


# -- what cannot be replayed ---------------------------------------------------------

def test_deadlock_is_a_clear_error() -> None:
    # each rank receives before its synchronous send: each waits for the other
    trace = job(
        [ev(Kind.RECV, 0.0, 1.0, peer=1, tag=0), ev(Kind.SSEND, 1.0, 1.0, peer=1, tag=0)],
        [ev(Kind.RECV, 0.0, 1.0, peer=0, tag=0), ev(Kind.SSEND, 1.0, 1.0, peer=0, tag=0)],
    )
    with pytest.raises(ReplayError, match=r"replay deadlock: rank 0 event 0 \(RECV peer 1 tag 0\) waits for "
                                          r"rank 1 event 1 \(SSEND peer 0 tag 0\); rank 1 event 0"):
        replay(trace)
    m = trace_metrics(trace)
    assert not m.serialisation_efficiency.available
    assert "deadlock" in m.serialisation_efficiency.reason


def test_unmatched_receive_is_a_clear_error() -> None:
    trace = job(
        [ev(Kind.SEND, 0.0, 0.1, peer=1, tag=5)],
        [ev(Kind.RECV, 0.0, 0.2, peer=0, tag=5), ev(Kind.RECV, 0.2, 0.3, peer=0, tag=5)],
    )
    with pytest.raises(ReplayError, match=r"rank 1 event 1 \(RECV peer 0 tag 5\): no matching send"):
        prepare(trace)


def test_unmatched_collective_and_incomplete_trace() -> None:
    trace = job([ev(Kind.BARRIER, 0.0, 1.0), ev(Kind.BARRIER, 1.0, 2.0)], [ev(Kind.BARRIER, 0.5, 1.0)])
    not_reached = r"rank 0 event 1 \(BARRIER\): collective not reached by rank\(s\) 1"
    with pytest.raises(ReplayError, match=not_reached):
        prepare(trace)
    full = job([ev(Kind.BARRIER, 0.0, 1.0)], [ev(Kind.BARRIER, 0.5, 1.0)])
    missing = Trace(3, full.ranks)
    m = trace_metrics(missing)
    assert m.transfer_efficiency.reason == "no replay: the trace is incomplete: 1 of 3 ranks have no trace"
    dropped = Trace(2, (full.ranks[0], RankTrace(**{**full.ranks[1].__dict__, "dropped": 7})))
    with pytest.raises(ReplayError, match="7 events were dropped"):
        replay(dropped)
    assert trace_metrics(None).serialisation_efficiency.reason == NO_TRACE


# -- the POP table and the reports ---------------------------------------------------------

def io_phase_trace() -> Trace:
    """Serial write on rank 0 (1.0 - 3.0) while ranks 1 and 2 wait in a barrier."""
    return job(
        [ev(Kind.IO_WRITE, 1.0, 3.0), ev(Kind.BARRIER, 3.0, 3.01), ev(Kind.MPI_OTHER, 4.0, 4.0)],
        [ev(Kind.BARRIER, 1.0, 3.01), ev(Kind.MPI_OTHER, 4.0, 4.0)],
        [ev(Kind.BARRIER, 1.0, 3.01), ev(Kind.MPI_OTHER, 4.0, 4.0)],
    )


def test_pop_table_gets_the_replay_factors() -> None:
    from pario.analysis.pop import pop_metrics
    from pario.analysis.times import RankTimes

    m = trace_metrics(io_phase_trace())
    zero = np.zeros(3)
    rt = RankTimes(np.arange(3), np.full(3, 4.0), zero, np.array([2.0, 0.0, 0.0]), zero,
                   np.array([0.01, 2.01, 2.01]), 4.0)
    pop = pop_metrics(rt, m)
    rows = {key: v for key, _, v, _ in pop.rows()}
    assert rows["serialisation_efficiency"].value == pytest.approx(1.0)
    assert rows["transfer_efficiency"].value == pytest.approx(1.99 / 4.0)
    assert rows["serialisation_efficiency_io"].value == pytest.approx(1.0)
    assert rows["transfer_efficiency_io"].value == pytest.approx(3.99 / 4.0)
    assert rows["io_transfer_efficiency"].value == pytest.approx(0.5)
    # the profile's CommE (max U / T with U = 1.99) is SerE x TE
    assert rows["communication_efficiency"].value == pytest.approx(
        rows["serialisation_efficiency"].value * rows["transfer_efficiency"].value)
    untraced = {key: v for key, _, v, _ in pop_metrics(rt).rows()}
    for key in ("serialisation_efficiency", "transfer_efficiency", "serialisation_efficiency_io",
                "transfer_efficiency_io", "io_transfer_efficiency"):
        assert untraced[key].reason == "needs a replay of an event trace: run with pario run --trace"


def test_replay_report_terminal_and_json() -> None:
    import io
    import json
    import re

    from rich.console import Console

    from pario.report.json_out import replay_dict
    from pario.report.terminal import replay_report

    m = trace_metrics(io_phase_trace())
    out = io.StringIO()
    Console(file=out, width=120, highlight=False).print(replay_report("run.pario", m))
    text = out.getvalue()
    assert re.search(r"Replay, ideal I/O \(T_io0\) +2 s +50\.0%", text)
    assert re.search(r"Replay, ideal network and I/O \(T_ideal\) +1\.99 s +49\.8%", text)
    assert re.search(r"I/O transfer efficiency +50\.0%", text)
    data = json.loads(json.dumps(replay_dict("run.pario", m)))
    assert data["runtimes"]["ideal_io_runtime"]["value"] == pytest.approx(2.0)
    assert data["factors"]["transfer_efficiency"]["value"] == pytest.approx(1.99 / 4.0)
    assert data["replay_error"]["value"] == pytest.approx(0.0, abs=1e-9)
    assert [(r["network"], r["io"]) for r in data["replays"]] == [
        ("measured", "measured"), ("ideal", "measured"), ("measured", "ideal"), ("ideal", "ideal")]
    assert data["replays"][2]["rank_ends"] == pytest.approx([2.0, 2.0, 2.0])


def test_pario_replay_without_a_trace_is_a_one_line_error(known_run, pario_cmd) -> None:
    import subprocess

    _, out, _ = known_run
    proc = subprocess.run([*pario_cmd, "replay", str(out / "known.pario")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"pario: error: {out / 'known.pario'}: the log has no event trace; record one with pario run --trace"]


# -- real traced runs ---------------------------------------------------------------------

X_MS = 20.0  # replay_known's unit of computation


@pytest.fixture(scope="module")
def traced(tmp_path_factory, compile_program, pario_cmd, mpi_env):
    """run(name, command) -> the log of `pario run --trace -- mpirun -np 4 command` (once per name)."""
    import subprocess

    from kernel_helpers import kernel_args, kernel_exe

    out = tmp_path_factory.mktemp("traced")
    logs: dict[str, object] = {}

    def run(name: str):
        if name not in logs:
            if name == "replay_known":
                command = [str(compile_program("replay_known.c")), str(out), str(X_MS)]
            else:
                command = [str(kernel_exe(name)), "--path", str(out / f"{name}.dat"), *kernel_args(name, 4)]
            log = out / f"{name}.pario"
            argv = [*pario_cmd, "run", "--trace", "--log", str(log), "--", "mpirun", "-np", "4", *command]
            proc = subprocess.run(argv, env=mpi_env, capture_output=True, text=True, timeout=180)
            assert proc.returncode == 0, proc.stderr
            logs[name] = log
        return logs[name]

    return run


@pytest.mark.slow
@pytest.mark.measured  # the ranks' measured computation (4 ranks on 2 cores): tests beside it skew it
def test_traced_run_replays_with_known_serialisation(traced) -> None:
    from pario.log import read_log
    from pario.trace.format import LAYER_MASK

    trace = read_log(traced("replay_known")).trace
    assert trace is not None and trace.complete and trace.nprocs == 4
    p = prepare(trace)
    runs = replays(p)
    m = trace_metrics(trace)
    print(f"replay_known: T {p.measured_T:.4f} s, measured replay error {runs[0].error:+.3%}")
    assert abs(runs[0].error) < 0.03
    x = X_MS / 1000
    # every rank computes (P + 2) X; on ideal machines the run takes (2P + 1) X
    assert list(p.useful) == pytest.approx([6 * x] * 4, rel=0.1)
    assert m.ideal_runtime.value == pytest.approx(9 * x, rel=0.15)
    assert m.serialisation_efficiency.value == pytest.approx(6 / 9, abs=0.05)
    # rank 0's serial POSIX write + fsync is on every rank's critical path: ideal I/O removes it
    rec = p.deps.records
    flags = rec.events["flags"][rec.head]
    posix0 = (rec.slot[rec.head] == 0) & (p.is_io == 1) & ((flags & LAYER_MASK) == 0)
    serial = float(p.transfer[posix0].sum())
    assert serial > 0
    assert runs[0].T - runs[2].T >= 0.8 * serial
    # the identities on the trace, and factors in (0, 1]
    assert m.communication_efficiency.value == pytest.approx(
        m.serialisation_efficiency.value * m.transfer_efficiency.value)
    assert m.communication_efficiency_io.value == pytest.approx(
        m.serialisation_efficiency_io.value * m.transfer_efficiency_io.value)
    for _, _, v in m.factors():
        assert v.value is not None and 0 < v.value <= 1 + 1e-9


@pytest.mark.parametrize("kernel", ["block", "s3d"])
@pytest.mark.slow
def test_traced_kernel_measured_replay_reproduces_the_run(traced, pario_cmd, kernel: str) -> None:
    import json
    import subprocess

    log = traced(kernel)
    proc = subprocess.run([*pario_cmd, "replay", str(log), "--json", "-"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    error = data["replay_error"]["value"]
    print(f"{kernel}: T {data['runtimes']['runtime']['value']:.4f} s, measured replay error {error:+.3%}")
    assert abs(error) < 0.03
    T = data["runtimes"]["runtime"]["value"]
    ideal = data["runtimes"]["ideal_runtime"]["value"]
    assert 0 < ideal <= data["runtimes"]["ideal_io_runtime"]["value"] <= T * 1.03
    for key, v in data["factors"].items():
        assert v["value"] is not None and 0 < v["value"] <= 1 + 1e-9, key
    assert len(data["replays"]) == 4 and all(len(r["rank_ends"]) == 4 for r in data["replays"])
    # the POP table of pario report carries the same replay factors
    rep = subprocess.run([*pario_cmd, "report", str(log), "--json", "-", "--no-diagnosis"],
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    pop = json.loads(rep.stdout)["runs"][0]["pop"]
    for key in ("serialisation_efficiency", "transfer_efficiency", "io_transfer_efficiency"):
        assert pop[key]["value"] == pytest.approx(data["factors"][key]["value"])
    text = subprocess.run([*pario_cmd, "replay", str(log)], capture_output=True, text=True)
    assert text.returncode == 0 and "Replay, ideal network and I/O (T_ideal)" in text.stdout


@st.composite
def p2p_programs(draw: st.DrawFn) -> Trace:
    """Random point-to-point programs of 2-4 ranks: a sequence of messages, each a send (standard
    or synchronous, blocking or not) on its source and a receive (blocking or not, a nonblocking
    one now and then with ANY source and tag and the message's status at its completion) on its
    destination, in the sequence's order; Waits completing a rank's pending requests in random
    places; Allreduces on every rank between. Request ids count up per rank, or, in a tenth of
    the programs, are drawn again (reused); and now and then a send or a receive is left out,
    so that the matching fails and says so."""
    n = draw(st.integers(2, 4))
    nb, cont = FLAG_NONBLOCKING, FLAG_CONT
    reuse = draw(st.integers(0, 9)) == 0
    events: list[list[Ev]] = [[] for _ in range(n)]
    pending: list[list[tuple[int, Kind, int, int]]] = [[] for _ in range(n)]
    next_id = [1] * n
    t = 0.0

    def post(rank: int, kind: Kind, peer: int, tag: int, status: tuple[int, int]) -> None:
        rid = draw(st.integers(1, next_id[rank])) if reuse else next_id[rank]
        next_id[rank] += 1
        events[rank].append(ev(kind, t, t + 0.1, peer=peer, tag=tag, flags=nb, aux=rid))
        pending[rank].append((rid, kind, *status))

    def wait(rank: int) -> None:
        if pending[rank]:
            done = pending[rank][:draw(st.integers(1, len(pending[rank])))]
            pending[rank] = pending[rank][len(done):]
            events[rank].append(ev(Kind.WAIT, t, t + 0.5))
            for rid, kind, src, tag in done:
                status = {"peer": src, "tag": tag} if kind == Kind.IRECV else {}
                events[rank].append(ev(Kind.COMPLETE, t, t + 0.5, flags=cont, aux=rid, **status))

    for _ in range(draw(st.integers(1, 16))):
        t += 1.0
        step = draw(st.sampled_from(["message", "message", "message", "wait", "allreduce"]))
        if step == "allreduce":
            for r in range(n):
                events[r].append(ev(Kind.ALLREDUCE, t, t + 0.5))
        elif step == "wait":
            wait(draw(st.integers(0, n - 1)))
        else:
            src, dst, tag = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1)), draw(st.integers(0, 2))
            lost = draw(st.integers(0, 19))  # 0: no send, 1: no receive
            send = draw(st.sampled_from([Kind.SEND, Kind.SSEND, Kind.ISEND, Kind.ISSEND]))
            if lost != 0 and send in (Kind.SEND, Kind.SSEND):
                events[src].append(ev(send, t, t + 0.5, peer=dst, tag=tag))
            elif lost != 0:
                post(src, send, dst, tag, (dst, tag))
            if lost == 1:
                continue
            if draw(st.booleans()):
                events[dst].append(ev(Kind.RECV, t, t + 0.5, peer=src, tag=tag))
            else:
                wild = draw(st.booleans())
                post(dst, Kind.IRECV, ANY if wild else src, ANY if wild else tag, (src, tag))
    t += 1.0
    for r in range(n):
        wait(r)
        if not events[r]:
            events[r].append(ev(Kind.MPI_OTHER, t, t))
    return job(*events)


def _matched(trace: Trace) -> object:
    try:
        d = dependencies(trace)
    except ReplayError as exc:
        return str(exc)
    return tuple(getattr(d, name).tolist() for name in ("dep_ptr", "dep_idx", "grp_ptr", "grp_idx"))


def test_matching_in_c_gives_the_numpy_dependencies(monkeypatch) -> None:
    """src/replay/match.c (requests, messages, their dependencies) against the NumPy matching on
    random programs: the same dependencies, or the same error; and the per-rank sums of prepare
    to the last bit those of np.bincount."""
    from pario.trace import match

    native = match._p2p_in_c
    taken: list[bool] = []

    def spy(rec, setid):  # type: ignore[no-untyped-def]
        out = native(rec, setid)
        taken.append(out is not None)
        return out

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(trace=p2p_programs())
    def check(trace: Trace) -> None:
        monkeypatch.setattr(match, "NATIVE", True)
        monkeypatch.setattr(match, "_p2p_in_c", spy)
        in_c = _matched(trace)
        monkeypatch.setattr(match, "NATIVE", False)
        assert in_c == _matched(trace)
        if not isinstance(in_c, str):
            p = prepare(trace)
            rec = p.deps.records
            slot = rec.slot[rec.head]
            duration = np.clip(rec.t1[rec.head] - rec.t0[rec.head], 0.0, None)
            io = p.is_io == 1
            n = len(p.ranks)
            assert np.array_equal(p.useful, np.bincount(slot, weights=p.gap, minlength=n) + p.tail)
            assert np.array_equal(p.io_time, np.bincount(slot[io], weights=p.transfer[io], minlength=n))
            assert np.array_equal(p.io_wait, np.bincount(slot[io], weights=(duration - p.transfer)[io],
                                                         minlength=n))
            assert np.array_equal(p.mpi_time, np.bincount(slot[~io], weights=duration[~io], minlength=n))

    check()
    # most programs were matched in C; those with a reused request id by NumPy
    assert sum(taken) > len(taken) // 2 and not all(taken)


def test_the_four_replays_on_threads_are_the_four_one_after_the_other(monkeypatch) -> None:
    from pario.trace import replay as replay_module

    trace = io_phase_trace()
    monkeypatch.setattr(replay_module, "_cores", lambda: 1)
    alone = replays(trace)
    monkeypatch.setattr(replay_module, "_cores", lambda: 4)
    threaded = replays(trace)
    assert [(r.network, r.io) for r in threaded] == [(r.network, r.io) for r in alone]
    for a, b in zip(alone, threaded, strict=True):
        assert a.T == b.T and a.error == b.error
        for name in ("rank_ends", "busy", "call_start", "call_end"):
            assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    # a deadlock raised in a thread is the same one-line error
    deadlock = job([ev(Kind.RECV, 0.0, 1.0, peer=1, tag=0), ev(Kind.SEND, 1.0, 1.1, peer=1, tag=0)],
                   [ev(Kind.RECV, 0.0, 1.0, peer=0, tag=0), ev(Kind.SEND, 1.0, 1.1, peer=0, tag=0)])
    with pytest.raises(ReplayError, match="deadlock"):
        replays(deadlock)
