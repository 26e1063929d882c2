"""The HTML report: one self-contained file (Plotly's JavaScript inlined once) with plots.

Every string that comes from a log reaches the page either through Jinja2's
autoescaping or inside figure JSON in which ``<``, ``>`` and ``&`` are
written as ``\\u003c``, ``\\u003e`` and ``\\u0026``, so a file called
``</script><script>...`` stays text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from pario import __version__
from pario.analysis.activity import MODULE_LABELS, merged
from pario.analysis.files import application_files, mpi_library_line
from pario.analysis.io import FILE_LAYER_LABELS, LAYER_LABELS, library_layers_note
from pario.analysis.pop import efficiency_level
from pario.analysis.run import RunAnalysis
from pario.analysis.scaling import ScalingAnalysis
from pario.errors import ParioError
from pario.names import shorten
from pario.report import format as fmt
from pario.report.data import DEFAULT_TOP, findings_list, records
from pario.table import as_table
from pario.trace.model import Trace
from pario.units import nranks
from pario.values import Value

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: Above this many ranks the per-rank plot shows groups of consecutive ranks.
MAX_RANK_BARS = 512
COLOURS = {"compute": "#4caf50", "mpi": "#2196f3", "non_io": "#80cbc4", "read": "#ff9800",
           "write": "#e53935", "meta": "#9c27b0"}


def safe_json(obj: Any) -> Markup:
    """JSON that can sit inside a <script> element whatever strings it holds."""
    text = json.dumps(obj, allow_nan=False, default=_json_default, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return Markup(text)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def _finite(values: Any) -> list[float | None]:
    arr = np.asarray(values, dtype=np.float64)
    return [None if not np.isfinite(x) else float(x) for x in arr]


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    base = {"title": {"text": title, "font": {"size": 15}}, "margin": {"l": 60, "r": 20, "t": 45, "b": 50},
            "legend": {"orientation": "h", "y": -0.2}, "height": 380}
    base.update(extra)
    return base


def rank_figure(run: RunAnalysis) -> dict[str, Any]:
    """Per-rank stacked time bars: compute / MPI (or compute + MPI) / read / write / metadata."""
    ranks = as_table(run.ranks)
    has_mpi = bool((~np.isnan(np.asarray(ranks["mpi"], dtype=np.float64))).any())
    parts = (["compute", "mpi"] if has_mpi else ["non_io"]) + ["read", "write", "meta"]
    names = {"compute": "compute", "mpi": "MPI", "non_io": "compute + MPI", "read": "read", "write": "write",
             "meta": "metadata"}
    n = len(ranks)
    group = max(1, -(-n // MAX_RANK_BARS))
    if group == 1:
        x = ranks["rank"].astype(int).tolist()
        values = {p: np.asarray(ranks[p], dtype=np.float64) for p in parts}
        title, xtitle = "Time per rank", "rank"
    else:
        starts = np.arange(0, n, group)
        x = [f"{ranks['rank'][s]}–{ranks['rank'][min(int(s) + group, n) - 1]}" for s in starts]
        values = {p: np.add.reduceat(np.nan_to_num(np.asarray(ranks[p], dtype=np.float64)), starts)
                  / np.diff(np.append(starts, n)) for p in parts}
        title = f"Time per rank (mean over groups of {group} consecutive ranks)"
        xtitle = "ranks"
    traces = [{"type": "bar", "name": names[p], "x": x, "y": _finite(values[p]),
               "marker": {"color": COLOURS[p]}} for p in parts]
    return {"data": traces, "layout": _layout(title, barmode="stack", xaxis=_axis(xtitle, type="category"),
                                              yaxis=_axis("seconds"))}


#: At most this many time bins are drawn; more are merged (Darshan keeps at most 200).
MAX_TIME_BINS = 400


def activity_figure(run: RunAnalysis) -> dict[str, Any] | None:
    """I/O activity over time (a heat map): bytes per rank and time bin, with the bytes read and
    written over all ranks above it.  Ranks in groups of consecutive ranks above MAX_RANK_BARS."""
    a = run.activity
    if a is None or not len(a.ranks):
        return None
    read, group_t = merged(a.read, MAX_TIME_BINS)
    write, _ = merged(a.write, MAX_TIME_BINS)
    width = a.bin_width * group_t
    x = [round((i + 0.5) * width, 9) for i in range(len(read))]
    dense = np.zeros((a.nprocs if a.nprocs else int(a.ranks.max()) + 1, a.nbins), dtype=np.float64)
    dense[a.ranks[a.ranks < len(dense)]] = a.per_rank[a.ranks < len(dense)]
    if group_t > 1:
        dense = np.add.reduceat(dense, np.arange(0, a.nbins, group_t), axis=1)
    n = len(dense)
    group_r = max(1, -(-n // MAX_RANK_BARS))
    if group_r > 1:
        starts = np.arange(0, n, group_r)
        dense = np.add.reduceat(dense, starts, axis=0)
        y: list[Any] = [f"{s}–{min(s + group_r, n) - 1}" for s in starts.tolist()]
        ytitle = f"ranks (groups of {group_r})"
    else:
        y = list(range(n))
        ytitle = "rank"
    z = [[None if v == 0 else float(v) for v in row] for row in dense.tolist()]  # blank: no bytes
    layers = ", ".join(MODULE_LABELS.get(m, m) for m in a.layers)
    traces = [
        {"type": "bar", "name": "read", "x": x, "y": [float(v) / width for v in read.tolist()],
         "marker": {"color": COLOURS["read"]}, "yaxis": "y2", "hovertemplate": "%{y:.4s}B/s"},
        {"type": "bar", "name": "write", "x": x, "y": [float(v) / width for v in write.tolist()],
         "marker": {"color": COLOURS["write"]}, "yaxis": "y2", "hovertemplate": "%{y:.4s}B/s"},
        {"type": "heatmap", "name": "bytes", "x": x, "y": y, "z": z, "colorscale": "YlOrRd",
         "reversescale": True, "showscale": True,  # the busiest bins darkest
         "colorbar": {"title": {"text": "bytes"}, "len": 0.7, "y": 0.35, "exponentformat": "SI",
                      "ticksuffix": "B"},
         "hovertemplate": "rank %{y}, %{x:.3g} s: %{z:.4s}B<extra></extra>"},
    ]
    height = max(380, min(900, 14 * len(y) + 260))
    return {"data": traces, "layout": _layout(
        f"I/O activity over time ({layers}; bins of {fmt.seconds(width)})", barmode="stack", bargap=0,
        height=height, xaxis=_axis("seconds since the job's start", range=[0, width * len(read)]),
        yaxis={**_axis(ytitle, type="category" if group_r > 1 else "linear"), "domain": [0, 0.72],
               "autorange": "reversed"},
        yaxis2={**_axis("bytes/s"), "domain": [0.78, 1.0], "exponentformat": "SI", "ticksuffix": "B/s"})}


def _axis(title: str, **extra: Any) -> dict[str, Any]:
    return {"title": {"text": title}, **extra}


#: Binary units of bytes, as the tables use them.
BYTE_UNITS: tuple[tuple[str, float], ...] = (("TiB", 2.0**40), ("GiB", 2.0**30), ("MiB", 2.0**20),
                                             ("KiB", 2.0**10), ("B", 1.0))


def byte_unit(values: Sequence[float | None]) -> tuple[str, float]:
    """The binary unit a chart of ``values`` (bytes) is drawn in: the largest that keeps the
    largest value at 1 or more (Plotly's own SI prefixes would write 4.5 GB as "4.5B", billions)."""
    top = max((abs(v) for v in values if v is not None and math.isfinite(v)), default=0.0)
    return next(((u, f) for u, f in BYTE_UNITS if top >= f), ("B", 1.0))


def _in_unit(values: Sequence[float | None], factor: float) -> list[float | None]:
    return [None if v is None else v / factor for v in values]


def histogram_figure(run: RunAnalysis) -> dict[str, Any] | None:
    traces = []
    for lay in run.io.layers:
        for direction, hist in (("read", lay.histogram_read), ("write", lay.histogram_write)):
            if hist is not None and any(hist):
                traces.append({"type": "bar", "name": f"{lay.label} {direction}",
                               "x": list(fmt.BUCKET_LABELS), "y": list(hist)})
    if not traces:
        return None
    return {"data": traces, "layout": _layout("Requests by size", barmode="group",
                                              xaxis=_axis("request size (bytes)"), yaxis=_axis("requests"))}


def pop_unavailable(run: RunAnalysis) -> tuple[str, list[tuple[str, Value]]]:
    """Where no POP efficiency can be computed (a Darshan log without MPI time): the reasons, said
    once, and the terms that can be; ("", []) where the efficiencies are there."""
    if any(v.available for _, _, v, _ in run.pop.rows()):
        return "", []
    terms = [(label, v) for _, label, v, _ in run.pop.rows()]
    terms += [(label, v) for _, label, v in run.pop.losses()]
    reasons = "; ".join(dict.fromkeys(v.reason for _, v in terms if not v.available and v.reason))
    return reasons, [(label, v) for label, v in terms if v.available]


def file_figures(run: RunAnalysis, top: int) -> list[dict[str, Any]]:
    files = application_files(as_table(run.files))[0].head(top)
    if not len(files):
        return []
    files = files[::-1]  # slowest at the top of a horizontal bar chart
    ranks = range(len(files), 0, -1)
    labels = [f"{i}. {shorten(str(n), 40)}" for i, n in zip(ranks, files["name"], strict=True)]
    full = [f"{n} ({FILE_LAYER_LABELS.get(str(lay), str(lay))})" for n, lay in
            zip(files["name"], files["layer"], strict=True)]
    height = max(300, 28 * len(files) + 120)
    # the full names are for the hover only: drawn on the bars, they repeat on every segment
    time_traces = [{"type": "bar", "orientation": "h", "name": name, "y": labels,
                    "x": _finite(files[col]), "text": full, "textposition": "none",
                    "hovertemplate": "%{text}<br>%{x:.4g} s", "marker": {"color": COLOURS[key]}}
                   for key, col, name in (("read", "read_time", "read"), ("write", "write_time", "write"),
                                          ("meta", "meta_time", "metadata"))]
    unit, factor = byte_unit(_finite(files["bytes_read"] + files["bytes_written"]))
    byte_traces = [{"type": "bar", "orientation": "h", "name": name, "y": labels,
                    "x": _in_unit(_finite(files[col]), factor), "text": full, "textposition": "none",
                    "hovertemplate": f"%{{text}}<br>%{{x:.4g}} {unit}", "marker": {"color": COLOURS[key]}}
                   for key, col, name in (("read", "bytes_read", "read"),
                                          ("write", "bytes_written", "written"))]
    # the labels' width sets the left margin (a fixed one cut their start, the file's number)
    margin = {"r": 20, "t": 45, "b": 50}
    names = {"automargin": True}
    return [
        {"data": time_traces, "layout": _layout("I/O time per file (summed over ranks)", barmode="stack",
                                                height=height, margin=margin, xaxis=_axis("seconds"),
                                                yaxis=names)},
        {"data": byte_traces, "layout": _layout("Bytes per file", barmode="stack", height=height,
                                                margin=margin, xaxis=_axis(f"bytes ({unit})"), yaxis=names)},
    ]


EFFICIENCY_SERIES: tuple[tuple[str, str], ...] = (
    ("scaling efficiency", "scaling_efficiency"), ("parallel efficiency", "parallel_efficiency"),
    ("load balance", "load_balance"), ("communication eff.", "communication_efficiency"),
    ("I/O efficiency", "io_efficiency"), ("computation scalability", "computation_scalability"),
    ("global efficiency", "global_efficiency"),
)


def scaling_figures(scaling: ScalingAnalysis) -> list[dict[str, Any]]:
    rows = scaling.rows
    x = [r.nprocs for r in rows]
    # ticks at the runs' rank counts (a log axis from 2 to 4 would be ticked 2.2, 2.4, ...)
    ranks_axis = _axis("ranks", type="log", tickmode="array", tickvals=sorted(set(x)))

    def series(attr: str) -> list[float | None]:
        return [getattr(r, attr).value for r in rows]

    speed = {"data": [
        {"type": "scatter", "mode": "lines+markers", "name": "speedup", "x": x, "y": series("speedup")},
        {"type": "scatter", "mode": "lines", "name": "ideal", "x": x, "y": [r.ideal_speedup for r in rows],
         "line": {"dash": "dash"}},
    ], "layout": _layout(f"Speedup ({scaling.mode} scaling)", xaxis=ranks_axis, yaxis=_axis("speedup"))}
    eff_traces = [{"type": "scatter", "mode": "lines+markers", "name": name, "x": x, "y": series(attr)}
                  for name, attr in EFFICIENCY_SERIES if any(y is not None for y in series(attr))]
    rule = {"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": 0.8, "y1": 0.8,
            "line": {"dash": "dot", "color": "grey"}}
    eff_layout = _layout("Efficiencies per run", xaxis=ranks_axis,
                         yaxis=_axis("efficiency", rangemode="tozero"), shapes=[rule])
    eff = {"data": eff_traces, "layout": eff_layout}
    # one category per run: runs of the same rank count would share a bar
    runs = [f"{r.nprocs} · {r.label}" for r in rows] if len(set(x)) < len(x) else x
    rate_unit, rate_factor = byte_unit(series("io_bandwidth"))
    io = {"data": [
        {"type": "bar", "name": "I/O time per rank (s)", "x": runs, "y": series("io_time_mean")},
        {"type": "scatter", "mode": "lines+markers", "name": f"I/O bandwidth ({rate_unit}/s)", "x": runs,
         "y": _in_unit(series("io_bandwidth"), rate_factor), "yaxis": "y2"},
    ], "layout": _layout("I/O time and bandwidth per run", xaxis=_axis("ranks", type="category"),
                         yaxis=_axis("seconds"),
                         yaxis2=_axis(f"bandwidth ({rate_unit}/s)", overlaying="y", side="right"))}
    return [speed, eff, io]


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True, trim_blocks=True,
                      lstrip_blocks=True)
    env.filters["v"] = lambda v, pct=False: fmt.value(v, as_percent=pct)
    env.filters["level"] = lambda v: efficiency_level(v.value if isinstance(v, Value) else v)
    env.filters["seconds"] = fmt.seconds
    env.filters["nbytes"] = fmt.nbytes
    env.filters["count"] = fmt.count
    env.filters["nranks"] = nranks
    env.filters["timestamp"] = fmt.timestamp
    env.filters["library_note"] = library_layers_note
    env.filters["file_layer_label"] = lambda layer: FILE_LAYER_LABELS.get(str(layer), str(layer))
    env.filters["layer_label"] = lambda layer: LAYER_LABELS.get(str(layer), str(layer))
    env.filters["json"] = safe_json
    return env


