"""Fortran MPI programs are profiled as C programs are, through every binding.

tests/programs/f_pattern.F90 (built once for ``mpif.h``, once for ``use mpi``), f_pattern_f08.f90
(``use mpi_f08``) and their C twin f_pattern.c do the same I/O on 4 ranks: a 4096-byte write
through a Fortran stream unit (``write(2)`` in C), MPI-IO independent and collective writes and
reads through a subarray view of one shared file, and MPI communication.  Each Fortran log must
hold exactly the C log's files, counters and per-rank MPI calls and bytes, under Open MPI (whose
Fortran bindings call the PMPI_ names) and under MPICH (whose bindings call MPI_ or PMPI_ names).
The one difference: gfortran's runtime stats a unit it opens.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from pario.log import read_log
from pario.trace.format import Kind

pytestmark = pytest.mark.slow

NP = 4
PROGRAMS = Path(__file__).resolve().parent / "programs"
#: binding -> (source, compiler options)
BINDINGS = {
    "mpif.h": ("f_pattern.F90", ["-cpp", "-DMPIF_H"]),
    "use mpi": ("f_pattern.F90", ["-cpp"]),
    "use mpi_f08": ("f_pattern_f08.f90", []),
}
#: the MPIs: (C compiler, Fortran compiler, launcher)
MPIS = {"openmpi": ("mpicc", "mpif90", "mpirun"), "mpich": ("mpicc.mpich", "mpif90.mpich", "mpiexec.mpich")}
L2 = 32 * 32 * 4  # bytes of one rank's block


def compile_fortran(build: Path, binding: str, compiler: str) -> Path:
    source, options = BINDINGS[binding]
    out = build / f"{Path(compiler).name}-{binding.replace(' ', '_').replace('.', '_')}"
    subprocess.run([compiler, *options, "-o", str(out), str(PROGRAMS / source)], check=True, timeout=120,
                   cwd=build)
    return out


def run_pattern(pario_cmd: list[str], env: dict[str, str], launcher: str, exe: Path, out: Path,
                trace: bool = False):
    out.mkdir()
    log = out.with_suffix(".pario")
    command = [launcher, "-n", str(NP), str(exe), str(out)]
    options = ["--log", str(log), *(["--trace"] if trace else [])]
    proc = subprocess.run([*pario_cmd, "run", *options, "--", *command], env=env, capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return read_log(log)


@pytest.fixture(scope="module", params=list(MPIS))
def pattern_logs(request, tmp_path_factory, pario_cmd, mpi_env):
    """{"C" or binding: profile} of the four programs under one MPI."""
    mpi = request.param
    cc, fc, launcher = MPIS[mpi]
    env = mpi_env
    if mpi == "mpich":
        env = {k: v for k, v in mpi_env.items() if not k.startswith("PARIO_")}
        env["PARIO_RUNTIME"] = str(request.getfixturevalue("mpich_runtime"))
    tmp = tmp_path_factory.mktemp(f"fortran-{mpi}")
    c_exe = tmp / "c-pattern"
    subprocess.run([cc, "-std=c11", "-o", str(c_exe), str(PROGRAMS / "f_pattern.c")], check=True, timeout=120)
    programs = {"C": c_exe} | {b: compile_fortran(tmp, b, fc) for b in BINDINGS}
    return mpi, {name: run_pattern(pario_cmd, env, launcher, exe, tmp / name.replace(" ", "_"), trace=True)
                 for name, exe in programs.items()}


def _files(profile, layer: str) -> dict[str, dict]:
    """The layer's records by file name (``fortran.h5:/values`` for a dataset), without times and
    what depends on which rank was fastest or slowest."""
    t = profile.layer(layer)
    skip = {"fastest_rank", "slowest_rank", "fastest_rank_bytes", "slowest_rank_bytes", "variance_rank_bytes",
            "name", "id"}
    out = {}
    for i in range(len(t)):
        row = t.row(i)
        path, colon, inside = str(row["name"]).partition(":")
        out[path.rsplit("/", 1)[-1] + colon + inside] = {k: v for k, v in row.items()
                                                         if "time" not in k and k not in skip}
    return out


def test_c_program_counts_are_the_known_pattern(pattern_logs):
    _, logs = pattern_logs
    mpiio = _files(logs["C"], "mpiio")["mpiio.dat"]
    assert mpiio["nranks"] == NP and mpiio["coll_opens"] == NP
    assert mpiio["indep_writes"] == mpiio["coll_writes"] == mpiio["indep_reads"] == mpiio["coll_reads"] == NP
    assert mpiio["bytes_written"] == mpiio["bytes_read"] == 2 * NP * L2
    assert mpiio["views"] == 2 * NP and mpiio["noncontig_view"] == 1
    posix = _files(logs["C"], "posix")
    for r in range(NP):
        assert posix[f"unit_{r}.dat"]["bytes_written"] == L2 and posix[f"unit_{r}.dat"]["writes"] == 1
    ranks = logs["C"].ranks
    assert np.asarray(ranks["mpi_p2p_calls"]).tolist() == [1] * NP
    assert np.asarray(ranks["mpi_p2p_bytes"]).tolist() == [2 * L2] * NP
    assert np.asarray(ranks["mpi_coll_calls"]).tolist() == [2] * NP
    assert np.asarray(ranks["mpi_coll_bytes"]).tolist() == [20, 4, 4, 4]  # root's Bcast of 16 B + Allreduce


@pytest.mark.parametrize("binding", list(BINDINGS))
def test_fortran_log_equals_the_c_log(pattern_logs, binding: str):
    mpi, logs = pattern_logs
    c, f = logs["C"], logs[binding]
    assert f.job.nprocs == NP
    assert _files(f, "mpiio") == _files(c, "mpiio"), (mpi, binding)
    cp, fp = _files(c, "posix"), _files(f, "posix")
    assert set(fp) == set(cp)
    for name in cp:
        if name.startswith("unit_"):  # gfortran stats the unit it opens
            assert fp[name].pop("stats") == 1 and cp[name].pop("stats") == 0
        assert fp[name] == cp[name], (mpi, binding, name)
    for col in ("mpi_coll_calls", "mpi_coll_bytes", "mpi_p2p_calls", "mpi_p2p_bytes", "mpi_other_calls"):
        assert np.asarray(f.ranks[col]).tolist() == np.asarray(c.ranks[col]).tolist(), (mpi, binding, col)
    assert (np.asarray(f.ranks["mpiio_write"]) > 0).all() and (np.asarray(f.ranks["mpi_coll"]) > 0).all()
    # the MPI-IO hints in effect (MPI_File_get_info after open), file by file
    assert list(f.hints.values()) == list(c.hints.values()) and len(c.hints) == 1


@pytest.mark.parametrize("binding", list(BINDINGS))
def test_fortran_trace_equals_the_c_trace(pattern_logs, binding: str):
    """Event by event (kind, flags, communicator, peer, tag, bytes), but for the stat gfortran
    makes when it opens a unit: one I/O metadata event more, before the unit's write."""
    mpi, logs = pattern_logs
    fields = ["kind", "flags", "comm", "peer", "tag", "bytes"]
    for c, f in zip(logs["C"].trace.ranks, logs[binding].trace.ranks, strict=True):
        ce, fe = c.events[fields], f.events[fields]
        assert len(fe) == len(ce) + 1 and fe[1]["kind"] == Kind.IO_META, (mpi, binding, c.rank)
        assert np.array_equal(np.delete(fe, 1), ce), (mpi, binding, c.rank)


