"""Paired, interleaved rounds of the recorded command: unchanged and with each change.

Every run is ``pario run --log … [--hints FILE] [--collective ALGO] -- COMMAND`` in the current
directory, with the change's MPI parameters (``OMPI_MCA_*``) in its environment.  One
unchanged run comes first and is not counted, so that every measured run finds the files the
program writes already there (a first write into the page cache costs 2-3x an overwrite).  Round
r runs the unchanged command and each change once, the order turned by one every round.  What is
measured is the I/O time of the run (the largest per-rank time in I/O, as the findings' time at
stake) and its wall time.  ``verify.json`` in the verify directory keeps every run; a verify
started again with the same command and changes reuses the runs already made (an interrupted
verify resumes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pario.errors import ParioError
from pario.tune.runner import pario_run_argv, run_local, run_slurm
from pario.verify.plan import BASELINE, Change, changes_of, combined
from pario.verify.verdict import HELPS, Verdict, judge

if TYPE_CHECKING:
    from pario.model import Profile

STATE = "verify.json"
VERIFIED = "verified.hints"
WARMUP = "warm-up"


@dataclass
class Sample:
    change: str
    round: int
    status: str  # "ok", "failed", "timeout"
    io: float = float("nan")  # seconds: the largest per-rank I/O time
    wall: float = float("nan")  # seconds: the run time
    error: str = ""


@dataclass
class Outcome:
    change: Change
    verdict: Verdict
    wall: Verdict


@dataclass
class VerifyResult:
    directory: Path
    command: list[str]
    outcomes: list[Outcome]
    verified: Path | None = None  # the hints file of the helpful changes
    samples: list[Sample] = field(default_factory=list)


def measured(log: Path) -> tuple[float, float]:
    """(largest per-rank I/O time, run time) of a run's log."""
    from pario.analysis.times import rank_times
    from pario.log import read_log

    t = rank_times(read_log(log))
    io = t.io_read + t.io_write + t.io_meta
    return float(io.max(initial=0.0)), float(t.runtime)


def run_settings(directory: Path, change: Change | None) -> tuple[list[str], dict[str, str]]:
    """The options of ``pario run`` and the environment of a run of ``change`` (None: unchanged)."""
    if change is None:
        return [], dict(os.environ)
    hints_file = str(directory / "hints" / f"{change.name}.hints")
    return change.run_args(hints_file), {**os.environ, **dict(change.env)}


def _run_once(directory: Path, change: Change | None, name: str, rnd: int, command: Sequence[str],
              timeout: float | None, slurm: Sequence[str] | None = None) -> Sample:
    """One run; ``slurm``: as a Slurm batch job with these sbatch arguments (None: here)."""
    where = directory / "runs" / f"{rnd:02d}-{name}"
    log = where / "run.pario"
    args, env = run_settings(directory, change)
    argv = pario_run_argv(log, args, command)
    if slurm is None:
        result = run_local(argv, env, Path.cwd(), where, log, timeout)
    else:
        result = run_slurm(argv, env, Path.cwd(), where, log, timeout, slurm, f"pario-verify-{name}")
    if result.status != "ok":
        return Sample(name, rnd, result.status, error=result.stderr_tail.splitlines()[0] if
                      result.stderr_tail else result.status)
    try:
        io, wall = measured(log)
    except (ParioError, OSError) as exc:
        return Sample(name, rnd, "failed", error=f"its log cannot be read: {exc}")
    return Sample(name, rnd, "ok", io, wall)


def _load(directory: Path, command: Sequence[str], changes: Sequence[Change]) -> list[Sample]:
    path = directory / STATE
    if not path.exists():
        return []
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        raise ParioError(f"{path} cannot be read: remove it to start the verify afresh") from None
    planned = json.loads(json.dumps([asdict(c) for c in changes]))  # tuples as JSON has them: lists
    if state.get("command") != list(command) or state.get("changes") != planned:
        raise ParioError(f"{directory} holds a verify of another command or other changes: remove it, or "
                         "give another --dir")
    return [Sample(**s) for s in state.get("samples", [])]


def _save(directory: Path, log: str, command: Sequence[str], changes: Sequence[Change],
          samples: Sequence[Sample], outcomes: Sequence[Outcome] = ()) -> None:
    state = {"log": log, "command": list(command), "changes": [asdict(c) for c in changes],
             "samples": [asdict(s) for s in samples],
             "verdicts": [{"change": o.change.name, "findings": list(o.change.findings),
                           "hints": dict(o.change.hints), "setting": o.change.text,
                           "predicted_s": o.change.predicted,
                           "io": asdict(o.verdict), "wall": asdict(o.wall)} for o in outcomes]}
    tmp = directory / (STATE + ".tmp")
    tmp.write_text(json.dumps(state, indent=1, allow_nan=True))
    tmp.replace(directory / STATE)


