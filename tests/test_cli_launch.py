"""What a user types: launcher arguments after '--', a kernel's --help, --log DIR, make's targets."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pario.log import read_log
from record_helpers import check_io_known

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 180
BLOCK = ["--block-size", "64k", "--transfer-size", "16k"]


def kernel(pario_cmd: list[str], env: dict[str, str], *args: str, cwd: Path | None = None
           ) -> subprocess.CompletedProcess:
    return subprocess.run([*pario_cmd, "kernel", *args], env=env, capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=cwd)


@pytest.mark.slow
def test_launcher_arguments_reach_the_launcher(tmp_path: Path, pario_cmd, mpi_env):
    """`pario kernel block ... -- --mca io romio321`: mpirun gets the options, the kernel does not
    (given to the kernel they are an 'unexpected argument', exit 2)."""
    data = tmp_path / "b.dat"
    proc = kernel(pario_cmd, mpi_env, "block", "--np", "2", "--path", str(data), *BLOCK,
                  "--", "--mca", "io", "romio321")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["bytes_written"] == 2 * 65536
    # right after the name too (argparse would drop that '--' unless told not to)
    proc = kernel(pario_cmd, mpi_env, "block", "--", "--mca", "io", "romio321", "-np", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    dry = kernel(pario_cmd, mpi_env, "tile", "--", "-q", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    dry = kernel(pario_cmd, mpi_env, "tile", "--dry-run", "--np", "4", "--", "-q")
    words = dry.stdout.split()
    assert words[1:4] == ["-np", "4", "-q"] and words[4].endswith("pario-kernel-tile")


def test_kernel_help_runs_no_launcher(pario_cmd, mpi_env):
    """The kernel's own options, printed by the kernel alone: works with no mpirun on PATH."""
    env = mpi_env | {"PATH": "/nonexistent"}
    proc = kernel(pario_cmd, env, "s3d", "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: pario-kernel-s3d [options]") and "--nx N" in proc.stdout


@pytest.mark.slow
def test_log_directory(tmp_path: Path, compile_program, pario_cmd, mpi_env):
    """`pario run --log DIR/` (or an existing DIR): the runtime names the log inside it."""
    exe = compile_program("io_known.c")
    logs = tmp_path / "logs"
    logs.mkdir()
    for given in (f"{logs}/", str(logs)):
        for old in logs.iterdir():
            old.unlink()
        proc = subprocess.run([*pario_cmd, "run", "--log", given, "--", "mpirun", "-np", "3", str(exe),
                               str(tmp_path), "8", "4096"],
                              env=mpi_env, capture_output=True, text=True, timeout=TIMEOUT)
        assert proc.returncode == 0, proc.stderr
        (log,) = logs.iterdir()
        assert log.name.startswith("io_known-") and log.suffix == ".pario"
        assert f"pario: log written to {log} (io_known, 3 ranks)" in proc.stderr
        check_io_known(read_log(log), tmp_path, 3, 8, 4096)
    missing = subprocess.run([*pario_cmd, "run", "--log", f"{tmp_path}/none/", "--", "true"], env=mpi_env,
                             capture_output=True, text=True, timeout=TIMEOUT)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "does not exist" in missing.stderr


def test_make_demo_installs_no_test_services():
    """`make demo` needs Open MPI and Python only: Slurm, munge and MPICH are `make test`'s."""
    def recipe(target: str) -> str:
        return subprocess.run(["make", "-n", "-C", str(ROOT), target], capture_output=True, text=True,
                              timeout=60).stdout

    demo, test = recipe("demo"), recipe("test")
    for package in ("slurm", "munge", "mpich"):
        assert package not in demo and package in test
    assert "systemctl disable" in test and "policy-rc.d" in test


@pytest.mark.slow
def test_kernel_refuses_bad_hints(tmp_path: Path, pario_cmd, mpi_env):
    """A bad hint is a bad parameter of the kernel (exit 2, one line), never an MPI_ERR_INFO abort."""
    bad_file = tmp_path / "hints.txt"
    bad_file.write_text("cb_nodes 2\nstriping_factor 4 extra\n")
    cases = [
        ({"PARIO_KERNEL_HINTS": "cb_nodes="}, "bad hint 'cb_nodes' in PARIO_KERNEL_HINTS: no value"),
        ({"PARIO_KERNEL_HINTS": "=bad"}, "expected key=value"),
        ({"PARIO_KERNEL_HINTS": "k" * 300 + "=1"}, "key of 300 characters, at most 35 allowed"),
        ({"PARIO_KERNEL_HINTS_FILE": str(bad_file)}, f"hints file {bad_file} line 2: one value expected"),
    ]
    for extra, message in cases:
        proc = kernel(pario_cmd, mpi_env | extra, "block", "--np", "2", "--path", str(tmp_path / "b.dat"),
                      *BLOCK)
        assert proc.returncode == 2, proc.stderr
        # one line from the kernel (mpirun adds its own note on the exit code)
        lines = [line for line in proc.stderr.splitlines() if line.startswith("pario-kernel-block:")]
        assert len(lines) == 1 and message in lines[0], proc.stderr
        assert "MPI_ERR" not in proc.stderr


def test_kernel_says_how_to_run_more_ranks_than_cores(tmp_path: Path, pario_cmd, mpi_env):
    """More ranks than cores without --oversubscribe: Open MPI's mpirun refuses, and pario kernel
    adds the line that runs it, as pario run explains the same refusal."""
    import os
    import shlex

    np = (os.cpu_count() or 1) + 2
    env = {k: v for k, v in mpi_env.items() if k != "OMPI_MCA_rmaps_base_oversubscribe"}
    args = ["block", "--path", str(tmp_path / "b.dat"), *BLOCK, "--np", str(np)]
    proc = kernel(pario_cmd, env, *args)
    assert proc.returncode != 0
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith(f"pario: Open MPI's mpirun refuses {np} ranks on {os.cpu_count()} cores unless "
                           "--oversubscribe is given: pario kernel block ")
    again = shlex.split(line.split(" is given: ", 1)[1])
    assert again[again.index("--") + 1] == "--oversubscribe"
    rerun = kernel(pario_cmd, env, *again[2:])
    assert rerun.returncode == 0, rerun.stderr
