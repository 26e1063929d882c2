"""Darshan logs into the model: every real log read as PyDarshan reads it, exact totals against
PyDarshan, damaged files."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from darshan_logs import ALL_LOGS, LOGS
from pario.analysis import rank_times
from pario.diagnosis import analyze
from pario.errors import LogFormatError, ParioError
from pario.log import darshan_lib, darshan_reader, read_log
from test_darshan_time_and_cuts import pydarshan_runtime

MODULES = {"POSIX": "posix", "MPI-IO": "mpiio", "STDIO": "stdio"}

def log(name: str) -> Path:
    return next(p for p in ALL_LOGS if p.name.startswith(name))


def pydarshan_totals(path: Path) -> dict[str, dict[str, float]]:
    """Sums of counters straight from PyDarshan (what darshan-parser would print)."""
    import darshan

    report = darshan.DarshanReport(str(path), read_all=True)
    out: dict[str, dict[str, float]] = {}
    for mod, layer in MODULES.items():
        if mod not in report.records:
            continue
        dfs = report.records[mod].to_df()
        c, f = dfs["counters"], dfs["fcounters"]
        prefix = "MPIIO" if mod == "MPI-IO" else mod
        out[layer] = {
            "records": float(len(c)),
            "bytes_read": float(c[f"{prefix}_BYTES_READ"].sum()),
            "bytes_written": float(c[f"{prefix}_BYTES_WRITTEN"].sum()),
            "read_time": float(f[f"{prefix}_F_READ_TIME"].sum()),
            "write_time": float(f[f"{prefix}_F_WRITE_TIME"].sum()),
            "meta_time": float(f[f"{prefix}_F_META_TIME"].sum()),
        }
    out["job"] = {"nprocs": float(report.metadata["job"]["nprocs"]),
                  "run_time": float(report.metadata["job"]["run_time"])}
    return out


@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: p.name[:40])
def test_the_library_binding_reads_what_pydarshan_reads(path: Path) -> None:
    """darshan_lib (libdarshan-util without the darshan package) against DarshanReport: job,
    exe, mounts, modules, names, every record of the modules pario reads (PyDarshan keeps the
    named ones) with the counter names, and the LUSTRE components."""
    assert_read_as_pydarshan_reads(path)


def assert_read_as_pydarshan_reads(path: Path) -> None:

    import darshan

    report = darshan.DarshanReport(str(path), read_all=True)
    log = darshan_lib.read_log(str(path))
    assert log.job == report.metadata["job"]
    assert log.exe == report.metadata["exe"]
    assert log.mounts == report.mounts
    keys = ("len", "ver", "idx", "partial_flag")
    assert log.modules == {m: {k: info[k] for k in keys} for m, info in report.modules.items()}
    assert log.names == report.name_records
    assert set(log.records) == set(report.records) & set(darshan_lib.RECORD_STRUCTS)
    for mod, records in log.records.items():
        named = np.isin(records.ids, np.fromiter(log.names, dtype=np.uint64, count=len(log.names)))
        theirs = report.records[mod].to_numpy()
        assert int(named.sum()) == len(theirs), mod
        assert list(records.counter_names) == report.counters[mod]["counters"]
        assert list(records.fcounter_names) == report.counters[mod]["fcounters"]
        if not theirs:
            continue
        assert records.ids[named].tolist() == [r["id"] for r in theirs]
        assert records.ranks[named].tolist() == [r["rank"] for r in theirs]
        np.testing.assert_array_equal(records.counters[named], np.stack([r["counters"] for r in theirs]))
        np.testing.assert_array_equal(records.fcounters[named], np.stack([r["fcounters"] for r in theirs]))
        if "file_rec_id" in theirs[0]:
            assert records.file_rec_ids is not None
            assert records.file_rec_ids[named].tolist() == [r["file_rec_id"] for r in theirs]
    if "LUSTRE" not in report.modules:
        assert log.lustre is None
        return
    assert log.lustre is not None
    comps = [(r["id"], r["rank"], c) for r in report.records["LUSTRE"].to_numpy() for c in r["components"]]
    named = np.isin(log.lustre.ids, np.fromiter(log.names, dtype=np.uint64, count=len(log.names)))
    assert list(log.lustre.counter_names) == report.counters["LUSTRE"]["counters"]
    assert log.lustre.ids[named].tolist() == [i for i, _, _ in comps]
    assert log.lustre.ranks[named].tolist() == [r for _, r, _ in comps]
    np.testing.assert_array_equal(log.lustre.counters[named].reshape(-1, len(log.lustre.counter_names)),
                                  np.array([c["counters"] for _, _, c in comps]).reshape(len(comps), -1))
    pools = [p for p, keep in zip(log.lustre.pool_names, named, strict=True) if keep]
    osts = [o.tolist() for o, keep in zip(log.lustre.ost_ids, named, strict=True) if keep]
    assert pools == [c["pool_name"] for _, _, c in comps]
    assert osts == [c["ost_ids"].tolist() for _, _, c in comps]


def test_lustre_components_read_in_bulk_as_one_by_one(tmp_path: Path) -> None:
    """Records of several layout components, pools named and not, stripe counts of 0 to 3 and a
    component the runtime left unused (stripe size -1, dropped by the library with its OST ids),
    in two ranks' records: libpario_log.so's bulk read gives what PyDarshan and the one-record-
    at-a-time reader give, component by component.  A record of no component (which the library
    says it read but hands nothing over for: PyDarshan dereferences NULL) is left out by both."""
    from darshan_recipes import job
    from darshan_recipes import log as recipe_log
    from pario.log.darshan_writer import LustreComponent, LustreRecord, write_darshan_log

    names = darshan_lib.counter_names("LUSTRE_COMP")

    def comp(size: int, count: int, start: int, osts: tuple[int, ...], pool: str = "") -> LustreComponent:
        values = {"LUSTRE_COMP_STRIPE_SIZE": size, "LUSTRE_COMP_STRIPE_COUNT": count,
                  "LUSTRE_COMP_EXT_START": start}
        return LustreComponent({n: values.get(n, 7) for n in names}, osts, pool)

    two = LustreRecord(11, -1, (comp(1 << 20, 1, 0, (5,), "flash"),
                                comp(4 << 20, 3, 1 << 30, (9, 10, 11), "capacity_pool12")))
    striped_none = LustreRecord(12, 0, (comp(1 << 16, 0, 0, ()),))
    unused = LustreRecord(13, 1, (comp(1 << 20, 2, 0, (1, 2)), comp(-1, 2, 1 << 24, (3, 4), "unused")))
    dl = darshan_lib.library()

    def write(name: str, records: tuple[LustreRecord, ...]) -> Path:
        path = tmp_path / name
        names = {i: f"/lustre/f{i}" for i in range(11, 15)}
        write_darshan_log(recipe_log(job(2, 1000.0, 1010.0), "/bin/app", names, [],
                                     mounts=[("/lustre", "lustre")], lustre_records=records), path)
        return path

    def read(path: Path, reader) -> darshan_lib.LustreComponents:
        handle = dl.lib.darshan_log_open(str(path).encode())
        try:
            return reader(dl, handle, darshan_lib._modules(dl, handle)["LUSTRE"]["idx"])
        finally:
            dl.lib.darshan_log_close(handle)

    assert darshan_lib._bulk_reader() is not None  # the installed package has libpario_log.so
    whole = write("components.darshan", (two, striped_none, unused))
    empty_between = write("empty-record.darshan", (two, LustreRecord(14, 1, ()), striped_none, unused))
    for path in (whole, empty_between):
        bulk, one_by_one = read(path, darshan_lib._lustre), read(path, darshan_lib._lustre_by_record)
        assert bulk.ids.tolist() == one_by_one.ids.tolist() == [11, 11, 12, 13]
        assert bulk.ranks.tolist() == one_by_one.ranks.tolist() == [-1, -1, 0, 1]
        assert bulk.pool_names == one_by_one.pool_names == ("flash", "capacity_pool12", "", "")
        assert [o.tolist() for o in bulk.ost_ids] == [o.tolist() for o in one_by_one.ost_ids] \
            == [[5], [9, 10, 11], [], [1, 2]]
        np.testing.assert_array_equal(bulk.counters, one_by_one.counters)
        assert bulk.counters[:, 0].tolist() == [1 << 20, 4 << 20, 1 << 16, 1 << 20]  # stripe sizes
        assert bulk.ids.dtype == one_by_one.ids.dtype and bulk.counters.dtype == one_by_one.counters.dtype
    assert_read_as_pydarshan_reads(whole)


def test_reading_imports_neither_pydarshan_nor_pandas() -> None:
    """The reading child's work imports neither the darshan package nor pandas; the whole read
    does not import darshan (nor pandas, once the model's tables are Tables)."""
    code = (
        "import json, sys\n"
        "from pario.log import darshan_reader\n"
        f"darshan_reader._load_with_library({str(log('imbalanced-io'))!r})\n"
        "child = sorted(m for m in ('darshan', 'pandas') if m in sys.modules)\n"
        f"darshan_reader.read_darshan_log({str(log('imbalanced-io'))!r})\n"
        "print(json.dumps([child, 'darshan' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         check=True)
    child, darshan_imported = json.loads(out.stdout)
    assert child == []
    assert not darshan_imported


@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: p.name[:40])
def test_records_decoded_from_their_regions_are_the_library_s(path: Path) -> None:
    """The modules the library reads as they are stored (darshan_lib.STORED_AS_READ), decoded by
    the reader from the regions its check inflated: the library's records, byte for byte."""
    header = darshan_reader.check_darshan_log(path)
    log = darshan_lib.read_log(str(path))
    listed = {m for m, info in log.modules.items()
              if m in darshan_lib.STORED_AS_READ and darshan_lib.stored_as_read(m, info["ver"])}
    assert set(header.stored) == listed  # every log of the collection is little-endian
    for mod, region in header.stored.items():
        ours, theirs = darshan_lib.decode_records(mod, region), log.records[mod]
        for name in ("ids", "ranks", "counters", "file_rec_ids", "oids"):
            assert np.array_equal(getattr(ours, name), getattr(theirs, name)), (mod, name)
        assert ours.fcounters.tobytes() == theirs.fcounters.tobytes(), mod
        assert ours.counter_names == theirs.counter_names
    assert header.names is not None
    assert list(darshan_lib.decode_names(header.names).items()) == list(log.names.items())


def test_names_decoded_as_the_library_reads_them() -> None:
    """The first record of an id names it, unless its name is empty and a later one's is not (a
    DAOS object registered before it is named)."""
    def record(rid: int, name: bytes) -> bytes:
        return struct.pack("=Q", rid) + name + b"\0"

    data = record(7, b"/a") + record(9, b"") + record(7, b"/b") + record(9, b"/c") + record(9, b"/d")
    assert darshan_lib.decode_names(data) == {7: "/a", 9: "/c"}
    assert list(darshan_lib.decode_names(data)) == [7, 9]
    with pytest.raises(UnicodeDecodeError):
        darshan_lib.decode_names(record(1, b"\xff"))


def _without_nul(name: bytes) -> bytes:
    return name.replace(b"\0", b".")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.binary(max_size=12).map(_without_nul)), max_size=12),
       st.binary(max_size=12))
