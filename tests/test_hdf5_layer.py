"""The runtime's HDF5 layer (src/runtime/hdf5.c, docs/libraries.md): exact H5F/H5D counters of
tests/programs/h5_known.c on 4 ranks, the rank's HDF5 time classes over the MPI-IO beneath,
PARIO_HINTS hdf5.* injection (alignment, collective transfers) with its trace events, groups and
attributes as the file's HDF5 metadata (tests/programs/h5_groups.c and vpic --hdf5: no MPI-IO time
of the rank's own), a program without HDF5, and a libhdf5 of another version (the layer passes
calls through, META says why)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pario import paths
from pario.log import read_log
from pario.model import Profile
from pario.table import Table
from pario.trace.format import FLAG_COLLECTIVE, LAYER_MASK, LAYER_SHIFT, Kind
from record_helpers import one_record

NP = 4
K = 1024  # doubles per rank in /contig (h5_known.c)
H5F, H5D = 3, 4  # the runtime's layer numbers
MASK64 = (1 << 64) - 1


def hdf5_flags() -> tuple[str, ...]:
    out = subprocess.run(["pkg-config", "--cflags", "--libs", "hdf5-openmpi"], capture_output=True, text=True,
                         check=True)
    return tuple(out.stdout.split())


@dataclass
class H5Run:
    profile: Profile
    out: Path
    stdout: str

    def offset(self) -> int:
        """The address of /contig in the file, as h5_known printed it (H5Dget_offset)."""
        lines = [ln for ln in self.stdout.splitlines() if ln.startswith("offset /contig ")]
        assert len(lines) == 1, self.stdout
        return int(lines[0].split()[-1])


def run_known(tmp: Path, compile_program, pario_cmd: list[str],
              mpi_env: dict[str, str], extra: list[str] | None = None) -> H5Run:
    """h5_known on NP ranks under ``pario run [extra]`` (module fixtures: run_under_pario is per test)."""
    exe = compile_program("h5_known.c", extra=hdf5_flags())
    log = tmp / "h5.pario"
    command = ["mpirun", "-np", str(NP), str(exe), str(tmp)]
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), *(extra or []), "--", *command], env=mpi_env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return H5Run(read_log(log), tmp, proc.stdout)


@pytest.fixture(scope="module")
def plain(tmp_path_factory, compile_program, pario_cmd, mpi_env) -> H5Run:
    return run_known(tmp_path_factory.mktemp("h5plain"), compile_program, pario_cmd, mpi_env)


@pytest.fixture(scope="module")
def hinted(tmp_path_factory, compile_program, pario_cmd, mpi_env) -> H5Run:
    """h5_known under --trace with alignment for every file and collective transfers for known.h5
    (the [other.h5] section does not match it)."""
    tmp = tmp_path_factory.mktemp("h5hints")
    hints = tmp / "hints"
    hints.write_text("hdf5.alignment_threshold 4096\nhdf5.alignment 1048576\ncb_buffer_size 1048576\n"
                     "[known.h5]\nhdf5.transfer collective\nhdf5.sieve_buf_size 131072\n"
                     "hdf5.coll_metadata_ops true\nhdf5.coll_metadata_write true\n"
                     "[other.h5]\nhdf5.meta_block_size 8192\n")
    return run_known(tmp, compile_program, pario_cmd, mpi_env, extra=["--hints", str(hints), "--trace"])


def columns(table: Table, names: list[str]) -> np.ndarray:
    """The table's columns ``names`` side by side (rows x names)."""
    return np.column_stack([table[c] for c in names])


def row_sums(table: Table, names: list[str]) -> np.ndarray:
    """Per row, the sum of columns ``names`` (NaN skipped, as pandas' sum(axis=1))."""
    return np.nansum(columns(table, names), axis=1)


def rank_row(ranks: Table, rank: int) -> int:
    """The row of rank ``rank`` in a rank table (row i is rank i unless a "rank" column says)."""
    if "rank" not in ranks:
        return rank
    (row,) = np.flatnonzero(ranks["rank"] == rank)
    return int(row)


def datasets(profile: Profile, out: Path) -> dict[str, dict[str, Any]]:
    frame = profile.layer("h5d")
    names = ("/contig", "/grid/chunked", "/points")
    return {name: one_record(frame, f"{out / 'known.h5'}:{name}") for name in names}


