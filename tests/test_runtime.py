"""The runtime end to end: real mpirun, real MPI-IO, logs read back with pario's reader.

Every expected number below follows from the I/O of the test program, whose
source (tests/programs/*.c) states exactly what it does.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from pario.log import read_log
from record_helpers import IO_KNOWN_K as K
from record_helpers import IO_KNOWN_NP as NP
from record_helpers import IO_KNOWN_S as S
from record_helpers import check_io_known, one_record


def test_run_prints_log_location(known_run):
    _, out, proc = known_run
    assert f"log written to {out / 'known.pario'}" in proc.stderr


def test_counters_are_those_of_the_program(known_run):
    """What io_known does, as every launcher must log it (record_helpers.check_io_known)."""
    profile, out, _ = known_run
    check_io_known(profile, out, NP, K, S)
    assert "Open MPI" in profile.job.mpi_library or "MPICH" in profile.job.mpi_library


def test_mpiio_shared_file_reduced(known_run):
    profile, out, _ = known_run
    rec = one_record(profile.layer("mpiio"), str(out / "shared.dat"))
    assert rec["size_read_agg_1k_10k"] == NP * K  # 4096-byte requests
    assert rec["max_write_size"] == S
    assert rec["fastest_rank_bytes"] == 2 * K * S  # every rank moved K*S each way
    assert rec["slowest_rank_bytes"] == 2 * K * S
    assert rec["variance_rank_bytes"] == 0
    assert 0 <= rec["fastest_rank"] < NP and 0 <= rec["slowest_rank"] < NP
    assert rec["fastest_rank_time"] <= rec["slowest_rank_time"]
    assert list(profile.file_ranks[("mpiio", int(rec["id"]))]) == list(range(NP))


def test_posix_counters_below_mpiio(known_run):
    """The MPI library's own POSIX calls on the shared file are counted (every byte once)."""
    profile, out, _ = known_run
    rec = one_record(profile.layer("posix"), str(out / "shared.dat"))
    assert rec["bytes_written"] == NP * K * S
    assert rec["bytes_read"] >= NP * K * S
    assert rec["fsyncs"] + rec["fdsyncs"] >= 1


def test_posix_file_per_process_exact(known_run):
    profile, out, _ = known_run
    posix = profile.layer("posix")
    for r in range(NP):
        rec = one_record(posix, str(out / f"fpp.{r}"))
        assert rec["size_write_100_1k"] == 16 and rec["size_read_100_1k"] == 1
        assert rec["consec_writes"] == 15 and rec["seq_writes"] == 15
        assert rec["max_byte_written"] == 15999 and rec["max_byte_read"] == 599
        assert rec["rw_switches"] == 1
        # offsets 1000, 2000, ... are not multiples of the 4 KiB block: 15 writes + the pread at 100
        align = rec["file_alignment"]
        assert align > 0
        expected = sum(1 for off in [i * 1000 for i in range(16)] + [100] if off % align)
        assert rec["file_not_aligned"] == expected


def test_file_shared_by_two_ranks(known_run):
    """pair.dat is written by ranks 1 and 2 only: reduced, with exactly those ranks."""
    profile, out, _ = known_run
    rec = one_record(profile.layer("posix"), str(out / "pair.dat"))
    assert rec["rank"] == -1 and rec["writes"] == 6
    assert rec["size_write_0_100"] == 6
    assert rec["max_byte_written"] == 599
    assert rec["fastest_rank_bytes"] == 300 and rec["slowest_rank_bytes"] == 300


def test_stdio_exact(known_run):
    profile, out, _ = known_run
    rec = one_record(profile.layer("stdio"), str(out / "log.txt"))
    assert rec["rank"] == 0
    assert rec["opens"] == 1
    assert rec["writes"] == 10 and rec["bytes_written"] == 80
    assert rec["reads"] == 10 and rec["bytes_read"] == 80  # 10 fgets of 8-byte lines
    assert rec["seeks"] == 1  # rewind
    assert rec["size_write_0_100"] == 10


def test_mpi_communication_counted(known_run):
    profile, _, _ = known_run
    ranks = profile.ranks
    # one Allreduce of 8 doubles and two Barriers per rank, made by the program itself
    assert (ranks["mpi_coll_calls"] == 3).all()
    assert (ranks["mpi_coll_bytes"] == 64).all()
    assert (ranks["mpi_coll"] > 0).all()


