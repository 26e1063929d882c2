"""Fuzzing the log readers: a mutated log is either read or refused with LogFormatError.

Never a crash of the test process (PyDarshan's C library runs in a guarded
child), never a hang (the child has a time limit), never another exception.
Each seed is one ``SEEDS`` entry; a new log format is one more entry.
"""

from __future__ import annotations

import os
import struct
import subprocess
import tempfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from darshan_logs import LOGS
from pario.diagnosis import analyze
from pario.errors import ParioError
from pario.log import darshan_reader, read_log

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("PARIO_FUZZ_EXAMPLES", "60"))


def darshan_seed(name: str) -> Callable[[pytest.FixtureRequest], bytes]:
    def load(request: pytest.FixtureRequest) -> bytes:
        path = LOGS / name
        return path.read_bytes()

    return load


def built_daos_seed(request: pytest.FixtureRequest) -> bytes:
    from darshan_builder import ior_daos_log

    return ior_daos_log().to_bytes()


def pario_seed(request: pytest.FixtureRequest) -> bytes:
    return request.getfixturevalue("pario_demo_log").read_bytes()


#: name -> how to get the bytes of an intact log of that kind
SEEDS: dict[str, Callable[[pytest.FixtureRequest], bytes]] = {
    "darshan-3.20": darshan_seed("mpi-io-test-x86_64-3.2.0.darshan"),
    "darshan-3.41": darshan_seed("mpi-io-test-x86_64-3.5.0.darshan"),
    "darshan-3.21-65536-ranks": darshan_seed("skew-app.darshan"),
    "darshan-3.41-hdf5": darshan_seed(
        "shane_ior-HDF5_id438090-438090_11-9-41522-17417065676046418211_1.darshan"),
    "darshan-empty": darshan_seed("empty_log.darshan"),
    "darshan-3.21-apmpi": darshan_seed("mpi-io-test-apmpi-apxc.darshan"),  # APMPI (MPI time) and APXC
    "darshan-3.41-daos-built": built_daos_seed,  # empty and repeated names, DFS and DAOS modules
    "pario-demo": pario_seed,
}


@pytest.fixture(scope="session")
def pario_demo_log(tmp_path_factory: pytest.TempPathFactory, pario_cmd: list[str],
                   mpi_env: dict[str, str]) -> Path:
    """A real pario log: pario-demo-io on 2 ranks under `pario run`."""
    out = tmp_path_factory.mktemp("fuzz-seed")
    log = out / "demo.pario"
    demo = subprocess.run([*pario_cmd, "path", "pario-demo-io"], capture_output=True, text=True,
                          timeout=60, env=mpi_env)
    assert demo.returncode == 0, demo.stderr
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", "2",
                           demo.stdout.strip(), str(out)], capture_output=True, text=True, timeout=180,
                          env=mpi_env)
    assert proc.returncode == 0 and log.exists(), proc.stderr[-300:]
    return log


