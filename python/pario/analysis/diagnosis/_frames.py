"""Fast forms of the few table operations the rules repeat over every record.

A log of 100 000 ranks holds a million file records; a full sort or a Python loop
per name costs tenths of a second each.  The rules' findings were first computed
with pandas, and their order and digits are what people read: the grouping and
sorting here give the rows, order and values pandas gave (a groupby's sums, its
quicksort on one key), on :class:`pario.table.Table` columns, taking a shortcut only
when the shortcut cannot change the result.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence

import numpy as np

from pario.table import Table, as_table, group_codes, group_reduce, group_sum

#: Below this many rows a full sort is cheap: no shortcut.
SMALL = 4096

_SEP = "\0"  # cannot occur in a path
_WILD = re.compile(r"[*?\[\]]")


class NameIndex:
    """Names joined into one NUL-separated UTF-8 string, searched for literal pieces.

    The names that start or end with a piece are found by comparing bytes at every
    name's start or end at once (NumPy); those that contain it by ``bytes.find``:
    no Python call per name either way.
    """

    def __init__(self, blob: bytes, seps: np.ndarray) -> None:
        self.blob = blob
        self.bytes = b = np.frombuffer(blob, dtype=np.uint8)
        self.starts = seps[:-1] + 1  # where each name begins in ``blob``
        self.ends = seps[1:]  # where it ends (its terminating NUL)
        self.lens = self.ends - self.starts
        # each name's first two and last two bytes (for a shorter name they include a NUL
        # or a neighbour's byte: the length check that follows them settles it)
        self.head = (b[self.starts].astype(np.uint16) << 8) | b[np.minimum(self.starts + 1, len(b) - 1)]
        self.tail = (b[np.maximum(self.ends - 2, 0)].astype(np.uint16) << 8) | b[self.ends - 1]

    @classmethod
    def build(cls, names: np.ndarray) -> NameIndex | None:
        """An index of ``names`` (None unless they are all strings free of NUL)."""
        values = names.tolist()
        try:
            text = _SEP + _SEP.join(values) + _SEP
        except TypeError:  # a missing or non-text name
            return None
        blob = text.encode("utf-8", "surrogatepass")
        seps = np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 0)
        if len(seps) != len(values) + 1:
            return None
        return cls(blob, seps)

    def __len__(self) -> int:
        return len(self.starts)

    def rows_with(self, piece: str, *, start: bool = False, end: bool = False) -> np.ndarray:
        """Sorted rows whose name contains ``piece`` (at its start / end when asked)."""
        p = piece.encode("utf-8", "surrogatepass")
        if start or end:
            n = len(p)
            # the two bytes at the anchored end first: most names differ there
            if start:
                rows = np.flatnonzero(self.head == (p[0] << 8 | p[1]) if n >= 2 else (self.head >> 8) == p[0])
            else:
                rows = np.flatnonzero(
                    self.tail == (p[-2] << 8 | p[-1]) if n >= 2 else (self.tail & 0xFF) == p[-1]
                )
            lens = self.lens[rows]
            rows = rows[lens == n] if start and end else rows[lens >= n]
            base = self.starts if start else self.ends - n
            for j in range(2, n) if start else range(n - 3, -1, -1):
                if not len(rows):
                    break
                rows = rows[self.bytes[base[rows] + j] == p[j]]
            return rows
        find = self.blob.find
        found: list[int] = []
        i = find(p)
        while i >= 0:
            found.append(i)
            i = find(p, find(b"\0", i + 1))  # the next match lies in a later name
        if not found:
            return np.zeros(0, dtype=np.int64)
        rows = np.searchsorted(self.starts, np.asarray(found, dtype=np.int64), side="right") - 1
        return rows

    def suffix_mask(self, suffixes: Sequence[str]) -> np.ndarray:
        """Per name: it ends with one of ``suffixes``."""
        out = np.zeros(len(self), dtype=bool)
        for s in suffixes:
            out[self.rows_with(s, end=True)] = True
        return out


def _glob_candidates(index: NameIndex, pattern: str) -> np.ndarray | None:
    """Rows whose name may match the glob ``pattern`` (a superset; None: every row may)."""
    if _SEP in pattern:
        return None
    if not _WILD.search(pattern):
        return index.rows_with(pattern, start=True, end=True)
    head = _WILD.split(pattern, maxsplit=1)[0]
    tail = _WILD.split(pattern)[-1]
    # a literal start or end is checked on every name at once; prefer it
    if head or tail:
        if len(head) >= len(tail):
            return index.rows_with(head, start=True)
        return index.rows_with(tail, end=True)
    if "[" in pattern or "]" in pattern:
        return None
    # every literal piece between wildcards must occur somewhere in the name
    pieces = [piece for piece in re.split(r"[*?]", pattern) if piece]
    if not pieces:
        return None
    return index.rows_with(max(pieces, key=len))


def glob_mask(index: NameIndex, values: np.ndarray, patterns: tuple[str, ...]) -> np.ndarray:
    """Per name of ``values`` (indexed by ``index``): it matches one of the glob patterns.

    As ``re.match`` of :func:`fnmatch.translate` says, but the regular expression runs
    only on the names that contain a pattern's longest literal piece in its place.
    """
    regex = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))
    parts = []
    for p in patterns:
        rows = _glob_candidates(index, p)
        if rows is None:
            rows = np.arange(len(values))
        parts.append(rows)
    cand = _distinct(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    out = np.zeros(len(values), dtype=bool)
    if len(cand):
        match = regex.match
        out[cand] = np.fromiter((match(values[i]) is not None for i in cand), dtype=bool, count=len(cand))
    return out


def _distinct(v: np.ndarray) -> np.ndarray:
    """Sorted distinct values (``np.unique``, which hashes: slow on a million ids)."""
    s = np.sort(v)
    return s[np.r_[True, s[1:] != s[:-1]]] if len(s) else s


def sorted_ids(ids: np.ndarray) -> np.ndarray:
    """The distinct ids, sorted."""
    return _distinct(ids)


def unique_ids(ids: np.ndarray) -> bool:
    """No id occurs twice."""
    if len(ids) < 2:
        return True
    s = np.sort(ids)
    return not bool((s[1:] == s[:-1]).any())


def isin(values: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Per value: it is one of ``among``."""
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


