"""A rule in two parts: a detector that says what it saw, and the words that explain it.

A detector is a small pure function ``(facts, cfg) -> Iterable[Hit]``: it decides whether the
problem is there and measures it, and returns typed hits (a :class:`Hit` subclass per rule, its
fields the numbers the words need).  It holds no prose.  The rule's words are a function
``(hit, facts, cfg) -> Words`` kept in the family's ``*_words`` module, one per rule, so that the
text of every finding can be read and reviewed apart from the logic.
:func:`pario.diagnosis.registry.build` is the one place where a hit and its words
become a :class:`~pario.diagnosis.findings.Finding`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, Severity, Subject

if TYPE_CHECKING or sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # Python 3.10: it only informs type checkers

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda f: f


_T = TypeVar("_T")


#: How the detectors' records are declared: a dataclass with its ``__init__``, no more.  Hits and
#: the file/rank records inside them are made once per finding and read by their words, never
#: compared, hashed, printed or changed (``dataclasses.replace`` makes a new one); Python builds
#: each generated method with ``exec`` when a module loads, and a class without a docstring gets
#: one made from ``inspect.signature``: for the rule modules' 79 records, eq, hash and frozen's
#: guards cost about 0.03 s of CPU in every command that diagnoses, ``__repr__`` and the
#: signatures about 0.02 s more (docs/performance.md).
@dataclass_transform(eq_default=False)
def record(cls: type[_T]) -> type[_T]:
    if not cls.__doc__:
        cls.__doc__ = cls.__name__
    return dataclass(eq=False, repr=False)(cls)


@record
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


#: What a finding made without its words says (:attr:`pario.diagnosis.facts.Facts.words`): nothing.
UNSAID = Words(statement="", evidence=(), recommendations=(), subjects_total=0)


H = TypeVar("H", bound=Hit)
Detector = Callable[[Any, RuleConfig], Iterable[H]]
Explainer = Callable[[H, Any, RuleConfig], Words]


__all__ = ["UNSAID", "Detector", "Explainer", "Hit", "Words"]