def _judge(samples: Sequence[Sample], base_name: str, change: Change, rounds: int,
           min_change: float) -> Outcome:
    by = {(s.change, s.round): s for s in samples}
    pairs = [(by[(base_name, r)], by[(change.name, r)]) for r in range(rounds)
             if (base_name, r) in by and (change.name, r) in by]
    failed = any(t.status != "ok" for _, t in pairs)
    ok = [(b, t) for b, t in pairs if b.status == "ok" and t.status == "ok"]
    io = judge([b.io for b, _ in ok], [t.io for _, t in ok], min_change=min_change, failed=failed)
    wall = judge([b.wall for b, _ in ok], [t.wall for _, t in ok], min_change=min_change, failed=failed)
    return Outcome(change, io, wall)


def _rounds(directory: Path, log: str, command: Sequence[str], all_changes: list[Change],
            todo: Sequence[Change], base_name: str, rounds: int, timeout: float | None,
            samples: list[Sample], progress: Callable[[str], None], slurm: Sequence[str] | None) -> None:
    """Run the rounds of ``todo`` against ``base_name`` that ``samples`` does not hold yet."""
    names: list[tuple[str, Change | None]] = [(base_name, None), *((c.name, c) for c in todo)]
    done = {(s.change, s.round) for s in samples}
    for r in range(rounds):
        turn = r % len(names)
        for name, change in names[turn:] + names[:turn]:
            if (name, r) in done:
                continue
            s = _run_once(directory, change, name, r, command, timeout, slurm)
            samples.append(s)
            _save(directory, log, command, all_changes, samples)
            said = f"I/O {s.io:.3f} s, run {s.wall:.3f} s" if s.status == "ok" else f"{s.status}: {s.error}"
            progress(f"round {r + 1}/{rounds}: {name}: {said}")


def verify(profile: Profile, command: Sequence[str], directory: Path, *, rounds: int = 5,
           timeout: float | None = None, min_change: float = 0.05, slurm: Sequence[str] | None = None,
           progress: Callable[[str], None] = lambda _: None) -> VerifyResult:
    """Measure every change the findings of ``profile`` suggest against the unchanged ``command``;
    ``slurm``: each run a Slurm batch job with these sbatch arguments (None: here)."""
    from pario.diagnosis import diagnose

    log = profile.job.path
    changes = changes_of(diagnose(profile))
    if not changes:
        return VerifyResult(directory, list(command), [])
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "hints").mkdir(exist_ok=True)
    samples = _load(directory, command, changes)
    for c in changes:
        (directory / "hints" / f"{c.name}.hints").write_text(c.hints_file())
    if not any(s.change == WARMUP for s in samples):
        s = _run_once(directory, None, WARMUP, 0, command, timeout, slurm)
        if s.status != "ok":
            raise ParioError(f"the unchanged command failed ({s.error}): nothing can be compared with it; "
                             f"its output is in {directory / 'runs'}")
        samples.append(s)
        progress(f"warm-up (not counted): I/O {s.io:.3f} s, run {s.wall:.3f} s")
    _rounds(directory, log, command, changes, changes, BASELINE, rounds, timeout, samples, progress, slurm)
    outcomes = [_judge(samples, BASELINE, c, rounds, min_change) for c in changes]
    helpful = [o.change for o in outcomes if o.verdict.verdict == HELPS]
    both = combined(helpful)
    if both is not None:
        (directory / "hints" / f"{both.name}.hints").write_text(both.hints_file())
        _rounds(directory, log, command, changes, [both], f"{BASELINE}-2", rounds, timeout, samples,
                progress, slurm)
        outcomes.append(_judge(samples, f"{BASELINE}-2", both, rounds, min_change))
    _save(directory, log, command, changes, samples, outcomes)
    best = _best(outcomes)
    verified = None
    if best is not None:
        verified = directory / VERIFIED
        verified.write_text(best.hints_file())
    return VerifyResult(directory, list(command), outcomes, verified, samples)


def _best(outcomes: Sequence[Outcome]) -> Change | None:
    """The helpful change that saved the largest share of its own unchanged runs' I/O time (the
    combination only when it saved more than every change alone)."""
    helps = [o for o in outcomes if o.verdict.verdict == HELPS]
    return min(helps, key=lambda o: o.verdict.share).change if helps else None
