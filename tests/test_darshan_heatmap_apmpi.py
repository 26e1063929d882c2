"""Darshan's APMPI (MPI time per rank) and HEATMAP (bytes per time bin) modules (issue "Right on
real Darshan logs").

- mpi-io-test-apmpi-apxc.darshan (4 ranks, a Cray XC, Darshan 3.3 with APMPI and APXC): the rank
  table's MPI columns are APMPI's counters, and the POP metrics equal a hand computation from the
  APMPI records PyDarshan reads (what darshan-parser prints) with docs/metrics.md's formulas.
- mpi-io-test-x86_64-3.5.0 and the two shane_ior logs carry HEATMAP records: the model's heat map
  holds exactly PyDarshan's bins; the report shows them (a sparkline, a figure, a JSON field).
- The activity rules (TIME-IO-BURSTS, LOAD-IO-STAGGERED) on heat maps built to show the problem,
  and silent without it (the real logs have one 0.1 s bin: nothing to say about time).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from darshan_logs import LOGS
from pario.analysis.activity import activity, sparkline
from pario.diagnosis import RuleConfig, analyze, diagnose, facts_of
from pario.diagnosis.activity import io_staggered
from pario.log import darshan_lib, read_log
from pario.log.apmpi import op_class
from pario.model import Heatmap, HeatmapLayer, Job, Profile, add_derived_rank_columns
from pario.report.data import run_dict
from pario.report.html import activity_figure
from pario.report.terminal import run_report
from pario.table import Table
from test_darshan_time_and_cuts import pydarshan_runtime

APMPI_LOG = LOGS / "mpi-io-test-apmpi-apxc.darshan"
HEATMAP_LOGS = [LOGS / "mpi-io-test-x86_64-3.5.0.darshan", *sorted(LOGS.glob("shane_ior-*.darshan"))]

#: PyDarshan's APMPI records, read in a fresh interpreter: libdarshan-util's APMPI reader tells
#: the header record from the others by a static flag set once per process, so a second APMPI
#: read in one process (PyDarshan's read_all does one) comes back garbled.
_PYDARSHAN_APMPI = """
import json, sys
import darshan
r = darshan.DarshanReport(sys.argv[1], read_all=False)
r.mod_read_all_apmpi_records("APMPI")
out = []
for rec in r.records["APMPI"]._records:
    if "all_counters" in rec:
        counters = {k: float(v) for k, v in rec["all_counters"].items()}
        out.append({"rank": int(rec["rank"]), "counters": counters})
    else:
        out.append({"header": True, "sync_flag": int(rec["sync_flag"]), "magic": int(rec["magic"])})
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def apmpi_records() -> list[dict]:
    out = subprocess.run([sys.executable, "-c", _PYDARSHAN_APMPI, str(APMPI_LOG)], capture_output=True,
                         text=True, check=True)
    recs = json.loads(out.stdout)
    assert recs[0].get("header") and recs[0]["magic"] == darshan_lib.APMPI_MAGIC
    return sorted(recs[1:], key=lambda r: r["rank"])


@pytest.mark.slow
def test_apmpi_fills_the_rank_table_with_darshan_parser_s_counters(apmpi_records: list[dict]) -> None:
    profile = read_log(APMPI_LOG)
    assert profile.job.has_mpi_time
    assert [r["rank"] for r in apmpi_records] == [0, 1, 2, 3]
    for rank, rec in enumerate(apmpi_records):
        c = rec["counters"]
        want = {"coll": 0.0, "p2p": 0.0, "other": 0.0}
        calls = dict.fromkeys(want, 0.0)
        for name, value in c.items():
            op = name[len("MPI_"):]
            for suffix, into in (("_TOTAL_TIME", want), ("_TOTAL_SYNC_TIME", want), ("_CALL_COUNT", calls)):
                if op.endswith(suffix) and not op.startswith("TOTAL_COMM"):
                    into[op_class(op[: -len(suffix)])] += value
        for cls in want:
            assert profile.ranks[f"mpi_{cls}"][rank] == pytest.approx(want[cls], rel=1e-12, abs=1e-15)
            assert profile.ranks[f"mpi_{cls}_calls"][rank] == calls[cls]
        # APMPI's own total per rank: every call type's time plus the sync time
        assert profile.ranks["mpi"][rank] == pytest.approx(c["MPI_TOTAL_COMM_TIME"], rel=1e-12)
        coll_bytes = c["MPI_BCAST_TOTAL_BYTES"] + c["MPI_ALLREDUCE_TOTAL_BYTES"]
        assert profile.ranks["mpi_coll_bytes"][rank] == coll_bytes
    # this run: 5 barriers, 16 broadcasts, 14 allreductions per rank, sync mode off
    assert list(profile.ranks["mpi_coll_calls"]) == [35.0] * 4
    assert list(profile.ranks["mpi_p2p"]) == [0.0] * 4
    source = str(profile.job.metadata["mpi_time_source"])
    assert "MPI_Barrier, MPI_Bcast, MPI_Allreduce" in source and "sync mode was off" in source
    assert "no MPI_File_* call" in source


