"""Fast forms of the few frame operations the rules repeat over every record.

A log of 100 000 ranks holds a million file records; a ``groupby`` over all of
them, a full ``sort_values`` or a Python loop per name costs tenths of a second
each.  Every helper here returns exactly what the plain pandas expression in its
docstring returns (same rows, order, values and dtypes), taking a shortcut only
when the shortcut cannot change the result.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

#: Below this many rows the plain pandas expression is cheap: no shortcut.
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
    """``pd.Series(values).isin(among)`` as a boolean array."""
    values = np.asarray(values)
    among = np.asarray(among)
    if values.dtype == among.dtype and values.dtype.kind in "iu":
        if not len(among) or not len(values):
            return np.zeros(len(values), dtype=bool)
        s = among if len(among) < 2 or bool((among[1:] > among[:-1]).all()) else np.sort(among)
        i = np.minimum(np.searchsorted(s, values), len(s) - 1)
        return s[i] == values
    return pd.Series(values).isin(among).to_numpy()


def per_file(
    ids: np.ndarray,
    data: Mapping[str, np.ndarray],
    agg: Mapping[str, tuple[str, str]],
    unique: bool | None = None,
) -> pd.DataFrame:
    """``pd.DataFrame({"id": ids, **data}).groupby("id", sort=False).agg(**agg)``.

    When no id repeats (``unique``, if the caller knows), each group is its one row: the
    aggregate of one value is the value (a sum turns NaN into 0 and -0.0 into 0.0, as the
    grouped sum does).  Text comes back as object columns there, not pandas strings.
    """
    if len(ids) < SMALL or not (unique_ids(ids) if unique is None else unique):
        return pd.DataFrame({"id": ids, **data}).groupby("id", sort=False).agg(**agg)
    cols = {}
    for name, (src, how) in agg.items():
        v = data[src]
        if how not in ("sum", "first", "min", "max"):
            return pd.DataFrame({"id": ids, **data}).groupby("id", sort=False).agg(**agg)
        if how == "sum" and v.dtype.kind == "f":
            v = v + 0.0
            if np.isnan(v).any():
                v[np.isnan(v)] = 0.0
        cols[name] = pd.Series(v, dtype=object, copy=False) if v.dtype == object else v
    return pd.DataFrame(cols).set_axis(pd.Index(ids, name="id"), axis=0)


def top(frame: pd.DataFrame, by: str | list[str], n: int) -> pd.DataFrame:
    """``frame.sort_values(by, ascending=False).head(n)``, without sorting every row.

    A sort on several keys is stable (ties keep the frame's order), so the rows whose
    first key reaches the n-th largest value, sorted alone, give the same head.  A
    quicksort on one key orders ties arbitrarily: the shortcut is taken only when
    the leading values are distinct.
    """
    keys = [by] if isinstance(by, str) else list(by)
    if len(frame) <= max(SMALL, 4 * n) or n <= 0:
        return frame.sort_values(by, ascending=False).head(n)
    vals = [frame[k].to_numpy() for k in keys]
    if any(v.dtype.kind not in "iuf" or (v.dtype.kind == "f" and not _plain(v)) for v in vals):
        return frame.sort_values(by, ascending=False).head(n)
    first = vals[0]
    kth = np.partition(first, len(first) - n)[len(first) - n]
    cand = np.flatnonzero(first >= kth)
    if isinstance(by, str):
        v = first[cand]
        if len(_distinct(v)) != len(v):
            # ties: order them as pandas' quicksort does, on this one column
            order = frame[by].reset_index(drop=True).sort_values(ascending=False).index.to_numpy()
            return frame.iloc[order[:n]]
        order = cand[np.argsort(-v, kind="stable")]
    else:
        # np.lexsort: the last key is the primary one; position breaks ties (stable)
        sort_keys = [cand] + [_descending(v[cand]) for v in reversed(vals)]
        order = cand[np.lexsort(sort_keys)]
    return frame.iloc[order[:n]]


def sum_in_order(frame: pd.DataFrame, column: str, by: str) -> float:
    """``frame.sort_values(by, ascending=False)[column].sum()``.

    Whole numbers below 2**53 add up exactly in any order: then no sort is needed.
    """
    v = frame[column].to_numpy()
    if v.dtype.kind in "iu" or (
        v.dtype.kind == "f"
        and _plain(v)
        and bool(np.all(np.floor(v) == v))
        and float(np.abs(v).sum()) < 2.0**53
    ):
        return frame[column].sum()  # type: ignore[no-any-return]
    return frame.sort_values(by, ascending=False)[column].sum()  # type: ignore[no-any-return]


def _plain(v: np.ndarray) -> bool:
    """No NaN and no -0.0 (which pandas might order apart from 0.0)."""
    return not bool(np.isnan(v).any()) and not bool(np.signbit(v[v == 0.0]).any())


def _descending(v: np.ndarray) -> np.ndarray:
    """A key whose ascending order is ``v``'s descending order (equal values stay equal)."""
    if v.dtype.kind == "f":
        return -(v + 0.0)
    # dense ranks, so that negation cannot overflow
    return -np.searchsorted(_distinct(v), v)
