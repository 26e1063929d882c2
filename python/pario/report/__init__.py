"""Renderers of the same analysis: terminal (Rich), HTML (Jinja2 + Plotly), JSON and CSV.

They only format :class:`pario.analysis.RunAnalysis` and
:class:`pario.analysis.ScalingAnalysis`; :func:`build` computes those.
"""

from __future__ import annotations

from collections.abc import Sequence

from pario.analysis.run import RunAnalysis, analyze
from pario.analysis.scaling import ScalingAnalysis, scaling_analysis
from pario.model import Profile


def build(profiles: Sequence[Profile], *, scaling: str = "auto") -> tuple[list[RunAnalysis],
                                                                          ScalingAnalysis | None]:
    """Analyse every profile; with several, also the scaling table."""
    runs = [analyze(p) for p in profiles]
    table = scaling_analysis(runs, scaling) if len(runs) > 1 else None
    return runs, table


__all__ = ["build"]
