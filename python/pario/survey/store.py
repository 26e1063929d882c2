"""The survey store: Parquet files of job rows under ``DIR/jobs/month=YYYY-MM/``, and DuckDB
views over them (docs/survey.md, "The store").

Every batch of logs becomes one part file (``part-*.parquet``), written by the worker that read
the logs, so no process holds more than a batch of rows.  A log surveyed again (it changed) gets
a new row; the views keep the latest row of each log.

Compaction (:func:`compact`) merges a month's files into one ``compact-*.parquet``, sorted by the
report's filter columns.  The compacted file names, in its Parquet footer, the files it replaces;
a reader (:func:`live_files`) leaves out every file that a compacted file present replaces.  So
the swap is one rename: before it a reader sees the old files, after it the new one, and the old
files, removed after the rename, are never read twice, even when a killed compaction leaves them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import itertools
import json
import os
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
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


def write_rows(store: str, rows: Sequence[dict[str, Any]], name: str,
               resurveyed: Collection[str] | None = None) -> int:
    """Write ``rows`` as part files named ``name`` (one per month they fall in); returns the
    rows written.  Each file is written under a temporary name and renamed, so a reader never
    sees half a file.  ``resurveyed``: the paths of ``rows`` that the store already holds a row
    of (a changed log), written in each file's footer (:data:`RESURVEYED_KEY`); None when the
    writer does not know, which keeps readers from skipping files by their statistics."""
    if not rows:
        return 0
    return write_table(store, to_table(rows), name, resurveyed)


def write_table(store: str, table: pa.Table, name: str, resurveyed: Collection[str] | None = None) -> int:
    """:func:`write_rows` of rows already a table of the store's schema."""
    root = jobs_dir(store)
    for month in sorted(set(table.column("month").to_pylist())):
        part = table.filter(pc.equal(table.column("month"), month)).drop_columns(["month"])
        if resurveyed is not None:
            mine = sorted(set(part.column("path").to_pylist()) & set(resurveyed))
            part = part.replace_schema_metadata({RESURVEYED_KEY: json.dumps(mine).encode()})
        folder = root / f"month={month}"
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{name}.{uuid.uuid4().hex}.tmp"
        pq.write_table(part, tmp, compression="zstd")
        os.replace(tmp, folder / f"{name}.parquet")
    return table.num_rows


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
    """Whether the store holds a data file (the first one found ends the search: a store of a
    facility's archive, before it is compacted, may hold hundreds of thousands)."""
    root = jobs_dir(store)
    return root.is_dir() and next(root.glob("month=*/[!.]*.parquet"), None) is not None


#: The key, in a compacted file's Parquet footer, of the JSON list of the file names it replaces.
REPLACES_KEY = b"pario.replaces"
#: The key, in a data file's Parquet footer, of the JSON list of the paths of its rows that may
#: have another row in the store (a log surveyed again after it changed).  Every other path of
#: the file has this one row in the whole store, which is what lets a filtered read skip files.
RESURVEYED_KEY = b"pario.resurveyed"
#: Rows per row group of a compacted file: DuckDB's own row group size (60 vectors of 2,048),
#: the unit its threads scan in parallel and the unit its min/max statistics skip.
ROW_GROUP_ROWS = 122_880
#: The order of the rows in a compacted file: the report's filters (``--exe``, ``--user``, then
#: ``--since``/``--until``; the month is the folder), so each row group's statistics are narrow.
SORT_KEY = ("exe_name", "uid", "start", "path", "surveyed_at")
COMPACT_PREFIX = "compact-"


def _data_files(folder: Path) -> list[str]:
    """The Parquet files of a month's folder, by name (temporary files start with a dot)."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.endswith(".parquet") and not n.startswith("."))


def _footer(path: Path) -> pq.FileMetaData | None:
    """A data file's Parquet footer (None for one that is gone, being swapped out)."""
    try:
        return pq.read_metadata(path)
    except FileNotFoundError:
        return None


def _key(meta: pq.FileMetaData | None, key: bytes) -> list[str] | None:
    """The JSON list under ``key`` of a footer's metadata; None where the key is missing."""
    got = (meta.metadata or {}).get(key) if meta is not None else None
    return None if got is None else list(json.loads(got))