def test_name_records_walked_in_bulk_as_one_by_one(records: list[tuple[int, bytes]], tail: bytes) -> None:
    """libpario_log.so's walk of name records (ids that hold NUL bytes, empty names, whatever
    bytes follow the last record) finds what the Python walk finds, and stops where it stops."""
    data = b"".join(struct.pack("=Q", rid) + name + b"\0" for rid, name in records) + tail
    assert darshan_lib._bulk_reader() is not None  # the installed package has libpario_log.so
    bulk, one_by_one = darshan_lib.name_records(data), darshan_lib._walk_names(data)
    for ours, theirs in zip(bulk[:3], one_by_one[:3], strict=True):
        assert ours.dtype == theirs.dtype and ours.tolist() == theirs.tolist()
    assert bulk[3] == one_by_one[3]
    assert bulk[0].tolist()[:len(records)] == [rid for rid, _ in records]


def test_a_last_partial_record_is_left_out_as_the_library_leaves_it() -> None:
    region = darshan_reader.check_darshan_log(log("imbalanced-io")).stored["POSIX"]
    size = darshan_lib.record_dtype("POSIX").itemsize
    whole = darshan_lib.decode_records("POSIX", region)
    cut = darshan_lib.decode_records("POSIX", region[:-1])
    assert len(region) % size == 0 and len(whole.ids) == len(region) // size > 1
    assert cut.ids.tolist() == whole.ids[:-1].tolist()


