"""Named columns of one length: the model's tables, without pandas.

A report reads a log, analyses it and prints it; with pandas imported for that, the
import alone (0.2-0.3 s) made ``pario report`` slower than PyDarshan merely loading the
same log.  The model's tables are therefore plain NumPy columns under names, with the
few operations the analyses need: select columns, select rows (a mask, indices or a
slice), add a column, iterate over rows, group rows by a key.  Anything else is NumPy
on the columns.  :meth:`Table.to_pandas` gives a DataFrame to the code that wants one
(the tuner's model, CSV export), importing pandas only then.
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
    """

    __slots__ = ("_cols", "_len")

    def __init__(self, columns: Mapping[str, Any] | None = None, *, length: int | None = None) -> None:
        self._cols: dict[str, np.ndarray] = {}
        self._len = length
        for name, values in (columns or {}).items():
            self[name] = values
        if self._len is None:
            self._len = 0

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
            return self._cols[key]
        if isinstance(key, list) and all(isinstance(k, str) for k in key):
            return Table({k: self._cols[k] for k in key}, length=len(self))
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

    def get(self, name: str, default: Any = None) -> Any:
        return self._cols.get(name, default)

    def items(self) -> Iterable[tuple[str, np.ndarray]]:
        return self._cols.items()

    # -- new tables --------------------------------------------------------------
    def take(self, rows: Any) -> Table:
        """The rows ``rows`` selects: a boolean mask, positions, or a slice."""
        if isinstance(rows, slice):
            return Table({k: v[rows] for k, v in self._cols.items()}, length=len(range(len(self))[rows]))
        idx = np.asarray(rows)
        if idx.dtype == bool:
            if len(idx) != len(self):
                raise ValueError(f"a mask of {len(idx)} values for a table of {len(self)} rows")
            idx = np.flatnonzero(idx)
        return Table({k: v[idx] for k, v in self._cols.items()}, length=len(idx))

    def head(self, n: int) -> Table:
        return self.take(slice(0, max(n, 0)))

    def copy(self) -> Table:
        return Table({k: v.copy() for k, v in self._cols.items()}, length=len(self))

    def assign(self, **columns: Any) -> Table:
        """A new table with these columns added or replaced (the others are shared)."""
        out = Table(self._cols, length=len(self))
        for name, values in columns.items():
            out[name] = values
        return out

    def rename(self, names: Mapping[str, str]) -> Table:
        return Table({names.get(k, k): v for k, v in self._cols.items()}, length=len(self))

    def drop(self, names: Iterable[str]) -> Table:
        gone = set(names)
        return Table({k: v for k, v in self._cols.items() if k not in gone}, length=len(self))

    # -- rows --------------------------------------------------------------------
    def row(self, i: int) -> dict[str, Any]:
        """Row ``i`` as a dict of NumPy scalars (objects as they are)."""
        return {k: v[i] for k, v in self._cols.items()}

    def rows(self) -> Iterator[dict[str, Any]]:
        for i in range(len(self)):
            yield self.row(i)

    # -- conversions ---------------------------------------------------------------
    @classmethod
    def concat(cls, tables: Sequence[Table]) -> Table:
        """Rows of ``tables`` one after the other (columns of the first; all must have them)."""
        if not tables:
            return cls()
        names = tables[0].columns
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

        frame = pd.DataFrame(dict(self._cols), index=pd.RangeIndex(len(self), name=index_name))
        return frame


def as_table(data: Table | pd.DataFrame) -> Table:
    """``data`` as a Table (a DataFrame's columns; a Table as it is)."""
    return data if isinstance(data, Table) else Table.from_pandas(data)


# -- grouping ------------------------------------------------------------------------

def count_distinct(values: np.ndarray) -> int:
    """How many distinct values (by sorting: NumPy 2's ``np.unique`` hashes, which is several
    times slower on a million ids)."""
    s = np.sort(np.asarray(values))
    return int(len(s) and 1 + np.count_nonzero(s[1:] != s[:-1]))


