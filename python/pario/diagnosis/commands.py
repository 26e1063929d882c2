"""The commands a finding recommends: this run's own command again under ``pario run`` (a trial
with a hints file) or ``pario tune`` (a search), as shell lines a user can paste."""

from __future__ import annotations

import glob
import shlex
from collections.abc import Sequence

import numpy as np

from pario.diagnosis.columns import counter
from pario.diagnosis.facts import Facts
from pario.diagnosis.file_facts import uint64_ids
from pario.diagnosis.findings import Recommendation
from pario.model import Job

#: Where the name of the suggested hints file goes in a "tune" command, until
#: :func:`pario.report.hints_files.name_suggested_hints` names (and, when asked, writes) it.
HINTS_FILE = "HINTS_FILE"
#: The program of a command whose program is unknown (an anonymised Darshan log): a shell word that
#: stands for it, so that the line stays valid as printed and says what to fill in.
UNKNOWN_PROGRAM = "${APP:?set APP to your program and its arguments}"


def anonymised(source: str, argv: list[str]) -> bool:
    """Whether a Darshan log's command is anonymised: Darshan then keeps only a number for it.  A
    relative path (``./src/ior -a HDF5``) or a bare name (``python run.py``) is the command as given."""
    return source == "darshan" and len(argv) == 1 and argv[0].isdigit()


def launch_of(job: Job) -> list[str] | None:
    """The command given to ``pario run`` (launcher options included), as the log holds it
    (``job.metadata['launch']``); None where the log does not (older pario logs, Darshan logs)."""
    launch = job.metadata.get("launch")
    if isinstance(launch, list) and launch and all(isinstance(a, str) for a in launch):
        return list(launch)
    return None


def recorded(facts: Facts) -> bool:
    """Whether the log holds the command given to ``pario run`` (launcher options included)."""
    return launch_of(facts.profile.job) is not None


def tune_command(facts: Facts) -> str:
    """A trial of this run's own command with a hints file (:func:`run_command`).

    The hints file is :data:`HINTS_FILE` until it is named.  :func:`autotune` is the
    automatic search over many such trials.
    """
    return run_command(facts, f"--hints {HINTS_FILE}")


def launch_text(facts: Facts) -> str:
    """This run's own command, as a shell line.

    The command given to ``pario run`` (``job.metadata['launch']``) is repeated exactly,
    launcher options and program arguments included; for logs without it (older pario logs,
    Darshan logs) the program's argv under ``mpirun -np N``, or :data:`UNKNOWN_PROGRAM` when
    even that is unknown.
    """
    job = facts.profile.job
    launch = launch_of(job)
    if launch is not None:
        return shlex.join(launch)
    argv = [a for a in job.argv if a]
    if not argv or anonymised(job.source, argv):
        app = UNKNOWN_PROGRAM
    else:
        app = shlex.join(argv)
    launcher = f"mpirun -np {facts.nprocs}" if facts.nprocs > 1 else ""
    return " ".join(p for p in (launcher, app) if p)


def run_command(facts: Facts, options: str) -> str:
    """This run's own command (:func:`launch_text`) again under ``pario run OPTIONS``."""
    return f"pario run {options} -- {launch_text(facts)}"


#: Runs of the command that the ``pario tune`` line of a recommendation asks for.
AUTOTUNE_BUDGET = 20


def objective_of(bytes_written: float, bytes_read: float) -> str:
    """``pario tune``'s objective for files that move these bytes: the direction that moves more."""
    return "read-bw" if bytes_read > bytes_written else "write-bw"


def objective_for(facts: Facts, ids: Sequence[int]) -> str:
    """``pario tune``'s objective for these files: the direction their outermost records move more."""
    wanted = np.asarray(list(ids), dtype=np.uint64)
    written = read = 0.0
    for table in facts.outermost().values():
        if not len(table):
            continue
        sel = table[np.isin(uint64_ids(table["id"]), wanted)]
        written += float(counter(sel, "bytes_written").sum())
        read += float(counter(sel, "bytes_read").sum())
    return objective_of(written, read)


def autotune_command(facts: Facts, files: Sequence[str] = (), objective: str = "write-bw") -> str:
    """``pario tune`` of this run's command, measuring ``files`` when they share one base name.

    ``--files`` takes the base name with its glob characters escaped; for several names the
    objective covers every file of the run.
    """
    options = ["--budget", str(AUTOTUNE_BUDGET)]
    if objective != "write-bw":
        options += ["--objective", objective]
    names = {str(f).rstrip("/").rsplit("/", 1)[-1] for f in files}
    if len(names) == 1:
        (name,) = names
        if name:
            options += ["--files", glob.escape(name)]
    return f"pario tune {shlex.join(options)} -- {launch_text(facts)}"


def autotune(
    facts: Facts, settings: str, files: Sequence[str] = (), objective: str = "write-bw"
) -> Recommendation:
    """The recommendation to search ``settings`` (in words) with ``pario tune``."""
    return Recommendation(
        "autotune",
        f"pario tune searches {settings} (with the other settings it detects) over {AUTOTUNE_BUDGET} "
        "runs of this command, and compares the best with the default measured the same way:",
        autotune_command(facts, files, objective),
    )
