"""Renderers of the same analysis: terminal (Rich), HTML (Jinja2 + Plotly), JSON and CSV.

They only format :class:`pario.analysis.RunAnalysis` and
:class:`pario.analysis.ScalingAnalysis`; :func:`build` computes those.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pario.analysis.run import RunAnalysis
from pario.analysis.scaling import ScalingAnalysis, mixed_executables, one_rank_count, scaling_analysis
from pario.diagnosis import analyze
from pario.model import Profile


def build(profiles: Sequence[Profile], *, scaling: str = "auto", diagnosis: bool = True,
          config: Any = None) -> tuple[list[RunAnalysis], ScalingAnalysis | None]:
    """Analyse and diagnose every profile; with several, also the scaling table and its findings.

    Runs of different executables get no scaling table unless ``scaling`` forces a mode
    (:func:`side_by_side_reason` says why).
    """
    runs = [analyze(p, diagnosis=diagnosis, config=config) for p in profiles]
    table = (scaling_analysis(runs, scaling)
             if len(runs) > 1 and not (scaling == "auto" and side_by_side_reason(runs)) else None)
    if table is not None and diagnosis:
        from pario.diagnosis import diagnose_runs

        table = dataclasses.replace(table, findings=tuple(diagnose_runs(profiles, config)))
    return runs, table


def side_by_side_reason(runs: Sequence[RunAnalysis]) -> str:
    """Why several runs are shown side by side, not as a scaling table ('' if they are not)."""
    mixed = mixed_executables(runs)
    if mixed:
        return (mixed + " They are shown as separate runs, not as a scaling table; --scaling strong or "
                "--scaling weak compares them anyway.")
    nprocs = one_rank_count(runs)
    if nprocs is not None:
        return (f"The runs have the same rank count ({nprocs:,}): they are compared side by side "
                "(a before and after), not as a scaling table; --scaling strong or --scaling weak makes "
                "one anyway.")
    return ""


def name_hint_files(runs: Sequence[RunAnalysis], profiles: Sequence[Profile],
                    hints_dir: Path | None = None) -> list[RunAnalysis]:
    """The runs with the hints files their findings suggest named in the suggested commands, and
    written into ``hints_dir`` when given (pario.report.hints_files)."""
    from pario.report.hints_files import name_suggested_hints

    return [dataclasses.replace(r, findings=tuple(name_suggested_hints(r.findings, p, hints_dir)))
            for r, p in zip(runs, profiles, strict=True)]


__all__ = ["build", "name_hint_files", "side_by_side_reason"]
