"""The runtime's event trace (docs/trace.md): `pario run --trace` on real mpirun jobs, read back
into pario.trace.model.Trace event by event; buffer spills, the trace cap, damaged and older logs,
and hand-built traces (tests/trace_writer.py) with known times."""

from __future__ import annotations

import json
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from pario.analysis.times import rank_ids
from pario.log import _format as fmt
from pario.log import read_log
from pario.log.pario_reader import _blocks
from pario.model import Profile
from pario.trace.format import (
    FLAG_COLLECTIVE,
    FLAG_CONT,
    FLAG_NONBLOCKING,
    IO_KINDS,
    LAYER_SHIFT,
    Kind,
)
from pario.trace.model import RankTrace
from pario_writer import write_pario_log
from trace_writer import RankEvents, append_trace, events

NP = 3


@dataclass
class TracedRun:
    profile: Profile
    log: Path
    out: Path
    stderr: str


def _traced(tmp_path_factory, compile_program, run_under_pario, mpi_env, name: str,
            env: dict[str, str] | None = None) -> TracedRun:
    out = tmp_path_factory.mktemp(name)
    log = out / f"{name}.pario"
    exe = compile_program("trace_known.c")
    proc = run_under_pario(log, ["mpirun", "-np", str(NP), str(exe), str(out)], extra=["--trace"],
                           env=mpi_env | (env or {}))
    assert proc.returncode == 0, proc.stderr
    assert "MPI_Test completed" not in proc.stderr
    return TracedRun(read_log(log), log, out, proc.stderr)


@pytest.fixture(scope="module")
def traced(tmp_path_factory, compile_program, mpi_env, pario_cmd) -> TracedRun:
    def run(log, command, extra, env):
        return subprocess.run([*pario_cmd, "run", "--log", str(log), *extra, "--", *command], env=env,
                              capture_output=True, text=True, timeout=120)

    return _traced(tmp_path_factory, compile_program, run, mpi_env, "big")


@pytest.fixture(scope="module")
def spilled(tmp_path_factory, compile_program, mpi_env, pario_cmd) -> TracedRun:
    def run(log, command, extra, env):
        return subprocess.run([*pario_cmd, "run", "--log", str(log), *extra, "--", *command], env=env,
                              capture_output=True, text=True, timeout=120)

    return _traced(tmp_path_factory, compile_program, run, mpi_env, "small", {"PARIO_TRACE_BUFFER": "4"})


def _raw_blocks(log: Path) -> list[tuple[int, int, bytes]]:
    return list(_blocks(log.read_bytes(), str(log)))


def _fields(r: RankTrace) -> list[tuple]:
    """Each event as (kind name, flags, comm, peer, tag, bytes, aux)."""
    e = r.events
    return [(Kind(k).name, int(f), int(c), int(p), int(t), int(b), int(a))
            for k, f, c, p, t, b, a in zip(e["kind"], e["flags"], e["comm"], e["peer"], e["tag"], e["bytes"],
                                           e["aux"], strict=True)]


MPIIO = 2 << LAYER_SHIFT
COLL_IO = MPIIO | FLAG_COLLECTIVE
NB = FLAG_NONBLOCKING
POSIX_META = ("IO_META", 0, -1, -1, -1, 0, -1)

