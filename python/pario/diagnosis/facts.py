"""What the rules read: the model, filtered to the application's files.

:func:`facts_of` is computed once per profile; rules are pure functions of
``(Facts, RuleConfig)``.  The helpers that read it are in :mod:`.columns` (columns of the
records), :mod:`.stake` (time at stake) and :mod:`.file_facts` (one file's hints, ranks, size).
Nothing here formats text for people; the commands a finding recommends are built in
:mod:`pario.diagnosis.commands`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from pario.analysis.mpihints import injected_hints
from pario.analysis.times import RankTimes, rank_times
from pario.diagnosis.config import RuleConfig
from pario.model import LAYERS, LIBRARY_LAYERS, Profile
from pario.model.rankio import NESTED_IN, layer_members
from pario.names import NameIndex, matching
from pario.table import Table, as_table, distinct, isin

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
    #: False: the findings are made without their words (:func:`pario.diagnosis.diagnose`), and
    #: the rules leave out what only the words read
    words: bool = True

    @property
    def source(self) -> str:
        return self.profile.job.source

    @property
    def findings_made(self) -> tuple[Any, ...] | None:
        """The findings the other rules made, for a rule registered ``after_others`` (None until the
        diagnosis has run them: :meth:`keep_findings`)."""
        return self._memo.get(_FINDINGS_MADE)

    def keep_findings(self, findings: tuple[Any, ...]) -> None:
        self._memo[_FINDINGS_MADE] = findings

    def cached(self, key: Any, make: Callable[[], T]) -> T:
        """``make()``, computed once per Facts (arrays come back read-only: share, do not modify)."""
        try:
            return self._memo[key]
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
            nested = isin(inner["id"], distinct(outer["id"]))
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


def facts_of(profile: Profile, cfg: RuleConfig, times: RankTimes | None = None, *,
             words: bool = True) -> Facts:
    """Everything the rules need from one profile (``times``: its ``rank_times``, if already at hand;
    ``words``: :attr:`Facts.words`)."""
    files: dict[str, Table] = {}
    ignored: dict[str, int] = {}
    patterns = tuple(cfg.ignored_path_patterns)
    names: dict[str, tuple[NameIndex, np.ndarray | None]] = {}
    for layer in LAYERS:
        records = as_table(profile.layer(layer))
        if len(records) and "name" in records:
            names_of = np.asarray(records["name"], dtype=object)
            index = NameIndex.build(names_of)
            drop = matching(names_of, patterns, index) | own_log(names_of, profile.job.path, index)
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
        words=words,
    )
    for layer, known in names.items():
        facts._memo[("names", layer)] = known
    return facts


def own_log(names: np.ndarray, path: str, index: NameIndex | None = None) -> np.ndarray:
    """Per name: the profiler's own log, ``path``, or its temporary name (``path.*``): never the
    application's file.  As the glob patterns ``glob.escape(path)`` and that followed by ``.*``
    would match, without a regular expression made for each log."""
    if not path or not len(names):
        return np.zeros(len(names), dtype=bool)
    if index is not None:
        out = np.zeros(len(names), dtype=bool)
        out[index.rows_with(path, start=True, end=True)] = True
        out[index.rows_with(path + ".", start=True)] = True
        return out
    dot = path + "."
    values = (v if isinstance(v, str) else str(v) for v in names.tolist())
    return np.fromiter((v == path or v.startswith(dot) for v in values), dtype=bool, count=len(names))


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
