"""Darshan logs built byte by byte (tests/darshan_builder.py): IOR on DAOS, empty and repeated
names, module ids the reader library does not know.  Each built log is first checked against
PyDarshan, so the builder is held to the reference reader.

IOR on DAOS (``ior_daos_log``) also checks the DFS and DAOS layers (docs/metrics.md, "DAOS's file
system and objects"): its DFS file /testFile (64 MiB written and read) and that file's DAOS object
share one record id, so the object's DAOS record is beneath DFS and counted once."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import pytest

from darshan_builder import (
    CONFIG_FILE,
    CONT_UUID,
    CSV_FILE,
    DFUSE_FILE,
    ID_EXTRA,
    ID_ROOT,
    ID_SB,
    ID_TESTFILE,
    MIB,
    MODULES,
    POOL_UUID,
    DarshanLog,
    Record,
    daos_tail,
    ior_daos_log,
)
from pario.diagnosis import analyze, diagnose
from pario.errors import LogFormatError
from pario.log import darshan_reader, read_log
from pario.table import Table


def pydarshan(path: Path) -> object:
    import darshan

    return darshan.DarshanReport(str(path), read_all=True)


@pytest.fixture(scope="module", params=["<", ">"], ids=["little-endian", "big-endian"])
def daos_log(request: pytest.FixtureRequest,
             tmp_path_factory: pytest.TempPathFactory) -> tuple[DarshanLog, Path]:
    built = ior_daos_log(request.param)
    return built, built.write(tmp_path_factory.mktemp("daos") / "ior-daos.darshan")


def test_pydarshan_reads_the_built_log_as_built(daos_log: tuple[DarshanLog, Path]) -> None:
    built, path = daos_log
    report = pydarshan(path)
    assert list(report.modules) == ["POSIX", "STDIO", "DFS", "DAOS"]
    counts = {m: len(report.records[m]) for m in report.modules}
    assert counts == {"POSIX": 2, "STDIO": 2, "DFS": 2, "DAOS": 4}
    assert len(built.names) == 10
    # an empty name is replaced by the name given later; a name is never replaced by ""
    assert report.name_records[ID_ROOT] == "/" and report.name_records[ID_TESTFILE] == "/testFile"
    assert report.name_records[ID_SB] == "" and report.name_records[ID_EXTRA] == ""
    assert report.name_records[next(r.rec_id for r in built.records if r.module == "STDIO")] == CSV_FILE
    assert len(report.name_records) == 8
    job = report.metadata["job"]
    assert (job["nprocs"], job["jobid"], job["run_time"]) == (4, 4242, 60.5)
    assert report.metadata["exe"] == built.exe
    assert sorted(report.mounts) == sorted((p, t) for t, p in built.mounts)
    for mod, fmt in MODULES.items():
        records = [r for r in built.records if r.module == mod]
        c, f = (report.records[mod].to_df()[k] for k in ("counters", "fcounters"))
        assert [int(i) for i in c["id"]] == [r.rec_id for r in records]
        assert c["rank"].tolist() == [r.rank for r in records]
        for i, r in enumerate(records):
            assert {n: int(c[n].iloc[i]) for n in fmt.counters} == {
                n: r.counters.get(n, 0) for n in fmt.counters}
            assert {n: float(f[n].iloc[i]) for n in fmt.fcounters} == {
                n: r.fcounters.get(n, 0.0) for n in fmt.fcounters}


def test_daos_log_passes_the_structural_check(daos_log: tuple[DarshanLog, Path]) -> None:
    header = darshan_reader.check_darshan_log(daos_log[1])
    assert header.version == "3.41" and header.nprocs == 4
    assert sorted(header.regions) == [1, 9, 16, 17] and header.unknown_modules == ()
    assert header.module_versions == {1: 4, 9: 2, 16: 1, 17: 1}


def by_name(table: Table) -> dict[str, dict[str, object]]:
    """The table's rows by file name (each name once, as a unique index)."""
    rows = {r["name"]: r for r in table.rows()}
    assert len(rows) == len(table), "a file name twice"
    return rows