#: what each rank of trace_known.c must record, in order (kind, flags, comm, peer, tag, bytes, aux);
#: aux: request ids, COMPLETE's completed id, I/O offsets (-1 for metadata)
EXPECTED = {
    0: [("SEND", 0, 0, 1, 5, 400, 0),
        ("IRECV", NB, 0, -2, 7, 64, 1), ("ISEND", NB, 0, 1, 8, 16, 2),
        ("WAIT", 0, -1, -1, -1, 0, 0), ("COMPLETE", FLAG_CONT, 0, 2, 7, 64, 1),
        ("COMPLETE", FLAG_CONT, 0, -1, -1, 0, 2),
        ("SEND", 0, 0, 1, 9, 12, 0), ("RECV", FLAG_CONT, 0, 2, 9, 12, 0),
        ("BCAST", 0, 0, 1, -1, 0, 0), ("ALLREDUCE", 0, 0, -1, -1, 32, 0),
        ("MPI_OTHER", 0, -1, -1, -1, 0, 0), ("BARRIER", 0, 1, -1, -1, 0, 0), ("BCAST", 0, 1, 2, -1, 0, 0),
        ("IO_META", COLL_IO, 0, -1, -1, 0, -1), ("IO_WRITE", COLL_IO, 0, -1, -1, 1000, 0),
        ("IO_META", COLL_IO, 0, -1, -1, 0, -1),
        POSIX_META, ("IO_WRITE", 0, -1, -1, -1, 100, 7), POSIX_META,
        ("IRECV", NB, 0, 1, 11, 4, 3), ("WAIT", 0, -1, -1, -1, 0, 0),  # the test that completes nothing
        ("BARRIER", 0, 0, -1, -1, 0, 0), ("WAIT", 0, -1, -1, -1, 0, 0),
        ("COMPLETE", FLAG_CONT, 0, 1, 11, 4, 3),
        ("MPI_OTHER", 0, -1, -1, -1, 0, 0), ("FINALIZE", 0, -1, -1, -1, 0, 0)],
    1: [("RECV", 0, 0, 0, 5, 400, 0),
        ("IRECV", NB, 0, 0, 8, 16, 1), ("WAIT", 0, -1, -1, -1, 0, 0), ("COMPLETE", FLAG_CONT, 0, 0, 8, 16, 1),
        ("SEND", 0, 0, 2, 9, 12, 0), ("RECV", FLAG_CONT, 0, 0, 9, 12, 0),
        ("BCAST", 0, 0, 1, -1, 32, 0), ("ALLREDUCE", 0, 0, -1, -1, 32, 0),
        ("MPI_OTHER", 0, -1, -1, -1, 0, 0), ("BARRIER", 0, 1, -1, -1, 0, 0), ("BCAST", 0, 1, 2, -1, 0, 0),
        ("IO_META", COLL_IO, 0, -1, -1, 0, -1), ("IO_WRITE", COLL_IO, 0, -1, -1, 1000, 1000),
        ("IO_META", COLL_IO, 0, -1, -1, 0, -1),
        POSIX_META, ("IO_WRITE", 0, -1, -1, -1, 100, 57), POSIX_META,
        ("BARRIER", 0, 0, -1, -1, 0, 0), ("SEND", 0, 0, 0, 11, 4, 0),
        ("MPI_OTHER", 0, -1, -1, -1, 0, 0), ("FINALIZE", 0, -1, -1, -1, 0, 0)],
    2: [("ISEND", NB, 0, 0, 7, 64, 1), ("WAIT", 0, -1, -1, -1, 0, 0),
        ("COMPLETE", FLAG_CONT, 0, -1, -1, 0, 1),
        ("SEND", 0, 0, 0, 9, 12, 0), ("RECV", FLAG_CONT, 0, 1, 9, 12, 0),
        ("BCAST", 0, 0, 1, -1, 0, 0), ("ALLREDUCE", 0, 0, -1, -1, 32, 0),
        ("MPI_OTHER", 0, -1, -1, -1, 0, 0), ("BARRIER", 0, 1, -1, -1, 0, 0), ("BCAST", 0, 1, 2, -1, 8, 0),
        ("IO_META", COLL_IO, 0, -1, -1, 0, -1), ("IO_WRITE", COLL_IO, 0, -1, -1, 1000, 2000),
        ("IO_META", COLL_IO, 0, -1, -1, 0, -1),
        POSIX_META, ("IO_WRITE", 0, -1, -1, -1, 100, 107), POSIX_META,
        ("BARRIER", 0, 0, -1, -1, 0, 0),
        ("MPI_OTHER", 0, -1, -1, -1, 0, 0), ("FINALIZE", 0, -1, -1, -1, 0, 0)],
}