def timeline_view(trace: Trace | None) -> dict[str, Any] | None:
    """The Timeline section of a run with a trace: the figure and what the page says about it."""
    if trace is None or not trace.ranks:
        return None
    from pario.report.timeline import binning_note, timeline, timeline_figure

    tl = timeline(trace)
    notes = [n for n in (binning_note(tl),) if n]
    missing = trace.nprocs - len(trace.ranks)
    if missing > 0:
        notes.append(f"{missing} of {trace.nprocs} ranks have no trace and no row.")
    for rt in trace.ranks:
        if rt.dropped:
            since = f" from {rt.dropped_from:.3f} s (its own clock)" if rt.dropped_from is not None else ""
            notes.append(f"Rank {rt.rank}: {rt.dropped} events not recorded{since} (the trace reached its "
                         f"cap, PARIO_TRACE_MAX); its row ends with its last recorded event.")
    if not trace.has_mpi:
        nested = sum(len(r.events) for r in trace.inner)
        notes.append(f"From Darshan's DXT modules: {trace.nevents + nested:,} POSIX and MPI-IO reads and "
                     "writes"
                     + (f", of which {nested:,} POSIX calls made inside MPI-IO calls are drawn as part of "
                        "them" if nested else "")
                     + ". The MPI calls, opens, closes and seeks are not traced: the time between two "
                     "reads or writes is not computation.")
    from pario.report.file_activity import file_activity, file_activity_figure
    from pario.trace.activity import io_activity, io_calls

    calls = io_calls(trace)
    fa = file_activity(trace, calls=calls)
    return {"figure": timeline_figure(tl, trace.files), "notes": notes, "segments": len(tl.segments),
            "recorded": tl.recorded, "events": trace.nevents, "has_mpi": trace.has_mpi,
            "activity": activity_rows(io_activity(trace, calls=calls)),
            "files_figure": file_activity_figure(fa) if fa is not None else None}


