"""All thresholds of the diagnosis rules, in one frozen dataclass, with units.

Every field has a unit and a one-line meaning in its metadata; messages are
formatted from these fields, never from retyped numbers.  A file (TOML or
JSON) can override any of them::

    # diagnose.toml  (keys at the top level or under [diagnosis])
    small_request_bytes = 10240
    fpp_min_files = 256
    disabled_rules = ["MPIIO-DEFAULT-HINTS"]

docs/diagnosis.md lists every field with its default and the rules that read it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pario.analysis.breakdown import IO_BOUND_MIN_SHARE, POP_THRESHOLD
from pario.analysis.files import MPI_LIBRARY_FILES
from pario.errors import ParioError

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

#: Upper bounds of the request-size histogram buckets a "small" threshold may take
#: (the histograms only say how many requests fell at or below each bound).
SMALL_BOUNDS: tuple[int, ...] = (100, 1 * KiB, 10 * KiB, 100 * KiB, 1 * MiB)

#: Files that are not the application's data: Python and shared-library loads,
#: the MPI library's own lock and shared-memory files, system trees.
DEFAULT_IGNORED: tuple[str, ...] = (
    "*/site-packages/*",
    "*/dist-packages/*",
    "*.py",
    "*.pyc",
    "*.so",
    "*.so.*",
    "/proc/*",
    "/sys/*",
    "/dev/*",
    "/etc/*",
    "/usr/*",
    "/lib/*",
    "/lib64/*",
    "/run/*",
    *MPI_LIBRARY_FILES,
    "*/.nfs*",
)


def _f(default: Any, unit: str, doc: str) -> Any:
    return field(default=default, metadata={"unit": unit, "doc": doc})


@dataclass(frozen=True)
class RuleConfig:
    """Thresholds of every rule.  Units: B bytes, s seconds, share = fraction of 1."""

    # --- general -------------------------------------------------------------------------
    severity_critical_share: float = _f(
        0.25, "share", "a finding whose time lost is at least this share of the run time is critical"
    )
    severity_warning_share: float = _f(0.05, "share", "... at least this share is a warning (below: info)")
    severity_critical_seconds: float = _f(
        1.0, "s", "... and critical only when it is also at least this many seconds (a share of a short run "
        "is not worth a user's hour)"
    )
    severity_warning_seconds: float = _f(0.1, "s", "... a warning only when it is at least this many seconds")
    min_time_lost_share: float = _f(
        0.01,
        "share",
        "time-based rules stay silent when the time at stake is below this share of the run time",
    )
    top_subjects: int = _f(5, "count", "files or ranks listed per finding")
    ignored_path_patterns: tuple[str, ...] = _f(
        DEFAULT_IGNORED, "glob", "files that are not the application's data (not used as evidence)"
    )
    disabled_rules: tuple[str, ...] = _f((), "rule ids", "rules not to run")

    # --- requests --------------------------------------------------------------------------
    small_request_bytes: int = _f(
        100 * KiB,
        "B",
        "a request of at most this size is small (one of 100, 1024, 10240, 102400, 1048576: the histogram "
        "bucket bounds)",
    )
    small_min_requests: int = _f(16, "count", "fewest small requests (of one direction) for a finding")
    small_min_share: float = _f(0.5, "share", "fewest small requests as a share of all requests")
    small_min_bytes_share: float = _f(
        0.1,
        "share",
        "small requests that carry less than this share of the bytes are reported only when they cost at "
        "least severity_warning_share of the run",
    )
    misaligned_min_share: float = _f(
        0.5,
        "share",
        "share of requests not aligned to the file system block (or Lustre stripe) for a finding",
    )
    misaligned_min_requests: int = _f(64, "count", "fewest misaligned requests for a finding")
    random_min_share: float = _f(0.25, "share", "share of requests that go backwards in the file")
    random_min_requests: int = _f(64, "count", "fewest non-sequential requests for a finding")
    redundant_min_factor: float = _f(
        2.0, "x", "bytes moved / distinct bytes of the file at or above which data is moved repeatedly"
    )
    redundant_min_bytes: int = _f(1 * MiB, "B", "fewest repeated bytes for a finding")
    latency_max_rate: float = _f(1.0 * MiB, "B/s", "a file whose I/O runs slower than this is latency-bound")

    # --- load ------------------------------------------------------------------------------
    load_min_lost_share: float = _f(
        0.05,
        "share",
        "the load rules report imbalance, stragglers, few busy ranks or ranks taking turns only when the "
        "time lost (max - mean, max - median, or the I/O phase - a rank's own I/O) is at least this share "
        "of the run time",
    )
    load_even_work_min_seconds: float = _f(
        0.5,
        "s",
        "where every rank makes the same calls and moves the same bytes, I/O imbalance is reported only "
        "from this many seconds lost: below, it is the system's noise (scheduling, caches), not the "
        "program's",
    )
    compute_min_lost_seconds: float = _f(
        0.1,
        "s",
        "computation imbalance is reported only from this many seconds lost (and load_min_lost_share of "
        "the run): below, it is scheduling noise",
    )
    straggler_min_ratio: float = _f(
        2.0, "x", "a rank whose I/O time is at least this multiple of the median rank's is a straggler"
    )
    straggler_max_share: float = _f(
        0.1, "share", "stragglers are at most this share of the ranks (at least one)"
    )
    few_ranks_bytes_share: float = _f(0.9, "share", "share of the bytes that 'the ranks doing the I/O' carry")
    few_ranks_max_share: float = _f(
        0.25, "share", "those ranks are 'few' when at most this share of all ranks"
    )
    few_ranks_min_nprocs: int = _f(4, "count", "smallest job for the few-ranks rule")

    # --- trace (offsets and times of each call: Darshan DXT, pario run --trace) -----------------
    trace_serial_min_ranks: int = _f(
        4, "count", "fewest ranks reading (or writing) at the file-system level for the turn-taking rule"
    )
    trace_serial_max_shared: float = _f(
        0.05, "share", "time with two calls or more in flight, as a share of the time with at least one, "
        "at or below which the ranks take turns"
    )
    trace_overlap_min_bytes: int = _f(
        1, "B", "fewest bytes of a file written by two ranks or more for a finding"
    )
    trace_pattern_min_calls: int = _f(
        64, "count", "fewest small requests to a file (one direction) for the strided/random rule"
    )
    trace_pattern_min_share: float = _f(
        0.5, "share", "share of a file's requests that are strided (or random) for the strided/random rule"
    )

    # --- interfaces ------------------------------------------------------------------------
    collective_max_request_bytes: int = _f(
        1 * MiB, "B", "mean independent MPI-IO request below which collective I/O would merge requests"
    )
    independent_min_share: float = _f(0.9, "share", "share of MPI-IO requests that are independent")
    independent_min_requests: int = _f(64, "count", "fewest independent MPI-IO requests for a finding")
    fpp_min_files: int = _f(
        1024,
        "count",
        "files written by one rank each, at or above which file-per-process loads the metadata servers",
    )
    stdio_bulk_min_bytes: int = _f(16 * MiB, "B", "STDIO bytes at or above which STDIO carries bulk data")
    stdio_bulk_min_share: float = _f(0.5, "share", "... and at least this share of all bytes moved")
    stdio_buffered_call_bytes: int = _f(
        4096, "B", "STDIO calls smaller than this go through the stream buffer (glibc: the file system block)"
    )
    metadata_min_share_of_io: float = _f(
        0.3, "share", "metadata time as a share of I/O time for a metadata-heavy run"
    )

    metadata_min_calls: int = _f(
        1000, "count", "fewest opens, stats and seeks (all ranks) for a metadata-heavy run"
    )
    metadata_min_time_share: float = _f(
        0.05, "share", "the slowest rank's metadata time as a share of the run for a metadata-heavy run"
    )

    # --- time ------------------------------------------------------------------------------
    io_bound_max_efficiency: float = _f(
        POP_THRESHOLD, "share", "I/O efficiency (POP IOE) below which a run is I/O-bound"
    )
    io_bound_min_share: float = _f(
        IO_BOUND_MIN_SHARE, "share",
        "mean I/O time per rank as a share of the run time at or above which a run is I/O-bound"
    )

    # --- I/O activity over time (a heat map: Darshan's HEATMAP module) ----------------------
    activity_min_bins: int = _f(
        8, "count", "fewest time bins a heat map must have for the activity rules (fewer cannot tell when "
        "the I/O happened)"
    )
    activity_min_bin_share: float = _f(
        0.01, "share", "a rank is in I/O in a time bin when it moves there at least this share of the bytes "
        "of its own busiest bin"
    )
    burst_bytes_share: float = _f(0.8, "share", "share of the bytes that 'the bursts' carry")
    burst_max_time_share: float = _f(
        0.25, "share", "I/O comes in bursts when the fewest time bins carrying burst_bytes_share of the "
        "bytes are at most this share of the bins"
    )
    burst_min_ranks_share: float = _f(
        0.75, "share", "... and in those bins at least this share of the ranks doing I/O are in I/O at once "
        "(weighted by bytes)"
    )
    burst_min_io_share: float = _f(
        0.05, "share", "mean I/O time per rank as a share of the run time below which bursts are not reported"
    )
    stagger_max_ranks_share: float = _f(
        0.5, "share", "ranks take turns when at most this share of the ranks doing I/O are in I/O at once "
        "(weighted by bytes)"
    )
    stagger_min_ratio: float = _f(
        2.0, "x", "... and the I/O phase (the bins where any of them is in I/O) lasts at least this many "
        "times an average rank's own time in I/O"
    )

    # --- I/O libraries (HDF5, PnetCDF) -----------------------------------------------------
    hdf5_chunk_max_ratio: float = _f(
        0.125,
        "x",
        "an HDF5 chunk at most this fraction of the stripe size (or of the mean transfer) is too small",
    )
    library_min_bytes: int = _f(
        1 * MiB,
        "B",
        "fewest bytes a dataset, variable or file must move for the chunk, collective and fill-value rules",
    )
    hdf5_align_min_bytes: int = _f(
        16 * MiB, "B", "an HDF5 file without alignment is reported when on Lustre or at least this large"
    )
    library_collective_min_ranks: int = _f(
        2, "count", "fewest ranks writing (or reading) one dataset or variable independently for a finding"
    )
    pnetcdf_small_put_bytes: int = _f(
        1 * MiB, "B", "a blocking PnetCDF put or get of at most this size (mean) is small"
    )
    pnetcdf_small_min_calls: int = _f(
        16, "count", "fewest small blocking puts (or gets) of a variable for a finding"
    )
    library_meta_min_share: float = _f(
        0.5, "share", "library metadata time as a share of the library's time at or above which it dominates"
    )
    library_amplification_min: float = _f(
        4.0, "x", "bytes moved beneath a library / bytes asked at or above which the library adds too much"
    )

    # --- MPI-IO and Lustre -----------------------------------------------------------------
    large_shared_file_bytes: int = _f(
        16 * MiB, "B", "a shared file at least this large needs more than one aggregator"
    )
    single_aggregator_min_ranks: int = _f(4, "count", "fewest ranks sharing the file")
    lustre_large_file_bytes: int = _f(
        1 * GiB, "B", "a shared Lustre file at least this large needs more than one stripe"
    )
    lustre_bytes_per_ost: int = _f(4 * GiB, "B", "bytes per OST used to suggest a stripe count")
    lustre_max_suggested_stripes: int = _f(64, "count", "largest stripe count suggested")
    aggregators_per_ost_max: float = _f(
        2.0, "x", "aggregators per OST above which they contend for the OSTs' locks"
    )
    cb_cycles_min: int = _f(
        8,
        "count",
        "collective buffer cycles per collective call at or above which overlapping shuffle and writes "
        "would help",
    )
    romio_cb_buffer_default_bytes: int = _f(16 * MiB, "B", "ROMIO's default cb_buffer_size")
    rmw_min_reads: float = _f(
        16, "count", "collective writes whose aggregators make at least this many reads of a file MPI-IO "
        "never read are read-modify-write"
    )
    rmw_min_amplification: float = _f(
        1.25, "", "... or that write at least this many times the bytes MPI-IO was given"
    )
    ompio_buffer_default_bytes: int = _f(32 * MiB, "B", "OMPIO's default bytes per aggregator per cycle")
    mpiio_overhead_min_share: float = _f(
        0.5, "share", "share of independent MPI-IO time spent outside the POSIX calls beneath it"
    )
    mpiio_overhead_min_per_call: float = _f(
        20e-6,
        "s",
        "mean time per independent MPI-IO call spent outside the POSIX calls beneath it: locks and "
        "data sieving cost tens of microseconds or more a call, the library's own work about 0.2 us",
    )
    default_hints_min_share: float = _f(
        0.05, "share", "MPI-IO time as a share of the run at or above which searching the hints is suggested"
    )

    # --- across runs -----------------------------------------------------------------------
    contention_max_rate_ratio: float = _f(
        0.5,
        "x",
        "per-process write rate at the largest run / at the smallest at or below which writers contend",
    )
    contention_min_writer_growth: float = _f(2.0, "x", "fewest times more writers for the contention rule")
    growth_min_excess: float = _f(
        1.5, "x", "I/O time growth / data growth at or above which I/O time grows faster than the data"
    )

    def small_label(self) -> str:
        """'at most 100 KiB' (from small_request_bytes)."""
        from pario.diagnosis._fmt import nbytes

        return f"at most {nbytes(self.small_request_bytes)}"


def field_info() -> list[tuple[str, Any, str, str]]:
    """(name, default, unit, meaning) of every threshold, in declaration order."""
    return [
        (f.name, f.default, f.metadata.get("unit", ""), f.metadata.get("doc", ""))
        for f in dataclasses.fields(RuleConfig)
    ]


def _check(cfg: RuleConfig, where: str) -> None:
    for f in dataclasses.fields(RuleConfig):
        value = getattr(cfg, f.name)
        unit = f.metadata.get("unit", "")
        if unit == "share" and not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
            raise ParioError(f"{where}: {f.name} must be a fraction between 0 and 1 (got {value!r})")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(float(value)) or value < 0:
                raise ParioError(f"{where}: {f.name} must be a non-negative number (got {value!r})")
    if cfg.small_request_bytes not in SMALL_BOUNDS:
        bounds = ", ".join(str(b) for b in SMALL_BOUNDS)
        raise ParioError(
            f"{where}: small_request_bytes must be one of {bounds} (the request-size histogram bounds; got "
            f"{cfg.small_request_bytes})"
        )
    if cfg.severity_warning_share > cfg.severity_critical_share:
        raise ParioError(f"{where}: severity_warning_share must not exceed severity_critical_share")


def make_config(values: dict[str, Any], where: str = "config") -> RuleConfig:
    """A RuleConfig with ``values`` overriding the defaults (checked: names, types, ranges)."""
    known = {f.name: f for f in dataclasses.fields(RuleConfig)}
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if key not in known:
            raise ParioError(f"{where}: unknown threshold {key!r} (see docs/diagnosis.md for the list)")
        default = known[key].default
        if isinstance(default, tuple):
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ParioError(f"{where}: {key} must be a list of strings")
            changes[key] = tuple(value)
        elif isinstance(default, bool) or isinstance(value, bool):
            raise ParioError(f"{where}: {key} must be a number")
        elif isinstance(default, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int):
                raise ParioError(f"{where}: {key} must be an integer (got {value!r})")
            changes[key] = value
        else:
            if not isinstance(value, (int, float)):
                raise ParioError(f"{where}: {key} must be a number (got {value!r})")
            changes[key] = float(value)
    cfg = dataclasses.replace(RuleConfig(), **changes)
    _check(cfg, where)
    return cfg


def load_config(path: str | Path | None) -> RuleConfig:
    """The defaults, overridden by a TOML or JSON file (chosen by content) if ``path`` is given."""
    if path is None:
        return RuleConfig()
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ParioError(f"--config {p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ParioError(f"--config {p}: cannot read: {exc}") from None
    data = _parse(text, p)
    if "diagnosis" in data and isinstance(data["diagnosis"], dict):
        data = {**{k: v for k, v in data.items() if k != "diagnosis"}, **data["diagnosis"]}
    return make_config(data, str(p))


def _parse(text: str, p: Path) -> dict[str, Any]:
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParioError(f"--config {p}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    else:
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            try:
                import tomli as tomllib  # type: ignore[no-redef]  # Python 3.10's tomllib
            except ModuleNotFoundError:
                raise ParioError(
                    f"--config {p}: reading TOML needs Python 3.11 or the tomli package; write the file as "
                    "JSON instead"
                ) from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ParioError(f"--config {p}: not valid TOML or JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ParioError(f"--config {p}: expected a table of thresholds")
    return data
