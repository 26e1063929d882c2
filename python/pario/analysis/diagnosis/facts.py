"""What the rules read: the model, filtered to the application's files, plus helpers.

:func:`facts_of` is computed once per profile; rules are pure functions of
``(Facts, RuleConfig)``.  Nothing here formats text for people except
:func:`tune_command` and :func:`file_label`.
"""

from __future__ import annotations

import fnmatch
import glob
import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.io import OPS
from pario.analysis.rankio import layer_members, outermost_records, rank_io
from pario.analysis.times import RankTimes, rank_times
from pario.model import LAYERS, Profile, fs_name, size_columns

TIME_COLS = {"read": "read_time", "write": "write_time", "meta": "meta_time"}
BYTES_COLS = {"read": "bytes_read", "write": "bytes_written"}


@dataclass(frozen=True)
class Striping:
    stripe_size: int
    stripe_count: int
    source: str  # "Darshan LUSTRE module" or "hints striping_factor/striping_unit"


@dataclass(frozen=True)
class Facts:
    """One run, as the rules see it.

    ``files`` holds only the application's files: records whose path matches
    ``RuleConfig.ignored_path_patterns`` (Python modules, shared libraries, the
    MPI library's lock files...) are left out and counted in ``ignored``.
    ``times`` (per-rank time classes) keeps all I/O, since it is time the run spent.
    """

    profile: Profile
    label: str
    nprocs: int
    runtime: float
    times: RankTimes
    files: dict[str, pd.DataFrame]
    ignored: dict[str, int]
    striping: dict[int, Striping]
    hints: dict[int, dict[str, str]]
    injected: dict[str, str]

    @property
    def source(self) -> str:
        return self.profile.job.source

    def layer(self, name: str) -> pd.DataFrame:
        return self.files.get(name, _empty())

    def members(self, layer: str) -> dict[int, np.ndarray]:
        return layer_members(self.profile.file_ranks, layer)

    def outermost(self) -> dict[str, pd.DataFrame]:
        return outermost_records(self.files)

    @property
    def has_io(self) -> bool:
        return any(len(f) for f in self.files.values())


def _empty() -> pd.DataFrame:
    return pd.DataFrame(
        {"id": pd.Series(dtype=np.uint64), "rank": pd.Series(dtype=np.int64), "name": pd.Series(dtype=object)}
    )


def _ignored_mask(names: pd.Series, patterns: tuple[str, ...]) -> np.ndarray:
    """Which names match one of the glob patterns (one regular expression, each distinct name once)."""
    if not patterns:
        return np.zeros(len(names), dtype=bool)
    regex = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))
    codes, uniques = pd.factorize(names.astype(str))
    hit = np.fromiter((regex.match(u) is not None for u in uniques), dtype=bool, count=len(uniques))
    return hit[codes] if len(codes) else np.zeros(0, dtype=bool)


def facts_of(profile: Profile, cfg: RuleConfig) -> Facts:
    """Everything the rules need from one profile."""
    files: dict[str, pd.DataFrame] = {}
    ignored: dict[str, int] = {}
    # the profiler's own log (and its temporary name) is never the application's file
    log = glob.escape(profile.job.path) if profile.job.path else ""
    own_log = (log, log + ".*") if log else ()
    patterns = (*cfg.ignored_path_patterns, *own_log)
    for layer in LAYERS:
        frame = profile.layer(layer)
        if len(frame) and "name" in frame:
            drop = _ignored_mask(frame["name"], patterns)
            ignored[layer] = int(drop.sum())
            frame = frame[~drop].reset_index(drop=True)
        files[layer] = frame
    rt = rank_times(profile)
    runtime = rt.runtime if rt.runtime > 0 else float(profile.job.runtime or 0.0)
    injected_raw = profile.job.metadata.get("injected_hints") or {}
    injected = (
        {str(k): str(v) for k, v in dict(injected_raw).items()} if isinstance(injected_raw, dict) else {}
    )
    return Facts(
        profile=profile,
        label=profile.job.path.rsplit("/", 1)[-1],
        nprocs=int(profile.job.nprocs),
        runtime=runtime,
        times=rt,
        files=files,
        ignored=ignored,
        striping=_striping(profile),
        hints=dict(profile.hints),
        injected=injected,
    )


