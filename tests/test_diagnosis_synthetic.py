"""Diagnosis rules on small synthetic profiles: what this machine cannot run.

Lustre striping (stripe count, stripe size, aggregators per OST) and thousands of
ranks (file per process at scale, statistics that must not fade with the rank
count) are built here as profiles whose numbers are known by construction.
Also: thresholds from a file, the registry's invariants, and the renderers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from pario.diagnosis import (
    RULES,
    RuleConfig,
    Severity,
    diagnose,
    diagnose_runs,
    facts_of,
    load_config,
    make_config,
)
from pario.diagnosis.config import field_info
from pario.diagnosis.hits import Hit, Words
from pario.diagnosis.layout import Layout, layout_of
from pario.diagnosis.registry import explained
from pario.errors import ParioError
from pario.model import IO_TIME_COLUMNS, MPI_TIME_COLUMNS, Job, Profile, add_derived_rank_columns
from pario.report.findings import diagnosis_dict, findings_markdown, findings_renderable
from rule_helpers import evidence, silent_until

MiB = 1 << 20
GiB = 1 << 30
DOCS = Path(__file__).resolve().parents[1] / "docs"


def profile(
    nprocs: int,
    runtime: float,
    *,
    source: str = "pario",
    io: dict[str, Sequence[float]] | None = None,
    mpi: dict[str, Sequence[float]] | None = None,
    posix: Sequence[dict] = (),
    mpiio: Sequence[dict] = (),
    stdio: Sequence[dict] = (),
    striping: dict[int, tuple[int, int]] | None = None,
    hints: dict[int, dict[str, str]] | None = None,
    metadata: dict | None = None,
) -> Profile:
    """A profile with per-rank I/O time columns ``io``, MPI time columns ``mpi`` (0 where not given
    in a pario profile) and file records given as dicts."""
    ranks = pd.DataFrame(index=pd.RangeIndex(nprocs, name="rank"))
    ranks["wall"] = float(runtime)
    for c in IO_TIME_COLUMNS:
        ranks[c] = np.asarray(io[c], dtype=float) if io and c in io else 0.0
    for c in MPI_TIME_COLUMNS:
        given = mpi and c in mpi
        ranks[c] = np.asarray(mpi[c], dtype=float) if mpi and given else 0.0 if source == "pario" else np.nan
    ranks = add_derived_rank_columns(ranks)

    def frame(records: Sequence[dict]) -> pd.DataFrame:
        if not records:
            return pd.DataFrame(
                {
                    "id": pd.Series(dtype=np.uint64),
                    "rank": pd.Series(dtype=np.int64),
                    "name": pd.Series(dtype=object),
                }
            )
        df = pd.DataFrame(list(records))
        df["id"] = df["id"].astype(np.uint64)
        df["rank"] = df["rank"].astype(np.int64)
        return df

    meta = dict(metadata or {})
    if striping:
        meta["lustre_striping"] = {
            fid: {"stripe_size": s, "stripe_count": c} for fid, (s, c) in striping.items()
        }
    job = Job(
        source=source,
        path=f"synthetic-{nprocs}.log",
        exe="/apps/sim",
        nprocs=nprocs,
        start_time=0.0,
        end_time=runtime,
        runtime=runtime,
        argv=("/apps/sim", "-i", "in.nml"),
        has_mpi_time=source == "pario" or bool(mpi),
        metadata=meta,
    )
    return Profile(
        job=job,
        ranks=ranks,
        files={"posix": frame(posix), "mpiio": frame(mpiio), "stdio": frame(stdio)},
        hints=dict(hints or {}),
    )


def ids(p: Profile, cfg: RuleConfig | None = None) -> set[str]:
    return {f.id for f in diagnose(p, cfg)}


def one(p: Profile, rule_id: str, cfg: RuleConfig | None = None):
    found = [f for f in diagnose(p, cfg) if f.id == rule_id]
    assert len(found) == 1, f"{rule_id} not found in {ids(p, cfg)}"
    return found[0]


# --- Lustre ---------------------------------------------------------------------------------


def _shared_writes(n: int, request: int, count: int, fid: int = 7) -> list[dict]:
    """``n`` ranks each write ``count`` requests of ``request`` bytes to one shared file (own records)."""
    return [
        {
            "id": fid,
            "rank": r,
            "name": "/lus/scratch/run/out.dat",
            "writes": count,
            "bytes_written": request * count,
            "write_time": 2.0,
            "max_byte_written": n * request * count - 1,
            "file_alignment": 1 * MiB,
        }
        for r in range(n)
    ]


def test_stripe_size_fires_when_requests_straddle_stripes():
    io = {"posix_write": [2.0] * 8}
    p = profile(8, 20.0, io=io, posix=_shared_writes(8, 3 * MiB // 2, 10), striping={7: (MiB, 4)})
    f = one(p, "LUSTRE-STRIPE-SIZE")
    ev = {m.name: m.value for m in f.evidence}
    assert ev["request_size"] == 3 * MiB // 2 and ev["stripe_size"] == MiB
    assert ev["writers"] == pytest.approx(8.0)
    (cmd,) = [r.snippet for r in f.recommendations if r.kind == "striping"]
    assert cmd == f"lfs setstripe -c 4 -S {3 * MiB // 2} /lus/scratch/run"


def _layout(p: Profile, fid: int) -> Layout:
    """The layout LUSTRE-STRIPE-SIZE and LUSTRE-STRIPE-COUNT judge file ``fid`` on."""
    cfg = RuleConfig()
    lay = layout_of(facts_of(p, cfg), fid, cfg)
    assert lay is not None, f"file {fid} has no striping"
    return lay


@pytest.mark.parametrize("request_size", [2 * MiB, MiB, MiB // 2])
def test_stripe_size_silent_when_requests_fit_stripes(request_size):
    p = profile(
        8,
        20.0,
        io={"posix_write": [2.0] * 8},
        posix=_shared_writes(8, request_size, 10),
        striping={7: (MiB, 4)},
    )
    assert "LUSTRE-STRIPE-SIZE" in RULES and "LUSTRE-STRIPE-SIZE" not in ids(p)
    # judged (8 writers, requests not small): the request fits the 1 MiB stripe, which stays
    lay = _layout(p, 7)
    assert (lay.request, lay.writers) == (request_size, 8.0)
    assert (lay.current.stripe_size, lay.stripe_size) == (MiB, MiB)


def test_stripe_size_silent_with_one_writer():
    recs = _shared_writes(1, 3 * MiB // 2, 10)
    p = profile(1, 20.0, io={"posix_write": [2.0]}, posix=recs, striping={7: (MiB, 4)})
    assert "LUSTRE-STRIPE-SIZE" in RULES and "LUSTRE-STRIPE-SIZE" not in ids(p)
    lay = _layout(p, 7)  # one writer shares no stripe: its 1.5 MiB requests are not judged
    assert (lay.writers, lay.request, lay.stripe_size) == (1.0, 0.0, MiB)


def _collective_file(n: int, nbytes: int, fid: int = 9) -> dict:
    return {
        "id": fid,
        "rank": -1,
        "name": "/lus/scratch/run/field.h5",
        "nranks": n,
        "coll_writes": n * 4,
        "coll_opens": n,
        "bytes_written": nbytes,
        "write_time": 30.0 * n,
        "fastest_rank": 1,
        "fastest_rank_time": 30.0,
        "slowest_rank": 0,
        "slowest_rank_time": 30.0,
    }


@pytest.mark.parametrize(
    ("cb_nodes", "stripes", "fires", "words"),
    [
        (8, 2, True, "per OST"),
        (1, 4, True, "OSTs get no stream"),
        (6, 4, True, "not a multiple"),
        (4, 4, False, ""),
        (8, 4, False, ""),
    ],
)
def test_aggregators_versus_stripes(cb_nodes, stripes, fires, words):
    hints = {
        9: {
            "cb_nodes": str(cb_nodes),
            "striping_factor": str(stripes),
            "striping_unit": str(MiB),
            "mca:io": "romio321",
        }
    }
    p = profile(
        64, 100.0, io={"mpiio_write": [30.0] * 64}, mpiio=[_collective_file(64, 8 * GiB)], hints=hints
    )
    found = [f for f in diagnose(p) if f.id == "MPIIO-AGGREGATORS-STRIPES"]
    assert bool(found) == fires
    if fires:
        assert words in found[0].statement
        assert found[0].recommendations[0].snippet.startswith("cb_nodes ")
        assert int(found[0].recommendations[0].snippet.split()[1]) % stripes == 0


def test_stripe_count_fires_for_a_large_shared_file_on_one_ost():
    recs = [_collective_file(64, 64 * GiB)]
    posix = [
        {
            "id": 9,
            "rank": -1,
            "name": "/lus/scratch/run/field.h5",
            "nranks": 64,
            "writes": 65536,
            "bytes_written": 64 * GiB,
            "max_byte_written": 64 * GiB - 1,
            "write_time": 900.0,
            "slowest_rank": 0,
            "slowest_rank_bytes": 64 * GiB,
            "slowest_rank_time": 900.0,
            "fastest_rank": 3,
            "fastest_rank_bytes": 0,
            "fastest_rank_time": 0.0,
            "variance_rank_bytes": (64 * GiB) ** 2 / 64 - (GiB) ** 2,
        }
    ]
    p = profile(64, 1000.0, io={"mpiio_write": [30.0] * 64}, mpiio=recs, posix=posix, striping={9: (MiB, 1)})
    f = one(p, "LUSTRE-STRIPE-COUNT")
    ev = {m.name: m.value for m in f.evidence}
    assert ev["stripe_count"] == 1 and ev["suggested"] == 16 and ev["file_size"] == 64 * GiB
    assert any(r.snippet == "lfs setstripe -c 16 -S 1048576 /lus/scratch/run" for r in f.recommendations)
    assert any("rank 0 moves" in n for n in f.notes)  # the measured single aggregator
    # and the single aggregator is measured from the variance of bytes per rank
    agg = one(p, "MPIIO-SINGLE-AGGREGATOR")
    assert {m.name: m.value for m in agg.evidence}["aggregators"] == pytest.approx(1.0)


def _shared_on_lustre(nbytes: int, stripes: int, runtime: float, write_time: float) -> Profile:
    """64 ranks write ``nbytes`` collectively to one file of ``stripes`` stripes of 1 MiB, each
    rank for ``write_time`` of the ``runtime``."""
    return profile(64, runtime, io={"mpiio_write": [write_time] * 64}, mpiio=[_collective_file(64, nbytes)],
                   striping={9: (MiB, stripes)})


def test_stripe_count_silent_when_striped_or_per_process_or_small():
    wide = _shared_on_lustre(64 * GiB, 16, 1000.0, 30.0)
    # 16 stripes are what 64 GiB calls for at 4 GiB per OST; at 1 GiB per OST it calls for 64
    (f,) = silent_until("LUSTRE-STRIPE-COUNT", wide, lustre_bytes_per_ost=GiB)
    assert (evidence(f)["stripe_count"], evidence(f)["suggested"]) == (16, 64)
    own = [
        {
            "id": 100 + r,
            "rank": r,
            "name": f"/lus/scratch/run/ckpt.{r}",
            "writes": 1024,
            "bytes_written": 2 * GiB,
            "max_byte_written": 2 * GiB - 1,
            "write_time": 10.0,
        }
        for r in range(4)
    ]
    fpp = profile(
        4, 100.0, io={"posix_write": [10.0] * 4}, posix=own, striping={100 + r: (MiB, 1) for r in range(4)}
    )
    assert "LUSTRE-STRIPE-COUNT" not in ids(fpp)  # a file per process belongs on one OST
    layouts = [_layout(fpp, 100 + r) for r in range(4)]
    assert [(lay.sharing, lay.file_size, lay.stripe_count) for lay in layouts] == [(1.0, 2 * GiB, 1)] * 4
    small = _shared_on_lustre(64 * MiB, 1, 100.0, 3.0)
    (f,) = silent_until("LUSTRE-STRIPE-COUNT", small, lustre_large_file_bytes=64 * MiB)
    assert (evidence(f)["file_size"], evidence(f)["stripe_count"]) == (64 * MiB, 1)


def test_profiler_hints_are_not_the_application_s():
    """Darshan's own log-writing hints (job metadata) never count as the application's hints."""
    p = profile(
        64,
        100.0,
        source="darshan",
        io={"mpiio_write": [30.0] * 64},
        mpiio=[_collective_file(64, 8 * GiB)],
        metadata={"darshan_log_hints": "cb_nodes=1;romio_cb_write=disable"},
    )
    found = ids(p)
    assert not found & {"MPIIO-SINGLE-AGGREGATOR", "MPIIO-CB-DISABLED", "MPIIO-DEFAULT-HINTS"}


# --- across runs: the thresholds, on runs whose times are set by hand -----------------------


def _weak_run(n: int, write_time: float, runtime: float = 40.0) -> Profile:
    """``n`` ranks each write 1 GiB to their own file in ``write_time`` seconds."""
    own = [
        {
            "id": 500 + r,
            "rank": r,
            "name": f"/scratch/out.{r}",
            "writes": 64,
            "bytes_written": GiB,
            "write_time": write_time,
        }
        for r in range(n)
    ]
    return profile(n, runtime, io={"posix_write": [write_time] * n}, posix=own)


def _weak_scaling(rule_id: str, large_time: float, fires: bool) -> dict[str, float]:
    """Evidence of ``rule_id`` from 1 rank writing 1 GiB in 1 s and 8 ranks each 1 GiB in ``large_time``
    (after checking that the rule fires, or not, as ``fires`` says; empty when it does not)."""
    assert rule_id in RULES
    found = [f for f in diagnose_runs([_weak_run(1, 1.0), _weak_run(8, large_time)]) if f.id == rule_id]
    assert len(found) == fires
    return evidence(found[0]) if found else {}


# 8 times the data: the rule fires at 1.5 x 8 = 12 times the I/O time
@pytest.mark.parametrize(("large_time", "fires"), [(13.0, True), (12.0, True), (11.0, False), (4.0, False)])
def test_io_growth_threshold(large_time, fires):
    if ev := _weak_scaling("SCALE-IO-GROWTH", large_time, fires):
        assert ev["bytes_growth"] == pytest.approx(8.0) and ev["time_growth"] == pytest.approx(large_time)
        assert ev["io_time_large"] - 8.0 * ev["io_time_small"] == pytest.approx(large_time - 8.0)


# per-process rate 1 GiB/s with 1 writer; the rule fires when it falls to half or less with 8
@pytest.mark.parametrize(("large_time", "fires"), [(2.5, True), (2.0, True), (1.9, False), (1.0, False)])
def test_contention_threshold(large_time, fires):
    if ev := _weak_scaling("SCALE-CONTENTION", large_time, fires):
        assert ev["rate_ratio"] == pytest.approx(1.0 / large_time)


# --- scale: statistics that do not fade with the rank count ---------------------------------


@pytest.mark.parametrize("n", [16, 1024, 65536])
def test_imbalance_statistic_does_not_fade_with_rank_count(n):
    """Half the ranks spend 1 s in I/O, half 3 s, in a 10 s run: 1 s lost, at any rank count."""
    io = np.where(np.arange(n) < n // 2, 1.0, 3.0)
    f = one(profile(n, 10.0, io={"posix_write": io}), "LOAD-IMBALANCE")
    ev = {m.name: m.value for m in f.evidence}
    assert ev["time_lost"] == pytest.approx(1.0) and ev["load_balance"] == pytest.approx(2 / 3)
    assert f.time_share == pytest.approx(0.1) and f.severity == Severity.WARNING


@pytest.mark.parametrize("n", [64, 4096])
def test_stragglers_at_scale(n):
    io = np.full(n, 1.0)
    io[[5, n // 2, n - 1]] = 6.0
    f = one(profile(n, 20.0, io={"posix_write": io}), "LOAD-STRAGGLERS")
    assert {s.name for s in f.subjects if s.kind == "rank"} == {"rank 5", f"rank {n // 2}", f"rank {n - 1}"}
    ev = {m.name: m.value for m in f.evidence}
    assert ev["ratio"] == pytest.approx(6.0) and ev["time_lost"] == pytest.approx(5.0)
    assert ev["z_max"] > 3  # grows with the rank count instead of fading
    assert "LOAD-IMBALANCE" not in ids(profile(n, 20.0, io={"posix_write": io}))


def test_many_slow_ranks_are_imbalance_not_stragglers():
    n = 4096
    io = np.where(np.arange(n) % 3 == 0, 6.0, 1.0)  # a third of the ranks: not "a few"
    found = ids(profile(n, 20.0, io={"posix_write": io}))
    assert "LOAD-IMBALANCE" in found and "LOAD-STRAGGLERS" not in found


def test_file_per_process_at_scale():
    n = 2048
    own = [
        {
            "id": 1000 + r,
            "rank": r,
            "name": f"/lus/scratch/run/out.{r:05d}",
            "opens": 1,
            "writes": 16,
            "bytes_written": 16 * MiB,
            "write_time": 0.5,
            "meta_time": 0.8,
        }
        for r in range(n)
    ]
    p = profile(n, 60.0, io={"posix_write": [0.5] * n, "posix_meta": [0.8] * n}, posix=own)
    f = one(p, "IFACE-FILE-PER-PROCESS")
    ev = {m.name: m.value for m in f.evidence}
    assert ev["files"] == n and ev["ranks"] == n and ev["time_at_stake"] == pytest.approx(0.8)
    assert f.severity >= Severity.WARNING  # the metadata load at this scale matters even when cheap here
    assert "IFACE-FILE-PER-PROCESS" not in ids(p, make_config({"fpp_min_files": 4096}))
    # off Lustre no striping advice; with one of the files striped, keep each on one OST
    assert not any(r.kind == "striping" for r in f.recommendations)
    striped = profile(n, 60.0, io={"posix_write": [0.5] * n, "posix_meta": [0.8] * n}, posix=own,
                      striping={1000 + 7: (1 << 20, 4)})
    advice = {r.kind: r for r in one(striped, "IFACE-FILE-PER-PROCESS").recommendations}
    assert advice["striping"].snippet == "lfs setstripe -c 1 /lus/scratch/run"


def test_few_ranks_without_mpi_time_says_so():
    """A Darshan-like log (no MPI time): rank 0 writes everything; the wait cannot be measured."""
    n = 512
    io = np.zeros(n)
    io[0] = 50.0
    rec = [
        {
            "id": 3,
            "rank": 0,
            "name": "/gpfs/run/all.dat",
            "writes": 4096,
            "bytes_written": 4 * GiB,
            "write_time": 50.0,
        }
    ]
    f = one(profile(n, 100.0, source="darshan", io={"posix_write": io}, posix=rec), "LOAD-FEW-RANKS")
    assert any("no MPI time" in note for note in f.notes)
    assert "idle_mpi" not in {m.name for m in f.evidence}


def _own_records(n: int, name: str = "/scratch/ior/testFile", **extra_of_rank: dict) -> list[dict]:
    """Rank r's record of one file: 100 writes of 1 MiB in 1 s, one open; ``extra_of_rank["r<k>"]``
    adds counters to rank k's."""
    return [
        {"id": 7, "rank": r, "name": name, "opens": 1, "writes": 100, "bytes_written": 100 * MiB,
         "write_time": 1.0, **extra_of_rank.get(f"r{r}", {})}
        for r in range(n)
    ]


