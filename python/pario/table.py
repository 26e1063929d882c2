"""Named columns of one length: the model's tables.

A report reads a log, analyses it and prints it; importing pandas alone for that
(0.2-0.3 s) would make ``pario report`` slower than PyDarshan merely loading the same
log.  The model's tables are therefore plain NumPy columns under names, with the few
operations the analyses need: select columns, select rows (a mask, indices or a slice),
add a column, iterate over rows, group rows by a key.  Anything else is NumPy on the
columns.  pario does not depend on pandas; :meth:`Table.from_pandas` and
:meth:`Table.to_pandas` convert for scripts and tests that use it, importing it only then.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


class Table:
    """Columns (1-D NumPy arrays) of one length, in order, by name.

    ``table["name"]`` is the column itself (a view: writing to it writes the table);
    ``table[["a", "b"]]`` a table of those columns; ``table[mask]``, ``table[indices]``
    and ``table[start:stop]`` a table of those rows.  Rows have no labels: a row is its
    position.

    A table of selected rows indexes each column when it is first read: most selections of a
    log's records (a hundred counters) read a few columns.  The columns are the arrays of
    the table selected from as they were at the selection.
    """

    __slots__ = ("_cols", "_len", "_lazy")

    def __init__(self, columns: Mapping[str, Any] | None = None, *, length: int | None = None) -> None:
        self._cols: dict[str, np.ndarray] = {}
        self._len = length
        #: column -> the positions of its array (in ``_cols``) that are this table's rows
        self._lazy: dict[str, Any] | None = None
        for name, values in (columns or {}).items():
            self[name] = values
        if self._len is None:
            self._len = 0

    @classmethod
    def _of(cls, columns: dict[str, np.ndarray], length: int,
            lazy: dict[str, Any] | None = None) -> Table:
        """A table of columns already checked (1-D arrays of ``length`` values, or of a table's
        rows where ``lazy`` gives their positions): the rows and columns another table selects,
        without checking each column again."""
        out = cls.__new__(cls)
        out._cols = columns
        out._len = length
        out._lazy = lazy or None
        return out

    @classmethod
    def from_arrays(cls, columns: dict[str, np.ndarray], length: int) -> Table:
        """A table of ``columns``, 1-D NumPy arrays of ``length`` values each, taken as they are
        (a reader's hundred counter columns: one check each, not a conversion each)."""
        for name, values in columns.items():
            if not isinstance(values, np.ndarray) or values.ndim != 1 or len(values) != length:
                raise ValueError(f"column {name!r} is not a 1-D array of {length} values")
        return cls._of(columns, length)

    def _col(self, name: str) -> np.ndarray:
        """Column ``name``, its rows selected now if not yet."""
        arr = self._cols[name]
        if self._lazy is not None and name in self._lazy:
            arr = arr[self._lazy.pop(name)]
            self._cols[name] = arr
        return arr

    def _all(self) -> dict[str, np.ndarray]:
        """Every column, their rows selected."""
        if self._lazy is not None:
            for name in list(self._lazy):
                self._col(name)
            self._lazy = None
        return self._cols

    # -- shape ---------------------------------------------------------------
    def __len__(self) -> int:
        return self._len or 0

    @property
    def columns(self) -> list[str]:
        return list(self._cols)

    @property
    def empty(self) -> bool:
        return len(self) == 0

    def __contains__(self, name: object) -> bool:
        return name in self._cols

    def __iter__(self) -> Iterator[str]:
        return iter(self._cols)

    def __repr__(self) -> str:
        return f"Table({len(self)} rows: {', '.join(self._cols)})"

    # -- columns ---------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return self._col(key)
        if isinstance(key, list) and key and all(isinstance(k, str) for k in key):
            return Table._of({k: self._col(k) for k in key}, len(self))
        return self.take(key)

    def __setitem__(self, name: str, values: Any) -> None:
        arr = np.asarray(values)
        if arr.ndim == 0:
            if self._len is None:
                raise ValueError(f"column {name!r}: a scalar needs the table's length")
            arr = np.full(self._len, arr[()], dtype=arr.dtype if arr.dtype != object else object)
        if arr.ndim != 1:
            raise ValueError(f"column {name!r} is not one-dimensional")
        if self._len is None:
            self._len = len(arr)
        elif len(arr) != self._len:
            raise ValueError(f"column {name!r} has {len(arr)} values, the table {self._len} rows")
        self._cols[name] = arr
        if self._lazy is not None:
            self._lazy.pop(name, None)

    def get(self, name: str, default: Any = None) -> Any:
        return self._col(name) if name in self._cols else default

    def items(self) -> Iterable[tuple[str, np.ndarray]]:
        return self._all().items()

    # -- new tables --------------------------------------------------------------
    def take(self, rows: Any) -> Table:
        """The rows ``rows`` selects: a boolean mask, positions, or a slice."""
        if isinstance(rows, slice):
            n = len(range(len(self))[rows])
            if self._lazy is None:
                return Table._of({k: v[rows] for k, v in self._cols.items()}, n)
            idx: Any = np.arange(len(self))[rows]
        else:
            idx = np.asarray(rows)
            if not len(idx) and idx.dtype != bool:
                idx = idx.astype(np.intp)  # [] is a list of no positions
            if idx.dtype == bool:
                if len(idx) != len(self):
                    raise ValueError(f"a mask of {len(idx)} values for a table of {len(self)} rows")
                idx = np.flatnonzero(idx)
            else:
                idx = _positions(idx, len(self), rows)
            n = len(idx)
        # the rows of a column not yet selected: its positions' positions (once per positions)
        lazy = dict.fromkeys(self._cols, idx)
        if self._lazy is not None:
            composed: dict[int, Any] = {}
            for name, pos in self._lazy.items():
                if id(pos) not in composed:
                    composed[id(pos)] = pos[idx]
                lazy[name] = composed[id(pos)]
        return Table._of(dict(self._cols), n, lazy)

    def head(self, n: int) -> Table:
        return self.take(slice(0, max(n, 0)))

    def copy(self) -> Table:
        return Table._of({k: v.copy() for k, v in self._all().items()}, len(self))

    def _derive(self, columns: dict[str, np.ndarray], names: Mapping[str, str] | None = None) -> Table:
        """A table of ``columns`` (some or all of this table's, ``names`` renaming them), their
        rows still to select where this table's are."""
        lazy = None
        if self._lazy is not None:
            names = names or {}
            lazy = {names.get(k, k): pos for k, pos in self._lazy.items() if names.get(k, k) in columns}
        return Table._of(columns, len(self), lazy)

    def assign(self, **columns: Any) -> Table:
        """A new table with these columns added or replaced (the others are shared)."""
        out = self._derive(dict(self._cols))
        for name, values in columns.items():
            out[name] = values
        return out

    def rename(self, names: Mapping[str, str]) -> Table:
        return self._derive({names.get(k, k): v for k, v in self._cols.items()}, names)

    def drop(self, names: Iterable[str]) -> Table:
        gone = set(names)
        return self._derive({k: v for k, v in self._cols.items() if k not in gone})

    # -- rows --------------------------------------------------------------------
    def row(self, i: int | np.integer[Any]) -> dict[str, Any]:
        """Row ``i`` as a dict of NumPy scalars (objects as they are)."""
        lazy = self._lazy or {}
        return {k: v[lazy[k][i]] if k in lazy else v[i] for k, v in self._cols.items()}

    def rows(self) -> Iterator[dict[str, Any]]:
        self._all()
        for i in range(len(self)):
            yield self.row(i)

    # -- conversions ---------------------------------------------------------------
    @classmethod
    def concat(cls, tables: Sequence[Table]) -> Table:
        """Rows of ``tables`` one after the other; they must have the same columns (in the
        first table's order)."""
        if not tables:
            return cls()
        names = tables[0].columns
        for t in tables[1:]:
            if set(t.columns) != set(names):
                raise ValueError(f"concat of tables with other columns: {sorted(names)}, {sorted(t.columns)}")
        return cls({k: np.concatenate([t[k] for t in tables]) for k in names},
                   length=sum(len(t) for t in tables))

    @classmethod
    def from_pandas(cls, frame: pd.DataFrame) -> Table:
        """The frame's columns; a named index other than a RangeIndex (``id`` after a
        groupby) becomes the first column, a RangeIndex is dropped (rows are positions)."""
        cols: dict[str, np.ndarray] = {}
        index = frame.index
        named = index.name is not None and index.name not in frame.columns and index.nlevels == 1
        if named and type(index).__name__ != "RangeIndex":  # ids that happen to be 0..n-1 stay
            cols[str(index.name)] = index.to_numpy()
        for name in frame.columns:
            s = frame[name]
            if s.dtype.kind in "biufcmM":
                cols[str(name)] = s.to_numpy()
            else:
                cols[str(name)] = s.to_numpy(dtype=object)
        return cls({k: np.array(v) for k, v in cols.items()}, length=len(frame))  # pandas 3 views: read-only

    def to_pandas(self, index_name: str | None = None) -> pd.DataFrame:
        """A DataFrame of the columns (pandas is imported here, never for a report)."""
        import pandas as pd

        frame = pd.DataFrame(dict(self._all()), index=pd.RangeIndex(len(self), name=index_name))
        return frame


def _positions(idx: np.ndarray, length: int, given: Any) -> np.ndarray:
    """Row positions ``idx`` checked against a table of ``length`` rows as indexing would check
    them, now rather than when a column is read, and apart from the array ``given``."""
    if idx.dtype.kind not in "iu" or idx.ndim != 1:
        raise IndexError("rows are selected by a boolean mask, integer positions or a slice")
    if len(idx) and (int(idx.max()) >= length or int(idx.min()) < -length):
        raise IndexError(f"a row position out of range for a table of {length} rows")
    return idx if isinstance(given, (list, tuple)) else idx.copy()


def constant_column(length: int, value: float) -> np.ndarray:
    """A read-only float column of one value that takes no memory per row: a Darshan log of a
    few kilobytes can describe a million ranks, and its per-rank tables have such columns."""
    return np.broadcast_to(np.float64(value), (length,))


def as_table(data: Table | pd.DataFrame) -> Table:
    """``data`` as a Table (a DataFrame's columns; a Table as it is)."""
    return data if isinstance(data, Table) else Table.from_pandas(data)


# -- sets and groups ----------------------------------------------------------------
#
# pario's own rules, so that a result never depends on how a table happened to be built:
# distinct values and group keys come out sorted; a group's float sum skips NaN and adds
# the rest in row order; "first" is the first row's value that is not missing (NaN, None).

def distinct(values: Any) -> np.ndarray:
    """The distinct values, sorted.  By sorting: NumPy 2's ``np.unique`` hashes, which is
    several times slower on a million ids."""
    s = np.sort(np.asarray(values))
    return s[run_heads(s)]


def run_heads(values: np.ndarray) -> np.ndarray:
    """Per position of sorted ``values``: it starts a run of equal values (the first one does)."""
    new = np.ones(len(values), dtype=bool)
    np.not_equal(values[1:], values[:-1], out=new[1:])
    return new


def unique_index(keys: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(keys, return_index=True, return_inverse=True)`` of a 1-D array: the distinct
    keys sorted, the row of each one's first appearance, each row's position among them.  By a
    stable sort, for integers and objects: NumPy 2's ``np.unique`` imports ``numpy.ma`` on its
    first call (8 ms of every short command).  Floats go to ``np.unique``, which makes one key
    of all the NaN."""
    keys = np.asarray(keys)
    if keys.dtype.kind == "f" or keys.ndim != 1:
        uniq, first, codes = np.unique(keys, return_index=True, return_inverse=True)
        return uniq, first, codes.reshape(-1)
    order = np.argsort(keys, kind="stable")
    s = keys[order]
    new = run_heads(s)
    codes = np.empty(len(s), dtype=np.intp)
    codes[order] = np.cumsum(new) - 1
    return s[new], order[new], codes


def median(values: Any) -> float:
    """``np.median`` of the values, as a float (NaN when any is NaN or there are none), without
    NumPy 2's ``np.median``, which imports ``numpy.ma`` on its first call."""
    v = np.asarray(values, dtype=np.float64).ravel()
    n = len(v)
    if not n or np.isnan(v).any():
        return float("nan")
    lo, hi = (n - 1) // 2, n // 2
    part = np.partition(v, [lo, hi])
    return float(part[lo]) if lo == hi else float((part[lo] + part[hi]) / 2)


def isin(values: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Per value: it is one of ``among``.  Integers of one type by a sorted search (``np.isin``
    sorts with ``np.unique``: see :func:`unique_index`)."""
    values = np.asarray(values)
    among = np.asarray(among)
    if not len(among) or not len(values):
        return np.zeros(len(values), dtype=bool)
    if values.dtype == among.dtype and values.dtype.kind in "iu":
        s = among if len(among) < 2 or bool((among[1:] > among[:-1]).all()) else np.sort(among)
        i = np.minimum(np.searchsorted(s, values), len(s) - 1)
        return s[i] == values
    if values.dtype.kind in "iu" and among.dtype.kind in "iu":
        # uint64 and int64 meet as floats in NumPy: compare the numbers themselves
        values, among = values.astype(object), among.astype(object)
    return np.isin(values, among)


def group_codes(keys: np.ndarray, *, sort: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys and, per row, the position of its key among them: keys sorted with
    ``sort``, else in order of first appearance."""
    keys = np.asarray(keys)
    if not len(keys):
        return keys[:0], np.zeros(0, dtype=np.intp)
    uniq, first, codes = unique_index(keys)
    if sort:
        return uniq, codes
    order = np.argsort(first, kind="stable")  # groups by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return uniq[order], rank[codes.reshape(-1)]


def group_sum(values: np.ndarray, codes: np.ndarray, ngroups: int) -> np.ndarray:
    """Per group (``codes``: each row's group, 0..ngroups-1), the sum of its floats: NaN
    skipped, the others added in row order (0.0 for a group with none)."""
    v = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(v)
    return np.bincount(np.asarray(codes)[keep], weights=v[keep], minlength=ngroups).astype(np.float64)


def _missing(values: np.ndarray) -> np.ndarray:
    """Per value: NaN, or None in a column of objects."""
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype == object:
        return np.asarray([v is None for v in values], dtype=bool) | np.not_equal(values, values)
    return np.zeros(len(values), dtype=bool)


def group_reduce(values: np.ndarray, codes: np.ndarray, ngroups: int, how: str) -> np.ndarray:
    """Per group, ``how`` of its values: "sum" (NaN skipped; 0 for none; floats as
    :func:`group_sum`), "min"/"max" (NaN skipped; NaN when all are), "first" (the first
    value that is not missing; NaN or None when none is), "size" (rows), "count" (rows that
    are not NaN)."""
    values = np.asarray(values)
    if how == "size":
        return np.bincount(codes, minlength=ngroups).astype(np.int64)
    if how == "count":
        keep = ~_missing(values)
        return np.bincount(codes[keep], minlength=ngroups).astype(np.int64)
    if how == "first":
        rows = np.flatnonzero(~_missing(values))
        seen = np.full(ngroups, len(codes), dtype=np.intp)
        np.minimum.at(seen, codes[rows], rows)
        found = seen < len(codes)
        if values.dtype == object:
            out_first = np.full(ngroups, None, dtype=object)
        elif values.dtype.kind == "f":
            out_first = np.full(ngroups, np.nan)
        else:
            out_first = np.zeros(ngroups, dtype=values.dtype)
        out_first[found] = values[seen[found]]
        return out_first
    if how == "sum":
        if values.dtype.kind in "iub":
            out_int = np.zeros(ngroups, dtype=np.int64 if values.dtype.kind != "u" else np.uint64)
            np.add.at(out_int, codes, values)
            return out_int
        return group_sum(values, codes, ngroups)
    if how in ("min", "max"):
        ufunc = np.minimum if how == "min" else np.maximum
        if values.dtype.kind in "iu":
            start = np.iinfo(values.dtype).max if how == "min" else np.iinfo(values.dtype).min
            out_i = np.full(ngroups, start, dtype=values.dtype)
            ufunc.at(out_i, codes, values)
            return out_i
        v = values.astype(np.float64)
        keep = ~np.isnan(v)
        out = np.full(ngroups, np.inf if how == "min" else -np.inf)
        ufunc.at(out, codes[keep], v[keep])
        counts = np.bincount(codes[keep], minlength=ngroups)
        out[counts == 0] = np.nan
        return out
    raise ValueError(f"unknown reduction {how!r}")
