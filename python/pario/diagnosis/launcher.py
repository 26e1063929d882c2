"""Run rules: the log holds a shell or a launcher, not the processes of an MPI job.  Detectors
only: the words are in launcher_words.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from pario.diagnosis import launcher_words as words
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts
from pario.diagnosis.findings import Severity
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.registry import rule
from pario.launch.job_logs import lost_reason, step_logs
from pario.launch.mpi_match import MPIRUN_NAMES
from pario.table import as_table

FAMILY = "run"

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "fish", "busybox"})
#: The launchers `pario run` knows, and the batch and launch tools of other sites.
LAUNCHERS = frozenset({*MPIRUN_NAMES, "srun", "sbatch", "salloc", "aprun", "jsrun", "flux"})
INTERPRETERS = frozenset({"python", "python3", "perl", "env", "time", "timeout", "nohup", "xargs", "make"})


def launcher_kind(exe: str, argv: tuple[str, ...]) -> str | None:
    """'a shell', 'an MPI launcher', 'pario itself'... for a program that only starts others, else None."""
    name = Path(exe).name
    if name in SHELLS:
        return "a shell"
    if name in LAUNCHERS:
        return "an MPI launcher"
    if name.startswith("python") and any(Path(a).name == "pario" for a in argv[1:2]):
        return "pario itself"
    if name in INTERPRETERS or name.startswith("python"):
        return "an interpreter or wrapper"
    return None


def step_logs_of(log: str) -> list[Path]:
    """The step logs beside a job script's log (``job.pario`` -> ``job.step<N>.pario``)."""
    path = Path(log)
    return step_logs(path) if path.name else []


@record
class LauncherOnly(Hit):
    exe: str = ""  # the program in the log (its name)
    kind: str = ""  # what it is: launcher_kind's 'a shell', 'an MPI launcher'...
    mpi_calls: float = 0.0
    steps: tuple[Path, ...] = ()  # the logs of the MPI jobs it started, beside it
    #: the MPI jobs it started that left no log (killed before their ranks wrote), and why
    lost: tuple[tuple[Path, str], ...] = ()


@rule(
    "RUN-LAUNCHER-ONLY", title="The log holds a shell or launcher, not the MPI job", family=FAMILY,
    words=words.launcher_only,
)
def launcher_only(facts: Facts, cfg: RuleConfig) -> Iterator[LauncherOnly]:
    """A one-process log of a shell, launcher or wrapper that made no MPI call: the ranks are elsewhere."""
    job = facts.profile.job
    if job.source != "pario" or facts.nprocs != 1:
        return
    kind = launcher_kind(job.exe, job.argv)
    ranks = as_table(facts.profile.ranks)
    mpi_calls = sum(float(np.nansum(ranks[c])) for c in ("mpi_coll_calls", "mpi_p2p_calls", "mpi_other_calls")
                    if c in ranks)
    if kind is None or mpi_calls > 0:
        return
    steps = step_logs_of(job.path)
    if kind == "an interpreter or wrapper" and not steps:
        return  # a serial Python or Perl program is a program in its own right
    reasons = {p: lost_reason(p) for p in steps}
    yield LauncherOnly(severity=Severity.WARNING, exe=Path(job.exe).name, kind=kind, mpi_calls=mpi_calls,
                       steps=tuple(p for p in steps if reasons[p] is None),
                       lost=tuple((p, why) for p, why in reasons.items() if why is not None))