@pytest.mark.slow
def test_file_record(plain: H5Run) -> None:
    p, out = plain.profile, plain.out
    assert p.job.metadata["library_layers"]["hdf5"] == {"built": "1.10.8", "found": "1.10.8", "active": True,
                                                        "why": ""}
    assert len(p.layer("h5f")) == 1
    f = one_record(p.layer("h5f"), str(out / "known.h5"))
    assert f["rank"] == -1 and f["nranks"] == NP
    assert (f["creates"], f["opens"], f["flushes"], f["use_mpiio"]) == (NP, NP, NP, 1)
    per_rank_written = K * 8 + 8 * 64 * 4 + 3 * 8
    per_rank_read = 30 * 8 + NP * K * 8
    assert f["bytes_written"] == NP * per_rank_written and f["bytes_read"] == NP * per_rank_read
    # HDF5 1.10's defaults, read back from the file's access list
    props = (f["align_threshold"], f["alignment"], f["meta_block_size"], f["sieve_buf_size"])
    assert props == (1, 1, 2048, 65536)
    assert (f["coll_metadata_reads"], f["coll_metadata_writes"]) == (0, 0)
    # the file's read/write times are its datasets'
    d = p.layer("h5d")
    assert f["write_time"] == pytest.approx(d["write_time"].sum(), rel=1e-6, abs=1e-6)
    assert f["read_time"] == pytest.approx(d["read_time"].sum(), rel=1e-6, abs=1e-6)
    assert f["meta_time"] > 0 and 0 < f["open_start_timestamp"] < f["close_end_timestamp"]
    assert plain.offset() % 1048576 != 0  # not aligned without the hints


def test_dataset_records(plain: H5Run) -> None:
    p, out = plain.profile, plain.out
    fid = int(one_record(p.layer("h5f"), str(out / "known.h5"))["id"])
    ds = datasets(p, out)
    assert len(p.layer("h5d")) == 3
    c, g, pt = ds["/contig"], ds["/grid/chunked"], ds["/points"]
    for d in ds.values():
        assert d["rank"] == -1 and d["nranks"] == NP and d["creates"] == NP
        assert int(d["file_rec_id"]) & MASK64 == fid
        assert d["close_end_timestamp"] >= d["open_start_timestamp"] > 0
    # /contig: collective regular writes, independent irregular reads, a collective H5S_ALL read
    assert (c["opens"], c["writes"], c["reads"]) == (NP, NP, 2 * NP)
    assert (c["coll_writes"], c["coll_reads"]) == (NP, NP)
    selects = (c["regular_hyperslab_selects"], c["irregular_hyperslab_selects"], c["point_selects"])
    assert selects == (2 * NP, NP, 0)
    assert c["bytes_written"] == NP * K * 8 and c["bytes_read"] == NP * (30 * 8 + NP * K * 8)
    assert (c["max_write_size"], c["max_read_size"], c["rw_switches"]) == (K * 8, NP * K * 8, NP)
    buckets = (c["size_write_agg_1k_10k"], c["size_read_agg_100_1k"], c["size_read_agg_10k_100k"])
    assert buckets == (NP, NP, NP)
    shape = (c["dataspace_ndims"], c["dataspace_npoints"], c["datatype_size"], c["layout"])
    assert shape == (1, NP * K, 8, 1)
    assert c["use_mpiio_collective"] == 1
    assert [c[f"chunk_size_d{i}"] for i in range(1, 6)] == [0] * 5
    # /grid/chunked: independent 8 x 64 ints per rank, chunks 8 x 16
    assert (g["opens"], g["writes"], g["reads"]) == (0, NP, 0)
    assert (g["coll_writes"], g["use_mpiio_collective"]) == (0, 0)
    assert (g["regular_hyperslab_selects"], g["size_write_agg_1k_10k"]) == (NP, NP)
    assert g["bytes_written"] == NP * 8 * 64 * 4
    shape = (g["dataspace_ndims"], g["dataspace_npoints"], g["datatype_size"], g["layout"])
    assert shape == (2, NP * 8 * 64, 4, 2)
    assert [g[f"chunk_size_d{i}"] for i in range(1, 6)] == [16, 8, 0, 0, 0]  # D1: the last dimension
    # /points: 3 points of int64 per rank
    assert (pt["writes"], pt["point_selects"], pt["bytes_written"]) == (NP, NP, NP * 24)
    assert pt["size_write_agg_0_100"] == NP
    assert (pt["dataspace_npoints"], pt["datatype_size"], pt["layout"]) == (NP * 4, 8, 1)
    assert pt["coll_writes"] == 0