def per_file(
    ids: np.ndarray,
    data: Mapping[str, np.ndarray],
    agg: Mapping[str, tuple[str, str]],
    unique: bool | None = None,
) -> Table:
    """The records ``{"id": ids, **data}`` grouped by file, as pandas'
    ``groupby("id", sort=False).agg(**agg)`` groups them: one row per file, in order of
    first appearance, its id in the first column "id".

    ``agg`` maps an output column to (input column, "sum" | "first" | "min" | "max"), NaN
    skipped; floats are summed as pandas sums them (:func:`_float_sum`), so that the
    printed digits stay the same.
    When no id repeats (``unique``, if the caller knows), each group is its one row.
    """
    ids = np.asarray(ids)
    if unique if unique is not None else unique_ids(ids):
        keys, codes = ids, None
    else:
        keys, codes = group_codes(ids, sort=False)
    out = Table({"id": keys}, length=len(keys))
    for name, (src, how) in agg.items():
        out[name] = _reduce(np.asarray(data[src]), codes, len(keys), how)
    return out


def _reduce(v: np.ndarray, codes: np.ndarray | None, ngroups: int, how: str) -> np.ndarray:
    """``how`` of ``v`` per group (``codes`` None: one row per group)."""
    if how not in ("sum", "first", "min", "max"):
        raise ValueError(f"unknown reduction {how!r}")
    if how == "sum" and v.dtype.kind == "f":
        return _float_sum(v, codes, ngroups)
    if codes is None:  # the aggregate of one value is the value
        return v.astype(np.int64) if how == "sum" and v.dtype.kind == "b" else v
    if how == "first" and v.dtype == object:
        # the first value that is not missing (None, NaN), as pandas' "first"
        ok = ~(np.equal(v, None) | np.not_equal(v, v))
        rows = np.flatnonzero(ok)
        seen = np.full(ngroups, len(v), dtype=np.intp)
        np.minimum.at(seen, codes[rows], rows)
        out = np.full(ngroups, None, dtype=object)
        found = seen < len(v)
        out[found] = v[seen[found]]
        return out
    return group_reduce(v, codes, ngroups, how)


