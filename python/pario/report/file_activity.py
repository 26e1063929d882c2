"""I/O per file over time, from a trace: bytes read and written in each time bin (docs/trace.md).

Each call's bytes are spread evenly over its duration (all of them in its start's bin when it
takes no time), so the bytes of a bin are exact for calls inside it and prorated for calls that
cross its edges; a file's row sums to its bytes.  The outermost calls are counted (an MPI-IO
call's bytes, not those of the POSIX calls it made).  The figure is a heat map of at most
:data:`MAX_FILES` rows (the files that moved the most, the others summed into one row) by
:data:`BINS` columns, whatever the number of calls.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import numpy as np

from pario.trace.activity import IOCalls, io_calls
from pario.trace.format import Kind
from pario.trace.model import Trace

BINS = 200
MAX_FILES = 20


@dataclass(frozen=True)
class FileActivity:
    """Bytes read and written per file (rows) and time bin (columns)."""

    names: tuple[str, ...]
    edges: np.ndarray  # BINS + 1 bin edges, seconds on the job's time base
    read: np.ndarray  # float64 (files, bins)
    written: np.ndarray  # float64 (files, bins)


def binned_bytes(start: np.ndarray, end: np.ndarray, nbytes: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bytes per bin of calls moving ``nbytes`` evenly from ``start`` to ``end``.

    The bytes moved by time t are sum_i b_i * clip((t - s_i) / (e_i - s_i), 0, 1); at the edges
    that is sum over started calls of r_i (t - s_i) minus sum over ended calls of r_i (t - e_i)
    (r_i = b_i / (e_i - s_i)), from prefix sums over the calls sorted by start and by end.
    """
    b = nbytes.astype(np.float64)
    dur = end - start
    timed = dur > 0
    out = np.zeros(len(edges) - 1)
    # instantaneous calls: all their bytes in their start's bin
    if (~timed).any():
        idx = np.clip(np.searchsorted(edges, start[~timed], side="right") - 1, 0, len(out) - 1)
        np.add.at(out, idx, b[~timed])
    if timed.any():
        s, e, r = start[timed], end[timed], b[timed] / dur[timed]
        cum = np.zeros(len(edges))
        for times, sign in ((s, 1.0), (e, -1.0)):
            order = np.argsort(times)
            t_sorted, r_sorted = times[order], r[order]
            rate = np.concatenate(([0.0], np.cumsum(r_sorted)))
            rate_t = np.concatenate(([0.0], np.cumsum(r_sorted * t_sorted)))
            k = np.searchsorted(t_sorted, edges, side="right")
            cum += sign * (edges * rate[k] - rate_t[k])
        out += np.diff(cum)
    return np.clip(out, 0.0, None)


def file_activity(trace: Trace, bins: int = BINS, max_files: int = MAX_FILES,
                  calls: IOCalls | None = None) -> FileActivity | None:
    """The bytes of each file over time (None when the trace moves no byte); ``calls``: the
    trace's :func:`~pario.trace.activity.io_calls`, if at hand."""
    if calls is None:
        calls = io_calls(trace)
    moving = (calls.nbytes > 0) & (calls.kind != Kind.IO_META)
    calls = calls.take(np.flatnonzero(moving))
    if not len(calls):
        return None
    first = min(r.start for r in trace.ranks)
    last = max(max(r.end for r in trace.ranks), float(calls.end.max()))
    edges = np.linspace(first, last if last > first else first + 1.0, bins + 1)
    fids, inv = np.unique(calls.file, return_inverse=True)
    total = np.bincount(inv, weights=calls.nbytes.astype(np.float64))
    order = np.argsort(-total, kind="stable")
    shown = order[:max_files] if len(order) > max_files + 1 else order
    row_of = np.full(len(fids), len(shown), dtype=np.int64)
    row_of[shown] = np.arange(len(shown))
    nrows = len(shown) + (1 if len(shown) < len(fids) else 0)
    read = np.zeros((nrows, bins))
    written = np.zeros((nrows, bins))
    rows = row_of[inv]
    end = np.maximum(calls.end, calls.start)
    for row in range(nrows):
        sel = rows == row
        for kind, out in ((Kind.IO_READ, read), (Kind.IO_WRITE, written)):
            k = sel & (calls.kind == kind)
            if k.any():
                out[row] = binned_bytes(calls.start[k], end[k], calls.nbytes[k], edges)
    names = [trace.files.get(int(fids[i]), f"record {int(fids[i]):#x}") for i in shown]
    if nrows > len(shown):
        names.append(f"{len(fids) - len(shown)} other files")
    return FileActivity(tuple(names), edges, read, written)


def file_activity_figure(fa: FileActivity) -> dict[str, Any]:
    """A Plotly heat map: files on y (the busiest on top), time on x, colour = bytes per bin."""
    mib = 1024.0 * 1024.0
    labels = [_short(n) for n in fa.names]
    labels = [lab if labels.count(lab) == 1 else f"{lab} ({i + 1})" for i, lab in enumerate(labels)]
    centres = (fa.edges[:-1] + fa.edges[1:]) / 2
    width = float(fa.edges[1] - fa.edges[0])
    z = np.round((fa.read + fa.written) / mib, 6)
    custom = np.stack([np.round(fa.read / mib, 6), np.round(fa.written / mib, 6)], axis=-1)
    trace = {
        "type": "heatmap", "x": np.round(centres, 9).tolist(), "y": labels, "z": z.tolist(),
        "customdata": custom.tolist(), "zmin": 0,
        "colorscale": [[0.0, "#ffffff"], [0.05, "#deebf7"], [1.0, "#08306b"]],
        "colorbar": {"title": {"text": "MiB per bin"}},
        "hovertemplate": "%{y}<br>%{x:.4f} s ± " + f"{width / 2:.4g}" + " s<br>read %{customdata[0]:.3f} MiB"
                         "<br>written %{customdata[1]:.3f} MiB<extra></extra>",
    }
    layout = {
        "title": {"text": f"I/O per file over time (bytes read and written per {width:.3g} s bin)",
                  "font": {"size": 15}, "x": 0, "xanchor": "left"},
        "height": int(min(700, max(220, 28 * len(labels) + 140))),
        "margin": {"l": 220, "r": 20, "t": 60, "b": 50},
        "xaxis": {"title": {"text": "seconds (job time base)"},
                  "range": [float(fa.edges[0]), float(fa.edges[-1])]},
        "yaxis": {"autorange": "reversed", "automargin": True, "fixedrange": True},
    }
    return {"data": [trace], "layout": layout}


def _short(name: str, limit: int = 40) -> str:
    """A file's label: its path, cut at the front when long (the end says most)."""
    text = name if len(name) <= limit else "…" + name[-(limit - 1):]
    return html.escape(text, quote=False)
