"""The facility report's forms: terminal (Rich), JSON, CSV files, self-contained HTML (Plotly)."""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import numbers
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from pario import units
from pario.errors import ParioError
from pario.survey.facility import FacilityReport

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: Columns shown left-aligned (text); numbers are right-aligned.
TEXT_COLUMNS = frozenset({"exe_name", "id", "fs", "bucket", "top_findings", "month", "severity", "path",
                          "error"})


def plain(v: Any) -> Any:
    """A value as JSON and CSV take it (timestamps as ISO text, NaN as None)."""
    if isinstance(v, (dt.datetime, dt.date)):
        return v.isoformat()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def report_dict(r: FacilityReport) -> dict[str, Any]:
    return plain({"store": r.store, "filters": r.filters.text(), "summary": r.summary,
                  "io_share": r.io_share, "io_share_percentiles": r.io_share_percentiles,
                  "applications": r.applications, "findings_by_time": r.findings_by_time,
                  "findings_by_jobs": r.findings_by_jobs, "filesystems": r.filesystems,
                  "small_files": r.small_files, "metadata": r.metadata, "errors": r.errors})


def _open(path: str, what: str) -> TextIO:
    try:
        return open(path, "w", encoding="utf-8", newline="")
    except OSError as exc:
        raise ParioError(f"{path}: cannot write {what}: {exc.strerror}") from None


def write_json(r: FacilityReport, path: str) -> None:
    text = json.dumps(report_dict(r), allow_nan=False, ensure_ascii=False, indent=1)
    if path == "-":
        sys.stdout.write(text + "\n")
        return
    with _open(path, "the JSON report") as f:
        f.write(text + "\n")


def write_csv(r: FacilityReport, folder: str) -> None:
    """One CSV file per table of the report (``<section>.csv``) in ``folder``."""
    out = Path(folder)
    try:
        out.mkdir(exist_ok=True)
    except OSError as exc:
        raise ParioError(f"{folder}: cannot make the CSV folder: {exc.strerror}") from None
    for name, rows in r.sections().items():
        with _open(str(out / f"{name}.csv"), "a CSV file") as f:
            cols = list(rows[0]) if rows else []
            w = csv.writer(f)
            w.writerow(cols)
            for row in rows:
                w.writerow(["" if row[c] is None else plain(row[c]) for c in cols])


# -- terminal ------------------------------------------------------------------------------------
def _num(v: Any) -> str:
    """A number as every table of the report shows it: one decimal, or two significant digits for
    a value too small for one (0.0042 core-hours, not 0.0)."""
    if v is None:
        return "–"
    if isinstance(v, float):
        if 0 < abs(v) < 0.05:  # two significant digits, never in e-notation
            return f"{v:.{1 - math.floor(math.log10(abs(v)))}f}"
        return f"{v:,.1f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


_pct = units.percent
_rate = units.rate


