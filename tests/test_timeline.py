"""The report's per-rank timeline (pario.report.timeline) on hand-built traces: the segments worked
out by hand, binning that keeps every rank's time per class, the figure and its escaped hover text."""

from __future__ import annotations

import numpy as np
import pytest

from pario.report.timeline import (
    COLLECTIVE,
    COMPUTE,
    META,
    MPI_OTHER,
    P2P,
    READ,
    WRITE,
    Segments,
    call_label,
    hover_texts,
    merge_short,
    rank_segments,
    timeline,
    timeline_figure,
    trace_segments,
)
from pario.trace.format import EVENT_DTYPE, FLAG_COLLECTIVE, FLAG_CONT, FLAG_NONBLOCKING, LAYER_SHIFT, Kind
from pario.trace.model import RankTrace, Trace

MPIIO = 2 << LAYER_SHIFT
STDIO = 1 << LAYER_SHIFT
HOSTILE = '<img src=x onerror="window.pwned=1">.dat'


def rank_trace(rank: int, start: float, end: float, events: list[tuple]) -> RankTrace:
    """events: (t0, t1, kind, flags, bytes, aux, file) in seconds on the job's time base."""
    ev = np.zeros(len(events), dtype=EVENT_DTYPE)
    for i, (t0, t1, kind, flags, nbytes, aux, file) in enumerate(events):
        ev[i] = (int(t0 * 1e9), int(t1 * 1e9), kind, flags, 0, -1, -1, nbytes, aux, file)
    t0 = np.array([e[0] for e in events], dtype=np.float64)
    t1 = np.array([e[1] for e in events], dtype=np.float64)
    return RankTrace(rank=rank, events=ev, t0=t0, t1=t1, comms=(np.arange(2),), start=start, end=end)


def two_ranks() -> Trace:
    r0 = rank_trace(0, 0.0, 9.5, [
        (1.0, 2.0, Kind.IO_WRITE, MPIIO | FLAG_COLLECTIVE, 4096, 0, 7),
        (3.0, 3.5, Kind.SEND, 0, 100, 0, 0),  # MPI_Sendrecv: one call, two parts
        (3.0, 3.5, Kind.RECV, FLAG_CONT, 200, 0, 0),
        (3.5, 4.0, Kind.ALLREDUCE, 0, 8, 0, 0),  # right after: no computation between
        (6.0, 6.5, Kind.ALLREDUCE, FLAG_NONBLOCKING, 8, 1, 0),
        (7.0, 7.25, Kind.WAIT, 0, 0, 0, 0),  # completes the nonblocking allreduce: a collective
        (7.0, 7.25, Kind.COMPLETE, FLAG_CONT, 0, 1, 0),
        (8.0, 8.125, Kind.ISEND, FLAG_NONBLOCKING, 64, 2, 0),
        (8.5, 8.75, Kind.WAIT, 0, 0, 0, 0),  # completes the isend: point-to-point
        (8.5, 8.75, Kind.COMPLETE, FLAG_CONT, 0, 2, 0),
        (9.0, 9.25, Kind.MPI_OTHER, 0, 0, 0, 0),
        (9.5, 9.5, Kind.FINALIZE, 0, 0, 0, 0),
    ])
    r1 = rank_trace(1, 0.125, 9.0, [
        (0.125, 1.0, Kind.IO_META, 0, 0, 0, 8),  # at the origin: no computation before it
        (2.0, 3.0, Kind.IO_READ, STDIO, 10, 0, 8),
        (3.0, 3.5, Kind.RECV, 0, 100, 0, 0),
    ])  # no FINALIZE: its end (9.0) is given; computation runs until it
    return Trace(nprocs=2, ranks=(r0, r1), files={7: HOSTILE, 8: "/data/in.txt"})


