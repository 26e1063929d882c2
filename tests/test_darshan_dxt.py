"""Darshan DXT traces as pario traces (docs/trace.md, "Darshan DXT traces").

1. Every DXT segment of every DXT log under tests/data becomes one I/O event with PyDarshan's
   rank, file, offset, length, start and end, exactly (``DarshanReport(..., read_all=True)``).
2. The trace is drawn (the HTML timeline holds every call), says what it lacks (no MPI calls: no
   replay, the gaps are not computation), and a damaged DXT region is left out, not fatal.
3. The trace rules: TRACE-SERIALISED-IO on the real logs (treddy's 32 ranks write one at a time
   inside their MPI-IO calls; the HDF5 logs' ranks write their files in turn), TRACE-WRITE-OVERLAP
   on a log built through libdarshan-util (no real log here has ranks writing the same bytes).
"""

from __future__ import annotations

import dataclasses
import json
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from darshan_recipes import dxt_segments, job, log, module
from pario.diagnosis import RULES, RuleConfig, diagnose, make_config
from pario.log import darshan_lib, read_log
from pario.log.darshan_reader import check_darshan_log
from pario.log.darshan_writer import write_darshan_log
from pario.report.file_activity import binned_bytes, file_activity
from pario.report.timeline import DXT_GAP_LABEL, timeline, timeline_figure
from pario.trace.activity import io_activity
from pario.trace.format import LAYER_MASK, LAYER_SHIFT, Kind
from pario.trace.metrics import NO_MPI_EVENTS, trace_metrics
from rule_helpers import evidence, silent_until

DATA = Path(__file__).parent / "data"
LOGS = DATA / "darshan-logs"
TREDDY = next(LOGS.glob("treddy_mpi-io-test_*.darshan"))
HDF5_1BYTE = LOGS / "hdf5_diagonal_write_1_byte_dxt.darshan"
HDF5_HALF = LOGS / "hdf5_diagonal_write_half_ranks_dxt.darshan"
NONMPI = LOGS / "nonmpi_dxt_anonymized.darshan"
#: the logs with DXT modules PyDarshan reads (dxt-format-dev-3.5.0-60's it refuses: pario decodes
#: them itself, compared with darshan-dxt-parser below)
DXT_LOGS = [p for p in sorted(DATA.glob("darshan-*/*.darshan"))
            if set(darshan_lib.read_log(str(p), ()).modules) & set(darshan_lib.DXT_MODULES)
            and not check_darshan_log(p).own_dxt]
MODULE_OF_LAYER = {0: "DXT_POSIX", 2: "DXT_MPIIO"}
FIELDS = ("rank", "file", "write", "offset", "length", "start", "end")


def test_the_dxt_logs_are_found() -> None:
    assert {p.name for p in DXT_LOGS} >= {TREDDY.name, HDF5_1BYTE.name, HDF5_HALF.name, NONMPI.name}