def test_time_classes_and_layers_beneath(plain: H5Run) -> None:
    p, out = plain.profile, plain.out
    r = p.ranks
    assert (r["hdf5_write"] > 0).all() and (r["hdf5_read"] > 0).all() and (r["hdf5_meta"] > 0).all()
    # the MPI-IO and POSIX calls beneath count in their records, not in the rank's time classes
    beneath = row_sums(r, ["mpiio_read", "mpiio_write", "mpiio_meta", "posix_read", "posix_write"])
    assert (beneath <= 0.01 * row_sums(r, ["hdf5_read", "hdf5_write", "hdf5_meta"])).all()
    m = one_record(p.layer("mpiio"), str(out / "known.h5"))
    f = one_record(p.layer("h5f"), str(out / "known.h5"))
    assert m["coll_opens"] == 2 * NP and m["bytes_written"] >= f["bytes_written"] and m["bytes_read"] > 0
    assert m["write_time"] > 0


@pytest.mark.slow
def test_injection(hinted: H5Run, plain: H5Run) -> None:
    p, out = hinted.profile, hinted.out
    f = one_record(p.layer("h5f"), str(out / "known.h5"))
    assert (f["align_threshold"], f["alignment"], f["meta_block_size"]) == (4096, 1048576, 2048)
    assert (f["sieve_buf_size"], f["coll_metadata_reads"], f["coll_metadata_writes"]) == (131072, 1, 1)
    offset = hinted.offset()
    assert offset > 0 and offset % 1048576 == 0 and plain.offset() % 1048576 != 0
    injected = p.injected_hints[int(f["id"])]
    assert {k: v for k, v in injected.items() if k.startswith("hdf5.")} == {
        "hdf5.alignment_threshold": "4096", "hdf5.alignment": "1048576", "hdf5.transfer": "collective",
        "hdf5.sieve_buf_size": "131072", "hdf5.coll_metadata_ops": "true", "hdf5.coll_metadata_write": "true"}
    # hdf5.transfer collective: every transfer collective, the same bytes
    ds = datasets(p, out)
    assert (ds["/grid/chunked"]["coll_writes"], ds["/points"]["coll_writes"]) == (NP, NP)
    assert ds["/contig"]["coll_reads"] == 2 * NP and ds["/contig"]["coll_writes"] == NP
    ref = datasets(plain.profile, plain.out)
    for name, d in ds.items():
        assert (d["bytes_written"], d["bytes_read"]) == (ref[name]["bytes_written"], ref[name]["bytes_read"])


def test_trace_events(hinted: H5Run) -> None:
    p, out = hinted.profile, hinted.out
    assert p.trace is not None
    fid = int(one_record(p.layer("h5f"), str(out / "known.h5"))["id"])
    dids = {name: int(d["id"]) for name, d in datasets(p, out).items()}
    for rt in p.trace.ranks:
        e = rt.events
        layer = (e["flags"] & LAYER_MASK) >> LAYER_SHIFT
        lib = e[(layer == H5F) | (layer == H5D)]
        coll = (lib["flags"] & FLAG_COLLECTIVE) != 0
        h5f = lib[(lib["flags"] & LAYER_MASK) >> LAYER_SHIFT == H5F]
        # an MPI-IO file: every call collective but H5Gclose (the 5 file calls, H5Gcreate2 and H5Gclose)
        assert list(h5f["kind"]) == [Kind.IO_META] * 7 and set(h5f["file"].tolist()) == {fid}
        assert int((~coll).sum()) == 1 and (lib["comm"][coll] >= 0).all()
        assert list((h5f["flags"] & FLAG_COLLECTIVE) != 0).count(False) == 1
        h5d = lib[(lib["flags"] & LAYER_MASK) >> LAYER_SHIFT == H5D]
        data = h5d[h5d["kind"] != Kind.IO_META]
        assert list(data["kind"]) == [Kind.IO_WRITE, Kind.IO_READ, Kind.IO_WRITE, Kind.IO_WRITE, Kind.IO_READ]
        assert list(data["bytes"]) == [K * 8, 240, 2048, 24, NP * K * 8]
        order = ("/contig", "/contig", "/grid/chunked", "/points", "/contig")
        assert list(data["file"]) == [dids[n] for n in order]
        # nothing of the MPI-IO beneath: HDF5 calls are the outermost
        assert not np.any(layer == 2)


