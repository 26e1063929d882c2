"""Metrics checked against hand computation on tiny synthetic models."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pario.analysis import pop_metrics, rank_times, scaling_analysis
from pario.analysis.breakdown import time_shares
from pario.analysis.files import file_table
from pario.analysis.scaling import infer_mode
from pario.analysis.times import RankTimes, at_ranks
from pario.diagnosis import analyze
from pario.model import Job, Profile, add_derived_rank_columns
from pario.model.rankio import combine, outermost_records, rank_io
from pario.table import Table
from pario.units import seconds


def job(nprocs: int, runtime: float, **kw: object) -> Job:
    base: dict[str, object] = dict(source="pario", path="synthetic.pario", exe="/bin/app", nprocs=nprocs,
                                   start_time=0.0, end_time=runtime, runtime=runtime)
    base.update(kw)
    return Job(**base)


def records(rows: list[dict[str, float]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    if "name" not in frame:
        frame["name"] = [f"/data/file{int(i)}" for i in frame["id"]]
    return frame


def profile(ranks: dict[str, list[float]], files: dict[str, pd.DataFrame] | None = None,
            **job_kw: object) -> Profile:
    frame = pd.DataFrame(ranks)
    frame.index.name = "rank"
    runtime = float(job_kw.pop("runtime", frame["wall"].max()))
    return Profile(job=job(len(frame), runtime, **job_kw), ranks=add_derived_rank_columns(frame),
                   files=files or {})


# ---------------------------------------------------------------------------
# POP metrics
# ---------------------------------------------------------------------------

def three_ranks() -> Profile:
    """wall 10, 10, 8; I/O 2, 1, 1 (write, read, write); MPI 1, 3, 2.

    U = 7, 6, 5 -> avg 6, max 7; U+IO = 9, 7, 6 -> sum 22, avg 22/3, max 9; T = 10.
    """
    return profile({
        "wall": [10.0, 10.0, 8.0],
        "posix_read": [0.0, 1.0, 0.0],
        "posix_write": [2.0, 0.0, 1.0],
        "mpi_coll": [1.0, 3.0, 2.0],
    })


def test_pop_metrics_by_hand() -> None:
    pop = pop_metrics(rank_times(three_ranks()))
    assert pop.parallel_efficiency.value == pytest.approx(0.6)
    assert pop.load_balance.value == pytest.approx(6 / 7)
    assert pop.communication_efficiency.value == pytest.approx(0.7)
    assert pop.io_efficiency.value == pytest.approx(18 / 22)
    assert pop.load_balance_io.value == pytest.approx((22 / 3) / 9)
    assert pop.communication_efficiency_io.value == pytest.approx(0.9)
    # the two decompositions agree
    assert pop.load_balance.value * pop.communication_efficiency.value == pytest.approx(0.6)
    product = pop.io_efficiency.value * pop.load_balance_io.value * pop.communication_efficiency_io.value
    assert product == pytest.approx(0.6)
    # the additive form: 1 - PE = I/O + imbalance + communication
    assert pop.loss_io.value == pytest.approx((4 / 3) / 10)
    assert pop.loss_imbalance.value == pytest.approx((9 - 22 / 3) / 10)
    assert pop.loss_communication.value == pytest.approx(0.1)
    total = pop.loss_io.value + pop.loss_imbalance.value + pop.loss_communication.value
    assert total == pytest.approx(1 - 0.6)
    assert not pop.serialisation_efficiency.available
    assert "replay" in pop.serialisation_efficiency.reason


def test_pop_without_mpi_time_is_unavailable_not_invented() -> None:
    p = profile({"wall": [10.0, 10.0], "posix_write": [4.0, 2.0]}, source="darshan", has_mpi_time=False)
    pop = pop_metrics(rank_times(p))
    for v in (pop.parallel_efficiency, pop.load_balance, pop.communication_efficiency, pop.io_efficiency,
              pop.load_balance_io, pop.communication_efficiency_io, pop.loss_imbalance,
              pop.loss_communication):
        assert v.value is None
        assert "no MPI time" in v.reason
    assert pop.loss_io.value == pytest.approx(3.0 / 10.0)


def test_rank_times_useful_is_wall_minus_io_minus_mpi() -> None:
    rt = rank_times(three_ranks())
    assert rt.useful.tolist() == pytest.approx([7.0, 6.0, 5.0])
    assert rt.io.tolist() == pytest.approx([2.0, 1.0, 1.0])
    assert rt.runtime == 10.0


# ---------------------------------------------------------------------------
# shares and the verdict
# ---------------------------------------------------------------------------

def test_io_bound_run_is_called_io_bound() -> None:
    p = profile({"wall": [10.0, 10.0], "posix_write": [7.0, 6.0], "mpi_coll": [1.0, 1.0]})
    shares = time_shares(rank_times(p))
    assert shares.bound == "I/O"
    assert shares.io.value == pytest.approx(13 / 20)
    assert shares.mpi.value == pytest.approx(2 / 20)
    assert shares.compute.value == pytest.approx(5 / 20)
    assert "I/O-bound" in shares.verdict


@pytest.mark.parametrize(("mpi", "io", "bound"), [(6.0, 1.0, "MPI"), (1.0, 1.0, "compute")])
def test_other_verdicts(mpi: float, io: float, bound: str) -> None:
    p = profile({"wall": [10.0], "posix_read": [io], "mpi_p2p": [mpi]})
    assert time_shares(rank_times(p)).bound == bound


@pytest.mark.parametrize(("io", "bound", "io_bound"),
                         [(6.0, "I/O", True), (1.5, None, False), (2.0, None, True), (4.0, None, True)])
def test_verdict_without_mpi_time(io: float, bound: str | None, io_bound: bool) -> None:
    """Without MPI time, I/O is the largest class for sure only above 1/2 (``bound``); the run is
    I/O-bound (one definition with TIME-IO-BOUND) from 20% of the run time in I/O."""
    p = profile({"wall": [10.0], "posix_write": [io]}, source="darshan", has_mpi_time=False)
    shares = time_shares(rank_times(p))
    assert (shares.bound, shares.io_bound) == (bound, io_bound)
    assert shares.compute_and_mpi.value == pytest.approx(1 - io / 10)
    if io_bound:
        assert shares.verdict == (
            f"This run is I/O-bound: {io / 10:.1%} of the run time is in I/O. Faster I/O saves the run at "
            f"most {seconds(io)} ({io / 10:.1%}), the slowest rank's I/O time; each finding below bounds "
            "its own part of it.")
    else:
        assert shares.verdict.startswith("This run is not I/O-bound: 15.0% of the run time is in I/O (")


def test_the_verdict_bounds_what_faster_io_saves_once() -> None:
    """2 ranks in I/O for 7 s and 6 s of a 10 s run: the mean (6.5 s, POP's avg(IO)) is what I/O
    costs the average rank; the run cannot end more than 7 s earlier, the slowest rank's I/O time."""
    p = profile({"wall": [10.0, 10.0], "posix_write": [7.0, 6.0], "mpi_coll": [1.0, 1.0]})
    rt = rank_times(p)
    assert rt.io_at_stake == 7.0
    assert time_shares(rt).verdict.endswith(
        "Faster I/O saves the run at most 7 s (70.0%), the slowest rank's I/O time; each finding below "
        "bounds its own part of it.")
    # under 5% of the run in I/O, no bound is given
    quiet = profile({"wall": [10.0], "posix_write": [0.4], "mpi_coll": [1.0]})
    assert "Faster I/O" not in time_shares(rank_times(quiet)).verdict


def test_one_definition_of_io_bound_with_the_largest_class_named() -> None:
    """2 ranks of 10 s: U = 6 and 5, MPI 1 and 1, I/O 3 and 2 (rank 1 ends at 8 s).  Shares of
    P x T = 20 s: compute 11/20, MPI 2/20, I/O 5/20, idle 2/20; IOE = 11 / 16 = 0.6875 < 0.8 and
    I/O 25% >= 20%: I/O-bound, while computation takes the largest share."""
    p = profile({"wall": [10.0, 8.0], "posix_write": [3.0, 2.0], "mpi_coll": [1.0, 1.0]})
    s = time_shares(rank_times(p))
    assert [s.compute.value, s.mpi.value, s.io.value, s.idle.value] == pytest.approx([0.55, 0.1, 0.25, 0.1])
    assert (s.bound, s.io_bound) == ("compute", True)
    bound = " Faster I/O saves the run at most 3 s (30.0%), the slowest rank's I/O time; each finding below "
    bound += "bounds its own part of it."
    assert s.verdict == ("I/O holds this run back: 25.0% of the run time is in I/O, and its I/O efficiency "
                         "is 0.69, below POP's 0.8 (computation takes the largest share, 55.0%)." + bound)
    # the same run judged with TIME-IO-BOUND's thresholds raised: compute-bound, I/O named
    s = time_shares(rank_times(p), min_share=0.3)
    assert s.io_bound is False
    assert s.verdict == ("This run is compute-bound: 55.0% of the time is spent in computation; I/O takes "
                         "25.0%, with an I/O efficiency of 0.69." + bound)


# ---------------------------------------------------------------------------
# I/O load balance and rates
# ---------------------------------------------------------------------------

def per_rank_files(write_time: list[float], written: list[int], read_time: list[float] | None = None,
                   read: list[int] | None = None) -> pd.DataFrame:
    rows = []
    for r, (t, b) in enumerate(zip(write_time, written, strict=True)):
        rows.append({"id": 100 + r, "rank": r, "write_time": t, "bytes_written": b, "writes": 1 if b else 0,
                     "read_time": read_time[r] if read_time else 0.0, "bytes_read": read[r] if read else 0,
                     "reads": 1 if read and read[r] else 0, "meta_time": 0.0})
    return records(rows)


def test_only_rank0_writes_gives_io_balance_one_over_p() -> None:
    p = profile({"wall": [10.0] * 4, "posix_write": [4.0, 0.0, 0.0, 0.0], "mpi_coll": [0.0] * 4},
                files={"posix": per_rank_files([4.0, 0, 0, 0], [4 << 20, 0, 0, 0])})
    a = analyze(p)
    assert a.io.overall.write.load_balance.value == pytest.approx(0.25)
    assert a.io.overall.total.load_balance.value == pytest.approx(0.25)
    posix = next(lay for lay in a.io.layers if lay.layer == "posix")
    assert posix.write.load_balance.value == pytest.approx(0.25)
    assert not posix.write.load_balance.approximate
    assert a.io.overall.read.load_balance.value is None
    assert a.io.overall.read.load_balance.reason == "no reads recorded"


def test_rates_per_process_and_aggregate() -> None:
    """Rank 0 writes 8 MiB in 2 s, rank 1 writes 4 MiB in 4 s."""
    mib = 1 << 20
    p = profile({"wall": [10.0, 10.0], "posix_write": [2.0, 4.0], "mpi_coll": [0.0, 0.0]},
                files={"posix": per_rank_files([2.0, 4.0], [8 * mib, 4 * mib])})
    w = analyze(p).io.overall.write
    assert w.bytes.value == 12 * mib
    assert w.rate_per_process.value == pytest.approx(12 * mib / 6.0)
    assert w.rate_aggregate.value == pytest.approx(12 * mib / 4.0)
    assert w.mean_request.value == pytest.approx(6 * mib)
    assert w.time_mean.value == pytest.approx(3.0)
    assert w.time_max.value == pytest.approx(4.0)
    assert w.share_of_runtime.value == pytest.approx(0.3)


def test_metadata_time_and_request_histograms() -> None:
    files = records([
        {"id": 1, "rank": 0, "meta_time": 0.5, "opens": 2, "stats": 1, "seeks": 3, "write_time": 1.0,
         "bytes_written": 300, "writes": 3, "size_write_100_1k": 3},
        {"id": 2, "rank": 1, "meta_time": 1.5, "opens": 1, "write_time": 0.0, "bytes_written": 0,
         "writes": 0},
    ])
    p = profile({"wall": [4.0, 4.0], "posix_meta": [0.5, 1.5], "posix_write": [1.0, 0.0],
                 "mpi_coll": [0.0, 0.0]}, files={"posix": files})
    a = analyze(p)
    meta = a.io.overall.meta
    assert meta.time_total.value == pytest.approx(2.0)
    assert meta.time_mean.value == pytest.approx(1.0)
    assert meta.ops.value == 7
    assert meta.load_balance.value == pytest.approx(1.0 / 1.5)
    posix = a.io.layers[0]
    assert posix.histogram_write is not None
    assert posix.histogram_write[1] == 3 and sum(posix.histogram_write) == 3


# ---------------------------------------------------------------------------
# shared records (Darshan's rank -1 and pario's reduced files)
# ---------------------------------------------------------------------------

def shared(read: float = 0.0, write: float = 0.0, meta: float = 0.0, fast: int = 1, slow: int = 3,
           t_fast: float = 1.0, t_slow: float = 4.0, **kw: float) -> dict[str, float]:
    return {"id": 7, "rank": -1, "read_time": read, "write_time": write, "meta_time": meta,
            "fastest_rank": fast, "slowest_rank": slow, "fastest_rank_time": t_fast,
            "slowest_rank_time": t_slow, **kw}


def test_shared_record_spread_fastest_slowest_rest_evenly() -> None:
    rio = rank_io(records([shared(read=10.0)]), nprocs=5)
    t = rio.table["read_time"].tolist()
    assert t == pytest.approx([5 / 3, 1.0, 5 / 3, 4.0, 5 / 3])
    assert sum(t) == pytest.approx(10.0)
    assert not rio.exact_ranks["read_time"]
    assert rio.exact_max["read_time"]  # one shared file alone: its slowest rank is the maximum
    assert rio.exact_max["time"]


def test_shared_record_kind_split_is_proportional_and_inexact() -> None:
    rio = rank_io(records([shared(read=6.0, write=4.0)]), nprocs=5)
    assert np.asarray(rio.table["read_time"])[3] == pytest.approx(4.0 * 0.6)
    assert np.asarray(rio.table["write_time"])[3] == pytest.approx(4.0 * 0.4)
    assert rio.table["time"].max() == pytest.approx(4.0)
    assert rio.exact_max["time"] and not rio.exact_max["read_time"]


def test_shared_record_with_known_members() -> None:
    rio = rank_io(records([shared(read=10.0, fast=0, slow=3, t_slow=6.0)]), nprocs=5,
                  members={7: np.array([0, 2, 3])})
    assert rio.table["read_time"].tolist() == pytest.approx([1.0, 0.0, 3.0, 6.0, 0.0])


def test_shared_record_with_inconsistent_extremes_is_spread_evenly() -> None:
    rio = rank_io(records([shared(read=10.0, t_fast=8.0, t_slow=9.0)]), nprocs=4)
    assert rio.table["read_time"].tolist() == pytest.approx([2.5] * 4)
    assert not rio.exact_max["read_time"]


def test_shared_record_whose_rest_exceeds_the_slowest_is_spread_evenly() -> None:
    """fastest 1 s + slowest 2 s leave 27 s for 3 ranks: 9 s each, more than the 'slowest'."""
    rio = rank_io(records([shared(read=30.0, t_fast=1.0, t_slow=2.0)]), nprocs=5)
    assert rio.table["read_time"].tolist() == pytest.approx([6.0] * 5)
    assert not rio.exact_max["read_time"]


def test_two_shared_files_make_the_maximum_approximate() -> None:
    two = records([shared(read=10.0), {**shared(read=10.0, fast=3, slow=1), "id": 8}])
    rio = rank_io(two, nprocs=5)
    assert rio.table["read_time"].sum() == pytest.approx(20.0)
    assert not rio.exact_max["read_time"]


def test_shared_bytes_use_fastest_and_slowest_bytes() -> None:
    rec = shared(write=10.0, bytes_written=1000, fastest_rank_bytes=100, slowest_rank_bytes=400)
    rio = rank_io(records([rec]), nprocs=5)
    assert rio.table["bytes_written"].tolist() == pytest.approx([500 / 3, 100, 500 / 3, 400, 500 / 3])


def test_combine_sums_layers() -> None:
    a = rank_io(records([{"id": 1, "rank": 0, "read_time": 1.0}]), nprocs=2)
    b = rank_io(records([{"id": 2, "rank": 1, "read_time": 2.0}]), nprocs=2)
    both = combine([a, b], 2)
    assert both.table["read_time"].tolist() == [1.0, 2.0]
    assert both.exact_max["read_time"]


def test_outermost_drops_posix_under_mpiio() -> None:
    posix = records([{"id": 1, "rank": 0, "write_time": 3.0}, {"id": 2, "rank": 0, "write_time": 1.0}])
    mpiio = records([{"id": 1, "rank": 0, "write_time": 4.0}])
    outer = outermost_records({"posix": posix, "mpiio": mpiio})
    assert outer["posix"]["id"].tolist() == [2]
    p = profile({"wall": [10.0], "mpiio_write": [4.0], "posix_write": [1.0], "mpi_coll": [0.0]},
                files={"posix": posix, "mpiio": mpiio})
    a = analyze(p)
    assert a.io.overall.write.time_total.value == pytest.approx(5.0)
    files = file_table(p)
    assert list(files["layer"]) == ["mpiio", "posix"] and files["id"].tolist() == [1, 2]


def test_darshan_like_profile_estimates_from_records() -> None:
    """has_rank_times False: per-rank I/O comes from the records, with the estimate flagged."""
    files = {"mpiio": records([shared(write=10.0, t_fast=1.0, t_slow=4.0)]),
             "posix": records([{"id": 9, "rank": 2, "read_time": 3.0}])}
    ranks = {"wall": [20.0] * 5}
    p = profile(ranks, files=files, source="darshan", has_mpi_time=False, has_rank_times=False)
    rt = rank_times(p)
    assert rt.io.tolist() == pytest.approx([5 / 3, 1.0, 5 / 3 + 3.0, 4.0, 5 / 3])
    assert not rt.exact_max("io")
    a = analyze(p)
    assert a.io.overall.total.load_balance.approximate
    assert a.pop.loss_io.value == pytest.approx(13.0 / 5 / 20.0)
    assert not a.pop.loss_io.approximate


# ---------------------------------------------------------------------------
# files, MPI, memory
# ---------------------------------------------------------------------------

def test_file_table_sums_over_ranks_and_sorts() -> None:
    posix = records([
        {"id": 1, "rank": 0, "write_time": 1.0, "bytes_written": 10, "writes": 1},
        {"id": 1, "rank": 1, "write_time": 2.0, "bytes_written": 20, "writes": 2},
        {"id": 2, "rank": 0, "read_time": 5.0, "bytes_read": 7, "reads": 1},
    ])
    p = profile({"wall": [10.0, 10.0], "mpi_coll": [0.0, 0.0]}, files={"posix": posix})
    files = file_table(p)
    assert files["id"].tolist() == [2, 1]
    one = files.row(int(np.flatnonzero(files["id"] == 1)[0]))
    assert one["ranks"] == 2 and one["time"] == pytest.approx(3.0) and one["bytes_written"] == 30
    assert one["writes"] == 3


def test_mpi_classes_and_memory() -> None:
    p = profile({"wall": [10.0, 10.0], "mpi_coll": [1.0, 3.0], "mpi_coll_bytes": [100.0, 300.0],
                 "mpi_coll_calls": [5.0, 5.0], "mpi_p2p": [0.0, 2.0], "mpi_p2p_bytes": [0.0, 50.0],
                 "maxrss": [1e6, 3e6]})
    a = analyze(p)
    coll = a.mpi.classes[0]
    assert coll.name == "collective"
    assert coll.time_mean.value == pytest.approx(2.0)
    assert coll.rate.value == pytest.approx(400 / 4.0)
    assert coll.calls.value == 10
    assert a.mpi.time_mean.value == pytest.approx(3.0)
    assert a.memory.mean_per_process.value == pytest.approx(2e6)
    assert a.memory.peak_per_process.value == pytest.approx(3e6)
    assert a.memory.peak_rank == 1


def test_darshan_memory_and_mpi_unavailable() -> None:
    p = profile({"wall": [1.0], "maxrss": [math.nan]}, source="darshan", has_mpi_time=False)
    a = analyze(p)
    assert not a.mpi.available and "no MPI time" in a.mpi.reason
    assert a.memory.peak_per_process.value is None


# ---------------------------------------------------------------------------
# scaling
# ---------------------------------------------------------------------------

def scaled(nprocs: int, wall: float, useful: float, io_bytes: int) -> Profile:
    """nprocs ranks, each with ``useful`` s of computation, 1 s of writes, the rest MPI."""
    mpi = wall - useful - 1.0
    files = per_rank_files([1.0] * nprocs, [io_bytes // nprocs] * nprocs)
    return profile({"wall": [wall] * nprocs, "posix_write": [1.0] * nprocs, "mpi_coll": [mpi] * nprocs},
                   files={"posix": files}, path=f"run{nprocs}.pario")


def test_strong_scaling_table_by_hand() -> None:
    runs = [analyze(scaled(4, 6.0, 4.0, 1 << 20)), analyze(scaled(2, 10.0, 8.0, 1 << 20))]
    table = scaling_analysis(runs)
    assert table.mode == "strong" and "inferred" in table.mode_reason
    ref, big = table.rows
    assert ref.nprocs == 2 and big.nprocs == 4
    assert big.speedup.value == pytest.approx(10 / 6)
    assert big.ideal_speedup == 2.0
    assert big.scaling_efficiency.value == pytest.approx((10 * 2) / (6 * 4))
    # sum(U): 2 x 8 = 16 and 4 x 4 = 16 -> perfect computation scalability
    assert big.computation_scalability.value == pytest.approx(1.0)
    assert big.global_efficiency.value == pytest.approx(big.parallel_efficiency.value)
    assert big.parallel_efficiency.value == pytest.approx(4.0 / 6.0)
    assert big.io_bytes.value == (1 << 20)
    assert big.io_bandwidth.value == pytest.approx((1 << 20) / 1.0)


def test_weak_scaling_inferred_from_bytes_per_rank() -> None:
    runs = [analyze(scaled(2, 10.0, 8.0, 2 << 20)), analyze(scaled(4, 12.0, 9.0, 4 << 20))]
    mode, _ = infer_mode(runs)
    assert mode == "weak"
    table = scaling_analysis(runs)
    big = table.rows[1]
    assert big.scaling_efficiency.value == pytest.approx(10 / 12)
    assert big.speedup.value == pytest.approx(2 * 10 / 12)
    # per-rank useful time 8 -> 9
    assert big.computation_scalability.value == pytest.approx(8 / 9)


def test_scaling_mode_chosen_by_user() -> None:
    runs = [analyze(scaled(2, 10.0, 8.0, 2 << 20)), analyze(scaled(4, 12.0, 9.0, 4 << 20))]
    assert scaling_analysis(runs, "strong").mode == "strong"
    assert scaling_analysis(runs, "strong").mode_reason == "chosen by the user"


def test_rank_times_arrays_directly() -> None:
    """pop_metrics is a pure function of RankTimes."""
    rt = RankTimes(ranks=np.arange(2), wall=np.array([4.0, 4.0]), io_read=np.array([1.0, 0.0]),
                   io_write=np.zeros(2), io_meta=np.zeros(2), mpi=np.array([0.0, 1.0]), runtime=4.0)
    pop = pop_metrics(rt)
    assert pop.parallel_efficiency.value == pytest.approx(3 / 4)
    assert pop.io_efficiency.value == pytest.approx(6 / 7)


# ---------------------------------------------------------------------------
# the model's tables: pario.table.Table, or DataFrames built by hand
# ---------------------------------------------------------------------------

def test_analysis_of_tables_is_that_of_frames() -> None:
    """The same run as Tables (rank 1 without data: a rank column) and as DataFrames."""
    from pario.table import as_table

    posix = records([{"id": 1, "rank": 0, "write_time": 1.0, "bytes_written": 10, "writes": 1},
                     {"id": 1, "rank": 2, "write_time": 2.0, "bytes_written": 20, "writes": 2},
                     {"id": 2, "rank": -1, "read_time": 5.0, "bytes_read": 7, "reads": 1}])
    frame = pd.DataFrame({"wall": [10.0, 8.0], "mpi_coll": [1.0, 2.0], "maxrss": [1e6, 3e6]},
                         index=pd.Index([0, 2], name="rank"))
    p = Profile(job=job(3, 10.0), ranks=add_derived_rank_columns(frame), files={"posix": posix})
    t = Profile(job=p.job, ranks=add_derived_rank_columns(as_table(frame)), files={"posix": as_table(posix)})
    a, b = analyze(p, diagnosis=False), analyze(t, diagnosis=False)
    assert (a.pop, a.io, a.mpi, a.memory, a.totals) == (b.pop, b.io, b.mpi, b.memory, b.totals)
    assert a.files.to_pandas().equals(b.files.to_pandas()) and a.ranks.to_pandas().equals(b.ranks.to_pandas())
    assert b.ranks["rank"].tolist() == [0, 2] and b.memory.peak_rank == 2


def test_analysis_modules_do_not_import_pandas() -> None:
    import subprocess
    import sys

    code = ("import sys, pario.model, pario.analysis, pario.analysis.run, pario.analysis.engine; "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_per_rank_values_at_the_ranks_of_a_table() -> None:
    """Rank i's value for each row's rank, 0 for a rank the values do not reach: the usual table
    (every rank in order) gives a copy of the values, NaN and -0.0 kept, as any other table would."""
    values = np.array([1.5, np.nan, -0.0, 4.0])
    every = at_ranks(values, np.arange(4))
    assert every.tobytes() == values.tobytes() and every is not values
    assert at_ranks(values, np.array([3, 0, 7, -1])).tolist() == [4.0, 1.5, 0.0, 0.0]
    some = at_ranks(values, np.array([0, 1, 2]))  # a table without rank 3
    assert some[0] == 1.5 and math.isnan(some[1]) and some[2] == 0.0
    assert at_ranks(np.arange(3), np.arange(3)).tolist() == [0.0, 1.0, 2.0]  # integers become floats
    assert at_ranks(np.arange(3), np.arange(3)).dtype == np.float64
    assert at_ranks(np.zeros(0), np.zeros(0, dtype=np.int64)).shape == (0,)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet="ab/.é", max_size=6), st.booleans(), st.booleans()), max_size=9))
def test_directories_are_idle_names_with_files_below(rows: list[tuple[str, bool, bool]]) -> None:
    """A row is a directory's when it moved no data and either took no time or another name (or
    its own, ending in "/") lies below it: starts with it, its trailing "/" dropped, and a "/"."""
    from pario.analysis.files import directories

    names = [name for name, _, _ in rows]
    moved = np.array([float(m) for _, m, _ in rows])
    took = np.array([float(t) for _, _, t in rows])
    files = Table({"name": np.array(names, dtype=object), "bytes_read": moved, "bytes_written": moved * 0,
                   "reads": moved * 0, "writes": moved * 0, "time": took}, length=len(rows))

    def below(name: str) -> bool:
        stem = name.rstrip("/")
        return bool(stem) and any(other.startswith(stem + "/") for other in names)

    expected = [not m and (not t or below(n)) for n, m, t in rows]
    assert directories(files).tolist() == expected