def _spread(total: float, fast: int, v_fast: float, slow: int, v_slow: float, n: int) -> np.ndarray:
    """docs/metrics.md, "Spreading a shared record over its ranks": the slowest and fastest rank get
    their own time, every other rank an equal share of the rest."""
    out = np.full(n, (total - v_fast - v_slow) / (n - 2))
    out[fast], out[slow] = v_fast, v_slow
    return out


def test_pop_metrics_equal_a_hand_computation_from_apmpi(apmpi_records: list[dict]) -> None:
    """PE, LB, CommE, IOE, LB', CommE' of the APMPI log, by the formulas of docs/metrics.md from
    PyDarshan's records: M_p = MPI_TOTAL_COMM_TIME, IO_p from the MPI-IO and STDIO records (the
    outermost layer of their files; the POSIX record is the MPI-IO file's, beneath it), T the
    run time."""
    import darshan

    n = 4
    T = pydarshan_runtime(APMPI_LOG)
    M = np.array([r["counters"]["MPI_TOTAL_COMM_TIME"] for r in apmpi_records])
    report = darshan.DarshanReport(str(APMPI_LOG), read_all=False)
    io = np.zeros(n)
    for mod, prefix in (("MPI-IO", "MPIIO"), ("STDIO", "STDIO")):
        report.mod_read_all_records(mod)
        df = report.records[mod].to_df()
        c, f = df["counters"].iloc[0], df["fcounters"].iloc[0]
        assert c["rank"] == -1  # shared by all ranks
        total = sum(f[f"{prefix}_F_{k}_TIME"] for k in ("READ", "WRITE", "META"))
        io += _spread(total, int(c[f"{prefix}_FASTEST_RANK"]), f[f"{prefix}_F_FASTEST_RANK_TIME"],
                      int(c[f"{prefix}_SLOWEST_RANK"]), f[f"{prefix}_F_SLOWEST_RANK_TIME"], n)
    U = T - io - M
    assert (U > 0).all()  # no rank's computation is clipped at 0
    hand = {
        "parallel_efficiency": U.mean() / T,
        "load_balance": U.mean() / U.max(),
        "communication_efficiency": U.max() / T,
        "io_efficiency": U.sum() / (U + io).sum(),
        "load_balance_io": (U + io).mean() / (U + io).max(),
        "communication_efficiency_io": (U + io).max() / T,
    }
    pop = analyze(read_log(APMPI_LOG), diagnosis=False).pop
    got = {key: v for key, _, v, _ in pop.rows() if key in hand}
    for key, value in hand.items():
        assert got[key].value == pytest.approx(value, rel=1e-12), key
    # max(U) takes the estimated per-rank I/O of the shared file; U + IO = T - M does not
    assert got["load_balance"].approximate and got["communication_efficiency"].approximate
    assert not any(got[k].approximate for k in ("parallel_efficiency", "io_efficiency", "load_balance_io",
                                                "communication_efficiency_io"))
    # the two decompositions of PE
    pe = hand["parallel_efficiency"]
    assert hand["load_balance"] * hand["communication_efficiency"] == pytest.approx(pe)
    assert hand["io_efficiency"] * hand["load_balance_io"] * hand["communication_efficiency_io"] == \
        pytest.approx(pe)
    assert pop.mpi_note.startswith("MPI time M_p from Darshan's APMPI module")
    # the numbers docs/metrics.md quotes
    assert [round(hand[k], 4) for k in hand] == [0.1645, 0.651, 0.2526, 0.2404, 0.6863, 0.9968]


