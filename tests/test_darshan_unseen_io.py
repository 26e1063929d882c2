"""I/O an outer record hides, and I/O no analysed module sees (issue "Right on real Darshan logs").

- An E3SM-IO log (tests/data/darshan-built, recipe in tests/darshan_recipes.py): its PNETCDF_FILE
  record has every counter at -1 over 350,932 s of MPI-IO writes.  The outermost layer must not
  hide the layer beneath: the time and bytes are MPI-IO's, the run is I/O-bound, and a finding
  says the library record is blind.
- An IOR run over DAOS's DFS API (built byte by byte, tests/darshan_builder.py): its I/O is in
  DFS and DAOS records only, which pario does not analyse; the report's headline, the diagnosis
  and the survey say so instead of finding nothing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from darshan_builder import ID_DFUSE, ior_daos_log
from darshan_recipes import (
    BUILT_DIR,
    E3SM_BYTES,
    E3SM_MPIIO_WRITE_TIME,
    E3SM_NPROCS,
    E3SM_OUT_ID,
    E3SM_RUNTIME,
    RECIPES,
)
from pario.analysis.diagnosis import diagnose
from pario.analysis.io import profile_io
from pario.analysis.rankio import blind_library_files
from pario.analysis.run import analyze
from pario.log import read_log
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
    assert run.shares.verdict == f"This run is I/O-bound: {share:.1%} of the run time is in I/O."
    # per rank, the outermost time is at least each inner layer's
    outer = profile_io(profile).time_outermost().table["time"]
    for layer in ("mpiio", "posix", "stdio"):
        inner = profile_io(profile).layer(layer).table["time"]
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
    assert "TIME-IO-BOUND" in [f["id"] for f in row["findings"]]  # type: ignore[union-attr]


@pytest.mark.parametrize("log", sorted((DATA / "darshan-logs").glob("*.darshan")), ids=lambda p: p.name)
def test_complete_library_records_keep_their_time(log: Path) -> None:
    """The real HDF5 and PnetCDF logs' library records are not blind (their time is at least half
    of the calls beneath: within timer differences, or more)."""
    assert blind_library_files(read_log(log).files).size == 0


# ---------------------------------------------------------------------------
# I/O in modules pario does not analyse
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dfs_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ior -a DFS``: its data file is written through libdfs only (no POSIX record of it)."""
    built = ior_daos_log()
    built = dataclasses.replace(built, records=[r for r in built.records
                                                if not (r.module == "POSIX" and r.rec_id == ID_DFUSE)])
    return built.write(tmp_path_factory.mktemp("dfs") / "ior-dfs-only.darshan")


def test_dfs_only_run_headline_says_io_is_not_measured(dfs_only: Path) -> None:
    run = analyze(read_log(dfs_only))
    assert run.shares.bound is None
    io = run.shares.io.value
    assert io is not None and io < 0.001
    assert run.shares.verdict == (
        "Whether this run is I/O-bound cannot be told: the I/O in Darshan's DAOS and DFS records is not "
        f"measured, and the I/O pario measures takes {io:.1%} of the time.")


def test_dfs_only_run_gets_a_finding(dfs_only: Path, pario_cmd: list[str]) -> None:
    done = subprocess.run([*pario_cmd, "diagnose", "--json", str(dfs_only)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    findings = {f["id"]: f for f in json.loads(done.stdout)["logs"][0]["findings"]}
    found = findings["DATA-MODULES-NOT-ANALYSED"]
    assert found["severity"] == "warning"
    assert found["statement"].startswith("This log holds I/O that pario does not measure: DAOS (object I/O "
                                         "through DAOS's own API (libdaos), which bypasses POSIX); DFS (")
    commands = [r["snippet"] for r in found["recommendations"]]
    assert commands == [f"darshan-parser {dfs_only} | grep -E '^(DFS|DAOS)[[:space:]]'"]
    row = _survey(dfs_only)
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
    path = DATA / "darshan-logs" / "imbalanced-io.darshan"
    assert os.path.exists(path)
    assert "DATA-MODULES-NOT-ANALYSED" not in {f.id for f in diagnose(read_log(path))}
