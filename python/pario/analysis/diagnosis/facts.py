"""What the rules read: the model, filtered to the application's files, plus helpers.

:func:`facts_of` is computed once per profile; rules are pure functions of
``(Facts, RuleConfig)``.  Nothing here formats text for people;
the commands a finding recommends are built in :mod:`pario.analysis.diagnosis.commands`.
"""

from __future__ import annotations

import glob
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from pario.analysis.diagnosis._table_ops import NameIndex, glob_mask, glob_regex, isin, per_file
from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.filesystems import FileSystems
from pario.analysis.io import OPS
from pario.analysis.mpihints import injected_hints
from pario.analysis.times import RankTimes, rank_times
from pario.model import LAYERS, LIBRARY_LAYERS, Profile, size_columns
from pario.model.rankio import NESTED_IN, float_values, layer_members, rank_io
from pario.table import Table, as_table, distinct

TIME_COLS = {"read": "read_time", "write": "write_time", "meta": "meta_time"}
BYTES_COLS = {"read": "bytes_read", "write": "bytes_written"}

T = TypeVar("T")

#: A layer's records: a :class:`pario.table.Table` (a DataFrame works too, read by column).
Records = Any


@dataclass(frozen=True)
class Striping:
    stripe_size: int
    stripe_count: int
    source: str  # one of STRIPING_SOURCES' values, or "MPI-IO hints striping_factor / striping_unit"


#: Where ``job.metadata["lustre_striping"]`` comes from, by the log's source.
STRIPING_SOURCES = {
    "darshan": "Darshan LUSTRE module",
    "pario": "pario runtime (the file's lustre.lov layout attribute)",
}


_FINDINGS_MADE = ("findings made",)


@dataclass(frozen=True)
class Facts:
    """One run, as the rules see it.

    ``files`` holds only the application's files (one Table of records per layer,
    rows numbered afresh): records whose path matches
    ``RuleConfig.ignored_path_patterns`` (Python modules, shared libraries, the
    MPI library's lock files...) are left out and counted in ``ignored``.
    ``times`` (per-rank time classes) keeps all I/O, since it is time the run spent.
    """

    profile: Profile
    label: str
    nprocs: int
    runtime: float
    times: RankTimes
    files: dict[str, Table]
    ignored: dict[str, int]
    striping: dict[int, Striping]
    hints: dict[int, dict[str, str]]
    injected: dict[str, str]
    #: values derived from the records once and shared by the rules (see :meth:`cached`)
    _memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def source(self) -> str:
        return self.profile.job.source

    @property
    def findings_made(self) -> tuple[Any, ...] | None:
        """The findings the other rules made, for a rule registered ``after_others`` (None until the
        diagnosis has run them: :meth:`keep_findings`)."""
        return self._memo.get(_FINDINGS_MADE)  # type: ignore[no-any-return]

    def keep_findings(self, findings: tuple[Any, ...]) -> None:
        self._memo[_FINDINGS_MADE] = findings

    def cached(self, key: Any, make: Callable[[], T]) -> T:
        """``make()``, computed once per Facts (arrays come back read-only: share, do not modify)."""
        try:
            return self._memo[key]  # type: ignore[no-any-return]
        except KeyError:
            value = make()
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            self._memo[key] = value
            return value

    def layer(self, name: str) -> Table:
        """The application's records of layer ``name`` (an empty table when it has none)."""
        found = self.files.get(name)
        return found if found is not None else _empty()

    def members(self, layer: str) -> dict[int, np.ndarray]:
        return self.cached(("members", layer), lambda: layer_members(self.profile.file_ranks, layer))

    def outer_rows(self, layer: str) -> np.ndarray | None:
        """Which rows of ``layer(layer)`` :meth:`outermost` keeps (None: all of them).

        POSIX records of files that have MPI-IO records are left out (their time is
        counted as MPI-IO time), and so are DAOS records of objects that have DFS records
        (DFS time), as :func:`pario.model.rankio.outermost_records` does.
        """

        def make() -> np.ndarray | None:
            outer_layer = NESTED_IN.get(layer)
            outer, inner = self.files.get(outer_layer or ""), self.files.get(layer)
            if outer is None or inner is None or not len(outer) or not len(inner):
                return None
            nested = isin(inner["id"], np.unique(outer["id"]))
            return ~nested if nested.any() else None

        return self.cached(("outer_rows", layer), make)

    def outermost(self) -> dict[str, Table]:
        """Each layer's records whose time no outer layer counts (as ``rankio.outermost_records``), cached."""

        def make() -> dict[str, Table]:
            out = {layer: table for layer, table in self.files.items() if layer in LAYERS}
            for layer in NESTED_IN:
                keep = self.outer_rows(layer)
                if keep is not None:
                    out[layer] = out[layer][keep]
            return out

        return dict(self.cached("outermost", make))

    @property
    def has_io(self) -> bool:
        """Any file I/O of the application: records of its files (POSIX, STDIO, MPI-IO, DFS), its
        DAOS objects, or an I/O library (HDF5, PnetCDF; a Darshan log may hold those alone)."""
        return any(len(f) for f in self.files.values()) or any(
            len(self.profile.layer(layer)) for layer in LIBRARY_LAYERS
        )


