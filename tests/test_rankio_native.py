"""src/model/rank_io.c (libpario_model.so) computes what rank_io's NumPy code computes, bit for bit:
random layers of records of one rank and shared ones (members listed or not, fastest and slowest
ranks consistent or not), counters of every numeric type, missing and not-recorded values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pario.log import read_log
from pario.model import rankio
from pario.model.rankio import RankIO, rank_io, rank_io_numpy
from pario.table import Table

DARSHAN_LOGS = Path(__file__).parent / "data" / "darshan-logs"


def same(a: RankIO, b: RankIO) -> bool:
    """Equal flags and counts, and per-rank values equal bit for bit."""
    return (a.exact_ranks == b.exact_ranks and a.exact_max == b.exact_max and a.contributors == b.contributors
            and list(a.table.columns) == list(b.table.columns)
            and all(np.array_equal(np.asarray(a.table[q], dtype=np.float64).view(np.uint64),
                                   np.asarray(b.table[q], dtype=np.float64).view(np.uint64))
                    for q in a.table.columns))


def test_the_library_is_installed() -> None:
    assert rankio._native() is not None  # else every test below compares NumPy with itself


def _times(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.random(n) * 10.0 ** rng.integers(-3, 3, n)
    v[rng.random(n) < 0.3] = 0.0
    for odd in (np.nan, -1.0, np.inf):
        if rng.random() < 0.2:
            v[rng.random(n) < 0.2] = odd
    return v.astype(np.float32) if rng.random() < 0.1 else v


def layer(seed: int, nprocs: int, n: int) -> tuple[Table, dict[int, np.ndarray] | None]:
    """Random records of one layer, and its members (None: not listed)."""
    rng = np.random.default_rng(seed)
    rank = np.where(rng.random(n) < rng.random(), -1, rng.integers(-2, nprocs + 2, n))
    cols: dict[str, np.ndarray] = {"id": rng.integers(1, 30, n).astype(np.uint64), "rank": rank}
    floats = rng.random() < 0.4
    for c in ("read_time", "write_time", "meta_time"):
        if rng.random() < 0.95:
            cols[c] = _times(rng, n)
    for c in ("bytes_read", "bytes_written"):
        if rng.random() < 0.95:
            v = rng.integers(-1, 1 << 30, n)
            v[rng.random(n) < 0.3] = 0
            kind = np.float64 if floats else rng.choice([np.int64, np.int32, np.uint64])
            cols[c] = v.astype(kind)
    if rng.random() < 0.85:  # fastest and slowest ranks, often consistent with the totals
        each = max(nprocs, 1)
        total = sum(np.nan_to_num(np.clip(np.asarray(cols.get(c, np.zeros(n)), dtype=np.float64), 0, 1e300))
                    for c in ("read_time", "write_time", "meta_time"))
        scale = rng.choice([0.3, 0.9, 1.0, 1.5])
        cols["fastest_rank"] = rng.integers(-1, nprocs + 1, n)
        cols["slowest_rank"] = rng.integers(-1, nprocs + 1, n)
        if rng.random() < 0.2:
            cols["fastest_rank"] = cols["fastest_rank"].astype(np.float64)
        cols["fastest_rank_time"] = total / each * scale * rng.random(n)
        cols["slowest_rank_time"] = total / each * scale * (1 + rng.random(n))
        nbytes = np.abs(np.asarray(cols.get("bytes_read", np.zeros(n)), dtype=np.float64)).astype(np.int64)
        cols["fastest_rank_bytes"] = nbytes // each // 2
        cols["slowest_rank_bytes"] = nbytes // each * 3 // 2
    members = None
    if rng.random() < 0.4 and nprocs:
        members = {i: rng.choice(nprocs + 1, size=int(rng.integers(0, nprocs + 2)),
                                 replace=bool(rng.random() < 0.3)) - int(rng.random() < 0.2)
                   for i in range(1, 30) if rng.random() < 0.6}
    return Table(cols), members


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 40), st.integers(1, 300))
def test_c_equals_numpy_on_random_layers(seed: int, nprocs: int, n: int) -> None:
    records, members = layer(seed, nprocs, n)
    with np.errstate(all="ignore"):
        assert same(rank_io(records, nprocs, members), rank_io_numpy(records, nprocs, members))


def test_c_equals_numpy_with_consistent_extremes() -> None:
    """Shared records whose fastest and slowest ranks place exactly (the branch most random records
    miss): some ranks placed, the rest spread; with and without members."""
    rng = np.random.default_rng(7)
    placed = 0
    for _ in range(300):
        nprocs, n = int(rng.integers(3, 12)), int(rng.integers(1, 150))
        total = rng.random(n) * 100
        bytes_read = rng.integers(0, 1000, n)
        cols = {"id": rng.integers(1, 8, n).astype(np.uint64),
                "rank": np.where(rng.random(n) < 0.7, -1, rng.integers(0, nprocs, n)),
                "read_time": total * 0.5, "write_time": total * 0.3, "meta_time": total * 0.2,
                "bytes_read": bytes_read, "bytes_written": rng.integers(0, 1000, n),
                "fastest_rank": rng.integers(0, nprocs, n), "slowest_rank": rng.integers(0, nprocs, n),
                "fastest_rank_time": total / nprocs * 0.5, "slowest_rank_time": total / nprocs * 1.5,
                "fastest_rank_bytes": bytes_read // nprocs // 2,
                "slowest_rank_bytes": bytes_read // nprocs * 3 // 2}
        members = ({i: rng.choice(nprocs, size=int(rng.integers(2, nprocs)), replace=False)
                    for i in range(1, 8)} if rng.random() < 0.5 else None)
        numpy_result = rank_io_numpy(Table(cols), nprocs, members)
        assert same(rank_io(Table(cols), nprocs, members), numpy_result)
        placed += not all(numpy_result.exact_ranks.values())
    assert placed > 100


def test_objects_are_read_by_numpy() -> None:
    """A column of objects (None where missing) goes to the NumPy code, with the same result as its
    numbers would give."""
    objects = Table({"id": np.array([1, 2], dtype=np.uint64), "rank": np.array([0, -1]),
                     "read_time": np.array([2.0, None], dtype=object), "bytes_read": np.array([10, 30])})
    numbers = Table({"id": np.array([1, 2], dtype=np.uint64), "rank": np.array([0, -1]),
                     "read_time": np.array([2.0, 0.0]), "bytes_read": np.array([10, 30])})
    a, b = rank_io(objects, 3), rank_io(numbers, 3)
    assert same(a, b)
    assert np.asarray(a.table["read_time"]).tolist() == [2.0, 0.0, 0.0]
    assert np.asarray(a.table["bytes_read"]).tolist() == [20.0, 10.0, 10.0]  # 30 spread over 3 ranks


@pytest.mark.parametrize("log", sorted(p.name for p in DARSHAN_LOGS.glob("*.darshan")))
def test_c_equals_numpy_on_real_logs(log: str) -> None:
    profile = read_log(DARSHAN_LOGS / log, trace=False)
    for name, records in profile.files.items():
        if len(records):
            nprocs = profile.job.nprocs
            assert same(rank_io(records, nprocs), rank_io_numpy(records, nprocs)), name