def test_every_wrapper_is_exported_under_both_names(libpario: Path, mpich_runtime: Path):
    """MPI_X and PMPI_X are one function in the runtime (Fortran bindings call PMPI_X)."""
    for lib in (libpario, mpich_runtime):
        symbols = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True,
                                 check=True).stdout.split("\n")
        address = {parts[2]: parts[0] for parts in (s.split() for s in symbols) if len(parts) == 3}
        wrapped = sorted(n for n in address if n.startswith("MPI_"))
        assert len(wrapped) > 100
        assert [n for n in wrapped if address.get("P" + n) != address[n]] == []


# ------------------------------------------------------------------------------------------
# the collective engine serves the Fortran bindings' collective writes
# ------------------------------------------------------------------------------------------

ENGINE_SETTINGS = ["none", "comm", "write", "write-comm", "write-comm-2", "write-comm:rma-fence",
                   "auto"]


@pytest.fixture(scope="module")
def fortran_programs(tmp_path_factory):
    """The Open MPI builds: the C twin and the mpif.h and use mpi_f08 programs."""
    tmp = tmp_path_factory.mktemp("fortran-engine")
    c_exe = tmp / "c-pattern"
    subprocess.run(["mpicc", "-std=c11", "-o", str(c_exe), str(PROGRAMS / "f_pattern.c")], check=True,
                   timeout=120)
    return tmp, {"C": c_exe, "mpif.h": compile_fortran(tmp, "mpif.h", "mpif90"),
                 "use mpi_f08": compile_fortran(tmp, "use mpi_f08", "mpif90")}


