"""Diagnosis of the real Darshan logs in ../shared/darshan-logs (written by others, on real machines).

Also checks that docs/diagnosis-examples.md shows what the tool says today: its
generated blocks are ``pario diagnose --markdown`` of each log.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from darshan_logs import ALL_LOGS, LOGS
from pario.diagnosis import RULES, diagnose
from pario.log import read_log
from pario.report.findings import diagnosis_dict, findings_markdown, log_summary
from rule_helpers import evidence, silent_until

DOCS = Path(__file__).resolve().parents[1] / "docs"
ALL = ALL_LOGS

_cache: dict[str, list] = {}


def findings(name: str):
    if name not in _cache:
        _cache[name] = diagnose(read_log(LOGS / name))
    return _cache[name]


def ids(name: str) -> list[str]:
    return [f.id for f in findings(name)]


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_every_log_gives_well_formed_findings(path):
    fs = findings(path.name)
    for f in fs:
        assert f.id in RULES and f.statement and f.evidence and f.recommendations and f.time_basis
    json.dumps(diagnosis_dict([(read_log(path), fs)]), allow_nan=False)
    text = json.dumps([f.statement for f in fs] + [n for f in fs for n in f.notes])
    # Darshan's own log-writing hints (romio_no_indep_rw=true;cb_nodes=4) are never evidence
    assert "romio_no_indep_rw" not in text and "cb_nodes=4" not in text


def test_imbalanced_io_imbalance_and_its_single_ost_cause():
    fs = {f.id: f for f in findings("imbalanced-io.darshan")}
    imb = fs["LOAD-IMBALANCE"]
    assert "single OST" in imb.statement
    assert any("3981085427" in n and "single OST" in n and "only rank doing" in n for n in imb.notes)
    assert any(
        r.kind == "striping" and r.snippet.startswith("lfs setstripe -c 16") for r in imb.recommendations
    )
    ev = {m.name: m.value for m in imb.evidence}
    assert ev["time_lost"] == pytest.approx(231, abs=1) and ev["load_balance"] == pytest.approx(
        0.83, abs=0.01
    )
    # the cause, as findings of their own
    stripes = fs["LUSTRE-STRIPE-COUNT"]
    assert "3981085427" in stripes.statement and "1 OST" in stripes.statement
    assert {m.name: m.value for m in stripes.evidence}["suggested"] == 16
    # pario tune would search the striping of that file, read back (the log has no launch command)
    (auto,) = [r for r in stripes.recommendations if r.kind == "autotune"]
    assert auto.snippet == ("pario tune --budget 20 --objective read-bw --files 3981085427 -- "
                            "mpirun -np 496 ${APP:?set APP to your program and its arguments}")
    assert "stripe count and size" in auto.text
    agg = fs["MPIIO-SINGLE-AGGREGATOR"]
    assert {m.name: m.value for m in agg.evidence}["aggregators"] == pytest.approx(1.0, abs=0.01)
    # the partial POSIX data is said first
    assert ids("imbalanced-io.darshan")[0] == "DATA-INCOMPLETE"
    assert "POSIX" in fs["DATA-INCOMPLETE"].statement
    # rank 0's log file: 956 writes and 176 flushes cost 113 s for 44 KiB
    lat = fs["IO-LATENCY-BOUND"]
    assert "1115354007" in lat.statement and "176 flushes" in lat.statement


def test_one_byte_hdf5_log_small_writes():
    f = next(f for f in findings("hdf5_diagonal_write_1_byte_dxt.darshan") if f.id == "IO-SMALL-WRITES")
    ev = {m.name: m.value for m in f.evidence}
    assert ev["small_writes"] == 40 and ev["all_writes"] == 40 and ev["mean_request"] < 400
    assert f.severity.label == "info"  # 37 µs of a 4 s run: said, not shouted
    assert any("H5Pset_meta_block_size" in r.snippet for r in f.recommendations)
    # the Python modules h5py loads are not the application's data
    assert all("site-packages" not in s.name for s in f.subjects)
    assert "IO-SMALL-READS" not in ids("hdf5_diagonal_write_1_byte_dxt.darshan")


def test_partial_stdio_log():
    fs = {f.id: f for f in findings("partial_data_stdio.darshan")}
    assert "STDIO" in fs["DATA-INCOMPLETE"].statement
    assert any("DARSHAN_MODMEM" in r.snippet for r in fs["DATA-INCOMPLETE"].recommendations)
    bulk = fs["IFACE-STDIO-BULK"]
    assert {m.name: m.value for m in bulk.evidence}["stdio_bytes"] >= 15 * 2**30


def test_empty_log_says_no_io():
    assert ids("empty_log.darshan") == ["DATA-NO-IO"]


def test_skew_app_single_aggregator_on_one_ost():
    got = set(ids("skew-app.darshan"))
    assert {"LUSTRE-STRIPE-COUNT", "MPIIO-SINGLE-AGGREGATOR", "MPIIO-CB-CYCLES"} <= got
    # balanced at the MPI-IO layer (753.1 to 753.6 s per rank): no load finding
    assert not {"LOAD-IMBALANCE", "LOAD-STRAGGLERS", "LOAD-FEW-RANKS"} & got


def test_treddy_independent_mpiio_on_nfs():
    """32 ranks, independent MPI-IO on NFS: 228 s in MPI-IO calls, 56 s in the POSIX calls beneath them."""
    name = "treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
    f = next(f for f in findings(name) if f.id == "MPIIO-INDEPENDENT-OVERHEAD")
    ev = {m.name: m.value for m in f.evidence}
    assert ev["file_system"] == "nfs" and ev["overhead_share"] == pytest.approx(0.75, abs=0.01)
    assert ev["mpiio_write_time"] == pytest.approx(172.0, abs=1) and ev["posix_write_time"] < 1.1
    assert f.statement.startswith("Independent MPI-IO writes") and "NFS" in f.statement
    assert any("parallel file system" in r.text for r in f.recommendations)


def test_small_lustre_file_is_not_asked_for_more_stripes():
    """mpi-io-test 3.5.0: a 64 MiB file on one OST is fine (below lustre_large_file_bytes, 1 GiB)."""
    profile = read_log(LOGS / "mpi-io-test-x86_64-3.5.0.darshan")
    (f,) = silent_until("LUSTRE-STRIPE-COUNT", profile, lustre_large_file_bytes=64 * 1024 * 1024)
    ev = evidence(f)
    assert (ev["file_size"], ev["stripe_count"], ev["ranks"]) == (64 * 1024 * 1024, 1, 4)


@pytest.mark.slow
def test_examples_doc_is_what_the_tool_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each generated block of docs/diagnosis-examples.md equals `pario diagnose --markdown` today."""
    text = (DOCS / "diagnosis-examples.md").read_text()
    blocks = dict(re.findall(r"<!-- BEGIN generated: (\S+) -->\n(.*?)<!-- END generated -->", text, re.S))
    assert set(blocks) == {p.name for p in ALL}
    root = DOCS.parent
    monkeypatch.chdir(root)  # the page names the logs as a user at the top of the clone would
    for path in ALL:
        p = read_log(path.relative_to(root))
        expected = findings_markdown(diagnose(p), title=log_summary(p), level=3)
        assert blocks[path.name] == expected, f"docs/diagnosis-examples.md is stale for {path.name}"