def test_daos_log_reads_with_exact_posix_and_stdio(daos_log: tuple[DarshanLog, Path]) -> None:
    profile = read_log(daos_log[1])
    assert profile.job.nprocs == 4 and profile.job.runtime == 60.5 and profile.job.complete
    posix = by_name(profile.layer("posix"))
    assert sorted(posix) == sorted([DFUSE_FILE, CONFIG_FILE])
    assert posix[DFUSE_FILE]["bytes_written"] == 64 * MIB
    assert posix[DFUSE_FILE]["bytes_read"] == 64 * MIB
    assert posix[DFUSE_FILE]["rank"] == -1 and posix[DFUSE_FILE]["nranks"] == 4
    assert posix[DFUSE_FILE]["write_time"] == 12.25 and posix[DFUSE_FILE]["read_time"] == 6.5
    assert posix[CONFIG_FILE]["bytes_read"] == 1234 and posix[CONFIG_FILE]["rank"] == 0
    stdio = by_name(profile.layer("stdio"))
    assert stdio[CSV_FILE]["bytes_written"] == 2048 and stdio["<STDOUT>"]["bytes_written"] == 5000
    meta = profile.job.metadata
    assert meta["modules_not_analysed"] == []
    assert meta["modules"] == {"POSIX": {"records": 2, "version": 4, "partial": False},
                               "STDIO": {"records": 2, "version": 2, "partial": False},
                               "DFS": {"records": 2, "version": 1, "partial": False},
                               "DAOS": {"records": 4, "version": 1, "partial": False}}


def test_a_dfs_file_without_a_name_is_named_by_its_record(tmp_path: Path) -> None:
    """The root's DFS record keeps only its empty name record (DFS never named it): the tables and
    findings call it by its module and record id, never by a blank name."""
    import dataclasses

    built = ior_daos_log("<")
    keep = [i for i, n in enumerate(built.names) if n != (ID_ROOT, "/")]
    writers = built.name_writers or [0] * len(built.names)
    nameless = dataclasses.replace(built, names=[built.names[i] for i in keep],
                                   name_writers=[writers[i] for i in keep])
    profile = read_log(nameless.write(tmp_path / "nameless.darshan"))
    dfs = by_name(profile.layer("dfs"))
    assert sorted(dfs) == ["/testFile", f"<DFS record {ID_ROOT:016x}>"]
    assert "" not in profile.layer("daos")["name"].tolist()
    text = json.dumps([dataclasses.asdict(f) for f in diagnose(profile)])
    assert '""' not in text.replace('"snippet": ""', "")


def test_daos_log_reads_dfs_and_daos_layers(daos_log: tuple[DarshanLog, Path]) -> None:
    """The DFS and DAOS records as built, under the model's names; the DAOS objects no module
    names are named by their object id (read in the log's byte order)."""
    profile = read_log(daos_log[1])
    dfs = by_name(profile.layer("dfs"))
    assert sorted(dfs) == ["/", "/testFile"]
    test = dfs["/testFile"]
    assert (test["id"], test["rank"], test["nranks"]) == (ID_TESTFILE, -1, 4)
    assert (test["bytes_read"], test["bytes_written"]) == (64 * MIB, 64 * MIB)
    assert (test["read_time"], test["write_time"], test["meta_time"]) == (2.5, 5.0, 0.125)
    assert (test["opens"], test["reads"], test["writes"], test["chunk_size"]) == (8, 64, 64, MIB)
    assert (test["size_read_1m_4m"], test["size_write_1m_4m"], test["size_read_100k_1m"]) == (64, 64, 0)
    assert (dfs["/"]["lookups"], dfs["/"]["meta_time"]) == (4, 0.02)
    daos = profile.layer("daos")
    assert daos["name"].tolist() == ["<DAOS object 0.0>", "/", "/testFile", "<DAOS object 7.3>"]
    assert daos["id"].tolist() == [ID_SB, ID_ROOT, ID_TESTFILE, ID_EXTRA]
    assert daos["rank"].tolist() == [-1, -1, -1, 3]
    assert daos["array_writes"].tolist() == [0, 0, 64, 0] and daos["obj_fetches"].tolist() == [4, 0, 0, 0]
    assert daos["bytes_written"].tolist() == [0, 0, 64 * MIB, 0]
    assert daos["write_time"].tolist() == [0.0, 0.0, 4.75, 0.0]