@pytest.mark.parametrize("setting", ENGINE_SETTINGS)
def test_engine_serves_fortran_collective_writes_as_romio_writes(fortran_programs, setting: str,
                                                                  pario_cmd, mpi_env):
    tmp, programs = fortran_programs
    reference = tmp / "reference"
    if not reference.exists():  # the C program, collective writes left to the MPI library
        run_pattern(pario_cmd, mpi_env, "mpirun", programs["C"], reference)
    binding = "use mpi_f08" if setting.endswith("rma-fence") else "mpif.h"
    out = tmp / f"engine-{setting.replace(':', '-')}"
    env = mpi_env | {"PARIO_COLL": setting}
    profile = run_pattern(pario_cmd, env, "mpirun", programs[binding], out)
    assert (out / "mpiio.dat").read_bytes() == (reference / "mpiio.dat").read_bytes()
    rec = _files(profile, "mpiio")["mpiio.dat"]
    assert rec["engine_writes"] == 1, rec  # the collective MPI_File_write_all call of the 4 ranks
    assert rec["engine_fallbacks"] == 0
    assert rec["coll_writes"] == NP and rec["bytes_written"] == 2 * NP * L2


def test_tune_measures_the_fortran_program(fortran_programs, pario_cmd, mpi_env, tmp_path: Path):
    """`pario tune` reads its objective from the Fortran program's logs: a finished study with a
    speed-up over the default, not "no log"."""
    _, programs = fortran_programs
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run([*pario_cmd, "tune", "--budget", "3", "--seed", "1", "--study", "fortran", "--",
                           "mpirun", "-np", str(NP), str(programs["mpif.h"]), str(out)],
                          env=mpi_env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "study fortran: 3 trial(s) in the budget, 0 failed" in proc.stdout, proc.stdout
    assert "speed-up over the default: " in proc.stdout
    assert "no log" not in proc.stdout + proc.stderr


# ------------------------------------------------------------------------------------------
# the I/O libraries' Fortran APIs: HDF5 (h5dwrite_f) and PnetCDF (nfmpi_*)
# ------------------------------------------------------------------------------------------

#: where Debian keeps PnetCDF's Fortran module
FORTRAN_MODULES = "/usr/lib/x86_64-linux-gnu/fortran/gfortran-mod-15"
K = 1024


def _library_run(pario_cmd, mpi_env, tmp: Path, name: str, build: list[str],
                 libs: tuple[str, ...] = ()):
    exe = tmp / name
    subprocess.run([*build, "-o", str(exe), str(PROGRAMS / f"{name}.f90"), *libs], check=True, timeout=180,
                   cwd=tmp)
    return run_pattern(pario_cmd, mpi_env, "mpirun", exe, tmp / f"{name}-out")


def test_hdf5_fortran_api_dataset_bytes(pario_cmd, mpi_env, tmp_path: Path):
    """h5dwrite_f / h5dread_f reach HDF5's C library: the dataset's record has the exact bytes.
    (-shlib: h5pfc links HDF5 statically by default, and calls inside the executable cannot
    be intercepted.)"""
    p = _library_run(pario_cmd, mpi_env, tmp_path, "h5_fortran", ["h5pfc", "-shlib"])
    d = _files(p, "h5d")["fortran.h5:/values"]
    assert (d["writes"], d["reads"], d["coll_writes"]) == (NP, NP, NP)
    assert d["bytes_written"] == d["bytes_read"] == NP * K * 8
    assert d["regular_hyperslab_selects"] == 2 * NP and d["datatype_size"] == 8
    f = _files(p, "h5f")["fortran.h5"]
    assert f["creates"] == NP and f["bytes_written"] == NP * K * 8
    assert np.asarray(p.ranks["hdf5_write"]).min() > 0


def test_pnetcdf_fortran_api_variable_bytes(pario_cmd, mpi_env, tmp_path: Path):
    """nfmpi_iput_vara_real and nfmpi_get_vara_real_all call the C functions inside libpnetcdf
    through its PLT, where the runtime's wrappers catch them: the variable's exact bytes."""
    p = _library_run(pario_cmd, mpi_env, tmp_path, "pnetcdf_fortran", ["mpif90", f"-I{FORTRAN_MODULES}"],
                     ("-lpnetcdf",))
    v = _files(p, "pnetcdf_var")["fortran.nc:temperature"]
    assert (v["iput_vara"], v["nb_writes"], v["get_vara"], v["coll_reads"]) == (NP, NP, NP, NP)
    assert v["bytes_written"] == v["bytes_read"] == NP * K * 4
    f = _files(p, "pnetcdf_file")["fortran.nc"]
    assert (f["creates"], f["enddefs"], f["coll_waits"]) == (NP, NP, NP)


def test_statically_linked_hdf5_is_named_before_launch(pario_cmd, mpi_env, tmp_path: Path):
    """h5pfc's default build has HDF5 inside the executable: pario run says that its HDF5 calls
    cannot be seen, and the log still has the MPI-IO bytes beneath them."""
    from pario.launch import static_libs

    static, shared = tmp_path / "h5-static", tmp_path / "h5-shared"
    for exe, options in ((static, []), (shared, ["-shlib"])):
        subprocess.run(["h5pfc", *options, "-o", str(exe), str(PROGRAMS / "h5_fortran.f90")], check=True,
                       timeout=180, cwd=tmp_path)
    assert static_libs.linked_in(static) == ["HDF5"] and static_libs.linked_in(shared) == []
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "static.pario"
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", str(NP), str(static),
                           str(out)], env=mpi_env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert ("pario: warning: h5-static has HDF5 linked in statically: its HDF5 calls cannot be seen"
            in proc.stderr)
    p = read_log(log)
    assert len(p.layer("h5d")) == 0
    assert _files(p, "mpiio")["fortran.h5"]["bytes_written"] >= NP * K * 8


