"""I/O an outer record hides, and I/O no analysed module sees (issue "Right on real Darshan logs").

- An E3SM-IO log (tests/data/darshan-built, recipe in tests/darshan_recipes.py): its PNETCDF_FILE
  record has every counter at -1 over 350,932 s of MPI-IO writes.  The outermost layer must not
  hide the layer beneath: the time and bytes are MPI-IO's, the run is I/O-bound, and a finding
  says the library record is blind.
- An IOR run over DAOS's DFS API (built byte by byte, tests/darshan_builder.py): its I/O is in
  DFS and DAOS records only, which pario reads as layers of their own: the report's headline, the
  diagnosis and the survey count it (DFS's time and bytes, once), and find nothing missing.
- A log with a module id the reader library does not know: its I/O may be missing, and the
  headline, the diagnosis and the survey say so instead of finding nothing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from darshan_builder import ID_DFUSE, DarshanLog, Record, ior_daos_log
from darshan_recipes import (
    BUILT_DIR,
    E3SM_BYTES,
    E3SM_MPIIO_WRITE_TIME,
    E3SM_NPROCS,
    E3SM_OUT_ID,
    E3SM_RUNTIME,
    RECIPES,
)
from pario.diagnosis import RULES, analyze, diagnose
from pario.log import read_log
from pario.model.rankio import blind_library_files
from pario.survey.discover import LogFile
from pario.survey.row import survey_log

DATA = Path(__file__).parent / "data"
E3SM = BUILT_DIR / "e3sm-pnetcdf-no-counters.darshan"
# the MPI-IO record's write and metadata time, rank 0's read of its input file (POSIX) and of its
# standard output (STDIO), over all ranks: the POSIX records of the output file are beneath MPI-IO
E3SM_IO_TIME = E3SM_MPIIO_WRITE_TIME + 1_024.0 + (0.8 + 0.02) + 0.004
E3SM_WRITTEN = E3SM_BYTES + 5_936


def _survey(path: Path) -> dict[str, object]:
    st = path.stat()
    return survey_log(LogFile(str(path), st.st_size, st.st_mtime_ns, dt.date(2024, 1, 1)), 0.0)


def test_e3sm_recipe_gives_the_committed_log(tmp_path: Path) -> None:
    from pario.log.darshan_writer import write_darshan_log

    out = tmp_path / E3SM.name
    write_darshan_log(RECIPES[E3SM.name](), out)
    assert out.read_bytes() == E3SM.read_bytes()


def test_pnetcdf_record_without_counters_does_not_hide_mpiio() -> None:
    profile = read_log(E3SM)
    pnetcdf = profile.layer("pnetcdf_file")
    assert len(pnetcdf) == 1 and float(np.asarray(pnetcdf["wait_time"])[0]) == -1.0
    assert blind_library_files(profile.files).tolist() == [E3SM_OUT_ID]
    run = analyze(profile)
    assert run.io.overall.write.bytes.value == E3SM_WRITTEN
    assert run.io.overall.total.time_total.value == pytest.approx(E3SM_IO_TIME, rel=1e-12)
    share = E3SM_IO_TIME / E3SM_NPROCS / E3SM_RUNTIME
    assert run.shares.io.value == pytest.approx(share, rel=1e-12)
    assert run.shares.verdict.startswith(
        f"This run is I/O-bound: {share:.1%} of the run time is in I/O. Faster I/O saves the run at most ")
    # per rank, the outermost time is at least each inner layer's
    outer = profile.per_rank_io().time_outermost().table["time"]
    for layer in ("mpiio", "posix", "stdio"):
        inner = profile.per_rank_io().layer(layer).table["time"]
        assert np.all(outer >= inner - 1e-9), layer
    assert any("library records of 1 file hold less than half" in n for n in run.notes)


def test_pnetcdf_record_without_counters_findings() -> None:
    findings = {f.id: f for f in diagnose(read_log(E3SM))}
    assert "TIME-IO-BOUND" in findings and findings["TIME-IO-BOUND"].severity.label == "critical"
    blind = findings["DATA-LIBRARY-NO-COUNTERS"]
    ev = {m.name: m.value for m in blind.evidence}
    assert ev == {"files": 1, "library_time": 0.0, "beneath_time": E3SM_MPIIO_WRITE_TIME + 1_024.0}
    assert [s.name for s in blind.subjects] == ["/lustre/scratch/e3sm/f_case_866x72_16p.nc"]


def test_pnetcdf_record_without_counters_survey_row() -> None:
    row = _survey(E3SM)
    assert row["bytes_written"] == E3SM_WRITTEN
    assert row["io_share"] == pytest.approx(E3SM_IO_TIME / E3SM_NPROCS / E3SM_RUNTIME, rel=1e-12)
    assert "TIME-IO-BOUND" in [f["id"] for f in row["findings"]]


@pytest.mark.parametrize("log", sorted((DATA / "darshan-logs").glob("*.darshan")), ids=lambda p: p.name)
def test_complete_library_records_keep_their_time(log: Path) -> None:
    """The real HDF5 and PnetCDF logs' library records are not blind (their time is at least half
    of the calls beneath: within timer differences, or more)."""
    assert blind_library_files(read_log(log).files).size == 0


# ---------------------------------------------------------------------------
# I/O through DAOS's APIs (read), and in modules pario does not analyse
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dfs_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ior -a DFS``: its data file is written through libdfs only (no POSIX record of it)."""
    built = ior_daos_log()
    built = dataclasses.replace(built, records=[r for r in built.records
                                                if not (r.module == "POSIX" and r.rec_id == ID_DFUSE)])
    return built.write(tmp_path_factory.mktemp("dfs") / "ior-dfs-only.darshan")