@pytest.mark.slow
def test_events_of_a_known_program(traced: TracedRun) -> None:
    trace = traced.profile.trace
    assert trace is not None and trace.nprocs == NP and trace.complete
    assert [r.rank for r in trace.ranks] == list(range(NP))
    for r in trace.ranks:
        assert _fields(r) == EXPECTED[r.rank], f"rank {r.rank}"
        assert r.dropped == 0 and r.dropped_from is None and r.untraced_events == 0
        assert r.untracked_requests == 0
        # the communicator table: MPI_COMM_WORLD, then the split one ordered 2, 0, 1
        assert [c.tolist() for c in r.comms] == [[0, 1, 2], [2, 0, 1]]
        # files: the shared MPI-IO file and the rank's own POSIX file
        io = r.events[np.isin(r.events["kind"], list(IO_KINDS))]
        names = [trace.files[int(f)] for f in io["file"]]
        assert names == [str(traced.out / "shared.dat")] * 3 + [str(traced.out / f"posix.{r.rank}")] * 3


def test_the_index_keeps_member_lists_as_ranges_or_ranks(traced: TracedRun) -> None:
    indexes = {rank: json.loads(p) for kind, rank, p in _raw_blocks(traced.log)
               if kind == fmt.BLOCK_TRACE_INDEX}
    assert sorted(indexes) == list(range(NP))
    for rank, index in indexes.items():
        assert index["comms"] == [{"range": [0, NP, 1]}, {"ranks": [2, 0, 1]}]
        assert index["blocks"] == 1 and index["events"] == len(EXPECTED[rank])
        assert index["ticks_per_second"] > 1e6 and len(index["sync"]) == 2
    assert indexes[0]["sync"][0][1] == 0.0 and indexes[0]["sync"][1][1] == 0.0  # rank 0 is the time base


@pytest.mark.measured  # the trace's I/O and MPI times against the counters' to 0.1%: load skews them
def test_times_are_monotone_and_match_the_profile(traced: TracedRun) -> None:
    trace = traced.profile.trace
    assert trace is not None
    ranks = traced.profile.ranks
    for r in trace.ranks:
        (row,) = np.flatnonzero(rank_ids(ranks) == r.rank)  # the rank table's row of rank r.rank
        raw = r.events
        cont = (raw["flags"] & FLAG_CONT) != 0
        # calls follow each other; a further part of a call has the call's times
        assert np.all(raw["t0"] <= raw["t1"])
        assert np.all(raw["t0"][~cont][1:] >= raw["t1"][~cont][:-1])
        before = np.flatnonzero(cont) - 1
        assert np.all(raw["t0"][cont] == raw["t0"][before]) and np.all(raw["t1"][cont] == raw["t1"][before])
        assert np.all(np.diff(r.t0) >= -1e-12) and r.start <= r.t0[0] and r.end == r.t0[-1]
        own = ~cont
        dur = (r.t1 - r.t0)[own]
        kinds = raw["kind"][own]
        io = np.isin(kinds, list(IO_KINDS))
        mpi = ~io & (kinds != Kind.FINALIZE)
        assert dur[io].sum() == pytest.approx(ranks["io"][row], rel=1e-3, abs=1e-7)
        assert dur[mpi].sum() == pytest.approx(ranks["mpi"][row], rel=1e-3, abs=1e-7)
        # the timeline spans the profile's wall time (from the library's start, less MPI_Init,
        # to MPI_Finalize's entry), so the gaps between calls are the profile's computation
        assert r.end - r.start == pytest.approx(ranks["wall"][row], rel=1e-6, abs=1e-5)
        gaps = np.diff(np.concatenate(([r.start], r.t0[own]))) - np.concatenate(([0.0], dur[:-1]))
        assert gaps.sum() == pytest.approx(ranks["useful"][row], rel=1e-3, abs=1e-5)
    # one time base: the collective file open ends at about the same time on every rank
    opens = [r.t1[np.flatnonzero(r.events["kind"] == Kind.IO_META)[0]] for r in trace.ranks]
    assert max(opens) - min(opens) < 0.05


