"""The dependencies of a trace's calls, for the replay (docs/trace.md, "Replay").

The trace's records are grouped into **calls** (a record and its ``CONT`` parts).  Every
dependency is on the *start* of another call (a send's post, a receive's post, a
collective participant's arrival), so the dependency graph has two kinds of nodes:

* node ``c < ncalls``: call ``c``; its time is the call's start;
* node ``ncalls + g``: collective group ``g``; its time is the latest start (arrival) of the
  group's members (so an all-to-all collective costs O(P) edges, not O(P^2)).

Each call depends on a list of nodes (CSR: ``dep_ptr``, ``dep_idx``), each group on a list
of calls (``grp_ptr``, ``grp_idx``).  Everything is computed with NumPy over the whole trace:
point-to-point matching in order per (source, destination, tag, communicator members)
(MPI's non-overtaking rule, with the source and tag of the receive's status), collectives
grouped by (communicator members, per-rank sequence number on them).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pario.errors import ParioError
from pario.table import run_heads
from pario.trace.format import FLAG_COLLECTIVE, FLAG_CONT, FLAG_NONBLOCKING, IO_KINDS, Kind
from pario.trace.model import Trace


class ReplayError(ParioError):
    """A trace that cannot be replayed: incomplete, an unmatched receive, a deadlock."""


_SENDS = (Kind.SEND, Kind.SSEND, Kind.ISEND, Kind.ISSEND)
#: the values an event's kind can take (EVENT_DTYPE's kind is a u16): kind_in's table size
_KIND_VALUES = 1 << 16
_SYNC_SENDS = (Kind.SSEND, Kind.ISSEND)
#: collectives that complete when the last participant arrived
_ALL = (Kind.BARRIER, Kind.ALLGATHER, Kind.ALLTOALL, Kind.ALLREDUCE, Kind.REDUCE_SCATTER)
_FAN_OUT = (Kind.BCAST, Kind.SCATTER)
_FAN_IN = (Kind.GATHER, Kind.REDUCE)
_PREFIX = (Kind.SCAN, Kind.EXSCAN)
#: ``cls`` of a collective group: an MPI collective, or a collective MPI-IO call
_MPI, _IO = 0, 1
#: the largest key _packed_key makes (room for the sums of its arithmetic)
_KEY_ROOM = 1 << 62


def kind_in(kind: np.ndarray, kinds: Iterable[int]) -> np.ndarray:
    """Whether each of ``kind`` (event kinds, 0..65535) is one of ``kinds``: ``np.isin`` by a
    table look-up."""
    return _kind_table(frozenset(int(k) for k in kinds))[kind]


@functools.lru_cache(maxsize=16)
def _kind_table(kinds: frozenset[int]) -> np.ndarray:
    table = np.zeros(_KIND_VALUES, bool)
    table[list(kinds)] = True
    return table


def _run_starts(values: np.ndarray) -> np.ndarray:
    """For each position of sorted ``values``, the first position of its run of equal values
    (``np.searchsorted(values, values, side="left")``, in one pass)."""
    return np.maximum.accumulate(np.where(run_heads(values), np.arange(len(values)), 0))


def _packed_key(columns: list[np.ndarray]) -> np.ndarray | None:
    """One int64 per row that sorts as the columns do, the first most significant (lexsort's
    order of the columns reversed), or None when their ranges do not fit in 62 bits.  A sort
    of one key is several times faster than np.lexsort of the columns or np.unique(axis=1)."""
    if not columns or not len(columns[0]):
        return None
    lows = [int(c.min()) for c in columns]
    spans = [int(c.max()) - lo + 1 for c, lo in zip(columns, lows, strict=True)]
    total = 1
    for span in spans:
        total *= span
    if total >= _KEY_ROOM:
        return None
    key = np.zeros(len(columns[0]), np.int64)
    for c, lo, span in zip(columns, lows, spans, strict=True):
        key *= span
        key += c - lo
    return key


@dataclass(frozen=True)
class Records:
    """Every rank's records concatenated (rank order), with their calls."""

    #: world rank of each trace slot (``trace.ranks[s].rank``), and each slot's first record
    world: np.ndarray
    rec_ptr: np.ndarray
    #: the event fields the matching reads (:data:`FIELDS`), each one array over every record
    events: dict[str, np.ndarray]
    t0: np.ndarray
    t1: np.ndarray
    slot: np.ndarray
    #: call of each record; each call's head record; each slot's first call (len nslots + 1)
    call_of: np.ndarray
    head: np.ndarray
    call_ptr: np.ndarray

    @property
    def ncalls(self) -> int:
        return len(self.head)

    def describe(self, rec: int) -> str:
        """'rank 3 event 17 (RECV peer 2 tag 5)': a record, for error messages."""
        s = int(self.slot[rec])
        e = {name: field[rec] for name, field in self.events.items()}
        try:
            kind = Kind(int(e["kind"])).name
        except ValueError:
            kind = f"kind {int(e['kind'])}"
        extra = f" peer {int(e['peer'])} tag {int(e['tag'])}" if int(e["peer"]) >= 0 else ""
        return f"rank {int(self.world[s])} event {rec - int(self.rec_ptr[s])} ({kind}{extra})"


