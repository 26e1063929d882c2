"""The diagnosis engine: rules that turn a profile into findings with evidence and fixes.

Usage::

    from pario.analysis.diagnosis import diagnose, diagnose_runs, findings_renderable, finding_dict
    findings = diagnose(profile)                 # one run, ordered by estimated time lost
    across = diagnose_runs([p1, p2, p3])         # rules that compare runs of one application
    console.print(findings_renderable(findings))
    json_ready = [finding_dict(f) for f in findings]

Every rule lives in one family module (requests, load, interfaces, time,
mpiio, scaling, data, libraries), is registered with a stable id by
:func:`~pario.analysis.diagnosis.registry.rule`, and is documented in
docs/diagnosis.md.  Thresholds live in :class:`RuleConfig`.
"""

from __future__ import annotations

from collections.abc import Sequence

# Rule families, imported explicitly (no globbing) so that they register.
from pario.analysis.diagnosis import activity as _activity  # noqa: F401
from pario.analysis.diagnosis import compute_load as _compute_load  # noqa: F401
from pario.analysis.diagnosis import data as _data  # noqa: F401
from pario.analysis.diagnosis import interfaces as _interfaces  # noqa: F401
from pario.analysis.diagnosis import launcher as _launcher  # noqa: F401
from pario.analysis.diagnosis import libraries as _libraries  # noqa: F401
from pario.analysis.diagnosis import load as _load  # noqa: F401
from pario.analysis.diagnosis import mpiio as _mpiio  # noqa: F401
from pario.analysis.diagnosis import requests as _requests  # noqa: F401
from pario.analysis.diagnosis import rmw as _rmw  # noqa: F401
from pario.analysis.diagnosis import scaling as _scaling  # noqa: F401
from pario.analysis.diagnosis import time as _time  # noqa: F401
from pario.analysis.diagnosis import trace_access as _trace_access  # noqa: F401
from pario.analysis.diagnosis.advice_fit import fitted
from pario.analysis.diagnosis.config import RuleConfig, load_config, make_config
from pario.analysis.diagnosis.facts import Facts, facts_of
from pario.analysis.diagnosis.findings import Finding, Metric, Recommendation, Severity, Subject, finding_dict
from pario.analysis.diagnosis.registry import RULES, Rule
from pario.analysis.diagnosis.render import (
    diagnosis_dict,
    findings_markdown,
    findings_renderable,
    log_summary,
)
from pario.analysis.diagnosis.run_description import describe
from pario.analysis.times import RankTimes
from pario.model import Profile

__all__ = [
    "RULES",
    "Finding",
    "Metric",
    "Recommendation",
    "Rule",
    "RuleConfig",
    "Severity",
    "Subject",
    "diagnose",
    "diagnose_runs",
    "diagnosis_dict",
    "facts_of",
    "finding_dict",
    "findings_markdown",
    "findings_renderable",
    "load_config",
    "log_summary",
    "make_config",
    "ordered",
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


def _run_rules(facts: Facts | Sequence[Facts], cfg: RuleConfig, across: bool, log: str) -> list[Finding]:
    out: list[Finding] = []
    disabled = set(cfg.disabled_rules)
    rules = [r for r in RULES.values() if r.across_runs == across and r.id not in disabled]
    desc = describe(facts) if isinstance(facts, Facts) else None
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
             times: RankTimes | None = None) -> list[Finding]:
    """Findings of one run, data caveats first, then by estimated time lost (``times``: the
    profile's ``rank_times``, if already at hand)."""
    cfg = config or RuleConfig()
    return _run_rules(facts_of(profile, cfg, times), cfg, False, profile.job.path)


def diagnose_runs(profiles: Sequence[Profile], config: RuleConfig | None = None) -> list[Finding]:
    """Findings that compare several runs of one application (empty for fewer than two runs)."""
    cfg = config or RuleConfig()
    if len(profiles) < 2:
        return []
    facts = [facts_of(p, cfg) for p in profiles]
    return _run_rules(facts, cfg, True, "")