def test_dfs_time_classes_per_rank(daos_log: tuple[DarshanLog, Path]) -> None:
    """The DFS records are shared by the 4 ranks without a fastest or slowest rank: each rank gets a
    quarter of each (docs/metrics.md, shared records).  The DAOS records of /testFile and / are
    beneath DFS; the other two objects hold no time."""
    ranks = read_log(daos_log[1]).ranks
    assert ranks["dfs_read"].tolist() == [2.5 / 4] * 4
    assert ranks["dfs_write"].tolist() == [5.0 / 4] * 4
    assert ranks["dfs_meta"].tolist() == pytest.approx([(0.125 + 0.02) / 4] * 4, rel=1e-12)
    for kind in ("read", "write", "meta"):
        assert ranks[f"daos_{kind}"].tolist() == [0.0] * 4
    assert ranks["io"].sum() == pytest.approx(IOR_DAOS_IO_TIME, rel=1e-12)


#: The IOR-over-DAOS log's I/O time over all ranks, every call once: POSIX (the dfuse file, rank 0's
#: configuration file), STDIO (rank 0's CSV file and standard output), DFS (/testFile and /); the DAOS
#: records of /testFile and / are beneath DFS, the superblock's and rank 3's object hold no time.
IOR_DAOS_IO_TIME = ((6.5 + 12.25 + 0.5) + (0.001 + 0.0025) + (0.002 + 0.001 + 0.003)
                    + (2.5 + 5.0 + 0.125 + 0.02))


def test_daos_records_beneath_dfs_are_counted_once(daos_log: tuple[DarshanLog, Path]) -> None:
    run = analyze(read_log(daos_log[1]))
    overall = run.io.overall
    assert overall.total.time_total.value == pytest.approx(IOR_DAOS_IO_TIME, rel=1e-12)
    assert overall.write.bytes.value == 64 * MIB + 64 * MIB + 2048 + 5000  # POSIX's file, DFS's, STDIO
    assert overall.read.bytes.value == 64 * MIB + 64 * MIB + 1234
    # reads: POSIX 64 + 2, DFS 64, the superblock's 4 DAOS fetches; DAOS's 64 array reads are DFS's
    assert overall.read.ops.value == 64 + 2 + 64 + 4
    share = IOR_DAOS_IO_TIME / 4 / 60.5
    assert run.shares.io.value == pytest.approx(share, rel=1e-12)
    assert run.shares.verdict.startswith(
        f"This run is not I/O-bound: {share:.1%} of the run time is in I/O (Darshan logs record no MPI time, "
        "so computation and MPI cannot be told apart). Faster I/O saves the run at most ")
    layers = {lay.layer: lay for lay in run.io.layers}
    assert [lay.label for lay in run.io.layers] == ["POSIX", "STDIO", "DFS", "DAOS"]
    dfs, daos = layers["dfs"], layers["daos"]
    assert (dfs.read.bytes.value, dfs.write.bytes.value, dfs.files) == (64 * MIB, 64 * MIB, 2)
    assert (dfs.read.time_total.value, dfs.write.time_total.value) == (2.5, 5.0)
    assert dfs.meta.time_total.value == pytest.approx(0.145, rel=1e-12)
    assert (dfs.read.ops.value, dfs.write.ops.value, dfs.meta.ops.value) == (64, 64, 8 + 4)
    assert dfs.histogram_write == (0, 0, 0, 0, 0, 64, 0, 0, 0, 0)
    # the DAOS row shows what DAOS saw, /testFile's array calls included
    assert (daos.write.bytes.value, daos.write.time_total.value, daos.files) == (64 * MIB, 4.75, 4)
    files = {(row["layer"], row["name"]) for row in run.files.rows()}
    assert ("dfs", "/testFile") in files and ("daos", "/testFile") not in files
    assert ("daos", "<DAOS object 7.3>") in files


