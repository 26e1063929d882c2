"""The survey store: Parquet files of job rows under ``DIR/jobs/month=YYYY-MM/``, and DuckDB
views over them (docs/survey.md, "The store").

Every batch of logs becomes one part file, written by the worker that read the logs, so no
process holds more than a batch of rows.  A log surveyed again (it changed) gets a new row;
the views keep the latest row of each log.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pario.errors import ParioError
from pario.survey.row import POP_FIELDS, ROW_LAYERS, SHARE_FIELDS

JOBS = "jobs"
UTC = dt.timezone.utc
_TS = pa.timestamp("us", tz="UTC")

SCHEMA = pa.schema([
    ("path", pa.string()), ("size", pa.int64()), ("mtime_ns", pa.int64()), ("day", pa.date32()),
    ("surveyed_at", _TS), ("status", pa.string()), ("error", pa.string()),
    ("source", pa.string()), ("job_id", pa.string()), ("uid", pa.int64()),
    ("exe", pa.string()), ("exe_name", pa.string()), ("nprocs", pa.int64()),
    ("start", _TS), ("end", _TS), ("runtime_s", pa.float64()), ("core_hours", pa.float64()),
    ("complete", pa.bool_()),
    *[(f"{k}_share", pa.float64()) for k in SHARE_FIELDS], ("bound", pa.string()),
    ("io_time_s", pa.float64()), ("io_core_hours", pa.float64()),
    ("bytes_read", pa.int64()), ("bytes_written", pa.int64()),
    ("read_rate", pa.float64()), ("write_rate", pa.float64()),
    *[(f"{layer}_bytes_{k}", pa.int64()) for layer in ROW_LAYERS for k in ("read", "written")],
    *[(f"{layer}_{k}_rate", pa.float64()) for layer in ROW_LAYERS for k in ("read", "write")],
    ("meta_ops", pa.int64()), ("meta_time_s", pa.float64()),
    ("requests", pa.int64()), ("small_requests", pa.int64()),
    *[(k, pa.float64()) for k in POP_FIELDS],
    ("nfiles", pa.int64()),
    ("filesystems", pa.list_(pa.struct([("fs", pa.string()), ("files", pa.int64()),
                                        ("bytes_read", pa.int64()), ("bytes_written", pa.int64()),
                                        ("io_time_s", pa.float64())]))),
    ("findings", pa.list_(pa.struct([("id", pa.string()), ("severity", pa.string()),
                                     ("time_lost_s", pa.float64())]))),
    ("month", pa.string()),
])
_TIMES = ("surveyed_at", "start", "end")


def _when(seconds: float | None) -> dt.datetime | None:
    return None if seconds is None else dt.datetime.fromtimestamp(float(seconds), tz=UTC)


def to_table(rows: Sequence[dict[str, Any]]) -> pa.Table:
    """Rows (pario.survey.row) as an Arrow table of the store's schema."""
    fixed = [{**r, **{k: _when(r.get(k)) for k in _TIMES}} for r in rows]
    return pa.Table.from_pylist(fixed, schema=SCHEMA)


def jobs_dir(store: str | os.PathLike[str]) -> Path:
    return Path(store) / JOBS


def write_rows(store: str, rows: Sequence[dict[str, Any]], name: str) -> int:
    """Write ``rows`` as part files named ``name`` (one per month they fall in); returns the
    rows written.  Each file is written under a temporary name and renamed, so a reader never
    sees half a file."""
    if not rows:
        return 0
    table = to_table(rows)
    root = jobs_dir(store)
    for month in sorted(set(table.column("month").to_pylist())):
        part = table.filter(pc.equal(table.column("month"), month)).drop_columns(["month"])
        folder = root / f"month={month}"
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{name}.{uuid.uuid4().hex}.tmp"
        pq.write_table(part, tmp, compression="zstd")
        os.replace(tmp, folder / f"{name}.parquet")
    return len(rows)


def make_store(store: str) -> None:
    """The store's folder, made if missing; a one-line error if it cannot be written."""
    root = jobs_dir(store)
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / f".probe-{uuid.uuid4().hex}"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise ParioError(f"{store}: cannot write the store: {exc.strerror}") from None


def has_rows(store: str) -> bool:
    """Whether the store holds a part file (the first one found ends the search: a store of a
    facility's archive holds hundreds of thousands)."""
    root = jobs_dir(store)
    return root.is_dir() and next(root.glob("month=*/*.parquet"), None) is not None


def surveyed(store: str) -> dict[str, tuple[int, int]]:
    """Path -> (size, mtime_ns) of every log the store holds a row of (its latest)."""
    if not has_rows(store):
        return {}
    con = connect(store)
    try:
        got = con.execute("SELECT path, size, mtime_ns FROM rows_latest").fetchall()
    finally:
        con.close()
    return {p: (s, m) for p, s, m in got}


VIEWS = """
CREATE VIEW rows_all AS SELECT * FROM read_parquet('{glob}', hive_partitioning = true, union_by_name = true);
CREATE VIEW rows_latest AS SELECT * EXCLUDE (_n) FROM (
    SELECT *, row_number() OVER (PARTITION BY path ORDER BY surveyed_at DESC) AS _n FROM rows_all)
    WHERE _n = 1;
CREATE VIEW jobs AS SELECT * EXCLUDE (status, error) FROM rows_latest WHERE status = 'ok';
CREATE VIEW errors AS SELECT path, size, mtime_ns, day, surveyed_at, error FROM rows_latest
    WHERE status = 'error';
CREATE VIEW findings AS SELECT path, job_id, uid, exe, exe_name, start, nprocs, core_hours,
    unnest(findings, recursive := true) FROM jobs;
CREATE VIEW filesystems AS SELECT path, job_id, uid, exe_name, start, nprocs,
    unnest(filesystems, recursive := true) FROM jobs;
"""


def connect(store: str) -> Any:
    """A DuckDB connection (in memory) with the store's views: ``jobs``, ``findings``,
    ``filesystems``, ``errors`` (latest row of each log), ``rows_all`` (every row)."""
    import duckdb

    if not has_rows(store):
        raise ParioError(f"{store}: no survey store here "
                         f"(make one with: pario survey PATH... --store {store})")
    con = duckdb.connect()
    glob = str(jobs_dir(store) / "month=*" / "*.parquet").replace("'", "''")
    for statement in VIEWS.format(glob=glob).split(";"):
        if statement.strip():
            con.execute(statement)
    return con


def query(store: str, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run ``sql`` on the store's views: (column names, rows); a bad query is a one-line error."""
    import duckdb

    con = connect(store)
    try:
        cur = con.execute(sql)
        if cur.description is None:
            return [], []
        return [d[0] for d in cur.description], cur.fetchall()
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ParioError(f"the query failed: {first}") from None
    finally:
        con.close()
