"""The project's own error type: raised for user-facing problems, printed as one line."""

from __future__ import annotations


class ParioError(Exception):
    """A problem to report to the user in one line (bad path, corrupt log, bad option)."""


class LogFormatError(ParioError):
    """A log that cannot be read: truncated, corrupt, or not a log at all."""


class TooManyRanks(LogFormatError):
    """A log of a job with more ranks than the reader was allowed to analyse (its per-rank
    model would not fit the memory at hand)."""

    def __init__(self, message: str, nprocs: int) -> None:
        super().__init__(message)
        self.nprocs = nprocs