def test_apmpi_reads_alike_twice_in_one_process() -> None:
    """The library's own APMPI reader garbles every APMPI log after the first one read in a process
    (a static flag); pario reads the module's bytes itself."""
    first, second = (darshan_lib.read_log(str(APMPI_LOG)).apmpi for _ in range(2))
    assert first is not None and second is not None
    assert list(first.ranks) == list(second.ranks) == [0, 1, 2, 3]
    assert np.array_equal(first.totals, second.totals)
    assert first.node_names == ("nid00783",) * 4


def test_apmpi_is_analysed_and_apxc_is_named() -> None:
    profile = read_log(APMPI_LOG)
    assert profile.job.metadata["modules_not_analysed"] == ["APXC"]
    assert profile.job.metadata["modules"]["APMPI"]["records"] == 4
    run = analyze(profile)
    assert run.shares.compute.available and run.mpi.available
    assert [f.id for f in run.findings if f.id == "DATA-MODULES-NOT-ANALYSED"]
    doc = run_dict(run)
    assert doc["pop"]["mpi_note"].startswith("MPI time M_p from Darshan's APMPI module")
    assert any(n.startswith("MPI time M_p from Darshan's APMPI module") for n in doc["notes"])
    console = Console(record=True, width=100)
    console.print(run_report(run))
    text = console.export_text()
    assert "MPI time M_p from Darshan's APMPI module" in text and "Compute + MPI" not in text


def pydarshan_heatmaps(path: Path) -> tuple[dict[str, object], float]:
    import darshan

    report = darshan.DarshanReport(str(path), read_all=False)
    report.read_all_heatmap_records()
    return report.heatmaps, float(report.metadata["job"]["run_time"])


@pytest.mark.parametrize("path", HEATMAP_LOGS, ids=lambda p: p.name[:24])
def test_heatmap_bins_are_pydarshan_s(path: Path) -> None:
    expected, _ = pydarshan_heatmaps(path)
    heatmap = read_log(path).heatmap
    assert heatmap is not None
    assert set(heatmap.layers) == set(expected)
    for module, hm in expected.items():
        layer = heatmap.layers[module]
        assert heatmap.bin_width == hm._bin_width_seconds and heatmap.nbins == hm._nbins
        assert list(layer.ranks) == sorted(hm._ranks)
        for row, rank in enumerate(layer.ranks.tolist()):
            assert np.array_equal(layer.read[row], hm._data["read"][rank])
            assert np.array_equal(layer.write[row], hm._data["write"][rank])


def test_heatmap_values_of_the_3_5_0_log() -> None:
    """mpi-io-test 3.5.0: one 0.1 s bin; every rank writes and reads 16 MiB through MPI-IO (and the
    POSIX calls beneath), rank 0 writes 322 B to stdout."""
    path = HEATMAP_LOGS[0]
    profile = read_log(path)
    h = profile.heatmap
    assert h is not None and (h.bin_width, h.nbins) == (0.1, 1)
    assert list(h.layers) == ["POSIX", "MPIIO", "STDIO"]
    for module in ("POSIX", "MPIIO"):
        assert h.layers[module].write.tolist() == [[16 << 20]] * 4 == h.layers[module].read.tolist()
    assert h.layers["STDIO"].ranks.tolist() == [0] and h.layers["STDIO"].write.tolist() == [[322]]
    assert profile.job.metadata["modules"]["HEATMAP"]["records"] == 9
    run = analyze(profile)
    a = run.activity
    assert a is not None and a.layers == ("POSIX", "STDIO")  # MPI-IO's bytes are POSIX's
    assert a.write.tolist() == [(64 << 20) + 322] and a.read.tolist() == [64 << 20]
    assert a.ranks_active.tolist() == [4]
    doc = run_dict(run)["activity"]
    assert doc == {"bin_width_s": 0.1, "nbins": 1, "layers": ["POSIX", "STDIO"],
                   "read_bytes": [64 << 20], "write_bytes": [(64 << 20) + 322], "ranks_active": [4],
                   "io_ranks": 4, "nprocs": 4}
    json.dumps(doc, allow_nan=False)
    console = Console(record=True, width=100)
    console.print(run_report(run))
    line = next(ln for ln in console.export_text().splitlines() if ln.startswith("Over time"))
    assert "▕█▏" in line and "1 bin of 100 ms" in line and "(POSIX, STDIO)" in line
    fig = activity_figure(run)
    assert fig is not None
    heat = next(t for t in fig["data"] if t["type"] == "heatmap")
    assert heat["z"] == [[float((32 << 20) + 322)], [float(32 << 20)], [float(32 << 20)], [float(32 << 20)]]