@pytest.mark.slow
def test_a_small_buffer_spills_and_records_the_same_events(traced: TracedRun, spilled: TracedRun) -> None:
    trace = spilled.profile.trace
    assert trace is not None and trace.complete
    nblocks = {}
    for kind, rank, _ in _raw_blocks(spilled.log):
        if kind == fmt.BLOCK_TRACE:
            nblocks[rank] = nblocks.get(rank, 0) + 1
    for r in trace.ranks:
        assert nblocks[r.rank] == -(-len(EXPECTED[r.rank]) // 4)  # ceil: blocks of 4 events
        assert _fields(r) == EXPECTED[r.rank]
    assert spilled.profile.job.complete


def _assert_many_writes(profile: Profile, count: int) -> None:
    """trace_many_writes.c's trace, whole: rank r's count * (r + 1) writes of 1 byte, in order."""
    trace = profile.trace
    assert trace is not None and trace.complete and profile.job.complete
    assert sorted(r.rank for r in trace.ranks) == [0, 1]
    for r in trace.ranks:
        n = count * (r.rank + 1)
        writes = r.events["kind"] == Kind.IO_WRITE
        assert int(writes.sum()) == n and r.dropped == 0
        np.testing.assert_array_equal(r.events["aux"][writes], (np.arange(n, dtype=np.int64) * 7) % 1000)
        assert set(r.events["bytes"][writes].tolist()) == {1}


@pytest.mark.slow
def test_a_log_larger_than_the_write_window_keeps_every_event(tmp_path, compile_program, run_under_pario,
                                                                mpi_env) -> None:
    # rank 0 writes the log in 4 MiB windows gathered from every rank; 400,000 and 800,000
    # events spilled in blocks of 4,096 make a log of three windows whose edges fall inside
    # rank 1's spilled blocks
    count = 400_000
    exe = compile_program("trace_many_writes.c")
    log = tmp_path / "many.pario"
    proc = run_under_pario(log, ["mpirun", "-np", "2", str(exe), str(tmp_path), str(count)],
                           extra=["--trace"], env=mpi_env | {"PARIO_TRACE_BUFFER": "4096"})
    assert proc.returncode == 0, proc.stderr
    assert log.stat().st_size > 2 * (4 << 20)
    _assert_many_writes(read_log(log), count)


@pytest.mark.slow
def test_a_log_of_several_windows_falls_back_whole(tmp_path, compile_program, libpario, mpi_env) -> None:
    """Where PARIO_LOG cannot be written, a log of three windows goes to TMPDIR with every event:
    the ranks' offsets reach them for the second attempt too."""
    count = 400_000
    exe = compile_program("trace_many_writes.c")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    fallback = tmp_path / "tmp"
    fallback.mkdir()
    cmd = ["mpirun", "-np", "2", "-x", f"LD_PRELOAD={libpario}", "-x", f"PARIO_LOG={blocker}/many.pario",
           "-x", "PARIO_TRACE=1", "-x", "PARIO_TRACE_BUFFER=4096", "-x", f"TMPDIR={fallback}",
           str(exe), str(tmp_path), str(count)]
    proc = subprocess.run(cmd, env=mpi_env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {fallback}/many.pario instead" in proc.stderr
    log = fallback / "many.pario"
    assert log.stat().st_size > 2 * (4 << 20)
    _assert_many_writes(read_log(log), count)


@pytest.mark.slow
def test_a_tiny_cap_drops_and_counts(tmp_path_factory, compile_program, run_under_pario, mpi_env) -> None:
    run = _traced(tmp_path_factory, compile_program, run_under_pario, mpi_env, "capped",
                  {"PARIO_TRACE_BUFFER": "4", "PARIO_TRACE_MAX": "1"})
    trace = run.profile.trace
    assert trace is not None and not trace.complete and run.profile.job.complete
    for r in trace.ranks:
        # the buffer could not be spilled: its 4 events are kept, the rest dropped and counted
        assert len(r.events) == 4 and r.dropped == len(EXPECTED[r.rank]) - 4
        assert _fields(r) == EXPECTED[r.rank][:4]
        assert r.dropped_from is not None and r.dropped_from >= 0
        assert f"pario: rank {r.rank}: the trace reached PARIO_TRACE_MAX" in run.stderr


def test_a_run_without_trace_has_no_trace_blocks(known_run) -> None:
    profile, out, _ = known_run
    assert profile.trace is None
    assert not [k for k, _, _ in _raw_blocks(Path(profile.job.path)) if k >= fmt.BLOCK_TRACE]


def test_a_program_without_mpi_traces_its_first_thread(tmp_path, compile_program, run_under_pario) -> None:
    exe = compile_program("posix_threads.c", mpi=False)
    log = tmp_path / "threads.pario"
    proc = run_under_pario(log, [str(exe), str(tmp_path), "threads", "0"], extra=["--trace"])
    assert proc.returncode == 0, proc.stderr
    trace = read_log(log).trace
    assert trace is not None and trace.nprocs == 1 and len(trace.ranks) == 1
    (r,) = trace.ranks
    # the main thread opened and closed same.dat; each worker: open, 1000 pwrite, 500 write, close
    assert [Kind(k).name for k in r.events["kind"]] == ["IO_META", "IO_META"]
    assert set(r.events["flags"].tolist()) == {0}
    assert trace.files[int(r.events["file"][0])].endswith("same.dat")
    assert r.untraced_events == 2 * 1502
    assert [c.tolist() for c in r.comms] == [[0]] and r.start == 0.0


# ---- damaged, older and hand-built logs -----------------------------------------------------------


def _cli(pario_cmd: list[str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*pario_cmd, *args], capture_output=True, text=True, timeout=60)


def _one_line_error(proc: subprocess.CompletedProcess, words: str) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], proc.stderr


@pytest.mark.slow
def test_damaged_trace_blocks_are_one_line_errors(traced: TracedRun, tmp_path, pario_cmd) -> None:
    data = traced.log.read_bytes()
    # the first TRACE block: where it starts, from the block headers
    pos, first_trace = fmt.FILE_HEADER.size, -1
    while pos < len(data):
        kind, _, _, clen, _, _ = fmt.BLOCK_HEADER.unpack_from(data, pos)
        if kind == fmt.BLOCK_TRACE:
            first_trace = pos
            break
        pos += fmt.BLOCK_HEADER.size + clen
    assert first_trace > 0
    flipped = bytearray(data)
    flipped[first_trace + fmt.BLOCK_HEADER.size + 5] ^= 0x40
    bad = tmp_path / "flipped.pario"
    bad.write_bytes(bytes(flipped))
    cut = tmp_path / "cut.pario"
    cut.write_bytes(data[: first_trace + fmt.BLOCK_HEADER.size + 3])
    for command in ("report", "dump"):
        _one_line_error(_cli(pario_cmd, command, str(bad)), "checksum mismatch in a TRACE block")
        _one_line_error(_cli(pario_cmd, command, str(cut)), "truncated pario log")


def _profile_log(traced: TracedRun, path: Path, version: int) -> Path:
    write_pario_log(traced.profile, path)
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, 8, version)
    path.write_bytes(bytes(data))
    return path