def _striping(profile: Profile) -> dict[int, Striping]:
    out: dict[int, Striping] = {}
    raw = profile.job.metadata.get("lustre_striping") or {}
    if isinstance(raw, dict):
        for fid, s in raw.items():
            try:
                size, count = int(s["stripe_size"]), int(s["stripe_count"])
            except (KeyError, TypeError, ValueError):
                continue
            if size > 0 and count > 0:
                out[int(fid)] = Striping(size, count, "Darshan LUSTRE module")
    for fid, hints in profile.hints.items():
        if int(fid) in out:
            continue
        try:
            count = int(hints.get("striping_factor", "0"))
            size = int(hints.get("striping_unit", "0"))
        except ValueError:
            continue
        if count > 0 and size > 0:
            out[int(fid)] = Striping(size, count, "MPI-IO hints striping_factor / striping_unit")
    return out


# ------------------------------------------------------------------------------------------
# column helpers
# ------------------------------------------------------------------------------------------


def col(frame: pd.DataFrame, name: str) -> np.ndarray:
    """A counter as floats; missing columns, NaN and Darshan's -1 ("unknown") become 0."""
    if name not in frame or not len(frame):
        return np.zeros(len(frame))
    v = frame[name].to_numpy(dtype=np.float64, na_value=0.0)
    return np.where(np.isfinite(v) & (v > 0.0), v, 0.0)


def ops(frame: pd.DataFrame, layer: str, kind: str) -> np.ndarray:
    """Per record: operations of ``kind`` (read, write, meta) of ``layer``."""
    out = np.zeros(len(frame))
    for c in OPS[layer][kind]:
        out += col(frame, c)
    return out


def small_ops(frame: pd.DataFrame, layer: str, kind: str, limit: int) -> np.ndarray:
    """Per record: requests of ``kind`` in the histogram buckets at or below ``limit`` bytes."""
    from pario.analysis.diagnosis.config import SMALL_BOUNDS

    cols = size_columns(layer, kind)
    n = SMALL_BOUNDS.index(limit) + 1 if limit in SMALL_BOUNDS else 0
    out = np.zeros(len(frame))
    for c in cols[:n]:
        out += col(frame, c)
    return out


#: Upper bounds (bytes) of the ten request-size buckets; a bucket's lower bound is the previous one + 1.
BUCKET_UPPER: tuple[float, ...] = (
    100,
    1 << 10,
    10 << 10,
    100 << 10,
    1 << 20,
    4 << 20,
    10 << 20,
    100 << 20,
    1 << 30,
    float("inf"),
)


def small_bytes_bound(frame: pd.DataFrame, layer: str, kind: str, limit: int) -> np.ndarray:
    """Per record: an upper bound of the bytes moved by small requests.

    The smaller of: small requests x their buckets' upper bounds, and the bytes moved
    minus the least the other requests can carry (their buckets' lower bounds).
    """
    cols = size_columns(layer, kind)
    small = np.zeros(len(frame))
    large_min = np.zeros(len(frame))
    lower = 0.0
    for c, upper in zip(cols, BUCKET_UPPER, strict=True):
        n = col(frame, c)
        if upper <= limit:
            small += n * upper
        else:
            large_min += n * lower
        lower = upper + 1
    nbytes = col(frame, BYTES_COLS[kind])
    return np.clip(np.minimum(small, nbytes - large_min), 0.0, None)


def nranks(frame: pd.DataFrame, nprocs: int) -> np.ndarray:
    """Per record: ranks that touched it (1 for a rank's own record)."""
    rank = frame["rank"].to_numpy(dtype=np.int64) if "rank" in frame else np.zeros(len(frame), np.int64)
    shared = col(frame, "nranks")
    return np.where(rank >= 0, 1.0, np.where(shared > 0, shared, float(nprocs)))


def file_label(name: str) -> str:
    return str(name)


def hex_id(fid: int | np.integer) -> str:
    return f"{int(fid):016x}"