def _replaces(path: Path) -> list[str]:
    """The file names a compacted file replaces ([] for one that is gone, being swapped out)."""
    return _key(_footer(path), REPLACES_KEY) or []


def _month_state(folder: Path) -> tuple[list[str], list[str]]:
    """(live files, replaced files) of a month's folder: a file that a compacted file present
    names in its footer is replaced, whether it is still there (a compaction killed before it
    removed it) or not; every other file is live."""
    names = _data_files(folder)
    replaced: set[str] = set()
    for name in names:
        if name.startswith(COMPACT_PREFIX):
            replaced.update(_replaces(folder / name))
    return [n for n in names if n not in replaced], [n for n in names if n in replaced]


def month_folders(store: str) -> list[Path]:
    root = jobs_dir(store)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.name.startswith("month=") and p.is_dir())


def live_files(store: str) -> list[Path]:
    """The files a reader reads: every month's live files (the store's rows, each once)."""
    return [folder / name for folder in month_folders(store) for name in _month_state(folder)[0]]


# --- files selected by their statistics -------------------------------------------------------------

@dataclass(frozen=True)
class Range:
    """``low <= column < high`` (a bound of None: open), as Parquet's statistics compare it:
    integers, timestamps as microseconds, strings as UTF-8 bytes."""
    column: str
    low: int | bytes | None = None
    high: int | bytes | None = None


#: A condition: a row may match when its value lies in any of the ranges (of several columns:
#: ``--exe`` matches the executable's name or its path).
Condition = tuple[Range, ...]


@dataclass
class Selection:
    """The files a filtered read opens, and what it skipped."""
    files: list[Path]
    skipped: list[Path]
    #: row groups of the files read, and of those the ones whose statistics miss the conditions
    row_groups: int = 0
    row_groups_skipped: int = 0
    #: paths that may have rows in several files (RESURVEYED_KEY of every live file); None when a
    #: file does not say (written by an older pario), and then no file is skipped
    resurveyed: list[str] | None = None


def _raw(stats: Any, which: str) -> Any:
    value = getattr(stats, f"{which}_raw")
    return value.encode() if isinstance(value, str) else value


def _may_match(rg: pq.RowGroupMetaData, index: dict[str, int], cond: Condition) -> bool:
    """Whether a row group's statistics leave some row in one of the condition's ranges (a
    column without statistics may hold anything; a column all null holds nothing)."""
    for r in cond:
        i = index.get(r.column)
        if i is None:
            return True
        stats = rg.column(i).statistics
        if stats is None:
            return True
        if stats.has_null_count and stats.null_count == rg.num_rows:
            continue
        if not stats.has_min_max:
            return True
        lo, hi = _raw(stats, "min"), _raw(stats, "max")
        if (r.high is None or lo < r.high) and (r.low is None or hi >= r.low):
            return True
    return False


def _month_span(folder: Path) -> tuple[int, int] | None:
    """[first, next) microsecond of a ``month=YYYY-MM`` folder's month (the job starts it holds);
    None for the others (``error``, ``unknown``)."""
    try:
        first = dt.datetime.strptime(folder.name[len("month="):], "%Y-%m").replace(tzinfo=UTC)
    except ValueError:
        return None
    nxt = (first + dt.timedelta(days=32)).replace(day=1)
    return int(first.timestamp() * 1e6), int(nxt.timestamp() * 1e6)