def _empty() -> Table:
    return Table(
        {
            "id": np.zeros(0, dtype=np.uint64),
            "rank": np.zeros(0, dtype=np.int64),
            "name": np.zeros(0, dtype=object),
        }
    )


def _ignored_mask(names: np.ndarray, patterns: tuple[str, ...], index: NameIndex | None = None) -> np.ndarray:
    """Which names match one of the glob patterns (one regular expression, each distinct name once)."""
    if not patterns:
        return np.zeros(len(names), dtype=bool)
    if index is not None:
        return glob_mask(index, names, patterns)
    regex = glob_regex(tuple(patterns))
    uniques, codes = np.unique(names.astype(str), return_inverse=True)
    hit = np.fromiter((regex.match(u) is not None for u in uniques), dtype=bool, count=len(uniques))
    return hit[codes] if len(codes) else np.zeros(0, dtype=bool)


def facts_of(profile: Profile, cfg: RuleConfig, times: RankTimes | None = None) -> Facts:
    """Everything the rules need from one profile (``times``: its ``rank_times``, if already at hand)."""
    files: dict[str, Table] = {}
    ignored: dict[str, int] = {}
    # the profiler's own log (and its temporary name) is never the application's file
    log = glob.escape(profile.job.path) if profile.job.path else ""
    own_log = (log, log + ".*") if log else ()
    patterns = (*cfg.ignored_path_patterns, *own_log)
    names: dict[str, tuple[NameIndex, np.ndarray | None]] = {}
    for layer in LAYERS:
        records = as_table(profile.layer(layer))
        if len(records) and "name" in records:
            names_of = np.asarray(records["name"], dtype=object)
            index = NameIndex.build(names_of)
            drop = _ignored_mask(names_of, patterns, index)
            ignored[layer] = int(drop.sum())
            # without a copy of every column when nothing is dropped
            if drop.any():
                records = records[~drop]
            if index is not None:
                names[layer] = (index, np.flatnonzero(~drop) if drop.any() else None)
        files[layer] = records
    rt = times if times is not None else rank_times(profile)
    runtime = rt.runtime if rt.runtime > 0 else float(profile.job.runtime or 0.0)
    injected = injected_hints(profile)
    facts = Facts(
        profile=profile,
        label=profile.job.path.rsplit("/", 1)[-1],
        nprocs=int(profile.job.nprocs),
        runtime=runtime,
        times=rt,
        files=files,
        ignored=ignored,
        striping=_striping(profile),
        hints=dict(profile.hints),
        injected=injected,
    )
    for layer, known in names.items():
        facts._memo[("names", layer)] = known
    return facts


def name_suffix_rows(facts: Facts, layer: str, suffixes: tuple[str, ...]) -> np.ndarray | None:
    """Per record of ``facts.layer(layer)``: its name ends with one of ``suffixes`` (None if unknown)."""
    known = facts._memo.get(("names", layer))
    if known is None:
        return None
    index, keep = known

    def make() -> np.ndarray:
        hit = index.suffix_mask(suffixes)
        return hit if keep is None else hit[keep]

    return facts.cached(("suffix", layer, suffixes), make)


