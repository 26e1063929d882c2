"""The words of the run rules (launcher.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation
from pario.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.diagnosis.facts import Facts
    from pario.diagnosis.launcher import LauncherOnly


def launcher_only(hit: LauncherOnly, facts: Facts, cfg: RuleConfig) -> Words:
    exe, kind, steps, lost = hit.exe, hit.kind, hit.steps, hit.lost
    if steps or lost:
        statement = f"This log holds only {exe} ({kind}) that ran the job, not the ranks of an MPI job; "
        if steps:
            statement += f"the {len(steps)} MPI job(s) it started have logs of their own beside it"
        if lost:
            statement += ("; " if steps else "") + (
                f"{len(lost)} MPI job(s) it started wrote no log ({', '.join(p.name for p, _ in lost)}: "
                f"{lost[0][1]})")
        statement += "."
        reports = "\n".join(f"pario report {shlex.quote(str(p))}" for p in steps)
        recs = [Recommendation("investigate", "Report on the MPI jobs the command started:", reports)
                ] if steps else []
        if lost:
            recs.append(Recommendation(
                "investigate",
                "Run the job again with the time or the resources it needs to reach MPI_Finalize (a rank "
                "killed earlier writes nothing, or only its own <log>.rank<N> when it exits by itself)."))
    else:
        statement = (f"This log holds only {exe} ({kind}), not the ranks of an MPI job: the numbers below "
                     "describe that one process, and no MPI job it may have started was profiled.")
        recs = [
            Recommendation("environment",
                           "Run the launch itself under pario, so that the ranks are profiled: pario run -- "
                           "followed by the mpirun or srun line of the job."),
            Recommendation("environment", "Or, inside the job script, switch pario on before the launch "
                           "lines; each MPI job then writes its own log:",
                           'eval "$(pario env --log logs/)"'),
        ]
    return Words(
        statement,
        [Metric("exe", "program in the log", exe), Metric("nprocs", "processes", facts.nprocs),
         Metric("mpi_calls", "MPI calls", int(hit.mpi_calls)),
         Metric("step_logs", "step logs beside it", len(steps)),
         Metric("lost_steps", "MPI jobs it started that wrote no log", len(lost))],
        recs,
    )