def test_amplification_without_chunked_datasets_is_not_blamed_on_fill_values() -> None:
    """hdf5_diagonal_write_1_byte: 10 files of 1 byte each, no chunked dataset.  With every file
    considered (library_min_bytes 0), the extra bytes are metadata and headers, not chunks written
    twice."""
    from pario.diagnosis import make_config

    cfg = make_config({"library_min_bytes": 0})
    (f,) = [f for f in diagnose(read_log(LOGS / "hdf5_diagonal_write_1_byte_dxt.darshan"), cfg)
            if f.id == "LIB-AMPLIFICATION"]
    assert "metadata, headers and padding outweigh the data" in f.statement
    assert "chunked" not in f.statement
    assert {m.name: m.value for m in f.evidence} == {"asked": 10.0, "moved": 15930.0, "ratio": 1593.0}


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
def test_zero_thresholds_find_only_what_is_there(path: Path) -> None:
    """With the request thresholds at 0, IO-MISALIGNED and IO-RANDOM-ACCESS still need one misaligned
    or backward request: never a finding of '0 of N', and no crash (IO-MISALIGNED indexed an empty
    list of alignments)."""
    from pario.diagnosis import make_config

    cfg = make_config({"misaligned_min_requests": 0, "misaligned_min_share": 0.0, "random_min_requests": 0,
                       "random_min_share": 0.0})
    for f in diagnose(read_log(path), cfg):
        ev = {m.name: m.value for m in f.evidence}
        if f.id == "IO-MISALIGNED":
            assert ev["misaligned"] >= 1
        if f.id == "IO-RANDOM-ACCESS":
            assert ev["backward"] >= 1


def test_ranks_that_write_a_file_each_are_not_told_to_write_a_file_each() -> None:
    """hdf5_diagonal_write_1_byte: 10 ranks write their own file each, one after the other (DXT).
    TRACE-SERIALISED-IO names the order, not the files, as what to change."""
    f = next(f for f in findings("hdf5_diagonal_write_1_byte_dxt.darshan") if f.id == "TRACE-SERIALISED-IO")
    (code,) = [r for r in f.recommendations if r.kind == "code"]
    assert code.text.startswith("The ranks already write one file each, and still take turns")
    assert "its own file" not in code.text


#: every Darshan log of the repository: the real ones, those built by tests/darshan_recipes.py and
#: those of kernel runs (tests/data/darshan-runs)
EVERY_DARSHAN_LOG = ALL + sorted((LOGS.parent / "darshan-built").glob("*.darshan")) \
    + sorted((LOGS.parent / "darshan-runs").glob("*.darshan"))


@pytest.mark.parametrize("path", EVERY_DARSHAN_LOG, ids=lambda p: p.name[:40])
def test_summarize_is_analyze_s_part_with_the_same_findings(path):
    """pario.diagnosis.summarize (what a survey row reads) gives analyze's job, time shares, POP
    metrics, I/O, totals and file table, and findings of the same ids, severities and time lost,
    without their words (the rules that explain what they detect say nothing: no statement,
    evidence, subjects or recommendations).  Both read the log without its trace, as a survey
    does (a DXT trace only gives the replay's factors a reason to be unavailable)."""
    from pario.diagnosis import analyze, summarize

    run = analyze(read_log(path, trace=False))
    row = summarize(read_log(path, trace=False))
    for part in ("job", "has_io", "shares", "pop", "io", "totals"):
        assert repr(getattr(row, part)) == repr(getattr(run, part)), part
    assert repr(row.files) == repr(run.files)
    assert {c: row.files[c].tolist() for c in row.files.columns} == \
        {c: run.files[c].tolist() for c in run.files.columns}
    assert [(f.id, f.severity, f.time_lost) for f in row.findings] == \
        [(f.id, f.severity, f.time_lost) for f in run.findings]
    unsaid = [f for f in row.findings if not f.statement]
    assert all(not (f.evidence or f.recommendations or f.subjects or f.notes) for f in unsaid)
    assert all(f.statement for f in run.findings)
    # the data caveats made as findings (not from a hit) keep their words; every other says nothing
    assert {f.family for f in row.findings if f.statement} <= {"data", "run"}