def _striping(profile: Profile) -> dict[int, Striping]:
    out: dict[int, Striping] = {}
    raw = profile.job.metadata.get("lustre_striping") or {}
    source = STRIPING_SOURCES.get(profile.job.source, f"{profile.job.source} log")
    if isinstance(raw, dict):
        for fid, s in raw.items():
            try:
                size, count = int(s["stripe_size"]), int(s["stripe_count"])
            except (KeyError, TypeError, ValueError):
                continue
            if size > 0 and count > 0:
                out[int(fid)] = Striping(size, count, source)
    for fid, hints in profile.hints.items():
        if int(fid) in out:
            continue
        try:
            count = int(hints.get("striping_factor", "0"))
            size = int(hints.get("striping_unit", "0"))
        except ValueError:
            continue
        if count > 0 and size > 0:
            out[int(fid)] = Striping(size, count, "MPI-IO hints striping_factor / striping_unit")
    return out


# ------------------------------------------------------------------------------------------
# column helpers
# ------------------------------------------------------------------------------------------


def counter(records: Records, name: str) -> np.ndarray:
    """A counter as floats; missing columns, NaN and Darshan's -1 ("unknown") become 0."""
    if name not in records or not len(records):
        return np.zeros(len(records))
    v = float_values(records[name], 0.0)
    return np.where(np.isfinite(v) & (v > 0.0), v, 0.0)


CounterGetter = Callable[[str], np.ndarray]


def ops(records: Records, layer: str, kind: str, column: CounterGetter | None = None) -> np.ndarray:
    """Per record: operations of ``kind`` (read, write, meta) of ``layer``.

    ``column(name)`` gives ``counter(records, name)`` (from :func:`layer_counter`'s cache, say).
    """
    get = column or (lambda c: counter(records, c))
    out = np.zeros(len(records))
    for c in OPS[layer][kind]:
        out += get(c)
    return out


def small_ops(
    records: Records, layer: str, kind: str, limit: int, column: CounterGetter | None = None
) -> np.ndarray:
    """Per record: requests of ``kind`` in the histogram buckets at or below ``limit`` bytes."""
    from pario.analysis.diagnosis.config import SMALL_BOUNDS

    get = column or (lambda c: counter(records, c))
    cols = size_columns(layer, kind)
    n = SMALL_BOUNDS.index(limit) + 1 if limit in SMALL_BOUNDS else 0
    out = np.zeros(len(records))
    for c in cols[:n]:
        out += get(c)
    return out


#: Upper bounds (bytes) of the ten request-size buckets; a bucket's lower bound is the previous one + 1.
BUCKET_UPPER: tuple[float, ...] = (
    100,
    1 << 10,
    10 << 10,
    100 << 10,
    1 << 20,
    4 << 20,
    10 << 20,
    100 << 20,
    1 << 30,
    float("inf"),
)


def small_bytes_bound(
    records: Records, layer: str, kind: str, limit: int, column: CounterGetter | None = None
) -> np.ndarray:
    """Per record: an upper bound of the bytes moved by small requests.

    The smaller of: small requests x their buckets' upper bounds, and the bytes moved
    minus the least the other requests can carry (their buckets' lower bounds).
    """
    get = column or (lambda c: counter(records, c))
    cols = size_columns(layer, kind)
    small = np.zeros(len(records))
    large_min = np.zeros(len(records))
    lower = 0.0
    for c, upper in zip(cols, BUCKET_UPPER, strict=True):
        n = get(c)
        if upper <= limit:
            small += n * upper
        else:
            large_min += n * lower
        lower = upper + 1
    nbytes = get(BYTES_COLS[kind])
    return np.clip(np.minimum(small, nbytes - large_min), 0.0, None)


def nranks(records: Records, nprocs: int) -> np.ndarray:
    """Per record: ranks that touched it (1 for a rank's own record)."""
    n = len(records)
    rank = np.asarray(records["rank"], dtype=np.int64) if "rank" in records else np.zeros(n, np.int64)
    shared = counter(records, "nranks")
    return np.where(rank >= 0, 1.0, np.where(shared > 0, shared, float(nprocs)))


# cached per layer: each column is converted once however many rules read it


def layer_counter(facts: Facts, layer: str, name: str) -> np.ndarray:
    """``counter(facts.layer(layer), name)``, cached (read-only)."""
    return facts.cached(("counter", layer, name), lambda: counter(facts.layer(layer), name))


