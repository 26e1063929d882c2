"""`pario run -- mpiexec ...` with MPICH (Hydra), next to the Open MPI the package is built with.

The runtime is built a second time, against Debian's MPICH (``mpicc.mpich``, from this
source tree with CMake), and chosen with ``PARIO_RUNTIME``; the programs are compiled
with ``mpicc.mpich`` and launched with ``mpiexec.mpich``, which pario recognises as Hydra
and gives the runtime with ``-genv``.  The counters must be those of the Open MPI run,
number for number: they depend on the program, not on the MPI library.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pario.launch import run as launch
from pario.log import read_log
from record_helpers import check_io_known

NP = 4
K, S = 8, 4096
TIMEOUT = 120


def _need(program: str) -> str:
    path = shutil.which(program)
    assert path, f"{program} not found: Debian's mpich and libmpich-dev are needed (make deps installs them)"
    return path


@pytest.fixture(scope="session")
def mpich_program(compile_program):
    """compile_program with MPICH's wrapper."""
    return lambda source: compile_program(source, mpicc=_need("mpicc.mpich"))


@pytest.fixture(scope="session")
def mpich_env(mpi_env: dict[str, str], mpich_runtime: Path) -> dict[str, str]:
    env = {k: v for k, v in mpi_env.items() if not k.startswith("PARIO_")}
    return env | {"PARIO_RUNTIME": str(mpich_runtime)}


def run(pario_cmd: list[str], env: dict[str, str], log: Path, *command: str) -> subprocess.CompletedProcess:
    argv = [*pario_cmd, "run", "--log", str(log), "--", _need("mpiexec.mpich"), "-n", str(NP), *command]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def test_mpiexec_mpich_is_given_the_runtime_with_genv(mpich_runtime: Path, monkeypatch, tmp_path: Path):
    monkeypatch.setenv("PARIO_RUNTIME", str(mpich_runtime))
    prepared = launch.prepare([_need("mpiexec.mpich"), "-n", "2", "true"], log=str(tmp_path / "x.pario"))
    i = prepared.argv.index("-genv")
    assert prepared.argv[i + 1 : i + 3] == ["LD_PRELOAD", str(mpich_runtime)]
    assert "-x" not in prepared.argv


@pytest.mark.slow
def test_mpich_counters_are_those_of_the_program(tmp_path: Path, pario_cmd, mpich_env, mpich_program):
    exe = mpich_program("io_known.c")
    proc = run(pario_cmd, mpich_env, tmp_path / "known.pario", str(exe), str(tmp_path), str(K), str(S))
    assert proc.returncode == 0, proc.stderr
    profile = read_log(tmp_path / "known.pario")
    assert profile.job.mpi_library.startswith("MPICH")
    check_io_known(profile, tmp_path, NP, K, S)
    # MPICH's ROMIO reports every hint in effect, defaults included (Open MPI 4.1 only those set)
    (hints,) = profile.hints.values()
    assert {"cb_buffer_size", "cb_nodes", "romio_cb_write", "romio_filesystem_type"} <= set(hints)


@pytest.mark.slow
def test_mpich_mpi_counters_and_exit_code(tmp_path: Path, pario_cmd, mpich_env, mpich_program):
    """mpi_comm exits 5 after MPI_Finalize: pario run returns 5, the MPI counters are Open MPI's."""
    proc = run(pario_cmd, mpich_env, tmp_path / "comm.pario", str(mpich_program("mpi_comm.c")), "5")
    assert proc.returncode == 5, proc.stderr
    r = read_log(tmp_path / "comm.pario").ranks
    assert (r["mpi_p2p_calls"] == 6).all() and (r["mpi_p2p_bytes"] == 8808).all()
    assert (r["mpi_coll_calls"] == 7).all() and list(r["mpi_coll_bytes"]) == [500, 100, 100, 100]


def test_bad_runtime_path_is_one_line(pario_cmd, mpi_env, tmp_path: Path):
    env = mpi_env | {"PARIO_RUNTIME": str(tmp_path / "missing.so")}
    proc = subprocess.run([*pario_cmd, "run", "--", "true"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "PARIO_RUNTIME" in proc.stderr


# --- the wrong MPI is caught before launch ------------------------------------------------------


def test_hydra_with_the_open_mpi_runtime_is_refused(tmp_path: Path, pario_cmd, mpi_env, mpich_program):
    """mpiexec.mpich with the default (Open MPI) runtime: one line naming PARIO_RUNTIME and the build."""
    env = {k: v for k, v in mpi_env.items() if k != "PARIO_RUNTIME"}
    exe = mpich_program("io_known.c")
    proc = run(pario_cmd, env, tmp_path / "x.pario", str(exe), str(tmp_path), str(K), str(S))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("pario: error: mpiexec.mpich is MPICH's launcher (Hydra) but the runtime ")
    assert "was built for Open MPI" in proc.stderr and "PARIO_RUNTIME=" in proc.stderr
    assert "-DMPI_C_COMPILER=mpicc.mpich" in proc.stderr
    assert not (tmp_path / "shared.dat").exists()  # nothing was launched


def test_mpich_program_under_open_mpi_mpirun_is_refused(tmp_path: Path, pario_cmd, mpi_env, mpich_program):
    env = {k: v for k, v in mpi_env.items() if k != "PARIO_RUNTIME"}
    exe = mpich_program("io_known.c")
    proc = subprocess.run([*pario_cmd, "run", "--log", str(tmp_path / "x.pario"), "--", "mpirun", "-np", "2",
                           str(exe), str(tmp_path), str(K), str(S)],
                          env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("pario: error: io_known is linked with MPICH but the runtime ")
    assert "PARIO_RUNTIME=" in proc.stderr


def test_open_mpi_program_with_the_mpich_runtime_is_refused(tmp_path: Path, pario_cmd, mpich_env,
                                                            compile_program):
    exe = compile_program("io_known.c")  # Open MPI's mpicc
    proc = run(pario_cmd, mpich_env, tmp_path / "x.pario", str(exe), str(tmp_path), str(K), str(S))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "io_known is linked with Open MPI but the runtime" in proc.stderr
    assert "was built for MPICH" in proc.stderr and "-DMPI_C_COMPILER=mpicc.openmpi" in proc.stderr


def test_mpi_families_from_elf():
    from pario import paths
    from pario.launch import mpi_match

    assert mpi_match.mpi_family(mpi_match.needed_libraries(paths.runtime_library()) or []) == "openmpi"
    assert mpi_match.mpi_family(["libc.so.6", "libmpich.so.12"]) == "mpich"
    assert mpi_match.mpi_family(["libmpi.so.12"]) is None  # Intel MPI, MVAPICH, or Open MPI 1.10
    assert mpi_match.needed_libraries(Path(__file__)) is None  # not an ELF file
