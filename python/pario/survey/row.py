"""One log analysed into one row of the survey store (docs/survey.md, "The store").

The row holds what facility-wide questions need and nothing per rank: the job, its time
classes, bytes per layer and per file system, the POP metrics with I/O, and every finding with
its severity and estimated time lost.  A log that cannot be read or analysed becomes an error
row with the reason, so that one bad log never stops a survey.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from pario import units
from pario.analysis.filesystems import FileSystems
from pario.analysis.io import layer_histogram
from pario.errors import ParioError, TooManyRanks
from pario.model import LAYERS, LIBRARIES, SIZE_BUCKETS
from pario.survey.discover import LogFile

#: Layers whose bytes each row keeps (the data layers: the storage layers and the libraries'
#: datasets and variables; a library's file layer adds nothing).  A store written before DFS and
#: DAOS were read has no ``dfs_*`` and ``daos_*`` columns: its rows read them as NULL.
ROW_LAYERS: tuple[str, ...] = (*LAYERS, *(data for _, data in LIBRARIES.values()))
#: Requests of at most this size are counted as small (the histogram's first three buckets, the
#: diagnosis's default small_request_bytes).
SMALL_BUCKETS = SIZE_BUCKETS.index("1K_10K") + 1
POP_FIELDS: tuple[str, ...] = ("parallel_efficiency", "load_balance", "communication_efficiency",
                               "io_efficiency", "load_balance_io", "communication_efficiency_io", "loss_io")
SHARE_FIELDS: tuple[str, ...] = ("compute", "mpi", "io", "compute_and_mpi")


def _v(value: Any) -> float | None:
    """A metric's number (None when unavailable or not finite)."""
    x = getattr(value, "value", value)
    if x is None:
        return None
    x = float(x)
    return x if np.isfinite(x) else None


def base_row(log: LogFile, surveyed_at: float) -> dict[str, Any]:
    """The columns every row has, an error row too."""
    return {"path": log.path, "size": log.size, "mtime_ns": log.mtime_ns, "day": log.day,
            "surveyed_at": surveyed_at}


def error_row(log: LogFile, reason: str, surveyed_at: float) -> dict[str, Any]:
    return {**base_row(log, surveyed_at), "status": "error", "error": reason, "month": "error"}


def _file_owner(path: str) -> int | None:
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