def test_a_log_without_heatmap_has_no_activity() -> None:
    profile = read_log(APMPI_LOG)
    assert profile.heatmap is None
    run = analyze(profile, diagnosis=False)
    assert run.activity is None and run_dict(run)["activity"] is None and activity_figure(run) is None


def test_daos_bytes_beneath_dfs_count_once() -> None:
    """A run through DFS: the DAOS module's heat map holds DFS's bytes again (a DFS file's I/O is DAOS
    array I/O); the volume counts them once.  Without DFS, DAOS's bytes are the volume's."""
    ranks = np.arange(2, dtype=np.int64)
    dfs = np.array([[4 << 20, 0], [0, 8 << 20]], dtype=np.int64)
    daos = dfs + 96  # and a superblock read of 96 bytes per bin
    none = np.zeros_like(dfs)
    both = activity(Heatmap(0.1, 2, {"DFS": HeatmapLayer(ranks, none, dfs),
                                     "DAOS": HeatmapLayer(ranks, none, daos)}), 2)
    assert both is not None and both.layers == ("DFS",)
    assert both.write.tolist() == [4 << 20, 8 << 20] and both.ranks_active.tolist() == [2, 2]
    alone = activity(Heatmap(0.1, 2, {"STDIO": HeatmapLayer(ranks, none, none + 10),
                                      "DAOS": HeatmapLayer(ranks, none, daos)}), 2)
    assert alone is not None and alone.layers == ("STDIO", "DAOS")
    assert alone.write.tolist() == [(4 << 20) + 96 * 2 + 20, (8 << 20) + 96 * 2 + 20]


def test_sparkline_levels() -> None:
    assert sparkline(np.array([0, 1, 4, 8])) == " ▁▄█"
    assert sparkline(np.zeros(3)) == "   "


# --------------------------------------------------------------------------
# the activity rules, on heat maps built to show (or not) the problem
# --------------------------------------------------------------------------

def built(bins: np.ndarray, runtime: float, io_time: float, *, mpi: float | None = None) -> Profile:
    """A Darshan-like profile of ``len(bins)`` ranks, each writing its own file, whose heat map
    holds ``bins`` (bytes written per rank and bin, POSIX) over ``runtime`` seconds."""
    n, nbins = bins.shape
    cols = {"wall": np.full(n, runtime), "posix_read": np.zeros(n), "posix_write": np.full(n, io_time),
            "posix_meta": np.zeros(n)}
    if mpi is not None:
        cols.update(mpi_coll=np.full(n, mpi), mpi_p2p=np.zeros(n), mpi_other=np.zeros(n))
    job = Job(source="darshan", path="built.darshan", exe="app", nprocs=n, start_time=0.0, end_time=runtime,
              runtime=runtime, has_mpi_time=mpi is not None, has_rank_times=True)
    files = {"posix": Table({
        "id": np.arange(1, n + 1, dtype=np.uint64), "rank": np.arange(n, dtype=np.int64),
        "name": np.array([f"/scratch/out.{r}" for r in range(n)], dtype=object),
        "bytes_written": bins.sum(axis=1), "writes": np.full(n, 16, dtype=np.int64),
        "write_time": np.full(n, io_time), "nranks": np.ones(n, dtype=np.int64)})}
    profile = Profile(job=job, ranks=add_derived_rank_columns(Table(cols, length=n)), files=files)
    profile.heatmap = Heatmap(runtime / nbins, nbins, {
        "POSIX": HeatmapLayer(np.arange(n, dtype=np.int64), np.zeros_like(bins), bins)})
    return profile


