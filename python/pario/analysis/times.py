"""Per-rank time classes (wall, useful computation, I/O, MPI) taken from a profile."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from pario.model import IO_KINDS, Profile, add_derived_rank_columns, rank_ids
from pario.model.rankio import SHARED_NOTE
from pario.table import Table, as_table

KIND_TIME = {"read": "read_time", "write": "write_time", "meta": "meta_time", "io": "time"}


@dataclass(frozen=True)
class RankTimes:
    """Per-rank time classes of one run, as NumPy arrays in rank order.

    ``mpi`` is None when the source records no MPI time (a Darshan log without its APMPI
    module); ``mpi_note`` says where it comes from when that needs saying (APMPI).  When
    ``wall_per_rank`` is False every rank is taken to run for the job's run
    time ``runtime`` (Darshan records no per-rank wall time).
    ``io_exact_ranks[kind]`` / ``io_exact_max[kind]`` (kind in read, write,
    meta, io) say whether per-rank I/O values / their maximum are exact.
    """

    ranks: np.ndarray
    wall: np.ndarray
    io_read: np.ndarray
    io_write: np.ndarray
    io_meta: np.ndarray
    mpi: np.ndarray | None
    runtime: float
    source: str = "pario"
    wall_per_rank: bool = True
    io_exact_ranks: dict[str, bool] | None = None
    io_exact_max: dict[str, bool] | None = None
    no_mpi_reason: str = ""
    mpi_note: str = ""

    @property
    def nranks(self) -> int:
        return len(self.ranks)

    @functools.cached_property
    def io(self) -> np.ndarray:
        """Read + write + metadata time per rank (made once; read-only: it is shared)."""
        out = self.io_read + self.io_write + self.io_meta
        out.flags.writeable = False
        return out

    @property
    def useful(self) -> np.ndarray:
        """Useful computation U = wall - I/O - MPI (MPI taken as 0 when unknown)."""
        busy = self.io + (self.mpi if self.mpi is not None else 0.0)
        return np.clip(self.wall - busy, 0.0, None)

    def io_of(self, kind: str) -> np.ndarray:
        return {"read": self.io_read, "write": self.io_write, "meta": self.io_meta}.get(kind, self.io)

    def exact_max(self, kind: str) -> bool:
        return True if self.io_exact_max is None else self.io_exact_max.get(kind, True)

    def exact_ranks(self, kind: str) -> bool:
        return True if self.io_exact_ranks is None else self.io_exact_ranks.get(kind, True)

    @property
    def io_at_stake(self) -> float:
        """What faster I/O can save the run at most: the slowest rank's I/O time (one bound for a
        whole report; ranks that wait for each other's I/O outside I/O calls, in MPI, can lose more:
        LOAD-IO-STAGGERED says so)."""
        return float(self.io.max()) if self.nranks else 0.0

    @property
    def io_note(self) -> str:
        return SHARED_NOTE


def _array(ranks: Table, column: str) -> np.ndarray:
    """A rank column as floats, 0 where missing (or absent)."""
    if column not in ranks:
        return np.zeros(len(ranks))
    return np.nan_to_num(np.asarray(ranks[column], dtype=np.float64), nan=0.0)


def at_ranks(per_rank: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """``per_rank`` (row i: rank i) at ``ranks``, 0 for a rank beyond it."""
    per_rank, ranks = np.asarray(per_rank), np.asarray(ranks)
    if per_rank.dtype == np.float64 and len(ranks) == len(per_rank) and _every_rank(ranks):
        return per_rank.copy()  # the usual rank table, one row per rank in order: what the below gives
    inside = (ranks >= 0) & (ranks < len(per_rank))
    return np.where(inside, per_rank[np.where(inside, ranks, 0)] if len(per_rank) else 0.0, 0.0)


def _every_rank(ranks: np.ndarray) -> bool:
    """``ranks`` are 0, 1, ..., len(ranks) - 1."""
    n = len(ranks)
    return ranks.dtype.kind in "iu" and (not n or bool((ranks == np.arange(n)).all()))


def rank_times(profile: Profile) -> RankTimes:
    """The time classes of every rank in ``profile``."""
    job = profile.job
    ranks = as_table(profile.ranks)
    if "io" not in ranks or "useful" not in ranks:
        ranks = add_derived_rank_columns(ranks)
    wall = _array(ranks, "wall")
    runtime = float(job.runtime) if job.runtime and job.runtime > 0 else float(wall.max(initial=0.0))
    mpi = _array(ranks, "mpi") if job.has_mpi_time else None
    reason = "" if job.has_mpi_time else f"{_source_name(job.source)} logs record no MPI time"
    if not job.has_mpi_time and job.metadata.get("mpi_time_source"):  # APMPI records not usable
        reason = str(job.metadata["mpi_time_source"]).rstrip(".")
    note = str(job.metadata.get("mpi_time_source") or "") if job.has_mpi_time else ""
    ids = rank_ids(ranks)
    common = {"ranks": ids, "wall": wall, "mpi": mpi, "runtime": runtime,
              "source": job.source, "wall_per_rank": job.source != "darshan", "no_mpi_reason": reason,
              "mpi_note": note}
    if job.has_rank_times:
        return RankTimes(io_read=_array(ranks, "io_read"), io_write=_array(ranks, "io_write"),
                         io_meta=_array(ranks, "io_meta"), **common)  # type: ignore[arg-type]  # common holds the shared fields
    # the profile's own layer order: the order of the sums
    combined = profile.per_rank_io().time_outermost()
    table = combined.table
    exact_ranks = {k: combined.exact_ranks[c] for k, c in KIND_TIME.items()}
    exact_max = {k: combined.exact_max[c] for k, c in KIND_TIME.items()}
    return RankTimes(io_read=at_ranks(table["read_time"], ids), io_write=at_ranks(table["write_time"], ids),
                     io_meta=at_ranks(table["meta_time"], ids), io_exact_ranks=exact_ranks,
                     io_exact_max=exact_max, **common)  # type: ignore[arg-type]  # common holds the shared fields


def _source_name(source: str) -> str:
    return {"darshan": "Darshan", "pario": "pario"}.get(source, source)


__all__ = ["RankTimes", "rank_times", "IO_KINDS"]
