"""Darshan logs as they come: job times in whole seconds, and logs cut inside a module pario
does not read (docs/metrics.md, "Darshan logs").

1. Before Darshan 3.4.1 the job's start and end are whole seconds, so libdarshan-util says a
   28 ms run took 1 s; the run time pario takes is the latest file timestamp of the records,
   kept within what the whole seconds allow, and the report says so.
2. A log cut short (or damaged) inside the region of a module pario does not read (HEATMAP,
   DXT) is read without that module and marked partial; a cut anywhere else is refused.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from darshan_logs import ALL_LOGS, LOGS
from pario.diagnosis import diagnose
from pario.errors import LogFormatError
from pario.log import darshan_lib, darshan_reader, read_log

BUILT = Path(__file__).resolve().parent / "data" / "darshan-built"
OLD_320 = LOGS / "mpi-io-test-x86_64-3.2.0.darshan"
NEW_350 = LOGS / "mpi-io-test-x86_64-3.5.0.darshan"
#: mpi-io-test-x86_64-3.5.0.darshan's records under Darshan 3.4.0's whole-second job times
WHOLE_341 = BUILT / "mpi-io-test-whole-seconds-3.41.darshan"
TREDDY = next(LOGS.glob("treddy_mpi-io-test_*.darshan"))
HEATMAP_LOGS = [NEW_350, *sorted(LOGS.glob("shane_ior-*.darshan"))]


def log(name: str) -> Path:
    return next(p for p in ALL_LOGS if p.name.startswith(name))


def pydarshan_runtime(path: Path) -> float:
    """The run time pario must take, from PyDarshan's values alone: the library's when the job
    times have nanoseconds, else the latest file timestamp of the named records kept between
    max(0, end - start - 1) and end - start + 1 (the library's when no record has one)."""
    import darshan

    report = darshan.DarshanReport(str(path), read_all=True)
    job = report.metadata["job"]
    if job["log_ver"] == "3.41" and (job["start_time_nsec"] or job["end_time_nsec"]):
        return float(job["run_time"])
    stamps = [0.0]
    for mod in darshan_lib.RECORD_STRUCTS:
        if mod in report.records and len(report.records[mod]):
            f = report.records[mod].to_df()["fcounters"]
            stamps += [float(f[c].max()) for c in f.columns if c.endswith("_TIMESTAMP")]
    latest = max(stamps)
    if latest <= 0:
        return float(job["run_time"])
    delta = job["end_time_sec"] - job["start_time_sec"]
    return min(max(latest, max(0.0, delta - 1.0)), delta + 1.0)


def words(text: str) -> str:
    """Text with its line breaks and box borders gone (the terminal report wraps and frames)."""
    return " ".join(w for w in text.split() if w not in ("│", "╭", "╰"))


# ---------------------------------------------------------------------------
# 1. whole-second job times
# ---------------------------------------------------------------------------

def test_the_whole_second_3_20_log_takes_its_latest_file_timestamp() -> None:
    """mpi-io-test 3.2.0: start and end in the same second, libdarshan-util says 1 s (end -
    start + 1); the records' last timestamp, 27.9 ms after the start, is the run time."""
    import darshan

    job = darshan.DarshanReport(str(OLD_320), read_all=True).metadata["job"]
    assert (job["log_ver"], job["start_time_sec"], job["end_time_sec"]) == ("3.20", 1588629284, 1588629284)
    assert job["run_time"] == 1.0
    profile = read_log(OLD_320)
    assert profile.job.runtime == 0.027926921844482422 == pydarshan_runtime(OLD_320)
    assert profile.ranks["wall"].tolist() == [0.027926921844482422] * 4
    assert profile.job.metadata["runtime_source"] == (
        "Run time T = 27.9 ms: the latest file timestamp in the log's records. Darshan stored the job's "
        "start and end times in whole seconds, 0 s apart, so the run took between 0 and 1 s (Darshan's "
        "own tools say 1 s).")


def test_darshan_3_4_0_whole_seconds_give_the_3_5_0_verdicts() -> None:
    """The same run's records under a 3.4.0 job record (3.41, nanoseconds 0, 1 s apart): 1 s and
    no findings before; now 50.0 ms, the latest timestamp, and the 3.5.0 log's findings."""
    import darshan

    job = darshan.DarshanReport(str(WHOLE_341), read_all=True).metadata["job"]
    assert (job["log_ver"], job["start_time_nsec"], job["end_time_nsec"]) == ("3.41", 0, 0)
    assert (job["end_time_sec"] - job["start_time_sec"], job["run_time"]) == (1, 1.0)
    whole, precise = read_log(WHOLE_341), read_log(NEW_350)
    assert whole.job.runtime == 0.04997372627258301 == pydarshan_runtime(WHOLE_341)
    assert precise.job.runtime == 0.051283836364746094  # the nanosecond log keeps the library's
    assert whole.job.metadata["runtime_source"] == (
        "Run time T = 50 ms: the latest file timestamp in the log's records. Darshan stored the job's "
        "start and end times in whole seconds, 1 s apart, so the run took between 0 and 2 s (Darshan's "
        "own tools say 1 s).")
    verdicts = {(f.id, f.severity.label) for f in diagnose(whole)}
    # the 3.5.0 log also names its HEATMAP module, which the built log does not carry
    assert verdicts == {(f.id, f.severity.label) for f in diagnose(precise)
                        if f.id != "DATA-MODULES-NOT-ANALYSED"}
    # 72.6% of a 50 ms run in I/O: a share that large, but 20 ms to gain (severity_warning_seconds 0.1 s)
    assert ("TIME-IO-BOUND", "info") in verdicts


@pytest.mark.parametrize("path", ALL_LOGS + sorted(BUILT.glob("*.darshan")), ids=lambda p: p.name[:40])
def test_every_log_gets_the_run_time_the_rule_gives(path: Path) -> None:
    profile = read_log(path)
    source = str(profile.job.metadata["runtime_source"])
    if path.name == "dxt-format-dev-3.5.0-60.darshan":
        # its ranks spend longer in I/O than the job's times allow: T is the longest I/O time
        assert pydarshan_runtime(path) == 0.004100322723388672 < profile.job.runtime == 0.004317283630371094
        assert source.endswith("A rank spent 4.32 ms in I/O, longer than that: T is taken as that time, so "
                               "that no rank's I/O outlasts the run.")
        return
    assert profile.job.runtime == pydarshan_runtime(path)
    if darshan_reader.whole_seconds(darshan_lib.read_log(str(path)).job, profile.job.metadata[
            "darshan_log_version"]):
        assert "whole seconds" in source
    else:
        assert source.endswith("from the job's start and end times, which Darshan recorded to the "
                               "nanosecond.")


def test_a_run_that_ends_long_after_its_last_io_takes_the_shortest_time_allowed() -> None:
    """skew-app: whole seconds 37516 s apart, last file timestamp at 10435 s: T = 37515 s."""
    profile = read_log(log("skew-app"))
    assert profile.job.runtime == 37515.0
    assert profile.job.metadata["runtime_source"] == (
        "Run time T = 37515 s: Darshan stored the job's start and end times in whole seconds, 37516 s "
        "apart, so the run took between 37515 and 37517 s; the latest file timestamp in the log's records "
        "(10435.24 s) is earlier, so T is the shortest of these (Darshan's own tools say 37517 s).")


def job(start: int, end: int, library: float, *, start_ns: int = 0, end_ns: int = 0) -> dict[str, Any]:
    return {"start_time_sec": start, "start_time_nsec": start_ns, "end_time_sec": end,
            "end_time_nsec": end_ns, "run_time": library}


@pytest.mark.parametrize(("record", "version", "latest", "runtime", "says"), [
    # nanoseconds: the library's, whatever the timestamps say
    (job(100, 100, 0.0513, start_ns=209, end_ns=260), "3.41", 0.0499, 0.0513, "recorded to the nanosecond"),
    (job(100, 101, 0.8, start_ns=0, end_ns=800_000_000), "3.41", 0.5, 0.8, "recorded to the nanosecond"),
    # whole seconds (3.41 from Darshan 3.4.0: d; older formats: d + 1)
    (job(100, 101, 1.0), "3.41", 0.04, 0.04, "T = 40 ms: the latest file timestamp"),
    (job(100, 100, 0.0), "3.41", 0.04, 0.04, "between 0 and 1 s"),
    (job(100, 110, 11.0), "3.21", 3.5, 9.0, "(3.5 s) is earlier, so T is the shortest"),
    (job(100, 101, 2.0), "3.10", 5.0, 2.0, "(5 s) is later than that allows"),
    (job(100, 100, 1.0), "3.00", None, 1.0, "no record holds a file timestamp"),
    (job(100, 99, 0.0), "3.21", 0.5, 0.0, "the end comes before the start"),
], ids=["ns", "ns-one-zero", "3.41-whole", "3.41-same-second", "below", "above", "no-stamp", "backwards"])
def test_the_run_time_rule(record: dict[str, Any], version: str, latest: float | None, runtime: float,
                           says: str) -> None:
    got, sentence = darshan_reader.job_runtime(record, version, latest)
    assert got == runtime
    assert says in sentence


@pytest.mark.slow
def test_the_report_says_where_the_run_time_comes_from(pario_cmd: list[str], tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    done = subprocess.run([*pario_cmd, "report", str(OLD_320), "--json", str(out)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    sentence = ("Run time T = 27.9 ms: the latest file timestamp in the log's records. Darshan stored the "
                "job's start and end times in whole seconds, 0 s apart, so the run took between 0 and 1 s "
                "(Darshan's own tools say 1 s).")
    assert sentence in words(done.stdout)
    run = json.loads(out.read_text())["runs"][0]
    assert sentence in run["notes"]
    assert run["job"]["runtime"] == 0.027926921844482422


# ---------------------------------------------------------------------------
# 2. logs cut inside a module pario does not read
# ---------------------------------------------------------------------------

def regions(path: Path) -> dict[str, tuple[int, int]]:
    """Module name -> (start, end) byte of its region, from the header (as darshan-parser shows)."""
    header = darshan_reader.check_darshan_log(path)
    return {darshan_reader.module_name(header.version, slot): (off, off + length)
            for slot, (off, length) in header.regions.items()}


def cut(path: Path, keep: int, tmp_path: Path) -> Path:
    out = tmp_path / f"cut-{keep}-{path.name}"
    out.write_bytes(path.read_bytes()[:keep])
    return out


def test_heatmap_is_the_last_region_of_the_logs_that_carry_it() -> None:
    for path in HEATMAP_LOGS:
        spans = regions(path)
        assert max(spans.values()) == spans["HEATMAP"] and spans["HEATMAP"][1] == path.stat().st_size
    assert regions(NEW_350)["HEATMAP"] == (2322, 2597)


@pytest.mark.parametrize("path", HEATMAP_LOGS, ids=lambda p: p.name[:20])
@pytest.mark.parametrize("where", ["first-byte", "middle", "last-byte"])
def test_a_log_cut_inside_heatmap_is_read_without_it(path: Path, where: str, tmp_path: Path) -> None:
    start, end = regions(path)["HEATMAP"]
    keep = {"first-byte": start + 1, "middle": (start + end) // 2, "last-byte": end - 1}[where]
    whole, partial = read_log(path), read_log(cut(path, keep, tmp_path))
    reason = f"the HEATMAP region is cut short at byte {keep} (it runs to byte {end}): not read"
    assert not partial.job.complete and partial.job.partial_reasons == (reason,)
    assert partial.job.metadata["modules"]["HEATMAP"] == {
        "records": None, "version": 1, "partial": False, "damaged": reason}
    assert partial.job.metadata["modules_not_analysed"] == ["HEATMAP"]
    # everything pario reads is the whole log's
    assert partial.job.runtime == whole.job.runtime
    for layer, records in whole.files.items():
        for col in ("bytes_read", "bytes_written", "read_time", "write_time", "meta_time"):
            if col in records:
                assert partial.layer(layer)[col].tolist() == records[col].tolist(), (layer, col)


def test_a_log_ending_where_heatmap_starts_says_it_is_missing(tmp_path: Path) -> None:
    profile = read_log(cut(NEW_350, 2322, tmp_path))
    assert profile.job.partial_reasons == (
        "the HEATMAP region is missing (the file ends at byte 2322, it starts at byte 2322): not read",)
    assert profile.layer("posix")["bytes_written"].sum() == 64 * 2**20


def test_a_heatmap_region_that_does_not_decompress_is_left_out(tmp_path: Path) -> None:
    data = bytearray(NEW_350.read_bytes())
    data[2400:2410] = b"\xff" * 10
    bad = tmp_path / "bad-heatmap.darshan"
    bad.write_bytes(bytes(data))
    profile = read_log(bad)
    assert profile.job.partial_reasons == (
        "the HEATMAP region (bytes 2322 to 2597) does not decompress (Error -3 while decompressing data: "
        "incorrect data check): not read",)
    assert bad.read_bytes() == bytes(data)  # the log itself is left as it was


def test_old_formats_name_the_module_by_the_library_s_ids(tmp_path: Path) -> None:
    """treddy (3.21): the last region, slot 10, is DXT_MPIIO (id 11 after the library's
    up-conversion), not the 3.41 list's DXT_POSIX."""
    size = TREDDY.stat().st_size
    profile = read_log(cut(TREDDY, size - 40, tmp_path))
    assert profile.job.partial_reasons == (
        f"the DXT_MPIIO region is cut short at byte {size - 40} (it runs to byte {size}): not read",)
    # DXT_POSIX is read (the trace); only the damaged DXT_MPIIO is left out
    assert profile.job.metadata["modules_not_analysed"] == ["DXT_MPIIO"]
    assert profile.trace is not None and profile.trace.nevents == 320  # the 192 + 128 POSIX segments
    whole = read_log(TREDDY)
    assert profile.layer("mpiio")["bytes_written"].sum() == whole.layer("mpiio")["bytes_written"].sum()


_LIST_MODULES = """
import os, struct, sys
from pario.log import darshan_lib
dl = darshan_lib.library()
src = open(sys.argv[1], "rb").read()
for ver in ("3.00", "3.10", "3.20", "3.21"):
    for slot in range(1, 16):
        data = bytearray(src)
        data[:4] = ver.encode()
        for j in range(16):  # one region, in this slot
            struct.pack_into("<QQ", data, 40 + 16 * j, 0, 0)
        struct.pack_into("<QQ", data, 40 + 16 * slot, 929, 159)
        struct.pack_into("<I", data, 40 + 16 * 16 + 4 * slot, 1)
        path = os.path.join(sys.argv[2], f"{ver}-{slot}.darshan")
        open(path, "wb").write(data)
        handle = dl.lib.darshan_log_open(path.encode())
        print(ver, slot, *darshan_lib._modules(dl, handle))
        dl.lib.darshan_log_close(handle)
"""


def test_module_names_of_old_formats_are_the_library_s(tmp_path: Path) -> None:
    """Each slot of each 16-slot format, as libdarshan-util lists it (one region in that slot of
    the 3.20 log relabelled: only the header and job are read)."""
    done = subprocess.run([sys.executable, "-c", _LIST_MODULES, str(OLD_320), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    listed = {(v, int(s)): name for v, s, name in (line.split() for line in done.stdout.splitlines())}
    assert len(listed) == 60
    assert {k: darshan_reader.module_name(*k) for k in listed} == listed
    assert listed[("3.10", 7)] == "STDIO" and listed[("3.21", 8)] == "STDIO"


@pytest.mark.parametrize(("keep", "ends"), [
    (2300, 2322),  # inside STDIO
    (2250, 2271),  # inside LUSTRE
    (2120, 2234),  # inside MPI-IO
    (1950, 2101),  # inside POSIX
    (1800, 1945),  # inside the name records
    (1700, 1945),  # inside the job region
], ids=["stdio", "lustre", "mpiio", "posix", "names", "job"])
def test_a_cut_inside_what_pario_reads_is_still_refused(keep: int, ends: int, tmp_path: Path) -> None:
    path = cut(NEW_350, keep, tmp_path)
    with pytest.raises(LogFormatError) as err:
        read_log(path)
    assert str(err.value) == (f"{path}: truncated Darshan log (a region ends at byte {ends}, "
                              f"the file has {keep})")


def test_a_module_pario_reads_that_does_not_decompress_is_still_refused(tmp_path: Path) -> None:
    data = bytearray(NEW_350.read_bytes())
    data[2280:2290] = b"\xff" * 10  # inside STDIO
    bad = tmp_path / "bad-stdio.darshan"
    bad.write_bytes(bytes(data))
    with pytest.raises(LogFormatError, match=r"corrupt Darshan log \(module 9 data does not decompress"):
        read_log(bad)


@pytest.mark.slow
def test_report_and_diagnose_of_a_cut_log_say_it_is_partial(pario_cmd: list[str], tmp_path: Path) -> None:
    path = cut(NEW_350, 2500, tmp_path)
    reason = "the HEATMAP region is cut short at byte 2500 (it runs to byte 2597): not read"
    out = tmp_path / "report.json"
    report = subprocess.run([*pario_cmd, "report", str(path), "--json", str(out)], capture_output=True,
                            text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    assert reason in words(report.stdout)
    run = json.loads(out.read_text())["runs"][0]
    assert run["job"]["complete"] is False and run["job"]["partial_reasons"] == [reason]
    assert run["notes"][0] == reason
    diag = subprocess.run([*pario_cmd, "diagnose", str(path)], capture_output=True, text=True, timeout=120)
    assert diag.returncode == 0, diag.stderr
    assert "DATA-INCOMPLETE" in diag.stdout and f"The log is incomplete: {reason}." in words(diag.stdout)


def test_the_header_lists_what_was_dropped(tmp_path: Path) -> None:
    header = darshan_reader.check_darshan_log(cut(NEW_350, 2500, tmp_path))
    assert header.dropped_modules == {
        15: "the HEATMAP region is cut short at byte 2500 (it runs to byte 2597): not read"}
    assert header.module_versions[15] == 1 and header.unknown_modules == ()
    assert darshan_reader.check_darshan_log(NEW_350).dropped_modules == {}
    # the library's copy leaves slot 15 out: length and version 0, the offset kept
    with darshan_reader._readable_by_library(cut(NEW_350, 2500, tmp_path), header) as copy:
        data = copy.read_bytes()
    assert struct.unpack_from("<QQ", data, 48 + 16 * 15) == (2322, 0)
    assert struct.unpack_from("<I", data, 48 + 16 * 64 + 4 * 15) == (0,)


def test_a_cut_log_is_not_blamed_on_darshan_s_record_memory(tmp_path: Path) -> None:
    """The advice fits the cause: a cut file is copied again; DARSHAN_MODMEM is for modules that ran
    out of record memory (imbalanced-io's POSIX module)."""
    cut_log = next(f for f in diagnose(read_log(cut(NEW_350, 2500, tmp_path))) if f.id == "DATA-INCOMPLETE")
    assert [(r.kind, r.snippet) for r in cut_log.recommendations] == [("investigate", "")]
    assert cut_log.recommendations[0].text.startswith("The log file itself is cut short or damaged: copy it")
    full = next(f for f in diagnose(read_log(log("imbalanced-io"))) if f.id == "DATA-INCOMPLETE")
    assert [r.snippet for r in full.recommendations] == [
        "export DARSHAN_MODMEM=64\nexport DARSHAN_NAMEMEM=16"]
