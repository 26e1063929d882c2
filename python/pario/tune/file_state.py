"""Every run of a study starts with the files as the study's first run found them.

A program that creates its output file runs faster when the file is already there (an overwrite
in the page cache costs a third to a half of a first write): if the default's run created the file
and every later trial overwrote it, the trials would be measured under easier conditions than the
default.  So before its first run a study lists the directories the command can write in (the
working directory and those of the paths in its arguments), and before each run it removes the
files that earlier runs wrote there and that were not listed: each run then creates them again,
as the first one did.  Files that were there before the study are overwritten by every run alike
and never removed.  Runs at once (``--jobs`` above 1) share no such state: each one's files are
its own (``{trial_dir}``), so nothing is removed then.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: the study directory's record of the files before the first run
STATE_FILE = "files-before.json"
#: directories with more entries than this are not listed (nothing in them is removed)
MAX_ENTRIES = 100_000


@dataclass
class FileState:
    """The directories listed before the study's first run, and the files runs created there."""

    listed: dict[str, list[str]]
    created: set[str] = field(default_factory=set)

    def was_created(self, path: str) -> bool:
        """Whether ``path`` is in a listed directory and was not there before the study."""
        parent, name = os.path.split(os.path.normpath(path))
        names = self.listed.get(parent)
        return names is not None and name not in names


def directories(command: Sequence[str], workdir: Path) -> list[Path]:
    """The directories the command can write in that a study lists: the working directory and
    the existing directories of the paths in its arguments."""
    out = [workdir.resolve()]
    for arg in command[1:]:
        value = arg.partition("=")[2] if arg.startswith("-") and "=" in arg else arg
        if "/" not in value or "{" in value:
            continue
        path = (workdir / value).resolve()
        parent = path if path.is_dir() else path.parent
        if parent.is_dir() and parent not in out:
            out.append(parent)
    return out


def _listing(directory: Path) -> list[str] | None:
    try:
        with os.scandir(directory) as entries:
            names = []
            for entry in entries:
                names.append(entry.name)
                if len(names) > MAX_ENTRIES:
                    return None
            return sorted(names)
    except OSError:
        return None


def before_first_run(study_dir: Path, command: Sequence[str], workdir: Path) -> FileState:
    """The study's file state: listed now when the study has none yet (its first run is to
    come), else the one listed before its first run (a resumed study)."""
    path = study_dir / STATE_FILE
    if path.is_file():
        data: dict[str, Any] = json.loads(path.read_text())
        return FileState({str(k): list(v) for k, v in data.get("listed", {}).items()},
                         set(data.get("created", [])))
    listed = {str(d): names for d in directories(command, workdir) if (names := _listing(d)) is not None}
    state = FileState(listed)
    save(state, study_dir)
    return state


def save(state: FileState, study_dir: Path) -> None:
    study_dir.mkdir(parents=True, exist_ok=True)
    tmp = study_dir / (STATE_FILE + ".tmp")
    tmp.write_text(json.dumps({"listed": state.listed, "created": sorted(state.created)}))
    tmp.replace(study_dir / STATE_FILE)


def note_written(state: FileState, written: Iterable[str], keep_out: Path) -> bool:
    """Add the files a run wrote that the study created (outside ``keep_out``, the study's own
    directory); whether any is new."""
    inside = str(keep_out.resolve())
    new = {p for p in written if state.was_created(p) and not p.startswith(inside + os.sep)} - state.created
    state.created |= new
    return bool(new)


def clear(state: FileState) -> list[str]:
    """Remove the files earlier runs created (as they were before the study: absent); the paths
    removed."""
    removed = []
    for path in sorted(state.created):
        try:
            if os.path.isfile(path) and not os.path.islink(path):
                os.unlink(path)
                removed.append(path)
        except OSError:
            continue
    return removed


def written_files(profile: Any) -> list[str]:
    """The absolute paths of the files a run's log says it wrote (POSIX, STDIO, MPI-IO)."""
    import numpy as np

    out: set[str] = set()
    for layer in ("posix", "stdio", "mpiio"):
        table = profile.files.get(layer)
        if table is None or not len(table) or "bytes_written" not in table:
            continue
        wrote = np.asarray(table["bytes_written"], dtype=np.float64) > 0
        out.update(str(n) for n in np.asarray(table["name"])[wrote] if str(n).startswith("/"))
    return sorted(out)