def test_a_version_1_log_reads_without_trace(traced: TracedRun, tmp_path) -> None:
    old = read_log(_profile_log(traced, tmp_path / "v1.pario", 1))
    assert old.trace is None and old.job.nprocs == NP and len(old.ranks) == NP


def test_hand_built_trace_on_the_job_time_base(traced: TracedRun, tmp_path) -> None:
    log = _profile_log(traced, tmp_path / "hand.pario", 2)
    ev0 = events([{"t0": 1_000, "t1": 2_000_001_000, "kind": Kind.SEND, "comm": 0, "peer": 1, "tag": 3,
                   "bytes": 8},
                  {"t0": 3_000_001_000, "t1": 3_000_001_000, "kind": Kind.FINALIZE}])
    ev1 = events([{"t0": 500, "t1": 4_000_000_500, "kind": Kind.RECV, "comm": 0, "peer": 0, "tag": 3,
                   "bytes": 8},
                  {"t0": 5_000_000_500, "t1": 6_000_000_500, "kind": Kind.IO_WRITE, "flags": 2 << LAYER_SHIFT,
                   "aux": 4096, "bytes": 10},
                  {"t0": 8_000_000_500, "t1": 8_000_000_500, "kind": Kind.FINALIZE}])
    append_trace(log, {
        0: RankEvents(ev0, ticks_per_second=1e9, origin_ticks=1_000, sync=[[0.0, 0.0], [3.0, 0.0]]),
        # rank 1: 2 ticks per ns, its clock 0.5 s behind at its origin and 0.7 s at 4 s (local)
        1: RankEvents(ev1, ticks_per_second=2e9, origin_ticks=500, sync=[[4.0, 0.7], [0.0, 0.5]],
                      per_block=1),
    })
    trace = read_log(log).trace
    assert trace is not None and trace.nevents == 5 and not trace.complete  # rank 2 has no trace
    r0, r1 = trace.ranks
    assert r0.t0.tolist() == [0.0, 3.0] and r0.t1.tolist() == [2.0, 3.0] and (r0.start, r0.end) == (0.0, 3.0)
    # local seconds x -> x + 0.5 + 0.05 x (the offset interpolated between the two sync points)
    assert r1.t0 == pytest.approx([0.5, 3.125, 4.7]) and r1.t1 == pytest.approx([2.6, 3.65, 4.7])
    assert (r1.start, r1.end) == pytest.approx((0.5, 4.7))


