"""The facility view of a survey store (``pario survey report``): DuckDB queries over the
store's views, filtered by user, executable, dates and file system (docs/survey.md)."""

from __future__ import annotations

import datetime as dt
import pwd
from dataclasses import dataclass, field
from typing import Any

from pario.diagnosis import RULES
from pario.errors import ParioError
from pario.survey.store import Condition, Range, Selection, has_rows, select_files, selected_rows

#: Upper bounds of the I/O-share buckets of the distribution (fractions of a job's time).
SHARE_BOUNDS: tuple[float, ...] = (0.01, 0.05, 0.10, 0.25, 0.50, 1.0)


@dataclass(frozen=True)
class Filters:
    user: str | None = None       # uid, or a user name of this machine
    exe: str | None = None        # glob on the executable's name or path
    since: dt.date | None = None  # job start, UTC, inclusive
    until: dt.date | None = None
    fs: str | None = None         # jobs that moved bytes on this file-system type

    def text(self) -> str:
        parts = [f"user {self.user}" if self.user else "", f"exe {self.exe}" if self.exe else "",
                 f"since {self.since}" if self.since else "", f"until {self.until}" if self.until else "",
                 f"file system {self.fs}" if self.fs else ""]
        return ", ".join(p for p in parts if p) or "all jobs"


@dataclass
class FacilityReport:
    store: str
    filters: Filters
    summary: dict[str, Any]
    #: (bucket label, jobs, core-hours)
    io_share: list[dict[str, Any]]
    io_share_percentiles: dict[str, float | None]
    applications: list[dict[str, Any]]
    findings_by_time: list[dict[str, Any]]
    findings_by_jobs: list[dict[str, Any]]
    filesystems: list[dict[str, Any]]
    small_files: list[dict[str, Any]]
    metadata: list[dict[str, Any]]
    errors: list[dict[str, Any]] = field(default_factory=list)
    #: the store's files the jobs were read from, and those their statistics skipped
    files_read: int = 0
    files_skipped: int = 0

    def sections(self) -> dict[str, list[dict[str, Any]]]:
        """The report's tables by name (the CSV files, the JSON keys)."""
        return {"summary": [self.summary], "io_share": self.io_share, "applications": self.applications,
                "findings_by_time": self.findings_by_time, "findings_by_jobs": self.findings_by_jobs,
                "filesystems": self.filesystems, "small_files": self.small_files, "metadata": self.metadata,
                "errors": self.errors}


def _uid(user: str) -> int:
    if user.isdigit():
        return int(user)
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        raise ParioError(f"--user {user}: no such user on this machine (give the uid)") from None


def where_clause(f: Filters) -> tuple[str, list[Any]]:
    """SQL conditions on the jobs view, and their parameters."""
    cond: list[str] = ["TRUE"]
    params: list[object] = []
    if f.user:
        cond.append("uid = ?")
        params.append(_uid(f.user))
    if f.exe:
        cond.append("(exe_name GLOB ? OR exe GLOB ?)")
        params += [f.exe, f.exe]
    if f.since:
        cond.append("start >= ?")
        params.append(_day(f.since))
    if f.until:
        cond.append("start < ?")
        params.append(_day(f.until + dt.timedelta(days=1)))
    if f.fs:
        cond.append("list_contains([x.fs FOR x IN filesystems], ?)")
        params.append(f.fs)
    return " AND ".join(cond), params


def _day(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc)


def _us(day: dt.date) -> int:
    """A day's first microsecond (UTC), as Parquet keeps timestamps."""
    return int(_day(day).timestamp()) * 1_000_000


def _glob_prefix(pattern: str) -> bytes:
    """The literal start of a GLOB pattern (up to its first wildcard, class or escape)."""
    cut = min((i for i, c in enumerate(pattern) if c in "*?[\\"), default=len(pattern))
    return pattern[:cut].encode()


def _starting(column: str, prefix: bytes) -> Range:
    """The strings that start with ``prefix``: from it to the prefix with its last byte one
    higher (UTF-8 has no byte 0xff to carry)."""
    return Range(column, prefix, prefix[:-1] + bytes([prefix[-1] + 1]))


def conditions(f: Filters, status: str = "ok") -> list[Condition]:
    """The filters as ranges of the columns whose Parquet statistics skip files: the row's
    status, ``--user``, ``--exe`` (its literal start, on the name or the path), ``--since`` and
    ``--until`` (``--fs`` is a list, which Parquet keeps no statistics of)."""
    out: list[Condition] = [(Range("status", status.encode(), status.encode() + b"\0"),)]
    if f.user:
        uid = _uid(f.user)
        out.append((Range("uid", uid, uid + 1),))
    if f.exe and (prefix := _glob_prefix(f.exe)):
        out.append((_starting("exe_name", prefix), _starting("exe", prefix)))
    if f.since or f.until:
        out.append((Range("start", _us(f.since) if f.since else None,
                          _us(f.until + dt.timedelta(days=1)) if f.until else None),))
    return out