@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: p.name[:40])
def test_every_log_reads_with_exact_totals(path: Path) -> None:
    profile = read_log(path)
    expected = pydarshan_totals(path)
    assert profile.job.source == "darshan"
    assert profile.job.nprocs == expected["job"]["nprocs"]
    # PyDarshan's run time where the job times have nanoseconds; with whole seconds, the latest
    # file timestamp within them (docs/metrics.md, "Darshan logs")
    if path.name == "dxt-format-dev-3.5.0-60.darshan":  # its ranks' I/O outlasts the job's times
        assert profile.job.runtime > pydarshan_runtime(path)
    else:
        assert profile.job.runtime == pydarshan_runtime(path)
    assert len(profile.ranks) == profile.job.nprocs
    # MPI time only from Darshan's APMPI module (tests/test_darshan_heatmap_apmpi.py)
    assert profile.job.has_mpi_time == ("APMPI" in profile.job.metadata["modules"])
    for layer, totals in expected.items():
        if layer == "job":
            continue
        frame = profile.layer(layer)
        assert len(frame) == totals["records"]
        for col in ("bytes_read", "bytes_written"):
            assert frame[col].sum() == totals[col], (layer, col)
        for col in ("read_time", "write_time", "meta_time"):
            assert frame[col].sum() == pytest.approx(totals[col]), (layer, col)