def print_report(facility: FacilityReport, out: TextIO | None = None, width: int | None = None) -> None:
    """The report as text, at ``width`` columns (default: the terminal's, textfit.terminal_width):
    tables wrap their text columns where they must, or become one record per block."""
    from rich.console import Console

    from pario.textfit import Tabular, Wrapped, terminal_width

    out = out or sys.stdout
    con = Console(file=out, width=width or terminal_width(out), highlight=False)
    s = facility.summary
    con.print(Wrapped(f"pario survey report: {facility.store} ({facility.filters.text()})", style="bold",
                      indent=4))
    con.print(Wrapped(f"{units.plural(s['jobs'], 'job')} of {units.plural(s['users'], 'user')}, "
                      f"{units.plural(s['applications'], 'application')}, "
                      f"{_num(s['core_hours'])} core-hours, of which {_num(s['io_core_hours'])} in I/O "
                      f"({_pct(s['io_share_of_core_hours'])})", indent=4))
    con.print(Wrapped(f"{units.nbytes(s['bytes_read'])} read, {units.nbytes(s['bytes_written'])} written; "
                      f"{units.plural(s['unreadable_logs'], 'unreadable log')}", indent=4))

    def table(title: str, cols: Sequence[tuple[str, str]], rows: Sequence[dict[str, Any]],
              fmt: dict[str, Any]) -> None:
        con.print()
        con.print(Wrapped(title, style="bold", indent=4))
        if not rows:
            con.print("none")
            return
        con.print(Tabular([label for _, label in cols],
                          [[fmt.get(k, _num)(row[k]) for k, _ in cols] for row in rows],
                          right=[key not in TEXT_COLUMNS for key, _ in cols]))

    if not s["jobs"]:
        con.print("No job matches.")
        if facility.errors:  # what went wrong is still worth seeing
            table("Unreadable logs", [("path", "log"), ("error", "reason")], facility.errors, {})
        return
    if s["first_start"]:
        con.print(f"jobs started from {s['first_start']:%Y-%m-%d} to {s['last_start']:%Y-%m-%d}")
    p = facility.io_share_percentiles
    table(f"I/O share of the jobs' time (median {_pct(p['p50'])}, 90th percentile {_pct(p['p90'])})",
          [("bucket", "share of time"), ("jobs", "jobs"), ("core_hours", "core-hours")], facility.io_share,
          {})
    table("Applications by core-hours in I/O",
          [("exe_name", "application"), ("jobs", "jobs"), ("users", "users"), ("core_hours", "core-hours"),
           ("io_core_hours", "in I/O"), ("io_share", "I/O share"), ("top_findings", "top findings")],
          facility.applications, {"io_share": _pct})
    fcols = [("id", "finding"), ("severity", "worst severity"), ("jobs", "jobs"),
             ("core_hours_lost", "core-hours lost"), ("time_lost_s", "wall time lost (s)")]
    table("Findings by the core-hours they cost", fcols, facility.findings_by_time, {})
    table("Findings by the jobs they hit", fcols, facility.findings_by_jobs, {})
    table("File systems: bandwidth per process (bytes over a process's I/O time), per month",
          [("fs", "file system"), ("month", "month"), ("jobs", "jobs"), ("bytes", "bytes"), ("bw_p10", "p10"),
           ("bw_p50", "median"), ("bw_p90", "p90")], facility.filesystems,
          {"bytes": units.nbytes, "bw_p10": _rate, "bw_p50": _rate, "bw_p90": _rate})
    table("Small-file offenders",
          [("exe_name", "application"), ("jobs", "jobs"), ("files", "files"), ("max_files", "most in a job"),
           ("small_requests", "requests ≤ 10 KiB"), ("small_share", "of requests")],
          facility.small_files, {"small_share": _pct})
    table("Metadata offenders",
          [("exe_name", "application"), ("jobs", "jobs"), ("meta_ops", "metadata ops"),
           ("meta_core_hours", "core-hours"), ("meta_share_of_io", "of I/O time")], facility.metadata,
          {"meta_share_of_io": _pct})
    if facility.errors:
        table("Unreadable logs", [("path", "log"), ("error", "reason")], facility.errors, {})


# -- HTML ----------------------------------------------------------------------------------------
def _title(text: str) -> dict[str, str]:
    return {"text": text}