def test_imbalance_of_equal_work_under_half_a_second_is_noise():
    """Every rank makes the same calls and moves the same bytes; rank 3 takes 0.3 s longer (0.225 s
    lost, 11% of a 2 s run): scheduling noise, neither imbalance nor a straggler."""
    p = profile(4, 2.0, io={"posix_write": [0.1, 0.1, 0.1, 0.4]}, posix=_own_records(4))
    assert not ids(p) & {"LOAD-IMBALANCE", "LOAD-STRAGGLERS"}
    # the same times where rank 3 writes twice the data: the program's imbalance
    uneven = _own_records(4, r3={"writes": 200, "bytes_written": 200 * MiB})
    assert "LOAD-STRAGGLERS" in ids(profile(4, 2.0, io={"posix_write": [0.1, 0.1, 0.1, 0.4]}, posix=uneven))


def test_imbalance_of_equal_work_blames_the_system():
    """8 ranks of equal work, half take 3 s, half 1 s in a 20 s run: 1 s lost, reported, with the
    rerun-and-check advice instead of 'give every rank an equal share'."""
    p = profile(8, 20.0, io={"posix_write": [1.0] * 4 + [3.0] * 4}, posix=_own_records(8))
    f = one(p, "LOAD-IMBALANCE")
    assert evidence(f)["time_lost"] == pytest.approx(1.0)
    assert [r.kind for r in f.recommendations][:1] == ["investigate"]
    assert any("the difference is the system's" in n for n in f.notes)


