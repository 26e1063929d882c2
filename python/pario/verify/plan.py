"""The changes a verify run measures: one per distinct hints file the run's findings suggest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pario.analysis.diagnosis import Finding
from pario.analysis.diagnosis.suggest import suggested_hints

BASELINE = "unchanged"
COMBINED = "combined"


@dataclass(frozen=True)
class Change:
    """One setting to measure against the unchanged run."""

    name: str  # a file-name-safe label: the finding id, or "combined"
    findings: tuple[str, ...]  # the findings that suggest it
    hints: tuple[tuple[str, str], ...]
    #: the findings' estimate of the time at stake (seconds; None where they give none)
    predicted: float | None

    @property
    def text(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in self.hints)

    def hints_file(self) -> str:
        lines = [f"# pario verify: {self.name} (suggested by {', '.join(self.findings)})"]
        return "\n".join(lines + [f"{k} {v}" for k, v in self.hints]) + "\n"


def changes_of(findings: Sequence[Finding]) -> list[Change]:
    """One change per distinct set of hints the findings suggest, in the findings' order (the
    costliest first); findings suggesting the same hints share one change."""
    by_hints: dict[tuple[tuple[str, str], ...], list[Finding]] = {}
    for f in findings:
        hints = tuple(suggested_hints(f).items())
        if hints:
            by_hints.setdefault(hints, []).append(f)
    out = []
    for hints, fs in by_hints.items():
        stakes = [f.time_lost for f in fs if f.time_lost is not None]
        out.append(Change(fs[0].id, tuple(f.id for f in fs), hints, max(stakes) if stakes else None))
    return out


def combined(helpful: Sequence[Change]) -> Change | None:
    """The helpful changes in one hints file (the first change's value wins a key they share);
    None for fewer than two."""
    if len(helpful) < 2:
        return None
    merged: dict[str, str] = {}
    for c in helpful:
        for k, v in c.hints:
            merged.setdefault(k, v)
    return Change(COMBINED, tuple(i for c in helpful for i in c.findings), tuple(merged.items()), None)