def test_inconsistent_hand_built_traces_are_refused(traced: TracedRun, tmp_path, pario_cmd) -> None:
    ev = events([{"t0": 1, "t1": 2, "kind": Kind.BARRIER, "comm": 0}] * 3)
    cases = {
        "events": RankEvents(ev, per_block=2),  # the first of its two blocks is dropped below
        "comms": RankEvents(ev, comms=[{"range": [0, "x", 1]}]),
    }
    log = _profile_log(traced, tmp_path / "short.pario", 2)
    append_trace(log, {0: cases["events"]})
    data = log.read_bytes()
    # drop the second TRACE block (and fix END's count): rank 0's index no longer agrees
    blocks, pos = [], fmt.FILE_HEADER.size
    while pos < len(data):
        kind, _, _, clen, _, _ = fmt.BLOCK_HEADER.unpack_from(data, pos)
        blocks.append((kind, data[pos: pos + fmt.BLOCK_HEADER.size + clen]))
        pos += fmt.BLOCK_HEADER.size + clen
    traces = [i for i, (k, _) in enumerate(blocks) if k == fmt.BLOCK_TRACE]
    del blocks[traces[0]]
    body = b"".join(b for k, b in blocks if k != fmt.BLOCK_END)
    end = fmt.block(fmt.BLOCK_END, -1, struct.pack("<Q", len(blocks) - 1))
    log.write_bytes(data[: fmt.FILE_HEADER.size] + body + end)
    _one_line_error(_cli(pario_cmd, "dump", str(log)), "not in order or one is missing")
    log2 = _profile_log(traced, tmp_path / "comms.pario", 2)
    append_trace(log2, {0: cases["comms"]})
    _one_line_error(_cli(pario_cmd, "dump", str(log2)), "bad communicator entry")
    old = _profile_log(traced, tmp_path / "v1trace.pario", 2)
    append_trace(old, {0: RankEvents(ev)})
    raw = bytearray(old.read_bytes())
    struct.pack_into("<I", raw, 8, 1)
    old.write_bytes(bytes(raw))
    _one_line_error(_cli(pario_cmd, "dump", str(old)), "unknown block kind 5")


@pytest.mark.slow
def test_ranks_without_mpi_finalize_keep_their_traces(tmp_path, compile_program, run_under_pario) -> None:
    exe = compile_program("no_finalize.c")
    log = tmp_path / "nf.pario"
    proc = run_under_pario(log, ["mpirun", "-np", "2", str(exe), str(tmp_path), "0"], extra=["--trace"])
    assert proc.stderr.count("exited without MPI_Finalize") == 2, proc.stderr  # mpirun's exit code is its own
    trace = read_log(log).trace  # the per-rank logs, merged
    assert trace is not None and trace.nprocs == 2 and [r.rank for r in trace.ranks] == [0, 1]
    for r in trace.ranks:
        # open, 5 writes at the tracked offsets, close; no FINALIZE, no clock offset
        assert [Kind(k).name for k in r.events["kind"]] == ["IO_META", *["IO_WRITE"] * 5, "IO_META"]
        assert r.events["aux"][1:6].tolist() == [0, 100, 200, 300, 400]
        assert r.events["bytes"][1:6].tolist() == [100] * 5
        assert trace.files[int(r.events["file"][0])] == str(tmp_path / f"nf.{r.rank}")
        assert -1.0 < r.start < 0.0 and r.end == r.t1[-1]  # from the library start, before MPI_Init
