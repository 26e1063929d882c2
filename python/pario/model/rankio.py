"""Per-rank I/O time and bytes from file records, including shared records.

A record of one rank (``rank >= 0``) belongs to that rank exactly.  A record
reduced over several ranks (``rank == -1``; Darshan reduces files opened by
every rank, pario files touched by more than one) only keeps totals plus the
fastest and slowest rank with their time and bytes.  Such a record is spread
over its ranks this way (documented in docs/metrics.md):

* the slowest rank gets ``slowest_rank_time`` and ``slowest_rank_bytes``;
* the fastest rank gets ``fastest_rank_time`` and ``fastest_rank_bytes``;
* every other member rank gets an equal share of what remains;
* read / write / metadata parts follow the record's own proportions.

Totals and means over ranks stay exact; per-rank values, and maxima over
ranks, are estimates unless the data pins them down.  :class:`RankIO` says
which quantities are exact.

The members of a shared record are ``members[id]`` when known (pario keeps a
bitmap of the ranks) and otherwise all ranks (Darshan's reduction only
happens for files every rank opened).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pario.cdecl import declared
from pario.model.layers import (
    FILE_LAYER_OF_DATA,
    LAYERS,
    LIBRARY_DATA_LAYERS,
    LIBRARY_FILE_LAYERS,
    NESTED_IN,
    empty_layer,
)
from pario.paths import PACKAGE_DIR
from pario.table import Table, as_table, constant_column, isin

#: File records: a Table (a DataFrame built by hand works too, read by column).
Records = Any

TIME_COLS: tuple[str, ...] = ("read_time", "write_time", "meta_time")
BYTE_COLS: tuple[str, ...] = ("bytes_read", "bytes_written")
QUANTITIES: tuple[str, ...] = (*TIME_COLS, "time", *BYTE_COLS, "bytes")

_GROUPS: dict[str, tuple[tuple[str, ...], str]] = {
    **{c: (TIME_COLS, "time") for c in (*TIME_COLS, "time")},
    **{c: (BYTE_COLS, "bytes") for c in (*BYTE_COLS, "bytes")},
}

SHARED_NOTE = ("per-rank split of shared-file records estimated from the fastest and slowest rank "
               "(the rest spread evenly)")


@dataclass(frozen=True)
class RankIO:
    """Per-rank I/O of a set of file records.

    ``table`` has one row per rank 0..P-1 (row i: rank i) and the columns of ``QUANTITIES``.
    ``exact_ranks[q]``: every per-rank value of ``q`` is exact.
    ``exact_max[q]``: the maximum over ranks of ``q`` is exact (true for one
    shared file alone: its slowest rank is the maximum).
    """

    table: Table
    exact_ranks: dict[str, bool]
    exact_max: dict[str, bool]
    contributors: dict[str, int]


def counter_column(records: Records, name: str) -> np.ndarray:
    """A counter of ``records`` as floats, 0 where the column is missing or a value is missing,
    not finite or negative (Darshan's -1 for 'not recorded')."""
    if name not in records:
        return np.zeros(len(records))
    values = np.asarray(records[name])
    kind = values.dtype.kind
    if kind in "iu":  # the usual counter: integers, finite, none missing
        return np.maximum(values, 0).astype(np.float64)
    if kind == "f":  # a time: NaN and infinities fail both tests
        v = values.astype(np.float64, copy=False)
        return np.where((v > 0.0) & (v < np.inf), v, 0.0)
    v = float_values(values, 0.0)
    return np.where(np.isfinite(v) & (v > 0.0), v, 0.0)


def float_values(column: Any, na_value: float) -> np.ndarray:
    """A column (an ndarray, or anything ``np.asarray`` takes) as a new float64 array, its
    missing values (NaN, None) replaced by ``na_value``."""
    v = np.asarray(column)
    if v.dtype.kind in "iub":
        return v.astype(np.float64)
    if v.dtype.kind == "f":
        v = v.astype(np.float64)
        nan = np.isnan(v)
        if nan.any():
            v[nan] = na_value
        return v
    # objects: None (or NaN) where a value is missing
    missing = np.asarray([x is None for x in v], dtype=bool) | np.not_equal(v, v)
    return np.where(missing, na_value, v).astype(np.float64)


def _int_column(records: Records, name: str) -> np.ndarray:
    if name not in records:
        return np.full(len(records), -1, dtype=np.int64)
    return float_values(records[name], -1.0).astype(np.int64)


def rank_io(records: Records, nprocs: int, members: Mapping[int, np.ndarray] | None = None) -> RankIO:
    """Per-rank read/write/metadata time and bytes of ``records`` (one layer), computed by
    src/model/rank_io.c where it is installed and the columns are numbers, else by NumPy (the
    same values, bit for bit)."""
    nprocs = max(int(nprocs), 0)
    if not len(records):  # zeros that take no memory per rank: a layer without records
        zero = constant_column(nprocs, 0.0)
        ones = {q: True for q in QUANTITIES}
        return RankIO(Table({q: zero for q in QUANTITIES}, length=nprocs), ones, dict(ones),
                      {q: 0 for q in QUANTITIES})
    native = _native()
    if native is not None:
        found = _rank_io_in_c(*native, records, nprocs, members)
        if found is not None:
            return found
    return rank_io_numpy(records, nprocs, members)


def rank_io_numpy(records: Records, nprocs: int, members: Mapping[int, np.ndarray] | None = None) -> RankIO:
    """:func:`rank_io` of records with at least one row, in NumPy."""
    nprocs = max(int(nprocs), 0)
    vals = {c: counter_column(records, c) for c in (*TIME_COLS, *BYTE_COLS)}
    rank = _int_column(records, "rank")
    out = {c: np.zeros(nprocs) for c in (*TIME_COLS, *BYTE_COLS)}
    own = (rank >= 0) & (rank < nprocs)
    if own.any():
        own_rank = rank if own.all() else rank[own]
        for c in out:
            out[c] += np.bincount(own_rank, weights=vals[c] if own.all() else vals[c][own],
                                  minlength=nprocs)[:nprocs]

    totals = {"time": _added([vals[c] for c in TIME_COLS]), "bytes": _added([vals[c] for c in BYTE_COLS])}
    allvals = {**vals, **totals} if len(records) else {q: np.zeros(0) for q in QUANTITIES}
    contributors = {q: int(np.count_nonzero(allvals[q] > 0.0)) for q in QUANTITIES}
    exact_ranks = {q: True for q in QUANTITIES}
    alone_max_ok = {q: True for q in QUANTITIES}

    shared = rank < 0
    if shared.any() and nprocs > 0:
        shared_vals = {c: v[shared] for c, v in vals.items()}
        placed = _spread_shared(records, shared, shared_vals, nprocs, members, out)
        for q in QUANTITIES:
            contributing = allvals[q][shared] > 0.0
            exact_ranks[q] = bool(np.all(placed.exact[q][contributing]))
            alone_max_ok[q] = bool(np.all(placed.max_ok[q][contributing]))

    exact_max = {q: exact_ranks[q] or (contributors[q] == 1 and alone_max_ok[q]) for q in QUANTITIES}
    return RankIO(_table(out, nprocs), exact_ranks, exact_max, contributors)


def _table(columns: Mapping[str, np.ndarray], nprocs: int) -> Table:
    """The per-rank table of ``QUANTITIES`` from read/write/meta times and bytes (``time`` and
    ``bytes`` added in column order, as a row sum adds them)."""
    out = Table(length=nprocs)
    for q in QUANTITIES:
        if q in _GROUP_OF_TOTAL:
            parts = _GROUP_OF_TOTAL[q]
            total = columns[parts[0]] + columns[parts[1]]
            for c in parts[2:]:
                total = total + columns[c]
            out[q] = total
        else:
            out[q] = np.asarray(columns[q], dtype=np.float64)
    return out


_GROUP_OF_TOTAL: dict[str, tuple[str, ...]] = {"time": TIME_COLS, "bytes": BYTE_COLS}


@dataclass(frozen=True)
class _Placement:
    exact: dict[str, np.ndarray]  # per shared record: its per-rank values are exact
    max_ok: dict[str, np.ndarray]  # per shared record: alone, its maximum would be exact


def _spread_shared(records: Records, shared: np.ndarray, vals: dict[str, np.ndarray], nprocs: int,
                   members: Mapping[int, np.ndarray] | None, out: dict[str, np.ndarray]) -> _Placement:
    """Spread the shared records (``records[shared]``; ``vals``: their counters) over their ranks."""
    n_rec = int(np.count_nonzero(shared))
    member_lists = _member_lists(records, shared, nprocs, members)
    n = np.array([nprocs if m is None else len(m) for m in member_lists], dtype=np.int64)
    known = np.array([m is not None for m in member_lists], dtype=bool)

    exact: dict[str, np.ndarray] = {}
    max_ok: dict[str, np.ndarray] = {}
    for group, total_name, prefix in ((TIME_COLS, "time", "time"), (BYTE_COLS, "bytes", "bytes")):
        total = _added([vals[c] for c in group])
        fast, slow, v_fast, v_slow = _extremes(records, shared, prefix)
        valid = _valid_extremes(fast, slow, v_fast, v_slow, total, n, nprocs, member_lists, known)
        single = n == 1
        rest = np.zeros(n_rec)
        others = np.maximum(n - 2, 1)
        rest[valid] = np.maximum(total[valid] - v_fast[valid] - v_slow[valid], 0.0) / others[valid]
        spread = ~valid
        rest[spread] = total[spread] / np.maximum(n[spread], 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            for c in group:
                frac = np.where(total > 0.0, vals[c] / np.where(total > 0.0, total, 1.0), 0.0)
                _add_rest(out[c], rest * frac, known, member_lists, nprocs)
                adj = valid & ~single
                if adj.any():
                    np.add.at(out[c], fast[adj], (v_fast[adj] - rest[adj]) * frac[adj])
                    np.add.at(out[c], slow[adj], (v_slow[adj] - rest[adj]) * frac[adj])
        nonzero_kinds = sum((vals[c] > 0.0).astype(int) for c in group)
        for q in (*group, total_name):
            whole = np.full(n_rec, q == total_name) | (nonzero_kinds <= 1)
            exact[q] = single | (valid & (n == 2) & whole)
            max_ok[q] = single | (valid & whole)
    return _Placement(exact, max_ok)


def _extremes(records: Records, shared: np.ndarray,
              prefix: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    has = ("fastest_rank" in records) and ("slowest_rank" in records)
    if has:
        fast = _int_column(records, "fastest_rank")[shared]
        slow = _int_column(records, "slowest_rank")[shared]
    else:
        fast = np.full(int(np.count_nonzero(shared)), -1, dtype=np.int64)
        slow = fast.copy()
    v_fast = counter_column(records, f"fastest_rank_{prefix}")[shared]
    v_slow = counter_column(records, f"slowest_rank_{prefix}")[shared]
    return fast, slow, v_fast, v_slow


def _valid_extremes(fast: np.ndarray, slow: np.ndarray, v_fast: np.ndarray, v_slow: np.ndarray,
                    total: np.ndarray, n: np.ndarray, nprocs: int,
                    member_lists: Sequence[np.ndarray | None], known: np.ndarray) -> np.ndarray:
    """Records whose fastest/slowest data are consistent enough to place exactly (``known``: the
    records whose ``member_lists`` entry lists their ranks)."""
    tol = 1e-9 * np.maximum(total, 1.0)
    ok = (n >= 2) & (fast >= 0) & (fast < nprocs) & (slow >= 0) & (slow < nprocs) & (fast != slow)
    ok &= v_fast <= v_slow + tol
    ok &= v_fast + v_slow <= total + tol
    ok &= (n != 2) | (np.abs(v_fast + v_slow - total) <= tol)
    # the others' equal share must lie between the fastest and the slowest rank
    rest = (total - v_fast - v_slow) / np.maximum(n - 2, 1)
    ok &= (n <= 2) | ((rest >= v_fast - tol) & (rest <= v_slow + tol))
    # a record with its members listed: its fastest and slowest rank must be among them
    for i in np.flatnonzero(ok & known):
        m = member_lists[int(i)]
        if m is None or not (np.isin(fast[i], m) and np.isin(slow[i], m)):
            ok[i] = False
    return ok


def _added(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The arrays added in order (as ``sum`` adds them, typed as an array)."""
    return functools.reduce(np.add, arrays)


def _add_rest(target: np.ndarray, amount: np.ndarray, known: np.ndarray,
              member_lists: Sequence[np.ndarray | None], nprocs: int) -> None:
    """Add ``amount[r]`` to every member rank of each shared record r."""
    everyone = ~known
    if everyone.any():
        target += amount[everyone].sum()
    idx = np.flatnonzero(known & (amount != 0.0))
    if len(idx):
        lists = [member_lists[int(i)] for i in idx]
        ranks = np.concatenate([m for m in lists if m is not None]) if lists else np.zeros(0, np.int64)
        weights = np.repeat(amount[idx], [len(m) if m is not None else 0 for m in lists])
        if len(ranks):
            target += np.bincount(ranks, weights=weights, minlength=nprocs)[:nprocs]


def _member_lists(records: Records, shared: np.ndarray, nprocs: int,
                  members: Mapping[int, np.ndarray] | None) -> list[np.ndarray | None]:
    """Per shared record (``records[shared]``), its member ranks within 0..nprocs-1, or None
    where ``members`` does not list them (every rank)."""
    n_rec = int(np.count_nonzero(shared))
    member_lists: list[np.ndarray | None] = [None] * n_rec  # None: every rank
    if members:  # Darshan logs have none: each shared record is every rank's
        ids = (np.asarray(records["id"]).astype(np.uint64)[shared] if "id" in records
               else np.zeros(n_rec, dtype=np.uint64))
        for i, rid in enumerate(ids.tolist()):
            m = members.get(int(rid))
            if m is not None:
                m = np.asarray(m, dtype=np.int64)
                member_lists[i] = m[(m >= 0) & (m < nprocs)]
    return member_lists


#: The columns src/model/rank_io.c reads, in its order.
_C_COLUMNS: tuple[str, ...] = ("rank", *TIME_COLS, *BYTE_COLS, "fastest_rank", "slowest_rank",
                               "fastest_rank_time", "slowest_rank_time", "fastest_rank_bytes",
                               "slowest_rank_bytes")
#: Its column kinds: int64, float64, uint64.
_C_KINDS = {np.dtype(np.int64): 0, np.dtype(np.float64): 1, np.dtype(np.uint64): 2}
_C_DECLARATION = """
int pario_rank_io(int32_t phase, int64_t n, int64_t nprocs, const void *const *cols,
                  const int32_t *kinds, const uint8_t *known, const int64_t *member_n,
                  const int64_t *member_at, const int64_t *member_ranks, double *out,
                  double *terms, const double *sums, int64_t *state);
"""


@functools.lru_cache(maxsize=1)
def _native() -> tuple[Any, Any] | None:
    """(cffi declarations, libpario_model.so), None when the library is not installed."""
    path = PACKAGE_DIR / "lib" / "libpario_model.so"
    if not path.is_file():
        return None
    ffi = declared(_C_DECLARATION, "_pario_model_ffi")
    return ffi, ffi.dlopen(str(path))


def _rank_io_in_c(ffi: Any, lib: Any, records: Records, nprocs: int,
                  members: Mapping[int, np.ndarray] | None) -> RankIO | None:
    """:func:`rank_io` by src/model/rank_io.c, None for columns it does not read (objects)."""
    n = len(records)
    buffer = ffi.from_buffer
    cols, kinds = ffi.new("void *[]", len(_C_COLUMNS)), ffi.new("int32_t[]", len(_C_COLUMNS))
    held = []  # the columns the pointers point into
    for i, name in enumerate(_C_COLUMNS):
        if name not in records:
            continue  # NULL: missing
        values = np.asarray(records[name])
        kind = _C_KINDS.get(values.dtype)
        if kind is None:
            if values.dtype.kind in "iub":
                values, kind = values.astype(np.int64), 0
            elif values.dtype.kind == "f":
                values, kind = values.astype(np.float64), 1
            else:
                return None  # objects: the NumPy code
        if values.ndim != 1:
            return None
        if not values.flags.c_contiguous:
            values = np.ascontiguousarray(values)
        held.append(values)
        cols[i], kinds[i] = buffer(values), kind
    membership = [ffi.NULL] * 4
    if members:
        lists = _member_lists(records, _int_column(records, "rank") < 0, nprocs, members)
        if any(m is not None for m in lists):
            sizes = np.array([0 if m is None else len(m) for m in lists], dtype=np.int64)
            listed = np.array([m is not None for m in lists], dtype=np.uint8)
            starts = np.zeros(len(lists), dtype=np.int64)
            starts[1:] = np.cumsum(sizes)[:-1]
            ranks = np.concatenate([m for m in lists if m is not None]).astype(np.int64)
            membership = [buffer("uint8_t[]", listed), buffer("int64_t[]", sizes),
                          buffer("int64_t[]", starts), buffer("int64_t[]", ranks)]
    k, q = len(TIME_COLS) + len(BYTE_COLS), len(QUANTITIES)
    out = np.empty((q, nprocs))
    work = np.empty(k * n + k)  # the terms (pages touched only where written), then their sums
    state = np.zeros(2 + 3 * q, dtype=np.int64)
    terms = buffer("double[]", work)
    args = (n, nprocs, cols, kinds, *membership, buffer("double[]", out), terms, terms + k * n,
            buffer("int64_t[]", state))
    if lib.pario_rank_io(0, *args) != 0:
        raise MemoryError("per-rank I/O of a layer's records")
    everyone = int(state[1])
    if everyone:  # NumPy's sum of each counter's shares of the shared records of every rank
        work[k * n:] = [row.sum() for row in work[:k * n].reshape(k, n)[:, :everyone]]
    if lib.pario_rank_io(1, *args) != 0:
        raise MemoryError("per-rank I/O of a layer's records")
    found = state.tolist()
    added = dict(zip(QUANTITIES, found[2:2 + q], strict=True))
    exact = {name: bool(v) for name, v in zip(QUANTITIES, found[2 + q:2 + 2 * q], strict=True)}
    exact_max = {name: exact[name] or (added[name] == 1 and bool(alone))
                 for name, alone in zip(QUANTITIES, found[2 + 2 * q:], strict=True)}
    return RankIO(Table.from_arrays(dict(zip(QUANTITIES, out, strict=True)), nprocs), exact,
                  exact_max, added)


def combine(parts: Sequence[RankIO], nprocs: int) -> RankIO:
    """Sum per-rank I/O of several layers, keeping track of exactness."""
    if not parts:
        empty = Table({q: np.zeros(nprocs) for q in QUANTITIES}, length=nprocs)
        ones = {q: True for q in QUANTITIES}
        return RankIO(empty, ones, dict(ones), {q: 0 for q in QUANTITIES})
    tables = [as_table(p.table) for p in parts]
    table = Table(length=len(tables[0]))
    for q in tables[0].columns:
        total = np.asarray(tables[0][q], dtype=np.float64)
        for t in tables[1:]:
            total = total + np.asarray(t[q], dtype=np.float64)
        table[q] = total
    contributors = {q: sum(p.contributors[q] for p in parts) for q in QUANTITIES}
    exact_ranks = {q: all(p.exact_ranks[q] for p in parts) for q in QUANTITIES}
    exact_max = {}
    for q in QUANTITIES:
        if exact_ranks[q]:
            exact_max[q] = True
        elif contributors[q] == 1:
            exact_max[q] = next(p.exact_max[q] for p in parts if p.contributors[q] == 1)
        else:
            exact_max[q] = False
    return RankIO(table, exact_ranks, exact_max, contributors)


def layer_members(file_ranks: Mapping[tuple[str, int], np.ndarray], layer: str) -> dict[int, np.ndarray]:
    """The ``members`` mapping of one layer, from ``Profile.file_ranks``."""
    return {rid: ranks for (lay, rid), ranks in file_ranks.items() if lay == layer}




def outermost_records(files: Mapping[str, Records]) -> dict[str, Table]:
    """Each storage layer's records with time that no outer layer already counts.

    POSIX calls made inside MPI-IO calls are counted as MPI-IO time, so POSIX
    records of files that have MPI-IO records are dropped.  Likewise a DFS file's
    calls are DAOS array and object calls on its object, whose DAOS record has the
    DFS record's id: DAOS records of objects that have DFS records are dropped.
    STDIO and POSIX are separate (Darshan and pario do not see the POSIX calls libc
    makes for STDIO streams), and so is POSIX through a dfuse mount of a DAOS
    container (a file record of its own, by path).
    """
    out = {layer: as_table(table) for layer, table in files.items() if layer in LAYERS}
    for inner_layer, outer_layer in NESTED_IN.items():
        outer, inner = out.get(outer_layer), out.get(inner_layer)
        if outer is not None and inner is not None and len(outer) and len(inner):
            nested = isin(inner["id"], outer["id"])
            if nested.any():  # a copy of a million records only when some are dropped
                out[inner_layer] = inner[~nested]
    return out


#: A library's records of a file are blind to it when they hold less than this share of the time of
#: the layer beneath on the same file (docs/metrics.md, "I/O libraries").
BLIND_SHARE = 0.5


def library_file_ids(files: Mapping[str, Records]) -> np.ndarray:
    """Ids of the files an I/O library (HDF5, PnetCDF) has records of."""
    ids = [np.asarray(f["id"]).astype(np.uint64) for layer, f in files.items()
           if layer in LIBRARY_FILE_LAYERS and f is not None and len(f)]
    return np.unique(np.concatenate(ids)) if ids else np.zeros(0, dtype=np.uint64)


def data_file_ids(data: Records, files: Records) -> np.ndarray:
    """The id of each dataset's or variable's file (0 when not found): its ``file_rec_id``
    counter (pario logs) or the file record whose name prefixes the dataset's
    (``FILE:/DATASET``, ``FILE:VARIABLE``: Darshan logs)."""
    out = np.zeros(len(data), dtype=np.uint64)
    if not len(data):
        return out
    data, files = as_table(data), as_table(files)
    file_ids = np.asarray(files["id"]).astype(np.uint64) if len(files) else np.zeros(0, dtype=np.uint64)
    known = set(file_ids.tolist())
    if "file_rec_id" in data:
        raw = np.asarray(data["file_rec_id"])
        if raw.dtype.kind in "iu":  # the uint64 id as int64 bits (exact; a float would round it)
            rec = raw.astype(np.int64).view(np.uint64)
            out = np.where(np.isin(rec, np.fromiter(known, dtype=np.uint64, count=len(known))), rec,
                           np.uint64(0)).astype(np.uint64)
    by_name = {str(n): np.uint64(i) for n, i in zip(files["name"], file_ids.tolist(), strict=True)}
    for k, name in enumerate(str(n) for n in data["name"]):
        if out[k]:
            continue
        for pos in (i for i, ch in enumerate(name) if ch == ":"):
            fid = by_name.get(name[:pos])
            if fid is not None:
                out[k] = fid
                break
    return out


def library_file_time(table: Records) -> Table:
    """A library file record's own time (docs/metrics.md, "I/O libraries"): its metadata time
    (H5Fcreate/open/flush/close, groups, attributes, ncmpi_create/open/redef/enddef/sync/close); its reads and
    writes are its datasets' or variables' records.  A Darshan PnetCDF file record keeps the
    time in ncmpi_wait/wait_all apart from its variables' (it has no read or write time of its
    own): that wait is the file's write time if it wrote bytes, else its read time."""
    table = as_table(table)
    n = len(table)
    out = table[["id", "rank", "name", *(["nranks"] if "nranks" in table else [])]]
    wait = counter_column(table, "wait_time") if "read_time" not in table else np.zeros(n)
    wrote = counter_column(table, "bytes_written") > 0.0
    out["read_time"] = np.where(wrote, 0.0, wait)
    out["write_time"] = np.where(wrote, wait, 0.0)
    out["meta_time"] = counter_column(table, "meta_time")
    out["bytes_read"] = np.zeros(n)
    out["bytes_written"] = np.zeros(n)
    return out


def _time_of(records: Records) -> np.ndarray:
    return sum((counter_column(records, c) for c in TIME_COLS), np.zeros(len(records)))


def _add_by_id(totals: dict[int, float], ids: np.ndarray, values: np.ndarray) -> None:
    for rid, v in zip(ids.tolist(), values.tolist(), strict=True):
        totals[int(rid)] = totals.get(int(rid), 0.0) + v


def library_time_by_file(files: Mapping[str, Records]) -> dict[int, float]:
    """Per library file id: the library's time on it over all ranks (the file records' own time
    plus their datasets' or variables' time)."""
    out: dict[int, float] = {}
    for data_layer, file_layer in FILE_LAYER_OF_DATA.items():
        frec = files.get(file_layer)
        if frec is None or not len(frec):
            continue
        own = library_file_time(frec)
        _add_by_id(out, np.asarray(own["id"]).astype(np.uint64), _time_of(own))
        drec = files.get(data_layer)
        if drec is not None and len(drec):
            _add_by_id(out, data_file_ids(drec, frec), _time_of(drec))
    out.pop(0, None)
    return out


def beneath_time_by_file(files: Mapping[str, Records], ids: np.ndarray) -> dict[int, float]:
    """Per file of ``ids``: the time over all ranks of the layer beneath a library on it, MPI-IO's
    where it has MPI-IO records, else POSIX's (0 without either)."""
    out = {int(i): 0.0 for i in ids.tolist()}
    done: set[int] = set()
    for layer in ("mpiio", "posix"):
        table = files.get(layer)
        if table is None or not len(table):
            continue
        rid = np.asarray(table["id"]).astype(np.uint64)
        rows = np.isin(rid, ids) & ~np.isin(rid, np.fromiter(done, dtype=np.uint64, count=len(done)))
        if rows.any():
            below: dict[int, float] = {}
            _add_by_id(below, rid[rows], _time_of(as_table(table)[rows]))
            out.update(below)
            done |= set(below)
    return out


def blind_library_files(files: Mapping[str, Records]) -> np.ndarray:
    """Ids of the library files whose library records are blind to them: under :data:`BLIND_SHARE`
    of the time of the layer beneath on the same file (a record without counters: Darshan writes
    -1 for a counter it did not record, as in E3SM-IO logs' PNETCDF_FILE records).  Their time and
    bytes are counted at that layer instead, so an outer record never hides an inner one."""
    ids = library_file_ids(files)
    if not ids.size:
        return ids
    lib = library_time_by_file(files)
    beneath = beneath_time_by_file(files, ids)
    blind = [i for i in ids.tolist() if beneath.get(int(i), 0.0) > 0.0
             and lib.get(int(i), 0.0) < BLIND_SHARE * beneath[int(i)]]
    return np.array(blind, dtype=np.uint64)


def _without_ids(records: Table, ids: np.ndarray) -> Table:
    inside = np.isin(np.asarray(records["id"]).astype(np.uint64), ids)
    return records[~inside] if inside.any() else records


def time_records(files: Mapping[str, Records], blind: np.ndarray | None = None) -> dict[str, Table]:
    """The records whose times add up to each rank's I/O time, every call counted once at its
    outermost layer: :func:`outermost_records`, less the MPI-IO, POSIX and STDIO records of the
    files an I/O library covers (its files but the :func:`blind_library_files`, given as ``blind``
    when already at hand: time in HDF5 or PnetCDF calls is the library's), plus the libraries'
    records of those files (datasets and variables whole; files' own time only, as
    :func:`library_file_time`).  Without library records: :func:`outermost_records`."""
    out = outermost_records(files)
    ids = library_file_ids(files)
    if not ids.size:
        return out
    if blind is None:
        blind = blind_library_files(files)
    covered = np.setdiff1d(ids, blind)
    for layer, table in list(out.items()):
        if len(table) and covered.size:
            out[layer] = _without_ids(table, covered)
    for layer, table in files.items():
        if table is None or not len(table):
            continue
        if layer in LIBRARY_FILE_LAYERS:
            out[layer] = _without_ids(library_file_time(table), blind)
        elif layer in LIBRARY_DATA_LAYERS:
            data = as_table(table)
            if blind.size:
                fids = data_file_ids(data, files.get(FILE_LAYER_OF_DATA[layer], empty_layer()))
                inside = np.isin(fids, blind)
                data = data[~inside] if inside.any() else data
            out[layer] = data
    return out


class ProfileIO:
    """Per-rank I/O of one profile's layers, each computed at most once.

    One analysis of a profile asks for the same per-rank I/O several times (the time classes,
    the per-layer I/O metrics, the bytes per rank); an instance made for that analysis
    computes each on first use.  The profile must not change while it is in use.
    """

    def __init__(self, files: Mapping[str, Records], nprocs: int,
                 file_ranks: Mapping[tuple[str, int], np.ndarray]) -> None:
        self._files = {layer: as_table(table) for layer, table in files.items() if table is not None}
        self._nprocs = nprocs
        self._file_ranks = file_ranks
        self._layers: dict[str, RankIO] = {}
        self._outermost: tuple[dict[str, RankIO], RankIO] | None = None
        self._time: tuple[dict[str, RankIO], RankIO] | None = None
        self._blind: np.ndarray | None = None
        self._records: dict[tuple[str, ...], dict[str, Table]] = {}
        #: the records ``outermost`` counted, by layer
        self.outer_records: dict[str, Table] = {}

    def layer(self, layer: str) -> RankIO:
        """``rank_io`` of all the records of ``layer``."""
        if layer not in self._layers:
            table = self._files.get(layer)
            table = table if table is not None else empty_layer()
            self._layers[layer] = rank_io(table, self._nprocs, layer_members(self._file_ranks, layer))
        return self._layers[layer]

    def _of(self, layer: str, table: Table) -> RankIO:
        """``rank_io`` of some records of ``layer`` (all of them: :meth:`layer`'s result)."""
        if table is self._files.get(layer):
            return self.layer(layer)
        return rank_io(table, self._nprocs, layer_members(self._file_ranks, layer))

    def outermost(self) -> tuple[dict[str, RankIO], RankIO]:
        """Per-rank I/O of each layer's :func:`outermost_records`, and of all of them together."""
        if self._outermost is None:
            self.outer_records = outermost_records(self._files)
            per_layer = {layer: self._of(layer, records) for layer, records in self.outer_records.items()}
            self._outermost = (per_layer, combine(list(per_layer.values()), self._nprocs))
        return self._outermost

    def time_layers(self) -> tuple[dict[str, RankIO], RankIO]:
        """Per-rank I/O of each layer's :func:`time_records` (every call once at its outermost
        layer, the I/O libraries' calls included), and of all of them; :meth:`outermost` when no
        I/O library covers a file."""
        ids = library_file_ids(self._files)
        if not ids.size:
            return self.outermost()
        if not np.setdiff1d(ids, self.blind()).size:
            return self.outermost()
        if self._time is None:
            records = time_records(self._files, self.blind())
            per_layer = {layer: self._of(layer, table) for layer, table in records.items()}
            self._time = (per_layer, combine(list(per_layer.values()), self._nprocs))
        return self._time

    def blind(self) -> np.ndarray:
        """:func:`blind_library_files` of the profile's records, computed once."""
        if self._blind is None:
            self._blind = blind_library_files(self._files)
        return self._blind

    def time_records(self, layers: Sequence[str]) -> dict[str, Table]:
        """:func:`time_records` of ``layers`` (an empty table for a layer without records), computed
        once per ``layers``; the tables are shared: read them, do not modify them."""
        key = tuple(layers)
        if key not in self._records:
            files = {k: self._files[k] if k in self._files else empty_layer() for k in key}
            self._records[key] = time_records(files, self.blind())
        return dict(self._records[key])

    def time_outermost(self) -> RankIO:
        """Per-rank I/O time of :meth:`time_layers`, all layers together."""
        return self.time_layers()[1]