def _dicts(con: Any, sql: str) -> list[dict[str, Any]]:
    cur = con.execute(sql)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def _share_buckets(con: Any) -> list[dict[str, Any]]:
    """Jobs and core-hours of the selection per I/O-share bucket, in the buckets' order."""
    lows = (0.0, *SHARE_BOUNDS[:-1])
    labels = [f"{lo * 100:g}–{hi * 100:g}%" for lo, hi in zip(lows, SHARE_BOUNDS, strict=True)]
    cases = " ".join(f"WHEN io_share <= {hi} THEN '{label}'"
                     for hi, label in zip(SHARE_BOUNDS, labels, strict=True))
    order = {label: i for i, label in enumerate(labels)}
    rows = _dicts(con, f"""SELECT CASE WHEN io_share IS NULL THEN 'unknown' {cases}
                          ELSE 'over 100%' END AS bucket, count(*) AS jobs, sum(core_hours) AS core_hours
                          FROM sel GROUP BY bucket""")
    return sorted(rows, key=lambda r: order.get(r["bucket"], len(order)))


def open_report(store: str, filters: Filters, *, skip: bool = True) -> tuple[Any, Selection]:
    """A DuckDB connection with the report's tables: ``sel``, the jobs that meet the filters;
    ``sel_findings`` and ``sel_filesystems``, theirs unnested; ``errors``, every unreadable log.
    Each is read from the files whose statistics may hold its rows (``skip``), or from every
    file; the selection of the jobs' files says what was skipped."""
    import duckdb

    if not has_rows(store):
        raise ParioError(f"{store}: no survey store here "
                         f"(make one with: pario survey PATH... --store {store})")
    where, params = where_clause(filters)
    jobs = select_files(store, conditions(filters) if skip else [])
    errors = select_files(store, conditions(Filters(), "error") if skip else [])
    con = duckdb.connect()
    try:
        selected_rows(con, "sel_rows", jobs, f"status = 'ok' AND {where}", params)
        con.execute("CREATE TEMP VIEW sel AS SELECT * EXCLUDE (status, error) FROM sel_rows")
        # a finding's core-hours in a job: its time lost on every rank, at most what the job spent
        # in I/O for a finding about time in I/O calls (the job's core-hours for the others: waits
        # outside I/O calls, computation): never more than the total it is part of
        compute = ", ".join(f"'{r.id}'" for r in RULES.values() if r.time_class != "io") or "''"
        con.execute(f"""CREATE TEMP VIEW sel_findings AS SELECT *,
                       CASE WHEN time_lost_s IS NOT NULL THEN
                            least(time_lost_s * nprocs / 3600,
                                  CASE WHEN id IN ({compute}) THEN core_hours
                                       ELSE coalesce(io_core_hours, core_hours) END) END AS core_hours_lost
                       FROM (SELECT path, job_id, uid, exe, exe_name, start, nprocs, core_hours,
                                    io_core_hours, unnest(findings, recursive := true) FROM sel)""")
        con.execute("""CREATE TEMP VIEW sel_filesystems AS SELECT path, job_id, uid, exe_name, start,
                       nprocs, unnest(filesystems, recursive := true) FROM sel""")
        selected_rows(con, "error_rows", errors, "status = 'error'", [])
        con.execute("CREATE TEMP VIEW errors AS SELECT path, size, mtime_ns, day, surveyed_at, error "
                    "FROM error_rows")
    except BaseException:
        con.close()
        raise
    return con, jobs