@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: p.name[:40])
def test_per_rank_times_keep_the_totals(path: Path) -> None:
    """The per-rank split of shared records never changes a sum over ranks (the MPI-IO, POSIX
    and STDIO records of a file an I/O library has records of count as the library's time)."""
    profile = read_log(path)
    library_files = [profile.layer(lay)["id"] for lay in ("h5f", "pnetcdf_file") if len(profile.layer(lay))]
    for layer in ("posix", "stdio", "mpiio"):
        frame = profile.layer(layer)
        if layer == "posix" and len(profile.layer("mpiio")):
            frame = frame[~np.isin(frame["id"], profile.layer("mpiio")["id"])]
        for ids in library_files:
            frame = frame[~np.isin(frame["id"], ids)]
        for kind in ("read", "write", "meta"):
            total = frame[f"{kind}_time"].sum() if len(frame) else 0.0
            assert profile.ranks[f"{layer}_{kind}"].sum() == pytest.approx(total, rel=1e-9, abs=1e-12)
    for lib, (flayer, dlayer) in (("hdf5", ("h5f", "h5d")), ("pnetcdf", ("pnetcdf_file", "pnetcdf_var"))):
        f, d = profile.layer(flayer), profile.layer(dlayer)
        want = sum(d[f"{k}_time"].sum() for k in ("read", "write", "meta") if k + "_time" in d)
        want += f["meta_time"].sum() if "meta_time" in f else 0.0
        want += f["wait_time"].sum() if "wait_time" in f else 0.0
        got = sum(profile.ranks[f"{lib}_{k}"].sum() for k in ("read", "write", "meta"))
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("name", ["imbalanced-io", "shane_ior-HDF5", "partial_data_stdio"])
def test_the_per_rank_io_kept_by_the_reader_is_the_analysis_own(name: str) -> None:
    """The reader keeps the per-rank I/O it computed for the rank table with the profile; the
    analysis that reuses it matches one that computes everything from the records."""
    from dataclasses import replace

    from pario.report.data import run_dict

    profile = read_log(log(name))
    assert profile.io is not None and profile.per_rank_io() is profile.io
    fresh = replace(profile)  # the same records, no per-rank I/O kept
    assert fresh.io is None
    kept = json.dumps(run_dict(analyze(profile), top=1000), sort_keys=True, default=str)
    computed = json.dumps(run_dict(analyze(fresh), top=1000), sort_keys=True, default=str)
    assert kept == computed
    assert fresh.io is not None and fresh.io is not profile.io


def test_empty_log_has_no_io() -> None:
    profile = read_log(log("empty_log"))
    assert profile.job.nprocs == 4
    assert all(len(profile.layer(layer)) == 0 for layer in MODULES.values())
    assert not analyze(profile).has_io


def test_imbalanced_io_shows_posix_imbalance_under_balanced_mpiio() -> None:
    profile = read_log(log("imbalanced-io"))
    assert profile.job.nprocs == 496
    # whole seconds 1478 s apart (PyDarshan: 1479 s); the records' last timestamp
    assert profile.job.runtime == 1478.4936349391937
    assert not profile.job.complete
    assert any("POSIX" in r and "partial" in r for r in profile.job.partial_reasons)
    a = analyze(profile)
    layers = {lay.layer: lay for lay in a.io.layers}
    assert layers["mpiio"].total.load_balance.value > 0.8
    assert layers["posix"].total.load_balance.value < 0.1
    assert a.shares.bound == "I/O"
    assert profile.job.metadata["lustre_striping"]