def test_time_classes_add_up(known_run):
    profile, _, _ = known_run
    r = profile.ranks
    assert (r["wall"] > 0).all()
    assert (r["mpi_init"] > 0).all()  # measured, but outside wall and the MPI classes
    assert (r["mpiio_write"] > 0).all() and (r["mpiio_read"] > 0).all()
    assert (r["posix_write"] > 0).all()
    total = r["useful"] + r["io"] + r["mpi"]
    np.testing.assert_allclose(total, r["wall"], rtol=1e-9)
    assert (r["io"] + r["mpi"] <= r["wall"]).all()
    assert (r["useful"] >= 0).all()


def test_no_mpi_library_files(known_run):
    """Files the MPI library touches while starting up are not the application's."""
    profile, _, _ = known_run
    names = set(profile.layer("posix")["name"])
    assert not any(n.startswith(("/proc", "/sys", "/dev", "/usr", "/etc")) or n == "/" for n in names)
    assert not any(".pmix" in n or "/ompi." in n for n in names)


@pytest.mark.slow
def test_dev_shm_is_recorded_without_the_mpi_segments(tmp_path, compile_program, run_under_pario):
    """/dev/shm is where users put files on tmpfs: recorded, while the MPI libraries' own
    segments there (Open MPI's BTL and RMA windows, which the engine's rma-fence creates) are not."""
    import shutil
    import tempfile

    exe = compile_program("io_known.c")
    out = Path(tempfile.mkdtemp(prefix="pario-test-", dir="/dev/shm"))
    try:
        log = tmp_path / "shm.pario"
        proc = run_under_pario(log, ["mpirun", "-np", str(NP), str(exe), str(out), str(K), str(S)],
                               extra=["--collective", "write-comm:rma-fence"])
        assert proc.returncode == 0, proc.stderr
        profile = read_log(log)
        check_io_known(profile, out)
        assert one_record(profile.layer("mpiio"), str(out / "shared.dat"))["engine_writes"] == K
        names = set(profile.layer("posix")["name"])
        assert not any(("osc_" in n or "vader" in n or "segment" in n) for n in names), names
    finally:
        shutil.rmtree(out, ignore_errors=True)


@pytest.mark.slow
def test_hints_recorded_romio(tmp_path, compile_program, run_under_pario, mpi_env):
    """ROMIO reports the hints in effect; injected hints (--hints) take effect and are recorded."""
    exe = compile_program("io_known.c")
    hints = tmp_path / "hints.txt"
    hints.write_text("# test hints\ncb_nodes 2\nromio_cb_write=enable\n")
    env = dict(mpi_env, OMPI_MCA_io="romio321")
    log = tmp_path / "romio.pario"
    proc = run_under_pario(log, ["mpirun", "-np", "4", str(exe), str(tmp_path), "2", "1024"], env=env,
                           extra=["--hints", str(hints)])
    assert proc.returncode == 0, proc.stderr
    profile = read_log(log)
    rec = one_record(profile.layer("mpiio"), str(tmp_path / "shared.dat"))
    hints_in_effect = profile.hints[int(rec["id"])]
    assert hints_in_effect["cb_nodes"] == "2"
    assert hints_in_effect["romio_cb_write"] == "enable"
    # Open MPI 4.1's MPI_File_get_info returns the hints that were set (not ROMIO's defaults)
    assert hints_in_effect.get("mca:io") == "romio321"
    assert profile.job.metadata["injected_hints"] == {"cb_nodes": "2", "romio_cb_write": "enable"}


