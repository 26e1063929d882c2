"""The verdicts of a verify run beside the findings they are about (``pario report``, ``diagnose``).

A verify of LOG keeps its results in ``LOG.verify/verify.json`` unless told otherwise; a report of
LOG reads them from there and adds to each finding a note with its change's verdict."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pario.diagnosis import Finding
from pario.units import seconds as fmt_seconds
from pario.units import signed_seconds

STATE = "verify.json"


def default_directory(log: str | Path) -> Path:
    """Where ``pario verify LOG`` keeps its runs and results: ``LOG.verify`` beside the log."""
    p = Path(log)
    return p.with_name(p.name + ".verify")


def verdict_note(v: dict[str, Any], hints: dict[str, str]) -> str:
    """'Verified by pario verify: helps (romio_cb_write enable): I/O time -0.42 s (-31%; ...)'; the
    change named by its setting (``setting`` of the verdict: hints, engine, MPI parameters)."""
    io = v["io"]
    what = v.get("setting") or ", ".join(f"{k} {val}" for k, val in hints.items())
    head = f"Verified by pario verify ({io['rounds']} paired rounds): {io['verdict']} ({what})"
    if io["verdict"] in ("failed", "too few rounds") or io["base_median"] != io["base_median"]:
        return head + "."
    share = io["change"] / io["base_median"] if io["base_median"] > 0 else 0.0
    low, high = signed_seconds(io["low"]), signed_seconds(io["high"])
    return (f"{head}: I/O time {signed_seconds(io['change'])} ({share:+.0%}; from {low} to {high} across "
            f"the rounds), against {fmt_seconds(io['base_median'])} unchanged.")


def annotate(findings: Sequence[Finding], log: str | Path) -> list[Finding]:
    """The findings, each with its verdict from ``LOG.verify/verify.json`` when there is one."""
    path = default_directory(log) / STATE
    if not path.is_file():
        return list(findings)
    try:
        verdicts = json.loads(path.read_text()).get("verdicts", [])
    except (OSError, ValueError):
        return list(findings)
    notes: dict[str, list[str]] = {}
    for v in verdicts:
        for fid in v.get("findings", []) if v.get("change") != "combined" else []:
            notes.setdefault(fid, []).append(verdict_note(v, v.get("hints", {})))
    return [replace(f, notes=f.notes + tuple(notes[f.id])) if f.id in notes else f for f in findings]
