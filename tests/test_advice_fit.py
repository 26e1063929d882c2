"""Advice checked against the run (pario.diagnosis.advice_fit): no recommendation that the
run's description rules out is printed, and the finding's notes say what was left out and why.

Real runs of the block kernel (2 ranks, independent 4 KiB writes of a shared file, the default file
view) under OMPIO and under ROMIO, and small synthetic profiles for what this machine cannot run
(E3SM-IO's collective reads of a PnetCDF file)."""

from __future__ import annotations

import dataclasses
import subprocess

import pytest

from kernel_helpers import kernel_exe
from pario.diagnosis import Finding, diagnose, facts_of, make_config
from pario.diagnosis.advice_fit import LOCAL_FS
from pario.diagnosis.run_description import describe
from pario.log import read_log
from pario.units import seconds
from test_diagnosis_synthetic import MiB, profile

KiB = 1024


def _hints(f: Finding) -> list[str]:
    return [line for r in f.recommendations if r.kind == "hint" for line in r.snippet.splitlines()]


@pytest.fixture(scope="module", params=["ompio", "romio321"])
def independent_run(request, tmp_path_factory, pario_cmd, mpi_env):
    """2 ranks, 64 independent MPI_File_write_at of 4 KiB each to one shared file, default view."""
    out = tmp_path_factory.mktemp(f"fit-{request.param}")
    log = out / "independent.pario"
    cmd = [*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", "2", "--mca", "io", request.param,
           str(kernel_exe("block")), "--transfer-size", "4k", "--block-size", "256k", "--independent",
           "-o", str(out / "shared.dat")]
    proc = subprocess.run(cmd, env=mpi_env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return request.param, read_log(log)


def test_the_description_is_the_run(independent_run) -> None:
    component, p = independent_run
    desc = describe(facts_of(p, make_config({})))
    (access,) = desc.files.values()
    assert access.name.endswith("shared.dat") and access.ranks == 2
    assert access.component == component.removesuffix("321")
    assert access.independent == {"read": 0, "write": 128} and access.collective == {"read": 0, "write": 0}
    assert access.views == 0 and not access.noncontig and access.libraries == frozenset()
    assert desc.hints_recorded and desc.records_hdf5 and desc.libraries == frozenset()
    assert len(desc.file_systems) == 1  # pario's statfs of the one file


def test_no_collective_buffering_hint_for_independent_calls(independent_run) -> None:
    """romio_cb_write acts only on collective calls, and only ROMIO reads it: neither the hint nor a
    trial of a hints file holding it is advised; the code change (collective calls) stays."""
    component, p = independent_run
    (f,) = [f for f in diagnose(p) if f.id == "IFACE-INDEPENDENT-SHARED"]
    assert not _hints(f) and not [r for r in f.recommendations if r.kind == "tune"]
    assert any("MPI_File_write_at_all" in r.snippet for r in f.recommendations if r.kind == "code")
    # the code change says what it can gain and when it pays (here, a machine's own disk)
    (code,) = [r.text for r in f.recommendations if r.kind == "code"]
    assert f"Expected gain: at most {seconds(f.time_lost)}" in code and "parallel file system" in code
    fs = describe(facts_of(p, make_config({}))).file_systems
    assert (f"these files are on {min(fs)}, where it may not" in code) == bool(fs & LOCAL_FS)
    why = ("OMPIO, the MPI-IO component that ran, does not read ROMIO's hints" if component == "ompio"
           else "collective buffering acts only on collective calls, and every MPI-IO write of "
                f"{f.subjects[0].name} was independent")
    assert f.notes[-1] == f"Not advised here: the hint romio_cb_write enable ({why})."


def test_no_data_sieving_hint_without_a_file_view(independent_run) -> None:
    """With the thresholds that keep MPIIO-INDEPENDENT-OVERHEAD quiet on a local disk set to 0, it
    still does not propose romio_ds_write: each call is contiguous in the file."""
    component, p = independent_run
    loose = make_config({"mpiio_overhead_min_share": 0.0, "mpiio_overhead_min_per_call": 0.0,
                         "min_time_lost_share": 0.0})
    (f,) = [f for f in diagnose(p, loose) if f.id == "MPIIO-INDEPENDENT-OVERHEAD"]
    assert not [h for h in _hints(f) if h.startswith("romio_ds_")]
    if component == "romio321":
        assert any("romio_ds_write disable (data sieving runs only for accesses that are not contiguous in "
                   "the file" in n for n in f.notes)


def _e3sm_like(nprocs: int = 4, independent: int = 1, pnetcdf: bool = False):
    """Small reads of a shared .nc file, all but ``independent`` of them collective."""
    name = "/scratch/e3sm/in.nc"
    posix = [{"id": 9, "rank": r, "name": name, "reads": 1920, "bytes_read": 1920 * 2 * KiB, "read_time": 3.0,
              "max_byte_read": 64 * MiB - 1, "size_read_1k_10k": 1920, "seq_reads": 100, "consec_reads": 50}
             for r in range(nprocs)]
    mpiio = [{"id": 9, "rank": r, "name": name, "coll_reads": 1920 - (independent if r == 0 else 0),
              "indep_reads": independent if r == 0 else 0, "bytes_read": 1920 * 2 * KiB, "read_time": 3.2}
             for r in range(nprocs)]
    p = profile(nprocs, 20.0, io={"mpiio_read": [3.2] * nprocs}, posix=posix, mpiio=mpiio)
    if pnetcdf:
        record = profile(nprocs, 20.0, posix=[{"id": 9, "rank": 0, "name": name}])
        p.files["pnetcdf_file"] = record.files["posix"]
    return p


def test_collective_reads_are_not_advised_where_they_are_collective_already() -> None:
    """7,679 of 7,680 MPI-IO reads collective: no finding asks for collective reads."""
    findings = {f.id: f for f in diagnose(_e3sm_like())}
    small = findings["IO-SMALL-READS"]
    assert not [r for r in small.recommendations if "_all" in r.snippet]
    assert ("Not advised here: MPI_File_read_at_all(fh, offset, buf, count, MPI_BYTE, MPI_STATUS_IGNORE) "
            "(the calls are collective already: 7,679 of the 7,680 MPI-IO read calls on "
            "/scratch/e3sm/in.nc).") in small.notes
    # half of them independent: the advice stands
    half = {f.id: f for f in diagnose(_e3sm_like(independent=1920))}["IO-SMALL-READS"]
    assert any("MPI_File_read_at_all" in r.snippet for r in half.recommendations)


def test_hdf5_calls_are_not_advised_for_a_program_without_hdf5() -> None:
    """A .nc file read by a program with no HDF5 records (pario logs record HDF5 whenever it is
    called), or one PnetCDF writes: no H5P calls."""
    for p, why in ((_e3sm_like(), "the log has no HDF5 records: the program does not use HDF5"),
                   (_e3sm_like(pnetcdf=True), "/scratch/e3sm/in.nc is written through PnetCDF, not HDF5")):
        small = {f.id: f for f in diagnose(p)}["IO-SMALL-READS"]
        assert not [r for r in small.recommendations if "H5P" in r.snippet]
        assert f"Not advised here: H5Pset_meta_block_size(fapl, 1 << 20) ({why})." in small.notes


def test_hdf5_advice_is_conditional_where_a_darshan_log_cannot_tell() -> None:
    """A Darshan log without the H5F module cannot show whether HDF5 was used: the advice says so."""
    p = _e3sm_like()
    p = dataclasses.replace(p, job=dataclasses.replace(p.job, source="darshan"))
    small = {f.id: f for f in diagnose(p)}["IO-SMALL-READS"]
    (h5,) = [r for r in small.recommendations if "H5P" in r.snippet]
    assert h5.text.startswith("If the program writes these files with HDF5 (this log has no HDF5 module to "
                              "tell): ")


def test_independent_shared_speaks_hdf5_for_an_hdf5_file() -> None:
    """Independent MPI-IO writes of a file written through HDF5: the advice is HDF5's collective
    transfer, not MPI_File_write_at_all."""
    name = "/scratch/run/out.h5"
    n = 4
    mpiio = [{"id": 3, "rank": r, "name": name, "indep_writes": 2000, "bytes_written": 2000 * 4 * KiB,
              "write_time": 4.0} for r in range(n)]
    p = profile(n, 20.0, io={"mpiio_write": [4.0] * n}, mpiio=mpiio)
    p.files["h5f"] = profile(n, 20.0, posix=[{"id": 3, "rank": 0, "name": name}]).files["posix"]
    f = {f.id: f for f in diagnose(p)}["IFACE-INDEPENDENT-SHARED"]
    code = [r for r in f.recommendations if r.kind == "code"]
    assert "H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);" in code[0].snippet
    assert not any("MPI_File_write_at_all" in r.snippet for r in f.recommendations)
