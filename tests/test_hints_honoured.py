"""Which hints each MPI-IO component honours, measured on the real components rather than assumed.

The block kernel writes 8 KiB pieces collectively (4 ranks, 8 segments of 64 KiB per rank) with the
application's own hints; how many ranks did the file-system writes (the participation ratio of the
POSIX bytes per rank) and how many POSIX writes there were show whether a hint acted.  The rules'
advice relies on these facts (pario.analysis.mpihints.romio_only: what OMPIO does not read; the
aggregator advice of MPIIO-SINGLE-AGGREGATOR under OMPIO)."""

from __future__ import annotations

import subprocess

import pytest

from kernel_helpers import kernel_exe
from pario.analysis.mpihints import romio_only
from pario.diagnosis import facts_of, make_config
from pario.diagnosis.file_facts import participation
from pario.log import read_log

pytestmark = pytest.mark.slow


def _writers_and_writes(tmp_path, pario_cmd, mpi_env, component: str, hints: str) -> tuple[float, int]:
    log = tmp_path / f"{component}.pario"
    cmd = [*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", "4", "--mca", "io", component,
           str(kernel_exe("block")), "--block-size", "64k", "--transfer-size", "8k", "--segments", "8",
           "--collective", "--hints", hints, "-o", str(tmp_path / "shared.dat")]
    proc = subprocess.run(cmd, env=mpi_env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    facts = facts_of(read_log(log), make_config({}))
    fid = int(facts.layer("mpiio")["id"][0])
    p = participation(facts, fid)
    assert p is not None
    return round(p.effective, 1), int(facts.layer("posix")["writes"].sum())


@pytest.mark.parametrize("n", [1, 2, 4])
def test_ompio_honours_cb_nodes(tmp_path, pario_cmd, mpi_env, n: int) -> None:
    assert not romio_only("cb_nodes")
    writers, _ = _writers_and_writes(tmp_path, pario_cmd, mpi_env, "ompio", f"cb_nodes={n}")
    assert writers == n


def test_ompio_ignores_romio_cb_write(tmp_path, pario_cmd, mpi_env) -> None:
    """enable and disable give OMPIO's own choice (here one aggregator) alike."""
    assert romio_only("romio_cb_write")
    got = {v: _writers_and_writes(tmp_path, pario_cmd, mpi_env, "ompio", f"romio_cb_write={v}")
           for v in ("enable", "disable")}
    assert got["enable"] == got["disable"] and got["enable"][0] == 1


def test_romio_honours_cb_write_cb_nodes_and_cb_buffer_size(tmp_path, pario_cmd, mpi_env) -> None:
    """ROMIO: romio_cb_write=disable lets every rank write its own pieces; enable gathers them on one
    aggregator per node (here one), cb_nodes=2 on two when cb_config_list allows two per node; a
    64 KiB collective buffer makes the aggregator write in 64 KiB cycles (256 writes) where the
    default 16 MiB buffer writes each call's span at once (64 writes: one per collective call)."""
    def run(hints: str) -> tuple[float, int]:
        return _writers_and_writes(tmp_path, pario_cmd, mpi_env, "romio321", hints)

    assert run("romio_cb_write=disable") == (4, 256)
    assert run("romio_cb_write=enable") == (1, 64)
    # ROMIO's default cb_config_list (*:1) allows one aggregator per node: cb_nodes alone does nothing here
    assert run("romio_cb_write=enable,cb_nodes=2")[0] == 1
    assert run("romio_cb_write=enable,cb_nodes=2,cb_config_list=*:2")[0] == 2
    assert run("romio_cb_write=enable,cb_buffer_size=65536") == (1, 256)