@dataclass(frozen=True)
class Dependencies:
    """The calls of a trace and what each one waits for."""

    records: Records
    #: per call: dependency nodes (CSR over calls); node >= ncalls is group node - ncalls
    dep_ptr: np.ndarray
    dep_idx: np.ndarray
    #: per collective group: the calls whose starts are its members' arrivals (CSR)
    grp_ptr: np.ndarray
    grp_idx: np.ndarray

    @property
    def ncalls(self) -> int:
        return self.records.ncalls


def dependencies(trace: Trace) -> Dependencies:
    """Match the trace's point-to-point messages and collectives (ReplayError if impossible)."""
    check_complete(trace)
    rec = _records(trace)
    sets, set_of_comm = _member_sets(trace)
    ev = rec.events
    kind = ev["kind"].astype(np.int64)
    comm = ev["comm"].astype(np.int64)
    ok = (comm >= 0) & (comm < set_of_comm.shape[1])
    width = set_of_comm.shape[1]
    setid = np.where(ok, set_of_comm.ravel()[np.where(ok, rec.slot * width + comm, 0)], -1)
    bad = np.flatnonzero((comm >= 0) & ~ok | (ok & (setid < 0)))
    if len(bad):
        raise ReplayError(f"{rec.describe(int(bad[0]))}: communicator {int(comm[bad[0]])} is not in the "
                          "rank's communicator table")
    native = _p2p_in_c(rec, setid) if NATIVE else None
    if native is not None:
        post_of, complete_of, recv_of_send, send_of_recv = native
    else:
        post_of, complete_of = _requests(ev, rec.slot, kind)
        recv_of_send, send_of_recv = _match_messages(rec, kind, setid, post_of, complete_of)
    native_pairs = (_p2p_deps_in_c(rec, post_of, recv_of_send, send_of_recv) if native is not None
                    else None)
    pairs = [native_pairs if native_pairs is not None
             else _p2p_deps(rec, kind, post_of, recv_of_send, send_of_recv)]
    group_pairs, grp_ptr, grp_idx = _collective_deps(rec, kind, setid, sets, complete_of)
    pairs.append(group_pairs)
    calls = np.concatenate([p[0] for p in pairs])
    nodes = np.concatenate([p[1] for p in pairs])
    order = np.argsort(calls, kind="stable")
    dep_ptr = np.zeros(rec.ncalls + 1, np.int64)
    np.cumsum(np.bincount(calls, minlength=rec.ncalls), out=dep_ptr[1:])
    return Dependencies(rec, dep_ptr, nodes[order].astype(np.int64), grp_ptr, grp_idx)