def layer_counter_getter(facts: Facts, layer: str) -> CounterGetter:
    """The ``column`` argument of :func:`ops` and friends for ``facts.layer(layer)``."""
    return lambda name: layer_counter(facts, layer, name)


def layer_ops(facts: Facts, layer: str, kind: str) -> np.ndarray:
    """``ops(facts.layer(layer), layer, kind)``, cached (read-only)."""
    return facts.cached(
        ("ops", layer, kind), lambda: ops(facts.layer(layer), layer, kind, layer_counter_getter(facts, layer))
    )


def layer_values(facts: Facts, layer: str, name: str) -> np.ndarray:
    """``facts.layer(layer)[name]``, cached (a read-only view; ids, ranks, names)."""
    # a view: the cache makes it read-only, not the table's own column
    return facts.cached(("values", layer, name), lambda: np.asarray(facts.layer(layer)[name]).view())


def layer_nranks(facts: Facts, layer: str) -> np.ndarray:
    """``nranks(facts.layer(layer), facts.nprocs)``, cached (read-only)."""
    return facts.cached(("nranks", layer), lambda: nranks(facts.layer(layer), facts.nprocs))


def layer_ids(facts: Facts, layer: str) -> np.ndarray:
    """The file ids of ``facts.layer(layer)``, sorted and distinct (cached)."""
    return facts.cached(("ids", layer), lambda: distinct(layer_values(facts, layer, "id")))


def layer_unique(facts: Facts, layer: str) -> bool:
    """No file has two records in ``facts.layer(layer)`` (cached)."""
    return len(layer_ids(facts, layer)) == len(layer_values(facts, layer, "id"))


def outer_unique(facts: Facts) -> bool | None:
    """No file has two records among :meth:`Facts.outermost`'s (None: not known without a look).

    Outermost POSIX records exclude the MPI-IO files; STDIO files may have POSIX records too.
    """
    layers = [layer for layer, table in facts.outermost().items() if len(table)]
    if "stdio" in layers and len(layers) > 1:
        return None
    return all(layer_unique(facts, layer) for layer in layers)


def hex_id(fid: int | np.integer) -> str:
    return f"{int(fid):016x}"


def mpiio_files(facts: Facts) -> Table:
    """One row per MPI-IO file, its id in the first column "id": ranks, independent and
    collective requests, bytes, times (computed once per Facts: share, do not modify)."""
    return facts.cached("mpiio_files", lambda: _mpiio_files(facts))


def _mpiio_files(facts: Facts) -> Table:
    m = facts.layer("mpiio")
    if not len(m):
        return Table()
    records = {
        "name": np.asarray(m["name"]),
        "ranks": nranks(m, facts.nprocs),
        "indep_reads": counter(m, "indep_reads"),
        "indep_writes": counter(m, "indep_writes"),
        "coll_reads": counter(m, "coll_reads") + counter(m, "split_reads"),
        "coll_writes": counter(m, "coll_writes") + counter(m, "split_writes"),
        "other_reads": counter(m, "nb_reads") + counter(m, "shared_reads"),
        "other_writes": counter(m, "nb_writes") + counter(m, "shared_writes"),
        "bytes_read": counter(m, "bytes_read"),
        "bytes_written": counter(m, "bytes_written"),
        "read_time": counter(m, "read_time"),
        "write_time": counter(m, "write_time"),
        "noncontig": counter(m, "noncontig_view"),
        "views": counter(m, "views"),
    }
    agg = {c: (c, "sum") for c in records}
    agg.update(name=("name", "first"), noncontig=("noncontig", "max"))
    return per_file(np.asarray(m["id"]), records, agg)


# ------------------------------------------------------------------------------------------
# time at stake
# ------------------------------------------------------------------------------------------


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
        scaled = t * (np.asarray(w, dtype=np.float64) if not np.isscalar(w) else float(w))
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


# ------------------------------------------------------------------------------------------
# MPI-IO: hints, aggregators, file systems
# ------------------------------------------------------------------------------------------


def hint(facts: Facts, fid: int, key: str) -> str | None:
    return facts.hints.get(int(fid), {}).get(key)


def hint_origin(facts: Facts, key: str, value: str) -> str:
    """'PARIO_HINTS' if pario injected this hint with this value, else 'application'."""
    return "PARIO_HINTS" if facts.injected.get(key) == value else "application"


