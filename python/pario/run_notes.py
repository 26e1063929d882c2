"""Why a job left no log: the notes the runtime's processes leave for ``pario run``.

``pario run`` names a directory beside the log in ``PARIO_RUN_NOTES``; every process that loads
the runtime writes ``<dir>/<pid>`` when it starts ("started") and rewrites it when it leaves
without a log ("exited <why>", whether it used MPI, whether pario saw MPI_Init, the MPI library).
src/runtime/notes.c writes them.  When no log appears, :func:`no_log_reason` turns them into one
sentence.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Note:
    """What one process said."""

    exited: bool
    mpi_used: bool
    mpi_library: str


def create(where: Path) -> Path | None:
    """A fresh notes directory in ``where`` (the log's directory, which every rank reaches);
    None where it cannot be made (the runtime then reports problems on stderr only)."""
    path = where / f".pario-notes-{os.getpid()}"
    try:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()
    except OSError:
        return None
    return path


def discard(notes: Path | None) -> None:
    if notes is not None:
        shutil.rmtree(notes, ignore_errors=True)


def parse(text: str) -> Note:
    """One note file's text (``started``, or ``exited WHY`` and ``key value`` lines)."""
    lines = text.splitlines()
    fields = dict(line.partition(" ")[::2] for line in lines[1:])
    return Note(exited=bool(lines) and lines[0].startswith("exited"),
                mpi_used=fields.get("mpi_used") == "1",
                mpi_library=fields.get("mpi_library", "").strip())


def read(notes: Path) -> list[Note]:
    found = []
    for path in sorted(notes.iterdir()):
        try:
            found.append(parse(path.read_text(errors="replace")))
        except OSError:
            continue
    return found


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 'es'}"


def lost_job_reason(notes: Path | None, exit_code: int) -> str:
    """Why an MPI job that reached MPI_Init left no log, as far as the notes tell."""
    how = f" (the command exited with code {exit_code})" if exit_code else ""
    said = read(notes) if notes is not None and notes.is_dir() else []
    died = [n for n in said if not n.exited]
    if died:
        return (f"its ranks were killed or aborted before MPI_Finalize ({_count(len(died), 'process')} that "
                f"loaded the runtime, its ranks among them, never reached their exit){how}")
    return f"its ranks were killed or aborted before MPI_Finalize{how}"


def no_log_reason(notes: Path | None, exit_code: int) -> str:
    """Why no log was written, as far as the notes tell."""
    if notes is None:
        return "the runtime's messages, if any, are above"
    said = read(notes) if notes.is_dir() else []
    if not said and exit_code:
        return (f"the command failed (exit code {exit_code}) before any process of the program started "
                "(see its messages above)")
    if not said:
        return ("no process of the command loaded the pario runtime: the launcher did not pass LD_PRELOAD "
                "on to the program, or the program is statically linked or setuid")
    unseen = [n for n in said if n.mpi_used]
    if unseen:
        library = unseen[0].mpi_library or "unknown"
        return (f"{_count(len(unseen), 'process')} started MPI through an entry point pario does not "
                f"intercept (their MPI_Init was not seen); MPI library: {library}")
    died = [n for n in said if not n.exited]
    if died and len(died) == len(said):
        how = f" (the command exited with code {exit_code})" if exit_code else ""
        return (f"the {_count(len(died), 'process')} that loaded the runtime never reached their exit: "
                f"killed by a signal or aborted before MPI_Finalize{how}")
    return (f"the runtime was loaded by {_count(len(said), 'process')}, none of which called MPI_Init; "
            "under a launcher only MPI ranks write a log")
