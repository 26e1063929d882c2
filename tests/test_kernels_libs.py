"""The kernels' library modes: `vpic --hdf5` (HDF5) and `s3d --pnetcdf` (PnetCDF).

Each mode writes with several ranks and reads back through the library with
--verify; the JSON's byte counts are checked against counts computed here, the
files are read by the libraries' own tools (h5dump, ncmpidump) and their values
compared with an independent Python implementation of the value patterns
(docs/kernels.md), and one run of each library under `pario run` shows the
MPI-IO and POSIX layers beneath seeing the file's bytes.  The library layers
themselves (h5f, h5d, pnetcdf_*) are tested with the runtime, not here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from kernel_helpers import TIMEOUT, kernel_exe, mpirun, one_json
from pario.log import read_log
from record_helpers import one_record

VPIC_VARS = ["x", "y", "z", "id1", "id2", "px", "py", "pz"]
S3D_ARRAYS = {"yspecies": 11, "u": 3, "pressure": 1, "temperature": 1}
GRID = (16, 8, 8)  # nx, ny, nz
MASK53 = (1 << 53) - 1


def vpic_value(seed: int, step: int, var: int, g: int) -> int:
    """Variable ``var`` of global particle ``g`` at ``step`` (vpic.c, vpic_value)."""
    return (((seed + step) * 8 + var) * 1000003 + g) & 0xFFFFFF


def s3d_value(seed: int, step: int, array: int, e: int) -> int:
    """Element ``e`` of one record of array ``array`` at ``step`` (s3d.c, s3d_value)."""
    return (((seed + step) * 4 + array) * 1000000007 + e) & MASK53


def run_kernel(kernel: str, args: list[str], nprocs: int) -> dict:
    proc = mpirun(kernel_exe(kernel), args, nprocs, quiet=True)
    assert proc.returncode == 0, proc.stderr
    return one_json(proc.stdout)


def tool(*cmd: str) -> str:
    proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def numbers(text: str) -> list[int]:
    """The numbers of a tool's data block (h5dump -y, ncmpidump), in order, as integers."""
    return [int(float(v)) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?", text)]


# ---- vpic --hdf5 -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def vpic_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict]]:
    """The clean run (collective, contiguous, aligned to 4 KiB, 2 steps, 4 ranks) and the
    problem run (independent, 64-element chunks, 2 ranks), both with --verify."""
    out = tmp_path_factory.mktemp("vpic-hdf5")
    runs = {
        "clean": (4, ["--collective", "--align", "4096", "--steps", "2", "--particles", "1000"]),
        "problem": (2, ["--independent", "--chunk", "64", "--particles", "1000"]),
    }
    files = {}
    for name, (nprocs, args) in runs.items():
        path = out / f"{name}.h5"
        files[name] = (path, run_kernel("vpic", ["--hdf5", *args, "--verify", "--path", str(path)], nprocs))
    return files


@pytest.mark.parametrize("name,nprocs,steps,mode,layout,chunk,align",
                         [("clean", 4, 2, "collective", "contiguous", None, 4096),
                          ("problem", 2, 1, "independent", "chunked", 64, 1)])
@pytest.mark.slow
def test_vpic_hdf5_json(vpic_files, name, nprocs, steps, mode, layout, chunk, align):
    path, res = vpic_files[name]
    data = 1000 * nprocs * 8 * 4 * steps
    assert res["api"] == "hdf5" and res["mode"] == mode and res["nprocs"] == nprocs
    assert res["bytes_written"] == data and res["bytes_read"] == data
    assert res["verified"] is True and res["phases"] == ["write", "read"]
    assert res["file_bytes"] == path.stat().st_size > data  # the data and HDF5's metadata
    h5 = res["hdf5"]
    assert h5["transfer"] == mode and h5["layout"] == layout and h5["chunk_elements"] == chunk
    assert h5["alignment"] == align and h5["version"].startswith("1.")
    assert h5["dataset_elements"] == 1000 * nprocs
    assert res["time_s"]["write"] > 0 and res["bandwidth_mib_s"]["write"] > 0


def test_h5dump_lists_the_datasets_and_their_layout(vpic_files):
    path, _ = vpic_files["clean"]
    header = tool("h5dump", "-p", "-H", str(path))
    for step in (0, 1):
        assert f'GROUP "Timestep_{step}"' in header
    assert 'GROUP "Timestep_2"' not in header
    dataset_re = r'DATASET "(\w+)" \{\s*DATATYPE\s+(\S+)\s*DATASPACE\s+SIMPLE \{ \( (\d+) \)'
    datasets = re.findall(dataset_re, header)
    assert sorted(datasets) == sorted(
        (v, "H5T_STD_I32LE" if v.startswith("id") else "H5T_IEEE_F32LE", "4000") for v in VPIC_VARS * 2
    )
    offsets = [int(o) for o in re.findall(r"CONTIGUOUS\s+SIZE 16000\s+OFFSET (\d+)", header)]
    assert len(offsets) == 16 and all(o % 4096 == 0 for o in offsets)  # --align 4096

    chunked = tool("h5dump", "-p", "-H", str(vpic_files["problem"][0]))
    assert chunked.count("CHUNKED ( 64 )") == 8


@pytest.mark.parametrize("dataset,var,step", [("/Timestep_1/x", 0, 1), ("/Timestep_0/id2", 4, 0),
                                              ("/Timestep_1/pz", 7, 1)])
def test_h5dump_shows_the_values(vpic_files, dataset, var, step):
    path, _ = vpic_files["clean"]
    # 995..1004 crosses from rank 0's hyperslab into rank 1's
    text = tool("h5dump", "-y", "-m", "%.9g", "-d", dataset, "-s", "995", "-c", "10", str(path))
    data = text[text.index("DATA {") + len("DATA {"):]
    data = data[:data.index("}")]
    assert numbers(data) == [vpic_value(0, step, var, g) for g in range(995, 1005)]


@pytest.mark.slow
def test_vpic_hdf5_verify_finds_other_values(vpic_files):
    path, _ = vpic_files["problem"]
    args = ["--hdf5", "--particles", "1000", "--read-only", "--verify", "--seed", "1", "--path", str(path)]
    proc = mpirun(kernel_exe("vpic"), args, 2, quiet=True)
    assert proc.returncode == 1
    first = vpic_value(1, 0, 0, 0)
    assert proc.stderr.strip().splitlines()[-1] == (
        f"pario-kernel-vpic: verify failed: {path} /Timestep_0/x[0]: expected {first}, read 0 "
        "(rank 0; 16000 differing values read in all)"
    )
    assert one_json(proc.stdout)["verified"] is False


# ---- s3d --pnetcdf --------------------------------------------------------------------------------

S3D_METHODS = {
    "blocking": ["--collective"],
    "nonblocking": ["--nonblocking"],
    "small": ["--independent", "--small"],
}


@pytest.fixture(scope="module")
def s3d_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict]]:
    out = tmp_path_factory.mktemp("s3d-pnetcdf")
    nx, ny, nz = GRID
    files = {}
    for name, args in S3D_METHODS.items():
        path = out / f"{name}.nc"
        files[name] = (path, run_kernel("s3d", ["--pnetcdf", *args, "--nx", str(nx), "--ny", str(ny), "--nz",
                                                str(nz), "--steps", "2", "--verify", "--path", str(path)], 4))
    return files


