"""Metrics of the model: POP efficiencies with I/O, breakdowns, I/O and MPI rates, scaling.

Every metric is a small pure function of the model returning a dataclass;
renderers in :mod:`pario.report` only format them.  ``pario.diagnosis.analyze(profile)``
computes everything the report shows for one run, these metrics and the diagnosis.
"""

from __future__ import annotations

from pario.analysis.pop import RULE_OF_THUMB, PopMetrics, pop_metrics
from pario.analysis.run import RunAnalysis
from pario.analysis.scaling import ScalingAnalysis, scaling_analysis
from pario.analysis.times import RankTimes, rank_times
from pario.values import Value

__all__ = [
    "RULE_OF_THUMB",
    "PopMetrics",
    "RankTimes",
    "RunAnalysis",
    "ScalingAnalysis",
    "Value",
    "pop_metrics",
    "rank_times",
    "scaling_analysis",
]