def group_codes(keys: np.ndarray, *, sort: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys and, per row, the position of its key among them.

    Sorted keys with ``sort`` (``groupby(sort=True)``), else in order of first
    appearance (``groupby(sort=False)``).
    """
    keys = np.asarray(keys)
    if not len(keys):
        return keys[:0], np.zeros(0, dtype=np.intp)
    uniq, first, codes = np.unique(keys, return_index=True, return_inverse=True)
    if sort:
        return uniq, codes.reshape(-1)
    order = np.argsort(first, kind="stable")  # groups by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return uniq[order], rank[codes.reshape(-1)]


def group_sum(values: np.ndarray, codes: np.ndarray, ngroups: int) -> np.ndarray:
    """Per group (``codes``: each row's group, 0..ngroups-1), the sum of its floats as pandas'
    groupby sums them, so that printed digits do not depend on how a table was grouped.

    When each group's rows are together and no value is NaN, pandas adds each group's run
    with ``np.add.reduceat``; otherwise it skips NaN and adds in row order with Kahan's
    compensation.  The two can differ in the last digit.
    """
    v = np.asarray(values, dtype=np.float64)
    codes = np.asarray(codes)
    nan = np.isnan(v)
    if not len(v):
        return np.zeros(ngroups)
    if not nan.any() and bool((codes[1:] >= codes[:-1]).all()):
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        if len(starts) == ngroups:  # every group a run of rows, in order
            return np.add.reduceat(np.ascontiguousarray(v), starts)
    return _kahan_sum(v[~nan], codes[~nan], ngroups)


def _kahan_sum(v: np.ndarray, codes: np.ndarray, ngroups: int) -> np.ndarray:
    """Per group, its values added in row order with Kahan's compensation.

    One step per position within a group, every group at once: the groups sorted largest
    first, those with a value at position k are the first ones.
    """
    counts = np.bincount(codes, minlength=ngroups)
    starts = np.cumsum(counts) - counts
    ordered = v[np.argsort(codes, kind="stable")]  # each group's rows together, in row order
    by_size = np.argsort(-counts, kind="stable")
    sizes, first = counts[by_size], starts[by_size]
    total = np.zeros(ngroups)
    comp = np.zeros(ngroups)
    for k in range(int(sizes[0]) if ngroups else 0):
        m = int(np.searchsorted(-sizes, -k, side="left"))  # groups with more than k values
        y = ordered[first[:m] + k] - comp[:m]
        t = total[:m] + y
        c = (t - total[:m]) - y
        comp[:m] = np.where(np.isnan(c), 0.0, c)  # an infinite value: no compensation
        total[:m] = t
    out = np.empty(ngroups)
    out[by_size] = total
    return out


def group_reduce(values: np.ndarray, codes: np.ndarray, ngroups: int, how: str) -> np.ndarray:
    """Per group, ``how`` of its values: "sum" (NaN skipped; 0 for none; floats as
    :func:`group_sum`), "min"/"max" (NaN
    skipped; NaN when all are), "first" (the first row's value), "size" (rows), "count"
    (rows that are not NaN), "any"."""
    values = np.asarray(values)
    if how == "size":
        return np.bincount(codes, minlength=ngroups).astype(np.int64)
    if how == "count":
        keep = ~np.isnan(values) if values.dtype.kind == "f" else np.ones(len(values), dtype=bool)
        return np.bincount(codes[keep], minlength=ngroups).astype(np.int64)
    if how == "first":  # the first value that is not NaN, as pandas' "first"
        rows = np.arange(len(codes))
        if values.dtype.kind == "f":
            rows = rows[~np.isnan(values)]
        seen = np.full(ngroups, len(codes), dtype=np.intp)
        np.minimum.at(seen, codes[rows], rows)
        ok = seen < len(codes)
        float_values = values.dtype.kind == "f"
        out_first = np.full(ngroups, np.nan) if float_values else np.empty(ngroups, dtype=values.dtype)
        out_first[ok] = values[seen[ok]]
        return out_first
    if how == "any":
        out_any = np.zeros(ngroups, dtype=bool)
        np.logical_or.at(out_any, codes, values.astype(bool))
        return out_any
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


def group_by(table: Table, key: str, agg: Mapping[str, tuple[str, str]], *, sort: bool = True) -> Table:
    """``groupby(key, sort=sort).agg(**agg)`` with the key as the first column: one row per
    distinct key, ``agg`` maps an output column to (input column, reduction of
    :func:`group_reduce`)."""
    keys, codes = group_codes(table[key], sort=sort)
    out = Table({key: keys}, length=len(keys))
    for name, (src, how) in agg.items():
        out[name] = group_reduce(table[src], codes, len(keys), how)
    return out
