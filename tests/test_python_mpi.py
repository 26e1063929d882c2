"""Python MPI programs (mpi4py) are profiled as C programs are.

tests/programs/mpi4py_pattern.py does f_pattern.c's MPI-IO and communication through mpi4py on
4 ranks (independent Write_at / Read_at, collective Write_at_all / Read_at_all, Bcast, Sendrecv,
Allreduce): its MPI-IO record and per-rank MPI calls and bytes are exact, and the collective
engine serves its Write_at_all, byte for byte what the MPI library writes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pario.log import read_log

pytestmark = pytest.mark.slow

NP = 4
PROGRAM = Path(__file__).resolve().parent / "programs" / "mpi4py_pattern.py"
BLOCK = 4096


def _run(pario_cmd, env, out: Path):
    out.mkdir()
    log = out.with_suffix(".pario")
    command = ["mpirun", "-np", str(NP), sys.executable, str(PROGRAM), str(out)]
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", *command], env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    profile = read_log(log)
    mpiio = profile.layer("mpiio")
    (i,) = [i for i, n in enumerate(mpiio["name"]) if str(n) == str(out / "mpi4py.dat")]
    return profile, mpiio.row(i)


@pytest.fixture(scope="module")
def plain(tmp_path_factory, pario_cmd, mpi_env):
    return _run(pario_cmd, mpi_env, tmp_path_factory.mktemp("mpi4py") / "plain")


def test_mpi4py_io_and_communication_are_exact(plain):
    profile, rec = plain
    assert profile.job.nprocs == NP
    assert (rec["indep_writes"], rec["coll_writes"], rec["indep_reads"], rec["coll_reads"]) == (NP,) * 4
    assert rec["bytes_written"] == rec["bytes_read"] == 2 * NP * BLOCK and rec["coll_opens"] == NP
    r = profile.ranks
    assert np.asarray(r["mpi_p2p_calls"]).tolist() == [1] * NP
    assert np.asarray(r["mpi_p2p_bytes"]).tolist() == [2 * BLOCK] * NP
    assert np.asarray(r["mpi_coll_calls"]).tolist() == [2] * NP
    assert np.asarray(r["mpi_coll_bytes"]).tolist() == [20, 4, 4, 4]


def test_engine_serves_mpi4py_write_at_all(plain, pario_cmd, mpi_env, tmp_path: Path):
    _, reference = plain
    _, rec = _run(pario_cmd, mpi_env | {"PARIO_COLL": "write-comm"}, tmp_path / "engine")
    assert (tmp_path / "engine" / "mpi4py.dat").read_bytes() == Path(str(reference["name"])).read_bytes()
    assert rec["engine_writes"] == 1 and rec["engine_fallbacks"] == 0