@pytest.mark.parametrize("method", list(S3D_METHODS))
@pytest.mark.slow
def test_s3d_pnetcdf_json(s3d_files, method):
    path, res = s3d_files[method]
    nx, ny, nz = GRID
    data = nx * ny * nz * (11 + 3 + 1 + 1) * 8 * 2
    assert res["api"] == "pnetcdf" and res["nprocs"] == 4
    assert res["mode"] == ("independent" if method == "small" else "collective")
    assert res["bytes_written"] == data and res["bytes_read"] == data and res["verified"] is True
    nc = res["pnetcdf"]
    assert nc["method"] == method and nc["format"] == "CDF-5" and nc["version"].startswith("1.")
    lx, ly, lz = (nx // p for nx, p in zip(GRID, res["params"]["procs"], strict=True))
    assert res["params"]["local"] == [lx, ly, lz]
    # one call per array per step, or one per x-row of the block
    assert nc["calls_per_step"] == (4 if method != "small" else (11 + 3 + 1 + 1) * lz * ly)
    # the header, then the records: nothing else in the file
    assert res["file_bytes"] == path.stat().st_size == nc["header_extent"] + data
    assert "nc_header_align_size" in res["hints"]


def test_ncmpidump_lists_the_variables_and_dimensions(s3d_files):
    nx, ny, nz = GRID
    header = tool("ncmpidump", "-h", str(s3d_files["nonblocking"][0]))
    assert "file format: CDF-5" in header
    dims = dict(re.findall(r"^\s+(\w+) = (\w+) ;", header, re.M))
    assert dims == {"time": "UNLIMITED", "species": "11", "component": "3", "z": str(nz), "y": str(ny),
                    "x": str(nx)}
    assert "// (2 currently)" in header
    variables = re.findall(r"^\s+double (\w+)\(([^)]*)\) ;", header, re.M)
    assert variables == [("yspecies", "time, species, z, y, x"), ("u", "time, component, z, y, x"),
                         ("pressure", "time, z, y, x"), ("temperature", "time, z, y, x")]


@pytest.mark.parametrize("method", list(S3D_METHODS))
@pytest.mark.parametrize("array", ["u", "temperature"])
@pytest.mark.slow
def test_ncmpidump_shows_the_values(s3d_files, method, array):
    """Every value of the variable, both records, in file order (time, [component,] z, y, x)."""
    text = tool("ncmpidump", "-v", array, str(s3d_files[method][0]))
    data = text[text.index("data:"):]
    data = data[data.index("=") + 1:data.index(";")]
    a = list(S3D_ARRAYS).index(array)
    per_record = S3D_ARRAYS[array] * GRID[0] * GRID[1] * GRID[2]
    assert numbers(data) == [s3d_value(0, t, a, e) for t in (0, 1) for e in range(per_record)]


def test_s3d_pnetcdf_verify_finds_other_values(s3d_files):
    path, _ = s3d_files["blocking"]
    nx, ny, nz = GRID
    args = ["--pnetcdf", "--nx", str(nx), "--ny", str(ny), "--nz", str(nz), "--steps", "2",
            "--read-only", "--verify", "--seed", "2", "--path", str(path)]
    proc = mpirun(kernel_exe("s3d"), args, 4, quiet=True)
    assert proc.returncode == 1
    first = s3d_value(2, 0, 0, 0)
    assert f"pario-kernel-s3d: verify failed: {path} yspecies[0][0]: expected {first}, read 0 " in proc.stderr
    assert one_json(proc.stdout)["verified"] is False


# ---- bad options --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kernel,args,message", [
    ("vpic", ["--chunk", "64"],
     "--chunk, --align, --align-threshold, --coll-metadata and --force need --hdf5"),
    ("vpic", ["--hdf5", "--particles", "10", "--chunk", "100"],
     "--chunk must be between 1 and the particles of all ranks (20) and below 2^30"),
    ("vpic", ["--hdf5", "--align-threshold", "64k"], "--align-threshold needs --align"),
    # 2 ranks x 1m particles in chunks of 64: 32768 chunks per dataset, 8 datasets
    ("vpic", ["--hdf5", "--chunk", "64"],
     "--chunk 64 makes 262144 chunks (8 datasets x 1 steps x 32768 chunks), each created and indexed by "
     "HDF5 with metadata operations on every rank: hours at this size; use --chunk 256 or more, fewer "
     "--particles, or --force"),
    ("s3d", ["--small"], "--nonblocking and --small need --pnetcdf"),
    ("s3d", ["--pnetcdf", "--small", "--nonblocking"], "--nonblocking and --small exclude each other"),
])
@pytest.mark.slow
def test_bad_library_options_exit_2_with_one_line(tmp_path, kernel, args, message):
    proc = mpirun(kernel_exe(kernel), [*args, "--path", str(tmp_path / "f")], 2, quiet=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"pario-kernel-{kernel}: error: {message}"
    assert proc.stdout == "" and not (tmp_path / "f").exists()


@pytest.mark.slow
def test_vpic_many_chunks_run_with_force(tmp_path):
    """Over 65536 chunks (131072 here: 64k particles in chunks of 4, 8 datasets) only with --force."""
    args = ["--hdf5", "--particles", "64k", "--chunk", "4", "--path", str(tmp_path / "f.h5"), "--delete"]
    assert mpirun(kernel_exe("vpic"), args, 1, quiet=True).returncode == 2
    proc = mpirun(kernel_exe("vpic"), [*args, "--force"], 1, quiet=True)
    assert proc.returncode == 0, proc.stderr
    assert one_json(proc.stdout)["hdf5"]["chunk_elements"] == 4


@pytest.mark.slow
def test_long_runs_show_progress(tmp_path):
    """Rank 0 prints its progress on stderr (every PARIO_KERNEL_PROGRESS seconds: each unit at 0)."""
    args = ["--hdf5", "--particles", "1k", "--steps", "2", "--path", str(tmp_path / "f.h5"), "--delete"]
    proc = mpirun(kernel_exe("vpic"), args, 2, quiet=True, env={"PARIO_KERNEL_PROGRESS": "0"})
    assert proc.returncode == 0, proc.stderr
    lines = [ln.rsplit(" (", 1)[0] for ln in proc.stderr.splitlines()]
    assert lines == [f"pario-kernel-vpic: datasets written {i}/16" for i in range(1, 17)]
    proc = mpirun(kernel_exe("block"), ["--steps", "3", "--path", str(tmp_path / "b.dat"), "--delete"], 2,
                  quiet=True, env={"PARIO_KERNEL_PROGRESS": "0"})
    assert [ln.rsplit(" (", 1)[0] for ln in proc.stderr.splitlines()] == [
        f"pario-kernel-block: steps written {i}/3" for i in range(1, 4)]
    quiet = mpirun(kernel_exe("block"), ["--steps", "3", "--path", str(tmp_path / "b.dat"), "--delete"], 2,
                   quiet=True)
    assert quiet.returncode == 0 and quiet.stderr == ""


# ---- under pario run: the layers beneath the library ------------------------------------------------------

@pytest.mark.parametrize("kernel,args,independent", [
    ("vpic", ["--hdf5", "--particles", "2000", "--steps", "2"], False),
    ("s3d", ["--pnetcdf", "--independent", "--small", "--nx", "16", "--ny", "8", "--nz", "8"], True),
])
@pytest.mark.slow
def test_mpiio_beneath_the_library_sees_the_bytes(tmp_path, run_under_pario, kernel, args, independent):
    path, log = tmp_path / f"{kernel}.out", tmp_path / "run.pario"
    proc = run_under_pario(log, ["mpirun", "--oversubscribe", "-np", "4", str(kernel_exe(kernel)), *args,
                                 "--path", str(path)])
    assert proc.returncode == 0, proc.stderr
    res = one_json(proc.stdout)
    data, size = res["bytes_written"], res["file_bytes"]
    profile = read_log(log)
    mpiio = one_record(profile.layer("mpiio"), str(path))
    # the data and the library's metadata (header, object headers), nothing read
    assert data <= mpiio["bytes_written"] <= data + (size - data) * 4
    assert mpiio["bytes_read"] <= size - data
    assert mpiio["coll_opens"] == 4
    if independent:
        calls = res["pnetcdf"]["calls_per_step"] * 4
        assert mpiio["coll_writes"] == 0 and mpiio["indep_writes"] >= calls
    else:
        assert mpiio["coll_writes"] >= 4 * 8 * 2  # one collective H5Dwrite per dataset and rank
    posix = profile.layer("posix")
    posix = posix[posix["name"] == str(path)]
    assert posix["bytes_written"].sum() == mpiio["bytes_written"]
