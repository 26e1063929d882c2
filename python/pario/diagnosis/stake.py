"""Time at stake: what a rule's finding could save, per rank, from the records it concerns
(docs/diagnosis.md, "Time at stake")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pario.diagnosis.columns import counter, layer_counter, layer_values
from pario.diagnosis.facts import TIME_COLS, Facts, Records
from pario.model.rankio import float_values, rank_io
from pario.table import Table


@dataclass(frozen=True)
class Stake:
    """Per-rank time of a set of operations: the largest rank's, the mean, per rank."""

    max: float
    mean: float
    per_rank: np.ndarray
    exact: bool

    @property
    def argmax(self) -> int:
        return int(np.argmax(self.per_rank)) if len(self.per_rank) else -1


def stake(
    facts: Facts, layer: str, records: Records, weights: Mapping[str, np.ndarray | float]
) -> Stake:
    """Per-rank time of ``records`` with each time kind scaled by ``weights[kind]``.

    ``weights`` maps "read", "write", "meta" to a factor per record (or one
    factor); kinds not named count 0.  Shared records are spread over their
    ranks as :func:`pario.model.rankio.rank_io` does (exact when the data
    allow it), with the fastest and slowest rank's times scaled alike.
    """
    n = facts.nprocs
    if not len(records) or n <= 0:
        return Stake(0.0, 0.0, np.zeros(max(n, 0)), True)
    cols = {
        c: float_values(records[c], -1.0) for c in _stake_ranks(True) if c in records
    }
    shared = _has_shared(cols)
    cols = {c: v for c, v in cols.items() if c in _stake_ranks(shared)}
    if shared and "id" in records:
        cols["id"] = np.asarray(records["id"])
    cols.update({c: counter(records, c) for c in _stake_times(shared) if c in records})
    return _stake(facts, layer, len(records), cols, weights)


def stake_rows(
    facts: Facts, layer: str, rows: np.ndarray | None, weights: Mapping[str, np.ndarray | float]
) -> Stake:
    """``stake(facts, layer, facts.layer(layer)[rows], weights)`` without copying the records.

    ``rows``: a boolean mask or positions over ``facts.layer(layer)`` (None: all).
    """
    table = facts.layer(layer)
    n = facts.nprocs

    def pick(v: np.ndarray) -> np.ndarray:
        return v if rows is None else v[rows]

    count = len(table) if rows is None else (int(rows.sum()) if rows.dtype == bool else len(rows))
    if not count or n <= 0:
        return Stake(0.0, 0.0, np.zeros(max(n, 0)), True)

    def ranks(c: str) -> np.ndarray:
        return pick(
            facts.cached(("ranks", layer, c), lambda: float_values(table[c], -1.0))
        )

    cols = {"rank": ranks("rank")} if "rank" in table else {}
    shared = _has_shared(cols)
    cols.update({c: ranks(c) for c in _stake_ranks(shared) if c in table and c not in cols})
    if shared and "id" in table:
        cols["id"] = pick(layer_values(facts, layer, "id"))
    cols.update({c: pick(layer_counter(facts, layer, c)) for c in _stake_times(shared) if c in table})
    return _stake(facts, layer, count, cols, weights)


# What :func:`pario.model.rankio.rank_io` reads of the records for the time per rank (a
# stake never looks at bytes): the ranks (converted as rank_io converts them), the times (as
# :func:`counter`, which is rank_io's own conversion), and, when some records are shared (rank
# -1), their ids and their fastest and slowest ranks and times.


def _has_shared(cols: Mapping[str, np.ndarray]) -> bool:
    return "rank" not in cols or bool((cols["rank"].astype(np.int64) < 0).any())


def _stake_ranks(shared: bool) -> tuple[str, ...]:
    return ("rank", "fastest_rank", "slowest_rank") if shared else ("rank",)


def _stake_times(shared: bool) -> tuple[str, ...]:
    times = tuple(TIME_COLS.values())
    return (*times, "fastest_rank_time", "slowest_rank_time") if shared else times


def _stake(
    facts: Facts,
    layer: str,
    count: int,
    cols: dict[str, np.ndarray],
    weights: Mapping[str, np.ndarray | float],
) -> Stake:
    """:func:`stake` of the records whose columns (raw ids, ranks, counters) are ``cols``."""
    n = facts.nprocs
    rec = dict(cols)
    extremes = [c for c in ("fastest_rank_time", "slowest_rank_time") if c in rec]
    old_total = np.zeros(count)
    new_total = np.zeros(count)
    for kind, column in TIME_COLS.items():
        t = cols.get(column, np.zeros(count))
        w = weights.get(kind, 0.0)
        scaled = t * np.asarray(w, dtype=np.float64)
        if extremes:
            old_total += t
            new_total += scaled
        rec[column] = scaled
    if extremes:
        with np.errstate(invalid="ignore", divide="ignore"):
            factor = np.where(old_total > 0, new_total / np.where(old_total > 0, old_total, 1.0), 0.0)
        for c in extremes:
            rec[c] = cols[c] * factor
    rio = rank_io(_per_rank_records(rec, count, n), n, facts.members(layer))
    per_rank = np.asarray(rio.table["time"], dtype=np.float64)
    return Stake(
        float(per_rank.max()) if len(per_rank) else 0.0,
        float(per_rank.mean()) if len(per_rank) else 0.0,
        per_rank,
        bool(rio.exact_max["time"]),
    )


def _per_rank_records(rec: dict[str, np.ndarray], count: int, nprocs: int) -> Table:
    """The records for :func:`rank_io`, each rank's own records first summed into one.

    rank_io adds a rank's own records up with ``np.bincount`` in record order; the same
    sums, made here, reach it as one record per rank and give the same times.  (Its count
    of contributing records changes, which only matters for shared records' exactness when
    no own record contributes, and then it does not change.)  The other records (shared
    ones, rank < 0, and any past the last rank) are passed as they are.
    """
    if "rank" not in rec or count <= 2 * nprocs:
        return Table(rec, length=count)
    rank = rec["rank"].astype(np.int64)
    own = (rank >= 0) & (rank < nprocs)
    others = ~own
    everyone = not others.any()
    own_rank = rank if everyone else rank[own]
    out: dict[str, np.ndarray] = {}
    for c, v in rec.items():
        mine: np.ndarray
        if c == "rank":
            mine = np.arange(nprocs, dtype=np.float64)
        elif c in _RANK_SUMMED:
            ok = np.isfinite(v) & (v > 0.0)  # rank_io's reading of a time
            if not ok.any():
                mine = np.zeros(nprocs)
            else:
                w = v if ok.all() else np.where(ok, v, 0.0)
                mine = np.bincount(own_rank, weights=w if everyone else w[own], minlength=nprocs)[:nprocs]
        else:  # read only for shared records
            mine = np.full(nprocs, -1 if v.dtype.kind in "if" else 0, dtype=v.dtype)
        out[c] = mine if everyone else np.concatenate([mine, v[others]])
    return Table(out)


_RANK_SUMMED = frozenset(TIME_COLS.values())