def _figures(r: FacilityReport) -> list[dict[str, Any]]:
    """Plotly figures (as dicts) of the report.  Axes of names are categories: an anonymised
    executable's name is a number, which Plotly would otherwise put on a numeric axis."""
    category = {"type": "category", "automargin": True}
    figs = [{"id": "io-share", "title": "Jobs and core-hours by I/O share",
             # one offset group per trace: bars on two y axes side by side, not over each other
             "data": [{"type": "bar", "name": "jobs", "x": [b["bucket"] for b in r.io_share],
                       "y": [b["jobs"] for b in r.io_share], "offsetgroup": "jobs"},
                      {"type": "bar", "name": "core-hours", "x": [b["bucket"] for b in r.io_share],
                       "y": [b["core_hours"] for b in r.io_share], "yaxis": "y2",
                       "offsetgroup": "core-hours"}],
             "layout": {"barmode": "group",
                        "xaxis": {**category, "title": _title("I/O share of the job's time")},
                        "yaxis": {"title": _title("jobs")},
                        "yaxis2": {"title": _title("core-hours"), "overlaying": "y", "side": "right"},
                        "legend": {"orientation": "h", "y": 1.12}}},
            {"id": "apps", "title": "Applications by core-hours in I/O",
             "data": [{"type": "bar", "orientation": "h", "y": [a["exe_name"] for a in r.applications][::-1],
                       "x": [a["io_core_hours"] for a in r.applications][::-1], "name": "in I/O"}],
             "layout": {"xaxis": {"title": _title("core-hours in I/O")}, "yaxis": category}},
            {"id": "findings", "title": "Findings by core-hours lost",
             "data": [{"type": "bar", "orientation": "h", "y": [f["id"] for f in r.findings_by_time][::-1],
                       "x": [f["core_hours_lost"] for f in r.findings_by_time][::-1],
                       "text": [f"{f['jobs']} jobs" for f in r.findings_by_time][::-1]}],
             "layout": {"xaxis": {"title": _title("core-hours lost (estimate)")}, "yaxis": category}}]
    by_fs: dict[str, list[dict[str, Any]]] = {}
    for row in r.filesystems:
        by_fs.setdefault(row["fs"], []).append(row)
    figs.append({"id": "filesystems", "title": "File systems: median bandwidth per process, per month",
                 "data": [{"type": "scatter", "mode": "lines+markers", "name": fs,
                           "x": [x["month"] for x in rows], "y": [x["bw_p50"] for x in rows]}
                          for fs, rows in by_fs.items()],
                 "layout": {"xaxis": {"title": _title("month")},
                            "yaxis": {"title": _title("bytes/s"), "type": "log"}}})
    return plain(figs)


def html_text(r: FacilityReport, plotly_js: str | None = None) -> str:
    from jinja2 import Environment, FileSystemLoader
    from markupsafe import Markup

    if plotly_js is None:
        from plotly.offline import get_plotlyjs

        plotly_js = get_plotlyjs()
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True, trim_blocks=True,
                      lstrip_blocks=True)
    env.filters.update(num=_num, pct=_pct, rate=_rate, size=units.nbytes, count=units.plural)
    return env.get_template("survey.html.j2").render(
        r=r, figures=_figures(r), figures_json=Markup(json.dumps(_figures(r), allow_nan=False)),
        plotly_js=Markup(plotly_js))


def write_html(r: FacilityReport, path: str) -> None:
    text = html_text(r)
    with _open(path, "the HTML report") as f:
        f.write(text)


# -- SQL -----------------------------------------------------------------------------------------
def print_query(columns: list[str], rows: list[tuple[Any, ...]], *, csv: bool, out: TextIO,
                width: int | None = None) -> None:
    if csv:
        import csv as csvmod

        w = csvmod.writer(out)
        w.writerow(columns)
        for row in rows:
            w.writerow(["" if v is None else plain(v) for v in row])
        return
    from rich.console import Console

    from pario.textfit import Tabular, terminal_width

    # numbers right-aligned and whole; text wraps at its spaces (and a path after a '/')
    numeric = [bool(rows) and all(isinstance(row[i], numbers.Number) and not isinstance(row[i], bool)
                                  for row in rows if row[i] is not None) for i in range(len(columns))]
    cells = [["NULL" if v is None else str(plain(v)) for v in row] for row in rows]
    Console(file=out, width=width or terminal_width(out), highlight=False).print(
        Tabular(columns, cells, right=numeric))
    print(units.plural(len(rows), "row"), file=out)
