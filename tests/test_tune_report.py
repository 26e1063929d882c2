"""`pario tune report STUDY`: on a real study (4 trials of the block kernel at 2 ranks,
random strategy, SQLite storage), the terminal report has one row per stored trial with its stored value,
the JSON's speed-up is the best configuration's median over the default's computed here from the stored
runs, the HTML holds the convergence and importance plots' data, and a missing study is a one-line error."""

from __future__ import annotations

import io
import json
import re
import statistics
import subprocess
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from kernel_helpers import kernel_exe
from pario.tune.ablation import ATTR
from pario.tune.objective import show_value
from pario.tune.report import MIN_IMPORTANCE_TRIALS, best_so_far, error_tail, importances, report
from pario.tune.results import TrialRow, mann_whitney_p
from pario.tune.study import config_key

STUDY = "rep"
TIMEOUT = 240
MIB = 1 << 20
COMMAND = ["mpirun", "--oversubscribe", "-np", "2"]
KERNEL_ARGS = ["--block-size", "8k", "--transfer-size", "8k", "--segments", "256"]


def _pario(pario_cmd, env, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*pario_cmd, *args], env={**env, "COLUMNS": "80"}, cwd=cwd, capture_output=True,
                          text=True, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def study(tmp_path_factory, pario_cmd, mpi_env):
    """A real study, its storage URL, the directory it ran in, and its stored trials."""
    cwd = tmp_path_factory.mktemp("tune-report")
    url = f"sqlite:///{cwd / 'studies.db'}"
    proc = _pario(pario_cmd, mpi_env, cwd, "tune", "--budget", "4", "--strategy", "random", "--seed", "1",
                  "--study", STUDY, "--storage", url, "--",
                  *COMMAND, str(kernel_exe("block")), *KERNEL_ARGS)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    trials = sorted(optuna.load_study(study_name=STUDY, storage=url).get_trials(), key=lambda t: t.number)
    assert len(trials) >= 4
    return url, cwd, trials


def _json(url: str, name: str) -> dict:
    """``pario tune report NAME --json -`` in this process (what the CLI calls)."""
    out = io.StringIO()
    report(name, url, json_path="-", out=out)
    return json.loads(out.getvalue())


def _plots(html: str) -> list[dict]:
    """The Plotly figures embedded in the page, as JSON."""
    return [json.loads(m) for m in re.findall(r'Plotly\.newPlot\("fig-\d+", \((.*?)\)\.data', html)]


def _by_hand(trials: list, url: str | None = None) -> tuple[list[float], list[float]]:
    """The default's samples and the best configuration's (best median), from the stored runs;
    with ``url``, the ablation's smaller configuration where the study kept one that still beats
    the default (docs/tune.md, "Noise")."""
    samples: dict[str, list[float]] = {}
    default_key = None
    for t in trials:
        if t.state != TrialState.COMPLETE:
            continue
        key = config_key(t.user_attrs["config"])
        samples.setdefault(key, []).extend(t.user_attrs["values"])
        if t.user_attrs["role"] == "default":
            default_key = key
    best = max(samples.values(), key=statistics.median)  # write-bw: larger is better
    minimal = optuna.load_study(study_name=STUDY, storage=url).user_attrs.get(ATTR) if url else None
    small = samples.get(config_key(minimal["config"])) if minimal and minimal["dropped"] else None
    if small and small is not samples[default_key] and mann_whitney_p("write-bw", small,
                                                                       samples[default_key]) <= 0.05:
        best = small
    return samples[default_key], best


@pytest.mark.slow
def test_terminal_report_has_every_trial_with_its_stored_value(study, pario_cmd, mpi_env):
    url, cwd, trials = study
    proc = _pario(pario_cmd, mpi_env, cwd, "tune", "report", STUDY, "--storage", url)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert max(len(line) for line in text.splitlines()) <= 80
    for t in trials:
        value = show_value("write-bw", t.value) if t.value is not None else "-"
        row = rf"^\s*{t.number}\s+{t.user_attrs['role']}\s+{t.state.name.lower()}\s+{re.escape(value)}\s"
        assert re.search(row, text, re.M), f"no row for trial {t.number} ({value}):\n{text}"
    default, best = _by_hand(trials, url)
    assert f"default: {show_value('write-bw', statistics.median(default))} median of {len(default)} run(s)" \
        in text
    assert f"best:    {show_value('write-bw', statistics.median(best))} median of {len(best)} run(s)" in text
    # a random search of 4 configurations: the importances are computed, one line each
    assert "Parameter importances (PED-ANOVA over 4 default and search trials):" in text
    assert re.search(r"^  pario\.collective\s+\d\.\d\d", text, re.M)
    assert "Prediction error" not in text  # only for pract studies