# ---- groups and attributes ----------------------------------------------------------------

GROUPS = 8  # h5_groups.c's NG
MPIIO_FIELDS = ["mpiio_read", "mpiio_write", "mpiio_meta"]


def layer_of(events: np.ndarray) -> np.ndarray:
    return (events["flags"] & LAYER_MASK) >> LAYER_SHIFT


def h5_groups_calls() -> str:
    """h5_groups.c's HDF5 calls in order, C for the collective ones on its MPI-IO file, i the others."""
    write = "C" + "CCCii" * GROUPS + "CCi" + "C"  # H5Fcreate, groups, the root's attribute, H5Fclose
    read = "C" + "iiiii" * GROUPS + "iii" + "ii" + "C"  # H5Fopen, groups, H5Aopen_by_name, H5Oopen/close
    return write + read


@pytest.mark.slow
@pytest.mark.measured  # the trace's times against the counters' to 0.1%: load beside it skews them
def test_groups_and_attributes_are_hdf5_metadata(tmp_path: Path, compile_program,
                                                 pario_cmd: list[str], mpi_env: dict[str, str]) -> None:
    """Every group, attribute and H5Oopen/H5Oclose call of h5_groups on 3 ranks is HDF5 metadata
    time of the file (the object headers the reopened file reads through MPI-IO are not the rank's
    MPI-IO time) and one IO_META event of layer 3 on the file's record."""
    nprocs = 3
    exe = compile_program("h5_groups.c", extra=hdf5_flags())
    log = tmp_path / "groups.pario"
    command = ["mpirun", "-np", str(nprocs), str(exe), str(tmp_path)]
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--trace", "--", *command], env=mpi_env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and f"ok {GROUPS} groups" in proc.stdout, proc.stderr
    p = read_log(log)
    r = p.ranks
    assert (columns(r, MPIIO_FIELDS) == 0).all() and (r["hdf5_meta"] > 0).all()
    assert (columns(r, ["hdf5_read", "hdf5_write"]) == 0).all()
    # beneath, the MPI-IO record still sees the metadata HDF5 wrote and read back
    m = one_record(p.layer("mpiio"), str(tmp_path / "groups.h5"))
    assert m["bytes_written"] > GROUPS * 1000 and m["bytes_read"] > GROUPS * 1000
    f = one_record(p.layer("h5f"), str(tmp_path / "groups.h5"))
    assert (f["creates"], f["opens"], f["bytes_written"], f["bytes_read"]) == (nprocs, nprocs, 0, 0)
    # no dataset: every rank's HDF5 time is the file's metadata time
    assert p.layer("h5d").empty
    assert f["meta_time"] == pytest.approx(r["hdf5_meta"].sum(), rel=1e-6)
    assert p.trace is not None
    fid = int(f["id"])
    for rt in p.trace.ranks:
        e = rt.events
        lib = layer_of(e) == H5F
        io = np.isin(e["kind"], [Kind.IO_READ, Kind.IO_WRITE, Kind.IO_META])
        assert not np.any(io & (layer_of(e) == 2))  # the MPI-IO beneath is not an event
        h5 = e[lib]
        calls = "".join("C" if flags & FLAG_COLLECTIVE else "i" for flags in h5["flags"])
        assert calls == h5_groups_calls()
        assert set(h5["kind"].tolist()) == {Kind.IO_META} and set(h5["file"].tolist()) == {fid}
        assert (h5["bytes"] == 0).all()
        assert (h5["comm"][(h5["flags"] & FLAG_COLLECTIVE) != 0] >= 0).all()
        # the rank's HDF5 metadata time is its layer-3 events' time
        mine = float((rt.t1[lib] - rt.t0[lib]).sum())
        assert mine == pytest.approx(float(r["hdf5_meta"][rank_row(r, rt.rank)]), rel=1e-3)