def _forms_pattern() -> bytes:
    """f_coll_forms' file: block f (one per form), row i, rank r holds f*1000000 + i*100 + r."""
    rows = 256
    values = [f * 1000000 + i * 100 + r for f in range(1, 5) for i in range(1, rows + 1) for r in range(NP)]
    return np.asarray(values, dtype="<i4").tobytes()


@pytest.mark.parametrize("setting", ["mpi", "none", "write-comm", "write-comm-2:rma-lock"])
def test_engine_serves_every_fortran_collective_form(setting: str, pario_cmd, mpi_env, tmp_path: Path):
    """mpi_file_write_all, _at_all and both split forms through a strided view: the file is the
    computed pattern, and the engine serves all four calls ("mpi": the MPI library's own)."""
    exe = tmp_path / "forms"
    subprocess.run(["mpif90", "-o", str(exe), str(PROGRAMS / "f_coll_forms.f90")], check=True, timeout=120)
    p = run_pattern(pario_cmd, mpi_env | {"PARIO_COLL": setting}, "mpirun", exe, tmp_path / "out")
    assert (tmp_path / "out" / "forms.dat").read_bytes() == _forms_pattern()
    rec = _files(p, "mpiio")["forms.dat"]
    assert (rec["coll_writes"], rec["split_writes"]) == (2 * NP, 2 * NP)
    assert rec["bytes_written"] == 4 * NP * 256 * 4
    assert (rec["engine_writes"], rec["engine_fallbacks"]) == ((0, 0) if setting == "mpi" else (4, 0))