def activity_rows(a: Any) -> list[tuple[str, str]]:
    """The I/O-over-time metrics of a trace (pario.trace.activity.IOActivity) as (label, value) rows."""
    from pario import units

    if not a.calls:
        return []
    rows = [("I/O calls (outermost)", f"{a.calls:,}"), ("ranks doing I/O", f"{a.ranks:,}"),
            ("I/O span, first call to last", f"{units.seconds(a.span)} ({units.seconds(a.first)} to "
                                             f"{units.seconds(a.last)})"),
            ("time with at least one rank in I/O", units.seconds(a.busy)
             + (f" ({units.percent(a.busy_share)} of the run)" if a.busy_share is not None else ""))]
    if a.mean_concurrency is not None:
        rows.append(("calls in flight while any is: mean / peak", f"{a.mean_concurrency:.2f} / {a.peak:,}"))
    rows.append(("I/O phases (separated by idle gaps of at least " + units.seconds(a.gap) + ")",
                 f"{len(a.phases):,}"))
    return rows


def run_label(run: RunAnalysis) -> str:
    """A run's name in the side-by-side tables: its log's file name."""
    return run.job.path.rsplit("/", 1)[-1] or run.job.exe.rsplit("/", 1)[-1]


def side_by_side(runs: Sequence[RunAnalysis]) -> dict[str, Any]:
    """The POP table of every run, one column per run: labels, and (label, indent, values) rows.

    Rows are the union of the runs' ``PopMetrics.rows()`` in their order; a run without a
    row has None in it.
    """
    labels = [run_label(r) for r in runs]
    seen = {lab: labels.count(lab) for lab in labels}
    labels = [f"{lab} ({i + 1})" if seen[lab] > 1 else lab for i, lab in enumerate(labels)]
    order: list[str] = []
    names: dict[str, tuple[str, int]] = {}
    values: dict[str, dict[int, Value]] = {}
    for i, run in enumerate(runs):
        for key, label, v, indent in run.pop.rows():
            if key not in names:
                order.append(key)
                names[key] = (label, indent)
            values.setdefault(key, {})[i] = v
    rows = [(names[k][0], names[k][1], [values[k].get(i) for i in range(len(runs))]) for k in order]
    by_run = [{key: v for key, _, v in r.pop.losses()} for r in runs]
    first = runs[0].pop.losses() if runs else []
    losses = [(label, [lv.get(key) for lv in by_run]) for key, label, _ in first]
    return {"labels": labels, "rows": rows, "losses": losses}