def _edit(draw: st.DrawFn, data: bytearray, *, start: int = 0, words_until: int = 1400) -> None:
    """One random edit of ``data`` at or after ``start``."""
    kind = draw(st.sampled_from(["bytes", "word", "truncate", "insert", "delete"]))
    size = len(data)
    if size <= start:
        data.extend(draw(st.binary(min_size=1, max_size=16)))
        return
    if kind == "bytes":
        pos = draw(st.integers(start, size - 1))
        chunk = draw(st.binary(min_size=1, max_size=8))
        data[pos:pos + len(chunk)] = chunk
    elif kind == "word":
        # offsets, lengths, counts, ranks, versions: 8-byte words at 4-byte alignment
        hi = max(start // 4, min(size, words_until) // 4 - 2)
        pos = 4 * draw(st.integers(start // 4, hi))
        value = draw(st.sampled_from([0, 1, -1, 2**31 - 1, -(2**31), 2**63 - 1, size, size + 1, size // 2]))
        data[pos:pos + 8] = struct.pack("<q", value)
    elif kind == "truncate":
        del data[draw(st.integers(start, size - 1)):]
    elif kind == "insert":
        pos = draw(st.integers(start, size))
        data[pos:pos] = draw(st.binary(min_size=1, max_size=64))
    else:
        pos = draw(st.integers(start, size - 1))
        del data[pos:pos + draw(st.integers(1, 64))]


# --- structure-aware edits: change the inflated content, then re-compress and fix the framing, so
# --- that the edit gets past the checksums and reaches the record parsers.

def _darshan_regions(data: bytes) -> tuple[int, int, int, list[tuple[int, int, int]]] | None:
    """(map offset, module slots, header size, [(slot, offset, length)]); slot -1 = names, -2 = job."""
    wide = data[:4] == b"3.41"
    map_at, nmods = (32, 64) if wide else (24, 16)
    header = map_at + 16 + nmods * 20
    if len(data) < header:
        return None
    name = struct.unpack_from("<QQ", data, map_at)
    mods = [struct.unpack_from("<QQ", data, map_at + 16 + 16 * i) for i in range(nmods)]
    regions = [(i, off, ln) for i, (off, ln) in enumerate(mods) if ln]
    if name[1]:
        regions.append((-1, *name))
    regions.sort(key=lambda r: r[1])
    job_end = regions[0][1] if regions else len(data)
    return map_at, nmods, header, [(-2, header, job_end - header), *regions]


def _inflate(blob: bytes) -> bytes:
    out, rest = b"", blob
    while rest:
        d = zlib.decompressobj()
        out += d.decompress(rest)
        rest = d.unused_data
    return out


def darshan_inner_edit(draw: st.DrawFn, seed: bytes) -> bytes:
    layout = _darshan_regions(seed)
    if layout is None or seed[16] != 0:  # zlib only
        return seed
    map_at, _, header, regions = layout
    pick = draw(st.integers(0, len(regions) - 1))
    blobs = []
    for i, (_, off, ln) in enumerate(regions):
        blob = seed[off:off + ln]
        if i == pick:
            inner = bytearray(_inflate(blob))
            for _ in range(draw(st.integers(1, 3))):
                _edit(draw, inner, words_until=len(inner))
            blob = zlib.compress(bytes(inner))
        blobs.append(blob)
    out = bytearray(seed[:header])
    for (slot, _, _), blob in zip(regions, blobs, strict=True):
        if slot >= 0:
            struct.pack_into("<QQ", out, map_at + 16 + 16 * slot, len(out), len(blob))
        elif slot == -1:
            struct.pack_into("<QQ", out, map_at, len(out), len(blob))
        out += blob
    if not any(slot == -1 for slot, _, _ in regions) and struct.unpack_from("<Q", seed, map_at)[0]:
        struct.pack_into("<Q", out, map_at, header + len(blobs[0]))  # empty name map points past the job
    return bytes(out)


def pario_inner_edit(draw: st.DrawFn, seed: bytes) -> bytes:
    from pario.log import _format as fmt

    blocks, pos = [], fmt.FILE_HEADER.size
    while pos + fmt.BLOCK_HEADER.size <= len(seed):
        kind, rank, ulen, clen, crc, res = fmt.BLOCK_HEADER.unpack_from(seed, pos)
        pos += fmt.BLOCK_HEADER.size
        blocks.append([kind, rank, zlib.decompress(seed[pos:pos + clen]), res])
        pos += clen
    if not blocks:
        return seed
    block = blocks[draw(st.integers(0, len(blocks) - 1))]
    inner = bytearray(block[2])
    for _ in range(draw(st.integers(1, 3))):
        _edit(draw, inner, words_until=len(inner))
    block[2] = bytes(inner)
    out = bytearray(seed[:fmt.FILE_HEADER.size])
    for kind, rank, payload, res in blocks:
        comp = zlib.compress(payload)
        out += fmt.BLOCK_HEADER.pack(kind, rank, len(payload), len(comp), zlib.crc32(comp) & 0xFFFFFFFF, res)
        out += comp
    return bytes(out)


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """Edits of the raw bytes (mostly past the magic), or of the inflated content of one region."""
    if draw(st.booleans()):
        inner = pario_inner_edit if seed.startswith(b"PARIOLOG") else darshan_inner_edit
        return inner(draw, seed)
    data = bytearray(seed)
    keep_magic = draw(st.integers(0, 9)) > 0
    for _ in range(draw(st.integers(1, 4))):
        _edit(draw, data, start=8 if keep_magic else 0)
    return bytes(data)


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="pario-fuzz-") as d:
        yield Path(d)


@pytest.fixture(scope="module")
def short_timeout() -> Iterator[None]:
    """A hang must end as an error within seconds, not after the default two minutes."""
    old = darshan_reader.DEFAULT_TIMEOUT
    darshan_reader.DEFAULT_TIMEOUT = 20.0
    yield
    darshan_reader.DEFAULT_TIMEOUT = old


@pytest.mark.parametrize("seed_name", list(SEEDS))
def test_mutated_logs_are_read_or_refused(seed_name: str, request: pytest.FixtureRequest, scratch: Path,
                                          short_timeout: None) -> None:
    seed = SEEDS[seed_name](request)
    assert read_log(_write(scratch / f"{seed_name}-intact", seed)) is not None

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=mutated(seed))
    def check(data: bytes) -> None:
        path = _write(scratch / f"{seed_name}.log", data)
        try:
            profile = read_log(path)
        except ParioError as exc:
            message = str(exc)
            assert message and "\n" not in message
            return
        analyze(profile)  # what was read must also be reportable

    check()


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