def test_imbalance_names_the_call_only_the_slowest_rank_makes():
    """Rank 0 deletes the shared file (POSIX unlink, 2 s of metadata) while the others wait."""
    records = _own_records(4, r0={"unlinks": 1, "meta_time": 2.0})
    p = profile(4, 20.0, io={"posix_write": [1.0] * 4, "posix_meta": [2.0, 1.0, 0.5, 0.0]}, posix=records)
    f = one(p, "LOAD-IMBALANCE")
    assert ("Rank 0 makes calls the others do not, or fewer of: 1 POSIX unlink (the other ranks 0 on "
            "average) on /scratch/ior/testFile.") in f.statement
    code = [r.text for r in f.recommendations if r.kind == "code"]
    assert code and code[0].startswith("Rank 0 alone makes 1 POSIX unlink while the other ranks wait")


def test_no_io_finding_saves_more_than_the_slowest_rank_s_io_time():
    """An I/O finding whose estimate (12 s) exceeds the slowest rank's I/O time (3 s) is cut to it and
    says so; a finding about computation or waits outside I/O calls is not."""
    facts = facts_of(profile(2, 20.0, io={"posix_write": [1.0, 3.0]}), RuleConfig())

    def detect(_facts, _cfg):
        yield Hit(time_lost=12.0)

    def words(_hit, _facts, _cfg):
        return Words("statement", [], [])

    (io,) = explained("TIME-IO-BOUND", detect, words)(facts, RuleConfig())
    assert io.time_lost == 3.0 and io.notes == (
        "The estimate, 12 s, is cut to 3 s: faster I/O cannot save more than the slowest rank's I/O time.",)
    (wait,) = explained("LOAD-IO-STAGGERED", detect, words, "wait")(facts, RuleConfig())
    assert wait.time_lost == 12.0 and not wait.notes


