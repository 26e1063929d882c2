"""The bulk reader of pario logs' RANK blocks (pario.log.rank_blocks, src/logread/rank_blocks.c)
against the block-by-block reader it stands in for: the same profile from a real log, and for a
damaged log the same error, because the bulk reader hands anything unexpected back to it."""

from __future__ import annotations

import subprocess
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pario.errors import LogFormatError
from pario.log import _format as fmt
from pario.log import pario_reader, rank_blocks
from pario.model import Profile
from pario.table import Table


@pytest.fixture(scope="module")
def real_log(tmp_path_factory: pytest.TempPathFactory, pario_cmd: list[str],
             mpi_env: dict[str, str]) -> bytes:
    """pario-demo-io on 3 ranks under `pario run --trace --hints`: RANK blocks with records of three
    layers, names, hints in effect and injected, and TRACE blocks between them."""
    out = tmp_path_factory.mktemp("bulk")
    hints = out / "hints.txt"
    hints.write_text("cb_buffer_size=8388608\nromio_cb_write=enable\n")
    demo = subprocess.run([*pario_cmd, "path", "pario-demo-io"], capture_output=True, text=True,
                          timeout=60, env=mpi_env)
    assert demo.returncode == 0, demo.stderr
    log = out / "demo.pario"
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--trace", "--hints", str(hints), "--",
                           "mpirun", "-np", "3", demo.stdout.strip(), str(out)],
                          capture_output=True, text=True, timeout=180, env=mpi_env)
    assert proc.returncode == 0 and log.exists(), proc.stderr[-300:]
    return log.read_bytes()


@pytest.fixture
def bulk_from_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read even a 3-rank log in bulk (by default only logs of 256 RANK blocks or more)."""
    monkeypatch.setattr(rank_blocks, "MIN_BLOCKS", 1)


def _same(a: object, b: object, where: str) -> None:
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    elif isinstance(a, Table):
        assert isinstance(b, Table) and a.columns == b.columns and len(a) == len(b), where
        for name in a.columns:
            _same(np.asarray(a[name]), np.asarray(b[name]), f"{where}.{name}")
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), where
        for key in a:
            _same(a[key], b[key], f"{where}[{key!r}]")
    else:
        assert a == b, where


def _same_profile(a: Profile, b: Profile) -> None:
    for part in ("job", "ranks", "files", "hints", "injected_hints", "file_ranks"):
        _same(getattr(a, part), getattr(b, part), part)
    assert (a.trace is None) == (b.trace is None)
    if a.trace is not None and b.trace is not None:
        assert [r.rank for r in a.trace.ranks] == [r.rank for r in b.trace.ranks]
        for x, y in zip(a.trace.ranks, b.trace.ranks, strict=True):
            _same(x.events, y.events, "trace")
        assert a.trace.files == b.trace.files


def _outcome(data: bytes, bulk: rank_blocks.Blocks | None) -> Profile | str:
    """The profile read from ``data``, or the message of the error reading it raised."""
    try:
        return pario_reader._parse_blocks(data, "log", bulk)
    except (rank_blocks.NotClean, *pario_reader._DAMAGED) as exc:
        return f"{type(exc).__name__}: {exc}"


def test_a_real_log_reads_the_same_in_bulk(real_log: bytes, bulk_from_one_block: None) -> None:
    blocks = rank_blocks.plan(real_log)
    assert blocks is not None
    assert np.count_nonzero(blocks.kinds == fmt.BLOCK_RANK) == 3
    assert np.count_nonzero(blocks.kinds == fmt.BLOCK_TRACE) >= 3
    by_block, bulk = _outcome(real_log, None), _outcome(real_log, blocks)
    assert isinstance(by_block, Profile) and isinstance(bulk, Profile), (by_block, bulk)
    # what the comparison covers: three layers' records, hints in effect and injected, a trace
    assert {k for k, v in bulk.files.items() if len(v)} >= {"posix", "mpiio"}
    assert bulk.hints and bulk.injected_hints and bulk.trace is not None
    assert bulk.injected_hints[next(iter(bulk.injected_hints))]["cb_buffer_size"] == "8388608"
    _same_profile(by_block, bulk)


def test_the_reader_reads_large_logs_in_bulk(real_log: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log of fewer RANK blocks than MIN_BLOCKS block by block; of as many, in bulk."""
    taken: list[bool] = []
    parse = pario_reader._parse_blocks

    def spy(data: bytes, where: str, bulk: rank_blocks.Blocks | None) -> Profile:
        taken.append(bulk is not None)
        return parse(data, where, bulk)

    monkeypatch.setattr(pario_reader, "_parse_blocks", spy)
    pario_reader._parse(real_log, "log")
    monkeypatch.setattr(rank_blocks, "MIN_BLOCKS", 3)
    pario_reader._parse(real_log, "log")
    assert taken == [False, True]


def _rank_block_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, length) of each RANK block's compressed bytes."""
    blocks = rank_blocks.plan(data)
    assert blocks is not None
    return [(int(o), int(c)) for o, c, k in zip(blocks.offsets, blocks.clens, blocks.kinds, strict=True)
            if k == fmt.BLOCK_RANK]


def _recompressed(data: bytes, start: int, length: int, payload: bytes) -> bytes:
    """``data`` with the block whose compressed bytes are at ``start`` holding ``payload``, its
    header's sizes and checksum made to match."""
    header = start - fmt.BLOCK_HEADER.size
    kind, rank, _, _, _, res = fmt.BLOCK_HEADER.unpack_from(data, header)
    comp = zlib.compress(payload, 1)
    head = fmt.BLOCK_HEADER.pack(kind, rank, len(payload), len(comp), zlib.crc32(comp) & 0xFFFFFFFF, res)
    return data[:header] + head + comp + data[start + length:]


