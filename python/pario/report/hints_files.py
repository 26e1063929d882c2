"""The hints files that "Try:" suggestions name.

A finding's "tune" recommendation is a trial command ``pario run --hints HINTS_FILE -- ...``
(:func:`~pario.diagnosis.facts.tune_command`).  :func:`name_suggested_hints` names
the hints file of each such finding, ``<log name>.<FINDING-ID>.hints``, puts its name in the
command and says in the recommendation what the file holds: the hints its "hint"
recommendations suggest (one ``key value`` per line).  A finding that suggests no value gets
no file (a file of comments would change nothing when run): its trial becomes words saying
what to try by hand, with the hints in effect in the run.  A report only reads: the files are
written only into a directory the user names (``pario report/diagnose --hints-dir DIR``).

:func:`hints_file_text` is the pure part; writing into ``hints_dir`` is the only side effect.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from pario.analysis.mpihints import injected_hints
from pario.diagnosis.commands import HINTS_FILE
from pario.diagnosis.findings import Finding, Recommendation
from pario.errors import ParioError
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
    common = dict(Counter(sets).most_common(1)[0][0]) if sets else {}  # the first among equals
    common.update(injected_hints(profile))
    return common


def hints_file_text(f: Finding, hints: Mapping[str, str]) -> str:
    """The hints file of a finding: a comment naming it, then its hints."""
    lines = [f"# pario: hints suggested by {f.id} ({f.title})"]
    if f.log:
        lines.append(f"# for the run logged in {f.log}")
    lines += [f"{k} {v}" for k, v in hints.items()]
    return "\n".join(lines) + "\n"


def hints_file_name(log: str, finding_id: str) -> str:
    """``<log name>.<FINDING-ID>.hints``."""
    return f"{Path(log).name or 'run'}.{finding_id}.hints"


def _summary(hints: Mapping[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in hints.items())


def by_hand(r: Recommendation, in_effect: Mapping[str, str], recorded: bool = True) -> Recommendation:
    """A trial with no value to suggest, as words: what to try by hand, from the run's own hints
    (``recorded``: whether the log records hints at all; Darshan logs never do)."""
    if in_effect:
        shown = ", ".join(f"{k} {v}" for k, v in sorted(in_effect.items()))
        own = f"the hints in effect in this run were {shown}"
    elif not recorded:
        own = "a Darshan log does not record the hints in effect; docs/tune.md lists the ones pario knows"
    else:
        own = ("the MPI library reported no hints in effect in this run; docs/tune.md lists the ones pario "
               "knows")
    return Recommendation(
        "investigate",
        f"{r.text.rstrip(':')} by hand: write the values to try in a hints file, one setting per trial, and "
        f"run this command again with pario run --hints FILE ({own}).",
    )


def name_suggested_hints(findings: Sequence[Finding], profile: Profile,
                         hints_dir: Path | None = None) -> list[Finding]:
    """The findings with every ``HINTS_FILE`` placeholder replaced by the name of the finding's
    hints file, and the recommendation saying what the file holds; with ``hints_dir``, the file
    is written there (ParioError when it cannot be)."""
    out: list[Finding] = []
    in_effect = hints_in_effect(profile)
    for f in findings:
        if not any(r.kind == "tune" and HINTS_FILE in r.snippet for r in f.recommendations):
            out.append(f)
            continue
        hints = suggested_hints(f)
        if not hints:  # nothing to put in a file: say what to try
            recorded = profile.job.source != "darshan"
            out.append(replace(f, recommendations=tuple(
                by_hand(r, in_effect, recorded) if r.kind == "tune" and HINTS_FILE in r.snippet else r
                for r in f.recommendations)))
            continue
        name = hints_file_name(f.log or profile.job.path, f.id)
        if hints_dir is None:
            path, said = name, f"a hints file {name} holding {_summary(hints)} (--hints-dir DIR writes it)"
        else:
            path = str((hints_dir / name).resolve())
            try:
                Path(path).write_text(hints_file_text(f, hints))
            except OSError as exc:
                raise ParioError(f"--hints-dir: cannot write {path}: {exc.strerror}") from None
            said = f"pario wrote {path} with {_summary(hints)}"
        recs = tuple(
            replace(r, text=f"{r.text.rstrip(':')}; {said}:",
                    snippet=r.snippet.replace(HINTS_FILE, shlex.quote(path)))
            if r.kind == "tune" and HINTS_FILE in r.snippet else r
            for r in f.recommendations
        )
        out.append(replace(f, recommendations=recs))
    return out


def hints_directory(path: str | None) -> Path | None:
    """``--hints-dir``: an existing directory, or None when not given (one-line error otherwise)."""
    if path is None:
        return None
    directory = Path(path)
    if not directory.exists():
        raise ParioError(f"--hints-dir: {path} does not exist (make it first: mkdir -p {shlex.quote(path)})")
    if not directory.is_dir():
        raise ParioError(f"--hints-dir: {path} is not a directory")
    return directory


__all__ = ["by_hand", "hints_directory", "hints_file_name", "hints_file_text", "hints_in_effect",
           "name_suggested_hints", "suggested_hints"]
