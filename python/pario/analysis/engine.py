"""What pario's collective-write engine did for each MPI-IO file (``pario run --collective``).

The runtime counts ``engine_writes``, ``engine_cycles``, ``engine_fallbacks``, the
``engine_fb_*`` reasons and the ``engine_calls_*`` per algorithm once per collective call (on
the file communicator's rank 0), so their sum over a file's records is the number of calls;
``engine_algorithm``, ``engine_shuffle`` and ``engine_aggregators`` are what every rank saw
(reduced by max); the four times are per-rank sums, summed over the ranks by the reduction
(docs/log-format.md).  Each algorithm:shuffle variant's calls and their time (the slowest
rank's, once per call) and auto's choice (``engine_auto_*``) say what ``auto`` tried and kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pario.collective import (
    ALGORITHM_CALLS,
    ALGORITHM_CODES,
    DIRECT,
    FALLBACK_REASONS,
    SHUFFLE_CODES,
    VARIANTS,
    variant_column,
    variant_of_code,
)
from pario.model import Profile
from pario.model.rankio import counter_column
from pario.table import as_table, group_codes, group_reduce, group_sum
from pario.units import count, seconds

_VARIANT_CALLS = tuple(variant_column(v, "calls") for v in VARIANTS)
_VARIANT_TIMES = tuple(variant_column(v, "time") for v in VARIANTS)
_SUMMED = ("engine_writes", "engine_cycles", "engine_fallbacks", "engine_setup_time", "engine_shuffle_time",
           "engine_write_time", "engine_wait_time", "engine_auto_explored", *(c for c, _ in FALLBACK_REASONS),
           *(c for c, _ in ALGORITHM_CALLS), *_VARIANT_CALLS, *_VARIANT_TIMES)
_MAXED = ("engine_algorithm", "engine_shuffle", "engine_aggregators", "engine_auto_kept_one",
          "engine_auto_kept_many")


@dataclass(frozen=True)
class VariantRun:
    """The calls of a file one algorithm:shuffle variant served, and their time (slowest rank)."""

    variant: str
    calls: int
    time: float

    @property
    def per_call(self) -> float:
        return self.time / self.calls if self.calls else 0.0


@dataclass(frozen=True)
class EngineFile:
    """The engine's work on one file, over all its records."""

    id: int
    name: str
    #: the algorithm and shuffle of the last call served ("" when the log has no code for them;
    #: "direct" when auto had each rank write its own range)
    algorithm: str
    shuffle: str
    #: collective write calls the engine served, and their buffer cycles in all
    calls: int
    cycles: int
    #: aggregators of the last call the engine served
    aggregators: int
    #: seconds, summed over ranks: agreeing and exchanging requests, moving the pieces (and
    #: waiting for them), the aggregators' pread/pwrite, waiting on writer threads
    setup_time: float
    shuffle_time: float
    write_time: float
    wait_time: float
    #: collective write calls the engine gave to the MPI library, and why: (reason, calls)
    fallbacks: int
    fallback_reasons: tuple[tuple[str, int], ...] = ()
    #: the calls served with each algorithm that served any: (algorithm, calls); empty for logs
    #: without these counters (then only the last call's algorithm is known)
    algorithm_calls: tuple[tuple[str, int], ...] = ()
    #: every algorithm:shuffle variant that served calls, most calls first; empty for older logs
    variants: tuple[VariantRun, ...] = ()
    #: auto: the calls it ran a variant to measure it, and the variant it kept for calls of one
    #: buffer cycle and of several ('' when auto did not choose)
    explored: int = 0
    kept_one: str = ""
    kept_many: str = ""

    def auto_text(self) -> str:
        """``auto kept comm:rma-lock (several buffer cycles) after trying write-comm:p2p (4 calls,
        1.2 ms each), comm:rma-lock (20 calls, 0.8 ms each)``; '' when auto chose nothing."""
        kept = [f"{v} ({what})" for v, what in ((self.kept_many, "calls of several buffer cycles"),
                                               (self.kept_one, "calls of one buffer cycle")) if v]
        if not kept:
            return ""
        tried = ", ".join(f"{v.variant} ({_n(v.calls, 'call')}, {seconds(v.per_call)} each)"
                          for v in self.variants)
        return f"auto kept {' and '.join(kept)}, of {tried} (time of the slowest rank)"

    def _with_shuffles(self, algorithm: str) -> str:
        """``comm:p2p/rma-lock``: an algorithm with the shuffles its calls used (from the variants)."""
        shuffles = [v.variant.split(":", 1)[1] for v in self.variants
                    if ":" in v.variant and v.variant.split(":", 1)[0] == algorithm]
        return f"{algorithm}:{'/'.join(shuffles)}" if shuffles else algorithm

    def served_text(self) -> str:
        """``collective engine: write-comm/p2p, 8 calls, 8 cycles, 2 aggregators; shuffle 1.2 ms,
        write 3.4 ms, wait 0.5 ms (summed over ranks)``; '' when the engine served no call."""
        if not self.calls:
            return ""
        counts = [_n(self.calls, "call"), _n(self.cycles, "cycle"), _n(self.aggregators, "aggregator")]
        if self.algorithm == DIRECT:
            # auto's choice when each rank wrote one contiguous range of its own: no shuffle, and
            # (unless other calls of the file cycled) no cycles or aggregators to speak of
            how = "direct (auto: each rank wrote its own range)"
            counts = counts if self.cycles else counts[:1]
        elif len(self.algorithm_calls) > 1:  # auto picked several: each with its calls and shuffles
            how = ", ".join(f"{self._with_shuffles(a)} ({count(n)})" for a, n in self.algorithm_calls)
            if self.shuffle and not self.variants:  # an older log: only the last call's shuffle is known
                how = f"{how}, the last call's shuffle {self.shuffle}"
        else:
            how = "/".join(p for p in (self.algorithm or "algorithm unknown", self.shuffle) if p)
        text = (f"collective engine: {how}, {', '.join(counts)}; setup {seconds(self.setup_time)}, "
                f"shuffle {seconds(self.shuffle_time)}, "
                f"write {seconds(self.write_time)}, wait {seconds(self.wait_time)} (summed over ranks)")
        return f"{text}; {self.auto_text()}" if self.auto_text() else text

    def fallback_text(self) -> str:
        """``2 collective writes went to the MPI library: atomic mode``; '' without fallbacks."""
        if not self.fallbacks:
            return ""
        reasons = [(r, n) for r, n in self.fallback_reasons if n]
        if len(reasons) == 1 and reasons[0][1] == self.fallbacks:
            why = reasons[0][0]
        else:
            named = sum(n for _, n in reasons)
            parts = [f"{r} ({count(n)})" for r, n in reasons]
            if named < self.fallbacks:
                parts.append(f"reason not recorded ({count(self.fallbacks - named)})")
            why = ", ".join(parts)
        writes = "collective write went" if self.fallbacks == 1 else "collective writes went"
        return f"{count(self.fallbacks)} {writes} to the MPI library: {why}"

    def as_dict(self) -> dict[str, object]:
        """The JSON form (docs/report-json.md, ``collective_engine``)."""
        return {"id": self.id, "name": self.name, "algorithm": self.algorithm or None,
                "algorithm_calls": dict(self.algorithm_calls),
                "shuffle": self.shuffle or None, "calls": self.calls, "cycles": self.cycles,
                "aggregators": self.aggregators, "setup_time": self.setup_time,
                "shuffle_time": self.shuffle_time,
                "write_time": self.write_time, "wait_time": self.wait_time, "fallbacks": self.fallbacks,
                "fallback_reasons": {c.removeprefix("engine_fb_"): n for (c, _), (_, n)
                                     in zip(FALLBACK_REASONS, self.fallback_reasons, strict=True)},
                "variants": [{"variant": v.variant, "calls": v.calls, "time": v.time} for v in self.variants],
                "auto": {"explored": self.explored, "kept_one_cycle": self.kept_one or None,
                         "kept_several_cycles": self.kept_many or None}}


