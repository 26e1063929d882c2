"""The PnetCDF layer of the runtime (src/runtime/pnetcdf.c) on real mpirun runs of
tests/programs/pnetcdf_known.c: exact counters per variable and per file, the rank's
pnetcdf_* time classes over the MPI-IO beneath, trace events, hint injection
(nc_header_align_size, nc_var_align_size) and the version guard."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from pario.analysis import mpihints
from pario.log import read_log
from pario.model import Profile
from pario.trace.format import Kind
from record_helpers import one_record

NP = 3
PNETCDF = ("-I/usr/include", "-lpnetcdf")


def pnetcdf_flags() -> tuple[str, ...]:
    out = subprocess.run(["pkg-config", "--cflags", "--libs", "pnetcdf"], capture_output=True, text=True)
    return tuple(out.stdout.split()) if out.returncode == 0 and out.stdout.strip() else PNETCDF


@pytest.fixture(scope="module")
def known(tmp_path_factory, compile_program, pario_cmd, mpi_env):
    """pnetcdf_known on NP ranks under pario run --trace: (profile, output file, stdout)."""
    exe = compile_program("pnetcdf_known.c", extra=pnetcdf_flags())
    out = tmp_path_factory.mktemp("pnetcdf")
    log, nc = out / "known.pario", out / "known.nc"
    run = subprocess.run([*pario_cmd, "run", "--trace", "--log", str(log), "--",
                          "mpirun", "-np", str(NP), str(exe), str(nc)],
                         env=mpi_env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return read_log(log), nc, run.stdout


def var(profile: Profile, nc: Path, name: str):
    return one_record(profile.layer("pnetcdf_var"), f"{nc}:{name}")


@pytest.mark.slow
def test_variables_have_exact_counters(known) -> None:
    profile, nc, _ = known
    ranks = range(NP)
    temp = var(profile, nc, "temp")
    assert temp["rank"] == -1 and temp["nranks"] == NP and temp["opens"] == NP
    assert temp["put_vara"] == 2 * NP and temp["coll_writes"] == 2 * NP and temp["indep_writes"] == 0
    assert temp["bytes_written"] == sum(256 + 8 * (r + 1) for r in ranks)
    assert temp["get_vara"] == NP and temp["coll_reads"] == NP and temp["bytes_read"] == 256 * NP
    assert temp["max_write_size"] == 256 and temp["max_read_size"] == 256
    assert temp["size_write_agg_100_1k"] == NP and temp["size_write_agg_0_100"] == NP
    shape = (temp["ndims"], temp["npoints"], temp["datatype_size"], temp["is_record_var"])
    assert shape == (2, 4 * NP * 8, 8, 0)
    assert temp["write_time"] > 0 and temp["read_time"] > 0 and temp["meta_time"] > 0

    step = var(profile, nc, "step")
    assert step["put_vara"] == NP and step["indep_writes"] == NP and step["coll_writes"] == 0
    assert step["bytes_written"] == 32 * NP
    assert (step["ndims"], step["npoints"], step["datatype_size"], step["is_record_var"]) == (2, 8, 4, 1)

    nb = var(profile, nc, "nb")
    assert nb["iput_vara"] == 2 * NP and nb["nb_writes"] == 2 * NP and nb["bytes_written"] == 128 * NP
    assert nb["write_time"] > 0 and nb["datatype_size"] == 4
    bp = var(profile, nc, "bp")
    assert bp["bput_vara"] == NP and bp["nb_writes"] == NP and bp["bytes_written"] == 64 * NP
    assert bp["datatype_size"] == 2
    vn = var(profile, nc, "vn")
    assert vn["put_varn"] == NP and vn["coll_writes"] == NP and vn["bytes_written"] == 64 * NP

    file_id = int(one_record(profile.layer("pnetcdf_file"), str(nc))["id"])
    for name in ("temp", "step", "nb", "bp", "vn"):
        assert np.int64(var(profile, nc, name)["file_rec_id"]).view(np.uint64) == file_id


def test_file_sums_its_variables(known) -> None:
    profile, nc, _ = known
    f = one_record(profile.layer("pnetcdf_file"), str(nc))
    variables = profile.layer("pnetcdf_var")
    assert f["nranks"] == NP and f["creates"] == NP and f["opens"] == 0 and f["enddefs"] == NP
    assert f["coll_waits"] == 2 * NP and f["indep_waits"] == 0 and f["wait_failures"] == 0
    assert f["bytes_written"] == variables["bytes_written"].sum() == sum(
        256 + 8 * (r + 1) + 32 + 128 + 64 + 64 for r in range(NP))
    assert f["bytes_read"] == variables["bytes_read"].sum() == 256 * NP
    assert f["write_time"] == pytest.approx(variables["write_time"].sum(), rel=1e-6)
    assert f["wait_time"] > 0 and f["meta_time"] >= variables["meta_time"].sum()
    # PnetCDF 1.12's defaults after enddef: the header aligned to 512 bytes, variables to 4
    assert (f["header_align"], f["var_align"], f["record_align"]) == (512, 4, 4)
    assert 0 < f["header_size"] <= f["header_extent"] == 512


def test_time_is_pnetcdf_and_mpiio_beneath_keeps_bytes(known) -> None:
    profile, nc, _ = known
    ranks = profile.ranks
    assert (ranks["pnetcdf_write"] > 0).all() and (ranks["pnetcdf_read"] > 0).all()
    assert (ranks["pnetcdf_meta"] > 0).all()
    # exclusive classes: the MPI-IO and POSIX calls PnetCDF makes are not counted again
    for field in ("mpiio_read", "mpiio_write", "mpiio_meta", "posix_write", "posix_read"):
        assert (ranks[field] == 0).all(), field
    mpiio = one_record(profile.layer("mpiio"), str(nc))
    assert mpiio["bytes_written"] >= sum(256 + 8 * (r + 1) + 288 for r in range(NP))
    assert mpiio["bytes_read"] >= 256 * NP and mpiio["coll_opens"] == NP
    meta = profile.job.metadata["library_layers"]["pnetcdf"]
    assert meta == {"built": "1.12.3", "found": "1.12.3", "active": True, "why": ""}


def test_file_is_readable_by_ncmpidump(known) -> None:
    _, nc, stdout = known
    dump = subprocess.run(["ncmpidump", str(nc)], capture_output=True, text=True, timeout=30)
    assert dump.returncode == 0, dump.stderr
    assert "time = UNLIMITED ; // (3 currently)" in dump.stdout
    assert "step =\n  0, 0, 0, 0, 0, 0, 0, 0,\n  1, 1, 1, 1, 1, 1, 1, 1," in dump.stdout
    assert stdout.split() == ["offset", "512", "extent", "512"]


def test_trace_has_library_events(known) -> None:
    profile, nc, _ = known
    file_id = int(one_record(profile.layer("pnetcdf_file"), str(nc))["id"])
    var_ids = {int(i) for i in profile.layer("pnetcdf_var")["id"]}
    assert profile.trace is not None
    for rank in profile.trace.ranks:
        ev = rank.events
        layer = (ev["flags"] >> 8) & 7
        lib = ev[(layer == 5) | (layer == 6)]
        writes = lib[(lib["kind"] == Kind.IO_WRITE) & (((lib["flags"] >> 8) & 7) == 6)]
        assert len(writes) == 7 and set(writes["file"].tolist()) <= var_ids
        assert sorted(writes["bytes"].tolist()) == sorted([256, 8 * (rank.rank + 1), 32, 64, 64, 64, 64])
        coll = writes[(writes["flags"] & 0x4) != 0]
        assert len(coll) == 3 and (coll["comm"] == 0).all()        # _all calls on MPI_COMM_WORLD
        assert ((writes["flags"] & 0x2) != 0).sum() == 3            # iput, iput, bput
        reads = lib[lib["kind"] == Kind.IO_READ]
        assert len(reads) == 1 and reads["bytes"][0] == 256
        waits = lib[(((lib["flags"] >> 8) & 7) == 5) & (lib["kind"] == Kind.IO_WRITE)]
        assert len(waits) == 2 and (waits["file"] == file_id).all() and ((waits["flags"] & 0x4) != 0).all()
        meta = lib[lib["kind"] == Kind.IO_META]
        assert ((((meta["flags"] >> 8) & 7) == 6).sum() == 5)      # def_var x 5
        assert ((((meta["flags"] >> 8) & 7) == 5).sum() == 5)      # create, enddef, begin/end_indep, close
        # nothing beneath is an outermost call
        io = (ev["kind"] >= Kind.IO_READ) & (ev["kind"] <= Kind.IO_META)
        assert not (((layer == 2) | (layer == 0)) & io & (ev["file"] == file_id)).any()


@pytest.mark.slow
def test_injected_alignments(tmp_path, compile_program, run_under_pario):
    exe = compile_program("pnetcdf_known.c", extra=pnetcdf_flags())
    hints = tmp_path / "hints"
    hints.write_text("nc_var_align_size 1048576\nnc_header_align_size 65536\n")
    nc, log = tmp_path / "aligned.nc", tmp_path / "aligned.pario"
    run = run_under_pario(log, ["mpirun", "-np", "2", str(exe), str(nc)], extra=["--hints", str(hints)])
    assert run.returncode == 0, run.stderr
    offset, extent = int(run.stdout.split()[1]), int(run.stdout.split()[3])
    assert offset % 1048576 == 0 and offset > 0 and extent == 1048576
    profile = read_log(log)
    f = one_record(profile.layer("pnetcdf_file"), str(nc))
    assert (f["header_align"], f["var_align"], f["header_extent"]) == (65536, 1048576, 1048576)
    assert profile.injected_hints[int(f["id"])] == {"nc_var_align_size": "1048576",
                                                    "nc_header_align_size": "65536"}
    # the MPI-IO file beneath got them too, and its MPI library is not said to ignore them
    injections = [fi for fi in mpihints.file_injections(profile) if fi.file == str(nc)]
    assert injections and all(fi.ignored == () for fi in injections)
    assert subprocess.run(["ncmpidump", "-h", str(nc)], capture_output=True).returncode == 0


def test_bad_alignment_value_is_refused(tmp_path, run_under_pario) -> None:
    hints = tmp_path / "hints"
    hints.write_text("nc_var_align_size big\n")
    run = run_under_pario(tmp_path / "x.pario", ["true"], extra=["--hints", str(hints)])
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "nc_var_align_size must be a positive integer" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_program_without_pnetcdf_has_empty_layers(known_run) -> None:
    profile, _, _ = known_run
    assert profile.layer("pnetcdf_file").empty and profile.layer("pnetcdf_var").empty
    r = profile.ranks
    assert (np.column_stack([r[c] for c in ("pnetcdf_read", "pnetcdf_write", "pnetcdf_meta")]) == 0).all()
    meta = profile.job.metadata["library_layers"]["pnetcdf"]
    assert meta["active"] is False and meta["found"] == "" and meta["built"] == "1.12.3"
    assert meta["why"] == "the program made no call to the library"


@pytest.mark.slow
def test_other_library_version_passes_through(tmp_path, compile_program, run_under_pario,
                                               mpi_env) -> None:
    exe = compile_program("pnetcdf_known.c", extra=pnetcdf_flags())
    fake = compile_program("pnetcdf_fake_version.c", mpi=False, extra=("-shared", "-fPIC"))
    nc, log = tmp_path / "other.nc", tmp_path / "other.pario"
    run = run_under_pario(log, ["mpirun", "-np", "2", str(exe), str(nc)],
                          env={**mpi_env, "LD_PRELOAD": str(fake)})
    assert run.returncode == 0, run.stderr
    profile = read_log(log)
    assert profile.layer("pnetcdf_file").empty and profile.layer("pnetcdf_var").empty
    meta = profile.job.metadata["library_layers"]["pnetcdf"]
    assert meta["active"] is False and meta["found"] == "1.10.0"
    assert "built against PnetCDF 1.12" in meta["why"] and "1.10.0" in meta["why"]
    # the calls went through: the file is whole, and MPI-IO beneath saw it as usual
    assert one_record(profile.layer("mpiio"), str(nc))["bytes_read"] >= 512
    assert (profile.ranks["mpiio_write"] > 0).all()
    assert subprocess.run(["ncmpidump", str(nc)], capture_output=True).returncode == 0


@pytest.mark.slow
def test_other_shapes_and_file_calls(tmp_path, compile_program, run_under_pario):
    exe = compile_program("pnetcdf_shapes.c", extra=pnetcdf_flags())
    nc, log = tmp_path / "shapes.nc", tmp_path / "shapes.pario"
    run = run_under_pario(log, ["mpirun", "-np", "2", str(exe), str(nc)])
    assert run.returncode == 0, run.stderr
    profile = read_log(log)
    a, b = var(profile, nc, "a"), var(profile, nc, "b")
    for shape in ("put_var", "put_var1", "put_vars", "put_varm", "put_vara", "get_var", "get_varn",
                  "iget_vara"):
        assert a[shape] == 2, shape
    assert a["coll_writes"] == 10 and a["coll_reads"] == 4 and a["nb_reads"] == 2
    assert a["bytes_written"] == 2 * (256 + 4 + 64 + 24 + 32)
    assert a["bytes_read"] == 2 * (32 + 48 + 256)
    assert a["opens"] == 4                       # def_var, then inq_varid after the reopen
    assert b["get_var1"] == 2 and b["indep_reads"] == 2 and b["bytes_read"] == 16 and b["opens"] == 2
    f = one_record(profile.layer("pnetcdf_file"), str(nc))
    assert (f["creates"], f["opens"], f["redefs"], f["enddefs"], f["syncs"]) == (2, 2, 2, 4, 2)
    assert (f["indep_waits"], f["coll_waits"]) == (2, 0)
    assert f["bytes_read"] == 2 * (32 + 48 + 256 + 8) and f["bytes_written"] == a["bytes_written"]
    # the reopened file reports no alignment: those in effect at its definition stay
    assert (f["header_align"], f["var_align"], f["record_align"]) == (512, 4, 4)
    assert (profile.ranks["pnetcdf_read"] > 0).all() and (profile.ranks["mpiio_read"] == 0).all()