# --- computation load balance --------------------------------------------------------------


def test_compute_imbalance_is_found_from_the_mpi_wait():
    """4 ranks in a 10 s run; rank 0 waits 0.5 s in collectives, the others 2.5 s: rank 0 computes
    9.5 s, the average rank 8 s, so the run loses 1.5 s to the imbalance (POP's LB = 8 / 9.5)."""
    p = profile(4, 10.0, mpi={"mpi_coll": [0.5, 2.5, 2.5, 2.5]})
    f = one(p, "LOAD-COMPUTE-IMBALANCE")
    ev = evidence(f)
    assert ev["time_lost"] == pytest.approx(1.5) and ev["load_balance"] == pytest.approx(8 / 9.5)
    assert ev["max_compute"] == pytest.approx(9.5) and ev["mean_compute"] == pytest.approx(8.0)
    assert ev["others_mpi"] == pytest.approx(2.5)
    assert f.subjects[0].name == "rank 0" and f.severity == Severity.WARNING
    assert "rank 0 computes 9.5 s" in f.statement and "2.5 s on average in MPI" in f.statement
    # without a trace, the finding says how to record one, with the run's own command
    trace = [r.snippet for r in f.recommendations if r.kind == "investigate"]
    assert trace == ["pario run --trace --log traced.pario -- mpirun -np 4 /apps/sim -i in.nml"]