def render_html(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None = None, *,
                top: int = DEFAULT_TOP, plotly_js: str | None = None,
                traces: Sequence[Trace | None] | None = None) -> str:
    """The whole report as one HTML document; ``traces`` (one per run, or None) add the timelines."""
    if plotly_js is None:
        from plotly.offline import get_plotlyjs

        plotly_js = get_plotlyjs()
    if traces is not None and len(traces) != len(runs):
        raise ValueError("one trace (or None) per run")
    views = []
    for i, run in enumerate(runs):
        figures = [rank_figure(run)] if run.has_io else []
        hist = histogram_figure(run)
        if hist is not None:
            figures.append(hist)
        figures += file_figures(run, top)
        act = activity_figure(run)
        if act is not None:
            figures.append(act)
        findings = findings_list(run.findings) if run.diagnosed else None
        own, library = application_files(as_table(run.files))
        pop_reasons, pop_known = pop_unavailable(run)
        views.append({"index": i, "run": run, "figures": figures, "findings": findings,
                      "files": records(own.head(top)), "library_files": mpi_library_line(library),
                      "pop_reasons": pop_reasons, "pop_known": pop_known,
                      "buckets": fmt.BUCKET_LABELS,
                      "datasets": (records(as_table(run.libraries.datasets).head(top))
                                   if run.libraries.datasets is not None else []),
                      "timeline": timeline_view(traces[i] if traces is not None else None)})
    template = _environment().get_template("report.html.j2")
    return template.render(
        runs=views,
        compare=side_by_side(runs) if len(runs) > 1 else None,
        scaling=scaling,
        scaling_figures=scaling_figures(scaling) if scaling is not None else [],
        scaling_findings=(findings_list(scaling.findings) if all(r.diagnosed for r in runs) else None)
        if scaling is not None else [],
        plotly_js=Markup(plotly_js),
        version=__version__,
        title=_title(runs),
    )


def _title(runs: Sequence[RunAnalysis]) -> str:
    if len(runs) == 1:
        name = runs[0].job.exe.rsplit("/", 1)[-1] or runs[0].job.path.rsplit("/", 1)[-1]
        return f"pario report: {name}"
    return f"pario report: {len(runs)} runs"


def write_html(runs: Sequence[RunAnalysis], scaling: ScalingAnalysis | None, path: str, *,
               top: int = DEFAULT_TOP, traces: Sequence[Trace | None] | None = None) -> None:
    text = render_html(runs, scaling, top=top, traces=traces)
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ParioError(f"{path}: cannot write the HTML report: {exc.strerror}") from None