def io_component(facts: Facts, fid: int) -> str:
    """'romio', 'ompio' or '' (unknown) for a file's MPI-IO implementation."""
    mca = (hint(facts, fid, "mca:io") or "").lower()
    if mca.startswith("romio"):
        return "romio"
    if mca.startswith("ompio"):
        return "ompio"
    lib = facts.profile.job.mpi_library.lower()
    if "open mpi" in lib:
        return "ompio"
    if lib and ("mpich" in lib or "intel" in lib or "cray" in lib or "mvapich" in lib):
        return "romio"
    return ""


@dataclass(frozen=True)
class Participation:
    """How many ranks did a file's file-system (POSIX) I/O.

    ``effective`` is the participation ratio (sum b)^2 / sum b^2 over the ranks'
    bytes: k when k ranks move equal shares and the others nothing.  For a
    shared record it comes from the mean and variance of bytes per rank.
    """

    effective: float
    ranks: int
    top_rank: int
    top_share: float
    bytes: float


def participation(facts: Facts, fid: int) -> Participation | None:
    """File-system-level participation for file ``fid`` from its POSIX records (None if unknown)."""
    posix = facts.layer("posix")
    if not len(posix):
        return None
    rec = posix[uint64_ids(posix["id"]) == np.uint64(fid)]
    if not len(rec):
        return None
    b = counter(rec, "bytes_read") + counter(rec, "bytes_written")
    total = float(b.sum())
    if total <= 0:
        return None
    mpiio = facts.layer("mpiio")
    if len(mpiio):
        m = mpiio[uint64_ids(mpiio["id"]) == np.uint64(fid)]
        above = float((counter(m, "bytes_read") + counter(m, "bytes_written")).sum())
        if total < 0.5 * above:
            return None  # the POSIX records miss most of the data (partial log): no conclusion
    rank = np.asarray(rec["rank"], dtype=np.int64)
    if (rank >= 0).all():
        k = total * total / float((b * b).sum())
        i = int(np.argmax(b))
        return Participation(k, len(rec), int(rank[i]), float(b[i] / total), total)
    if len(rec) != 1:
        return None
    r = rec.row(0)
    n = float(nranks(rec, facts.nprocs)[0])
    var = float(r["variance_rank_bytes"]) if "variance_rank_bytes" in rec else math.nan
    slow_b = float(counter(rec, "slowest_rank_bytes")[0])
    fast_b = float(counter(rec, "fastest_rank_bytes")[0])
    top_rank, top_b = (
        (int(r["slowest_rank"]), slow_b) if slow_b >= fast_b else (int(r["fastest_rank"]), fast_b)
    )
    mean = total / n
    if math.isfinite(var) and var >= 0 and n >= 1:
        k = total * total / (n * (var + mean * mean))
    elif top_b >= 0.9 * total:
        k = 1.0
    else:
        return None
    return Participation(min(max(k, 1.0), n), int(n), top_rank, min(top_b / total, 1.0), total)


def uint64_ids(ids: Any) -> np.ndarray:
    """File ids as uint64 (whatever integer type the log gave them)."""
    return np.asarray(ids).astype(np.uint64)


def file_size(facts: Facts, fid: int) -> float:
    """Size of a file as the run left it: highest byte written or read + 1 (else the bytes written)."""
    size = 0.0
    for layer in ("posix", "stdio"):
        records = facts.layer(layer)
        if not len(records):
            continue
        sel = records[uint64_ids(records["id"]) == np.uint64(fid)]
        for c in ("max_byte_written", "max_byte_read"):
            if c in sel and len(sel):
                v = float_values(sel[c], -1.0)
                if len(v) and np.nanmax(v) >= 0:
                    size = max(size, float(np.nanmax(v)) + 1.0)
    if size <= 0:
        for layer in ("mpiio", "posix", "stdio"):
            records = facts.layer(layer)
            if len(records):
                sel = records[uint64_ids(records["id"]) == np.uint64(fid)]
                size = max(size, float(counter(sel, "bytes_written").sum()))
    return size


def fs_of(facts: Facts, fid: int, name: str) -> str:
    """File-system type of a file ("" when unknown), by :mod:`pario.analysis.filesystems`'s rule."""
    fs = facts.cached("filesystems", lambda: FileSystems(facts.profile))
    return fs.of([fid], [name])[0]