@pytest.mark.parametrize(
    "coll",
    [[2.5, 2.5, 2.5, 2.5], [2.2, 2.5, 2.5, 2.5]],  # balanced; 0.225 s lost, under 5% of the 10 s run
    ids=["balanced", "under-threshold"],
)
def test_compute_imbalance_silent_when_balanced(coll):
    assert "LOAD-COMPUTE-IMBALANCE" not in ids(profile(4, 10.0, mpi={"mpi_coll": coll}))


def test_compute_imbalance_needs_mpi_time():
    """A Darshan log without APMPI records no MPI time: computation cannot be told from waiting."""
    p = profile(4, 10.0, source="darshan", io={"posix_write": [0.1, 3.0, 3.0, 3.0]})
    assert "LOAD-COMPUTE-IMBALANCE" not in ids(p)


# --- thresholds -----------------------------------------------------------------------------


def test_config_from_toml_and_json(tmp_path):
    toml = tmp_path / "d.toml"
    toml.write_text(
        'fpp_min_files = 64\n[diagnosis]\nsmall_request_bytes = 10240\ndisabled_rules = ["DATA-NO-IO"]\n'
    )
    cfg = load_config(toml)
    assert (
        cfg.fpp_min_files == 64 and cfg.small_request_bytes == 10240 and cfg.disabled_rules == ("DATA-NO-IO",)
    )
    js = tmp_path / "d.json"
    js.write_text(json.dumps({"load_min_lost_share": 0.1, "cb_cycles_min": 4}))
    cfg = load_config(js)
    assert cfg.load_min_lost_share == 0.1 and cfg.cb_cycles_min == 4
    assert load_config(None) == RuleConfig()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"nope": 1}', "unknown threshold 'nope'"),
        ('{"small_request_bytes": 5000}', "small_request_bytes must be one of"),
        ('{"load_min_lost_share": 1.5}', "between 0 and 1"),
        ('{"fpp_min_files": "many"}', "must be an integer"),
        ('{"disabled_rules": "IO-SMALL-WRITES"}', "list of strings"),
        ("fpp_min_files = = 3", "not valid TOML"),
        ('{"fpp_min_files": 3', "not valid JSON"),
    ],
)
def test_bad_config_is_one_clear_error(tmp_path, text, words):
    path = tmp_path / "bad.cfg"
    path.write_text(text)
    with pytest.raises(ParioError, match=words):
        load_config(path)


