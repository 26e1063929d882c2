"""``pario tune report STUDY``: what a stored study found, in the terminal, HTML and JSON.

The terminal report (at most 80 columns) gives the summary of :mod:`pario.tune.results`
(default against best, speed-up, verdict, notes), the parameter importances, for ``pract``
studies the model's error on trials it had not seen, and one row per trial.  The HTML report
is one self-contained file (Plotly inlined, as ``pario report --html``) with the convergence
plot, the importances and the trial table; the JSON is :func:`pario.tune.results.dumps` plus
``importances`` and ``mdape`` (docs/tune.md).

Importances are Optuna's PED-ANOVA (:class:`optuna.importance.PedAnovaImportanceEvaluator`):
it needs no scikit-learn (fANOVA does) and takes conditional parameters, each over the trials
in which it applies.  Only the default and search trials count (re-measurements and
verification runs repeat configurations and would weigh them more).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from pario.errors import ParioError
from pario.tune.objective import MAXIMISE, better
from pario.tune.results import Summary, TrialRow, dumps, summarise
from pario.tune.space import Space
from pario.tune.storage import open_storage
from pario.tune.study import ROLES_IN_BUDGET, load_study, space_from_json

#: Fewer default/search trials than this and no importance is computed.
MIN_IMPORTANCE_TRIALS = 4
ERROR_TAIL = 60  # characters of a failed trial's error shown in the terminal
MIB = 1024.0 * 1024.0


@dataclass(frozen=True)
class Importances:
    """Parameter importances (name -> share, largest first), or why there are none."""

    values: dict[str, float] | None
    reason: str = ""
    trials: int = 0


@dataclass(frozen=True)
class Report:
    summary: Summary
    space: Space
    importances: Importances
    mdape: float | None  # pract studies: held-out median absolute percentage error, else None
    predicted_trials: int


# ---- what is computed ----------------------------------------------------------------------

def importances(study) -> Importances:
    """PED-ANOVA importances over the study's finished default and search trials."""
    import optuna
    from optuna.trial import TrialState

    trials = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
              if t.user_attrs.get("role") in ROLES_IN_BUDGET and t.value is not None]
    n = len(trials)
    if n < MIN_IMPORTANCE_TRIALS:
        return Importances(None, f"too few trials to compute them ({n} finished default and search "
                           f"trials, at least {MIN_IMPORTANCE_TRIALS} needed)", n)
    if len({t.value for t in trials}) < 2:
        return Importances(None, f"all {n} finished trials have the same value", n)
    if not any(len({t.params.get(p) for t in trials}) > 1 for t0 in trials for p in t0.params):
        return Importances(None, "no parameter took more than one value", n)
    copy = optuna.create_study(direction=study.direction)
    copy.add_trials(trials)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = optuna.importance.get_param_importances(
                copy, evaluator=optuna.importance.PedAnovaImportanceEvaluator())
    except (ValueError, RuntimeError, ZeroDivisionError) as exc:
        return Importances(None, f"cannot be computed: {str(exc).splitlines()[0][:120]}", n)
    return Importances({k: float(v) for k, v in values.items()}, "", n)


def build(study_name: str, storage_url: str | None) -> Report:
    """Load a stored study and compute what the report shows (ParioError: no such study)."""
    study = load_study(open_storage(storage_url), study_name)
    summary = summarise(study)
    space = space_from_json(study.user_attrs["pario_space"])
    predicted = sum(1 for r in summary.trials
                    if r.predicted is not None and r.state == "complete" and r.values)
    mdape = summary.prediction_mdape if summary.strategy == "pract" else None
    return Report(summary, space, importances(study), mdape, predicted)


def best_so_far(objective: str, rows: Sequence[TrialRow]) -> list[tuple[int, float]]:
    """(trial number, best single trial value up to it) over the finished trials, in order."""
    out: list[tuple[int, float]] = []
    best: float | None = None
    for r in sorted(rows, key=lambda r: r.number):
        if r.state != "complete" or r.value is None:
            continue
        if best is None or better(objective, r.value, best):
            best = r.value
        out.append((r.number, best))
    return out