def _n(n: int, word: str) -> str:
    return f"{count(n)} {word}{'' if n == 1 else 's'}"


def _variants(r: dict[str, float]) -> tuple[VariantRun, ...]:
    """The variants that served calls, most calls first (then in the log's order)."""
    runs = [VariantRun(v, int(r[c]), float(r[t])) for v, c, t in zip(VARIANTS, _VARIANT_CALLS, _VARIANT_TIMES,
                                                                        strict=True) if r[c] > 0]
    return tuple(sorted(runs, key=lambda v: -v.calls))


def engine_files(profile: Profile) -> tuple[EngineFile, ...]:
    """Every MPI-IO file on which the engine served or gave back a collective write, the most
    calls first (then by name); empty for logs without the engine's counters (Darshan, older
    pario logs) or when it was not selected."""
    records = as_table(profile.layer("mpiio"))
    if not len(records) or not any(c in records for c in ("engine_writes", "engine_fallbacks")):
        return ()
    data = {c: counter_column(records, c) for c in (*_SUMMED, *_MAXED)}
    active = (data["engine_writes"] > 0) | (data["engine_fallbacks"] > 0)
    if not active.any():
        return ()
    ids, codes = group_codes(records["id"][active], sort=False)
    n = len(ids)
    first = group_reduce(np.arange(len(codes)), codes, n, "min")
    names = records["name"][active][first]
    per_file = {**{c: group_sum(data[c][active], codes, n) for c in _SUMMED},
                **{c: group_reduce(data[c][active], codes, n, "max") for c in _MAXED}}
    out = []
    for i in range(n):
        r = {c: v[i] for c, v in per_file.items()}
        out.append(EngineFile(
            id=int(ids[i]), name=str(names[i]),
            algorithm=ALGORITHM_CODES.get(int(r["engine_algorithm"]), ""),
            shuffle=SHUFFLE_CODES.get(int(r["engine_shuffle"]), ""),
            calls=int(r["engine_writes"]), cycles=int(r["engine_cycles"]),
            aggregators=int(r["engine_aggregators"]), setup_time=float(r["engine_setup_time"]),
            shuffle_time=float(r["engine_shuffle_time"]),
            write_time=float(r["engine_write_time"]), wait_time=float(r["engine_wait_time"]),
            fallbacks=int(r["engine_fallbacks"]),
            fallback_reasons=tuple((words, int(r[c])) for c, words in FALLBACK_REASONS),
            algorithm_calls=tuple((a, int(r[c])) for c, a in ALGORITHM_CALLS if r[c] > 0),
            variants=_variants(r), explored=int(r["engine_auto_explored"]),
            kept_one=variant_of_code(int(r["engine_auto_kept_one"])),
            kept_many=variant_of_code(int(r["engine_auto_kept_many"]))))
    return tuple(sorted(out, key=lambda e: (-(e.calls + e.fallbacks), e.name)))
