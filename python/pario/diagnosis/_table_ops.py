"""Fast forms of the few table operations the rules repeat over every record.

A log of 100 000 ranks holds a million file records; a full sort or a Python loop
per name costs tenths of a second each.  The rules group records by file
(:func:`per_file`) and order files by what they cost (:func:`sort_order`, :func:`top`)
under pario's own rules (:mod:`pario.table`): files in order of first appearance,
sums of floats in row order with NaN skipped, orders stable and descending with ties
in the table's order and NaN last.  A shortcut is taken only when it cannot change the
result.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping, Sequence

import numpy as np

from pario.table import Table, as_table, distinct, group_codes, group_reduce

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


@functools.lru_cache(maxsize=256)
def glob_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regular expression that matches what any of the glob patterns matches (made once per
    set of patterns: a survey diagnoses thousands of logs with the same ones)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def glob_mask(index: NameIndex, values: np.ndarray, patterns: tuple[str, ...]) -> np.ndarray:
    """Per name of ``values`` (indexed by ``index``): it matches one of the glob patterns.

    As ``re.match`` of :func:`fnmatch.translate` says, but each pattern's regular expression
    (made once per pattern: the profiler's own log is a pattern of its own in every log) runs
    only on the names not matched yet that contain its longest literal piece in its place.
    """
    out = np.zeros(len(values), dtype=bool)
    for p in patterns:
        rows = _glob_candidates(index, p)
        rows = np.arange(len(values)) if rows is None else np.asarray(rows)
        rows = rows[~out[rows]]
        if len(rows):
            match = glob_regex((p,)).match
            out[rows] = np.fromiter((match(values[i]) is not None for i in rows), dtype=bool, count=len(rows))
    return out


def per_file(
    ids: np.ndarray,
    data: Mapping[str, np.ndarray],
    agg: Mapping[str, tuple[str, str]],
    unique: bool | None = None,
) -> Table:
    """The records ``{"id": ids, **data}`` grouped by file: one row per file, in order of
    first appearance, its id in the first column "id".

    ``agg`` maps an output column to (input column, "sum" | "first" | "min" | "max") of
    :func:`pario.table.group_reduce`.  When no id repeats (``unique``, if the caller knows),
    each group is its one row.
    """
    ids = np.asarray(ids)
    if unique is None:
        unique = len(distinct(ids)) == len(ids)
    keys, codes = (ids, None) if unique else group_codes(ids, sort=False)
    out = Table({"id": keys}, length=len(keys))
    for name, (src, how) in agg.items():
        out[name] = _reduce(np.asarray(data[src]), codes, len(keys), how)
    return out


def _reduce(v: np.ndarray, codes: np.ndarray | None, ngroups: int, how: str) -> np.ndarray:
    """``how`` of ``v`` per group (``codes`` None: one row per group, so the value itself,
    but a sum counts NaN as 0 and booleans as integers)."""
    if how not in ("sum", "first", "min", "max"):
        raise ValueError(f"unknown reduction {how!r}")
    if codes is not None:
        return group_reduce(v, codes, ngroups, how)
    if how == "sum" and v.dtype.kind == "f":
        return np.where(np.isnan(v), 0.0, v + 0.0)
    return v.astype(np.int64) if how == "sum" and v.dtype.kind == "b" else v


def sort_order(table: Table, by: str | list[str]) -> np.ndarray:
    """The rows of ``table`` by ``by`` descending (the first key first), NaN last, ties in the
    table's order."""
    keys = [by] if isinstance(by, str) else list(by)
    # np.lexsort is stable; its last key is the primary one
    return np.lexsort([_descending_key(np.asarray(table[k])) for k in reversed(keys)])


def _descending_key(v: np.ndarray) -> np.ndarray:
    """A key whose ascending order is ``v``'s descending one (NaN stays NaN: last)."""
    if v.dtype.kind == "f":
        return -v
    if v.dtype.kind in "iub":
        return ~v
    raise TypeError(f"cannot order a column of {v.dtype} values")


def top(records: Table, by: str | list[str], n: int) -> Table:
    """The first ``n`` rows of :func:`sort_order`, without sorting every row: the rows whose
    first key reaches the n-th largest value, sorted alone, give the same head (the sort is
    stable and they keep their order)."""
    t = as_table(records)
    keys = [by] if isinstance(by, str) else list(by)
    first = np.asarray(t[keys[0]])
    if len(t) <= max(SMALL, 4 * n) or n <= 0 or first.dtype.kind not in "iuf" or (
            first.dtype.kind == "f" and bool(np.isnan(first).any())):
        return t[sort_order(t, by)[:n]]
    kth = np.partition(first, len(first) - n)[len(first) - n]
    cand = np.flatnonzero(first >= kth)
    return t[cand[sort_order(t[cand], by)][:n]]
