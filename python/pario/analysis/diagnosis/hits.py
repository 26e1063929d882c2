"""A rule in two parts: a detector that says what it saw, and the words that explain it.

A detector is a small pure function ``(facts, cfg) -> Iterable[Hit]``: it decides whether the
problem is there and measures it, and returns typed hits (a :class:`Hit` subclass per rule, its
fields the numbers the words need).  It holds no prose.  The rule's words are a function
``(hit, facts, cfg) -> Words`` kept in the family's ``*_words`` module, one per rule, so that the
text of every finding can be read and reviewed apart from the logic.  :func:`build` is the one
place where a hit and its words become a :class:`~pario.analysis.diagnosis.findings.Finding`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.diagnosis.findings import Finding, Metric, Recommendation, Severity, Subject


@dataclass(frozen=True)
class Hit:
    """What a detector saw.  Subclass it with the rule's own fields (files, counts, shares).

    ``time_lost``: the wall-clock seconds the problem costs the run (None: not estimated); the
    severity follows from its share of the run unless ``severity`` is set (``floor``: the least).
    ``runtime``: the run time that share is of, where it is not the run's own (a rule across runs).
    """

    time_lost: float | None = None
    severity: Severity | None = None
    floor: Severity = Severity.INFO
    runtime: float | None = None


@dataclass(frozen=True)
class Words:
    """What a finding says about a hit: its statement, evidence, subjects and recommendations."""

    statement: str
    evidence: Sequence[Metric]
    recommendations: Sequence[Recommendation]
    time_basis: str = ""
    subjects: Sequence[Subject] = ()
    subjects_total: int | None = None
    notes: Sequence[str] = ()


H = TypeVar("H", bound=Hit)
Detector = Callable[[Any, RuleConfig], Iterable[H]]
Explainer = Callable[[H, Any, RuleConfig], Words]


def build(rule_id: str, hit: Hit, words: Words, cfg: RuleConfig, runtime: float) -> Finding:
    """The finding of ``hit`` of rule ``rule_id``, as ``words`` tell it."""
    from pario.analysis.diagnosis.registry import finding

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


def explained(rule_id: str, detect: Detector[H], words: Explainer[H]) -> RuleFunction:
    """A rule function (as the registry runs them) made of a detector and its words."""

    def run(facts: Any, cfg: RuleConfig) -> Iterator[Finding]:
        for hit in detect(facts, cfg):
            runtime = hit.runtime if hit.runtime is not None else facts.runtime
            yield build(rule_id, hit, words(hit, facts, cfg), cfg, runtime)

    run.__doc__ = detect.__doc__
    run.__name__ = getattr(detect, "__name__", rule_id)
    return run


__all__ = ["Detector", "Explainer", "Hit", "Words", "build", "explained"]
