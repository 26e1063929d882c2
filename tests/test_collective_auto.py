"""The collective engine's ``auto`` (docs/collective.md, "auto"): the variants it tries on a
file written by many calls and the one it keeps, recorded in the log and the report; a run of
a few calls tries nothing; and when some ranks write their own bytes directly and others cannot,
those bytes are written once (counted by the runtime's POSIX layer, which sees the engine's
pwrite calls), by two-phase or by the MPI library.  Real runs under mpirun, files compared with
ROMIO's or a computed pattern."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kernel_helpers import kernel_exe, mpi_env, sha256
from pario.analysis.engine import engine_files
from pario.collective import VARIANTS
from pario.log import read_log

pytestmark = pytest.mark.slow

NP = 4
S3D = ["--nx", "32", "--ny", "32", "--nz", "16"]
# auto's candidates (src/collective/auto.c): one buffer cycle, several
ONE_CYCLE = {"none:p2p", "none:rma-lock", "none:rma-fence"}
SEVERAL = {"write:rma-lock", "comm:rma-lock", "write-comm:rma-lock", "none:rma-lock"}


def romio_file(tmp_path: Path, steps: int) -> str:
    path = tmp_path / "romio.dat"
    cmd = ["mpirun", "-np", str(NP), "--mca", "io", "romio321", str(kernel_exe("s3d")), *S3D,
           "--steps", str(steps), "--path", str(path)]
    proc = subprocess.run(cmd, env=mpi_env(), capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return sha256(path)


def auto_run(tmp_path: Path, run_under_pario, steps: int, cb_buffer: int,
             hints: str = "") -> tuple[str, object]:
    path, log = tmp_path / "auto.dat", tmp_path / "auto.pario"
    command = ["mpirun", "-np", str(NP), "--mca", "io", "romio321", str(kernel_exe("s3d")), *S3D,
               "--steps", str(steps), "--hints", f"cb_buffer_size={cb_buffer}{hints}", "--path", str(path)]
    proc = run_under_pario(log, command, env=mpi_env(), extra=["--collective", "auto"])
    assert proc.returncode == 0, proc.stderr
    (engine,) = engine_files(read_log(log))
    return sha256(path), engine


@pytest.mark.parametrize("cb_buffer", [16 << 20, 16384], ids=["one-cycle", "several-cycles"])
def test_auto_tries_variants_on_a_file_written_many_times(tmp_path, run_under_pario, cb_buffer):
    """s3d, 12 checkpoints (48 collective writes of three sizes): auto tries other variants after
    the first calls, keeps one of its candidates, writes ROMIO's bytes, and the log and report
    say what it tried."""
    steps = 12
    digest, engine = auto_run(tmp_path, run_under_pario, steps, cb_buffer)
    assert digest == romio_file(tmp_path, steps)
    candidates = ONE_CYCLE if cb_buffer > 1 << 20 else SEVERAL
    tried = {v.variant for v in engine.variants}
    assert engine.calls == 4 * steps and sum(v.calls for v in engine.variants) == engine.calls
    assert tried <= candidates and len(tried) >= 2, engine.variants
    assert engine.explored > 0 and all(v.time > 0 for v in engine.variants)
    kept = engine.kept_one if cb_buffer > 1 << 20 else engine.kept_many
    assert kept in tried, (kept, tried)
    assert set(VARIANTS) >= tried
    assert f"auto kept {kept} (calls of " in engine.served_text()


@pytest.mark.parametrize("hints, aggregators", [("", 2), (",cb_nodes=1", 1), (",pario_cb_shuffle=p2p", 2)],
                         ids=["static", "cb_nodes", "shuffle"])
def test_auto_tries_nothing_on_a_few_calls(tmp_path, run_under_pario, hints, aggregators):
    """One checkpoint (4 calls, at most two of one size): only the static choice runs,
    write:rma-lock, or write with the shuffle the hints name.  Left to choose, auto puts half
    the node's ranks (at most 4) to aggregate: 2 of the 4 ranks; cb_nodes still wins."""
    digest, engine = auto_run(tmp_path, run_under_pario, 1, 16384, hints)
    assert digest == romio_file(tmp_path, 1)
    assert engine.explored == 0
    static = "write:p2p" if "shuffle" in hints else "write:rma-lock"
    assert {v.variant for v in engine.variants} == {static}, engine.variants
    assert engine.kept_many == static
    assert engine.aggregators == aggregators


@pytest.mark.parametrize("mode, served", [("twophase", 1), ("library", 0)])
def test_direct_ranks_bytes_are_written_once(tmp_path, compile_program, run_under_pario, mode, served):
    """Even ranks write their own range directly, odd ranks cannot (a strided memory type): the
    odd ranks' bytes go through two-phase, or, beyond the engine's limits, through the MPI
    library, and every byte of the file is written once."""
    exe = compile_program("coll_direct_mix.c")
    log = tmp_path / "mix.pario"
    command = ["mpirun", "-np", str(NP), "--mca", "io", "romio321", str(exe), str(tmp_path), mode]
    proc = run_under_pario(log, command, env=mpi_env(), extra=["--collective", "auto"])
    assert proc.returncode == 0, proc.stderr
    n = 65536 if mode == "twophase" else (1 << 21) + 8
    expected = b"".join(bytes((r * 13 + i) % 251 for i in range(n)) for r in range(NP))
    assert (tmp_path / "mix.dat").read_bytes() == expected
    ranks = sorted((json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")),
                   key=lambda j: j["rank"])
    assert ranks == [{"rank": r, "err": 0, "count": n, "pos": (r + 1) * n} for r in range(NP)]
    profile = read_log(log)
    posix = profile.layer("posix")
    rows = [i for i in range(len(posix)) if str(posix["name"][i]) == str(tmp_path / "mix.dat")]
    assert sum(int(posix["bytes_written"][i]) for i in rows) == NP * n
    (engine,) = engine_files(profile)
    assert (engine.calls, engine.fallbacks) == (served, 1 - served)
