"""Helpers for the tests that a diagnosis rule stays silent on a case: that the rule exists, ran
and saw the case, so that such a test fails if the rule is renamed or never looks."""

from __future__ import annotations

from typing import Any

from pario.diagnosis import RULES, Finding, diagnose, make_config
from pario.model import Profile


def evidence(f: Finding) -> dict[str, Any]:
    """A finding's evidence, by name."""
    return {m.name: m.value for m in f.evidence}


def silent_until(rule_id: str, profile: Profile, **looser: object) -> list[Finding]:
    """The findings of rule ``rule_id`` on ``profile`` with the thresholds ``looser`` (one at
    least), after checking that the rule is registered and finds nothing with the default
    thresholds: it saw the case, and only the thresholds that ``looser`` moves kept it silent."""
    assert rule_id in RULES, f"no rule {rule_id}"
    assert rule_id not in {f.id for f in diagnose(profile)}, f"{rule_id} fired at the default thresholds"
    everything = diagnose(profile, make_config(looser))
    found = [f for f in everything if f.id == rule_id]
    assert found, f"{rule_id} did not fire with {looser}: {sorted({f.id for f in everything})}"
    return found
