"""`pario run -- srun ...` against a real local Slurm (slurmctld + slurmd + munged, see slurm_cluster.py).

srun launches the Open MPI ranks directly (``--mpi=pmix``: Debian's Open MPI and
Slurm's mpi/pmix plugin share the system PMIx), so the runtime reaches the
ranks only through the ``--export`` that pario adds.  The counters must be those
of the mpirun run in test_runtime.py, number for number.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pario.log import read_log
from record_helpers import check_io_known
from slurm_cluster import SlurmCluster

NP = 4
K, S = 8, 4096  # io_known: K collective writes of S bytes per rank
TIMEOUT = 120  # seconds for any job; a hang fails instead of blocking the suite


def srun(*args: str) -> list[str]:
    # --overcommit: 4 tasks on a node that may have fewer CPUs
    return ["srun", "-n", str(NP), "--overcommit", "--mpi=pmix", *args]


@pytest.fixture(scope="module")
def srun_known(tmp_path_factory, compile_program, pario_cmd, slurm_env):
    """io_known under `pario run -- srun`; returns (profile, outdir)."""
    out = tmp_path_factory.mktemp("srun-known")
    exe = compile_program("io_known.c")
    log = out / "known.pario"
    proc = subprocess.run(
        [*pario_cmd, "run", "--log", str(log), "--", *srun(str(exe), str(out), str(K), str(S))],
        env=slurm_env, capture_output=True, text=True, timeout=TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"log written to {log}" in proc.stderr
    return read_log(log), out


def test_cluster_uses_pmix(slurm: SlurmCluster):
    assert slurm.mpi_default == "pmix", "Slurm's mpi/pmix plugin is missing (slurm-wlm-basic-plugins)"


@pytest.mark.slow
def test_srun_counters_are_those_of_the_program(srun_known):
    profile, out = srun_known
    check_io_known(profile, out, NP, K, S)


def test_srun_profiles_ranks_only(srun_known, slurm: SlurmCluster):
    """Neither srun nor slurmstepd is profiled: no Slurm spool, state or PMIx file in the log."""
    profile, _ = srun_known
    names = [n for frame in profile.files.values() for n in frame["name"]]
    assert not any(n.startswith((str(slurm.root), str(slurm.spool))) or ".pmix" in n for n in names)


@pytest.mark.slow
def test_srun_exit_code_passed_through(tmp_path: Path, compile_program, pario_cmd, slurm_env):
    """Ranks that exit 5 after MPI_Finalize: `pario run` returns srun's 5, and the log is complete."""
    exe = compile_program("mpi_comm.c")
    log = tmp_path / "comm.pario"
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", *srun(str(exe), "5")],
                          env=slurm_env, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 5, proc.stderr
    ranks = read_log(log).ranks
    assert len(ranks) == NP
    assert (ranks["mpi_p2p_calls"] == 6).all() and (ranks["mpi_p2p_bytes"] == 8808).all()