# (rank, start, end, class, kind, bytes, file)
EXPECTED = [
    (0, 0.0, 1.0, COMPUTE, 0, 0, 0),
    (0, 1.0, 2.0, WRITE, Kind.IO_WRITE, 4096, 7),
    (0, 2.0, 3.0, COMPUTE, 0, 0, 0),
    (0, 3.0, 3.5, P2P, Kind.SEND, 300, 0),
    (0, 3.5, 4.0, COLLECTIVE, Kind.ALLREDUCE, 8, 0),
    (0, 4.0, 6.0, COMPUTE, 0, 0, 0),
    (0, 6.0, 6.5, COLLECTIVE, Kind.ALLREDUCE, 8, 0),
    (0, 6.5, 7.0, COMPUTE, 0, 0, 0),
    (0, 7.0, 7.25, COLLECTIVE, Kind.WAIT, 0, 0),
    (0, 7.25, 8.0, COMPUTE, 0, 0, 0),
    (0, 8.0, 8.125, P2P, Kind.ISEND, 64, 0),
    (0, 8.125, 8.5, COMPUTE, 0, 0, 0),
    (0, 8.5, 8.75, P2P, Kind.WAIT, 0, 0),
    (0, 8.75, 9.0, COMPUTE, 0, 0, 0),
    (0, 9.0, 9.25, MPI_OTHER, Kind.MPI_OTHER, 0, 0),
    (0, 9.25, 9.5, COMPUTE, 0, 0, 0),
    (1, 0.125, 1.0, META, Kind.IO_META, 0, 8),
    (1, 1.0, 2.0, COMPUTE, 0, 0, 0),
    (1, 2.0, 3.0, READ, Kind.IO_READ, 10, 8),
    (1, 3.0, 3.5, P2P, Kind.RECV, 100, 0),
    (1, 3.5, 9.0, COMPUTE, 0, 0, 0),
]


def as_rows(segs: Segments) -> list[tuple]:
    return [(int(r), float(s), float(e), int(c), int(k), int(b), int(f)) for r, s, e, c, k, b, f in
            zip(segs.rank, segs.start, segs.end, segs.cls, segs.kind, segs.nbytes, segs.file, strict=True)]


def test_segments_of_a_hand_built_trace() -> None:
    segs = trace_segments(two_ranks())
    assert as_rows(segs) == EXPECTED
    calls = segs.calls.tolist()
    assert calls == [0 if row[3] == COMPUTE else 1 for row in EXPECTED]
    assert segs.merged.tolist() == [1] * len(EXPECTED)


def test_a_rank_without_events_is_all_computation() -> None:
    segs = rank_segments(rank_trace(3, 0.5, 2.0, []))
    assert as_rows(segs) == [(3, 0.5, 2.0, COMPUTE, 0, 0, 0)]


def test_merging_short_segments_by_hand() -> None:
    # rank 0: four short segments in the bin [0, 1), a long one, a short one alone in its bin
    trace = Trace(nprocs=1, ranks=(rank_trace(0, 0.0, 3.125, [
        (0.25, 0.5, Kind.IO_WRITE, 0, 10, 0, 1),
        (0.625, 0.875, Kind.IO_WRITE, 0, 20, 0, 1),
        (3.0, 3.125, Kind.IO_READ, 0, 5, 0, 1),
    ]),))
    segs = trace_segments(trace)
    assert [(s, e, c) for _, s, e, c, *_ in as_rows(segs)] == [
        (0.0, 0.25, COMPUTE), (0.25, 0.5, WRITE), (0.5, 0.625, COMPUTE), (0.625, 0.875, WRITE),
        (0.875, 3.0, COMPUTE), (3.0, 3.125, READ)]
    merged = merge_short(segs, 1.0, 0.0)
    # computation 0.25 + 0.125 = 0.375 then the writes 0.5, end to end from 0; the rest as it was
    assert [(s, e, c) for _, s, e, c, *_ in as_rows(merged)] == [
        (0.0, 0.375, COMPUTE), (0.375, 0.875, WRITE), (0.875, 3.0, COMPUTE), (3.0, 3.125, READ)]
    assert merged.merged.tolist() == [2, 2, 1, 1]
    assert merged.calls.tolist() == [0, 2, 0, 1]
    assert merged.nbytes.tolist() == [0, 30, 0, 5]
    assert merged.kind.tolist() == [0, 0, 0, Kind.IO_READ]


def busy_trace(nranks: int, ncalls: int, seed: int = 1) -> Trace:
    rng = np.random.default_rng(seed)
    kinds = [Kind.IO_READ, Kind.IO_WRITE, Kind.IO_META, Kind.SEND, Kind.RECV, Kind.BARRIER, Kind.MPI_OTHER]
    ranks = []
    for r in range(nranks):
        edges = np.sort(rng.uniform(0.0, 10.0, 2 * ncalls))
        events = [(float(edges[2 * i]), float(edges[2 * i + 1]), kinds[int(rng.integers(len(kinds)))], 0,
                   int(rng.integers(1, 1000)), 0, 0) for i in range(ncalls)]
        # one long computation-free call in the middle of the run
        events = [e for e in events if not 4.0 <= e[0] <= 6.0 and not 4.0 <= e[1] <= 6.0]
        events.append((4.0, 6.0, Kind.IO_WRITE, 0, 1 << 20, 0, 9))
        events.sort(key=lambda e: e[0])
        ranks.append(rank_trace(r, 0.0, 10.0, events))
    return Trace(nprocs=nranks, ranks=tuple(ranks), files={9: "/data/out"})