def by_id(profile: Profile) -> dict[str, object]:
    return {f.id: f for f in diagnose(profile)}


def test_bursts_of_all_ranks_at_once() -> None:
    """16 ranks write 1 GiB each in two 2 s checkpoints of a 100 s run (20 s of I/O per rank)."""
    bins = np.zeros((16, 100), dtype=np.int64)
    bins[:, 30:32] = bins[:, 80:82] = 256 << 20
    found = by_id(built(bins, 100.0, 20.0))["TIME-IO-BURSTS"]
    ev = {m.name: m.value for m in found.evidence}
    assert ev["bursts"] == 2 and ev["time_share"] == 0.04 and ev["bytes_share"] == 1.0
    assert ev["concurrency"] == 1.0 and ev["io_ranks"] == 16
    assert ev["burst_rate"] == pytest.approx(16 * (1 << 30) / 4.0)
    assert found.severity.label == "warning" and found.time_lost is None
    assert found.statement.startswith("100.0% of the bytes move in 2 bursts covering 4.0% of the run")
    assert "LOAD-IO-STAGGERED" not in by_id(built(bins, 100.0, 20.0))


def test_no_bursts_when_the_io_is_spread_or_short_or_not_all_ranks() -> None:
    even = np.full((16, 100), 10 << 20, dtype=np.int64)
    assert "TIME-IO-BURSTS" not in by_id(built(even, 100.0, 20.0))
    burst = np.zeros((16, 100), dtype=np.int64)
    burst[:, 50] = 1 << 30
    assert "TIME-IO-BURSTS" in by_id(built(burst, 100.0, 10.0))
    assert "TIME-IO-BURSTS" not in by_id(built(burst, 100.0, 1.0))  # 1% of the run in I/O
    halves = burst.copy()
    halves[8:, 50] = 0
    halves[8:, 20] = 1 << 30  # half the ranks write at 20 s, the other half at 50 s
    assert "TIME-IO-BURSTS" not in by_id(built(halves, 100.0, 10.0))


def test_ranks_taking_turns() -> None:
    """8 ranks write one after another, 5 s each, from 10 s to 50 s of a 100 s run."""
    bins = np.zeros((8, 100), dtype=np.int64)
    for r in range(8):
        bins[r, 10 + 5 * r:15 + 5 * r] = 256 << 20
    found = by_id(built(bins, 100.0, 5.0, mpi=30.0))["LOAD-IO-STAGGERED"]
    ev = {m.name: m.value for m in found.evidence}
    assert ev["phase"] == pytest.approx(40.0) and ev["mean_busy"] == pytest.approx(5.0)
    assert ev["concurrency"] == 0.125 and ev["mpi_mean"] == 30.0
    assert found.time_lost == pytest.approx(35.0)
    assert found.time_basis.startswith("upper bound:")
    assert [s.name for s in found.subjects] == [f"rank {r}" for r in range(5)]
    assert "TIME-IO-BURSTS" not in by_id(built(bins, 100.0, 5.0))


def test_no_turns_when_the_ranks_write_together_or_a_trace_tells() -> None:
    together = np.zeros((8, 100), dtype=np.int64)
    together[:, 10:50] = 64 << 20
    assert "LOAD-IO-STAGGERED" not in by_id(built(together, 100.0, 40.0))
    bins = np.zeros((8, 100), dtype=np.int64)
    for r in range(8):
        bins[r, 10 + 5 * r:15 + 5 * r] = 256 << 20
    coarse = bins.reshape(8, 4, 25).sum(axis=2)  # 4 bins: too coarse to tell
    assert "LOAD-IO-STAGGERED" not in by_id(built(coarse, 100.0, 5.0))
    traced = built(bins, 100.0, 5.0)
    cfg = RuleConfig()
    assert list(io_staggered(facts_of(traced, cfg), cfg))
    traced.trace = object()  # TRACE-SERIALISED-IO decides, call by call
    assert not list(io_staggered(facts_of(traced, cfg), cfg))


