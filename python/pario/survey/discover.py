"""The logs a survey reads: found under directories, named one by one, or listed in manifests."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pario.errors import ParioError
from pario.launch.job_logs import rank_logs

#: File names taken for logs: Darshan's (and its older gzip name) and pario's.
LOG_SUFFIXES: tuple[str, ...] = (".darshan", ".darshan.gz", ".pario")
#: Darshan's archive layout: <root>/<year>/<month>/<day>/<log>, month and day without zero padding.
_ARCHIVE_DAY = re.compile(r"(?:^|/)(\d{4})/(\d{1,2})/(\d{1,2})/[^/]+$")
#: A per-rank log of a pario job that did not finish MPI: ``<log>.rank<N>`` (``<log>`` is not written).
_RANK_LOG = re.compile(r"^(.+\.pario)\.rank\d+$")


@dataclass(frozen=True, slots=True)
class LogFile:
    """One log found: its path, and what tells a changed log from a surveyed one."""

    path: str
    size: int
    mtime_ns: int
    #: the day of the archive folder it lies in, else of its modification time
    day: dt.date


def is_log_name(name: str) -> bool:
    return name.endswith(LOG_SUFFIXES)


def archive_day(path: str) -> dt.date | None:
    """The day of Darshan's ``YYYY/M/D`` folders in ``path``, if it lies in such a folder."""
    m = _ARCHIVE_DAY.search(path)
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def _log_file(path: str) -> LogFile | None:
    """The log at ``path``; for a pario job that did not finish MPI, its ``<path>.rank<N>``
    logs (read together as one job: their sizes added, the latest time)."""
    try:
        st = os.stat(path)
        size, mtime_ns = st.st_size, st.st_mtime_ns
    except FileNotFoundError:
        try:
            parts = [p.stat() for p in rank_logs(Path(path))]
        except OSError:
            return None
        if not parts:
            return None
        size, mtime_ns = sum(p.st_size for p in parts), max(p.st_mtime_ns for p in parts)
    except OSError:
        return None
    day = archive_day(path) or dt.datetime.fromtimestamp(mtime_ns / 1e9, tz=dt.timezone.utc).date()
    return LogFile(path=path, size=size, mtime_ns=mtime_ns, day=day)


def _walk(root: str) -> Iterator[str]:
    """Log files under ``root``, in a stable order (sorted folder by folder).  The per-rank
    logs of a pario job that did not finish MPI give its log's path, once."""
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        names = set(files)
        for name in sorted(files):
            if is_log_name(name):
                yield os.path.join(folder, name)
                continue
            m = _RANK_LOG.match(name)
            if m and m.group(1) not in names:
                names.add(m.group(1))  # its other ranks' logs give nothing more
                yield os.path.join(folder, m.group(1))


def manifest_paths(manifest: str) -> Iterator[str]:
    """The paths a manifest lists: one per line; blank lines and lines starting with # skipped;
    relative paths are taken from the manifest's folder."""
    base = Path(manifest).resolve().parent
    try:
        with open(manifest, encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                text = line.strip()
                if text and not text.startswith("#"):
                    yield str(base / text) if not os.path.isabs(text) else text
    except OSError as exc:
        raise ParioError(f"{manifest}: cannot read the manifest: {exc.strerror}") from None


def find_logs(paths: Iterable[str], manifests: Iterable[str] = ()) -> Iterator[LogFile]:
    """Every log under ``paths`` (folders walked, files taken as given, whatever their name) and
    listed in ``manifests``, each once.  A path that does not exist is an error; a manifest's
    entry that does not exist is skipped (it is reported as an error row by the survey)."""
    seen: set[str] = set()  # the paths found so far: a log listed twice is read once

    def new(path: str) -> str | None:
        key = os.path.abspath(path)
        if key in seen:
            return None
        seen.add(key)
        return key

    for p in paths:
        if not os.path.exists(p) and not rank_logs(Path(p)):
            raise ParioError(f"{p}: no such file or directory")
        for path in _walk(p) if os.path.isdir(p) else [p]:
            key = new(path)
            found = _log_file(key) if key else None
            if found:
                yield found
    for m in manifests:
        for path in manifest_paths(m):
            key = new(path)
            if key:
                yield _log_file(key) or LogFile(path=key, size=-1, mtime_ns=-1, day=dt.date(1970, 1, 1))


def in_window(log: LogFile, since: dt.date | None, until: dt.date | None) -> bool:
    """Whether the log's day lies in [since, until] (either bound may be absent)."""
    return (since is None or log.day >= since) and (until is None or log.day <= until)


def parse_day(text: str) -> dt.date:
    """A --since/--until value: YYYY-MM-DD."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise ParioError(f"{text!r} is not a date (YYYY-MM-DD)") from None
