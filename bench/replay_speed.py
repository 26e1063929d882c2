"""How fast is the replay?  (docs/performance.md, section "Replay")

A synthetic trace of RANKS ranks doing ITERATIONS times: computation, a Sendrecv ring
(SEND + RECV part), an Irecv/Isend pair with the next-but-one rank completed by a Waitall
(IRECV, ISEND, WAIT + 2 COMPLETE parts), an Allreduce and a POSIX write: 9 events per
rank and iteration.  Timed in process, median of --reps: the matching (pario.trace.replay.
prepare: calls, requests, messages, collectives, wait/transfer split), one replay, and all
four replays; events per second of matching + one replay and of matching + the four.

The process is set up as ``pario replay`` runs (a one-shot command, pario.cli.ONE_SHOT): NumPy
without huge-page advice (pario.blas) and glibc's malloc keeping freed memory (pario.malloc).

Usage: .venv/bin/python bench/replay_speed.py [--ranks 64] [--iterations 7000] [--reps 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from pario.blas import load_numpy
from pario.malloc import ONE_SHOT, set_thresholds

load_numpy(one_shot=True)
set_thresholds(*ONE_SHOT)

import numpy as np  # noqa: E402  (loaded as pario replay loads it, above)

from pario.trace.format import EVENT_DTYPE, FLAG_CONT, FLAG_NONBLOCKING, Kind  # noqa: E402
from pario.trace.model import RankTrace, Trace  # noqa: E402
from pario.trace.replay import prepare, replay, replays  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_speed import in_process  # noqa: E402  (bench/report_speed.py: median of timed calls)

#: (kind, flags, peer offset (None: no peer), tag, completes a request)
PATTERN = (
    (Kind.SEND, 0, 1, 0),
    (Kind.RECV, FLAG_CONT, -1, 0),
    (Kind.IRECV, FLAG_NONBLOCKING, -2, 1),
    (Kind.ISEND, FLAG_NONBLOCKING, 2, 1),
    (Kind.WAIT, 0, None, 0),
    (Kind.COMPLETE, FLAG_CONT, -2, 1),
    (Kind.COMPLETE, FLAG_CONT, None, 0),
    (Kind.ALLREDUCE, 0, None, 0),
    (Kind.IO_WRITE, 0, None, 0),
)


def synthetic(nranks: int, iterations: int, seed: int = 1) -> Trace:
    rng = np.random.default_rng(seed)
    per = len(PATTERN)
    n = per * iterations
    ranks = []
    members = (np.arange(nranks, dtype=np.int64),)
    for r in range(nranks):
        ev = np.zeros(n, EVENT_DTYPE)
        kinds = np.array([p[0] for p in PATTERN], np.uint16)
        flags = np.array([p[1] for p in PATTERN], np.uint16)
        ev["kind"] = np.tile(kinds, iterations)
        ev["flags"] = np.tile(flags, iterations)
        peers = np.array([-1 if p[2] is None else (r + p[2]) % nranks for p in PATTERN], np.int32)
        ev["peer"] = np.tile(peers, iterations)
        ev["tag"] = np.tile(np.array([p[3] for p in PATTERN], np.int32), iterations)
        ev["comm"] = np.where(ev["kind"] == Kind.IO_WRITE, -1, 0)
        it = np.repeat(np.arange(iterations, dtype=np.int64), per)
        # request ids: the Irecv 2i+1, the Isend 2i+2; the COMPLETE parts name them
        slot = np.tile(np.arange(per), iterations)
        ev["aux"] = np.select([slot == 2, slot == 3, slot == 5, slot == 6], [2 * it + 1, 2 * it + 2,
                              2 * it + 1, 2 * it + 2], 0)
        ev["aux"][ev["kind"] == Kind.IO_WRITE] = 4096 * it[ev["kind"] == Kind.IO_WRITE]
        ev["bytes"] = 4096
        # durations: computation before the Sendrecv and the write, short calls otherwise
        dur = rng.uniform(1e-6, 5e-6, n)
        gap = np.where(slot == 0, rng.uniform(1e-4, 2e-4, n), 0.0) + np.where(slot == 8, 1e-5, 0.0)
        # parts share their call's times
        t0 = np.cumsum(gap + dur) - dur
        t1 = t0 + dur
        cont = (ev["flags"] & FLAG_CONT) != 0
        head = np.maximum.accumulate(np.where(cont, 0, np.arange(n)))
        t0, t1 = t0[head], t1[head]
        ev["t0"] = (t0 * 1e9).astype(np.uint64)
        ev["t1"] = (t1 * 1e9).astype(np.uint64)
        ranks.append(RankTrace(r, ev, t0, t1, members, 0.0, float(t1[-1])))
    return consistent(Trace(nranks, tuple(ranks)))


def consistent(trace: Trace) -> Trace:
    """The trace with the times of its own measured replay: no call ends before its
    dependencies are met (as on one clock), so the measured replay reproduces it."""
    p = prepare(trace)
    r = replay(p)
    rec = p.deps.records
    t0 = r.call_start[rec.call_of]
    t1 = r.call_end[rec.call_of]
    out = []
    for s, rt in enumerate(sorted(trace.ranks, key=lambda x: x.rank)):
        lo, hi = rec.rec_ptr[s], rec.rec_ptr[s + 1]
        ev = rt.events.copy()
        ev["t0"] = (t0[lo:hi] * 1e9).astype(np.uint64)
        ev["t1"] = (t1[lo:hi] * 1e9).astype(np.uint64)
        end = float(r.rank_ends[s]) + p.origin
        out.append(RankTrace(rt.rank, ev, t0[lo:hi], t1[lo:hi], rt.comms, rt.start, end))
    return Trace(trace.nprocs, tuple(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--iterations", type=int, default=7000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--against", metavar="REV",
                    help="also time the matching (pario.trace.match.dependencies) of git revision REV "
                         "against the installed one, in alternate rounds, and give the ratio of medians")
    args = ap.parse_args()
    other = match_of(args.against) if args.against else None  # a bad REV stops here, not after the runs
    t = time.perf_counter()
    trace = synthetic(args.ranks, args.iterations)
    print(f"trace: {args.ranks} ranks, {trace.nevents:,} events (built in {time.perf_counter() - t:.1f} s)")
    p = prepare(trace)
    print(f"calls: {p.deps.ncalls:,}, dependency edges: {len(p.deps.dep_idx):,}")
    t_match = in_process(lambda: prepare(trace), args.reps)
    t_one = in_process(lambda: replay(p), args.reps)
    t_four = in_process(lambda: replays(p), args.reps)
    r = replay(p)
    n = trace.nevents
    rows = (("match (prepare)", t_match), ("one replay", t_one), ("four replays", t_four),
            ("match + one replay", t_match + t_one), ("match + four replays", t_match + t_four))
    for label, seconds in rows:
        print(f"{label:<25} {seconds:7.3f} s  {n / seconds / 1e6:6.2f} M events/s")
    print(f"measured replay error     {r.error:+.2e}")
    if other is not None:
        against(trace, args.against, other, args.reps)


def match_of(rev: str) -> Any:
    """pario.trace.match as git revision ``rev`` has it, loaded as a module of its own."""
    import importlib.util
    import subprocess
    import tempfile

    checkout = str(Path(__file__).resolve().parent.parent)
    shown = subprocess.run(["git", "-C", checkout, "show", f"{rev}:python/pario/trace/match.py"],
                           capture_output=True, text=True)
    if shown.returncode != 0:
        raise SystemExit(f"--against {rev}: {shown.stderr.strip().splitlines()[-1]}")
    text = shown.stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location("match_against", f.name)
    assert spec and spec.loader
    other = importlib.util.module_from_spec(spec)
    sys.modules["match_against"] = other
    spec.loader.exec_module(other)
    return other


def against(trace: Trace, rev: str, other: Any, reps: int) -> None:
    """The matching of revision ``rev`` (``other``, from :func:`match_of`) against the installed
    one on the same trace, rounds alternating which goes first; the two must agree."""
    import statistics

    from pario.trace import match

    a, b = other.dependencies(trace), match.dependencies(trace)
    for name in ("dep_ptr", "dep_idx", "grp_ptr", "grp_idx"):
        if not np.array_equal(getattr(a, name), getattr(b, name)):
            raise SystemExit(f"{rev}'s matching and the installed one differ in {name}")
    times: dict[str, list[float]] = {rev: [], "installed": []}
    for i in range(2 * reps):
        sides = [(rev, other), ("installed", match)]
        for label, mod in sides if i % 2 == 0 else sides[::-1]:
            t = time.perf_counter()
            mod.dependencies(trace)
            times[label].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"matching, {2 * reps} rounds each, medians: {rev} {med[rev]:.3f} s, "
          f"installed {med['installed']:.3f} s, ratio {med[rev] / med['installed']:.2f} "
          "(the same dependencies)")


if __name__ == "__main__":
    main()
