"""What a rule returns: a :class:`Finding` with its evidence and recommendations.

Findings are immutable plain data.  Renderers (:mod:`.render`) only format
them; :func:`finding_dict` is the JSON form documented in docs/diagnosis.md.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import pario.diagnosis._fmt as _fmt


class Severity(enum.IntEnum):
    """How much a finding matters; ordered, so ``Severity.WARNING > Severity.INFO``."""

    INFO = 1
    WARNING = 2
    CRITICAL = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"severity must be one of info, warning, critical (got {text!r})") from None


@dataclass(frozen=True)
class Metric:
    """One number (or short text) of the evidence.

    ``name`` is a stable machine key (``small_writes``), ``label`` the words a
    person reads ("writes of at most 100 KiB").  ``approximate`` marks values
    derived from estimates (Darshan's shared-file records give only totals and
    the fastest and slowest rank).
    """

    name: str
    label: str
    value: float | int | str | None
    unit: str = ""
    approximate: bool = False


@dataclass(frozen=True)
class Subject:
    """A file or rank the finding concerns, with its own numbers."""

    kind: str  # "file", "rank" or "run"
    name: str
    metrics: tuple[Metric, ...] = ()
    id: str = ""  # file id (hex) when kind == "file"



def hex_id(fid: int | Any) -> str:
    """A file id as findings show it: 16 hex digits."""
    return f"{int(fid):016x}"


def file_subject(name: str, fid: int | Any, *metrics: Metric) -> Subject:
    """A file the finding concerns, with its own numbers."""
    return Subject("file", name, metrics, hex_id(fid))

@dataclass(frozen=True)
class Recommendation:
    """Something the user can do.

    ``kind``: ``hint`` (MPI-IO hints, ``snippet`` holds hints-file lines
    "key value"), ``striping`` (``lfs setstripe`` command), ``code`` (a code
    change, ``snippet`` is C), ``tune`` (a trial run with a hints file),
    ``environment`` (variables or launcher settings), ``investigate`` (where
    to look next), ``future`` (a pario feature that is not available yet).
    """

    kind: str
    text: str
    snippet: str = ""


@dataclass(frozen=True)
class Finding:
    """One problem found in a run (or across runs), with evidence and fixes.

    ``time_lost`` is the estimated wall-clock time (seconds) the problem costs
    the run, or None when it cannot be estimated; ``time_basis`` says how it
    was estimated ("exact: ...", "upper bound: ...", "estimate: ...").
    ``time_share`` is ``time_lost`` as a fraction of the run time.
    ``subjects`` holds the top few files or ranks; ``subjects_total`` how many
    there are in all.  ``notes`` are caveats and causes, in sentences.
    """

    id: str
    title: str
    family: str
    severity: Severity
    statement: str
    evidence: tuple[Metric, ...]
    recommendations: tuple[Recommendation, ...]
    time_lost: float | None = None
    time_basis: str = ""
    time_share: float | None = None
    subjects: tuple[Subject, ...] = ()
    subjects_total: int = 0
    notes: tuple[str, ...] = ()
    config_keys: tuple[str, ...] = ()
    log: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def _plain(v: Any) -> Any:
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else None
    if hasattr(v, "item"):  # numpy scalar
        return _plain(v.item())
    return v


def metric_dict(m: Metric) -> dict[str, Any]:
    text = ("≈" if m.approximate else "") + _fmt.value(m.value, m.unit)
    return {
        "name": m.name,
        "label": m.label,
        "value": _plain(m.value),
        "unit": m.unit,
        "approximate": m.approximate,
        "text": text,
    }


def finding_dict(f: Finding) -> dict[str, Any]:
    """The JSON form of a finding (docs/diagnosis.md, "JSON output")."""
    return {
        "id": f.id,
        "title": f.title,
        "family": f.family,
        "severity": f.severity.label,
        "statement": f.statement,
        "time_lost_s": _plain(f.time_lost),
        "time_lost_share": _plain(f.time_share),
        "time_lost_basis": f.time_basis or None,
        "time_lost_text": _time_text(f),
        "evidence": [metric_dict(m) for m in f.evidence],
        "subjects": [
            {
                "kind": s.kind,
                "name": s.name,
                "id": s.id or None,
                "metrics": [metric_dict(m) for m in s.metrics],
            }
            for s in f.subjects
        ],
        "subjects_total": f.subjects_total,
        "notes": list(f.notes),
        "recommendations": [
            {"kind": r.kind, "text": r.text, "snippet": r.snippet or None} for r in f.recommendations
        ],
        "config_keys": list(f.config_keys),
        "log": f.log or None,
    }


def _time_text(f: Finding) -> str | None:
    return time_lost_text(f) or None


def time_lost_text(f: Finding) -> str:
    """'≤ 1.2 s, 3.4% of the run', '≈ ...' (estimate), '1.2 s, ...' (exact), or '' without an estimate."""
    if f.time_lost is None:
        return ""
    basis = f.time_basis.split(":", 1)[0].strip()
    sign = {"upper bound": "≤ ", "estimate": "≈ ", "exact": ""}.get(basis, "≈ ")
    share = f", {_fmt.pct(f.time_share)} of the run" if f.time_share is not None else ""
    return f"{sign}{_fmt.seconds(f.time_lost)}{share}"