@pytest.mark.slow
def test_vpic_groups_are_hdf5_time(tmp_path: Path, pario_cmd: list[str],
                                   mpi_env: dict[str, str]) -> None:
    """vpic --hdf5 --steps 2 --read on 2 ranks: a group /Timestep_<k> per step, created then
    opened again; all the MPI-IO is beneath HDF5 and every group call is an event of the file."""
    log = tmp_path / "vpic.pario"
    kernel = str(paths.program("pario-kernel-vpic"))
    command = ["mpirun", "-np", "2", kernel, "--hdf5", "--steps", "2", "--read", "--particles", "16k",
               "--path", str(tmp_path / "vpic.h5"), "--delete"]
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--trace", "--", *command], env=mpi_env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    p = read_log(log)
    r = p.ranks
    assert (columns(r, MPIIO_FIELDS) == 0).all()
    assert (columns(r, ["hdf5_meta", "hdf5_read", "hdf5_write"]) > 0).all()
    meta = p.layer("h5f")["meta_time"].sum() + p.layer("h5d")["meta_time"].sum()
    assert meta == pytest.approx(r["hdf5_meta"].sum(), rel=1e-6)
    assert p.trace is not None
    for rt in p.trace.ranks:
        h5 = rt.events[layer_of(rt.events) == H5F]
        # H5Fcreate, 2 x (H5Gcreate2, H5Gclose), H5Fclose, H5Fopen, 2 x (H5Gopen2, H5Gclose), H5Fclose
        calls = "".join("C" if flags & FLAG_COLLECTIVE else "i" for flags in h5["flags"])
        assert calls == "C" + "Ci" * 2 + "C" + "C" + "ii" * 2 + "C"


def test_program_without_hdf5(known_run) -> None:
    profile = known_run[0]
    assert profile.layer("h5f").empty and profile.layer("h5d").empty
    status = profile.job.metadata["library_layers"]["hdf5"]
    assert status["active"] is False and status["found"] == "" and status["built"] == "1.10.8"


def test_other_library_version(tmp_path: Path, compile_program, run_under_pario) -> None:
    """A libhdf5 that says 1.14: the program's calls get the library's results, the layers stay
    empty, META says why, and the other layers record as usual."""
    lib = tmp_path / "libhdf5_fake.so"
    src = Path(__file__).parent / "programs"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(src / "h5_fake_lib.c")], check=True)
    exe = compile_program("h5_fake_app.c", mpi=False, extra=(f"-L{tmp_path}", "-lhdf5_fake",
                                                              f"-Wl,-rpath,{tmp_path}"))
    log = tmp_path / "fake.pario"
    proc = run_under_pario(log, [str(exe), str(tmp_path)])
    assert proc.returncode == 0, proc.stderr
    p = read_log(log)
    assert p.layer("h5f").empty and p.layer("h5d").empty
    assert p.job.metadata["library_layers"]["hdf5"] == {
        "built": "1.10.8", "found": "1.14.0", "active": False,
        "why": "libhdf5 1.14.0 is not the 1.10 pario was built against: the layer passes HDF5 calls through"}
    assert one_record(p.layer("posix"), str(tmp_path / "after.dat"))["bytes_written"] == 100


@pytest.mark.parametrize("line, words", [
    ("hdf5.transfer sometimes", "hdf5.transfer must be collective or independent"),
    ("hdf5.alignment 0", "hdf5.alignment must be a positive integer"),
    ("hdf5.coll_metadata_ops yes", "hdf5.coll_metadata_ops must be true or false"),
    ("hdf5.chunk_cache 4", "unknown library key hdf5.chunk_cache"),
])
def test_bad_hdf5_hint(tmp_path: Path, pario_cmd: list[str], mpi_env: dict[str, str], line: str,
                       words: str) -> None:
    hints = tmp_path / "hints"
    hints.write_text(f"cb_nodes 2\n{line}\n")
    marker = tmp_path / "ran"
    proc = subprocess.run([*pario_cmd, "run", "--hints", str(hints), "--", "touch", str(marker)], env=mpi_env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and not marker.exists()
    assert len(proc.stderr.strip().splitlines()) == 1 and words in proc.stderr and f"{hints}:2" in proc.stderr
    assert "Traceback" not in proc.stderr
