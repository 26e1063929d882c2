"""The verdicts of a verify run on the terminal: one row per change, then the hints file to use."""

from __future__ import annotations

import shlex

from pario.units import seconds, signed_seconds
from pario.verify.measure import VerifyResult
from pario.verify.verdict import Verdict


def measured_text(v: Verdict) -> str:
    """'-0.42 s (-31%), -0.50 s to -0.35 s' or '' without pairs."""
    if v.rounds == 0 or v.base_median != v.base_median:
        return ""
    return f"{signed_seconds(v.change)} ({v.share:+.0%}), {signed_seconds(v.low)} to {signed_seconds(v.high)}"


def render(result: VerifyResult) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"pario verify: {len(result.outcomes)} change(s) against the unchanged run",
                  title_justify="left")
    for col in ("change", "findings", "setting", "at stake", "I/O time change", "verdict"):
        table.add_column(col, overflow="fold")
    for o in result.outcomes:
        v = o.verdict
        table.add_row(o.change.name, ", ".join(o.change.findings), o.change.text,
                      seconds(o.change.predicted) if o.change.predicted is not None else "",
                      measured_text(v), f"{v.verdict} ({v.rounds} rounds)")
    console.print(table)
    if result.verified is not None:
        hints = shlex.quote(str(result.verified))
        print(f"pario verify: the helpful settings are in {result.verified}; use them with:")
        print(f"  pario run --hints {hints} -- {shlex.join(result.command)}")
    else:
        print("pario verify: no change helped; nothing written")
