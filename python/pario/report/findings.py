"""Findings for people (a Rich renderable) and for scripts (plain dicts, the JSON form).

Only formats :class:`~pario.diagnosis.findings.Finding`; every string
that comes from a log (file names, hints) is added as plain
:class:`rich.text.Text`, never as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

import pario.diagnosis._fmt as fmt
from pario.diagnosis.findings import Finding, Severity, Subject, finding_dict, time_lost_text
from pario.model import Profile
from pario.names import common_directory, relative
from pario.textfit import Fit, ShellCommand, Wrapped

SCHEMA_VERSION = 1
#: the kinds of recommendation whose snippet lines are shell commands
SHELL_KINDS = frozenset({"tune", "autotune", "striping", "environment", "investigate"})
STYLE = {Severity.CRITICAL: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
KIND_LABEL = {
    "hint": "MPI-IO hints",
    "striping": "Lustre striping",
    "code": "Code",
    "tune": "Try",
    "autotune": "Search",
    "environment": "Environment",
    "investigate": "Investigate",
    "future": "Not available yet",
}


def log_summary(profile: Profile) -> str:
    """One line about the run a diagnosis is for."""
    job = profile.job
    kind = "Darshan log" if job.source == "darshan" else "pario log"
    exe = job.exe.rsplit("/", 1)[-1] if job.exe else "unknown program"
    return (
        f"{job.path.rsplit('/', 1)[-1]}: {kind}, {exe}, {job.nprocs} rank{'s' if job.nprocs != 1 else ''}, "
        f"{fmt.seconds(job.runtime)}"
    )


def _subjects_table(subjects: Sequence[Subject], total: int) -> RenderableType | None:
    """The files or ranks concerned: a table where it fits the width, else one paragraph each."""
    if not subjects:
        return None
    labels: list[str] = []
    for s in subjects:
        for m in s.metrics:
            if m.label not in labels:
                labels.append(m.label)
    kind = subjects[0].kind if len({s.kind for s in subjects}) == 1 else "subject"
    # files by their names below the directory they share, which the caption gives once
    directory = common_directory(s.name for s in subjects) if kind == "file" else ""
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    t.add_column(kind, no_wrap=True)
    for lab in labels:
        t.add_column(lab, justify="right", no_wrap=True)
    rows: list[tuple[str, list[tuple[str, str]]]] = []
    for s in subjects:
        by = {m.label: m for m in s.metrics}
        cells = [(lab, ("≈" if by[lab].approximate else "") + fmt.value(by[lab].value, by[lab].unit))
                 for lab in labels if lab in by]
        rows.append((relative(s.name, directory), cells))
        t.add_row(Text(rows[-1][0]), *[Text(dict(cells).get(lab, "")) for lab in labels])
    top = f"top {len(subjects)} of {fmt.count(total)}" if total > len(subjects) else ""
    caption = "; ".join(c for c in (f"in {directory}" if directory else "", top) if c)
    t.caption = caption or None
    # narrow terminals: each subject on its own line, its numbers below it
    listed: list[RenderableType] = []
    for name, cells in rows:
        listed.append(Wrapped(name, style="bold", indent=2))
        listed.append(Wrapped("  " + "; ".join(f"{lab} {v}" for lab, v in cells), indent=2))
    if caption:
        listed.append(Wrapped(caption, style="dim", indent=2))
    return Fit(t, Group(*listed))


class _TitledPanel:
    """A finding's panel: the whole title on the border where it fits, else the title text
    as the first line inside (Rich would cut it off)."""

    def __init__(self, head: Text, title: str, body: list[RenderableType], style: str, subtitle: str) -> None:
        self.head, self.title, self.body, self.style, self.subtitle = head, title, body, style, subtitle

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        head, body = self.head.copy(), list(self.body)
        if len(head) + len(self.title) + 6 <= options.max_width:
            head.append(self.title)
        else:
            body.insert(0, Wrapped(self.title, style="bold"))
        fits = self.subtitle and len(self.subtitle) + 6 <= options.max_width
        subtitle = Text(self.subtitle) if fits else None
        yield Panel(Group(*body), title=head, title_align="left", border_style=self.style, subtitle=subtitle,
                    subtitle_align="right")


def finding_renderable(finding: Finding) -> RenderableType:
    """One finding as a Rich panel: statement, evidence, subjects, notes, recommendations."""
    parts: list[RenderableType] = [Wrapped(finding.statement)]
    ev = Table.grid(padding=(0, 2))
    ev.add_column(style="dim", no_wrap=True)
    ev.add_column()
    for m in finding.evidence:
        if m.value is None or m.value == "":
            continue
        ev.add_row(Text(m.label), Wrapped(("≈" if m.approximate else "") + fmt.value(m.value, m.unit)))
    parts += [Text(""), Text("Evidence", style="bold"), Fit(ev, Group(*[
        Wrapped(f"{m.label}: {'≈' if m.approximate else ''}{fmt.value(m.value, m.unit)}", indent=2)
        for m in finding.evidence if m.value is not None and m.value != ""]))]
    table = _subjects_table(finding.subjects, finding.subjects_total)
    if table is not None:
        parts += [Text(""), table]
    for note in finding.notes:
        parts.append(Wrapped(note, style="italic"))
    if finding.recommendations:
        parts += [Text(""), Text("What to do", style="bold")]
        for r in finding.recommendations:
            parts.append(Wrapped(f"• {KIND_LABEL.get(r.kind, r.kind)}: {r.text}", indent=2))
            for ln in r.snippet.splitlines():
                if r.kind in SHELL_KINDS:  # continued with a backslash, so that it pastes whole
                    parts.append(ShellCommand(ln, style="green", margin=4))
                else:
                    parts.append(Wrapped("    " + ln, style="green", indent=6))
    lost = time_lost_text(finding)
    if lost:
        parts += [Text(""), Wrapped(f"Time lost {lost}; {finding.time_basis}", style="dim")]
    head = Text()
    head.append(f" {finding.severity.label.upper()} ", style=STYLE[finding.severity] + " reverse")
    head.append(f" {finding.id} ", style="bold")
    return _TitledPanel(head, finding.title, parts, STYLE[finding.severity], lost)


def findings_renderable(
    findings: Sequence[Finding],
    *,
    title: str | None = None,
    min_severity: Severity = Severity.INFO,
    empty: str = "No problems found.",
) -> RenderableType:
    """All findings (at or above ``min_severity``) as one Rich renderable, in the given order."""
    shown = [f for f in findings if f.severity >= min_severity]
    parts: list[RenderableType] = []
    if title:
        counts = {s: sum(1 for f in shown if f.severity == s) for s in Severity}
        tally = ", ".join(f"{n} {s.label}" for s, n in sorted(counts.items(), reverse=True) if n)
        head = Text(title, style="bold")
        head.append(
            f"  —  {len(shown)} finding{'s' if len(shown) != 1 else ''}" + (f" ({tally})" if tally else "")
        )
        parts.append(Wrapped(head.plain, style="bold"))
    if not shown:
        hidden = len(findings) - len(shown)
        parts.append(Text(empty + (f" ({hidden} below {min_severity.label} not shown.)" if hidden else "")))
    parts += [finding_renderable(f) for f in shown]
    return Group(*parts)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def findings_markdown(
    findings: Sequence[Finding],
    *,
    title: str | None = None,
    min_severity: Severity = Severity.INFO,
    level: int = 3,
) -> str:
    """Findings as Markdown (for tickets, POP reports and docs/diagnosis-examples.md)."""
    shown = [finding for finding in findings if finding.severity >= min_severity]
    h = "#" * level
    out: list[str] = []
    if title:
        out += [f"{h} {title}", ""]
    if not shown:
        out += ["No problems found.", ""]
    for finding in shown:
        lost = time_lost_text(finding)
        out += [
            f"{h}# {finding.severity.label.upper()} `{finding.id}` {finding.title}"
            + (f" (time lost {lost})" if lost else ""),
            "",
        ]
        out += [finding.statement, ""]
        out += ["| evidence | value |", "|---|---|"]
        for m in finding.evidence:
            if m.value is None or m.value == "":
                continue
            out.append(
                f"| {_md_escape(m.label)} | {'≈' if m.approximate else ''}"
                f"{_md_escape(fmt.value(m.value, m.unit))} |"
            )
        out.append("")
        if finding.subjects:
            extra = (
                f" (top {len(finding.subjects)} of {finding.subjects_total})"
                if finding.subjects_total > len(finding.subjects)
                else ""
            )
            out.append(f"Concerned{extra}:")
            for s in finding.subjects:
                vals = "; ".join(
                    f"{m.label} = {'≈' if m.approximate else ''}{fmt.value(m.value, m.unit)}"
                    for m in s.metrics
                )
                out.append(f"- `{s.name}`" + (f": {vals}" if vals else ""))
            out.append("")
        for note in finding.notes:
            out += [f"*{note}*", ""]
        out.append("What to do:")
        for r in finding.recommendations:
            out.append(f"- **{KIND_LABEL.get(r.kind, r.kind)}**: {r.text}")
            if r.snippet:
                out += ["  ```", *[f"  {ln}" for ln in r.snippet.splitlines()], "  ```"]
        out.append("")
        if lost:
            out += [f"Time lost {lost}: {finding.time_basis}.", ""]
    return "\n".join(out).rstrip() + "\n"


def findings_dicts(
    findings: Sequence[Finding], min_severity: Severity = Severity.INFO
) -> list[dict[str, Any]]:
    return [finding_dict(f) for f in findings if f.severity >= min_severity]


def diagnosis_dict(
    runs: Sequence[tuple[Profile, Sequence[Finding]]],
    across: Sequence[Finding] = (),
    *,
    min_severity: Severity = Severity.INFO,
) -> dict[str, Any]:
    """The JSON document of ``pario diagnose --json`` (docs/diagnosis.md)."""
    from pario import __version__

    return {
        "schema_version": SCHEMA_VERSION,
        "generator": f"pario {__version__}",
        "min_severity": min_severity.label,
        "logs": [
            {
                "path": p.job.path,
                "source": p.job.source,
                "exe": p.job.exe,
                "nprocs": p.job.nprocs,
                "runtime_s": p.job.runtime,
                "complete": p.job.complete,
                "findings": findings_dicts(fs, min_severity),
            }
            for p, fs in runs
        ],
        "across_runs": findings_dicts(across, min_severity),
    }
