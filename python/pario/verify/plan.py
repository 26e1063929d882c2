"""The changes a verify run measures: one per distinct setting the run's findings suggest.

A setting is a hints file (the ``key value`` lines of a hint recommendation), pario's
collective-write engine (a recommended ``pario run --collective ALGO`` command), or the MPI
library's parameters (a recommended ``--mca NAME VALUE`` of the launch, as ``OMPI_MCA_NAME``):
whatever can be applied to the recorded command without changing the program.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from pario.diagnosis import Finding, Recommendation
from pario.launch.hints import TUNED_WITH
from pario.report.hints_files import suggested_hints

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
    collective: str = ""  # pario run --collective ALGO[:SHUFFLE] ("" for none)
    env: tuple[tuple[str, str], ...] = ()  # the MPI library's parameters: (OMPI_MCA_NAME, VALUE)

    @property
    def text(self) -> str:
        parts = [f"{k} {v}" for k, v in self.hints]
        parts += [f"--collective {self.collective}"] if self.collective else []
        return ", ".join(parts + [f"{k}={v}" for k, v in self.env])

    def hints_file(self) -> str:
        """The change as a hints file ``pario run --hints`` applies whole: the engine and the MPI
        library's parameters as ``# pario: tuned with`` lines (pario.launch.hints.tuned_environment)."""
        lines = [f"# pario verify: {self.name} (suggested by {', '.join(self.findings)})"]
        lines += [f"{TUNED_WITH}PARIO_COLL={self.collective}"] if self.collective else []
        lines += [f"{TUNED_WITH}{k}={v}" for k, v in self.env]
        return "\n".join(lines + [f"{k} {v}" for k, v in self.hints]) + "\n"

    def run_args(self, hints_file: str) -> list[str]:
        """The options of ``pario run`` that apply the change (``hints_file``: its hints file)."""
        args = ["--hints", hints_file] if self.hints else []
        return args + (["--collective", self.collective] if self.collective else [])


def launch_settings(r: Recommendation) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The engine setting and MPI parameters a recommendation's command sets: ``--collective``
    of a ``pario run`` command, ``--mca NAME VALUE`` of a launch ("", () where it sets none)."""
    collective = ""
    env: list[tuple[str, str]] = []
    for line in r.snippet.splitlines():
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        if words[:2] == ["pario", "run"] and "--collective" in words[:-1]:
            collective = words[words.index("--collective") + 1]
        env += [(f"OMPI_MCA_{words[i + 1]}", words[i + 2]) for i in range(len(words) - 2)
                if words[i] == "--mca" and not words[i + 2].startswith("-") and words[i + 2] != "..."]
    return collective, tuple(env)


Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class _Setting:
    hints: Pairs = ()
    collective: str = ""
    env: Pairs = ()

    def __bool__(self) -> bool:
        return bool(self.hints or self.collective or self.env)


def _settings(f: Finding) -> list[_Setting]:
    """A finding's hints and its launch settings (the engine, MPI parameters: those of its first
    recommendation that sets any, its first choice), each a setting of its own."""
    launch = next((_Setting((), *launch_settings(r)) for r in f.recommendations
                   if r.kind in ("environment", "hint") and any(launch_settings(r))), _Setting())
    return [s for s in (_Setting(tuple(suggested_hints(f).items())), launch) if s]


def changes_of(findings: Sequence[Finding]) -> list[Change]:
    """One change per distinct setting the findings suggest, in the findings' order (the costliest
    first); findings suggesting the same setting share one change.  A finding's hints and its
    launch settings are measured apart (the launch change named ``ID-launch`` then)."""
    by_setting: dict[_Setting, list[Finding]] = {}
    for f in findings:
        for setting in _settings(f):
            by_setting.setdefault(setting, []).append(f)
    with_hints = {fs[0].id for setting, fs in by_setting.items() if setting.hints}
    out = []
    for setting, fs in by_setting.items():
        stakes = [f.time_lost for f in fs if f.time_lost is not None]
        name = fs[0].id if setting.hints or fs[0].id not in with_hints else f"{fs[0].id}-launch"
        out.append(Change(name, tuple(f.id for f in fs), setting.hints, max(stakes) if stakes else None,
                          setting.collective, setting.env))
    return out


def combined(helpful: Sequence[Change]) -> Change | None:
    """The helpful changes in one (the first change's value wins a key they share); None for
    fewer than two."""
    if len(helpful) < 2:
        return None
    merged: dict[str, str] = {}
    env: dict[str, str] = {}
    for c in helpful:
        for k, v in c.hints:
            merged.setdefault(k, v)
        for k, v in c.env:
            env.setdefault(k, v)
    collective = next((c.collective for c in helpful if c.collective), "")
    return Change(COMBINED, tuple(i for c in helpful for i in c.findings), tuple(merged.items()), None,
                  collective, tuple(env.items()))