def test_messages_follow_the_thresholds():
    """The statement is formatted from the config fields, never from retyped numbers."""
    recs = [
        {
            "id": 1,
            "rank": 0,
            "name": "/data/a",
            "writes": 1000,
            "bytes_written": 1000 * 5000,
            "size_write_1k_10k": 1000,
            "write_time": 1.0,
        }
    ]
    p = profile(1, 10.0, io={"posix_write": [1.0]}, posix=recs)
    assert "at most 100 KiB" in one(p, "IO-SMALL-WRITES").statement
    assert (
        "at most 10 KiB" in one(p, "IO-SMALL-WRITES", make_config({"small_request_bytes": 10240})).statement
    )
    assert "IO-SMALL-WRITES" not in ids(p, make_config({"small_request_bytes": 1024}))
    assert "IO-SMALL-WRITES" not in ids(p, make_config({"disabled_rules": ["IO-SMALL-WRITES"]}))


# --- the catalogue and the docs -------------------------------------------------------------


def test_catalogue_invariants():
    families = {"requests", "load", "interfaces", "time", "mpiio", "scaling", "data", "run", "libraries",
                "trace"}
    fields = {f[0] for f in field_info()}
    for rid, r in RULES.items():
        assert rid == r.id and r.family in families
        assert rid.replace("-", "").isalnum() and rid.upper() == rid
        assert set(r.config_keys) <= fields
        assert r.func.__doc__, f"{rid} has no docstring"
    assert len(RULES) >= 25


def test_every_rule_and_threshold_is_documented():
    text = (DOCS / "diagnosis.md").read_text()
    missing_rules = [rid for rid in RULES if f"`{rid}`" not in text]
    missing_fields = [name for name, *_ in field_info() if f"`{name}`" not in text]
    assert not missing_rules and not missing_fields, (missing_rules, missing_fields)


# --- rendering ------------------------------------------------------------------------------


def _small_writes(name: str, fid: int = 1) -> dict:
    """Rank 0's record of file ``name``: 5000 writes of 64 bytes in 3 s (IO-SMALL-WRITES)."""
    return {"id": fid, "rank": 0, "name": name, "writes": 5000, "bytes_written": 5000 * 64,
            "size_write_0_100": 5000, "write_time": 3.0}


def test_renderers_treat_log_strings_as_text_and_json_is_strict():
    name = "/data/[bold red]not markup[/]|pipe"
    recs = [_small_writes(name)]
    p = profile(1, 10.0, io={"posix_write": [3.0]}, posix=recs)
    findings = diagnose(p)
    console = Console(record=True, width=200)
    console.print(findings_renderable(findings, title="t"))
    assert "[bold red]not markup[/]" in console.export_text()
    md = findings_markdown(findings)
    assert "IO-SMALL-WRITES" in md and "[bold red]not markup[/]" in md
    doc = diagnosis_dict([(p, findings)])
    text = json.dumps(doc, allow_nan=False)
    assert json.loads(text)["logs"][0]["findings"][0]["id"] == findings[0].id
    only_crit = diagnosis_dict([(p, findings)], min_severity=Severity.CRITICAL)
    assert all(f["severity"] == "critical" for f in only_crit["logs"][0]["findings"])


def threshold_table() -> str:
    """The thresholds table of docs/diagnosis.md, from RuleConfig (the doc must show the real defaults)."""
    users: dict[str, list[str]] = {}
    for r in RULES.values():
        for key in r.config_keys:
            users.setdefault(key, []).append(r.id)
    rows = ["| threshold | default | unit | meaning | read by |", "|---|---|---|---|---|"]
    for name, default, unit, doc in field_info():
        if isinstance(default, tuple):
            shown = ", ".join(f"`{x}`" for x in default) if default else "(none)"
        else:
            shown = repr(default)
        rows.append(f"| `{name}` | {shown} | {unit} | {doc} | {', '.join(users.get(name, [])) or 'all'} |")
    return "\n".join(rows) + "\n"


def test_file_subjects_are_named_below_their_common_directory():
    recs = [
        {
            "id": 1 + r,
            "rank": r,
            "name": f"/lus/scratch/project/run-0042/out.{r}",
            "writes": 5000,
            "bytes_written": 5000 * 64,
            "size_write_0_100": 5000,
            "write_time": 3.0,
        }
        for r in range(2)
    ]
    found = one(profile(2, 10.0, io={"posix_write": [3.0, 3.0]}, posix=recs), "IO-SMALL-WRITES")
    # the model keeps full paths; only the terminal table shortens them
    assert {s.name for s in found.subjects} == {f"/lus/scratch/project/run-0042/out.{r}" for r in range(2)}
    console = Console(record=True, width=100)
    console.print(findings_renderable([found], title="t"))
    text = console.export_text()
    assert "in /lus/scratch/project/run-0042/" in text
    cells = [line.strip("│ ").split()[0] for line in text.splitlines() if "out." in line]
    assert sorted(c for c in cells if c.startswith("out.")) == ["out.0", "out.1"]
    assert "run-0042/out.0" in findings_markdown([found])  # markdown keeps the full names


def test_thresholds_table_shows_the_defaults():
    text = (DOCS / "diagnosis.md").read_text()
    table = text.split("<!-- BEGIN thresholds -->\n", 1)[1].split("<!-- END thresholds -->", 1)[0]
    assert table == threshold_table()


def test_the_profiler_s_own_log_is_not_evidence():
    """Writes to the log file itself (or its temporary name) are the profiler's, not the application's."""
    recs = [_small_writes(name, i + 1) for i, name in enumerate(("synthetic-1.log", "synthetic-1.log.tmp42"))]
    p = profile(1, 10.0, io={"posix_write": [6.0]}, posix=recs)
    assert "IO-SMALL-WRITES" not in ids(p)
    assert "IO-SMALL-WRITES" in ids(
        profile(1, 10.0, io={"posix_write": [6.0]}, posix=[dict(recs[0], name="/data/out.log")])
    )