def test_writer_round_trip(known_run, tmp_path):
    """pario_writer writes what the reader reads back, value for value."""
    import pandas as pd

    from pario_writer import write_pario_log

    profile, _, _ = known_run
    copy = tmp_path / "copy.pario"
    write_pario_log(profile, copy)
    again = read_log(copy)
    pd.testing.assert_frame_equal(again.ranks.to_pandas(), profile.ranks.to_pandas())
    for layer, frame in profile.files.items():
        a = frame.to_pandas().sort_values(["rank", "id"]).reset_index(drop=True)
        b = again.files[layer].to_pandas().sort_values(["rank", "id"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b)
    assert again.hints == profile.hints
    assert again.job.nprocs == profile.job.nprocs


def _log_blocks(data: bytes) -> list[tuple[int, int, bytes]]:
    """(kind, rank, inflated payload) of every block of a pario log."""
    import zlib

    from pario.log import _format as fmt

    out, pos = [], fmt.FILE_HEADER.size
    while pos < len(data):
        kind, rank, _, clen, _, _ = fmt.BLOCK_HEADER.unpack_from(data, pos)
        pos += fmt.BLOCK_HEADER.size
        out.append((kind, rank, zlib.decompress(data[pos:pos + clen])))
        pos += clen
    return out


def _posix_head(payload: bytes, nfields: int) -> tuple[int, np.ndarray, np.ndarray]:
    """A RANK block's POSIX record count and its first two 8-byte columns (version 3 on: ids, ranks)."""
    at = 8 * nfields
    n = int(np.frombuffer(payload, "<u4", 1, at)[0])
    words = np.frombuffer(payload, "<u8", 2 * n, at + 4)
    return n, words[:n], words[n:].view("<i8")


def test_rank_blocks_decode_together_as_one_by_one():
    """The reader decodes the RANK blocks' records a batch at a time, the blocks with as many
    records together: the same words as block by block, and the records written."""
    from pario.log import _format as fmt

    rng = np.random.default_rng(7)
    dtype = fmt.record_dtype(5, 3)
    written, blocks = [], []
    for n in (3, 1, 3, 7, 1, 3, 2):
        rec = np.zeros(n, dtype)
        rec["id"] = rng.integers(0, 2**63, n, dtype=np.uint64)
        rec["rank"] = rng.integers(-1, 100, n)
        rec["c"] = rng.integers(-2**62, 2**62, (n, 5))
        rec["f"] = rng.random((n, 3)) * 1e9
        written.append(rec)
        blocks.append((n, fmt.columns_of_records(rec)))
    nwords = dtype.itemsize // 8
    together = fmt.words_from_column_blocks(blocks, nwords)
    one_by_one = np.concatenate([fmt.words_from_columns(raw, nwords, n, fmt.VERSION) for n, raw in blocks],
                                axis=1)
    assert np.array_equal(together, one_by_one)
    assert np.array_equal(np.ascontiguousarray(together.T).view(dtype).reshape(-1), np.concatenate(written))
    # blocks all of one size: the batch is the columns in order, no scatter
    threes = [(n, raw) for n, raw in blocks if n == 3]
    alike = fmt.words_from_column_blocks(threes, nwords)
    assert np.array_equal(np.ascontiguousarray(alike.T).view(dtype).reshape(-1),
                          np.concatenate([w for w in written if len(w) == 3]))
    # decoded into their place in a larger array (the reader's layer array): the same words, and
    # nothing written outside the place
    for part, expect in ((blocks, together), (threes, alike)):
        room = np.full((nwords, expect.shape[1] + 5), 7, dtype="<u8")
        place = room[:, 2:2 + expect.shape[1]]
        assert fmt.words_from_column_blocks(part, nwords, out=place) is place
        assert np.array_equal(place, expect)
        assert (room[:, :2] == 7).all() and (room[:, 2 + expect.shape[1]:] == 7).all()
    with pytest.raises(ValueError, match="out has shape"):
        fmt.words_from_column_blocks(threes, nwords, out=np.empty((nwords, 1), dtype="<u8"))


def test_records_are_column_major(known_run):
    """A RANK block's POSIX records start with every record's id, then every record's rank,
    then each counter's column split into byte 6, byte 7 and bytes 0-5 of its values (format
    version 4, docs/log-format.md)."""
    import json

    from pario.log import _format as fmt

    profile, outdir, _ = known_run
    data = (outdir / "known.pario").read_bytes()
    assert fmt.FILE_HEADER.unpack_from(data, 0)[1] == 4
    blocks = _log_blocks(data)
    nfields = len(json.loads(blocks[0][2])["rank_fields"])
    posix = profile.files["posix"].to_pandas()
    seen = 0
    for kind, rank, payload in blocks:
        if kind != fmt.BLOCK_RANK:
            continue
        n, ids, ranks = _posix_head(payload, nfields)
        own = posix[posix["rank"] == rank]
        assert n == len(own) > 0
        assert sorted(ids.tolist()) == sorted(own["id"].astype(np.uint64).tolist())
        assert ranks.tolist() == [rank] * n
        # the first counter's column, decoded by hand from its byte planes
        at = 8 * nfields + 4 + 16 * n
        planes = np.frombuffer(payload, np.uint8, 8 * n, at)
        value = np.zeros((n, 8), np.uint8)
        value[:, 6], value[:, 7], value[:, :6] = planes[:n], planes[n:2 * n], planes[2 * n:].reshape(n, 6)
        by_id = dict(zip(own["id"].astype(np.uint64).tolist(), own[posix.columns[3]].tolist(), strict=True))
        assert value.view("<i8")[:, 0].tolist() == [by_id[i] for i in ids.tolist()]
        seen += 1
    assert seen == NP


@pytest.mark.parametrize("version", [2, 3])
def test_older_logs_still_read(known_run, tmp_path, version):
    """The same log with its records as the older versions stored them (row-major before
    version 3, column-major without the split counter columns in version 3) and that
    version in its header reads to the same profile."""
    import json
    import struct

    import pandas as pd

    from pario.log import _format as fmt

    profile, outdir, _ = known_run
    blocks = _log_blocks((outdir / "known.pario").read_bytes())
    meta = json.loads(blocks[0][2])
    dtypes = [fmt.record_dtype(len(lay["counters"]), len(lay["fcounters"])) for lay in meta["layers"]]

    def rows(payload: bytes, at: int) -> bytes:
        """The payload with the record arrays from byte ``at`` on as ``version`` stores them."""
        out = [payload[:at]]
        for dtype in dtypes:
            (n,) = struct.unpack_from("<I", payload, at)
            size = n * dtype.itemsize
            rec = fmt.records_from_columns(payload[at + 4:at + 4 + size], dtype, n, fmt.VERSION)
            if version == 3:
                rec = rec.view("<u8").reshape(n, dtype.itemsize // 8).T
            out.append(payload[at:at + 4] + rec.tobytes())
            at += 4 + size
        return b"".join(out) + payload[at:]

    old = [fmt.FILE_HEADER.pack(fmt.MAGIC, version, fmt.FILE_HEADER.size)]
    for kind, rank, payload in blocks:
        if kind == fmt.BLOCK_SHARED:
            payload = rows(payload, 0)
        elif kind == fmt.BLOCK_RANK:
            payload = rows(payload, 8 * len(meta["rank_fields"]))
        old.append(fmt.block(kind, rank, payload))
    path = tmp_path / f"v{version}.pario"
    path.write_bytes(b"".join(old))
    again = read_log(path)
    pd.testing.assert_frame_equal(again.ranks.to_pandas(), profile.ranks.to_pandas())
    for layer, frame in profile.files.items():
        pd.testing.assert_frame_equal(again.files[layer].to_pandas(), frame.to_pandas())
    assert again.hints == profile.hints and again.file_ranks.keys() == profile.file_ranks.keys()


def test_dump_text_and_json(known_run, pario_cmd):
    import json

    _, out, _ = known_run
    log = out / "known.pario"
    text = subprocess.run([*pario_cmd, "dump", str(log)], capture_output=True, text=True, check=True).stdout
    line = "mpiio\t-1\t"
    rows = [row.split("\t") for row in text.splitlines() if row.startswith(line)]
    values = {r[3]: r[4] for r in rows if r[5] == str(out / "shared.dat")}
    assert values["bytes_written"] == str(NP * K * S)
    assert values["ranks"] == f"0-{NP - 1}"
    data = json.loads(subprocess.run([*pario_cmd, "dump", "--json", str(log)], capture_output=True, text=True,
                                     check=True).stdout)
    assert data["job"]["nprocs"] == NP
    assert len(data["ranks"]) == NP
    shared = [f for f in data["files"]["mpiio"] if f["name"] == str(out / "shared.dat")][0]
    assert shared["bytes_written"] == NP * K * S and shared["ranks"] == list(range(NP))


@pytest.mark.slow
def test_mpi_layer_exact(tmp_path, compile_program, run_under_pario):
    """Calls and bytes of known communication (see tests/programs/mpi_comm.c), exit code kept."""
    exe = compile_program("mpi_comm.c")
    log = tmp_path / "comm.pario"
    proc = run_under_pario(log, ["mpirun", "-np", "4", str(exe), "5"])
    assert proc.returncode == 5
    r = read_log(log).ranks
    assert (r["mpi_p2p_calls"] == 6).all() and (r["mpi_p2p_bytes"] == 8808).all()
    assert (r["mpi_coll_calls"] == 7).all()
    assert list(r["mpi_coll_bytes"]) == [500, 100, 100, 100]
    assert (r["mpi_other_calls"] == 3).all()
    assert (r["mpi_p2p"] > 0).all() and (r["mpi_coll"] > 0).all() and (r["mpi_other"] > 0).all()