def _sorted(rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    order = np.lexsort(tuple(rows[k] for k in reversed(FIELDS)))
    return {k: v[order] for k, v in rows.items()}


def _pydarshan(path: Path, mod: str) -> dict[str, np.ndarray]:
    import darshan

    report = darshan.DarshanReport(str(path), read_all=True)
    cols: dict[str, list] = {k: [] for k in FIELDS}
    if mod in report.records:
        for rec in report.records[mod].to_df():
            for write, key in ((True, "write_segments"), (False, "read_segments")):
                df = rec[key]
                n = len(df)
                if not n:
                    continue
                cols["rank"] += [rec["rank"]] * n
                cols["file"] += [rec["id"]] * n
                cols["write"] += [write] * n
                cols["offset"] += df["offset"].tolist()
                cols["length"] += df["length"].tolist()
                cols["start"] += df["start_time"].tolist()
                cols["end"] += df["end_time"].tolist()
    types = (np.int64, np.uint64, bool, np.int64, np.int64, np.float64, np.float64)
    return _sorted({k: np.array(cols[k], dtype=t) for k, t in zip(FIELDS, types, strict=True)})


def _pario(path: Path, mod: str) -> dict[str, np.ndarray]:
    trace = read_log(path).trace
    cols: dict[str, list[np.ndarray]] = {k: [] for k in FIELDS}
    for rt in (*trace.ranks, *trace.inner) if trace is not None else ():
        ev = rt.events
        layer = (ev["flags"] & LAYER_MASK) >> LAYER_SHIFT
        sel = np.array([MODULE_OF_LAYER.get(int(f), "") == mod for f in layer], dtype=bool)
        cols["rank"].append(np.full(int(sel.sum()), rt.rank, dtype=np.int64))
        cols["file"].append(ev["file"][sel])
        cols["write"].append(ev["kind"][sel] == Kind.IO_WRITE)
        cols["offset"].append(ev["aux"][sel])
        cols["length"].append(ev["bytes"][sel].astype(np.int64))
        cols["start"].append(rt.t0[sel])
        cols["end"].append(rt.t1[sel])
    types = (np.int64, np.uint64, bool, np.int64, np.int64, np.float64, np.float64)
    return _sorted({k: np.concatenate(cols[k]).astype(t) if cols[k] else np.zeros(0, t)
                    for k, t in zip(FIELDS, types, strict=True)})


@pytest.mark.parametrize("path", DXT_LOGS, ids=lambda p: p.name)
@pytest.mark.parametrize("mod", darshan_lib.DXT_MODULES)
def test_every_segment_is_an_event_exactly_as_pydarshan_reads_it(path: Path, mod: str) -> None:
    ours, theirs = _pario(path, mod), _pydarshan(path, mod)
    assert len(ours["rank"]) == len(theirs["rank"])
    for key in FIELDS:
        assert np.array_equal(ours[key], theirs[key]), key  # floats too: bit for bit


def test_treddy_posix_calls_inside_mpiio_calls_are_inner() -> None:
    """32 ranks, each 4 MPI-IO writes and 4 reads of 16 MiB, the POSIX calls they make inside, and
    2 POSIX writes of a shared-memory file outside MPI-IO: the outermost calls are the timeline's."""
    trace = read_log(TREDDY).trace
    assert trace is not None and not trace.has_mpi and trace.nprocs == 32
    assert len(trace.ranks) == 32 and trace.nevents == 256 + 64
    assert sum(len(r.events) for r in trace.inner) == 256
    for rt in trace.inner:
        assert set(((rt.events["flags"] & LAYER_MASK) >> LAYER_SHIFT).tolist()) == {0}
    # every rank's timeline runs from the job's start to its end
    assert {rt.start for rt in trace.ranks} == {0.0}
    assert min(rt.end for rt in trace.ranks) >= read_log(TREDDY).job.runtime
    assert "DXT_POSIX" not in read_log(TREDDY).job.metadata["modules_not_analysed"]
    assert read_log(TREDDY).job.metadata["modules"]["DXT_MPIIO"]["records"] == 32


def test_logs_without_dxt_have_no_trace() -> None:
    assert read_log(LOGS / "imbalanced-io.darshan").trace is None


def test_no_replay_for_a_dxt_trace() -> None:
    trace = read_log(TREDDY).trace
    m = trace_metrics(trace)
    assert m.serialisation_efficiency.value is None and m.serialisation_efficiency.reason == NO_MPI_EVENTS
    out = subprocess.run([sys.executable, "-m", "pario", "replay", str(TREDDY)], capture_output=True,
                         text=True)
    assert out.returncode == 2 and "no replay" in out.stderr and "DXT" in out.stderr


def test_the_timeline_holds_every_call_and_says_what_the_gaps_are() -> None:
    trace = read_log(TREDDY).trace
    tl = timeline(trace)
    assert not tl.binned and tl.gap_label == DXT_GAP_LABEL
    fig = timeline_figure(tl, trace.files)
    bars = {t["meta"]: t for t in fig["data"]}
    assert bars["compute"]["name"] == DXT_GAP_LABEL
    assert len(bars["write"]["x"]) == 128 + 64 and len(bars["read"]["x"]) == 128
    starts = sorted(float(t) for rt in trace.ranks for t, k in zip(rt.t0, rt.events["kind"], strict=True)
                    if k == Kind.IO_READ)
    assert sorted(bars["read"]["base"]) == pytest.approx(starts, abs=1e-9)
    assert any("at offset 536870912" in h for h in bars["write"]["hovertext"])


@pytest.mark.slow
def test_html_report_of_a_dxt_log_has_the_timelines(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    subprocess.run([sys.executable, "-m", "pario", "report", str(TREDDY), "--html", str(out)], check=True,
                   capture_output=True)
    text = out.read_text()
    assert "Darshan&#39;s DXT trace" in text or "Darshan's DXT trace" in text
    plot = r'Plotly\.newPlot\("run0-([a-z-]+)", f\.data, f\.layout, \{[^}]*\}\); \}\)\((\{.*?\})\);</script>'
    figs = {m.group(1): json.loads(m.group(2)) for m in re.finditer(plot, text)}
    assert {"timeline", "file-activity"} <= set(figs)
    n_calls = sum(len(t["x"]) for t in figs["timeline"]["data"] if t["meta"] in ("read", "write"))
    assert n_calls == 320
    heat = figs["file-activity"]["data"][0]
    total_mib = np.sum(np.asarray(heat["z"], dtype=float))
    assert total_mib == pytest.approx(32 * 8 * 16 + 32 * 2 * 40 / 2**20, rel=1e-6)


def test_binned_bytes_prorates_calls_across_bins() -> None:
    edges = np.array([0.0, 1.0, 2.0, 3.0])
    got = binned_bytes(np.array([0.5, 2.0, 2.5]), np.array([1.5, 2.0, 2.5]), np.array([100, 7, 3]), edges)
    assert got.tolist() == pytest.approx([50.0, 50.0, 10.0])  # bins are [a, b): 2.0 is in the third


def test_file_activity_rows_sum_to_the_bytes_of_each_file() -> None:
    trace = read_log(NONMPI).trace
    fa = file_activity(trace, max_files=5)
    total = sum(int(rt.events["bytes"].sum()) for rt in trace.ranks)
    assert (fa.read + fa.written).sum() == pytest.approx(total, rel=1e-9)
    assert len(fa.names) == 6 and fa.names[-1].endswith("other files")


def test_io_activity_of_treddy() -> None:
    """From the first POSIX write of a shared-memory file (56 ms) to the last MPI-IO read (13.64 s),
    some rank is in I/O for 13.5 s, 32 calls at once at the peak and 16.9 on average."""
    a = io_activity(read_log(TREDDY).trace)
    assert a.calls == 320 and a.ranks == 32 and a.peak == 32 and len(a.phases) == 1
    assert a.first == pytest.approx(0.0558, abs=1e-4) and a.last == pytest.approx(13.6417, abs=1e-4)
    assert a.busy == pytest.approx(13.5068, abs=1e-4)
    assert a.mean_concurrency == pytest.approx(16.857, abs=1e-3)


# ---------------------------------------------------------------------------
# damaged DXT regions
# ---------------------------------------------------------------------------

def test_a_dxt_region_with_a_bad_count_is_left_out(tmp_path: Path) -> None:
    """treddy (3.21): its last region, slot 10, is DXT_MPIIO; a record claiming -5 writes makes the
    module unreadable: it is left out and named, the counters and DXT_POSIX are still read.  Read
    without its trace, the log is read as if its DXT regions were sound: they are not looked at."""
    data = bytearray(TREDDY.read_bytes())
    off, length = struct.unpack_from("<QQ", data, 40 + 16 * 10)
    assert off + length == len(data)
    region = bytearray(zlib.decompress(bytes(data[off:])))
    struct.pack_into("<q", region, 88, -5)  # the first record's write_count
    packed = zlib.compress(bytes(region))
    bad = data[:off] + packed
    struct.pack_into("<QQ", bad, 40 + 16 * 10, off, len(packed))
    path = tmp_path / "bad-dxt.darshan"
    path.write_bytes(bytes(bad))
    profile = read_log(path)
    assert profile.job.partial_reasons == (
        f"the DXT_MPIIO region (bytes {off} to {off + len(packed)}) holds a record with -5 writes and "
        "4 reads: not read",)
    assert profile.job.metadata["modules_not_analysed"] == ["DXT_MPIIO"]
    assert profile.trace is not None and profile.trace.nevents == 320 and not profile.trace.inner
    # read without its trace (as a survey reads), the DXT regions are neither inflated nor checked
    bare = read_log(path, trace=False)
    assert bare.trace is None and bare.job.partial_reasons == ()
    assert bare.job.metadata["modules_not_analysed"] == []
    assert len(bare.files["posix"]) == len(profile.files["posix"]) == 96


# ---------------------------------------------------------------------------
# the rules
# ---------------------------------------------------------------------------

def _findings(path: Path, cfg: RuleConfig | None = None) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in diagnose(read_log(path), cfg):
        out.setdefault(f.id, []).append(f)
    return out


def test_serialised_writes_inside_mpiio_calls_treddy() -> None:
    """Treddy's 128 POSIX writes of 16 MiB (8 ms each) never overlap, although the 32 ranks enter
    each MPI-IO write together: each waits for its turn inside MPI_File_write (up to 7.55 s for
    rank 7).  Its reads overlap (32 at once): no finding for them."""
    found = _findings(TREDDY)["TRACE-SERIALISED-IO"]
    assert len(found) == 1
    f = found[0]
    ev = {m.name: m.value for m in f.evidence}
    assert ev["ranks"] == 32 and ev["calls"] == 128 and ev["bytes"] == 128 * 16 * 2**20
    assert ev["shared_share"] == 0.0
    assert ev["busy"] == pytest.approx(1.035, abs=1e-3)
    assert f.statement.startswith("32 ranks write at the file-system level, but one at a time")
    assert "rank 7 spent 7.55 s" in f.statement
    assert f.time_lost == pytest.approx(7.551, abs=1e-3) and f.severity.label == "critical"
    assert f.time_basis.startswith("estimate:")
    assert [s.name for s in f.subjects] == ["/yellow/users/treddy/mpi_io_rough_work/test.out"]
    assert any(r.snippet == "romio_ds_write disable" for r in f.recommendations)


@pytest.mark.parametrize("path", [HDF5_1BYTE, HDF5_HALF], ids=lambda p: p.name)
def test_ranks_writing_their_files_in_turn_hdf5(path: Path) -> None:
    """Each of 10 ranks writes its own HDF5 file, 0.2 s after the previous rank: one at a time, but
    outside any traced call, so no time is estimated."""
    f = _findings(path)["TRACE-SERIALISED-IO"][0]
    assert f.severity.label == "info" and f.time_lost is None
    assert f.time_basis.startswith("not estimated:")
    assert {m.name: m.value for m in f.evidence}["ranks"] == 10
    assert f.subjects_total == 10 and len(f.subjects) == 5  # one file each (top_subjects listed)


def test_no_trace_finding_for_one_rank() -> None:
    """The non-MPI log's 9830 writes and 7822 reads are one rank's: taking turns needs 4 ranks (a
    rank alone always "takes turns"), writing the same bytes two."""
    profile = read_log(NONMPI)
    turns = silent_until("TRACE-SERIALISED-IO", profile, trace_serial_min_ranks=1)
    assert [(evidence(f)["ranks"], evidence(f)["calls"]) for f in turns] == [(1, 9830), (1, 7822)]
    assert "TRACE-WRITE-OVERLAP" in RULES and "TRACE-WRITE-OVERLAP" not in {f.id for f in diagnose(profile)}


@pytest.mark.parametrize("path", DXT_LOGS, ids=lambda p: p.name)
def test_no_real_log_has_ranks_writing_the_same_bytes(path: Path) -> None:
    """With no floor on the bytes, the rule names each file that several ranks write: treddy's
    shared file (its 32 ranks), with no byte written twice; the other logs' ranks write their own."""
    assert "TRACE-WRITE-OVERLAP" in RULES and "TRACE-WRITE-OVERLAP" not in _findings(path)
    every = _findings(path, make_config({"trace_overlap_min_bytes": 0})).get("TRACE-WRITE-OVERLAP", [])
    assert [evidence(f)["overlap_bytes"] for f in every] == ([0] if path == TREDDY else [])


# a checkpoint: 8 ranks write their 1 MiB block of a shared file after a 4 KiB header
OUT = "/scratch/ckpt/state.0001.dat"
OUT_ID = 0x6B1D3E5F7A9C0B01
MIB = 1 << 20


def _checkpoint_log(tmp_path: Path, *, every_rank_writes_header: bool) -> Path:
    nprocs = 8
    rows = []
    for r in range(nprocs):
        t = 1.0 + 0.002 * r
        if every_rank_writes_header or r == 0:
            rows.append((r, OUT_ID, True, 0, 4096, t, t + 0.0004))
        rows.append((r, OUT_ID, True, 4096 + r * MIB, MIB, t + 0.001, t + 0.011))
    posix = module("POSIX", [(OUT_ID, r, {
        "POSIX_OPENS": 1, "POSIX_WRITES": sum(1 for x in rows if x[0] == r),
        "POSIX_BYTES_WRITTEN": sum(x[4] for x in rows if x[0] == r),
        "POSIX_MAX_BYTE_WRITTEN": max(x[3] + x[4] for x in rows if x[0] == r) - 1,
        "POSIX_F_WRITE_TIME": sum(x[6] - x[5] for x in rows if x[0] == r),
        "POSIX_F_WRITE_START_TIMESTAMP": min(x[5] for x in rows if x[0] == r),
        "POSIX_F_WRITE_END_TIMESTAMP": max(x[6] for x in rows if x[0] == r)}) for r in range(nprocs)])
    content = dataclasses.replace(log(job(nprocs, 1_700_000_000.0, 1_700_000_002.0), "./ckpt", {OUT_ID: OUT},
                                      [posix]), dxt={"DXT_POSIX": dxt_segments(rows)})
    path = tmp_path / ("ckpt-header-by-all.darshan" if every_rank_writes_header else "ckpt.darshan")
    write_darshan_log(content, path)
    return path


def test_written_dxt_reads_back_as_pydarshan_reads_it(tmp_path: Path) -> None:
    path = _checkpoint_log(tmp_path, every_rank_writes_header=True)
    ours, theirs = _pario(path, "DXT_POSIX"), _pydarshan(path, "DXT_POSIX")
    for key in FIELDS:
        assert np.array_equal(ours[key], theirs[key]), key
    assert len(ours["rank"]) == 16


def test_ranks_writing_the_same_header_bytes(tmp_path: Path) -> None:
    f = _findings(_checkpoint_log(tmp_path, every_rank_writes_header=True))["TRACE-WRITE-OVERLAP"][0]
    ev = {m.name: m.value for m in f.evidence}
    assert ev["overlap_bytes"] == 4096 and ev["files"] == 1
    assert ev["top_ranks"] == "ranks 0, 1, 2, 3, 4, 5, 6, 7"
    sub = {m.name: m.value for m in f.subjects[0].metrics}
    assert sub == {"overlap_bytes": 4096, "written_bytes": 4096 + 8 * MIB, "writers": 8}
    assert f.severity.label == "warning" and f.time_lost is None
    assert f.statement.startswith(f"A file has bytes written by more than one rank: {OUT} has 4 KiB")


def test_one_rank_writing_the_header_is_silent(tmp_path: Path) -> None:
    profile = read_log(_checkpoint_log(tmp_path, every_rank_writes_header=False))
    (f,) = silent_until("TRACE-WRITE-OVERLAP", profile, trace_overlap_min_bytes=0)
    sub = {m.name: m.value for m in f.subjects[0].metrics}
    assert sub == {"overlap_bytes": 0, "written_bytes": 4096 + 8 * MIB, "writers": 8}
    # the ranks' writes overlap in time: two or more in flight for most of the time one is
    (f,) = silent_until("TRACE-SERIALISED-IO", profile, trace_serial_max_shared=1.0)
    assert evidence(f)["ranks"] == 8 and evidence(f)["shared_share"] > RuleConfig().trace_serial_max_shared


@pytest.mark.slow
def test_dxt_report_draws_in_a_browser(tmp_path: Path, browser, pario_cmd) -> None:
    """The page of a DXT log loads without a console error; the timeline has a row per rank and the
    heat map of I/O per file draws."""
    from browser import load

    page_file = tmp_path / "dxt.html"
    done = subprocess.run([*pario_cmd, "report", str(TREDDY), "--html", str(page_file), "-q"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    probe = ("[document.getElementById('run0-timeline')._fullLayout.yaxis.tickvals.length, "
             "document.getElementById('run0-file-activity').querySelectorAll('.hm, image').length > 0]")
    page = load(browser, page_file, probe)
    assert page.errors == []
    assert page.figures >= 3 and page.drawn == page.figures
    assert page.probe == [32, True]
    assert "no read or write traced" in page.text and "I/O over time" in page.text


def test_dxt_segments_with_the_thread_id_equal_darshan_dxt_parser() -> None:
    """Darshan's development line writes DXT_POSIX version 2 and DXT_MPIIO version 3, whose segments
    are 40 bytes (the thread id added).  Taken as 32 bytes they read as damaged; read at their
    size, every segment equals darshan-dxt-parser's own output (offsets, lengths, and times to
    its 4 decimals), and the log is complete."""
    from pario.diagnosis import diagnose

    log = LOGS / "dxt-format-dev-3.5.0-60.darshan"
    expected = []
    names = {}
    for line in (LOGS / "dxt-format-dev-3.5.0-60.dxt-parser.txt").read_text().splitlines():
        if line.startswith("# DXT, file_id:"):
            fid, name = line.split("file_id: ", 1)[1].split(", file_name: ")
            names[int(fid)] = name
        elif line.startswith((" X_POSIX", " X_MPIIO")):
            mod, rank, kind, _, offset, length, start, end, _thread = line.split()
            expected.append((mod, int(rank), kind, int(offset), int(length), start, end))
    header = check_darshan_log(log)
    assert not header.dropped_modules
    got = []
    for which, segs in header.own_dxt.values():
        mod = "X_POSIX" if which == "DXT_POSIX" else "X_MPIIO"
        first = 0
        for rank, nw, nr in zip(segs.ranks, segs.write_counts, segs.read_counts, strict=True):
            for i, s in enumerate(segs.segments[first:first + nw + nr]):
                got.append((mod, int(rank), "write" if i < nw else "read", int(s["offset"]),
                            int(s["length"]), f"{s['start']:.4f}", f"{s['end']:.4f}"))
            first += nw + nr
    assert len(expected) == 41 and got == expected  # 25 POSIX segments, 16 MPI-IO
    assert header.own_dxt_names == names
    profile = read_log(log)
    assert profile.job.complete and "DATA-INCOMPLETE" not in {f.id for f in diagnose(profile)}
    # outermost calls: 16 MPI-IO (the POSIX calls inside them apart), 8 POSIX to the ranks' own files,
    # 1 to Open MPI's shared-memory file
    assert profile.trace is not None and sum(len(r.events) for r in profile.trace.ranks) == 25
