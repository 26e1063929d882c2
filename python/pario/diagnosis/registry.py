"""The rule catalogue: a decorator registers each rule under a stable id.

A rule is a pure function ``(facts, cfg) -> Iterable[Finding]`` (one run) or
``(facts_list, cfg) -> Iterable[Finding]`` (several runs of one
application).  :func:`finding` builds a Finding with the rule's title,
family and config keys filled in and its severity derived from the time lost;
:func:`explained` makes a rule function of a detector and its words (:mod:`hits`), and
:func:`build` is where a hit and its words become that Finding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Finding, Metric, Recommendation, Severity, Subject
from pario.diagnosis.hits import UNSAID, Detector, Explainer, H, Hit, Words
from pario.units import seconds as _seconds

RunRule = Callable[[Any, RuleConfig], Iterable[Finding]]
#: what @rule decorates: a rule yielding findings, or a detector yielding hits (with ``words``)
Decorated = TypeVar("Decorated", bound=Callable[[Any, RuleConfig], Iterable[Any]])


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    family: str
    config_keys: tuple[str, ...]
    func: RunRule
    across_runs: bool = False
    #: runs after the other rules of the run, and may read their findings (Facts.findings_made)
    after_others: bool = False
    #: what the time a finding loses is: "io" (time in I/O calls), "wait" (ranks waiting for each
    #: other's I/O outside I/O calls) or "compute"
    time_class: str = "io"

    @property
    def summary(self) -> str:
        doc = (self.func.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else self.title


#: Every rule, by id, in registration order.
RULES: dict[str, Rule] = {}


def rule(
    rule_id: str, *, title: str, family: str, config: Sequence[str] = (), across_runs: bool = False,
    words: Callable[[Any, Any, RuleConfig], Any] | None = None, after_others: bool = False,
    time_class: str = "io",
) -> Callable[[Decorated], Decorated]:
    """Register a rule under ``rule_id`` (ids are stable: never reuse or rename one).

    With ``words``, the decorated function is a detector that yields hits, and ``words`` explains
    each (:mod:`pario.diagnosis.hits`); without, it yields findings itself."""
    fields = set(RuleConfig.__dataclass_fields__)
    unknown = [k for k in config if k not in fields]
    if unknown:
        raise ValueError(f"rule {rule_id}: unknown config keys {unknown}")

    def deco(func: Decorated) -> Decorated:
        if rule_id in RULES:
            raise ValueError(f"rule id {rule_id} registered twice")
        run: RunRule = func if words is None else explained(rule_id, func, words, time_class)
        RULES[rule_id] = Rule(
            rule_id, title, family, tuple(config), run, across_runs, after_others, time_class
        )
        return func

    return deco


def severity_for(share: float | None, cfg: RuleConfig, floor: Severity = Severity.INFO,
                 seconds: float | None = None) -> Severity:
    """Severity from the time lost as a share of the run and in seconds (never below ``floor``):
    critical from ``severity_critical_share`` and ``severity_critical_seconds`` on, a warning from
    ``severity_warning_share`` and ``severity_warning_seconds``; ``seconds`` None: the share alone."""
    sev = Severity.INFO
    secs = float("inf") if seconds is None else seconds
    if share is not None:
        if share >= cfg.severity_critical_share and secs >= cfg.severity_critical_seconds:
            sev = Severity.CRITICAL
        elif share >= cfg.severity_warning_share and secs >= cfg.severity_warning_seconds:
            sev = Severity.WARNING
    return max(sev, floor)


def finding(
    rule_id: str,
    cfg: RuleConfig,
    *,
    statement: str,
    evidence: Sequence[Metric],
    recommendations: Sequence[Recommendation],
    runtime: float,
    time_lost: float | None = None,
    time_basis: str = "",
    subjects: Sequence[Subject] = (),
    subjects_total: int | None = None,
    notes: Sequence[str] = (),
    severity: Severity | None = None,
    floor: Severity = Severity.INFO,
) -> Finding:
    """A Finding of a registered rule; severity from ``time_lost / runtime`` unless given."""
    r = RULES[rule_id]
    share = (time_lost / runtime) if (time_lost is not None and runtime > 0) else None
    sev = severity if severity is not None else severity_for(share, cfg, floor, time_lost)
    return Finding(
        id=rule_id,
        title=r.title,
        family=r.family,
        severity=sev,
        statement=statement,
        evidence=tuple(evidence),
        recommendations=tuple(recommendations),
        time_lost=time_lost,
        time_basis=time_basis,
        time_share=share,
        subjects=tuple(subjects)[: max(cfg.top_subjects, 0)],
        subjects_total=len(subjects) if subjects_total is None else subjects_total,
        notes=tuple(notes),
        config_keys=r.config_keys,
    )


def merged(findings: Sequence[Finding], cfg: RuleConfig, runtime: float) -> list[Finding]:
    """One finding from per-file findings of one rule: the costliest file leads, the others are listed.

    The time lost is the sum over the files (an upper bound of what fixing all of them saves).
    """
    if len(findings) <= 1:
        return list(findings)
    fs = sorted(findings, key=lambda f: -(f.time_lost or 0.0))
    top = fs[0]
    subjects = tuple(s for f in fs for s in f.subjects)
    lost = (
        sum(f.time_lost for f in fs if f.time_lost is not None)
        if any(f.time_lost is not None for f in fs)
        else None
    )
    share = lost / runtime if lost is not None and runtime > 0 else None
    said = bool(top.statement)  # findings made without their words stay without
    return [
        replace(
            top,
            statement=f"{top.statement} {len(fs) - 1} more file(s) likewise (listed below)." if said else "",
            subjects=subjects[: max(cfg.top_subjects, 0)],
            subjects_total=sum(f.subjects_total for f in fs),
            time_lost=lost,
            time_share=share,
            severity=max(severity_for(share, cfg, seconds=lost), max(f.severity for f in fs)),
            time_basis=f"{top.time_basis}, summed over the {len(fs)} files" if said else "",
        )
    ]


def build(rule_id: str, hit: Hit, words: Words, cfg: RuleConfig, runtime: float) -> Finding:
    """The finding of ``hit`` of rule ``rule_id``, as ``words`` tell it."""
    return finding(
        rule_id,
        cfg,
        statement=words.statement,
        evidence=words.evidence,
        recommendations=words.recommendations,
        runtime=runtime,
        time_lost=hit.time_lost,
        time_basis=words.time_basis,
        subjects=words.subjects,
        subjects_total=words.subjects_total,
        notes=words.notes,
        severity=hit.severity,
        floor=hit.floor,
    )


RuleFunction = Callable[[Any, RuleConfig], Iterator[Finding]]


def explained(rule_id: str, detect: Detector[H], words: Explainer[H], time_class: str = "io") -> RuleFunction:
    """A rule function (as the registry runs them) made of a detector and its words.

    A single run's I/O finding (``time_class`` "io") loses at most what faster I/O can save the
    run, the slowest rank's I/O time (:attr:`pario.analysis.times.RankTimes.io_at_stake`): a larger
    estimate is cut to it, and the finding says so."""

    def run(facts: Any, cfg: RuleConfig) -> Iterator[Finding]:
        speak = getattr(facts, "words", True)
        for hit in detect(facts, cfg):
            runtime = hit.runtime if hit.runtime is not None else facts.runtime
            said = words(hit, facts, cfg) if speak else UNSAID
            times = getattr(facts, "times", None)
            bound = times.io_at_stake if time_class == "io" and times is not None else None
            if bound is not None and hit.time_lost is not None and hit.time_lost > bound > 0:
                if speak:
                    note = (f"The estimate, {_seconds(hit.time_lost)}, is cut to {_seconds(bound)}: faster "
                            "I/O cannot save more than the slowest rank's I/O time.")
                    said = replace(said, notes=(*said.notes, note))
                hit = replace(hit, time_lost=bound)
            yield build(rule_id, hit, said, cfg, runtime)

    run.__doc__ = detect.__doc__
    run.__name__ = getattr(detect, "__name__", rule_id)
    return run
