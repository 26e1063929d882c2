"""The diagnosis: rules that turn a profile into findings with evidence and fixes, the stage
after the metrics (pario.analysis) and before the reports (pario.report formats the findings).

Usage::

    from pario.diagnosis import analyze, diagnose, diagnose_runs, finding_dict
    findings = diagnose(profile)                 # one run, ordered by estimated time lost
    across = diagnose_runs([p1, p2, p3])         # rules that compare runs of one application
    run = analyze(profile)                       # the report's metrics and these findings
    row = summarize(profile)                     # the part a survey row reads
    json_ready = [finding_dict(f) for f in findings]

Every rule lives in one family module (requests, load, interfaces, time,
mpiio, scaling, data, libraries), is registered with a stable id by
:func:`~pario.diagnosis.registry.rule`, and is documented in
docs/diagnosis.md.  Thresholds live in :class:`RuleConfig`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pario.analysis.run import RunAnalysis, RunSummary
from pario.analysis.run import analyze as metrics_of
from pario.analysis.run import summarize as summary_of
from pario.analysis.times import RankTimes

# Rule families, imported explicitly (no globbing) so that they register.
from pario.diagnosis import activity as _activity  # noqa: F401
from pario.diagnosis import compute_load as _compute_load  # noqa: F401
from pario.diagnosis import data as _data  # noqa: F401
from pario.diagnosis import interfaces as _interfaces  # noqa: F401
from pario.diagnosis import launcher as _launcher  # noqa: F401
from pario.diagnosis import libraries as _libraries  # noqa: F401
from pario.diagnosis import load as _load  # noqa: F401
from pario.diagnosis import mpiio as _mpiio  # noqa: F401
from pario.diagnosis import requests as _requests  # noqa: F401
from pario.diagnosis import rmw as _rmw  # noqa: F401
from pario.diagnosis import scaling as _scaling  # noqa: F401
from pario.diagnosis import time as _time  # noqa: F401
from pario.diagnosis import trace_access as _trace_access  # noqa: F401
from pario.diagnosis.advice_fit import fitted
from pario.diagnosis.config import RuleConfig, load_config, make_config
from pario.diagnosis.facts import Facts, facts_of
from pario.diagnosis.findings import Finding, Metric, Recommendation, Severity, Subject, finding_dict
from pario.diagnosis.registry import RULES, Rule
from pario.diagnosis.run_description import describe
from pario.model import Profile

__all__ = [
    "RULES",
    "analyze",
    "Finding",
    "Metric",
    "Recommendation",
    "Rule",
    "RuleConfig",
    "Severity",
    "Subject",
    "describe",
    "diagnose",
    "diagnose_runs",
    "facts_of",
    "finding_dict",
    "load_config",
    "make_config",
    "ordered",
    "summarize",
]


def ordered(findings: Sequence[Finding]) -> list[Finding]:
    """Data caveats first, then by estimated time lost (largest first), then findings without estimate."""

    def key(f: Finding) -> tuple[int, int, float, int, str]:
        return (
            0 if f.family == "data" else 1,
            0 if f.time_lost is not None else 1,
            -(f.time_lost or 0.0),
            -int(f.severity),
            f.id,
        )

    return sorted(findings, key=key)


def _run_rules(facts: Facts | Sequence[Facts], cfg: RuleConfig, across: bool, log: str,
               advice: bool = True) -> list[Finding]:
    out: list[Finding] = []
    disabled = set(cfg.disabled_rules)
    rules = [r for r in RULES.values() if r.across_runs == across and r.id not in disabled]
    desc = describe(facts) if advice and isinstance(facts, Facts) else None
    # the rules that read the others' findings last (Facts.findings_made)
    for r in sorted(rules, key=lambda r: r.after_others):
        if r.after_others and isinstance(facts, Facts):
            facts.keep_findings(tuple(out))
        for f in r.func(facts, cfg):
            out.append(_with_log(f if desc is None else fitted(f, desc), log))
    return ordered(out)


def _with_log(f: Finding, log: str) -> Finding:
    from dataclasses import replace

    return replace(f, log=log)


def diagnose(profile: Profile, config: RuleConfig | None = None, *,
             times: RankTimes | None = None, advice: bool = True, words: bool = True) -> list[Finding]:
    """Findings of one run, data caveats first, then by estimated time lost (``times``: the
    profile's ``rank_times``, if already at hand).  ``advice`` False leaves the recommendations
    as the rules make them, not fitted to the run (:func:`fitted`), for readers of the findings'
    ids, severities and time lost alone: fitting changes none of those.  ``words`` False goes
    further, for the same readers: the findings of the rules that explain what they detect
    (all but a few data caveats) say nothing (no statement, evidence, subjects, notes or
    recommendations), and the rules leave out what only their words read (the slowest rank's
    files and calls, the other findings, a layout to recommend); no id, severity or time lost
    changes."""
    cfg = config or RuleConfig()
    return _run_rules(facts_of(profile, cfg, times, words=words), cfg, False, profile.job.path,
                      advice and words)


def diagnose_runs(profiles: Sequence[Profile], config: RuleConfig | None = None) -> list[Finding]:
    """Findings that compare several runs of one application (empty for fewer than two runs)."""
    cfg = config or RuleConfig()
    if len(profiles) < 2:
        return []
    facts = [facts_of(p, cfg) for p in profiles]
    return _run_rules(facts, cfg, True, "")


def analyze(profile: Profile, *, diagnosis: bool = True, config: RuleConfig | None = None) -> RunAnalysis:
    """Every metric of the report for one run (pario.analysis) and, by default, its findings."""

    def findings(p: Profile, times: RankTimes) -> list[Finding]:
        return diagnose(p, config, times=times)

    return metrics_of(profile, diagnose=findings if diagnosis else None, config=config)


def summarize(profile: Profile, *, config: RuleConfig | None = None) -> RunSummary:
    """The part of :func:`analyze` a survey row reads, findings included, without their words
    (:func:`diagnose`'s ``words`` False: a row keeps their ids, severities and time lost)."""

    def findings(p: Profile, times: RankTimes) -> list[Finding]:
        return diagnose(p, config, times=times, words=False)

    return summary_of(profile, diagnose=findings, config=config)