def mpiio_files(facts: Facts) -> pd.DataFrame:
    """One row per MPI-IO file: ranks, independent and collective requests, bytes, times."""
    m = facts.layer("mpiio")
    if not len(m):
        return pd.DataFrame()
    df = pd.DataFrame(
        {
            "id": m["id"].to_numpy(),
            "name": m["name"].to_numpy(),
            "ranks": nranks(m, facts.nprocs),
            "indep_reads": col(m, "indep_reads"),
            "indep_writes": col(m, "indep_writes"),
            "coll_reads": col(m, "coll_reads") + col(m, "split_reads"),
            "coll_writes": col(m, "coll_writes") + col(m, "split_writes"),
            "other_reads": col(m, "nb_reads") + col(m, "shared_reads"),
            "other_writes": col(m, "nb_writes") + col(m, "shared_writes"),
            "bytes_read": col(m, "bytes_read"),
            "bytes_written": col(m, "bytes_written"),
            "read_time": col(m, "read_time"),
            "write_time": col(m, "write_time"),
            "noncontig": col(m, "noncontig_view"),
            "views": col(m, "views"),
        }
    )
    return df.groupby("id", sort=False).agg(
        name=("name", "first"),
        ranks=("ranks", "sum"),
        indep_reads=("indep_reads", "sum"),
        indep_writes=("indep_writes", "sum"),
        coll_reads=("coll_reads", "sum"),
        coll_writes=("coll_writes", "sum"),
        other_reads=("other_reads", "sum"),
        other_writes=("other_writes", "sum"),
        bytes_read=("bytes_read", "sum"),
        bytes_written=("bytes_written", "sum"),
        read_time=("read_time", "sum"),
        write_time=("write_time", "sum"),
        noncontig=("noncontig", "max"),
        views=("views", "sum"),
    )


# ------------------------------------------------------------------------------------------
# time at stake
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stake:
    """Per-rank time of a set of operations: the largest rank's, the mean, per rank."""

    max: float
    mean: float
    per_rank: np.ndarray
    exact: bool

    @property
    def argmax(self) -> int:
        return int(np.argmax(self.per_rank)) if len(self.per_rank) else -1


def stake(
    facts: Facts, layer: str, records: pd.DataFrame, weights: Mapping[str, np.ndarray | float]
) -> Stake:
    """Per-rank time of ``records`` with each time kind scaled by ``weights[kind]``.

    ``weights`` maps "read", "write", "meta" to a factor per record (or one
    factor); kinds not named count 0.  Shared records are spread over their
    ranks as :func:`pario.analysis.rankio.rank_io` does (exact when the data
    allow it), with the fastest and slowest rank's times scaled alike.
    """
    n = facts.nprocs
    if not len(records) or n <= 0:
        return Stake(0.0, 0.0, np.zeros(max(n, 0)), True)
    rec = records.copy()
    old_total = np.zeros(len(rec))
    new_total = np.zeros(len(rec))
    for kind, column in TIME_COLS.items():
        t = col(rec, column)
        w = weights.get(kind, 0.0)
        scaled = t * (np.asarray(w, dtype=np.float64) if not np.isscalar(w) else float(w))
        old_total += t
        new_total += scaled
        rec[column] = scaled
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.where(old_total > 0, new_total / np.where(old_total > 0, old_total, 1.0), 0.0)
    for c in ("fastest_rank_time", "slowest_rank_time"):
        if c in rec:
            rec[c] = col(rec, c) * factor
    rio = rank_io(rec, n, facts.members(layer))
    per_rank = rio.table["time"].to_numpy()
    return Stake(
        float(per_rank.max()) if len(per_rank) else 0.0,
        float(per_rank.mean()) if len(per_rank) else 0.0,
        per_rank,
        bool(rio.exact_max["time"]),
    )


# ------------------------------------------------------------------------------------------
# MPI-IO: hints, aggregators, file systems
# ------------------------------------------------------------------------------------------


def hint(facts: Facts, fid: int, key: str) -> str | None:
    return facts.hints.get(int(fid), {}).get(key)


def hint_origin(facts: Facts, key: str, value: str) -> str:
    """'PARIO_HINTS' if pario injected this hint with this value, else 'application'."""
    return "PARIO_HINTS" if facts.injected.get(key) == value else "application"


def io_component(facts: Facts, fid: int) -> str:
    """'romio', 'ompio' or '' (unknown) for a file's MPI-IO implementation."""
    mca = (hint(facts, fid, "mca:io") or "").lower()
    if mca.startswith("romio"):
        return "romio"
    if mca.startswith("ompio"):
        return "ompio"
    lib = facts.profile.job.mpi_library.lower()
    if "open mpi" in lib:
        return "ompio"
    if lib and ("mpich" in lib or "intel" in lib or "cray" in lib or "mvapich" in lib):
        return "romio"
    return ""


@dataclass(frozen=True)
class Participation:
    """How many ranks did a file's file-system (POSIX) I/O.

    ``effective`` is the participation ratio (sum b)^2 / sum b^2 over the ranks'
    bytes: k when k ranks move equal shares and the others nothing.  For a
    shared record it comes from the mean and variance of bytes per rank.
    """

    effective: float
    ranks: int
    top_rank: int
    top_share: float
    bytes: float