def test_binning_keeps_every_ranks_time_per_class() -> None:
    trace = busy_trace(3, 3000)
    full = trace_segments(trace)
    tl = timeline(trace, budget=800)
    segs = tl.segments
    assert tl.binned and tl.recorded == len(full) > 800 >= len(segs)
    want, got = full.totals(), segs.totals()
    assert set(got) == set(want)
    for key, seconds in want.items():
        assert got[key] == pytest.approx(seconds, rel=1e-9, abs=1e-9)
    # calls and bytes are all there too
    assert int(segs.calls.sum()) == int(full.calls.sum())
    assert int(segs.nbytes.sum()) == int(full.nbytes.sum())
    assert int(segs.merged.sum()) == len(full)
    for r in range(3):
        mine = segs.take(np.flatnonzero(segs.rank == r))
        assert np.all(np.diff(mine.start) >= 0)
        assert np.all(mine.start[1:] >= mine.end[:-1] - 1e-9)  # laid end to end, never overlapping
        assert mine.start[0] == 0.0 and mine.end[-1] == pytest.approx(10.0)
        # the long write is kept as it was recorded
        long = np.flatnonzero((mine.kind == Kind.IO_WRITE) & (mine.start == 4.0))
        assert len(long) == 1 and mine.end[long[0]] == 6.0 and mine.file[long[0]] == 9


def test_no_binning_under_the_budget() -> None:
    tl = timeline(two_ranks())
    assert not tl.binned and tl.recorded == len(tl.segments) == len(EXPECTED)
    assert (tl.start, tl.end, tl.ranks) == (0.0, 9.5, (0, 1))


def test_figure_rows_classes_and_escaped_hover() -> None:
    trace = two_ranks()
    tl = timeline(trace)
    fig = timeline_figure(tl, trace.files)
    names = [t["meta"] for t in fig["data"]]
    assert names == ["compute", "collective", "p2p", "mpi_other", "read", "write", "meta"]
    assert fig["layout"]["yaxis"]["ticktext"] == ["rank 0", "rank 1"]
    assert fig["layout"]["barmode"] == "overlay"
    write = fig["data"][names.index("write")]
    assert (write["y"], write["base"], write["x"]) == ([0], [1.0], [1.0])
    text = write["hovertext"][0]
    assert "MPI-IO write" in text and "4.0 KiB" in text and "1.000 s" in text
    assert "&lt;img src=x onerror=\"window.pwned=1\"&gt;.dat" in text and "<img" not in text
    assert sum(len(t["y"]) for t in fig["data"]) == len(EXPECTED)
    # a merged segment says so
    merged = merge_short(trace_segments(trace), 100.0, 0.0)
    assert "binned" in hover_texts(merged, trace.files)[0]


def test_a_big_trace_is_binned_and_the_page_says_so() -> None:
    from pario.diagnosis import analyze
    from pario.report.html import render_html
    from test_report import synthetic

    trace = busy_trace(4, 4000)
    assert len(trace_segments(trace)) > 20_000  # the default budget
    page = render_html([analyze(synthetic())], plotly_js="/* plotly */", traces=[trace])
    assert "Binned: " in page and "segments drawn" in page
    assert len(page.encode()) < 4_000_000
    small = render_html([analyze(synthetic())], plotly_js="/* plotly */", traces=[two_ranks()])
    assert "Timeline" in small and "Binned" not in small
    assert "Timeline" not in render_html([analyze(synthetic())], plotly_js="/* plotly */")


def test_library_calls_are_labelled_by_their_layer() -> None:
    """The trace's layer field (flags bits 8-10) names the I/O libraries too."""
    assert call_label(Kind.IO_WRITE, 4 << LAYER_SHIFT) == "HDF5 dataset write"
    assert call_label(Kind.IO_META, 5 << LAYER_SHIFT) == "PnetCDF file metadata"
    assert call_label(Kind.IO_READ, 2 << LAYER_SHIFT) == "MPI-IO read"