def check_complete(trace: Trace) -> None:
    """ReplayError unless every rank is traced and no event was dropped."""
    if not trace.ranks:
        raise ReplayError("the trace has no events")
    missing = trace.nprocs - len(trace.ranks)
    if missing > 0:
        raise ReplayError(f"the trace is incomplete: {missing} of {trace.nprocs} ranks have no trace")
    if trace.dropped:
        first = next(r for r in trace.ranks if r.dropped)
        raise ReplayError(f"the trace is incomplete: {trace.dropped} events were dropped (rank {first.rank} "
                          "reached its cap; raise PARIO_TRACE_MAX)")


#: The fields of EVENT_DTYPE the matching reads.
FIELDS = ("kind", "flags", "comm", "peer", "tag", "aux")


def _records(trace: Trace) -> Records:
    ranks = sorted(trace.ranks, key=lambda r: r.rank)
    world = np.array([r.rank for r in ranks], np.int64)
    if len(np.unique(world)) != len(world):
        raise ReplayError("the trace has two traces for one rank")
    counts = np.array([len(r.events) for r in ranks], np.int64)
    rec_ptr = np.zeros(len(ranks) + 1, np.int64)
    np.cumsum(counts, out=rec_ptr[1:])
    # each field joined on its own: one pass over the events per field, where joining the whole
    # events (56 bytes each, 4 M of them: 225 MB) and then reading fields out of them costs a
    # write of every byte and a page fault every 4 KiB besides
    events = {f: np.concatenate([r.events[f] for r in ranks]) for f in FIELDS}
    t0 = np.concatenate([np.asarray(r.t0, np.float64) for r in ranks])
    t1 = np.concatenate([np.asarray(r.t1, np.float64) for r in ranks])
    slot = np.repeat(np.arange(len(ranks), dtype=np.int64), counts)
    is_head = (events["flags"] & FLAG_CONT) == 0
    is_head[rec_ptr[:-1][counts > 0]] = True
    call_of = np.cumsum(is_head, dtype=np.int64) - 1
    head = np.flatnonzero(is_head).astype(np.int64)
    call_ptr = np.searchsorted(head, rec_ptr).astype(np.int64)
    return Records(world, rec_ptr, events, t0, t1, slot, call_of, head, call_ptr)


def _member_sets(trace: Trace) -> tuple[list[np.ndarray], np.ndarray]:
    """The distinct communicator member lists, and [slot, comm index] -> member-set id (-1: none)."""
    ranks = sorted(trace.ranks, key=lambda r: r.rank)
    width = max((len(r.comms) for r in ranks), default=0)
    table = np.full((len(ranks), max(width, 1)), -1, np.int64)
    ids: dict[tuple[int, ...], int] = {}
    sets: list[np.ndarray] = []
    for s, r in enumerate(ranks):
        for i, members in enumerate(r.comms):
            key = tuple(int(m) for m in members)
            if key not in ids:
                ids[key] = len(sets)
                sets.append(np.asarray(key, np.int64))
            table[s, i] = ids[key]
    return sets, table


#: Match requests and messages in libpario_replay.so when it is installed (src/replay/match.c);
#: False: always with NumPy (tests compare the two).
NATIVE = True
_P2P_KINDS = (Kind.SEND, Kind.SSEND, Kind.ISEND, Kind.ISSEND, Kind.RECV, Kind.IRECV, Kind.COMPLETE)


@functools.lru_cache(maxsize=1)
def replay_library() -> Any:
    """libpario_replay.so with its functions declared (the matching's here, the replay's for
    pario.trace.replay), None when it is not installed."""
    import ctypes

    from pario.paths import PACKAGE_DIR

    path = PACKAGE_DIR / "lib" / "libpario_replay.so"
    if not path.is_file():
        return None
    lib = ctypes.CDLL(str(path))
    i64, f64, ptr = ctypes.c_int64, ctypes.c_double, ctypes.c_void_p
    a64, af64, au8 = (np.ctypeslib.ndpointer(t, flags="C_CONTIGUOUS")
                      for t in (np.int64, np.float64, np.uint8))
    lib.pario_match_p2p.argtypes = [i64, *([ptr] * 6), i64, ptr, ptr, ptr, ctypes.c_int32, *([ptr] * 4)]
    lib.pario_match_p2p.restype = ctypes.c_int
    lib.pario_p2p_deps.argtypes = [i64, *([ptr] * 10)]
    lib.pario_p2p_deps.restype = ctypes.c_int
    lib.pario_replay.argtypes = [i64, a64, af64, af64, i64, af64, af64, au8, f64, f64,
                                 a64, a64, i64, a64, a64, af64, af64, af64, af64, a64]
    lib.pario_replay.restype = ctypes.c_int
    lib.pario_rank_sums.argtypes = [i64, a64, af64, af64, af64, au8, af64, af64, af64, af64]
    lib.pario_rank_sums.restype = None
    return lib


