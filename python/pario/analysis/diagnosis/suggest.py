"""The hints files that "Try:" suggestions name: written for real, beside the log.

A finding's "tune" recommendation is a trial command ``pario run --hints HINTS_FILE -- ...``
(:func:`~pario.analysis.diagnosis.facts.tune_command`).  :func:`write_suggested_hints`
writes, for each such finding, the hints its "hint" recommendations suggest (one
``key value`` per line under a ``#`` comment naming the finding) into
``<log name>.<FINDING-ID>.hints`` beside the log (or in the current directory when the
log's directory is not writable), and puts the file's real path in the command.  A finding
that suggests no hint value gets the hints in effect in the run, commented out, to edit.

:func:`hints_file_text` is the pure part; the writing is the only side effect.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from pario.analysis.diagnosis.facts import HINTS_FILE
from pario.analysis.diagnosis.findings import Finding
from pario.analysis.mpihints import injected_hints
from pario.model import Profile


def suggested_hints(f: Finding) -> dict[str, str]:
    """The ``key value`` lines of the finding's hint recommendations (first value of a key wins)."""
    out: dict[str, str] = {}
    for r in f.recommendations:
        if r.kind != "hint":
            continue
        for line in r.snippet.splitlines():
            parts = line.split()
            if len(parts) == 2 and not parts[0].startswith("#"):
                out.setdefault(parts[0], parts[1])
    return out


def hints_in_effect(profile: Profile) -> dict[str, str]:
    """The hint set reported after open on most MPI-IO files, plus the injected hints."""
    sets = [tuple(sorted(h.items())) for h in profile.hints.values() if h]
    common = dict(max(sets, key=sets.count)) if sets else {}
    common.update(injected_hints(profile))
    return common


def hints_file_text(f: Finding, hints: Mapping[str, str], in_effect: Mapping[str, str]) -> str:
    """The hints file of a finding: its hints, or (without any) the run's own, commented out."""
    lines = [f"# pario: hints suggested by {f.id} ({f.title})"]
    if f.log:
        lines.append(f"# for the run logged in {f.log}")
    if hints:
        lines += [f"{k} {v}" for k, v in hints.items()]
    else:
        lines.append("# no value suggested: the hints in effect in this run, to edit one per trial")
        lines += [f"# {k} {v}" for k, v in sorted(in_effect.items()) if " " not in v and ":" not in k]
    return "\n".join(lines) + "\n"


def writable(directory: Path) -> bool:
    """Writable by us, and not made read-only by its mode (which root's access ignores)."""
    try:
        return os.access(directory, os.W_OK) and bool(directory.stat().st_mode & 0o222)
    except OSError:
        return False


def hints_path(log: str, finding_id: str, cwd: Path | None = None) -> Path:
    """``<log name>.<FINDING-ID>.hints`` beside the log, or in ``cwd`` if that directory is not writable."""
    log_path = Path(log)
    name = f"{log_path.name}.{finding_id}.hints"
    directory = log_path.parent if log else Path(".")
    if not writable(directory):
        directory = cwd or Path.cwd()
    return (directory / name).resolve()


def _summary(hints: Mapping[str, str]) -> str:
    if not hints:
        return "this run's hints as comments to edit"
    return ", ".join(f"{k} {v}" for k, v in hints.items())


def write_suggested_hints(findings: Sequence[Finding], profile: Profile,
                          cwd: Path | None = None) -> list[Finding]:
    """The findings with every ``HINTS_FILE`` placeholder replaced by a hints file written for it."""
    out: list[Finding] = []
    in_effect = hints_in_effect(profile)
    for f in findings:
        if not any(r.kind == "tune" and HINTS_FILE in r.snippet for r in f.recommendations):
            out.append(f)
            continue
        hints = suggested_hints(f)
        path = hints_path(f.log or profile.job.path, f.id, cwd)
        try:
            path.write_text(hints_file_text(f, hints, in_effect))
        except OSError:
            out.append(f)  # the placeholder stays: the command still says what to write
            continue
        recs = tuple(
            replace(r, text=f"{r.text.rstrip(':')}; pario wrote {path} with {_summary(hints)}:",
                    snippet=r.snippet.replace(HINTS_FILE, shlex.quote(str(path))))
            if r.kind == "tune" and HINTS_FILE in r.snippet else r
            for r in f.recommendations
        )
        out.append(replace(f, recommendations=recs))
    return out


__all__ = ["hints_file_text", "hints_in_effect", "hints_path", "suggested_hints",
           "write_suggested_hints"]