@pytest.mark.slow
def test_json_speedup_is_best_median_over_default_median(study, pario_cmd, mpi_env):
    url, cwd, trials = study
    out = cwd / "report.json"
    proc = _pario(pario_cmd, mpi_env, cwd, "tune", "report", STUDY, "--storage", url, "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    default, best = _by_hand(trials, url)
    assert data["default"]["samples"] == default and data["best"]["samples"] == best
    assert data["speedup"] == pytest.approx(statistics.median(best) / statistics.median(default), rel=1e-12)
    assert data["verdict"] in ("better", "within-noise", "default-best")
    assert (data["verdict"] == "default-best") == (best == default)
    assert [(r["number"], r["role"], r["state"], r["value"]) for r in data["trials"]] == [
        (t.number, t.user_attrs["role"], t.state.name.lower(), t.value) for t in trials]
    assert data["budget_used"] == 4 and data["objective"] == "write-bw" and data["strategy"] == "random"
    params = {p for t in trials for p in t.params}
    assert set(data["importances"]) <= params
    assert sum(data["importances"].values()) == pytest.approx(1.0)
    assert data["importances_note"] is None and data["mdape"] is None
    # '-': the JSON alone on standard output
    assert _json(url, STUDY) == data


@pytest.mark.slow
def test_html_holds_the_plots_data_and_the_trials(study, pario_cmd, mpi_env):
    url, cwd, trials = study
    page = cwd / "report.html"
    proc = _pario(pario_cmd, mpi_env, cwd, "tune", "report", STUDY, "--storage", url, "--html", str(page))
    assert proc.returncode == 0, proc.stderr
    html = page.read_text()
    assert "<script src" not in html and "Plotly.newPlot" in html  # self-contained
    convergence, bars = _plots(html)
    traces = {tr["name"]: tr for tr in convergence["data"]}
    done = [t for t in trials if t.state == TrialState.COMPLETE]
    points = sorted((x, y) for tr in convergence["data"] if tr["name"].endswith(" trials")
                    for x, y in zip(tr["x"], tr["y"], strict=True))
    assert points == [(t.number, t.value / MIB) for t in done]
    running, best = [], 0.0
    for t in done:
        best = max(best, t.value)
        running.append(best / MIB)
    assert traces["best so far"]["y"] == pytest.approx(running)
    default, _ = _by_hand(trials)
    assert traces["default (median)"]["y"] == pytest.approx([statistics.median(default) / MIB] * 2)
    data = _json(url, STUDY)
    assert dict(zip(bars["data"][0]["y"], bars["data"][0]["x"], strict=True)) == pytest.approx(
        data["importances"])
    for t in trials:
        assert f'<td class="num">{t.number}</td><td>{t.user_attrs["role"]}</td>' in html
    # the importances are the chart (its title says over which trials), not a heading left
    # without its list in the summary
    title = bars["layout"]["title"]["text"]
    assert title == "Parameter importances (PED-ANOVA over 4 default and search trials)"
    assert "<p>Parameter importances (" not in html


@pytest.mark.slow
def test_missing_study_and_bad_storage_are_one_line(study, pario_cmd, mpi_env):
    url, cwd, _ = study
    proc = _pario(pario_cmd, mpi_env, cwd, "tune", "report", "nosuch", "--storage", url)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [f"pario: error: no study nosuch (studies here: {STUDY})"]
    proc = _pario(pario_cmd, mpi_env, cwd, "tune", "report", STUDY, "--storage", "ftp://nowhere")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "--storage ftp://nowhere" in proc.stderr


def test_importances_need_enough_trials():
    study = optuna.create_study(direction="maximize")
    dist = optuna.distributions.CategoricalDistribution(["default", "2", "4"])
    for i, (v, x) in enumerate([("default", 1.0), ("2", 3.0), ("4", 2.0)]):
        study.add_trial(optuna.trial.create_trial(params={"cb_nodes": v}, distributions={"cb_nodes": dist},
                                                  value=x, user_attrs={"role": "default" if i == 0 else
                                                                       "search"}))
    few = importances(study)
    assert few.values is None and few.trials == 3 and f"at least {MIN_IMPORTANCE_TRIALS}" in few.reason
    study.add_trial(optuna.trial.create_trial(params={"cb_nodes": "2"}, distributions={"cb_nodes": dist},
                                              value=3.5, user_attrs={"role": "search"}))
    enough = importances(study)
    assert enough.values == {"cb_nodes": pytest.approx(1.0)}


def test_best_so_far_and_error_tail():
    rows = [TrialRow(0, "default", "complete", {}, 2.0, [2.0]), TrialRow(1, "search", "fail", {}, None, []),
            TrialRow(2, "search", "complete", {}, 1.0, [1.0]),
            TrialRow(3, "search", "complete", {}, 5.0, [5.0])]
    assert best_so_far("write-bw", rows) == [(0, 2.0), (2, 2.0), (3, 5.0)]
    assert best_so_far("io-time", rows) == [(0, 2.0), (2, 1.0), (3, 1.0)]
    tail = error_tail("timeout: killed after 600 s\n" + "x" * 200)
    assert tail.startswith("timeout: …") and tail.endswith("x" * 59) and len(tail) == len("timeout: ") + 60


@pytest.mark.slow
def test_pract_study_reports_its_held_out_error(study, pario_cmd, mpi_env):
    """A pract study (the real study's trials copied, each with a prediction stored as pract stores it):
    the report gives the MdAPE of the predictions against the measured medians, computed here."""
    url, cwd, trials = study
    real = optuna.load_study(study_name=STUDY, storage=url)
    copy = optuna.create_study(study_name="pract-copy", storage=url, direction=real.direction)
    copy.set_user_attr("pario", {**real.user_attrs["pario"], "strategy": "pract"})
    copy.set_user_attr("pario_space", real.user_attrs["pario_space"])
    errors = []
    for k, t in enumerate(trials):
        attrs = dict(t.user_attrs)
        if t.state == TrialState.COMPLETE and t.user_attrs["role"] == "search":
            attrs["predicted"] = t.value * (1.0 + 0.1 * k)
            errors.append(0.1 * k)
        copy.add_trial(optuna.trial.create_trial(params=t.params, distributions=t.distributions,
                                                 value=t.value, state=t.state, user_attrs=attrs))
    assert errors
    proc = _pario(pario_cmd, mpi_env, cwd, "tune", "report", "pract-copy", "--storage", url)
    assert proc.returncode == 0, proc.stderr
    mdape = statistics.median(errors)
    assert (f"Prediction error on held-out trials: MdAPE {100 * mdape:.1f}% over {len(errors)} trial(s)"
            in " ".join(proc.stdout.split()))
    data = _json(url, "pract-copy")
    assert data["mdape"] == pytest.approx(mdape) and data["strategy"] == "pract"


@pytest.mark.slow
def test_html_in_a_browser_draws_both_plots(study, pario_cmd, mpi_env, browser):
    """The tune report in headless chromium: no console error, the convergence plot and the importances
    drawn, every trial in the table."""
    from browser import load

    url, cwd, trials = study
    page_file = cwd / "browser.html"
    proc = _pario(pario_cmd, mpi_env, cwd, "tune", "report", STUDY, "--storage", url, "--html",
                  str(page_file))
    assert proc.returncode == 0, proc.stderr
    page = load(browser, page_file)
    assert page.errors == []
    assert page.figures == len(_plots(page_file.read_text())) == page.drawn >= 2
    rows = browser.execute_script("return document.querySelectorAll('table tbody tr').length")
    assert rows >= len(trials)