def test_skew_app_65536_ranks() -> None:
    profile = read_log(log("skew-app"))
    a = analyze(profile)
    assert len(profile.ranks) == 65536 and len(a.ranks) == 65536
    # one shared MPI-IO file carries all outermost time: its slowest rank is the exact maximum
    assert a.io.overall.total.time_max.approximate is False
    mpiio = profile.layer("mpiio")
    assert a.io.overall.total.time_max.value == pytest.approx(float(mpiio["slowest_rank_time"][0]))
    assert a.io.overall.write.bytes.value == float(mpiio["bytes_written"].sum())


def test_darshan_log_hints_are_not_reported_as_application_hints() -> None:
    profile = read_log(log("mpi-io-test-x86_64-3.5.0"))
    assert profile.hints == {}
    assert profile.job.metadata["darshan_log_hints"] == "romio_no_indep_rw=true;cb_nodes=4"


def test_rank_times_flags_estimates_for_shared_records() -> None:
    rt = rank_times(read_log(log("mpi-io-test-x86_64-3.2.0")))
    assert not rt.exact_ranks("io")
    rt = rank_times(read_log(log("nonmpi")))
    assert rt.exact_ranks("io") and rt.nranks == 1


# ---------------------------------------------------------------------------
# damaged and unknown files
# ---------------------------------------------------------------------------

def test_a_log_compressed_with_gzip(tmp_path: Path) -> None:
    """An archive's *.darshan.gz (the log compressed whole): read as the log itself, under the
    compressed file's name; a damaged one or one that holds no log is a one-line error."""
    import gzip

    plain = log("imbalanced-io")
    packed = tmp_path / (plain.name + ".gz")
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    got, want = read_log(packed), read_log(plain)
    assert got.job.path == str(packed) and got.job.nprocs == want.job.nprocs == 496
    for layer in ("posix", "mpiio", "stdio"):
        assert got.layer(layer)["bytes_written"].sum() == want.layer(layer)["bytes_written"].sum()
    cut = tmp_path / "cut.darshan.gz"
    cut.write_bytes(packed.read_bytes()[:2000])
    with pytest.raises(LogFormatError, match=r"cut.darshan.gz: damaged gzip file"):
        read_log(cut)
    short = tmp_path / "short.darshan.gz"
    short.write_bytes(gzip.compress(plain.read_bytes()[:500]))
    with pytest.raises(LogFormatError, match=r"short.darshan.gz: truncated Darshan log"):
        read_log(short)
    other = tmp_path / "other.darshan.gz"
    other.write_bytes(gzip.compress(b"hello\n"))
    with pytest.raises(LogFormatError, match="a gzip file that holds no pario or Darshan log"):
        read_log(other)


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ParioError, match="directory"):
        read_log(tmp_path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ParioError, match="no such file"):
        read_log(tmp_path / "nothing.darshan")


