"""`pario export --darshan`: real pario logs written as Darshan logs, read back by PyDarshan.

Each log comes from a real run under `pario run`: the block kernel (4 ranks, collective MPI-IO,
known bytes), io_known (POSIX, STDIO and MPI-IO, a file two ranks share), vpic --hdf5 (H5F, H5D)
and s3d --pnetcdf (PNETCDF_FILE, PNETCDF_VAR).  The exported log is read back with
`darshan.DarshanReport(read_all=True)` and compared counter by counter with the pario log's own
records, and `pario report --json` of the two logs must give the same I/O numbers.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pario.log import read_log
from pario.log.darshan_writer import DERIVED, NOT_RECORDED
from pario.model import Profile, counter_column

NP = 4
BLOCK, TRANSFER, SEGMENTS = 65536, 16384, 2
BLOCK_BYTES = NP * SEGMENTS * BLOCK  # the block kernel's file: written once, read back once
MODULE_OF_LAYER = {"posix": "POSIX", "mpiio": "MPI-IO", "stdio": "STDIO", "h5f": "H5F", "h5d": "H5D",
                   "pnetcdf_file": "PNETCDF_FILE", "pnetcdf_var": "PNETCDF_VAR"}


def _pario(pario_cmd: list[str], *args: str,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*pario_cmd, *args], capture_output=True, text=True, timeout=300, env=env)


def _kernel_log(pario_cmd: list[str], mpi_env: dict[str, str], out: Path, name: str, args: list[str]) -> Path:
    """`pario run -- mpirun -np 4 pario-kernel-NAME ARGS`: the log."""
    exe = _pario(pario_cmd, "path", f"pario-kernel-{name}").stdout.strip()
    log = out / f"{name}.pario"
    proc = _pario(pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", str(NP), exe, *args,
                  env=mpi_env)
    assert proc.returncode == 0, proc.stderr
    return log


def _export(pario_cmd: list[str], log: Path) -> Path:
    out = log.with_suffix(".darshan")
    proc = _pario(pario_cmd, "export", "--darshan", str(log), str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"pario: Darshan log written to {out} (")
    return out


@pytest.fixture(scope="module")
def block_logs(tmp_path_factory, pario_cmd, mpi_env) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("export-block")
    log = _kernel_log(pario_cmd, mpi_env, out, "block",
                      ["--block-size", str(BLOCK), "--transfer-size", str(TRANSFER),
                       "--segments", str(SEGMENTS), "--read", "--path", str(out / "block.dat")])
    return log, _export(pario_cmd, log)


@pytest.fixture(scope="module")
def known_logs(known_run, pario_cmd) -> tuple[Path, Path]:
    _, out, _ = known_run
    return out / "known.pario", _export(pario_cmd, out / "known.pario")


@pytest.fixture(scope="module")
def hdf5_logs(tmp_path_factory, pario_cmd, mpi_env) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("export-hdf5")
    log = _kernel_log(pario_cmd, mpi_env, out, "vpic",
                      ["--hdf5", "--particles", "4096", "--read", "--path", str(out / "vpic.h5")])
    return log, _export(pario_cmd, log)


@pytest.fixture(scope="module")
def pnetcdf_logs(tmp_path_factory, pario_cmd, mpi_env) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("export-pnetcdf")
    log = _kernel_log(pario_cmd, mpi_env, out, "s3d",
                      ["--pnetcdf", "--nx", "16", "--ny", "16", "--nz", "16", "--read",
                       "--path", str(out / "s3d.nc")])
    return log, _export(pario_cmd, log)


def _darshan(path: Path) -> Any:
    import darshan

    return darshan.DarshanReport(str(path), read_all=True)


def _records(report: Any, module: str) -> tuple[Any, Any]:
    """(counters, fcounters) DataFrames of a module, each with rank and id (the records' exact
    ids: the DataFrames' own id column is not exact for ids above 2**53)."""
    frames = report.records[module].to_df()
    ids = [int(r["id"]) for r in report.records[module]]
    for frame in (frames["counters"], frames["fcounters"]):
        frame["id"] = np.array(ids, dtype=np.uint64)
    return frames["counters"], frames["fcounters"]


def _schema(profile: Profile, layer: str) -> tuple[list[str], list[str]]:
    """The pario log's own counter names of a layer (its META block)."""
    for lay in profile.job.metadata["schema"]["layers"]:
        if lay["name"] == layer:
            return list(lay["counters"]), list(lay["fcounters"])
    raise AssertionError(f"no layer {layer}")


def _check_layer(profile: Profile, report: Any, layer: str) -> int:
    """Every record of a pario layer is in the Darshan module, with every Darshan counter equal to
    pario's counter of the same name, to its documented derivation, or -1 where pario has none.
    Returns the number of records compared."""
    module = MODULE_OF_LAYER[layer]
    table = profile.layer(layer)
    counters, fcounters = _records(report, module)
    assert len(counters) == len(table)
    pario_names, pario_fnames = _schema(profile, layer)
    ids = np.asarray(table["id"]).astype(np.uint64)
    for row in range(len(table)):
        mine = counters[counters["id"].astype(np.uint64) == ids[row]]
        fmine = fcounters[fcounters["id"].astype(np.uint64) == ids[row]]
        assert len(mine) == 1 and int(mine["rank"].iloc[0]) == int(table["rank"][row])
        assert report.name_records[int(ids[row])] == table["name"][row]
        for name in mine.columns:
            if name in ("id", "rank"):
                continue
            got = int(mine[name].iloc[0])
            if name in DERIVED:
                continue  # checked one by one below
            if name in pario_names:
                assert got == int(table[counter_column(name)][row]), (module, name)
            else:
                assert got == NOT_RECORDED, (module, name)
        for name in fmine.columns:
            if name in ("id", "rank"):
                continue
            got = float(fmine[name].iloc[0])
            if name in pario_fnames:
                assert got == float(table[counter_column(name)][row]), (module, name)
            else:
                assert got == float(NOT_RECORDED), (module, name)
    return len(table)


def _job_checks(profile: Profile, report: Any) -> None:
    job = report.metadata["job"]
    assert job["nprocs"] == profile.job.nprocs == NP
    assert job["start_time_sec"] == int(profile.job.start_time)
    # Darshan's run time is end - start: pario's run time (the longest rank's wall time)
    ends = ((job["end_time_sec"] - job["start_time_sec"])
            + (job["end_time_nsec"] - job["start_time_nsec"]) * 1e-9)
    assert ends == pytest.approx(profile.job.runtime, abs=1e-9)
    assert job["run_time"] == pytest.approx(profile.job.runtime, abs=1e-6)
    assert job["end_time_sec"] <= int(profile.job.end_time) + 1
    assert job["log_ver"] == "3.41"
    assert job["metadata"]["pario_log"] == Path(profile.job.path).name
    assert report.metadata["exe"] == " ".join(profile.job.argv)


# ---- PyDarshan reads back what the pario log holds ---------------------------------------------

@pytest.mark.slow
def test_block_mpiio_counters_round_trip(block_logs):
    log, exported = block_logs
    profile, report = read_log(log), _darshan(exported)
    _job_checks(profile, report)
    assert set(report.modules) == {"POSIX", "MPI-IO"}
    assert _check_layer(profile, report, "mpiio") == 1
    assert _check_layer(profile, report, "posix") >= 1
    counters, fcounters = _records(report, "MPI-IO")
    rec = counters.iloc[0]
    assert report.name_records[int(counters["id"].iloc[0])].endswith("/block.dat")
    # the kernel's known I/O: every rank writes then reads SEGMENTS blocks in TRANSFER requests
    requests = NP * SEGMENTS * BLOCK // TRANSFER
    assert int(rec["rank"]) == -1
    assert int(rec["MPIIO_BYTES_WRITTEN"]) == int(rec["MPIIO_BYTES_READ"]) == BLOCK_BYTES
    assert int(rec["MPIIO_COLL_WRITES"]) == int(rec["MPIIO_COLL_READS"]) == requests
    assert int(rec["MPIIO_INDEP_WRITES"]) == int(rec["MPIIO_INDEP_READS"]) == 0
    assert int(rec["MPIIO_COLL_OPENS"]) == 2 * NP  # opened to write, again to read
    assert int(rec["MPIIO_SIZE_WRITE_AGG_10K_100K"]) == requests
    assert int(rec["MPIIO_MODE"]) == NOT_RECORDED and int(rec["MPIIO_ACCESS1_ACCESS"]) == NOT_RECORDED
    assert float(fcounters.iloc[0]["MPIIO_F_WRITE_TIME"]) > 0
    assert float(fcounters.iloc[0]["MPIIO_F_READ_START_TIMESTAMP"]) == float(NOT_RECORDED)


def test_stdio_posix_and_shared_records_round_trip(known_logs):
    log, exported = known_logs
    profile, report = read_log(log), _darshan(exported)
    _job_checks(profile, report)
    assert set(report.modules) == {"POSIX", "MPI-IO", "STDIO"}
    for layer in ("posix", "mpiio", "stdio"):
        assert _check_layer(profile, report, layer) == len(profile.layer(layer))
    # io_known's documented I/O (tests/programs/io_known.c)
    stdio, _ = _records(report, "STDIO")
    assert len(stdio) == 1 and int(stdio.iloc[0]["rank"]) == 0
    assert report.name_records[int(stdio["id"].iloc[0])].endswith("/log.txt")
    columns = ("STDIO_WRITES", "STDIO_BYTES_WRITTEN", "STDIO_READS", "STDIO_BYTES_READ", "STDIO_OPENS",
               "STDIO_FDOPENS")
    assert [int(stdio.iloc[0][c]) for c in columns] == [10, 80, 10, 80, 1, 0]
    posix, _ = _records(report, "POSIX")
    by_name = {Path(report.name_records[int(rid)]).name: posix.iloc[i] for i, rid in enumerate(posix["id"])}
    for r in range(NP):
        fpp = by_name[f"fpp.{r}"]
        assert int(fpp["rank"]) == r
        assert (int(fpp["POSIX_WRITES"]), int(fpp["POSIX_BYTES_WRITTEN"])) == (16, 16000)
        assert (int(fpp["POSIX_READS"]), int(fpp["POSIX_BYTES_READ"])) == (1, 500)
        assert int(fpp["POSIX_FSYNCS"]) == 1 and int(fpp["POSIX_MMAPS"]) == NOT_RECORDED
    pair = by_name["pair.dat"]
    assert int(pair["rank"]) == -1
    assert (int(pair["POSIX_BYTES_WRITTEN"]), int(pair["POSIX_WRITES"])) == (600, 6)
    mpiio, _ = _records(report, "MPI-IO")
    k, s = 8, 4096
    assert int(mpiio.iloc[0]["MPIIO_BYTES_WRITTEN"]) == NP * k * s
    assert int(mpiio.iloc[0]["MPIIO_COLL_WRITES"]) == NP * k
    # the shared-pointer calls go with the independent ones, as Darshan counts them
    table = profile.layer("mpiio")
    indep = int(table["indep_reads"][0] + table["shared_reads"][0])
    assert int(mpiio.iloc[0]["MPIIO_INDEP_READS"]) == indep == NP * k


@pytest.mark.slow
def test_hdf5_records_round_trip(hdf5_logs):
    log, exported = hdf5_logs
    profile, report = read_log(log), _darshan(exported)
    _job_checks(profile, report)
    assert {"H5F", "H5D", "MPI-IO", "POSIX"} <= set(report.modules)
    assert _check_layer(profile, report, "h5f") == 1
    assert _check_layer(profile, report, "h5d") == 8  # x, y, z, id1, id2, px, py, pz
    h5f, _ = _records(report, "H5F")
    h5d, _ = _records(report, "H5D")
    f_table, d_table = profile.layer("h5f"), profile.layer("h5d")
    # Darshan's *_OPENS count the creates too
    assert int(h5f.iloc[0]["H5F_OPENS"]) == int(f_table["opens"][0] + f_table["creates"][0]) == 2 * NP
    assert list(h5d["H5D_OPENS"]) == list(np.asarray(d_table["opens"]) + np.asarray(d_table["creates"]))
    assert int(h5d["H5D_BYTES_WRITTEN"].sum()) == int(h5d["H5D_BYTES_READ"].sum()) == 8 * 4 * 4096 * NP
    # every dataset points at its file's record (a field of Darshan's record, not a counter)
    assert {int(r["file_rec_id"]) for r in report.records["H5D"]} == {int(h5f["id"].iloc[0])}


@pytest.mark.slow
def test_pnetcdf_records_round_trip(pnetcdf_logs):
    log, exported = pnetcdf_logs
    profile, report = read_log(log), _darshan(exported)
    _job_checks(profile, report)
    assert {"PNETCDF_FILE", "PNETCDF_VAR"} <= set(report.modules)
    assert _check_layer(profile, report, "pnetcdf_file") == 1
    assert _check_layer(profile, report, "pnetcdf_var") == 4  # yspecies, u, pressure, temperature
    var, _ = _records(report, "PNETCDF_VAR")
    # s3d's 16^3 grid: 11 species + 3 velocities + pressure + temperature, 8-byte doubles
    assert int(var["PNETCDF_VAR_BYTES_WRITTEN"].sum()) == 16 ** 3 * (11 + 3 + 1 + 1) * 8
    assert int(var["PNETCDF_VAR_PUT_VARD"].iloc[0]) == NOT_RECORDED
    pfile, _ = _records(report, "PNETCDF_FILE")
    assert {int(r["file_rec_id"]) for r in report.records["PNETCDF_VAR"]} == {int(pfile["id"].iloc[0])}


def test_lustre_layout_becomes_a_lustre_record(block_logs, tmp_path, pario_cmd):
    """pario's POSIX layout counters become one LUSTRE component (the log is the block run's,
    its layout set as the runtime sets it on Lustre, since this machine has none)."""
    from pario_writer import write_pario_log

    profile = read_log(block_logs[0])
    posix = profile.layer("posix")
    shared = np.flatnonzero(np.asarray(posix["name"]) == str(Path(block_logs[0]).parent / "block.dat"))
    assert len(shared) == 1
    layout = (("lustre_stripe_size", 1 << 20), ("lustre_stripe_count", 4), ("lustre_stripe_offset", 7),
              ("lustre_components", 1), ("fs_type", 0x0BD00BD0))
    for col, value in layout:
        values = np.asarray(posix[col]).copy()
        values[shared] = value
        posix[col] = values
    lustre_log = tmp_path / "lustre.pario"
    write_pario_log(dataclasses.replace(profile, files={**profile.files, "posix": posix}), lustre_log)
    report = _darshan(_export(pario_cmd, lustre_log))
    assert "LUSTRE" in report.modules
    assert len(report.records["LUSTRE"]) == 1
    rec = report.records["LUSTRE"][0]
    assert int(rec["id"]) == int(np.asarray(posix["id"]).astype(np.uint64)[shared][0])
    assert len(rec["components"]) == 1
    comp = rec["components"][0]
    from pario.log.darshan_lib import counter_names

    values = dict(zip(counter_names("LUSTRE_COMP"), comp["counters"].tolist(), strict=True))
    assert values == {"LUSTRE_COMP_STRIPE_SIZE": 1 << 20, "LUSTRE_COMP_STRIPE_COUNT": 4,
                      "LUSTRE_COMP_STRIPE_PATTERN": -1, "LUSTRE_COMP_FLAGS": -1, "LUSTRE_COMP_EXT_START": 0,
                      "LUSTRE_COMP_EXT_END": -1, "LUSTRE_COMP_MIRROR_ID": -1}
    assert comp["pool_name"] == "" and list(comp["ost_ids"]) == [7, -1, -1, -1]
    # pario's own reader takes the striping from the LUSTRE module, as from a Darshan run
    striping = read_log(tmp_path / "lustre.darshan").job.metadata["lustre_striping"]
    assert striping == {int(rec["id"]): {"stripe_size": 1 << 20, "stripe_count": 4}}


# ---- pario report gives the same I/O numbers for both logs ----------------------------------------

def _report(pario_cmd: list[str], log: Path, tmp: Path) -> dict:
    out = tmp / (log.name + ".json")
    proc = _pario(pario_cmd, "report", str(log), "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(out.read_text())["runs"][0])


def _layer_numbers(run: dict) -> dict[str, dict[str, tuple[float, float]]]:
    return {row["layer"]: {k: (row[k]["ops"]["value"], row[k]["bytes"]["value"]) for k in ("read", "write")}
            for row in run["io"]["layers"]}


def _file_numbers(run: dict) -> dict[tuple[str, str], tuple]:
    keys = ("ranks", "bytes_read", "bytes_written", "reads", "writes")
    return {(f["layer"], f["name"]): tuple(f[k] for k in keys) for f in run["files"]["top"]}


@pytest.mark.parametrize("logs", ["block_logs", "hdf5_logs", "pnetcdf_logs"])
@pytest.mark.slow
@pytest.mark.measured  # the run time from the job's times or its longest I/O: load can tip it
def test_report_of_export_shows_the_same_io(logs, request, pario_cmd, tmp_path):
    log, exported = request.getfixturevalue(logs)
    a, b = _report(pario_cmd, log, tmp_path), _report(pario_cmd, exported, tmp_path)
    assert b["job"]["source"] == "darshan" and a["job"]["source"] == "pario"
    assert b["job"]["nprocs"] == a["job"]["nprocs"] == NP
    if any("so that no rank's I/O outlasts the run" in note for note in b["notes"]):
        # a rank's I/O, estimated from the export's shared records, outlasted the job's times (a
        # run whose I/O is most of it, under load): the reader takes T as that I/O time
        assert b["job"]["runtime"] > a["job"]["runtime"]
    else:
        assert b["job"]["runtime"] == pytest.approx(a["job"]["runtime"], abs=1e-6)
    assert _layer_numbers(b) == _layer_numbers(a)
    assert b["totals"]["bytes"]["value"] == a["totals"]["bytes"]["value"] > 0
    assert b["ranks"]["bytes_read"] == a["ranks"]["bytes_read"]
    assert b["ranks"]["bytes_written"] == a["ranks"]["bytes_written"]
    assert _file_numbers(b) == _file_numbers(a)


@pytest.mark.slow
def test_report_of_export_with_a_partly_shared_file(known_logs, pario_cmd, tmp_path):
    """io_known's pair.dat is shared by ranks 1 and 2 of 4: Darshan has no record for that, so the
    export's reduced record reads as shared by all ranks; every other number is the same."""
    a, b = _report(pario_cmd, known_logs[0], tmp_path), _report(pario_cmd, known_logs[1], tmp_path)
    assert _layer_numbers(b) == _layer_numbers(a)
    fa, fb = _file_numbers(a), _file_numbers(b)
    pair = [k for k in fa if k[1].endswith("/pair.dat")]
    assert len(pair) == 1 and fa[pair[0]][0] == 2 and fb[pair[0]][0] == NP
    assert fa[pair[0]][1:] == fb[pair[0]][1:]
    assert {k: v for k, v in fa.items() if k not in pair} == {k: v for k, v in fb.items() if k not in pair}
    assert sum(b["ranks"]["bytes_written"]) == sum(a["ranks"]["bytes_written"])


# ---- bad input: one line, exit 2 ----------------------------------------------------------------

def _one_line_error(proc: subprocess.CompletedProcess, expected: str) -> None:
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr == f"pario: error: {expected}\n"


@pytest.mark.slow
def test_bad_inputs(block_logs, tmp_path, pario_cmd):
    log, exported = block_logs
    out = tmp_path / "out.darshan"
    missing = tmp_path / "missing.pario"
    _one_line_error(_pario(pario_cmd, "export", "--darshan", str(missing), str(out)),
                    f"{missing}: no such file")
    corrupt = tmp_path / "corrupt.pario"
    data = bytearray(log.read_bytes())
    data[60] ^= 0xFF  # a bit flipped inside the META block
    corrupt.write_bytes(bytes(data))
    proc = _pario(pario_cmd, "export", "--darshan", str(corrupt), str(out))
    _one_line_error(proc, f"{corrupt}: corrupt pario log (checksum mismatch in a META block)")
    text = tmp_path / "notes.txt"
    text.write_text("not a log\n")
    _one_line_error(_pario(pario_cmd, "export", "--darshan", str(text), str(out)),
                    f"{text}: not a pario or Darshan log")
    _one_line_error(_pario(pario_cmd, "export", "--darshan", str(exported), str(out)),
                    f"{exported}: is a Darshan log already; export takes a pario log")
    nodir = tmp_path / "no" / "such" / "dir" / "out.darshan"
    _one_line_error(_pario(pario_cmd, "export", "--darshan", str(log), str(nodir)),
                    f"{nodir}: directory {nodir.parent} does not exist")
    _one_line_error(_pario(pario_cmd, "export", "--darshan", str(log), str(tmp_path)),
                    f"{tmp_path}: is a directory; give the Darshan log's file name")
    assert not out.exists() and list(tmp_path.glob(".*.tmp")) == []


def test_export_replaces_an_existing_log_and_leaves_no_temporary(block_logs, tmp_path, pario_cmd):
    log, _ = block_logs
    out = tmp_path / "again.darshan"
    out.write_text("old\n")
    proc = _pario(pario_cmd, "export", "--darshan", str(log), str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:4] == b"3.41"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.darshan"]
    assert read_log(out).job.nprocs == NP