def filesystems(run: Any, profile: Any) -> list[dict[str, Any]]:
    """Bytes, I/O time (summed over ranks) and files per file-system type, from the files table
    (its rows at their outermost layer: the bytes and time the application asked for; a file
    used through two layers, STDIO and POSIX say, has a row of each and counts once)."""
    files = run.files
    if not len(files):
        return []
    names = [str(n) for n in np.asarray(files["name"])]
    ids = np.asarray(files["id"]).astype(np.uint64)
    kinds = [kind or "unknown" for kind in FileSystems(profile).of(ids, names)]
    code_of: dict[str, int] = {}  # the types in order of first appearance
    codes = np.fromiter((code_of.setdefault(k, len(code_of)) for k in kinds), dtype=np.int64,
                        count=len(kinds))
    cols = {c: np.nan_to_num(np.asarray(files[c], dtype=float)) for c in
            ("bytes_read", "bytes_written", "read_time", "write_time")}
    n = len(code_of)
    # each file's bytes as a whole number (int() of each), added per type
    read, written = (_whole_sums(cols[c], codes, n) for c in ("bytes_read", "bytes_written"))
    # I/O time added file by file in order, as np.bincount adds
    io_time = np.bincount(codes, weights=cols["read_time"] + cols["write_time"], minlength=n).tolist()
    # files: distinct (type, id) pairs
    order = np.lexsort((ids, codes))
    by_code, by_id = codes[order], ids[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (by_code[1:] != by_code[:-1]) | (by_id[1:] != by_id[:-1])
    nfiles = np.bincount(by_code[first], minlength=n).tolist()
    out = [{"fs": kind, "files": nfiles[i], "bytes_read": read[i], "bytes_written": written[i],
            "io_time_s": io_time[i]} for kind, i in code_of.items()]
    return sorted(out, key=lambda e: -(e["bytes_read"] + e["bytes_written"]))


def _whole_sums(values: np.ndarray, codes: np.ndarray, n: int) -> list[int]:
    """Per group of ``codes``, the sum of ``int(v)`` of its values: in int64 (exact) when no sum
    can leave its range, else one Python int at a time."""
    if float(np.abs(values).sum()) < 2.0 ** 62:
        sums = np.zeros(n, dtype=np.int64)
        np.add.at(sums, codes, np.trunc(values).astype(np.int64))
        return sums.tolist()
    out = [0] * n
    for code, v in zip(codes.tolist(), values.tolist(), strict=True):
        out[code] += int(v)
    return out


def _per_layer(run: Any) -> dict[str, int | float | None]:
    """Bytes read and written by each layer, and its aggregate read and write rates (None for a
    layer without I/O of that kind)."""
    out: dict[str, int | float | None] = {}
    for layer in ROW_LAYERS:
        out.update({f"{layer}_bytes_read": 0, f"{layer}_bytes_written": 0, f"{layer}_read_rate": None,
                    f"{layer}_write_rate": None})
    for lay in run.io.layers:
        if lay.layer in ROW_LAYERS:
            for kind, key in (("read", "read"), ("write", "written")):
                k = getattr(lay, kind)
                out[f"{lay.layer}_bytes_{key}"] = int(_v(k.bytes) or 0)
                out[f"{lay.layer}_{kind}_rate"] = _v(k.rate_aggregate)
    return out


def _requests(run: Any, profile: Any) -> tuple[int, int]:
    """(requests, small requests) that reached the file system, read and write, from the size
    histograms: of the POSIX records (the analysis's POSIX row has them), and of the MPI-IO
    records of files without POSIX records (the file-system calls of MPI-IO are POSIX records
    when both layers were recorded); likewise of the DFS records, and of the DAOS records of
    objects without DFS records (a DFS file's DAOS record holds its requests again).  STDIO is
    left out: Darshan keeps no size histogram of its calls."""
    hists: list[tuple[int, ...] | None] = []
    for lay in run.io.layers:
        if lay.layer in ("posix", "dfs"):
            hists += [lay.histogram_read, lay.histogram_write]
    for outer_layer, inner_layer in (("posix", "mpiio"), ("dfs", "daos")):
        inner = profile.layer(inner_layer)
        if len(inner):
            outer_ids = np.asarray(profile.layer(outer_layer)["id"]).astype(np.uint64)
            alone = inner[~np.isin(np.asarray(inner["id"]).astype(np.uint64), outer_ids)]
            if len(alone):
                hists += [layer_histogram(alone, inner_layer, direction) for direction in ("read", "write")]
    total = small = 0
    for hist in hists:
        if hist:
            total += int(sum(hist))
            small += int(sum(hist[:SMALL_BUCKETS]))
    return total, small


def analysed_row(log: LogFile, run: Any, profile: Any, surveyed_at: float) -> dict[str, Any]:
    """The row of a log read and analysed (``run``: pario.analysis.run.RunSummary, or the
    RunAnalysis that holds it)."""
    job = run.job
    runtime = float(job.runtime)
    core_hours = job.nprocs * runtime / 3600.0
    shares = {f"{k}_share": _v(getattr(run.shares, k)) for k in SHARE_FIELDS}
    io_time = _v(run.totals.io)
    io_share = shares["io_share"]
    # core-hours spent in I/O: the ranks' I/O time (summed), which the share of the run also gives
    io_core_hours = io_time / 3600.0 if io_time is not None else (
        io_share * core_hours if io_share is not None else None)
    overall = run.io.overall
    requests, small = _requests(run, profile)
    uid = profile.job.metadata.get("uid")
    start = float(job.start_time)
    month = time.strftime("%Y-%m", time.gmtime(start)) if start > 0 else "unknown"
    return {
        **base_row(log, surveyed_at),
        "status": "ok", "error": None, "month": month,
        "source": job.source, "job_id": str(job.jobid or ""),
        "uid": int(uid) if uid is not None else _file_owner(log.path),
        "exe": job.exe, "exe_name": os.path.basename(job.exe.split()[0]) if job.exe.strip() else "",
        "nprocs": int(job.nprocs), "start": start, "end": float(job.end_time), "runtime_s": runtime,
        "core_hours": core_hours, "complete": bool(job.complete),
        **shares, "bound": run.shares.bound,
        "io_time_s": io_time, "io_core_hours": io_core_hours,
        "bytes_read": int(_v(overall.read.bytes) or 0), "bytes_written": int(_v(overall.write.bytes) or 0),
        "read_rate": _v(overall.read.rate_aggregate), "write_rate": _v(overall.write.rate_aggregate),
        **_per_layer(run),
        "meta_ops": int(_v(overall.meta.ops) or 0), "meta_time_s": _v(overall.meta.time_total),
        "requests": requests, "small_requests": small,
        **{k: _v(getattr(run.pop, k)) for k in POP_FIELDS},
        "nfiles": int(overall.files),
        "filesystems": filesystems(run, profile),
        "findings": [{"id": f.id, "severity": f.severity.label,
                      "time_lost_s": _v(f.time_lost)} for f in run.findings],
    }


#: Peak memory of reading and analysing a Darshan log, per rank of its job: the per-rank arrays
#: of the model (about 400 bytes measured on logs of one shared record: peak RSS 1.60 GiB at 4 M
#: ranks, 0.43 GiB at 1 M, 72 MiB at 65 536), with a margin.
BYTES_PER_RANK = 512
#: What a worker holds besides the log at hand (Python, NumPy, Dask, a batch of rows).
WORKER_BASE_BYTES = 256 << 20
#: The share of a worker's memory limit a log may take (Dask's nanny spills at 60%).
WORKER_SHARE = 0.6


def worker_rank_limit() -> int | None:
    """The largest job whose Darshan log this Dask worker can analyse within its memory limit
    (None outside a worker, or for a worker without a limit)."""
    try:
        from distributed import get_worker

        limit = get_worker().memory_manager.memory_limit
    except (ImportError, ValueError, AttributeError):
        return None
    if not limit:
        return None
    return max(int((WORKER_SHARE * limit - WORKER_BASE_BYTES) // BYTES_PER_RANK), 1)


def survey_log(log: LogFile, surveyed_at: float, max_ranks: int | None = None) -> dict[str, Any]:
    """Read and analyse one log; any failure becomes an error row with its reason.  A Darshan
    log of a job of more than ``max_ranks`` ranks is an error row saying the memory it needs."""
    from pario.diagnosis import summarize
    from pario.log import read_log

    if log.size < 0:
        return error_row(log, "no such file", surveyed_at)
    try:
        # no column of the row comes from a trace's replays, which are most of the time of a
        # traced log's analysis (61 ms of 70 on a small s3d trace): the trace is not read
        profile = read_log(log.path, isolated=False, max_ranks=max_ranks, trace=False)
        return analysed_row(log, summarize(profile), profile, surveyed_at)
    except TooManyRanks as exc:
        need = units.nbytes(exc.nprocs * BYTES_PER_RANK + WORKER_BASE_BYTES)
        reason = (f"{exc}: its analysis needs about {need} of memory, more than {WORKER_SHARE:.0%} of "
                  "this worker's; give the workers more memory")
        return error_row(log, reason, surveyed_at)
    except ParioError as exc:
        return error_row(log, str(exc), surveyed_at)
    except Exception as exc:  # noqa: BLE001 - a survey of thousands of logs never stops for one
        return error_row(log, f"{type(exc).__name__}: {exc}", surveyed_at)


def survey_batch(logs: Sequence[LogFile], surveyed_at: float,
                 max_ranks: int | None = None) -> list[dict[str, Any]]:
    """A worker's task: the rows of a batch of logs."""
    return [survey_log(log, surveyed_at, max_ranks) for log in logs]
