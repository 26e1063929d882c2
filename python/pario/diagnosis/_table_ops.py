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

from collections.abc import Mapping

import numpy as np

from pario.table import Table, as_table, distinct, group_codes, group_reduce

#: Below this many rows a full sort is cheap: no shortcut.
SMALL = 4096

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