@pytest.mark.slow
def test_report_and_dump_of_the_daos_log(daos_log: tuple[DarshanLog, Path], pario_cmd: list[str],
                                         tmp_path: Path) -> None:
    path = daos_log[1]
    out = tmp_path / "report.json"
    report = subprocess.run([*pario_cmd, "report", str(path), "--json", str(out)], capture_output=True,
                            text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    text = " ".join(report.stdout.split())
    assert "Modules not analysed" not in text
    assert "DFS and DAOS: a DFS file's reads and writes are DAOS calls on its object, counted once" in text
    run = json.loads(out.read_text())["runs"][0]
    assert run["job"]["nprocs"] == 4 and run["job"]["complete"] is True
    assert not any(n.startswith("Modules not analysed") for n in run["notes"])
    assert run["io"]["overall"]["write"]["bytes"]["value"] == 2 * 64 * MIB + 2048 + 5000
    layers = {lay["layer"]: lay for lay in run["io"]["layers"]}
    assert layers["dfs"]["label"] == "DFS" and layers["daos"]["label"] == "DAOS"
    assert layers["dfs"]["read"]["bytes"]["value"] == 64 * MIB
    dump = subprocess.run([*pario_cmd, "dump", str(path)], capture_output=True, text=True, timeout=120)
    assert dump.returncode == 0, dump.stderr
    assert "'modules_not_analysed': []" in dump.stdout
    lines = dump.stdout.splitlines()
    assert f"posix\t-1\t{0x81B90C5D6766CD90:016x}\tbytes_written\t{64 * MIB}\t{DFUSE_FILE}" in lines
    assert f"stdio\t0\t{0x7ACC7A12F35A0099:016x}\tbytes_written\t5000\t<STDOUT>" in lines
    assert f"dfs\t-1\t{ID_TESTFILE:016x}\tbytes_written\t{64 * MIB}\t/testFile" in lines
    assert f"daos\t3\t{ID_EXTRA:016x}\tobj_updates\t1\t<DAOS object 7.3>" in lines


ID_SMALL = 0x5A5A5A5A12345678


def small_dfs_writes_log() -> DarshanLog:
    """4 ranks write one shared DFS file in 4 KiB requests (4096 writes, 16 MiB, 8 s over the ranks);
    its DAOS object's record holds the same 4096 array writes again."""
    return DarshanLog(
        nprocs=4, exe="/opt/app/bin/writer", names=[(ID_SMALL, ""), (ID_SMALL, "/out/small.dat")],
        records=[
            Record("DFS", ID_SMALL, -1, {"DFS_OPENS": 4, "DFS_WRITES": 4096, "DFS_BYTES_WRITTEN": 16 * MIB,
                                        "DFS_SIZE_WRITE_1K_10K": 4096},
                   {"DFS_F_WRITE_TIME": 8.0, "DFS_F_META_TIME": 0.01}, tail=daos_tail(POOL_UUID, CONT_UUID)),
            Record("DAOS", ID_SMALL, -1, {"DAOS_ARRAY_OPENS": 4, "DAOS_ARRAY_WRITES": 4096,
                                         "DAOS_BYTES_WRITTEN": 16 * MIB, "DAOS_SIZE_WRITE_1K_10K": 4096},
                   {"DAOS_F_WRITE_TIME": 7.5}, tail=daos_tail(POOL_UUID, CONT_UUID, (1 << 32, 9))),
        ],
    )


def test_small_dfs_writes_are_found(tmp_path: Path) -> None:
    """IO-SMALL-WRITES counts the DFS requests (from DFS's size histogram), once: the DAOS record
    of the same object holds them again."""
    path = small_dfs_writes_log().write(tmp_path / "small-dfs.darshan")
    found = {f.id: f for f in diagnose(read_log(path))}
    small = found["IO-SMALL-WRITES"]
    ev = {m.name: m.value for m in small.evidence}
    assert (ev["small_writes"], ev["all_writes"], ev["share_of_requests"]) == (4096, 4096, 1.0)
    assert ev["mean_request"] == 4096
    assert ev["time_at_stake"] == 8.0 / 4  # the shared record's write time, a quarter per rank
    assert [s.name for s in small.subjects] == ["/out/small.dat"]


# ---------------------------------------------------------------------------
# name records: the check accepts what libdarshan-util reads and nothing else
# ---------------------------------------------------------------------------

def small_log(**kw: object) -> DarshanLog:
    args: dict[str, object] = {"nprocs": 2, "exe": "/bin/app", "names": [(11, "/a")],
                               "mounts": [("xfs", "/")],
                               "records": [Record("POSIX", 11, 0, {"POSIX_BYTES_WRITTEN": 4096})]}
    args.update(kw)
    return DarshanLog(**args)


def rec(rec_id: int, name: bytes) -> bytes:
    return struct.pack("<Q", rec_id) + name + b"\0"


@pytest.mark.parametrize(("names", "writers", "expected"), [
    ([(11, "/a"), (12, "")], None, {11: "/a", 12: ""}),
    ([(11, ""), (12, ""), (13, "")], None, {11: "", 12: "", 13: ""}),
    ([(11, "/a"), (11, "")], None, {11: "/a"}),
    ([(11, ""), (11, "/a")], None, {11: "/a"}),
    ([(11, "/a"), (12, ""), (13, "/" + "é" * 3000)], [0, 1, 1], {11: "/a", 12: "", 13: "/" + "é" * 3000}),
    ([], None, {}),
], ids=["empty-last", "all-empty", "name-then-empty", "empty-then-name", "two-blocks-long-name", "none"])
def test_names_the_library_reads_are_accepted(tmp_path: Path, names: list[tuple[int, str]],
                                              writers: list[int] | None, expected: dict[int, str]) -> None:
    path = small_log(names=names, name_writers=writers).write(tmp_path / "names.darshan")
    report = pydarshan(path)
    assert report.name_records == expected
    darshan_reader.check_darshan_log(path)
    posix = read_log(path).layer("posix")
    # PyDarshan gives the records that have a name record; so does pario
    assert len(report.records["POSIX"]) == len(posix) == (1 if 11 in expected else 0)
    assert list(posix.get("bytes_written", [])) == [4096] * len(posix)
    # an empty name is the record's id in the tables (never a blank name)
    want = expected.get(11) or darshan_reader.unnamed_record("POSIX", 11)
    assert posix["name"].tolist() == [want for _ in range(len(posix))]


@pytest.mark.parametrize("raw", [
    rec(11, b"/a") + b"\x01",
    rec(11, b"/a") + b"\0" * 8,
    rec(11, b"/a") + struct.pack("<Q", 12) + b"abcd",
    b"\x01" * 5,
], ids=["1-byte-left", "8-zero-bytes-left", "name-without-nul", "5-bytes"])
def test_names_the_library_fails_on_are_refused(tmp_path: Path, raw: bytes) -> None:
    path = small_log(raw_names=raw).write(tmp_path / "bad-names.darshan")
    # libdarshan-util fails an assertion on these (contained in the guarded child) ...
    with pytest.raises(LogFormatError, match="crashed \\(SIGABRT\\)"):
        darshan_reader._run_guarded(str(path), 60)
    # ... and the check refuses them before it runs
    with pytest.raises(LogFormatError, match="malformed name records"):
        darshan_reader.check_darshan_log(path)


# ---------------------------------------------------------------------------
# module ids the reader library does not know
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("names", [[(11, "/a")], []], ids=["with-names", "without-names"])
def test_unknown_module_id_is_named_not_fatal(tmp_path: Path, names: list[tuple[int, str]]) -> None:
    built = small_log(names=names, raw_modules={40: (2, b"newer module " * 20)})
    path = built.write(tmp_path / "newer.darshan")
    with pytest.raises(LogFormatError, match="cannot use string"):  # PyDarshan cannot list the modules
        darshan_reader._run_guarded(str(path), 60)
    header = darshan_reader.check_darshan_log(path)
    assert header.unknown_modules == (40,) and header.module_versions == {1: 4, 40: 2}
    profile = read_log(path)
    assert profile.job.nprocs == 2 and profile.job.exe == "/bin/app"
    assert list(profile.layer("posix").get("bytes_written", [])) == [4096] * len(names)
    assert profile.job.metadata["modules_not_analysed"] == ["unknown module 40"]
    assert path.read_bytes() == built.to_bytes()  # the log itself is left as it was