def select_files(store: str, conditions: Sequence[Condition]) -> Selection:
    """The live files whose rows may meet every condition: a month folder outside a range of
    ``start`` is skipped unopened, a file whose every row group's statistics miss a condition is
    skipped (counted).  Skipping is safe where each skipped row is the only row of its log; the
    logs with several rows (:attr:`Selection.resurveyed`) are read from every file, by
    :func:`selected_rows`."""
    folders = month_folders(store)
    files = [folder / name for folder in folders for name in _month_state(folder)[0]]
    metas = {f: _footer(f) for f in files}
    resurveyed: set[str] = set()
    for meta in metas.values():
        got = _key(meta, RESURVEYED_KEY)
        if got is None:
            return Selection(files=files, skipped=[])
        resurveyed.update(got)
    sel = Selection(files=[], skipped=[], resurveyed=sorted(resurveyed))
    # a start's bounds are microseconds (integers)
    starts = [(r.low if isinstance(r.low, int) else None, r.high if isinstance(r.high, int) else None)
              for cond in conditions for r in cond if len(cond) == 1 and r.column == "start"]
    for f in files:
        span = _month_span(f.parent)
        if span and any((low is not None and span[1] <= low) or (high is not None and span[0] >= high)
                        for low, high in starts):
            sel.skipped.append(f)
            continue
        meta = metas[f]
        if meta is None:  # swapped out meanwhile: DuckDB says so
            sel.files.append(f)
            continue
        index = {meta.schema.column(i).name: i for i in range(meta.num_columns)}
        groups = [meta.row_group(g) for g in range(meta.num_row_groups)]
        misses = sum(not all(_may_match(rg, index, c) for c in conditions) for rg in groups)
        if groups and misses == len(groups):
            sel.skipped.append(f)
        else:
            sel.files.append(f)
            sel.row_groups += len(groups)
            sel.row_groups_skipped += misses
    return sel


def _listed(files: Sequence[Path]) -> str:
    return "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"


def _scan(files: Sequence[Path]) -> str:
    return f"read_parquet({_listed(files)}, hive_partitioning = true, union_by_name = true)"


LATEST = ("SELECT * EXCLUDE (_n) FROM (SELECT *, row_number() OVER (PARTITION BY path ORDER BY "
          "surveyed_at DESC) AS _n FROM ({rows})) WHERE _n = 1")


def _literal(v: Any) -> str:
    """A value as SQL text (a view takes no parameters)."""
    if isinstance(v, bool) or not isinstance(v, (int, str, dt.datetime)):
        raise TypeError(f"no SQL literal for {v!r}")
    if isinstance(v, dt.datetime):
        return f"TIMESTAMPTZ '{v.isoformat()}'"
    return str(v) if isinstance(v, int) else "'" + v.replace("'", "''") + "'"


def _inline(where: str, params: Sequence[Any]) -> str:
    pieces = where.split("?")
    if len(pieces) != len(params) + 1:
        raise ValueError(f"{len(params)} parameters for {len(pieces) - 1} places")
    return "".join(p + (_literal(v) if i < len(params) else "")
                   for i, (p, v) in enumerate(itertools.zip_longest(pieces, params)))


def latest_rows(con: Any, files: Sequence[Path], resurveyed: Sequence[str] | None, name: str) -> str:
    """SQL of the latest row of each log of ``files``.  Where the files list the logs that may
    have several rows (``resurveyed``), every other row is its log's only one and is read as it
    is, so a condition on the result reaches the scan; the listed logs' rows (put in the table
    ``name``) go through a window.  Where they do not, every row goes through the window."""
    every = f"SELECT * FROM {_scan(files)}"
    if resurveyed is None:
        return LATEST.format(rows=every)
    if not resurveyed:
        return every
    con.execute(f"CREATE TABLE {name} AS SELECT unnest(?::VARCHAR[]) AS path", [list(resurveyed)])
    return (f"{every} WHERE path NOT IN (SELECT path FROM {name}) UNION ALL BY NAME "
            + LATEST.format(rows=f"{every} WHERE path IN (SELECT path FROM {name})"))