@pytest.mark.slow
def test_a_large_profile_gives_the_findings_it_was_built_with():
    """200 000 POSIX records (NumPy-built, no log file): each rank writes its own files in small
    pieces, partly backwards and twice over, and every rank reads one shared input file in full.

    The rules take their fast paths here (a million-record log must be diagnosed in a second);
    what they find is fixed by construction.
    """
    nprocs, per_rank = 20_000, 10
    n = nprocs * per_rank
    rank = np.repeat(np.arange(nprocs), per_rank)
    writes = np.full(n, 100)
    own = {
        "id": np.arange(1, n + 1, dtype=np.uint64),
        "rank": rank,
        "name": [f"/scratch/run/rank{r}/part{k}.dat" for r in range(nprocs) for k in range(per_rank)],
        "opens": np.ones(n, dtype=np.int64),
        "writes": writes,
        "seq_writes": np.full(n, 40),  # 59 of the 100 writes go backwards (the first is neither)
        "size_write_0_100": writes,
        "bytes_written": writes * 64,
        "max_byte_written": np.full(n, 50 * 64 - 1),  # each byte written twice
        "write_time": np.full(n, 0.01),
        "meta_time": np.full(n, 0.001),
    }
    ignored = 2_000  # the MPI library's shared objects: not the application's files
    libs = {
        "id": np.arange(n + 1, n + 1 + ignored, dtype=np.uint64),
        "rank": np.arange(ignored) % nprocs,
        "name": [f"/usr/lib64/openmpi/lib{i}.so" for i in range(ignored)],
        "opens": np.ones(ignored, dtype=np.int64),
    }
    shared_input = {  # one record reduced over all ranks, each reading the whole 1 MiB file
        "id": np.array([n + ignored + 1], dtype=np.uint64),
        "rank": np.array([-1]),
        "name": ["/scratch/run/input.dat"],
        "nranks": np.array([nprocs]),
        "opens": np.array([nprocs]),
        "reads": np.array([nprocs]),
        "seq_reads": np.array([0]),
        "size_read_1m_4m": np.array([nprocs]),
        "bytes_read": np.array([nprocs * MiB]),
        "max_byte_read": np.array([MiB - 1]),
        "read_time": np.array([nprocs * 0.02]),
        "fastest_rank": np.array([7]),
        "fastest_rank_time": np.array([0.01]),
        "slowest_rank": np.array([11]),
        "slowest_rank_time": np.array([0.04]),
    }
    posix = pd.concat([pd.DataFrame(d) for d in (own, libs, shared_input)], ignore_index=True)
    posix = posix.fillna(0).astype({"id": np.uint64, "rank": np.int64})
    p = profile(
        nprocs,
        10.0,
        io={"posix_write": np.full(nprocs, 0.1), "posix_read": np.full(nprocs, 0.02)},
    )
    p.files["posix"] = posix
    assert len(posix) == n + ignored + 1

    found = {f.id: f for f in diagnose(p)}
    assert set(found) == {
        "IO-SMALL-WRITES",
        "IO-RANDOM-ACCESS",
        "IO-REDUNDANT-WRITES",
        "IO-REDUNDANT-READS",
        "IFACE-FILE-PER-PROCESS",
    }
    ev = {f: {m.name: m.value for m in found[f].evidence} for f in found}
    assert ev["IO-SMALL-WRITES"]["small_writes"] == n * 100
    assert ev["IO-SMALL-WRITES"]["share_of_requests"] == 1.0
    assert ev["IO-RANDOM-ACCESS"]["backward"] == n * 59 and ev["IO-RANDOM-ACCESS"]["requests"] == n * 100
    assert ev["IO-REDUNDANT-WRITES"]["files"] == n
    assert ev["IO-REDUNDANT-WRITES"]["repeated_bytes"] == n * 50 * 64
    assert ev["IO-REDUNDANT-READS"]["files"] == 1 and ev["IO-REDUNDANT-READS"]["files_across_ranks"] == 1
    assert ev["IO-REDUNDANT-READS"]["repeated_bytes"] == (nprocs - 1) * MiB
    assert ev["IFACE-FILE-PER-PROCESS"]["files"] == n and ev["IFACE-FILE-PER-PROCESS"]["ranks"] == nprocs
    # every rank does the same: each finding's slowest rank spends what one rank spends
    assert ev["IO-SMALL-WRITES"]["time_at_stake"] == pytest.approx(per_rank * 0.01)
    assert ev["IO-RANDOM-ACCESS"]["time_at_stake"] == pytest.approx(per_rank * 0.01 * 0.59)
    assert ev["IFACE-FILE-PER-PROCESS"]["time_at_stake"] == pytest.approx(per_rank * 0.001)
    subjects = found["IO-SMALL-WRITES"].subjects
    assert len(subjects) == RuleConfig().top_subjects and found["IO-SMALL-WRITES"].subjects_total == n
    assert all(s.name.startswith("/scratch/run/rank") for s in subjects)
    assert found["IO-REDUNDANT-READS"].subjects[0].name == "/scratch/run/input.dat"