def facility_report(store: str, filters: Filters = Filters(), *, top: int = 10,
                    skip: bool = True) -> FacilityReport:
    """The report; ``skip=False`` reads every file (the same report, slower)."""
    con, jobs = open_report(store, filters, skip=skip)
    try:
        summary = _dicts(con, """SELECT count(*) AS jobs, count(DISTINCT uid) AS users,
            count(DISTINCT exe_name) AS applications, coalesce(sum(core_hours), 0) AS core_hours,
            coalesce(sum(io_core_hours), 0) AS io_core_hours,
            coalesce(sum(io_core_hours) / nullif(sum(core_hours), 0), 0) AS io_share_of_core_hours,
            coalesce(sum(bytes_read), 0) AS bytes_read, coalesce(sum(bytes_written), 0) AS bytes_written,
            min(start) AS first_start, max(start) AS last_start FROM sel""")[0]
        summary["unreadable_logs"] = con.execute("SELECT count(*) FROM errors").fetchone()[0]
        pct = _dicts(con, """SELECT quantile_cont(io_share, 0.5) AS p50, quantile_cont(io_share, 0.9) AS p90,
                             quantile_cont(io_share, 0.99) AS p99
                             FROM sel WHERE io_share IS NOT NULL""")[0]
        apps = _dicts(con, f"""
            WITH a AS (SELECT exe_name, count(*) AS jobs, sum(core_hours) AS core_hours,
                              sum(io_core_hours) AS io_core_hours, count(DISTINCT uid) AS users
                       FROM sel GROUP BY exe_name),
                 f AS (SELECT exe_name, id, sum(core_hours_lost) AS core_hours_lost
                       FROM sel_findings GROUP BY exe_name, id),
                 t AS (SELECT exe_name, string_agg(id, ', ' ORDER BY core_hours_lost DESC, id) AS top_findings
                       FROM (SELECT *, row_number() OVER (PARTITION BY exe_name
                                                          ORDER BY core_hours_lost DESC, id) AS n
                             FROM f WHERE core_hours_lost > 0) WHERE n <= 3 GROUP BY exe_name)
            SELECT a.*, a.io_core_hours / nullif(a.core_hours, 0) AS io_share,
                   coalesce(t.top_findings, '') AS top_findings
            FROM a LEFT JOIN t USING (exe_name)
            ORDER BY io_core_hours DESC NULLS LAST, core_hours DESC, exe_name LIMIT {int(top)}""")
        # ties broken by name, so that the rows (and the cut at --top) are the same every time
        # a finding's severity depends on the job: the worst one it had; its jobs are counted
        # from each job's distinct ids (not a distinct count of paths over every finding)
        con.execute("""CREATE TEMP TABLE finding_totals AS
            WITH j AS (SELECT id, count(*) AS jobs
                       FROM (SELECT unnest(list_distinct([x.id FOR x IN findings])) AS id FROM sel)
                       GROUP BY id),
                 a AS (SELECT id, arg_max(severity, CASE severity WHEN 'critical' THEN 3
                                  WHEN 'warning' THEN 2 WHEN 'info' THEN 1 ELSE 0 END) AS severity,
                              coalesce(sum(time_lost_s), 0) AS time_lost_s,
                              coalesce(sum(core_hours_lost), 0) AS core_hours_lost
                       FROM sel_findings GROUP BY id)
            SELECT a.id, a.severity, j.jobs, a.time_lost_s, a.core_hours_lost FROM a JOIN j USING (id)""")
        finding_rows = "SELECT * FROM finding_totals"
        by_time = _dicts(con, f"{finding_rows} ORDER BY core_hours_lost DESC, jobs DESC, id LIMIT {int(top)}")
        by_jobs = _dicts(con, f"{finding_rows} ORDER BY jobs DESC, core_hours_lost DESC, id LIMIT {int(top)}")
        fs = _dicts(con, """SELECT fs, strftime(start, '%Y-%m') AS month, count(*) AS jobs,
                sum(bytes_read + bytes_written) AS bytes,
                quantile_cont((bytes_read + bytes_written) / io_time_s, 0.1) AS bw_p10,
                quantile_cont((bytes_read + bytes_written) / io_time_s, 0.5) AS bw_p50,
                quantile_cont((bytes_read + bytes_written) / io_time_s, 0.9) AS bw_p90
            FROM sel_filesystems WHERE io_time_s > 0
            GROUP BY fs, month ORDER BY fs, month""")
        small = _dicts(con, f"""SELECT exe_name, count(*) AS jobs, max(nfiles) AS max_files,
                sum(nfiles) AS files, sum(small_requests) AS small_requests,
                sum(small_requests) / nullif(sum(requests), 0) AS small_share
            FROM sel GROUP BY exe_name HAVING sum(nfiles) > 0 OR sum(small_requests) > 0
            ORDER BY files DESC, small_requests DESC, exe_name LIMIT {int(top)}""")
        meta = _dicts(con, f"""SELECT exe_name, count(*) AS jobs, sum(meta_ops) AS meta_ops,
                sum(meta_time_s) / 3600 AS meta_core_hours,
                sum(meta_time_s) / nullif(sum(io_time_s), 0) AS meta_share_of_io
            FROM sel GROUP BY exe_name HAVING sum(meta_ops) > 0
            ORDER BY meta_core_hours DESC NULLS LAST, meta_ops DESC, exe_name LIMIT {int(top)}""")
        errors = _dicts(con, f"SELECT path, error FROM errors ORDER BY path LIMIT {int(top)}")
        shares = _share_buckets(con)
    finally:
        con.close()
    return FacilityReport(store=store, filters=filters, summary=summary, io_share=shares,
                          io_share_percentiles=pct, applications=apps, findings_by_time=by_time,
                          findings_by_jobs=by_jobs, filesystems=fs, small_files=small, metadata=meta,
                          errors=errors, files_read=len(jobs.files), files_skipped=len(jobs.skipped))