@pytest.mark.parametrize("path", [APMPI_LOG, *HEATMAP_LOGS], ids=lambda p: p.name[:24])
def test_the_activity_rules_are_silent_on_the_real_logs(path: Path) -> None:
    found = {f.id for f in diagnose(read_log(path))}
    assert not {"TIME-IO-BURSTS", "LOAD-IO-STAGGERED"} & found
    profile = read_log(path)
    a = activity(profile.heatmap, profile.job.nprocs)
    assert a is None or a.nbins < 8  # one 0.1 s bin: when is not known


@pytest.mark.slow
def test_the_html_report_draws_the_heat_map(tmp_path: Path, browser) -> None:
    """In a headless browser (tests/browser.py): the activity figure of a built heat map and of the
    3.5.0 log draw, with the rest of the page, without a console error; the APMPI log's POP table
    says where its MPI time comes from."""
    from browser import load
    from pario.report.html import render_html

    bins = np.zeros((16, 100), dtype=np.int64)
    bins[:, 30:32] = bins[:, 80:82] = 256 << 20
    page_file = tmp_path / "activity.html"
    runs = [analyze(built(bins, 100.0, 20.0)), *(analyze(read_log(p)) for p in (HEATMAP_LOGS[0], APMPI_LOG))]
    page_file.write_text(render_html(runs))
    titles = ("Array.from(document.querySelectorAll('.js-plotly-plot'))"
              ".map(f => f._fullLayout.title.text).filter(t => t.startsWith('I/O activity over time'))")
    page = load(browser, page_file, titles)
    assert page.errors == []
    assert page.figures >= 4 and page.drawn == page.figures
    assert page.probe == ["I/O activity over time (POSIX; bins of 1 s)",
                          "I/O activity over time (POSIX, STDIO; bins of 100 ms)"]
    assert "MPI time M_p from Darshan's APMPI module" in page.text


def test_mpi_inside_mpiio_is_counted_once() -> None:
    """APMPI times the MPI calls a library makes inside MPI-IO calls, which the MPI-IO records time
    too: where MPI + I/O exceeds a rank's run, the excess comes off MPI (each class in proportion).
    Rank 0: 6 s MPI (4 collective, 2 point-to-point) + 7 s I/O in a 10 s run: 3 s counted twice,
    so MPI becomes 3 s (2 + 1).  Rank 1: 2 s + 5 s fits: unchanged."""
    from pario.log.apmpi import exclusive

    columns = {"mpi_coll": np.array([4.0, 1.0]), "mpi_p2p": np.array([2.0, 1.0]),
               "mpi_other": np.array([0.0, 0.0]), "mpi_coll_calls": np.array([10.0, 10.0])}
    out, overlap = exclusive(columns, np.array([7.0, 5.0]), np.array([10.0, 10.0]))
    assert out["mpi_coll"].tolist() == [2.0, 1.0] and out["mpi_p2p"].tolist() == [1.0, 1.0]
    assert out["mpi_coll_calls"].tolist() == [10.0, 10.0]
    assert overlap.removed.tolist() == [3.0, 0.0]
    assert overlap.text.startswith(" On 1 of 2 ranks APMPI's MPI time and the I/O time together exceeded")
    # I/O alone longer than the run: all of the MPI time goes, never more
    out, overlap = exclusive(columns, np.array([11.0, 0.0]), np.array([10.0, 10.0]))
    assert overlap.removed.tolist() == [6.0, 0.0] and out["mpi_coll"][0] == 0.0


@pytest.mark.parametrize("path", sorted(LOGS.parent.glob("darshan-*/*.darshan")), ids=lambda p: p.name)
def test_time_classes_stay_within_the_run(path: Path) -> None:
    """Per rank, computation + MPI + I/O is the run time at most (+ rounding), on every log of
    tests/data, the APMPI log included."""
    from pario.analysis.times import rank_times

    t = rank_times(read_log(path))
    io = t.io_read + t.io_write + t.io_meta
    mpi = t.mpi if t.mpi is not None else np.zeros_like(io)
    wall = t.wall if t.wall_per_rank else np.full_like(io, t.runtime)
    assert (io + mpi <= wall * (1 + 1e-9) + 1e-9).all()
