"""Why a job left no log: the notes the runtime's processes leave for ``pario run``.

``pario run`` names a file beside the log in ``PARIO_RUN_NOTES``; the runtime appends one line
to it per event (src/runtime/notes.c): ``started N 1`` from the launcher's rank 0 (N: the
launcher's process count) or ``started 1 0`` from a process no launcher names, ``exited WHY
MPI_USED MPI_INIT_SEEN LIBRARY`` from each process that leaves without a log, and ``wrote PATH``
from the process that wrote a log.  No process creates a file of its own.  When no log appears
where ``pario run`` looks, :func:`no_log_reason` turns the lines into one sentence, and
:func:`written` says where the jobs wrote theirs (a job script that sets its own PARIO_LOG).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Note:
    """One line: processes that started (``started``), or one process that left without a log."""

    exited: bool
    mpi_used: bool
    mpi_library: str
    processes: int = 1
    launcher: bool = False
    wrote: str = ""  # the log a ``wrote`` line names


def create(where: Path) -> Path:
    """The notes file's name in ``where`` (the log's directory, which every rank reaches); the
    runtime creates it with its first line."""
    path = where / f".pario-notes-{os.getpid()}"
    discard(path)
    return path


def discard(notes: Path | None) -> None:
    if notes is not None:
        try:
            notes.unlink(missing_ok=True)
        except OSError:
            pass


def parse(line: str) -> Note | None:
    """One line of the notes; None for a line that is neither (a torn or foreign line)."""
    words = line.split(" ", 4)
    if words[0] == "started" and len(words) == 3 and words[1].isdigit():
        return Note(exited=False, mpi_used=False, mpi_library="", processes=int(words[1]),
                    launcher=words[2] == "1")
    if words[0] == "wrote" and len(words) >= 2:
        return Note(exited=False, mpi_used=False, mpi_library="", processes=0,
                    wrote=line.split(" ", 1)[1].strip())
    if words[0] == "exited" and len(words) >= 4:
        library = words[4].strip() if len(words) > 4 else ""
        return Note(exited=True, mpi_used=words[2] == "1", mpi_library=library)
    return None


def read(notes: Path | None) -> list[Note]:
    try:
        text = notes.read_text(errors="replace") if notes is not None else ""
    except OSError:
        return []
    return [n for n in map(parse, text.splitlines()) if n is not None]


@dataclass(frozen=True)
class Tally:
    """What the notes add up to: processes that loaded the runtime, those that left without a log
    (their notes), and how many never reached their exit."""

    started: int
    exits: list[Note]

    @property
    def died(self) -> int:
        return max(0, self.started - len(self.exits))

    @property
    def loaded(self) -> int:
        return max(self.started, len(self.exits))


def tally(notes: Path | None) -> Tally:
    """The launcher's process count (the largest a rank 0 gave: a process it starts inherits its
    rank) plus one per process no launcher names."""
    said = read(notes)
    launched = max((n.processes for n in said if not n.exited and n.launcher), default=0)
    alone = sum(n.processes for n in said if not n.exited and not n.launcher)
    return Tally(started=launched + alone, exits=[n for n in said if n.exited])


def written(notes: Path | None) -> list[str]:
    """The logs the processes wrote, as the notes name them, in order, each once."""
    return list(dict.fromkeys(n.wrote for n in read(notes) if n.wrote))


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 'es'}"


def lost_job_reason(notes: Path | None, exit_code: int) -> str:
    """Why an MPI job that reached MPI_Init left no log, as far as the notes tell."""
    how = f" (the command exited with code {exit_code})" if exit_code else ""
    died = tally(notes).died
    if died:
        return (f"its ranks were killed or aborted before MPI_Finalize ({_count(died, 'process')} that "
                f"loaded the runtime, its ranks among them, never reached their exit){how}")
    return f"its ranks were killed or aborted before MPI_Finalize{how}"


def no_log_reason(notes: Path | None, exit_code: int) -> str:
    """Why no log was written, as far as the notes tell."""
    if notes is None:
        return "the runtime's messages, if any, are above"
    said = tally(notes)
    if not said.loaded and exit_code:
        return (f"the command failed (exit code {exit_code}) before any process of the program started "
                "(see its messages above)")
    if not said.loaded:
        return ("no process of the command loaded the pario runtime: the launcher did not pass LD_PRELOAD "
                "on to the program, or the program is statically linked or setuid")
    unseen = [n for n in said.exits if n.mpi_used]
    if unseen:
        library = unseen[0].mpi_library or "unknown"
        return (f"{_count(len(unseen), 'process')} started MPI through an entry point pario does not "
                f"intercept (their MPI_Init was not seen); MPI library: {library}")
    if said.died and not said.exits:
        how = f" (the command exited with code {exit_code})" if exit_code else ""
        return (f"the {_count(said.died, 'process')} that loaded the runtime never reached their exit: "
                f"killed by a signal or aborted before MPI_Finalize{how}")
    return (f"the runtime was loaded by {_count(said.loaded, 'process')}, none of which called MPI_Init; "
            "under a launcher only MPI ranks write a log")
