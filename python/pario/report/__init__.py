"""Renderers of the same analysis: terminal (Rich), HTML (Jinja2 + Plotly), JSON and CSV.

They only format :class:`pario.analysis.RunAnalysis` and
:class:`pario.analysis.ScalingAnalysis`; :func:`build` computes those.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from pario.analysis.run import RunAnalysis, analyze
from pario.analysis.scaling import ScalingAnalysis, scaling_analysis
from pario.model import Profile


def build(profiles: Sequence[Profile], *, scaling: str = "auto", diagnosis: bool = True,
          config: Any = None) -> tuple[list[RunAnalysis], ScalingAnalysis | None]:
    """Analyse and diagnose every profile; with several, also the scaling table and its findings."""
    runs = [analyze(p, diagnosis=diagnosis, config=config) for p in profiles]
    table = scaling_analysis(runs, scaling) if len(runs) > 1 else None
    if table is not None and diagnosis:
        from pario.analysis.diagnosis import diagnose_runs

        table = dataclasses.replace(table, findings=tuple(diagnose_runs(profiles, config)))
    return runs, table


__all__ = ["build"]
