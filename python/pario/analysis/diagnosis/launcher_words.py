"""The words of the run rules (launcher.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.diagnosis.findings import Metric, Recommendation
from pario.analysis.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.analysis.diagnosis.facts import Facts
    from pario.analysis.diagnosis.launcher import LauncherOnly


def launcher_only(hit: LauncherOnly, facts: Facts, cfg: RuleConfig) -> Words:
    exe, kind, steps = hit.exe, hit.kind, hit.steps
    if steps:
        statement = (f"This log holds only {exe} ({kind}) that ran the job, not the ranks of an MPI job; "
                     f"the {len(steps)} MPI job(s) it started have logs of their own beside it.")
        recs = [Recommendation("investigate", "Report on the MPI jobs the command started:",
                               "\n".join(f"pario report {p}" for p in steps))]
    else:
        statement = (f"This log holds only {exe} ({kind}), not the ranks of an MPI job: the numbers below "
                     "describe that one process, and no MPI job it may have started was profiled.")
        recs = [
            Recommendation("environment",
                           "Run the launch itself under pario, so that the ranks are profiled:",
                           "pario run -- mpirun -np N ./app   (or: pario run -- srun -n N ./app)"),
            Recommendation("environment", "Or, inside the job script, switch pario on before the launch "
                           "lines; each MPI job then writes its own log:",
                           'eval "$(pario env --log logs/)"'),
        ]
    return Words(
        statement,
        [Metric("exe", "program in the log", exe), Metric("nprocs", "processes", facts.nprocs),
         Metric("mpi_calls", "MPI calls", int(hit.mpi_calls)),
         Metric("step_logs", "step logs beside it", len(steps))],
        recs,
    )