def test_damaged_rank_blocks_are_named_as_block_by_block(real_log: bytes, bulk_from_one_block: None) -> None:
    spans = _rank_block_spans(real_log)
    start, length = spans[1]
    payload = zlib.decompress(real_log[start:start + length])
    cases = {
        "checksum": real_log[:start + 5] + bytes([real_log[start + 5] ^ 0xFF]) + real_log[start + 6:],
        # sound blocks whose contents end early: in the records, in the names, in the hints
        "records": _recompressed(real_log, start, length, payload[:len(payload) // 2]),
        "names": _recompressed(real_log, start, length, payload[:-5]),
        "hints": _recompressed(real_log, start, length, payload[:-1]),
        "size": real_log[:start - 24] + (len(payload) + 1).to_bytes(8, "little") + real_log[start - 16:],
    }
    for name, data in cases.items():
        with pytest.raises(LogFormatError) as by_block:
            pario_reader._parse_blocks(data, "log", None)
        with pytest.raises(LogFormatError) as read:
            pario_reader._parse(data, "log")
        assert str(read.value) == str(by_block.value), name
        blocks = rank_blocks.plan(data)
        if blocks is not None:  # the bulk reader refused it, and said so
            with pytest.raises((rank_blocks.NotClean, LogFormatError)):
                pario_reader._parse_blocks(data, "log", blocks)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.data_too_large])
@given(data=st.data())
def test_any_edit_reads_or_fails_as_block_by_block(real_log: bytes, bulk_from_one_block: None,
                                                  data: st.DataObject) -> None:
    """A byte changed, a block's contents cut or lengthened: the reader's result (a profile or an
    error's message) is the block-by-block reader's."""
    spans = _rank_block_spans(real_log)
    start, length = data.draw(st.sampled_from(spans))
    if data.draw(st.booleans()):
        at = data.draw(st.integers(start - fmt.BLOCK_HEADER.size, start + length - 1))
        edited = real_log[:at] + bytes([real_log[at] ^ data.draw(st.integers(1, 255))]) + real_log[at + 1:]
    else:
        payload = bytearray(zlib.decompress(real_log[start:start + length]))
        cut = data.draw(st.integers(0, len(payload)))
        extra = data.draw(st.binary(max_size=24))
        at = data.draw(st.integers(0, max(len(payload) - 4, 0)))
        if data.draw(st.booleans()) and len(payload) >= 4:  # a count or a length made larger
            payload[at:at + 4] = (int.from_bytes(payload[at:at + 4], "little") + data.draw(
                st.integers(1, 1 << 20))).to_bytes(8, "little")[:4]
            cut = len(payload)
        edited = _recompressed(real_log, start, length, bytes(payload[:cut]) + extra)
    by_block = _outcome(edited, None)
    read = pario_reader._parse(edited, "log") if isinstance(by_block, Profile) else None
    if isinstance(by_block, Profile):
        assert isinstance(read, Profile)
        _same_profile(by_block, read)
    else:
        with pytest.raises(pario_reader._DAMAGED) as exc:
            pario_reader._parse(edited, "log")
        assert f"{type(exc.value).__name__}: {exc.value}" == by_block


def test_decode_matches_the_python_decoding() -> None:
    """The C decoding of split columns (format 4) against _format's, blocks of 0, 1 and 5
    records, every byte of every word random."""
    rng = np.random.default_rng(7)
    nwords = 6
    dtype = fmt.record_dtype(nwords - 2 - 1, 1)
    recs = [np.frombuffer(rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).tobytes(), dtype=dtype)
            for n in (5, 0, 1, 5)]
    chunks = [fmt.columns_of_records(r) for r in recs]
    want = fmt.words_from_column_blocks([(len(r), c) for r, c in zip(recs, chunks, strict=True)], nwords)
    buffer = np.frombuffer(b"".join(chunks), dtype=np.uint8).copy()
    counts = np.array([[len(r)] for r in recs], dtype=np.int64)
    where = np.concatenate([[0], np.cumsum([len(c) for c in chunks])[:-1]]).astype(np.int64)[:, None]
    empty = np.zeros(len(recs), dtype=np.int64)
    parts = rank_blocks.RankParts(buffer, empty, empty, empty, counts, np.ascontiguousarray(where),
                                  *([empty] * 8))
    # into columns 2.. of a wider array, as the reader decodes after a layer's shared records
    out = np.zeros((nwords, 2 + want.shape[1]), dtype="<u8")
    parts.decode(0, nwords, out[:, 2:])
    assert np.array_equal(out[:, 2:], want) and not out[:, :2].any()
    with pytest.raises(ValueError, match="shape"):
        parts.decode(0, nwords, out[:, 1:])


def test_threads_follow_the_cores_and_omp_num_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rank_blocks.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert rank_blocks.threads() == 4
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a survey's Dask worker
    assert rank_blocks.threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "not a number")
    assert rank_blocks.threads() == 4
    monkeypatch.setattr(rank_blocks.os, "sched_getaffinity", lambda pid: set(range(64)))
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert rank_blocks.threads() == 8


def test_one_thread_reads_the_same(real_log: bytes, bulk_from_one_block: None,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = rank_blocks.plan(real_log)
    assert blocks is not None
    many = _outcome(real_log, blocks)
    monkeypatch.setattr(rank_blocks, "threads", lambda: 1)
    one = _outcome(real_log, blocks)
    assert isinstance(many, Profile) and isinstance(one, Profile)
    _same_profile(many, one)