def selected_rows(con: Any, name: str, sel: Selection, where: str, params: Sequence[Any]) -> None:
    """A view ``name``: the latest row of each log of the store that meets ``where`` (SQL on the
    store's columns, with ``params``), read from the selection's files.  A log listed in
    ``sel.resurveyed`` has its rows read from every file, skipped ones too, so that its latest row
    is the one the condition sees.  Where that list is unknown, every file was selected, and the
    rows are held in a table (the window over every row computed once)."""
    cond = _inline(where, params)
    if not sel.files:  # nothing can match: the store's columns, no row
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM {_scan(sel.skipped[:1])} WHERE false")
    elif sel.resurveyed is None:
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM ({latest_rows(con, sel.files, None, '')}) "
                    f"WHERE {cond}")
    elif not sel.resurveyed:  # each row the only one of its log: the condition goes to the scan
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM {_scan(sel.files)} WHERE {cond}")
    else:
        again = f"{name}_again"
        con.execute(f"CREATE TABLE {again} AS SELECT unnest(?::VARCHAR[]) AS path", [sel.resurveyed])
        once = f"SELECT * FROM {_scan(sel.files)} WHERE ({cond}) AND path NOT IN (SELECT path FROM {again})"
        latest = LATEST.format(rows=f"SELECT * FROM {_scan(sel.files + sel.skipped)} "
                                    f"WHERE path IN (SELECT path FROM {again})")
        con.execute(f"CREATE VIEW {name} AS {once} UNION ALL BY NAME SELECT * FROM ({latest}) WHERE {cond}")


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
CREATE VIEW rows_all AS SELECT * FROM read_parquet({files}, hive_partitioning = true, union_by_name = true);
CREATE VIEW rows_latest AS {latest};
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
    sel = select_files(store, [])
    if not sel.files:
        raise ParioError(f"{store}: no survey store here "
                         f"(make one with: pario survey PATH... --store {store})")
    con = duckdb.connect()
    # the files are listed once, here, not globbed by each query: a compaction that swaps files
    # meanwhile makes a query fail on a file gone (run it again), never read a row twice
    latest = latest_rows(con, sel.files, sel.resurveyed, "_resurveyed")
    for statement in VIEWS.format(files=_listed(sel.files), latest=latest).split(";"):
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


# --- compaction ------------------------------------------------------------------------------------

def _step(stage: str) -> None:
    """A point between the steps of a compaction (tests make it raise, as a kill would stop it
    there): ``writing`` (the temporary file half written), ``written`` (complete, not renamed),
    ``swapped`` (renamed into place, the old files all there), ``removing`` (one old file gone)."""


@dataclass
class CompactResult:
    months: int = 0          # months rewritten
    files_before: int = 0    # data files of those months before (replaced ones left by a kill too)
    rows: int = 0            # rows of the files written
    removed: int = 0         # replaced files removed (those months' old files, and any left by a kill)
    seconds: float = 0.0

    def text(self) -> str:
        if not self.months and not self.removed:
            return "nothing to compact"
        return (f"{self.files_before:,} files of {self.months:,} months compacted into {self.months:,} "
                f"({self.rows:,} rows), {self.removed:,} files removed, in {self.seconds:.1f} s")


