"""Readers: a pario log or a Darshan log becomes one :class:`pario.model.Profile`."""

from __future__ import annotations

import os
from pathlib import Path

from pario.errors import LogFormatError, ParioError
from pario.launch.job_logs import lost_reason, rank_logs
from pario.model import Profile

PARIO_MAGIC = b"PARIOLOG"
GZIP_MAGIC = b"\x1f\x8b"
#: The most a gzip-compressed log may inflate to (Darshan's own limit on a log's regions).
MAX_GZIP_BYTES = 1 << 34

__all__ = ["read_log", "LogFormatError"]


def read_log(path: str | os.PathLike[str], *, isolated: bool = True, max_ranks: int | None = None,
             trace: bool = True) -> Profile:
    """Read a pario log or a Darshan log (chosen by content, not by name).

    ``isolated``: Darshan's library reads the log in a forked child, so that a crash of the
    library on a damaged log is an error, not the end of the caller (pario survey's workers read
    in their own process: a worker that dies has its logs read again one per task).
    ``max_ranks``: a Darshan log of a larger job raises :class:`pario.errors.TooManyRanks`
    (a few kilobytes of Darshan log can describe a million ranks, and the model has arrays of
    one value per rank; a pario log holds its ranks' data, so its size already bounds them).
    ``trace`` False: ``Profile.trace`` is None (a Darshan log's DXT segments are not read).
    """
    p = Path(path)
    if p.is_dir():
        raise ParioError(f"{p}: is a directory, not a log")
    try:
        with open(p, "rb") as fh:
            head = fh.read(8)
    except FileNotFoundError:
        # A job that never reached MPI_Finalize left one log per rank beside it.
        parts = rank_logs(p)
        if parts:
            from pario.log.pario_reader import merge_rank_logs, read_pario_log

            merged = merge_rank_logs([read_pario_log(x) for x in parts], str(p))
            if not trace:
                merged.trace = None
            return merged
        why = lost_reason(p)
        if why is not None:  # a job step pario run found dead
            raise ParioError(f"{p}: this MPI job wrote no log: {why}") from None
        raise ParioError(f"{p}: no such file") from None
    except OSError as exc:
        raise ParioError(f"{p}: cannot read: {exc.strerror}") from None
    if head == PARIO_MAGIC:
        from pario.log.pario_reader import read_pario_log

        profile = read_pario_log(p)
        if not trace:
            profile.trace = None
        return profile
    if _looks_like_darshan(head):
        from pario.log.darshan_reader import read_darshan_log

        return read_darshan_log(p, isolated=isolated, max_ranks=max_ranks, trace=trace)
    if head[:2] == GZIP_MAGIC:
        return _read_gzipped(p, isolated=isolated, max_ranks=max_ranks, trace=trace)
    raise LogFormatError(f"{p}: not a pario or Darshan log")


def _read_gzipped(log_path: Path, *, isolated: bool, max_ranks: int | None, trace: bool) -> Profile:
    """A log compressed whole with gzip (an archive's ``*.darshan.gz``): inflated into a
    temporary file, read, and named as the compressed file."""
    import dataclasses
    import gzip
    import tempfile
    import zlib

    with tempfile.TemporaryDirectory(prefix="pario-gz-") as tmp:
        inner = Path(tmp) / (log_path.name[:-3] if log_path.name.endswith(".gz") else log_path.name)
        try:
            with gzip.open(log_path, "rb") as src, open(inner, "wb") as dst:
                size = 0
                while chunk := src.read(1 << 20):
                    size += len(chunk)
                    if size > MAX_GZIP_BYTES:
                        raise LogFormatError(f"{log_path}: inflates beyond {MAX_GZIP_BYTES} bytes")
                    dst.write(chunk)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise LogFormatError(f"{log_path}: damaged gzip file ({exc})") from None
        except OSError as exc:  # the temporary folder full, say
            raise ParioError(f"{log_path}: cannot inflate it into {tmp}: {exc.strerror or exc}") from None
        with open(inner, "rb") as fh:
            head = fh.read(8)
        if head != PARIO_MAGIC and not _looks_like_darshan(head):
            raise LogFormatError(f"{log_path}: a gzip file that holds no pario or Darshan log")
        try:
            profile = read_log(inner, isolated=isolated, max_ranks=max_ranks, trace=trace)
        except ParioError as exc:  # said of the file the user named, the error's kind kept
            exc.args = (str(exc).replace(str(inner), str(log_path)),)
            raise exc from None
    profile.job = dataclasses.replace(profile.job, path=str(log_path))
    return profile


def _looks_like_darshan(head: bytes) -> bool:
    # Darshan logs start with a version string such as "3.41" or "3.10".
    return len(head) >= 4 and head[:2] in (b"3.", b"2.") and head[2:3].isdigit()
