"""The HTML report in a real headless browser (Debian's chromium under Selenium): it loads without a
console error, every Plotly figure draws, and names from the log stay text even when they are HTML
meant to run; a traced run's timeline has its rank rows, zooms, and keeps file names as text in
its hover labels; several runs get their POP tables side by side."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from browser import load
from darshan_logs import LOGS
from pario.diagnosis import analyze
from pario.log import read_log
from pario.report import format as fmt
from pario.report.html import render_html
from test_report import synthetic
from test_timeline import EXPECTED, HOSTILE, two_ranks

pytestmark = pytest.mark.slow

# names that would run script if the page put them in as HTML
HOSTILE_FILE = '<img src=x onerror="window.pwned=1">.dat'
HOSTILE_EXE = "/bin/<script>window.pwned=2</script>app"


@pytest.mark.parametrize("log", ["skew-app", "imbalanced-io"])
def test_report_of_a_darshan_log_loads_and_draws(log: str, tmp_path: Path, browser, pario_cmd):
    path = next(LOGS.glob(f"{log}*.darshan"))
    page_file = tmp_path / "report.html"
    done = subprocess.run([*pario_cmd, "report", str(path), "--html", str(page_file), "-q"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # the per-file charts name their files on the axis and in the hover, not on every bar segment
    texts = ("Array.from(document.querySelectorAll('.js-plotly-plot'))"
             ".filter(f => / per file/.test(f._fullLayout.title.text))"
             ".map(f => f.querySelectorAll('.bartext').length)")
    page = load(browser, page_file, texts)
    assert page.errors == []
    assert page.figures >= 2 and page.drawn == page.figures
    assert "POP metrics" in page.text
    assert page.probe == [0, 0]


def test_byte_axes_in_binary_units_and_file_labels_whole(tmp_path: Path, browser):
    """treddy_mpi-io-test (2 GiB written to one file): the bytes chart's axis is in GiB, as the
    tables are (Plotly's own format wrote "2B", billions), and every file label is drawn whole,
    its number included, inside the figure (a fixed margin cut the start of long labels)."""
    from pario.report.html import file_figures

    treddy = LOGS / "treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
    run = analyze(read_log(str(treddy)))
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html([run]))
    probe = ("Array.from(document.querySelectorAll('.js-plotly-plot'))"
             ".filter(f => /per file/.test(f._fullLayout.title.text))"
             ".map(f => [f._fullLayout.title.text, f._fullLayout.xaxis.title.text,"
             " Array.from(f.querySelectorAll('.xtick text')).map(t => t.textContent),"
             " Array.from(f.querySelectorAll('.ytick text')).map(t => t.textContent),"
             " Math.min(...Array.from(f.querySelectorAll('.ytick text'))"
             "   .map(t => t.getBoundingClientRect().left - f.getBoundingClientRect().left))])")
    page = load(browser, page_file, probe)
    assert page.errors == [] and page.drawn == page.figures
    charts = {title: rest for title, *rest in page.probe}
    axis, xticks, _, _ = charts["Bytes per file"]
    assert axis == "bytes (GiB)" and xticks and not any(t.endswith("B") for t in xticks)
    assert max(float(t) for t in xticks) <= 4  # 2 GiB read and 2 written, in GiB
    labels = sorted(file_figures(run, 10)[0]["data"][0]["y"])
    assert labels[0].startswith("1. ") and len(charts) == 2
    for _, _, yticks, left in charts.values():
        assert sorted(yticks) == labels and left >= 0


def test_hostile_names_stay_text(tmp_path: Path, browser):
    profile = synthetic(name=HOSTILE_FILE, exe=HOSTILE_EXE)
    page_file = tmp_path / "hostile.html"
    page_file.write_text(render_html([analyze(profile)]))
    page = load(browser, page_file, probe="window.pwned === undefined ? 'safe' : window.pwned")
    assert page.probe == "safe"
    assert page.errors == []  # an <img src=x> made an element would log a failed load
    assert HOSTILE_FILE in page.text  # shown as the characters it is
    assert page.figures >= 1 and page.drawn == page.figures


# --- the timeline of a traced run (pario.report.timeline) ----------------------------------------

TIMELINE = "document.getElementById('run0-timeline')"


def timeline_page(tmp_path: Path, browser):
    """The report of a synthetic profile with the hand-built two-rank trace of test_timeline, whose
    write (rank 0, 1 s to 2 s) is to a file named with HTML meant to run."""
    page_file = tmp_path / "timeline.html"
    page_file.write_text(render_html([analyze(synthetic())], traces=[two_ranks()]))
    return load(browser, page_file, probe="window.pwned === undefined ? 'safe' : window.pwned")


def write_bar(browser) -> dict:
    """Where the write's bar is drawn, and where the x axis puts 1 s and 2 s (pixels of the plot area)."""
    return browser.execute_script(
        f"var g = {TIMELINE}; var i = g.data.findIndex(t => t.meta === 'write');"
        "var box = g.querySelectorAll('.barlayer .trace')[i].querySelectorAll('.point path')[0].getBBox();"
        "var ax = g._fullLayout.xaxis;"
        "return {x: box.x, width: box.width, at1: ax.d2p(1.0), at2: ax.d2p(2.0), range: ax.range};")


def drag_in_time(browser, t0: float, t1: float) -> None:
    """A mouse drag across the timeline's plot area from time t0 to time t1 (Plotly's zoom box)."""
    from selenium.webdriver.common.action_chains import ActionChains

    browser.execute_script(f"{TIMELINE}.scrollIntoView()")
    area = browser.execute_script(f"return {TIMELINE}.querySelector('.nsewdrag')")
    width, a, b = browser.execute_script(
        f"var g = {TIMELINE}; var ax = g._fullLayout.xaxis;"
        f"return [arguments[0].getBoundingClientRect().width, ax.d2p({t0}), ax.d2p({t1})];", area)
    step = int((b - a) / 2)
    (ActionChains(browser).move_to_element_with_offset(area, int(a - width / 2), 0).click_and_hold()
     .move_by_offset(step, 0).move_by_offset(int(b - a) - step, 0).release().perform())


def test_timeline_draws_one_row_per_rank_and_zooms(tmp_path: Path, browser):
    page = timeline_page(tmp_path, browser)
    assert page.errors == []
    assert page.figures >= 2 and page.drawn == page.figures
    assert "Timeline" in page.text
    rows = browser.execute_script(f"return Array.from({TIMELINE}.querySelectorAll('.ytick text'))"
                                  ".map(t => t.textContent)")
    assert rows == ["rank 0", "rank 1"]
    bars = browser.execute_script(f"return {TIMELINE}.querySelectorAll('.barlayer .point path').length")
    assert bars == len(EXPECTED)
    before = write_bar(browser)
    assert before["range"] == [0, 9.5]
    assert before["x"] == pytest.approx(before["at1"], abs=1) and before["width"] == pytest.approx(
        before["at2"] - before["at1"], abs=1)
    # zoom by dragging the mouse over 0.5 s .. 2.5 s: the axis changes and the write's bar follows
    drag_in_time(browser, 0.5, 2.5)
    after = write_bar(browser)
    assert after["range"] == pytest.approx([0.5, 2.5], abs=0.03)  # a few pixels
    span = after["range"][1] - after["range"][0]
    assert after["width"] == pytest.approx(before["width"] * 9.5 / span, rel=0.02)
    assert after["x"] == pytest.approx(after["at1"], abs=1)
    assert after["width"] == pytest.approx(after["at2"] - after["at1"], abs=1)
    # and as a script would (Plotly.relayout): exactly the range asked
    browser.execute_async_script(f"var done = arguments[0]; Plotly.relayout({TIMELINE}, "
                                 "{'xaxis.range': [2.75, 3.75]}).then(() => done());")
    last = write_bar(browser)
    assert last["range"] == [2.75, 3.75] and last["at1"] < last["at2"] < 0  # the write is left of the view
    errors = [e["message"] for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == []


def test_timeline_hover_keeps_a_hostile_file_name_as_text(tmp_path: Path, browser):
    page = timeline_page(tmp_path, browser)
    assert page.probe == "safe" and page.errors == []
    hover = browser.execute_script(
        f"var g = {TIMELINE}; var i = g.data.findIndex(t => t.meta === 'write');"
        "Plotly.Fx.hover(g, [{curveNumber: i, pointNumber: 0}]);"
        "return {text: g.querySelector('.hoverlayer').textContent,"
        " images: document.querySelectorAll('img').length,"
        " pwned: window.pwned === undefined ? 'safe' : window.pwned};")
    assert "MPI-IO write" in hover["text"] and "4.0 KiB" in hover["text"]
    assert HOSTILE in hover["text"]  # the characters themselves, not an element
    assert hover["images"] == 0 and hover["pwned"] == "safe"


# --- several runs: the POP tables side by side ---------------------------------------------------

def test_two_runs_have_their_pop_tables_side_by_side(tmp_path: Path, browser, compile_program,
                                                     run_under_pario, pario_cmd):
    """One program run twice (Open MPI's two MPI-IO components): one column per run, named by its log,
    holding that run's own POP metrics."""
    exe = compile_program("io_known.c")
    logs = []
    for io in ("ompio", "romio321"):
        out = tmp_path / io
        out.mkdir()
        log = tmp_path / f"{io}.pario"
        command = ["mpirun", "-np", "3", "--mca", "io", io, str(exe), str(out), "4", "4096"]
        done = run_under_pario(log, command)
        assert done.returncode == 0, done.stderr
        logs.append(log)
    page_file = tmp_path / "two.html"
    done = subprocess.run([*pario_cmd, "report", *map(str, logs), "--html", str(page_file), "-q"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    page = load(browser, page_file)
    assert page.errors == [] and page.drawn == page.figures
    table = browser.execute_script("return Array.from(document.querySelectorAll('#compare tr'))"
                                   ".map(r => Array.from(r.cells).map(c => c.innerText.trim()))")
    assert table[0] == ["metric", "ompio.pario", "romio321.pario"]
    runs = [analyze(read_log(log)) for log in logs]
    by_label = {row[0]: row[1:] for row in table[1:]}
    assert by_label["Processes"] == ["3", "3"]
    rows = runs[0].pop.rows()
    assert rows and [r[1] for r in rows] == [r[1] for r in runs[1].pop.rows()]
    for i, (_, label, _, _) in enumerate(rows):
        want = [fmt.value(run.pop.rows()[i][2], as_percent=True) for run in runs]
        assert by_label[label] == want, label
    # the runs differ, and each column shows its own run's numbers
    pe = [run.pop.parallel_efficiency.value for run in runs]
    assert all(v is not None for v in pe)
    assert by_label["Parallel efficiency"] == [fmt.value(run.pop.parallel_efficiency, as_percent=True)
                                               for run in runs]


def test_a_traced_run_has_one_timeline_row_per_rank(tmp_path: Path, browser, compile_program, run_under_pario,
                                                    pario_cmd):
    """pario run --trace of a 3-rank program, pario report --html: the browser sees 3 rank rows, its
    collective writes among the bars, and the file's name in their hover labels."""
    exe = compile_program("io_known.c")
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "traced.pario"
    done = run_under_pario(log, ["mpirun", "-np", "3", str(exe), str(out), "4", "4096"], extra=["--trace"])
    assert done.returncode == 0, done.stderr
    page_file = tmp_path / "traced.html"
    done = subprocess.run([*pario_cmd, "report", str(log), "--html", str(page_file), "-q"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    page = load(browser, page_file)
    assert page.errors == [] and page.drawn == page.figures
    rows = browser.execute_script(f"return Array.from({TIMELINE}.querySelectorAll('.ytick text'))"
                                  ".map(t => t.textContent)")
    assert rows == ["rank 0", "rank 1", "rank 2"]
    writes = browser.execute_script(
        f"var g = {TIMELINE}; var t = g.data.find(t => t.meta === 'write'); return t ? t.hovertext : []")
    shared = [w for w in writes if "MPI-IO write" in w and "shared.dat" in w]
    assert len(shared) == 3 * 4  # every rank's 4 write_at_all calls