def _float_sum(v: np.ndarray, codes: np.ndarray | None, ngroups: int) -> np.ndarray:
    """Per group, the sum of its floats as pandas' groupby sums them
    (:func:`pario.table.group_sum`); ``codes`` None: one row per group, so each value (as
    reduceat gives it), or with a NaN among them 0.0 + each value (NaN counts 0, -0.0
    becomes 0.0)."""
    if codes is None:
        nan = np.isnan(v)
        return np.where(nan, 0.0, v + 0.0) if nan.any() else v.copy()
    return group_sum(v, codes, ngroups)


def sort_order(table: Table, by: str | list[str]) -> np.ndarray:
    """The rows of ``table.sort_values(by, ascending=False)`` in pandas, NaN last.

    On one key pandas sorts with NumPy's quicksort (ties in no promised order) on the
    values reversed, and reverses the result: the same calls here give the same order.
    On several keys its sort is stable (ties keep the table's order).
    """
    keys = [by] if isinstance(by, str) else list(by)
    if len(keys) == 1:
        v = np.asarray(table[keys[0]])
        nan = np.isnan(v) if v.dtype.kind == "f" else np.zeros(len(v), dtype=bool)
        rows = np.arange(len(v))
        values, positions = v[~nan][::-1], rows[~nan][::-1]
        order = positions[values.argsort(kind="quicksort")][::-1]
        return np.concatenate([order, np.flatnonzero(nan)])
    # np.lexsort: the last key is the primary one; NaN sorts last
    return np.lexsort([_descending_key(np.asarray(table[k])) for k in reversed(keys)])


def _descending_key(v: np.ndarray) -> np.ndarray:
    """A key whose ascending order is ``v``'s descending one (NaN stays NaN: last)."""
    if v.dtype.kind == "f":
        return -v
    if v.dtype.kind in "iub":
        return ~v
    raise TypeError(f"cannot order a column of {v.dtype} values")


def top(frame: Table, by: str | list[str], n: int) -> Table:
    """The first ``n`` rows of :func:`sort_order` (``sort_values(by, ascending=False).head(n)``),
    without sorting every row.

    A sort on several keys is stable (ties keep the table's order), so the rows whose
    first key reaches the n-th largest value, sorted alone, give the same head.  A
    quicksort on one key orders ties arbitrarily: the shortcut is taken only when
    the leading values are distinct.
    """
    t = as_table(frame)
    keys = [by] if isinstance(by, str) else list(by)
    if len(t) <= max(SMALL, 4 * n) or n <= 0:
        return t[sort_order(t, by)[:n]]
    vals = [np.asarray(t[k]) for k in keys]
    if any(v.dtype.kind not in "iuf" or (v.dtype.kind == "f" and not _plain(v)) for v in vals):
        return t[sort_order(t, by)[:n]]
    first = vals[0]
    kth = np.partition(first, len(first) - n)[len(first) - n]
    cand = np.flatnonzero(first >= kth)
    if isinstance(by, str):
        v = first[cand]
        if len(_distinct(v)) != len(v):
            return t[sort_order(t, by)[:n]]  # ties: as pandas' quicksort orders them
        order = cand[np.argsort(-v, kind="stable")]
    else:
        # np.lexsort: the last key is the primary one; position breaks ties (stable)
        sort_keys = [cand] + [_descending_key(v[cand]) for v in reversed(vals)]
        order = cand[np.lexsort(sort_keys)]
    return t[order[:n]]


def sum_in_order(frame: Table, column: str, by: str) -> float:
    """``frame.sort_values(by, ascending=False)[column].sum()`` in pandas (NaN counts 0).

    Whole numbers below 2**53 add up exactly in any order: then no sort is needed.
    """
    t = as_table(frame)
    v = np.asarray(t[column])
    if v.dtype.kind in "iub":
        return float(v.sum())
    if not (
        v.dtype.kind == "f"
        and _plain(v)
        and bool(np.all(np.floor(v) == v))
        and float(np.abs(v).sum()) < 2.0**53
    ):
        v = v[sort_order(t, by)]
    return float(np.where(np.isnan(v), 0.0, v).sum())


def _plain(v: np.ndarray) -> bool:
    """No NaN and no -0.0 (which pandas might order apart from 0.0)."""
    return not bool(np.isnan(v).any()) and not bool(np.signbit(v[v == 0.0]).any())