def test_top_rows_are_the_head_of_a_stable_descending_sort() -> None:
    """_table_ops.top's shortcut (no full sort of a large table) gives the rows of Python's stable
    sort, descending by each key in turn, ties in the table's order; on one key or several."""
    from pario.diagnosis._table_ops import top
    from pario.table import Table

    rng = np.random.default_rng(3)
    for signed in (True, False):
        n = 9000
        a = rng.integers(-20, 20, n) if signed else rng.integers(0, 30, n).astype(np.uint64)
        b, c = rng.random(n).round(1), rng.integers(0, 5, n)
        t = Table({"a": a, "b": b, "c": c, "row": np.arange(n)})
        for keys in (["a", "b", "c"], ["a"]):
            expect = sorted(range(n), key=lambda i: tuple(-float(t[k][i]) for k in keys))[:25]
            assert top(t, keys if len(keys) > 1 else keys[0], 25)["row"].tolist() == expect


def test_metadata_calls_are_counted_at_the_outermost_layer() -> None:
    """4 ranks open one file collectively through MPI-IO, 300 times each, and ROMIO opens and seeks
    it beneath with POSIX: the calls are the MPI-IO ones, counted once (the POSIX opens and seeks
    beneath them are not calls of the program's)."""
    n, runtime = 4, 10.0
    mpiio = [{"id": 7, "rank": -1, "name": "/scratch/out.dat", "coll_opens": 1200, "meta_time": 8.0,
              "bytes_written": 4 * MiB, "write_time": 1.0}]
    posix = [{"id": 7, "rank": -1, "name": "/scratch/out.dat", "opens": 1200, "seeks": 12000,
              "meta_time": 6.0, "bytes_written": 4 * MiB, "write_time": 0.9}]
    p = profile(n, runtime, io={"mpiio_meta": [2.0] * n, "mpiio_write": [0.25] * n}, mpiio=mpiio, posix=posix)
    f = one(p, "IFACE-METADATA-HEAVY")
    ev = {m.name: m.value for m in f.evidence}
    assert (ev["opens"], ev["seeks"]) == (1200, 0)
    assert "(1,200 opens and 0 stats on 1 file for 4 MiB of data)" in f.statement
    assert [[m.value for m in s.metrics] for s in f.subjects] == [[8.0, 1200]]


def test_a_merged_finding_counts_every_file_whatever_top_subjects() -> None:
    """Three per-file findings of one rule merged: 3 subjects in all, also when none is listed."""
    from pario.diagnosis import Finding
    from pario.diagnosis.registry import merged

    fs = [Finding(id="MPIIO-CB-CYCLES", title="t", family="mpiio", severity=Severity.INFO,
                  statement=f"file {i}.", evidence=(), recommendations=(), time_lost=1.0 + i,
                  subjects_total=1) for i in range(3)]
    for top in (0, 1, 5):
        (f,) = merged(fs, make_config({"top_subjects": top}), 100.0)
        assert f.subjects_total == 3 and f.time_lost == 6.0


@pytest.mark.parametrize(("runtime", "expected"), [(0.052, Severity.INFO), (0.5, Severity.WARNING),
                                                   (100.0, Severity.CRITICAL)])
def test_severity_weighs_seconds_as_well_as_shares(runtime: float, expected: Severity) -> None:
    """90% of the run in I/O: critical on a 100 s run, a warning on 0.5 s, information on 52 ms
    (severity_critical_seconds 1 s, severity_warning_seconds 0.1 s)."""
    n = 4
    posix = [{"id": 1, "rank": r, "name": f"/scratch/out.{r}", "writes": 100, "bytes_written": 100 * MiB,
              "write_time": 0.9 * runtime} for r in range(n)]
    p = profile(n, runtime, io={"posix_write": [0.9 * runtime] * n}, posix=posix)
    f = one(p, "TIME-IO-BOUND")
    assert f.time_share == pytest.approx(0.9, abs=0.02) and f.severity == expected


def test_a_sparse_file_is_sized_by_the_bytes_written() -> None:
    """A netCDF-4 run: 8 ranks write 160 MiB in 256-byte pieces at offsets up to 40 GiB of a file
    on one OST.  What loads the OSTs is the 160 MiB, below lustre_large_file_bytes (1 GiB): no
    stripe count is asked for, where the extent alone (40 GiB) asked for more stripes."""
    n = 8
    recs = [{"id": 7, "rank": r, "name": "/lus/scratch/run/out.nc", "writes": 81920,
             "bytes_written": 20 * MiB, "write_time": 2.0, "max_byte_written": 40 * GiB - 1}
            for r in range(n)]
    p = profile(n, 20.0, io={"posix_write": [2.0] * n}, posix=recs, striping={7: (MiB, 1)})
    assert _layout(p, 7).file_size == 160 * MiB
    assert "LUSTRE-STRIPE-COUNT" in RULES and "LUSTRE-STRIPE-COUNT" not in ids(p)
    # written whole, the same file is 40 GiB and asks for more stripes
    for r in recs:
        r["bytes_written"] = 5 * GiB
    p = profile(n, 20.0, io={"posix_write": [2.0] * n}, posix=recs, striping={7: (MiB, 1)})
    assert _layout(p, 7).file_size == 40 * GiB and "LUSTRE-STRIPE-COUNT" in ids(p)


def test_the_readme_counts_the_rules() -> None:
    """README.md says how many rules there are: as many as the catalogue holds."""
    readme = (DOCS.parent / "README.md").read_text()
    assert f"The {len(RULES)} rules and their thresholds" in readme