#: The DFS-only run's I/O time over all ranks: rank 0's configuration file (POSIX), its CSV file and
#: standard output (STDIO), DFS's /testFile and / (the DAOS records of both are beneath DFS).
DFS_ONLY_IO_TIME = (0.001 + 0.0025) + (0.002 + 0.001 + 0.003) + (2.5 + 5.0 + 0.125 + 0.02)
DFS_ONLY_SHARE = DFS_ONLY_IO_TIME / 4 / 60.5


def test_dfs_only_run_headline_counts_dfs(dfs_only: Path) -> None:
    run = analyze(read_log(dfs_only))
    assert run.shares.io.value == pytest.approx(DFS_ONLY_SHARE, rel=1e-12)
    assert run.shares.io_bound is False
    assert run.shares.verdict == (
        f"This run is not I/O-bound: {DFS_ONLY_SHARE:.1%} of the run time is in I/O (Darshan logs record no "
        "MPI time, so computation and MPI cannot be told apart).")
    dfs = next(lay for lay in run.io.layers if lay.layer == "dfs")
    assert (dfs.read.bytes.value, dfs.write.bytes.value) == (64 * 2**20, 64 * 2**20)
    assert (dfs.read.time_total.value, dfs.write.time_total.value) == (2.5, 5.0)
    assert dfs.meta.time_total.value == pytest.approx(0.125 + 0.02, rel=1e-12)
    overall = run.io.overall
    assert overall.write.bytes.value == 64 * 2**20 + 2048 + 5000
    assert overall.read.bytes.value == 64 * 2**20 + 1234
    assert overall.total.time_total.value == pytest.approx(DFS_ONLY_IO_TIME, rel=1e-12)


