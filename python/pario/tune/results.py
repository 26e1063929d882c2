"""What a study found: the best configuration against the default, measured the same way.

A configuration's samples are the values of all its runs, over all its trials.  The best is
the configuration with the best median; it is called better than the default only when a
one-sided Mann-Whitney U test of its samples against the default's gives p <= ALPHA (with at
least VERIFY_SAMPLES samples on each side); otherwise the difference is inside the noise and
the verdict says so.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from pario.tune.objective import MAXIMISE, show_value
from pario.tune.space import DEFAULT
from pario.tune.study import ALPHA, VERIFY_SAMPLES, budget_count, config_key, pooled_samples, ranked


@dataclass(frozen=True)
class Sampled:
    config: dict[str, str]
    samples: list[float]

    @property
    def median(self) -> float:
        return float(statistics.median(self.samples))

    @property
    def spread(self) -> float:
        """(max - min) / median of the samples, 0 for one sample."""
        if len(self.samples) < 2 or self.median == 0:
            return 0.0
        return (max(self.samples) - min(self.samples)) / abs(self.median)


@dataclass(frozen=True)
class TrialRow:
    number: int
    role: str
    state: str
    config: dict[str, str]
    value: float | None
    values: list[float]
    error: str = ""
    ignored_hints: list = field(default_factory=list)
    predicted: float | None = None


@dataclass(frozen=True)
class Summary:
    study: str
    objective: str
    command: list[str]
    strategy: str
    trials: list[TrialRow]
    default: Sampled | None
    best: Sampled | None
    speedup: float | None  # best over default, > 1 is better whatever the direction
    p_value: float | None
    verdict: str  # "better", "within-noise", "default-best", "no-result"
    budget_used: int
    failed: int
    notes: list[str]
    #: pract: median absolute percentage error of the predictions made before the trials ran
    prediction_mdape: float | None = None

    def to_json(self) -> dict:
        out = asdict(self)
        for key in ("default", "best"):
            sampled = getattr(self, key)
            if sampled is not None:
                out[key].update(median=sampled.median, spread=sampled.spread)
        return out


def speedup(objective: str, best: float, default: float) -> float:
    """How many times better the best is: bandwidth ratio, or time ratio inverted."""
    if objective in MAXIMISE:
        return best / default if default > 0 else float("inf")
    return default / best if best > 0 else float("inf")


def mann_whitney_p(objective: str, best: Sequence[float], default: Sequence[float]) -> float:
    """One-sided p of 'best is better than default' (exact Mann-Whitney U)."""
    from scipy.stats import mannwhitneyu

    alternative = "greater" if objective in MAXIMISE else "less"
    return float(mannwhitneyu(list(best), list(default), alternative=alternative, method="exact").pvalue)


def _rows(study) -> list[TrialRow]:
    rows = []
    for t in study.get_trials(deepcopy=False):
        runs = t.user_attrs.get("runs", [])
        error = t.user_attrs.get("error", "")
        for r in runs:
            if r.get("status") != "ok":
                error = f"{r.get('status')}: {r.get('error', '')}"
        rows.append(TrialRow(t.number, str(t.user_attrs.get("role", "?")), t.state.name.lower(),
                             dict(t.user_attrs.get("config", {})), t.value if t.value is not None else None,
                             list(t.user_attrs.get("values", [])), error.strip(),
                             list(t.user_attrs.get("ignored_hints", [])), t.user_attrs.get("predicted")))
    return rows


def summarise(study) -> Summary:
    """The summary of a stored study (``study``: an Optuna study made by pario tune)."""
    from optuna.trial import TrialState

    info = study.user_attrs["pario"]
    objective = info["objective"]
    rows = _rows(study)
    samples = pooled_samples(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))
    configs = {config_key(r.config): r.config for r in rows if r.state == "complete"}
    default_cfg = next((r.config for r in rows if r.role == "default"), None)
    default = Sampled(default_cfg, samples[config_key(default_cfg)]) if (
        default_cfg is not None and samples.get(config_key(default_cfg))) else None
    order = ranked(samples, objective)
    best = Sampled(configs[order[0]], samples[order[0]]) if order else None
    notes: list[str] = []
    ratio = p = None
    if best is None:
        verdict = "no-result"
    elif default is None:
        verdict = "no-result"
        notes.append("the default configuration has no successful run: no speed-up can be given")
    elif config_key(best.config) == config_key(default.config):
        verdict = "default-best"
        ratio = 1.0
    else:
        ratio = speedup(objective, best.median, default.median)
        if min(len(best.samples), len(default.samples)) < VERIFY_SAMPLES:
            verdict = "within-noise"
            notes.append(f"fewer than {VERIFY_SAMPLES} samples of the best or the default: "
                         "no winner declared")
        else:
            p = mann_whitney_p(objective, best.samples, default.samples)
            verdict = "better" if p <= ALPHA else "within-noise"
    if verdict == "better" and best is not None and default is not None:
        best, p, ratio, said = _minimal_best(study, objective, samples, best, default, (p, ratio))
        notes += said
    ignored = {(h[1], h[2]) for r in rows for h in r.ignored_hints}
    if ignored:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(ignored)[:6])
        notes.append(f"hints the MPI library ignored (their trials did not test them): {shown}")
    from pario.tune.pract import held_out_error

    ended = (TrialState.COMPLETE, TrialState.FAIL)
    return Summary(study.study_name, objective, list(info["command"]), info.get("strategy", "?"), rows,
                   default, best, ratio, p, verdict,
                   budget_count(study.get_trials(deepcopy=False, states=ended)),
                   sum(1 for r in rows if r.state == "fail"), notes, held_out_error(study))


def _minimal_best(study, objective: str, samples: Mapping[str, list[float]], best: Sampled, default: Sampled,
                  tested: tuple[float | None, float | None]) -> tuple[Sampled, float | None, float | None,
                                                                     list[str]]:
    """The best the summary hands back: the ablation's minimal configuration (pario.tune.ablation)
    when it is still better than the default on its own samples, with a note per setting left
    out; else the whole best.  Returns (best, p, speed-up, notes)."""
    from pario.tune.ablation import ATTR, from_json

    data = study.user_attrs.get(ATTR)
    if not data:
        return best, *tested, []
    m = from_json(data)
    key = config_key(m.config)
    if not m.dropped or key not in samples or key == config_key(default.config):
        return best, *tested, []
    small = Sampled(m.config, samples[key])
    p = mann_whitney_p(objective, small.samples, default.samples)
    left = ", ".join(f"{d.name}={d.value}" for d in m.dropped)
    if p > ALPHA:
        return best, *tested, [f"an ablation found settings the win may not need ({left}), but without them "
                               "the best is not better than the default: the hints file keeps them all"]
    notes = [f"left out of the hints file after an ablation: {d.name}={d.value} (without it "
             f"{show_value(objective, d.median_without)} median, with it "
             f"{show_value(objective, d.median_with)}, p = {d.p:.2f}: the win does not need it)"
             for d in m.dropped]
    return small, p, speedup(objective, small.median, default.median), notes


def changed(config: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in config.items() if v != DEFAULT}


def dumps(summary: Summary) -> str:
    return json.dumps(summary.to_json(), indent=2, default=str)
