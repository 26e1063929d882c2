"""Several runs of one application at different rank counts: the scaling table.

With run r on P_r ranks, run time T_r, useful computation summed over
ranks sum(U)_r, and the smallest run as reference (ref):

* strong scaling (fixed total problem): speedup S_r = T_ref / T_r, ideal
  P_r / P_ref, scaling efficiency S_r x P_ref / P_r, computation
  scalability CS_r = sum(U)_ref / sum(U)_r;
* weak scaling (fixed problem per rank): speedup S_r = (P_r / P_ref) x
  T_ref / T_r (scaled speedup), scaling efficiency T_ref / T_r,
  CS_r = (sum(U)_ref / P_ref) / (sum(U)_r / P_r);
* global efficiency GE_r = PE_r x CS_r.

When the mode is not given it is inferred from the bytes moved: the mode
under which bytes stay the most constant (total bytes for strong, bytes per
rank for weak) wins.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pario.analysis.run import RunAnalysis
from pario.values import Value, combine_notes, ratio

MODES = ("auto", "strong", "weak")


@dataclass(frozen=True)
class ScalingRow:
    label: str
    path: str
    nprocs: int
    runtime: float
    speedup: Value
    ideal_speedup: float
    scaling_efficiency: Value
    parallel_efficiency: Value
    load_balance: Value
    communication_efficiency: Value
    io_efficiency: Value
    computation_scalability: Value
    global_efficiency: Value
    io_time_mean: Value
    io_time_max: Value
    io_share: Value
    io_bytes: Value
    io_bandwidth: Value


@dataclass(frozen=True)
class ScalingAnalysis:
    mode: str
    mode_reason: str
    reference_nprocs: int
    rows: tuple[ScalingRow, ...]
    notes: tuple[str, ...]
    #: findings that compare the runs (pario.diagnosis.diagnose_runs)
    findings: tuple[Any, ...] = ()
    #: said before the table: the runs are not of one executable (mixed_executables)
    warning: str = ""


def mixed_executables(runs: Sequence[RunAnalysis]) -> str:
    """One line saying that the runs come from different executables ('' when they do not).

    A scaling table compares runs of one application; ``pario report`` shows runs of
    different executables side by side instead, unless a scaling mode is forced.
    """
    exes = sorted({r.job.exe for r in runs if r.job.exe})
    if len(exes) < 2:
        return ""
    return f"These logs come from {len(exes)} different executables ({', '.join(told_apart(exes))})."


def told_apart(paths: Sequence[str]) -> list[str]:
    """Names for distinct executables that say what differs: their file names where those differ
    (``ior``, ``mpi-io-test``), else their paths below the directories they share
    (``3.2.0/mpi-io-test``, ``3.5.0/mpi-io-test``), else the paths whole."""
    names = [p.rsplit("/", 1)[-1] for p in paths]
    if len(set(names)) == len(names):
        return names
    absolute = [os.path.normpath(p) for p in paths]
    try:
        shared = os.path.commonpath(absolute)
    except ValueError:  # absolute and relative paths together
        return list(paths)
    below = [os.path.relpath(p, shared) if shared not in ("", "/", ".") else p for p in absolute]
    return below if len(set(below)) == len(below) and "." not in below else list(paths)


def infer_mode(runs: Sequence[RunAnalysis]) -> tuple[str, str]:
    """'strong' or 'weak' from how the bytes moved change with the rank count."""
    data = [(r.job.nprocs, r.totals.bytes.value or 0.0) for r in runs]
    if any(b <= 0 for _, b in data):
        return "strong", "assumed (some runs moved no bytes, so the mode cannot be inferred; use --scaling)"
    totals = [b for _, b in data]
    per_rank = [b / p for p, b in data]
    spread_total = max(totals) / min(totals)
    spread_rank = max(per_rank) / min(per_rank)
    if spread_total <= spread_rank:
        return "strong", (f"inferred from the bytes moved: the total varies x{spread_total:.2f} across runs, "
                          f"bytes per rank x{spread_rank:.2f}")
    return "weak", (f"inferred from the bytes moved: bytes per rank vary x{spread_rank:.2f} across runs, "
                    f"the total x{spread_total:.2f}")


def scaling_analysis(runs: Sequence[RunAnalysis], mode: str = "auto") -> ScalingAnalysis:
    """The scaling table of several runs, smallest rank count first."""
    if mode not in MODES:
        raise ValueError(f"scaling mode must be one of {MODES}")
    ordered = sorted(runs, key=lambda r: (r.job.nprocs, r.job.runtime))
    if mode == "auto":
        mode, reason = infer_mode(ordered)
    else:
        reason = "chosen by the user"
    ref = ordered[0]
    rows = tuple(_row(run, ref, mode) for run in ordered)
    notes = []
    mixed = mixed_executables(ordered)
    warning = f"{mixed} A scaling table compares runs of one application: read it with care." if mixed else ""
    counts = [r.job.nprocs for r in ordered]
    if len(set(counts)) < len(counts):
        notes.append("Several logs have the same rank count.")
    return ScalingAnalysis(mode, reason, ref.job.nprocs, rows, tuple(notes), warning=warning)


def one_rank_count(runs: Sequence[RunAnalysis]) -> int | None:
    """The rank count of several runs that all have the same one (a comparison, not scaling),
    else None."""
    counts = {r.job.nprocs for r in runs}
    return counts.pop() if len(runs) > 1 and len(counts) == 1 else None


def comparison_rows(runs: Sequence[RunAnalysis]) -> tuple[ScalingRow, ...]:
    """The rows of runs compared at one rank count, in the order given (the first is the
    reference); their speedups are the first run's time over each run's."""
    return tuple(_row(run, runs[0], "strong") for run in runs)


def _row(run: RunAnalysis, ref: RunAnalysis, mode: str) -> ScalingRow:
    p, p_ref = run.job.nprocs, ref.job.nprocs
    t, t_ref = run.job.runtime, ref.job.runtime
    grow = p / p_ref if p_ref else math.nan
    if mode == "strong":
        speedup = ratio(t_ref, t, when_zero="run time is zero")
        ideal = grow
        eff = ratio(t_ref * p_ref, t * p, when_zero="run time is zero")
    else:
        speedup = ratio(t_ref * grow, t, when_zero="run time is zero")
        ideal = grow
        eff = ratio(t_ref, t, when_zero="run time is zero")
    cs = _computation_scalability(run, ref, mode)
    pe = run.pop.parallel_efficiency
    if pe.available and cs.available:
        approx, note = combine_notes(pe, cs)
        ge = Value.of((pe.value or 0.0) * (cs.value or 0.0), approximate=approx, note=note)
    else:
        ge = Value.unavailable(pe.reason or cs.reason)
    io = run.io.overall
    nbytes = run.totals.bytes
    bw = (ratio(nbytes.value or 0.0, io.total.time_max.value or 0.0, unit="B/s",
                when_zero="no I/O time", approximate=io.total.time_max.approximate,
                note=io.total.time_max.note)
          if (nbytes.value or 0.0) > 0 else Value.unavailable("no bytes moved", "B/s"))
    label = run.job.path.rsplit("/", 1)[-1]
    return ScalingRow(label, run.job.path, p, t, speedup, ideal, eff, pe, run.pop.load_balance,
                      run.pop.communication_efficiency, run.pop.io_efficiency, cs, ge, io.total.time_mean,
                      io.total.time_max, io.total.share_of_runtime, nbytes, bw)


def _computation_scalability(run: RunAnalysis, ref: RunAnalysis, mode: str) -> Value:
    u, u_ref = run.totals.useful, ref.totals.useful
    if not (u.available and u_ref.available):
        return Value.unavailable(u.reason or u_ref.reason)
    if mode == "strong":
        return ratio(u_ref.value or 0.0, u.value or 0.0, when_zero="no computation time")
    per = (u.value or 0.0) / run.job.nprocs
    per_ref = (u_ref.value or 0.0) / ref.job.nprocs
    return ratio(per_ref, per, when_zero="no computation time")