def _p2p_in_c(rec: Records, setid: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """(post_of, complete_of, recv_of_send, send_of_recv) as :func:`_requests` and
    :func:`_match_messages` give them, computed by src/replay/match.c; None when the library is
    not installed or the trace is not one it matches (request ids that do not grow with each
    post of a rank): the NumPy code then matches it."""
    lib = replay_library()
    if lib is None:
        return None
    ev = rec.events
    n = len(setid)
    arrays: list[np.ndarray] = [
              np.ascontiguousarray(ev["kind"], np.uint16), np.ascontiguousarray(ev["flags"], np.uint16),
              np.ascontiguousarray(ev["peer"], np.int32), np.ascontiguousarray(ev["tag"], np.int32),
              np.ascontiguousarray(ev["aux"], np.int64), np.ascontiguousarray(setid, np.int64)]
    rec_ptr = np.ascontiguousarray(rec.rec_ptr, np.int64)
    world = np.ascontiguousarray(rec.world, np.int64)
    out = [np.empty(n, np.int64) for _ in range(4)]
    status = lib.pario_match_p2p(n, *(a.ctypes.data for a in arrays), len(world), rec_ptr.ctypes.data,
                                 world.ctypes.data, _kinds().ctypes.data, FLAG_NONBLOCKING,
                                 *(o.ctypes.data for o in out))
    if status == 2:
        raise MemoryError("the point-to-point matching ran out of memory")
    return tuple(out) if status == 0 else None


def _kinds() -> np.ndarray:
    return np.array([int(k) for k in _P2P_KINDS], np.int32)


def _p2p_deps_in_c(rec: Records, post_of: np.ndarray, recv_of_send: np.ndarray,
                   send_of_recv: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_p2p_deps`'s (call, node) pairs computed by src/replay/match.c, in its order; None
    when one of them has no match (:func:`_p2p_deps` then says which)."""
    lib = replay_library()
    ev = rec.events
    n = len(post_of)
    kind = np.ascontiguousarray(ev["kind"], np.uint16)
    peer = np.ascontiguousarray(ev["peer"], np.int32)
    call_of = np.ascontiguousarray(rec.call_of, np.int64)
    calls, nodes = np.empty(n, np.int64), np.empty(n, np.int64)
    count = np.zeros(1, np.int64)
    status = lib.pario_p2p_deps(n, kind.ctypes.data, peer.ctypes.data, _kinds().ctypes.data,
                                post_of.ctypes.data, recv_of_send.ctypes.data, send_of_recv.ctypes.data,
                                call_of.ctypes.data, calls.ctypes.data, nodes.ctypes.data, count.ctypes.data)
    if status != 0:
        return None
    return calls[:int(count[0])], nodes[:int(count[0])]


def _requests(ev: dict[str, np.ndarray], slot: np.ndarray, kind: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """post_of[record] for COMPLETE records (-1: none) and complete_of[record] for posts (-1: none)."""
    n = len(kind)
    aux = ev["aux"].astype(np.int64)
    is_post = ((ev["flags"] & FLAG_NONBLOCKING) != 0) & (kind != Kind.COMPLETE) & (aux > 0)
    is_done = (kind == Kind.COMPLETE) & (aux > 0)
    post_of = np.full(n, -1, np.int64)
    complete_of = np.full(n, -1, np.int64)
    posts = np.flatnonzero(is_post)
    done = np.flatnonzero(is_done)
    if not len(posts) or not len(done):
        return post_of, complete_of
    # request ids only (I/O records keep file offsets in aux)
    width = int(max(aux[posts].max(), aux[done].max())) + 1
    pkey = slot[posts] * width + aux[posts]
    order = np.argsort(pkey, kind="stable")
    pkey_sorted = pkey[order]
    dkey = slot[done] * width + aux[done]
    at = np.minimum(np.searchsorted(pkey_sorted, dkey), len(pkey_sorted) - 1)
    found = pkey_sorted[at] == dkey
    post_of[done[found]] = posts[order[at[found]]]
    complete_of[post_of[done[found]]] = done[found]
    return post_of, complete_of


def _match_messages(rec: Records, kind: np.ndarray, setid: np.ndarray, post_of: np.ndarray,
                    complete_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """recv_of_send[send record] and send_of_recv[receive record] (IRECV posts), -1 if unmatched."""
    ev = rec.events
    n = len(kind)
    peer = ev["peer"].astype(np.int64)
    tag = ev["tag"].astype(np.int64)
    me = rec.world[rec.slot]
    sends = np.flatnonzero(kind_in(kind, _SENDS) & (peer >= 0) & (setid >= 0))
    # receives in post order: a RECV (status), an IRECV with its COMPLETE's status, or an
    # IRECV never completed but posted with a definite source and tag
    recvs = np.flatnonzero(((kind == Kind.RECV) | (kind == Kind.IRECV)) & (setid >= 0))
    src = peer[recvs].copy()
    rtag = tag[recvs].copy()
    done = complete_of[recvs]
    has = done >= 0
    src[has] = peer[done[has]]
    rtag[has] = tag[done[has]]
    keep = (src >= 0) & ((rtag >= 0) | has | (kind[recvs] == Kind.RECV))
    recvs, src, rtag = recvs[keep], src[keep], rtag[keep]
    is_recv = np.concatenate([np.zeros(len(sends), np.int64), np.ones(len(recvs), np.int64)])
    k_src = np.concatenate([me[sends], src])
    k_dst = np.concatenate([peer[sends], me[recvs]])
    k_tag = np.concatenate([tag[sends], rtag])
    k_set = np.concatenate([setid[sends], setid[recvs]])
    index = np.concatenate([sends, recvs])
    recv_of_send = np.full(n, -1, np.int64)
    send_of_recv = np.full(n, -1, np.int64)
    if not len(index):
        return recv_of_send, send_of_recv
    # the messages of one stream (source, destination, tag, communicator) together, its sends
    # before its receives, each in record order (sends, then receives, are: a stable sort of
    # the rest keeps it)
    stream = _packed_key([k_src, k_dst, k_tag, k_set])
    if stream is not None:
        order = np.argsort(stream * 2 + is_recv, kind="stable")
        new = run_heads(stream[order])
    else:
        order = np.lexsort((index, is_recv, k_set, k_tag, k_dst, k_src))
        ks, kd, kt, kc = k_src[order], k_dst[order], k_tag[order], k_set[order]
        new = np.ones(len(index), bool)
        new[1:] = (ks[1:] != ks[:-1]) | (kd[1:] != kd[:-1]) | (kt[1:] != kt[:-1]) | (kc[1:] != kc[:-1])
    # the i-th receive of a stream matches its i-th send (MPI's non-overtaking rule)
    starts = np.flatnonzero(new)
    is_r = is_recv[order]
    nsends = np.add.reduceat(1 - is_r, starts)
    rpos = np.flatnonzero(is_r)
    g = np.searchsorted(starts, rpos, side="right") - 1
    occ = rpos - starts[g] - nsends[g]
    matched = occ < nsends[g]
    recv_idx = index[order[rpos[matched]]]
    send_idx = index[order[(starts[g] + occ)[matched]]]
    send_of_recv[recv_idx] = send_idx
    recv_of_send[send_idx] = recv_idx
    return recv_of_send, send_of_recv


def _p2p_deps(rec: Records, kind: np.ndarray, post_of: np.ndarray, recv_of_send: np.ndarray,
              send_of_recv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(call, node) pairs of the point-to-point dependencies; ReplayError on an unmatched one."""
    call_of = rec.call_of
    # a receive that completed waits for the matching send's post
    peer = rec.events["peer"]
    blocking = np.flatnonzero((kind == Kind.RECV) & (peer >= 0))
    completes = np.flatnonzero(kind == Kind.COMPLETE)
    posts = post_of[completes]
    irecv_done = completes[(posts >= 0) & (kind[np.maximum(posts, 0)] == Kind.IRECV) & (peer[completes] >= 0)]
    recv_posts = np.concatenate([blocking, post_of[irecv_done]])
    recv_parts = np.concatenate([blocking, irecv_done])
    _unmatched(rec, recv_posts, send_of_recv[recv_posts], "no matching send in the trace")
    # a synchronous send waits for the matching receive's post
    ssend = np.flatnonzero((kind == Kind.SSEND) & (peer >= 0))
    issend = (posts >= 0) & (kind[np.maximum(posts, 0)] == Kind.ISSEND) & (peer[np.maximum(posts, 0)] >= 0)
    issend_done = completes[issend]
    send_posts = np.concatenate([ssend, post_of[issend_done]])
    send_parts = np.concatenate([ssend, issend_done])
    _unmatched(rec, send_posts, recv_of_send[send_posts], "no matching receive in the trace")
    calls = np.concatenate([call_of[recv_parts], call_of[send_parts]])
    nodes = np.concatenate([call_of[send_of_recv[recv_posts]], call_of[recv_of_send[send_posts]]])
    return calls, nodes


def _unmatched(rec: Records, posts: np.ndarray, matches: np.ndarray, what: str) -> None:
    missing = posts[matches < 0]
    if len(missing):
        first = int(missing.min())
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise ReplayError(f"{rec.describe(first)}: {what}{more}")


def _collective_deps(rec: Records, kind: np.ndarray, setid: np.ndarray, sets: list[np.ndarray],
                     complete_of: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray, np.ndarray]:
    """(call, node) pairs of the collectives, and the groups' member calls (CSR)."""
    ev = rec.events
    is_io_coll = kind_in(kind, IO_KINDS) & ((ev["flags"] & FLAG_COLLECTIVE) != 0)
    is_coll = (kind >= Kind.BARRIER) & (kind <= Kind.EXSCAN)
    recs = np.flatnonzero((is_coll | is_io_coll) & (setid >= 0))
    empty = np.zeros(0, np.int64)
    if not len(recs):
        return (empty, empty), np.zeros(1, np.int64), empty
    cls = np.where(is_io_coll[recs], _IO, _MPI)
    slot = rec.slot[recs]
    # sequence number of each collective on its (rank, member set, class)
    stream = (slot * (len(sets) + 1) + setid[recs]) * 2 + cls
    order = np.argsort(stream, kind="stable")
    seq = np.empty(len(recs), np.int64)
    seq[order] = np.arange(len(recs)) - _run_starts(stream[order])
    key = _packed_key([setid[recs], cls, seq])
    by_group: np.ndarray | None = None
    if key is not None:
        # the groups numbered in key order (as np.unique numbers them); the stable sort by key is
        # then the stable sort by group, needed below
        by_group = np.argsort(key, kind="stable")
        new = run_heads(key[by_group])
        group = np.empty(len(key), np.int64)
        group[by_group] = np.cumsum(new) - 1
        counts = np.diff(np.append(np.flatnonzero(new), len(key)))
    else:
        _, group, counts = np.unique(np.stack([setid[recs], cls, seq]), axis=1, return_inverse=True,
                                     return_counts=True)
    group = group.reshape(-1)
    size = np.array([len(m) for m in sets], np.int64)[setid[recs]]
    gsize = np.zeros(len(counts), np.int64)
    gsize[group] = size
    ckind = np.where(cls == _IO, -1, kind[recs])
    kmin = np.full(len(counts), np.iinfo(np.int64).max)
    kmax = np.full(len(counts), np.iinfo(np.int64).min)
    np.minimum.at(kmin, group, ckind)
    np.maximum.at(kmax, group, ckind)
    _check_groups(rec, recs, group, counts, gsize, kmin, kmax, sets, setid, slot)
    ngroups = len(counts)
    if by_group is None:
        by_group = np.argsort(group, kind="stable")
    grp_ptr = np.zeros(ngroups + 1, np.int64)
    np.cumsum(counts, out=grp_ptr[1:])
    arrival = rec.call_of[recs]
    grp_idx = arrival[by_group]
    # the call where each participation completes (a nonblocking one: its COMPLETE; none if never)
    nonblocking = (ev["flags"][recs] & FLAG_NONBLOCKING) != 0
    done = np.where(nonblocking, complete_of[recs], recs)
    has_done = done >= 0
    finish = np.where(has_done, rec.call_of[np.maximum(done, 0)], -1)
    me = rec.world[slot]
    root = ev["peer"][recs].astype(np.int64)
    k = kind[recs]
    # the root's arrival call of each group (rooted collectives), -1 if the root is not a member
    root_arrival = np.full(ngroups, -1, np.int64)
    is_root = me == root
    root_arrival[group[is_root]] = arrival[is_root]
    gnode = rec.ncalls + group
    fan_out = np.isin(k, _FAN_OUT) & (root_arrival[group] >= 0)
    fan_in = np.isin(k, _FAN_IN) & (root_arrival[group] >= 0)
    prefix = np.isin(k, _PREFIX) & (cls == _MPI)
    wait_all = ~(fan_out | fan_in | prefix) | (fan_in & is_root)
    calls = [finish[wait_all & has_done]]
    nodes = [gnode[wait_all & has_done]]
    sel = fan_out & ~is_root & has_done
    calls.append(finish[sel])
    nodes.append(root_arrival[group[sel]])
    # SCAN/EXSCAN: the member at position i waits for the arrivals of positions 0..i
    for i in np.flatnonzero(prefix & has_done):
        members = sets[int(setid[recs[i]])]
        position = int(np.flatnonzero(members == me[i])[0])
        g = int(group[i])
        mine = grp_idx[grp_ptr[g]:grp_ptr[g + 1]]
        who = me[by_group[grp_ptr[g]:grp_ptr[g + 1]]]
        before = np.isin(who, members[: position + 1])
        calls.append(np.full(int(before.sum()), finish[i], np.int64))
        nodes.append(mine[before])
    return (np.concatenate(calls), np.concatenate(nodes)), grp_ptr, grp_idx


def _check_groups(rec: Records, recs: np.ndarray, group: np.ndarray, counts: np.ndarray, gsize: np.ndarray,
                  kmin: np.ndarray, kmax: np.ndarray, sets: list[np.ndarray], setid: np.ndarray,
                  slot: np.ndarray) -> None:
    short = np.flatnonzero(counts != gsize)
    mixed = np.flatnonzero(kmin != kmax)
    if len(short):
        g = int(short[0])
        inside = np.flatnonzero(group == g)
        members = sets[int(setid[recs[inside[0]]])]
        present = rec.world[slot[inside]]
        absent = [int(m) for m in members if m not in set(present.tolist())]
        first = int(recs[inside].min())
        raise ReplayError(f"{rec.describe(first)}: collective not reached by rank(s) "
                          f"{', '.join(map(str, absent[:8]))}{' ...' if len(absent) > 8 else ''} "
                          "of its communicator (unmatched collective)")
    if len(mixed):
        g = int(mixed[0])
        inside = recs[group == g]
        raise ReplayError(f"{rec.describe(int(inside.min()))} and {rec.describe(int(inside.max()))}: "
                          "different collectives at the same point of one communicator")