def participation(facts: Facts, fid: int) -> Participation | None:
    """File-system-level participation for file ``fid`` from its POSIX records (None if unknown)."""
    posix = facts.layer("posix")
    if not len(posix):
        return None
    rec = posix[posix["id"].to_numpy(dtype=np.uint64) == np.uint64(fid)]
    if not len(rec):
        return None
    b = col(rec, "bytes_read") + col(rec, "bytes_written")
    total = float(b.sum())
    if total <= 0:
        return None
    mpiio = facts.layer("mpiio")
    if len(mpiio):
        m = mpiio[mpiio["id"].to_numpy(dtype=np.uint64) == np.uint64(fid)]
        above = float((col(m, "bytes_read") + col(m, "bytes_written")).sum())
        if total < 0.5 * above:
            return None  # the POSIX records miss most of the data (partial log): no conclusion
    rank = rec["rank"].to_numpy(dtype=np.int64)
    if (rank >= 0).all():
        k = total * total / float((b * b).sum())
        i = int(np.argmax(b))
        return Participation(k, len(rec), int(rank[i]), float(b[i] / total), total)
    if len(rec) != 1:
        return None
    r = rec.iloc[0]
    n = float(nranks(rec, facts.nprocs)[0])
    var = float(r.get("variance_rank_bytes", np.nan)) if "variance_rank_bytes" in rec else math.nan
    slow_b = float(col(rec, "slowest_rank_bytes")[0])
    fast_b = float(col(rec, "fastest_rank_bytes")[0])
    top_rank, top_b = (
        (int(r["slowest_rank"]), slow_b) if slow_b >= fast_b else (int(r["fastest_rank"]), fast_b)
    )
    mean = total / n
    if math.isfinite(var) and var >= 0 and n >= 1:
        k = total * total / (n * (var + mean * mean))
    elif top_b >= 0.9 * total:
        k = 1.0
    else:
        return None
    return Participation(min(max(k, 1.0), n), int(n), top_rank, min(top_b / total, 1.0), total)


def file_size(facts: Facts, fid: int) -> float:
    """Size of a file as the run left it: highest byte written or read + 1 (else the bytes written)."""
    size = 0.0
    for layer in ("posix", "stdio"):
        frame = facts.layer(layer)
        if not len(frame):
            continue
        sel = frame[frame["id"].to_numpy(dtype=np.uint64) == np.uint64(fid)]
        for c in ("max_byte_written", "max_byte_read"):
            if c in sel and len(sel):
                v = sel[c].to_numpy(dtype=np.float64, na_value=-1.0)
                if len(v) and np.nanmax(v) >= 0:
                    size = max(size, float(np.nanmax(v)) + 1.0)
    if size <= 0:
        for layer in ("mpiio", "posix", "stdio"):
            frame = facts.layer(layer)
            if len(frame):
                sel = frame[frame["id"].to_numpy(dtype=np.uint64) == np.uint64(fid)]
                size = max(size, float(col(sel, "bytes_written").sum()))
    return size


def fs_of(facts: Facts, fid: int, name: str) -> str:
    """File system type of a file: from pario's statfs magic or Darshan's mount table."""
    if int(fid) in facts.striping:
        return "lustre"
    for layer in ("posix", "mpiio"):
        frame = facts.layer(layer)
        if "fs_type" in frame and len(frame):
            sel = frame[frame["id"].to_numpy(dtype=np.uint64) == np.uint64(fid)]
            magic = col(sel, "fs_type")
            if len(magic) and magic.max() > 0:
                return fs_name(int(magic.max()))
    mounts = facts.profile.job.metadata.get("mounts") or []
    best, kind = -1, ""
    for m in mounts:  # type: ignore[union-attr]
        try:
            point, fstype = str(m[0]), str(m[1])
        except (IndexError, TypeError):
            continue
        if (name == point or name.startswith(point.rstrip("/") + "/")) and len(point) > best:
            best, kind = len(point), fstype
    return kind


def tune_command(facts: Facts) -> str:
    """A ``pario tune`` line for this run's own command (a placeholder when it is unknown)."""
    job = facts.profile.job
    argv = [a for a in job.argv if a]
    if not argv or job.source == "darshan" and not argv[0].startswith("/"):
        app = "<your program and its arguments>"
    else:
        app = shlex.join(argv)
    launcher = f"mpirun -np {facts.nprocs}" if facts.nprocs > 1 else ""
    return " ".join(p for p in ("pario tune --", launcher, app) if p)