def to_json(rep: Report) -> dict[str, Any]:
    data = json.loads(dumps(rep.summary))
    data["importances"] = rep.importances.values
    data["importances_note"] = rep.importances.reason or None
    data["mdape"] = rep.mdape
    return data


# ---- terminal ------------------------------------------------------------------------------

def _show(objective: str, value: float | None) -> str:
    from pario.tune.objective import show_value

    return show_value(objective, value)


def settings_text(space: Space, row: TrialRow) -> str:
    from pario.tune.config import describe

    return describe(space, row.config) if row.config else "-"


def error_tail(error: str, width: int = ERROR_TAIL) -> str:
    """The last line of an error, cut to ``width`` characters from its end."""
    lines = [ln.strip() for ln in error.strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    head = lines[0].split(":", 1)[0] if ":" in lines[0] and len(lines) > 1 else ""
    last = lines[-1]
    if len(last) > width:
        last = "…" + last[-(width - 1):]
    return f"{head}: {last}" if head and not last.startswith(head) else last


def terminal_lines(rep: Report) -> list[tuple[str, str, int]]:
    """The report's text before the trial table: (text, style, hanging indent)."""
    from pario.tune.output import lines

    s = rep.summary
    out: list[tuple[str, str, int]] = [(f"pario tune report: study {s.study}", "bold", 0),
                                       ("command: " + " ".join(s.command), "", 9)]
    for text in lines(s, rep.space, {}, s.command):
        out.append((text, "bold" if text.startswith(("speed-up", "The ", "No ")) else "", 9))
    out.append(("", "", 0))
    imp = rep.importances
    if imp.values is None:
        out.append((f"Parameter importances: {imp.reason}.", "", 2))
    else:
        out.append((f"Parameter importances (PED-ANOVA over {imp.trials} default and search trials):",
                    "bold", 2))
    if s.strategy == "pract":
        if rep.mdape is None:
            out.append(("Prediction error: no trial ran with a prediction made before it yet.", "", 2))
        else:
            out.append((f"Prediction error on held-out trials: MdAPE {100 * rep.mdape:.1f}% over "
                        f"{rep.predicted_trials} trial(s) predicted before they ran.", "", 2))
    return out


def _render(rep: Report, out: TextIO) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from pario.textfit import Wrapped

    console = Console(file=out, highlight=False)
    console.width = min(console.width, 80)
    s = rep.summary
    imp = rep.importances
    for text, style, indent in terminal_lines(rep):
        console.print(Wrapped(text, style=style, indent=indent) if text else "")
        if imp.values is not None and text.startswith("Parameter importances ("):
            longest = max(len(k) for k in imp.values)
            top = max(imp.values.values()) or 1.0
            for name, share in imp.values.items():
                bar = "█" * int(round(20 * share / top))
                console.print(Text(f"  {name.ljust(longest)}  {share:5.2f}  {bar}"), overflow="fold")
    console.print()
    table = Table(title=f"Trials ({s.objective}; value: median of the trial's runs)", title_justify="left",
                  title_style="bold", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
                  collapse_padding=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("role", no_wrap=True)
    table.add_column("state", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("settings (differing from the default)", ratio=1)
    for r in sorted(s.trials, key=lambda r: r.number):
        settings = settings_text(rep.space, r)
        if r.error:
            settings += "\nerror: " + error_tail(r.error)
        value = _show(s.objective, r.value) if r.value is not None else "-"
        table.add_row(str(r.number), r.role, r.state, value, Wrapped(settings, indent=2))
    console.print(table)


# ---- HTML ----------------------------------------------------------------------------------

def _scale(objective: str) -> tuple[float, str]:
    return (MIB, "MiB/s") if objective in MAXIMISE else (1.0, "seconds")


def convergence_figure(rep: Report) -> dict[str, Any]:
    """Each finished trial's value by role, the best so far, and the default's median."""
    s = rep.summary
    div, unit = _scale(s.objective)
    traces: list[dict[str, Any]] = []
    done = [r for r in sorted(s.trials, key=lambda r: r.number)
            if r.state == "complete" and r.value is not None]
    for role in dict.fromkeys(r.role for r in done):
        mine = [r for r in done if r.role == role]
        traces.append({"type": "scatter", "mode": "markers", "name": f"{role} trials",
                       "x": [r.number for r in mine], "y": [r.value / div for r in mine],  # type: ignore[operator]  # value is set on every trial kept here
                       "text": [settings_text(rep.space, r) for r in mine],
                       "hovertemplate": "trial %{x}: %{y:.4g} " + unit + "<br>%{text}<extra></extra>"})
    path = best_so_far(s.objective, done)
    if path:
        traces.append({"type": "scatter", "mode": "lines", "line": {"shape": "hv"}, "name": "best so far",
                       "x": [n for n, _ in path], "y": [v / div for _, v in path]})
    if s.default is not None and done:
        xs = [r.number for r in s.trials]
        traces.append({"type": "scatter", "mode": "lines", "name": "default (median)",
                       "line": {"dash": "dash", "color": "grey"}, "x": [min(xs), max(xs)],
                       "y": [s.default.median / div] * 2})
    title = f"Convergence: {s.objective} per trial"
    return {"data": traces, "layout": _layout(title, xaxis={"title": {"text": "trial"}},
                                              yaxis={"title": {"text": unit}})}


def importance_figure(rep: Report) -> dict[str, Any] | None:
    vals = rep.importances.values
    if not vals:
        return None
    names = list(vals)[::-1]
    return {"data": [{"type": "bar", "orientation": "h", "name": "importance", "y": names,
                      "x": [vals[n] for n in names]}],
            "layout": _layout(f"Parameter importances (PED-ANOVA over {rep.importances.trials} default and "
                              "search trials)", height=max(300, 28 * len(names) + 120),
                              margin={"l": 260, "r": 20, "t": 45, "b": 50},
                              xaxis={"title": {"text": "share"}})}


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    base = {"title": {"text": title, "font": {"size": 15}}, "margin": {"l": 60, "r": 20, "t": 45, "b": 50},
            "legend": {"orientation": "h", "y": -0.2}, "height": 400}
    base.update(extra)
    return base


def render_html(rep: Report, plotly_js: str | None = None) -> str:
    from jinja2 import Environment, FileSystemLoader
    from markupsafe import Markup

    from pario import __version__
    from pario.report.html import safe_json

    if plotly_js is None:
        from plotly.offline import get_plotlyjs

        plotly_js = get_plotlyjs()
    s = rep.summary
    env = Environment(loader=FileSystemLoader(str(Path(__file__).resolve().parent / "templates")),
                      autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["json"] = safe_json
    figures = [convergence_figure(rep)]
    imp = importance_figure(rep)
    if imp is not None:
        figures.append(imp)
    rows = [{"number": r.number, "role": r.role, "state": r.state,
             "value": _show(s.objective, r.value) if r.value is not None else "-",
             "runs": ", ".join(_show(s.objective, v) for v in r.values),
             "settings": settings_text(rep.space, r), "error": r.error}
            for r in sorted(s.trials, key=lambda r: r.number)]
    # the importances are the chart's, not a heading over the terminal's list of them
    intro = [text for text, _, _ in terminal_lines(rep)[1:]
             if text and not text.startswith("Parameter importances (")]
    return env.get_template("tune_report.html.j2").render(
        title=f"pario tune report: {s.study}", intro=intro, figures=figures, rows=rows,
        importances=rep.importances, plotly_js=Markup(plotly_js), version=__version__)


# ---- the command ---------------------------------------------------------------------------

def _write(path: str, text: str, what: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ParioError(f"{path}: cannot write the {what}: {exc.strerror}") from None


def report(study_name: str, storage_url: str | None, *, html: str | None = None, json_path: str | None = None,
           out: TextIO) -> None:
    """Print the report of a stored study on ``out``; write HTML and JSON files when asked.

    With ``json_path`` ``-`` the JSON goes to ``out`` instead of the terminal report.
    """
    rep = build(study_name, storage_url)
    if json_path == "-":
        out.write(json.dumps(to_json(rep), indent=2, default=str) + "\n")
    else:
        _render(rep, out)
        if json_path:
            _write(json_path, json.dumps(to_json(rep), indent=2, default=str) + "\n", "JSON summary")
    if html:
        _write(html, render_html(rep), "HTML report")