@contextlib.contextmanager
def _locked(store: str) -> Iterator[None]:
    """One compaction of a store at a time (two could each replace the same files, and a reader
    would then read them twice): an flock on ``jobs/.compact.lock``, which a killed process
    releases.  A file system without locks (some Lustre and NFS mounts) goes on without."""
    import fcntl

    fd = os.open(jobs_dir(store) / ".compact.lock", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                raise
        yield
    finally:
        os.close(fd)


def _target_schema(have: pa.Schema) -> pa.Schema:
    """The store's schema (less ``month``, the folder), then any column an older store has that
    this one lacks, so that compaction drops nothing."""
    fields = [f for f in SCHEMA if f.name != "month"]
    known = {f.name for f in fields} | {"month"}
    return pa.schema(fields + [f for f in have if f.name not in known])


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.Table:
    """A batch read by DuckDB as a table of ``schema``: columns in order, cast, missing ones null
    (a file written before the column existed)."""
    cols = [batch.column(f.name).cast(f.type) if f.name in batch.schema.names
            else pa.nulls(batch.num_rows, f.type) for f in schema]
    return pa.Table.from_arrays(cols, schema=schema)


def _store_repeats(store: str) -> list[str]:
    """The paths with more than one row in the store (read from every live file)."""
    import duckdb

    con = duckdb.connect()
    try:
        return [p for (p,) in con.execute(f"SELECT path FROM read_parquet({_listed(live_files(store))}) "
                                          "GROUP BY path HAVING count(*) > 1").fetchall()]
    finally:
        con.close()


def _compact_month(folder: Path, live: list[str], replaced: list[str], step: Callable[[str], None],
                   result: CompactResult, repeats: Callable[[], list[str]]) -> None:
    import duckdb

    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    name = f"{COMPACT_PREFIX}{stamp}-{uuid.uuid4().hex[:8]}.parquet"
    tmp = folder / f".{name}.tmp"
    listed = _listed([folder / n for n in live])
    con = duckdb.connect()
    try:
        con.execute("SET preserve_insertion_order = true")
        source = f"read_parquet({listed}, hive_partitioning = false, union_by_name = true)"
        columns = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
        order = ", ".join(c for c in SORT_KEY if c in columns)
        drop = " EXCLUDE (month)" if "month" in columns else ""
        # the paths that may have another row: as the files say, and the month's own repeats
        # (two surveys that read one log at once); where a file does not say, the store's
        said = [_key(_footer(folder / n), RESURVEYED_KEY) for n in live]
        again = set(r for (r,) in con.execute(f"SELECT path FROM {source} GROUP BY path "
                                               "HAVING count(*) > 1").fetchall())
        if any(paths is None for paths in said):
            con.execute("CREATE TEMP TABLE repeats AS SELECT unnest(?::VARCHAR[]) AS path", [repeats()])
            again.update(r for (r,) in con.execute(f"SELECT DISTINCT path FROM {source} "
                                                   "WHERE path IN (SELECT path FROM repeats)").fetchall())
        else:
            again.update(p for paths in said for p in paths or ())
        rel = con.sql(f"SELECT *{drop} FROM {source} ORDER BY {order}")
        # the rows streamed, in order (DuckDB sorts beyond memory); DuckDB 1.4 renamed the call
        reader = (rel.to_arrow_reader if hasattr(rel, "to_arrow_reader") else rel.fetch_arrow_reader)(
            ROW_GROUP_ROWS)
        schema = _target_schema(reader.schema).with_metadata(
            {REPLACES_KEY: json.dumps(live + replaced).encode(),
             RESURVEYED_KEY: json.dumps(sorted(again)).encode()})
        rows = 0
        with pq.ParquetWriter(tmp, schema, compression="zstd", write_statistics=True) as writer:
            pending: list[pa.Table] = []
            held = 0
            for batch in reader:
                pending.append(_conform(batch, schema))
                held += batch.num_rows
                while held >= ROW_GROUP_ROWS:  # whole row groups of ROW_GROUP_ROWS, the rest kept
                    table = pa.concat_tables(pending)
                    writer.write_table(table.slice(0, ROW_GROUP_ROWS), row_group_size=ROW_GROUP_ROWS)
                    rest = table.slice(ROW_GROUP_ROWS)
                    pending, held = [rest], rest.num_rows
                    rows += ROW_GROUP_ROWS
                    step("writing")
            if held:
                writer.write_table(pa.concat_tables(pending), row_group_size=ROW_GROUP_ROWS)
                rows += held
            step("writing")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        con.close()
    step("written")
    os.replace(tmp, folder / name)  # the swap: from here readers read the new file alone
    step("swapped")
    for old in live + replaced:
        (folder / old).unlink(missing_ok=True)
        result.removed += 1
        step("removing")
    result.months += 1
    result.files_before += len(live) + len(replaced)
    result.rows += rows


def compact(store: str, *, step: Callable[[str], None] | None = None) -> CompactResult:
    """Merge each month's files into one compacted file, atomically (module docstring).  A month
    already one compacted file is left as it is; replaced files a killed compaction left behind
    are removed, as are its temporary files."""
    check = step or _step
    result = CompactResult()
    started = time.monotonic()
    if not jobs_dir(store).is_dir():
        raise ParioError(f"{store}: no survey store here")
    found: list[list[str]] = []

    def repeats() -> list[str]:  # once per compaction, where a file does not list its own
        if not found:
            found.append(_store_repeats(store))
        return found[0]

    with _locked(store):
        for folder in month_folders(store):
            for stale in folder.glob(f".{COMPACT_PREFIX}*.tmp"):  # a killed compaction's
                stale.unlink(missing_ok=True)
            live, replaced = _month_state(folder)
            if (len(live) == 1 and live[0].startswith(COMPACT_PREFIX)
                    and _key(_footer(folder / live[0]), RESURVEYED_KEY) is not None):
                for old in replaced:  # left by a compaction killed after its swap
                    (folder / old).unlink(missing_ok=True)
                    result.removed += 1
                continue
            if live:
                _compact_month(folder, live, replaced, check, result, repeats)
    result.seconds = time.monotonic() - started
    return result
