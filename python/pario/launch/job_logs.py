"""Where a job's logs are: the step logs of a job script, the per-rank logs of a job that did
not reach MPI_Finalize, and the notes ``pario run`` leaves for steps that died without a log.

Names only (no reading of a log), so that ``pario run`` can use them without loading the readers.
"""

from __future__ import annotations

from pathlib import Path

#: What ``pario run`` leaves in place of the log of a job step that died without one: a line
#: saying why (:func:`pario.launch.mark_lost_steps`).
LOST_SUFFIX = ".lost"


def lost_reason(log: Path) -> str | None:
    """Why the log ``log`` of a job step does not exist, where ``pario run`` found the job dead
    (None: it did not)."""
    try:
        return (log.parent / (log.name + LOST_SUFFIX)).read_text(errors="replace").strip() or "unknown"
    except OSError:
        return None


def rank_logs(log: Path) -> list[Path]:
    """The ``<log>.rank<N>`` logs of a job that did not reach MPI_Finalize, by rank."""
    return sorted(log.parent.glob(log.name + ".rank*"), key=_rank_of)


def _rank_of(path: Path) -> int:
    digits = path.name.rsplit(".rank", 1)[-1]
    return int(digits) if digits.isdigit() else -1


def step_stem(log: Path) -> str:
    """``job`` for ``job.pario``: the step logs of a job script are ``job.step<N>.pario``."""
    return log.name[: -len(".pario")] if log.name.endswith(".pario") and len(log.name) > 6 else log.name


def step_logs(log: Path) -> list[Path]:
    """The logs of the MPI jobs a script started under ``pario run --log log``, in step order.

    A step that died before MPI_Finalize is listed by its log name too (its
    ``.rank<N>`` logs are read together under that name, or its ``.lost`` note says why it
    left none: :func:`pario.launch.mark_lost_steps`).
    """
    stem = step_stem(log)
    found: dict[int, Path] = {}
    for path in log.parent.glob(f"{stem}.step*.pario*"):
        name, dot, suffix = path.name.partition(".pario")
        number = name[len(stem) + len(".step"):]
        if number.isdigit() and (suffix in ("", LOST_SUFFIX) or suffix.startswith(".rank")):
            found[int(number)] = path.with_name(name + dot)
    return [found[n] for n in sorted(found)]