def test_dfs_only_run_gets_no_data_finding(dfs_only: Path, pario_cmd: list[str]) -> None:
    done = subprocess.run([*pario_cmd, "diagnose", "--json", str(dfs_only)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    findings = [f["id"] for f in json.loads(done.stdout)["logs"][0]["findings"]]
    assert not [f for f in findings if f.startswith("DATA-")]
    row = _survey(dfs_only)
    assert not [f["id"] for f in row["findings"] if f["id"].startswith("DATA-")]
    assert row["io_share"] == pytest.approx(DFS_ONLY_SHARE, rel=1e-12)
    # each layer's bytes, nested calls counted in each: DAOS holds DFS's again
    assert (row["dfs_bytes_read"], row["dfs_bytes_written"]) == (64 * 2**20, 64 * 2**20)
    assert (row["daos_bytes_read"], row["daos_bytes_written"]) == (64 * 2**20, 64 * 2**20)
    assert row["bytes_written"] == 64 * 2**20 + 2048 + 5000
    # requests: the configuration file's 2 POSIX reads and DFS's 128 requests (DAOS's are DFS's)
    assert (row["requests"], row["small_requests"]) == (2 + 128, 2)


def test_a_store_written_before_dfs_columns_still_reads(dfs_only: Path, tmp_path: Path) -> None:
    """A part file of rows without the dfs_* and daos_* columns (a store written before they
    existed) reads beside a new one: its rows have them NULL."""
    import pyarrow.parquet as pq

    from pario.survey.store import query, to_table, write_rows

    new = _survey(dfs_only)
    store = tmp_path / "store"
    write_rows(str(store), [new], "new")
    old_row = {**new, "path": "/old/log.darshan"}
    table = to_table([old_row])
    old = table.drop_columns([c for c in table.column_names if c.startswith(("dfs_", "daos_"))] + ["month"])
    pq.write_table(old, store / "jobs" / f"month={new['month']}" / "old.parquet")
    _, rows = query(str(store), "SELECT path, dfs_bytes_written, bytes_written FROM jobs ORDER BY path")
    written = 64 * 2**20 + 7048
    assert rows == [("/old/log.darshan", None, written), (str(dfs_only), 64 * 2**20, written)]


@pytest.fixture(scope="module")
def unknown_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-rank log whose rank 0 wrote 4 KiB through POSIX in 1 s, and a module id 40 that the reader
    library does not know (a newer Darshan's)."""
    built = DarshanLog(nprocs=2, exe="/bin/app", names=[(11, "/a")], mounts=[("xfs", "/")],
                       records=[Record("POSIX", 11, 0, {"POSIX_BYTES_WRITTEN": 4096, "POSIX_WRITES": 1},
                                       {"POSIX_F_WRITE_TIME": 1.0})],
                       raw_modules={40: (2, b"newer module " * 20)})
    return built.write(tmp_path_factory.mktemp("unknown") / "newer.darshan")


def test_unknown_module_run_headline_says_io_is_not_measured(unknown_module: Path) -> None:
    run = analyze(read_log(unknown_module))
    assert run.shares.io_bound is None
    assert run.shares.io.value == pytest.approx(1.0 / 2 / 60.5, rel=1e-12)
    assert run.shares.verdict == (
        "Whether this run is I/O-bound cannot be told: the I/O in Darshan's unknown module 40 records is not "
        f"measured, and the I/O pario measures takes {1.0 / 2 / 60.5:.1%} of the time.")


def test_unknown_module_run_gets_a_finding(unknown_module: Path, pario_cmd: list[str]) -> None:
    done = subprocess.run([*pario_cmd, "diagnose", "--json", str(unknown_module)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    findings = {f["id"]: f for f in json.loads(done.stdout)["logs"][0]["findings"]}
    found = findings["DATA-MODULES-NOT-ANALYSED"]
    assert found["severity"] == "warning"
    assert found["statement"].startswith("This log holds I/O that pario does not measure: unknown module 40 "
                                         "(data of a module the Darshan reader library does not know")
    row = _survey(unknown_module)
    assert ("DATA-MODULES-NOT-ANALYSED", "warning") in [(f["id"], f["severity"]) for f in row["findings"]]


def test_apxc_is_named_as_info_while_apmpi_and_heatmap_are_read() -> None:
    """HEATMAP (I/O over time) and APMPI (MPI time per rank) are analysed; APXC, Cray's network
    counters, is still named (tests/test_darshan_heatmap_apmpi.py reads the other two)."""
    heatmap = read_log(DATA / "darshan-logs" / "mpi-io-test-x86_64-3.5.0.darshan")
    assert heatmap.job.metadata["modules_not_analysed"] == []
    assert "DATA-MODULES-NOT-ANALYSED" not in {f.id for f in diagnose(heatmap)}
    apmpi = read_log(DATA / "darshan-logs" / "mpi-io-test-apmpi-apxc.darshan")
    found = {f.id: f for f in diagnose(apmpi)}["DATA-MODULES-NOT-ANALYSED"]
    assert found.severity.label == "info"
    assert found.statement == "pario reads past these modules of the log: APXC (Cray Aries network counters)."


def test_a_log_without_skipped_modules_gets_no_such_finding() -> None:
    """imbalanced-io's modules (POSIX, MPI-IO, LUSTRE, STDIO) are all read: none is left to name."""
    profile = read_log(DATA / "darshan-logs" / "imbalanced-io.darshan")
    assert profile.job.metadata["modules_not_analysed"] == []  # what the rule reads
    assert "DATA-MODULES-NOT-ANALYSED" in RULES
    assert "DATA-MODULES-NOT-ANALYSED" not in {f.id for f in diagnose(profile)}
