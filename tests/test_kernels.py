"""The I/O kernels (src/kernels) and `pario kernel`.

Every kernel runs with 1, 4 and 9 processes (oversubscribed), collective and
independent, with Open MPI's ompio, and at 4 processes also with romio321, always
with --verify.  Each file written is compared byte for byte with an independent
Python implementation of the pattern (which makes all modes and components
identical to each other), and the files of the four mode/component combinations
at 4 processes are compared directly as well.  Byte counts in the JSON are checked
against counts computed here from the parameters.
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from kernel_helpers import (
    TIMEOUT,
    assert_file_is_pattern,
    expected_bytes,
    file_seed,
    kernel_exe,
    kernel_runs,  # noqa: F401  (session fixture)
    mpi_env,
    mpirun,
    one_json,
    pario_cli,
    pattern,
)
from pario import kernels, paths
from pario.errors import ParioError

KERNELS = ["block", "s3d", "bt", "vpic", "tile"]
MODES = ["collective", "independent"]

MATRIX = [(k, n, m, "ompio") for k in KERNELS for n in (1, 4, 9) for m in MODES]
MATRIX += [(k, 4, m, "romio321") for k in KERNELS for m in MODES]


# ---- the matrix --------------------------------------------------------------------------

@pytest.mark.parametrize("kernel,nprocs,mode,io", MATRIX, ids=lambda v: str(v))
@pytest.mark.slow
def test_kernel_writes_verifies_and_counts(kernel_runs, kernel, nprocs, mode, io):  # noqa: F811
    run = kernel_runs(kernel, nprocs, mode, io)
    res = run.result
    written, size = expected_bytes(kernel, nprocs)
    assert res["kernel"] == kernel
    assert res["nprocs"] == nprocs
    assert res["mode"] == mode
    assert res["api"] == "mpiio"
    assert res["steps"] == 2
    assert res["phases"] == ["write", "read"]
    assert res["bytes_written"] == written
    assert res["bytes_read"] == written
    assert res["file_bytes"] == size
    assert res["step_bytes"] * 2 == size
    assert res["verified"] is True
    for phase in ("open", "write", "read", "close", "total"):
        assert res["time_s"][phase] >= 0
    assert res["bandwidth_mib_s"]["write"] > 0
    assert res["bandwidth_mib_s"]["read"] > 0
    assert isinstance(res["hints"], dict)
    assert run.proc.stderr.strip() == ""
    assert_file_is_pattern(run.path, size)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.slow
def test_files_identical_across_modes_and_components(kernel_runs, kernel):  # noqa: F811
    digests = {(m, io): kernel_runs(kernel, 4, m, io).digest for m in MODES for io in ("ompio", "romio321")}
    assert len(set(digests.values())) == 1, digests


# ---- parameters reported in the JSON -------------------------------------------------------

@pytest.mark.slow
def test_params_in_json(kernel_runs):  # noqa: F811
    s3d = kernel_runs("s3d", 4, "collective", "ompio").result["params"]
    assert s3d["grid"] == [12, 12, 6] and s3d["procs"] == [2, 1, 2] and s3d["local"] == [6, 12, 3]
    assert s3d["arrays"] == {"yspecies": 11, "u": 3, "pressure": 1, "temperature": 1}
    bt = kernel_runs("bt", 9, "collective", "ompio").result["params"]
    assert bt["grid"] == [13, 13, 13] and bt["cells_per_dim"] == 3 and bt["cells_per_rank"] == 3
    tile = kernel_runs("tile", 9, "collective", "ompio").result["params"]
    assert tile["tiles"] == [3, 3] and tile["array"] == [3 * 16 - 2 * 2, 3 * 12 - 2 * 1]
    vpic = kernel_runs("vpic", 4, "collective", "ompio").result["params"]
    assert vpic["particles"] == 12000
    assert vpic["variables"] == ["x", "y", "z", "id1", "id2", "px", "py", "pz"]
    block = kernel_runs("block", 4, "collective", "ompio").result["params"]
    assert block == {"layout": "strided", "block_size": 65536, "transfer_size": 16384, "segments": 3}


# ---- block variants -----------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("api", ["mpiio", "posix"])
def test_block_shared_layouts(tmp_path, layout, api):
    path = tmp_path / "b.dat"
    args = ["--layout", layout, "--api", api, "--block-size", "32k", "--transfer-size", "8k",
            "--segments", "2", "--path", str(path), "--verify"]
    if api == "posix":
        args.append("--independent")
    proc = mpirun(kernel_exe("block"), args, 4)
    assert proc.returncode == 0, proc.stderr
    res = one_json(proc.stdout)
    assert res["api"] == api and res["params"]["layout"] == layout
    assert res["bytes_written"] == res["bytes_read"] == 4 * 2 * 32 * 1024
    assert_file_is_pattern(path, 4 * 2 * 32 * 1024)


def test_block_file_per_process(tmp_path):
    path = tmp_path / "fpp"
    args = ["--layout", "fpp", "--block-size", "16k", "--transfer-size", "4k", "--segments", "3",
            "--steps", "2", "--seed", "7", "--path", str(path), "--verify"]
    proc = mpirun(kernel_exe("block"), args, 4)
    assert proc.returncode == 0, proc.stderr
    res = one_json(proc.stdout)
    per_file = 3 * 16 * 1024 * 2
    assert res["file_per_process"] is True and res["files"] == 4
    assert res["bytes_written"] == res["file_bytes"] == 4 * per_file
    for rank in range(4):
        f = tmp_path / f"fpp.{rank:08d}"
        assert_file_is_pattern(f, per_file, seed=file_seed(7, rank))


@pytest.mark.slow
def test_block_posix_rejects_collective(tmp_path):
    proc = mpirun(kernel_exe("block"), ["--api", "posix", "--collective", "--path", str(tmp_path / "x")], 2,
                  quiet=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "pario-kernel-block: error: --collective needs --api mpiio (POSIX I/O is independent)"
    )


def test_tile_large_elements(tmp_path):
    path = tmp_path / "t.dat"
    args = ["--tile-x", "4", "--tile-y", "3", "--element-size", "4k", "--overlap-x", "1", "--overlap-y", "1",
            "--path", str(path), "--verify"]
    proc = mpirun(kernel_exe("tile"), args, 4, io="romio321")
    assert proc.returncode == 0, proc.stderr
    res = one_json(proc.stdout)
    assert res["params"]["tiles"] == [2, 2]
    assert res["bytes_written"] == 4 * 4 * 3 * 4096
    assert_file_is_pattern(path, (2 * 4 - 1) * (2 * 3 - 1) * 4096)


def test_bt_class_and_default_steps(tmp_path):
    path = tmp_path / "bt.dat"
    proc = mpirun(kernel_exe("bt"), ["--class", "S", "--path", str(path)], 4)
    assert proc.returncode == 0, proc.stderr
    res = one_json(proc.stdout)
    assert res["params"]["class"] == "S" and res["params"]["grid"] == [12, 12, 12]
    assert res["phases"] == ["write"] and res["bytes_read"] == 0 and res["verified"] is None
    assert_file_is_pattern(path, 12 ** 3 * 40)


# ---- verification failure and --read-only ----------------------------------------------------

@pytest.mark.slow
def test_verify_detects_corruption(tmp_path):
    path = tmp_path / "v.dat"
    exe = kernel_exe("vpic")
    proc = mpirun(exe, ["--particles", "1000", "--path", str(path)], 2)
    assert proc.returncode == 0, proc.stderr
    ok = mpirun(exe, ["--particles", "1000", "--path", str(path), "--read-only", "--verify"], 2)
    assert ok.returncode == 0, ok.stderr
    assert one_json(ok.stdout)["bytes_read"] == 2 * 1000 * 32
    offset = 12345
    data = bytearray(path.read_bytes())
    good = data[offset]
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))
    bad = mpirun(exe, ["--particles", "1000", "--path", str(path), "--read-only", "--verify"], 2, quiet=True)
    assert bad.returncode == 1
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1, bad.stderr
    assert f"offset {offset}: expected {good:#04x}, read {good ^ 0xFF:#04x}" in lines[0]
    assert "1 differing bytes" in lines[0]
    assert one_json(bad.stdout)["verified"] is False


@pytest.mark.slow
def test_read_only_missing_file(tmp_path):
    proc = mpirun(kernel_exe("vpic"), ["--path", str(tmp_path / "none.dat"), "--read-only"], 2, quiet=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "cannot read" in proc.stderr


# ---- hints ----------------------------------------------------------------------------------

@pytest.mark.parametrize("io", ["ompio", "romio321"])
def test_hints_from_environment_and_option(tmp_path, io):
    hfile = tmp_path / "hints"
    hfile.write_text("# ROMIO_HINTS format\ncb_buffer_size 1048576\nromio_cb_write disable\n")
    env = {"PARIO_KERNEL_HINTS_FILE": str(hfile), "PARIO_KERNEL_HINTS": "cb_nodes=2, romio_cb_write=enable"}
    args = ["--particles", "1000", "--path", str(tmp_path / "h.dat"), "--hints", "romio_no_indep_rw=false"]
    proc = mpirun(kernel_exe("vpic"), args, 2, io=io, env=env)
    assert proc.returncode == 0, proc.stderr
    res = one_json(proc.stdout)
    want = {
        "cb_buffer_size": "1048576",
        "cb_nodes": "2",
        "romio_cb_write": "enable",
        "romio_no_indep_rw": "false",
    }
    assert res["hints_requested"] == want
    # Open MPI 4.1's MPI_File_get_info returns the hints given at open (see docs/kernels.md)
    for key, value in want.items():
        assert res["hints"].get(key) == value


def test_no_hints_passes_info_null(tmp_path):
    proc = mpirun(kernel_exe("vpic"), ["--particles", "100", "--path", str(tmp_path / "h.dat")], 1)
    assert proc.returncode == 0, proc.stderr
    assert one_json(proc.stdout)["hints_requested"] == {}


@pytest.mark.slow
def test_bad_hint(tmp_path):
    proc = mpirun(kernel_exe("vpic"), ["--path", str(tmp_path / "h.dat")], 2, quiet=True,
                  env={"PARIO_KERNEL_HINTS": "cb_nodes"})
    assert proc.returncode == 2
    assert proc.stderr == ("pario-kernel-vpic: error: bad hint 'cb_nodes' in PARIO_KERNEL_HINTS: "
                           "expected key=value\n")


# ---- bad parameters: exit 2 on every rank, one line, no hang ---------------------------------------

BAD = [
    ("bt", 2, ["--size", "12"], "2 processes is not a square number"),
    ("bt", 4, ["--class", "Q"], "option --class: 'Q' is not one of"),
    ("s3d", 4, ["--nx", "13", "--px", "2", "--py", "2", "--pz", "1"], "does not divide"),
    ("s3d", 4, ["--px", "3"], "does not match 4 processes"),
    ("block", 4, ["--path", "/nonexistent-dir/sub/x.dat"], "directory /nonexistent-dir/sub does not exist"),
    ("block", 4, ["--block-size", "64k", "--transfer-size", "3k"], "does not divide --block-size"),
    ("vpic", 4, ["--bogus"], "unknown option '--bogus'"),
    ("vpic", 4, ["--particles", "many"], "is not a size"),
    ("tile", 4, ["--tile-x", "8", "--overlap-x", "8"], "must be smaller than the tile"),
    ("tile", 4, ["--tiles-x", "3"], "does not match 4 processes"),
    ("s3d", 1, ["--steps", "0"], "--steps must be between"),
    ("block", 1, ["stray"], "unexpected argument 'stray'"),
]


@pytest.mark.parametrize("kernel,nprocs,args,message", BAD, ids=[f"{b[0]}-{b[3][:20]}" for b in BAD])
@pytest.mark.slow
def test_bad_parameters(tmp_path, kernel, nprocs, args, message):
    if "--path" not in args:
        args = [*args, "--path", str(tmp_path / "x.dat")]
    rcdir = tmp_path / "rc"
    rcdir.mkdir()
    # each rank records its own exit code: every rank must exit 2
    script = 'exe="$1"; shift; "$exe" "$@"; echo $? > "$RCDIR/rc.$OMPI_COMM_WORLD_RANK"'
    cmd = ["mpirun", "--oversubscribe", "-q", "-np", str(nprocs), "-x", "RCDIR",
           "sh", "-c", script, "sh", str(kernel_exe(kernel)), *args]
    proc = subprocess.run(cmd, env=mpi_env({"RCDIR": str(rcdir)}), capture_output=True, text=True,
                          timeout=TIMEOUT)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"pario-kernel-{kernel}: error: ")
    assert message in lines[0]
    assert proc.stdout == ""
    codes = sorted(int((rcdir / f"rc.{r}").read_text()) for r in range(nprocs))
    assert codes == [2] * nprocs
    assert not (tmp_path / "x.dat").exists()


@pytest.mark.skipif(os.geteuid() != 0,
                    reason="not root: /proc is only 'writable' for root; others get exit 2")
@pytest.mark.parametrize("extra", [[], ["--api", "posix", "--independent"], ["--layout", "fpp"]])
@pytest.mark.slow
def test_io_error_exit_1(extra):
    """The directory passes the checks but the open fails: one line, exit 1, no hang."""
    proc = mpirun(kernel_exe("block"), ["--path", "/proc/pario-x.dat", *extra], 2, quiet=True)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("pario-kernel-block: error: ") and "/proc/pario-x.dat" in lines[0]
    assert proc.stdout == ""


def test_bad_parameters_without_launcher(tmp_path):
    """A singleton run (no mpirun): exactly one line on stderr, exit 2."""
    cmd = [str(kernel_exe("bt")), "--size", "0", "--path", str(tmp_path / "x")]
    proc = subprocess.run(cmd, env=mpi_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 2
    assert proc.stderr == "pario-kernel-bt: error: --size must be positive (got 0)\n"


def test_help(tmp_path):
    proc = subprocess.run([str(kernel_exe("tile")), "--help"], env=mpi_env(), capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode == 0
    assert "--element-size" in proc.stdout and "PARIO_KERNEL_HINTS" in proc.stdout


# ---- pario kernel ---------------------------------------------------------------------------------

def test_cli_list():
    proc = pario_cli(["kernel", "--list"])
    assert proc.returncode == 0, proc.stderr
    # one paragraph a kernel: its name, its description (wrapped lines continue it, indented)
    lines = re.sub(r"\n +", " ", proc.stdout).splitlines()
    assert [ln.split()[0] for ln in lines] == KERNELS
    assert all(len(ln.split(None, 1)[1]) > 20 for ln in lines)


def test_cli_unknown_kernel():
    proc = pario_cli(["kernel", "nosuch", "--np", "2"])
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "pario: error: unknown kernel 'nosuch'; the kernels are block, s3d, bt, vpic, tile "
        "(pario kernel --list)"
    ]


@pytest.mark.slow
def test_cli_runs_kernel(tmp_path):
    path = tmp_path / "cli.dat"
    proc = pario_cli(["kernel", "block", "--np", "4", "--block-size", "32k", "--transfer-size", "8k",
                      "--path", str(path), "--verify", "--independent",
                      "--", "--oversubscribe", "--mca", "io", "romio321"])
    assert proc.returncode == 0, proc.stderr
    res = one_json(proc.stdout)
    assert res["nprocs"] == 4 and res["mode"] == "independent" and res["verified"] is True
    assert res["bytes_written"] == 4 * 32 * 1024
    assert_file_is_pattern(path, 4 * 32 * 1024)


@pytest.mark.slow
def test_cli_passes_exit_code(tmp_path):
    proc = pario_cli(["kernel", "--np", "2", "bt", "--path", str(tmp_path / "x"), "--", "-q"])
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("pario-kernel-bt: error: 2 processes is not a square number; "
                                   "bt needs 1, 4, 9, 16, ... processes")


def test_cli_dry_run():
    proc = pario_cli(["kernel", "s3d", "--np", "8", "--dry-run", "--nx", "64", "--", "--mca", "io", "ompio"])
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.split()
    assert words[0].endswith("mpirun") and words[1:3] == ["-np", "8"]
    assert words[3:6] == ["--mca", "io", "ompio"]
    assert words[6].endswith("/bin/pario-kernel-s3d") and words[7:] == ["--nx", "64"]


def test_build_command_launchers(monkeypatch):
    monkeypatch.setattr(kernels.shutil, "which", lambda name: f"/opt/bin/{name}")
    exe = str(kernel_exe("vpic"))
    cmd = kernels.build_command("vpic", ["--steps", "2"], np=16, launcher="srun", launcher_args=["-N", "2"])
    assert cmd == ["/opt/bin/srun", "-n", "16", "-N", "2", exe, "--steps", "2"]
    assert kernels.build_command("vpic", np=3, launcher="mpiexec") == ["/opt/bin/mpiexec", "-n", "3", exe]
    assert kernels.build_command("vpic", ["--read"], launcher="none") == [exe, "--read"]
    with pytest.raises(ParioError):
        kernels.build_command("vpic", np=2, launcher="none")
    with pytest.raises(ParioError):
        kernels.build_command("vpic", np=0)
    with pytest.raises(ParioError):
        kernels.build_command("vpic", launcher="qsub")
    monkeypatch.setattr(kernels.shutil, "which", lambda name: None)
    with pytest.raises(ParioError, match="srun is not on PATH"):
        kernels.build_command("vpic", launcher="srun")


def test_run_library_call(tmp_path):
    res = kernels.run("tile", ["--path", str(tmp_path / "t"), "--tile-x", "8", "--tile-y", "8"], np=4,
                      launcher_args=["--oversubscribe"], capture=True, env=mpi_env())
    assert res.returncode == 0, res.stderr
    assert res.result["bytes_written"] == 4 * 8 * 8 * 8


# ---- the pattern itself -----------------------------------------------------------------------

def test_pattern_is_offset_function():
    whole = pattern(0, 4096, seed=3)
    assert pattern(1001, 77, seed=3) == whole[1001:1078]
    assert pattern(0, 4096, seed=4) != whole
    assert len(set(whole)) > 200  # not a constant or short cycle


# ---- pario-demo-io ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_demo_io(tmp_path):
    exe = paths.program("pario-demo-io")
    proc = mpirun(exe, [str(tmp_path)], 4)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 1 and proc.stdout.startswith("pario-demo-io: 4 ranks")
    assert (tmp_path / "shared.dat").stat().st_size == 4 * 4 * 1024 * 1024
    for r in range(4):
        assert (tmp_path / f"rank{r}.dat").stat().st_size == 16 * 64 * 1024
    log = (tmp_path / "demo.log").read_text()
    assert len(log) == 2100 and log.count("\n") == 100 and log.startswith("demo line 001 of 100\n")


@pytest.mark.slow
def test_demo_io_missing_dir(tmp_path):
    exe = paths.program("pario-demo-io")
    proc = mpirun(exe, [str(tmp_path / "missing")], 4, quiet=True)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"pario-demo-io: error: output directory {tmp_path / 'missing'} does not exist (create it first)"]


@pytest.mark.parametrize("args,message", [
    (["--blok-size", "8k"], "kernel block: unknown option '--blok-size' (see --help)"),
    (["--steps", "0"], "kernel block: --steps must be between 1 and 1000000 (got 0)"),
    (["--collective", "--independent"], "kernel block: --collective and --independent exclude each other"),
])
def test_cli_refuses_bad_options_before_the_launcher(tmp_path, args, message):
    """A mistake in the kernel's options is one line, exit 2, and mpirun never starts (no banner,
    no file): the kernel checks its options alone first (--check-options)."""
    proc = pario_cli(["kernel", "block", "--np", "2", "--path", str(tmp_path / "x.dat"), *args])
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"pario: error: {message}"]
    assert proc.stdout == "" and not (tmp_path / "x.dat").exists()


def test_check_options_alone(tmp_path):
    ok = subprocess.run([str(kernel_exe("tile")), "--check-options", "--tile-x", "8"], env=mpi_env(),
                        capture_output=True, text=True, timeout=TIMEOUT)
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "", "")
    bad = subprocess.run([str(kernel_exe("tile")), "--check-options", "--tile-x", "eight"], env=mpi_env(),
                         capture_output=True, text=True, timeout=TIMEOUT)
    assert bad.returncode == 2
    assert bad.stderr == "pario-kernel-tile: error: option --tile-x: 'eight' is not an integer\n"