def test_unknown_file(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello, not a log\n")
    with pytest.raises(LogFormatError, match="not a pario or Darshan log"):
        read_log(bad)


# 2300: inside STDIO, the last region pario reads (a cut in HEATMAP, after it, is read without
# HEATMAP: test_darshan_time_and_cuts.py)
@pytest.mark.parametrize("keep", [4, 12, 100, 400, 1000, 1500, 2300])
def test_truncated_logs(tmp_path: Path, keep: int) -> None:
    data = log("mpi-io-test-x86_64-3.5.0").read_bytes()
    cut = tmp_path / "cut.darshan"
    cut.write_bytes(data[:keep])
    with pytest.raises(LogFormatError):
        read_log(cut)


def _patched(tmp_path: Path, name: str, offset: int, new: bytes) -> Path:
    """A copy of log ``name`` with ``new`` written over its bytes at ``offset``."""
    data = bytearray(log(name).read_bytes())
    data[offset : offset + len(new)] = new
    bad = tmp_path / "patched.darshan"
    bad.write_bytes(bytes(data))
    return bad


def test_unsupported_version(tmp_path: Path) -> None:
    with pytest.raises(LogFormatError, match="version '3.99' is not supported"):
        read_log(_patched(tmp_path, "mpi-io-test-x86_64-3.5.0", 0, b"3.99"))


def test_log_that_aborts_libdarshan_util_is_a_clean_error(tmp_path: Path) -> None:
    """A 3.20 log relabelled 3.00 makes libdarshan-util fail an assertion (abort)."""
    with pytest.raises(LogFormatError, match="corrupt Darshan log"):
        read_log(_patched(tmp_path, "mpi-io-test-x86_64-3.2.0", 0, b"3.00"))


def test_region_beyond_end_of_file(tmp_path: Path) -> None:
    name_map_length = struct.pack("<Q", 10**9)  # at offset 40
    with pytest.raises(LogFormatError):
        read_log(_patched(tmp_path, "mpi-io-test-x86_64-3.5.0", 40, name_map_length))


def test_crash_in_the_reader_library_is_contained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(path: str, *_: object) -> None:
        os.kill(os.getpid(), signal.SIGSEGV)

    monkeypatch.setattr(darshan_reader, "_load_with_library", crash)
    with pytest.raises(LogFormatError, match="crashed \\(SIGSEGV\\)"):
        read_log(log("mpi-io-test-x86_64-3.5.0"))


@pytest.mark.slow
def test_hang_in_the_reader_library_is_contained(monkeypatch: pytest.MonkeyPatch) -> None:
    def hang(path: str, *_: object) -> None:
        time.sleep(60)

    monkeypatch.setattr(darshan_reader, "_load_with_library", hang)
    monkeypatch.setattr(darshan_reader, "DEFAULT_TIMEOUT", 1.0)
    start = time.monotonic()
    with pytest.raises(LogFormatError, match="did not finish within 1 s"):
        read_log(log("mpi-io-test-x86_64-3.5.0"))
    assert time.monotonic() - start < 20


def test_python_error_in_the_child_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(path: str, *_: object) -> None:
        raise RuntimeError("Failed to open file.")

    monkeypatch.setattr(darshan_reader, "_load_with_library", fail)
    with pytest.raises(LogFormatError, match="RuntimeError: Failed to open file"):
        read_log(log("mpi-io-test-x86_64-3.5.0"))


def test_check_reports_header_facts() -> None:
    header = darshan_reader.check_darshan_log(log("imbalanced-io"))
    assert header.version == "3.21" and header.nprocs == 496 and header.compression == "zlib"
    assert header.partial_flags != 0
    header = darshan_reader.check_darshan_log(log("mpi-io-test-x86_64-3.5.0"))
    assert header.version == "3.41" and header.nprocs == 4


def test_names_and_ids() -> None:
    profile = read_log(log("mpi-io-test-x86_64-3.5.0"))
    mpiio = profile.layer("mpiio")
    assert mpiio["name"].tolist() == ["/home/wkliao/Darshan/TEST/mpi-io-test.tmp.dat"]
    assert mpiio["id"].dtype == np.uint64
    assert (mpiio["nranks"] == 4).all()


#: Reads skew-app.darshan through darshan_lib, then says whether pycparser had to parse declarations.
_FFI_PROBE = """
import sys
from pario.log import darshan_lib
log = darshan_lib.read_log(sys.argv[1])
print(len(log.records["POSIX"].ids), "pycparser" in sys.modules)
"""


@pytest.mark.slow
def test_the_c_declarations_are_parsed_once_then_read_from_the_cache(tmp_path: Path) -> None:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    log = str(LOGS / "skew-app.darshan")

    def probe() -> str:
        proc = subprocess.run([sys.executable, "-c", _FFI_PROBE, log], env=env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout  # nothing else may reach standard output (pario report --json -)

    assert probe() == "1 True\n"  # first run: parsed, and written to the cache
    cached = list((tmp_path / "pario").glob("_pario_darshan_ffi_*.py"))
    assert len(cached) == 1
    assert probe() == "1 False\n"  # then read pre-parsed
    cached[0].write_text("this is not python(\n")
    assert probe() == "1 True\n"  # a damaged cache file: parsed in line again


@pytest.mark.parametrize("name", ["nonmpi_dxt_anonymized", "hdf5_diagonal_write_1_byte_dxt",
                                  "dxt-format-dev"])
def test_a_log_read_without_its_trace(name: str) -> None:
    """read_log(trace=False), as the survey reads: no trace, every layer and note as with it, and
    the DXT modules not listed as modules left unanalysed."""
    traced, bare = read_log(log(name)), read_log(log(name), trace=False)
    assert traced.trace is not None and bare.trace is None
    assert bare.job.metadata["modules_not_analysed"] == traced.job.metadata["modules_not_analysed"]
    assert bare.job.partial_reasons == traced.job.partial_reasons
    assert bare.job.runtime == traced.job.runtime
    for layer, records in traced.files.items():
        mine = bare.files[layer]
        assert list(mine.columns) == list(records.columns)
        assert all(np.array_equal(np.asarray(mine[c]), np.asarray(records[c])) for c in records.columns
                   if np.asarray(records[c]).dtype != object)
