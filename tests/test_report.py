"""`pario report`: terminal, HTML, JSON and CSV on every real Darshan log and on synthetic models."""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from darshan_logs import ALL_LOGS
from pario import cli
from pario.diagnosis import analyze
from pario.log import read_log
from pario.model import Job, Profile, add_derived_rank_columns
from pario.report import build
from pario.report.html import render_html, safe_json
from pario.report.json_out import to_json
from pario.report.terminal import render_to_string

XSS = "<script>alert(1)</script>.dat"
def log(name: str) -> Path:
    return next(p for p in ALL_LOGS if p.name.startswith(name))


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hints files suggested for read-only logs are written to the current directory."""
    monkeypatch.chdir(tmp_path)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["report", *args])
    out, err = capsys.readouterr()
    return code, out, err


def synthetic(name: str = XSS, exe: str = "/bin/<b>app</b>", other: str = "/data/ok.dat") -> Profile:
    ranks = pd.DataFrame({"wall": [10.0, 10.0], "posix_write": [7.0, 5.0], "posix_meta": [0.5, 0.5],
                          "mpi_coll": [1.0, 2.0], "mpi_coll_bytes": [10.0, 10.0], "maxrss": [1e7, 2e7]})
    ranks.index.name = "rank"
    posix = pd.DataFrame({"id": [1, 2], "rank": [0, 1], "name": [name, other],
                          "write_time": [7.0, 5.0], "meta_time": [0.5, 0.5],
                          "bytes_written": [6 << 20, 1 << 20], "writes": [6, 1], "opens": [1, 1],
                          "size_write_1m_4m": [6, 1]})
    job = Job(source="pario", path="/runs/<i>x</i>.pario", exe=exe, nprocs=2, start_time=0.0, end_time=10.0,
              runtime=10.0, argv=(exe, "--name", "<img src=x onerror=alert(2)>"), hostname="<h1>node</h1>")
    return Profile(job=job, ranks=add_derived_rank_columns(ranks), files={"posix": posix},
                   hints={1: {"cb_nodes": "<script>x</script>"}})


# ---------------------------------------------------------------------------
# terminal
# ---------------------------------------------------------------------------

def test_runs_at_one_rank_count_are_compared_not_scaled() -> None:
    """Two runs of one program on 2 ranks, the second 4 s instead of 10 s: a before/after
    comparison with the ratio of each metric, not "Scaling: strong" with a speedup of 2.5."""
    import dataclasses

    before = synthetic()
    after = dataclasses.replace(before, job=dataclasses.replace(before.job, runtime=4.0, end_time=4.0))
    runs, scaling = build([before, after])
    assert scaling is None
    text = render_to_string(runs, scaling, width=120)
    assert "Scaling" not in text
    assert "The runs have the same rank count (2): they are compared side by side" in text
    rows = {line.split("  ")[0]: line.split() for line in text.splitlines()
            if line.startswith(("run time", "bytes"))}
    assert rows["run time"][-5:] == ["10", "s", "4", "s", "0.40x"], rows
    assert rows["bytes"][-1] == "1.00x"
    forced = build([before, after], scaling="strong")[1]
    assert forced is not None and forced.mode == "strong"


def test_scaling_charts_keep_runs_of_one_rank_count_apart() -> None:
    """Runs of the same rank count (scaling forced) are one bar each in the I/O chart, named by
    rank count and log, and the ranks axis is ticked at the runs' rank counts only."""
    import dataclasses

    from pario.report.html import scaling_figures

    a = synthetic()
    b = dataclasses.replace(a, job=dataclasses.replace(a.job, path="/runs/y.pario", runtime=4.0,
                                                       end_time=4.0))
    scaling = build([a, b], scaling="strong")[1]
    assert scaling is not None
    speed, eff, io = scaling_figures(scaling)
    assert speed["layout"]["xaxis"]["tickvals"] == eff["layout"]["xaxis"]["tickvals"] == [2]
    names = [f"2 · {r.label}" for r in scaling.rows]
    assert len(set(names)) == 2 and "2 · y.pario" in names
    assert io["data"][0]["x"] == names == io["data"][1]["x"]


@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: p.name[:40])
def test_every_log_gives_a_report(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, str(path))
    assert code == 0, err
    assert "pario report" in out
    if path.name.startswith("empty_log"):
        assert "No I/O recorded" in out
    else:
        assert "Time in I/O" in out and "POP metrics" in out and "Files" in out
        assert "unavailable" in out  # Darshan: MPI time, memory
    assert err == ""


def test_terminal_report_sections_for_a_pario_model() -> None:
    text = render_to_string([analyze(synthetic())])
    for heading in ("Summary", "Time in I/O", "Data and rates", "MPI", "Memory", "POP metrics",
                    "Where the parallel efficiency goes", "Files"):
        assert heading in text
    assert "This run is I/O-bound" in text
    assert XSS in text  # printed as text, not interpreted
    assert "unavailable [" in text  # serialisation / transfer efficiency


def test_rich_markup_in_names_is_not_interpreted() -> None:
    text = render_to_string([analyze(synthetic(name="[bold red]/data/x[/]"))])
    assert "[bold red]/data/x[/]" in text


def test_files_are_named_below_the_directory_they_share() -> None:
    deep = "/lus/scratch/projects/climate/run-2026-11-22/output"
    text = render_to_string([analyze(synthetic(name=f"{deep}/a.dat", other=f"{deep}/b.dat"))])
    files = text[text.index("Top 2 of 2 files"):]
    assert f"in {deep}/" in files
    first_cells = [line.split()[0] for line in files.splitlines() if line.strip()]
    assert [c for c in first_cells if c.endswith(".dat")] == ["a.dat", "b.dat"]


def test_the_mpi_library_s_own_files_are_one_line_not_rows() -> None:
    """treddy_mpi-io-test: 32 ranks, one data file, and 33 files of Open MPI itself (its lock tests
    of NFS and its shared-memory segments): the Files table lists the application's 2 files; one
    line counts the others, the HTML says the same, and the JSON counts them apart."""
    from darshan_logs import LOGS

    treddy = "treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
    run = analyze(read_log(str(LOGS / treddy)))
    text = render_to_string([run], width=120)
    files = text[text.index("Files"):text.index("Diagnosis")]
    rows = files[:files.index("Not listed")]
    assert "Top 2 of 2 files" in rows and ".locktest." not in rows and ".sm" not in rows
    line = "Not listed: 33 files of the MPI library itself (Open MPI's lock tests and shared-memory segments"
    assert line in " ".join(files.split())
    assert line in html.unescape(render_html([run]))
    data = json.loads(to_json([run], None))["runs"][0]["files"]
    assert (data["count"], data["mpi_library_files"]) == (2, 33)
    assert [f["name"] for f in data["top"]] == ["/yellow/users/treddy/mpi_io_rough_work/test.out", "<STDOUT>"]


def test_pop_of_a_log_without_mpi_time_says_why_once() -> None:
    """imbalanced-io.darshan (no APMPI): no dozen rows of "unavailable", one sentence with the
    reasons and the one term it gives, avg(IO)/T; a run with MPI time keeps the whole table."""
    from darshan_logs import LOGS

    run = analyze(read_log(str(LOGS / "imbalanced-io.darshan")))
    text = render_to_string([run], width=120)
    pop = " ".join(text[text.index("POP metrics"):text.index("Files")].split())
    assert pop.startswith("POP metrics POP's efficiencies cannot be computed for this log: Darshan logs "
                          "record no MPI time: computation and MPI cannot be separated; needs a replay")
    assert "unavailable" not in pop and "Parallel efficiency" not in pop
    assert "Lost to I/O: avg(IO)/T 77.8%" in pop
    page = html.unescape(render_html([run]))
    assert ("POP's efficiencies cannot be computed for this log: Darshan logs record no MPI time" in page
            and "Parallel efficiency" not in page)
    whole = render_to_string([analyze(synthetic())], width=120)
    assert "Parallel efficiency" in whole and "Load balance" in whole
    assert "Parallel efficiency" in render_html([analyze(synthetic())])


def test_runs_of_executables_of_one_name_are_told_apart_by_path() -> None:
    """Three mpi-io-test logs from three machines: the warning names them by what differs (their
    paths), not three times "mpi-io-test"."""
    from darshan_logs import LOGS
    from pario.analysis.scaling import mixed_executables, told_apart

    names = ["mpi-io-test-x86_64-3.2.0.darshan", "mpi-io-test-x86_64-3.5.0.darshan",
             "mpi-io-test-apmpi-apxc.darshan"]
    runs = [analyze(read_log(str(LOGS / n))) for n in names]
    assert mixed_executables(runs) == (
        "These logs come from 3 different executables (/global/cscratch1/sd/ssnyder/tmp/mpi-io-test, "
        "/home/wkliao/Darshan/TEST/mpi-io-test, /tmp/test/mpi-io-test).")
    assert told_apart(["/a/x/app", "/a/y/app"]) == ["x/app", "y/app"]
    assert told_apart(["./src/ior", "mpi-io-test"]) == ["ior", "mpi-io-test"]


# ---------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------

def test_html_escapes_every_name_from_the_log() -> None:
    html = render_html([analyze(synthetic())], plotly_js="/* plotly */")
    assert "<script>alert(1)" not in html
    assert "alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.dat" in html
    assert "<b>app</b>" not in html and "&lt;b&gt;app&lt;/b&gt;" in html
    assert "<img src=x" not in html
    assert "<h1>node</h1>" not in html
    assert "<i>x</i>" not in html
    # the only script elements are plotly and the figure calls
    scripts = re.findall(r"<script[^>]*>", html)
    assert all(s == "<script>" for s in scripts)
    for body in re.findall(r"<script>(.*?)</script>", html, re.S)[1:]:
        assert body.startswith("Plotly.newPlot(")


def test_figure_json_cannot_close_the_script_element() -> None:
    text = str(safe_json({"name": "</script><script>alert(1)</script>", "amp": "a&b"}))
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"name": "</script><script>alert(1)</script>", "amp": "a&b"}


def test_html_is_self_contained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.html"
    runs, scaling = build([synthetic()])
    from pario.report.html import write_html

    write_html(runs, scaling, str(path))
    html = path.read_text()
    head, plotly_js, rest = re.split(r"<script>(.*?)</script>", html, maxsplit=1, flags=re.S)
    assert "plotly.js" in plotly_js and len(plotly_js) > 1_000_000  # the library, inline
    page = head + rest
    assert "<script src" not in page and "<link" not in page and "http" not in page
    assert page.count("Plotly.newPlot(") >= 3  # per-rank bars, histograms, files


def test_html_json_csv_from_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html, js, out_dir = tmp_path / "r.html", tmp_path / "r.json", tmp_path / "csv"
    code, out, err = run_cli(capsys, str(log("imbalanced-io")), "--html", str(html), "--json", str(js),
                             "--csv", str(out_dir), "-q")
    assert code == 0, err
    assert out == ""
    assert html.stat().st_size > 1_000_000  # plotly inlined
    data = json.loads(js.read_text())
    run = data["runs"][0]
    assert run["job"]["nprocs"] == 496
    assert run["mpi"]["available"] is False
    assert run["pop"]["parallel_efficiency"]["value"] is None
    assert "no MPI time" in run["pop"]["parallel_efficiency"]["reason"]
    assert run["time_shares"]["bound"] == "I/O"
    assert len(run["ranks"]["rank"]) == 496
    for name in ("metrics.csv", "ranks.csv", "files.csv", "histograms.csv", "scaling.csv"):
        assert (out_dir / name).exists()
    with open(out_dir / "metrics.csv") as fh:
        rows = {r["metric"]: r for r in csv.DictReader(fh)}
    assert float(rows["io.overall.write.bytes"]["value"]) == run["io"]["overall"]["write"]["bytes"]["value"]
    assert rows["pop.parallel_efficiency"]["value"] == ""


@pytest.mark.parametrize("option, what", [("--html", "the HTML report"), ("--json", "the JSON report"),
                                           ("--csv", "the CSV directory")])
def test_outputs_in_a_missing_folder_are_refused_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       option: str, what: str) -> None:
    """One rule for --html, --json and --csv: the folder the output goes into must exist."""
    target = tmp_path / "new" / "tree" / "out"
    code, out, err = run_cli(capsys, str(log("mpi-io-test-x86_64-3.5")), option, str(target), "-q")
    assert code == 2 and out == "" and not (tmp_path / "new").exists()
    verb = "create" if option == "--csv" else "write"
    message = f"pario: error: {target}: cannot {verb} {what}: No such file or directory"
    assert err.strip().splitlines() == [message]


def test_json_totals_match_pydarshan() -> None:
    import darshan

    path = log("treddy")
    runs, _ = build([read_log(path)])
    data = json.loads(to_json(runs, None))
    report = darshan.DarshanReport(str(path), read_all=True)
    mpiio = report.records["MPI-IO"].to_df()["counters"]
    posix = report.records["POSIX"].to_df()["counters"]
    stdio = report.records["STDIO"].to_df()["counters"]
    nested = posix["id"].isin(mpiio["id"])
    expected = (mpiio["MPIIO_BYTES_WRITTEN"].sum() + posix[~nested]["POSIX_BYTES_WRITTEN"].sum()
                + stdio["STDIO_BYTES_WRITTEN"].sum())
    assert data["runs"][0]["io"]["overall"]["write"]["bytes"]["value"] == expected
    layers = {lay["layer"]: lay for lay in data["runs"][0]["io"]["layers"]}
    assert layers["posix"]["write"]["bytes"]["value"] == posix["POSIX_BYTES_WRITTEN"].sum()


def test_json_of_a_synthetic_model() -> None:
    runs, scaling = build([synthetic()])
    text = to_json(runs, scaling)
    data = json.loads(text)
    assert data["schema_version"] == 1
    assert data["runs"][0]["files"]["top"][0]["name"] == XSS
    assert data["runs"][0]["pop"]["parallel_efficiency"]["value"] == pytest.approx(
        analyze(synthetic()).pop.parallel_efficiency.value)


def test_json_dash_prints_only_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, str(log("mpi-io-test-x86_64-3.5.0")), "--json", "-")
    assert code == 0
    assert json.loads(out)["runs"][0]["job"]["nprocs"] == 4


def test_the_console_command_ends_with_every_output_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          pario_cmd: list[str]) -> None:
    """`pario report` ends its process without the interpreter's teardown (pario.cli.console):
    what it printed through a pipe and the files it wrote are the same as main()'s, whole."""
    path = str(log("mpi-io-test-x86_64-3.5.0"))
    out_dir = tmp_path / "csv"
    done = subprocess.run([*pario_cmd, "report", path, "--json", "-", "--csv", str(out_dir)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"pario: CSV tables written into {out_dir}\n"
    code, out, _ = run_cli(capsys, path, "--json", "-", "--csv", str(tmp_path / "csv_main"))
    assert code == 0
    assert json.loads(done.stdout) == json.loads(out)
    for name in ("metrics.csv", "ranks.csv", "files.csv", "histograms.csv", "scaling.csv"):
        assert (out_dir / name).read_bytes() == (tmp_path / "csv_main" / name).read_bytes()
    # a reader that stops early: no traceback, status 0 (as main() says for a closed pipe)
    first = subprocess.run(f"{' '.join(pario_cmd)} report {path} | head -c 10 >/dev/null; "
                           "echo ${PIPESTATUS[0]}", shell=True, executable="/bin/bash",
                           capture_output=True, text=True, check=True)
    assert first.stdout.strip() == "0" and "Traceback" not in first.stderr
    missing = subprocess.run([*pario_cmd, "report", str(tmp_path / "nothing.darshan")],
                             capture_output=True, text=True, check=False)
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and missing.stderr.startswith("pario: error: ")


# ---------------------------------------------------------------------------
# several logs: scaling
# ---------------------------------------------------------------------------

@pytest.mark.slow
def test_several_logs_give_a_scaling_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    logs = [str(log("mpi-io-test-x86_64-3.5.0")), str(log("treddy")), str(log("imbalanced-io"))]
    js = tmp_path / "s.json"
    code, out, err = run_cli(capsys, *logs, "--scaling", "strong", "--json", str(js), "--html",
                             str(tmp_path / "s.html"))
    assert code == 0, err
    assert "Scaling: strong" in out and "Speedup" in out and "I/O per run" in out
    scaling = json.loads(js.read_text())["scaling"]
    assert scaling["mode"] == "strong"
    assert [r["nprocs"] for r in scaling["rows"]] == [4, 32, 496]
    assert scaling["rows"][0]["speedup"]["value"] == pytest.approx(1.0)
    assert scaling["rows"][1]["computation_scalability"]["value"] is None
    assert "different executables" in scaling["warning"]
    html = (tmp_path / "s.html").read_text()
    assert "Speedup (strong scaling)" in html


# ---------------------------------------------------------------------------
# errors: one line, exit code 2
# ---------------------------------------------------------------------------

def one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("pario: error: ")
    assert "Traceback" not in err
    return lines[0]


def test_directory_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, str(tmp_path))
    assert code == 2
    assert "is a directory" in one_error_line(err)


def test_unknown_file_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "x.log"
    bad.write_bytes(b"\x00\x01garbage" * 10)
    code, _, err = run_cli(capsys, str(bad))
    assert code == 2
    assert "not a pario or Darshan log" in one_error_line(err)


def test_truncated_darshan_log_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "cut.darshan"
    bad.write_bytes(log("treddy").read_bytes()[:3000])
    code, _, err = run_cli(capsys, str(bad))
    assert code == 2
    line = one_error_line(err)
    assert "cut.darshan" in line and ("truncated" in line or "corrupt" in line)


def test_corrupt_darshan_log_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bytearray(log("mpi-io-test-x86_64-3.5.0").read_bytes())
    data[1400:1410] = b"\xff" * 10  # inside the compressed job data
    bad = tmp_path / "corrupt.darshan"
    bad.write_bytes(bytes(data))
    code, _, err = run_cli(capsys, str(bad))
    assert code == 2
    assert "corrupt Darshan log" in one_error_line(err)


def test_unwritable_output_is_a_user_error(tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "r.json"
    runs, scaling = build([synthetic()])
    from pario.errors import ParioError
    from pario.report.json_out import write_json

    with pytest.raises(ParioError, match="cannot write"):
        write_json(runs, scaling, str(target))


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's scripts")
def test_html_figure_scripts_run(tmp_path: Path) -> None:
    """Every figure script of the page is valid JavaScript and hands Plotly arrays of traces."""
    html = render_html([analyze(synthetic())], plotly_js="/* plotly */")
    bodies = re.findall(r"<script>(.*?)</script>", html, re.S)[1:]
    assert bodies
    stub = ("var calls = 0; var Plotly = {newPlot: function (id, data, layout) {"
            " if (!Array.isArray(data) || typeof layout !== 'object') throw new Error('bad figure ' + id);"
            " calls++; }};\n")
    script = tmp_path / "figures.js"
    check = f"\nif (calls !== {len(bodies)}) throw new Error('calls');\n"
    script.write_text(stub + "\n".join(bodies) + check)
    proc = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_scaling_from_one_rank_says_rank(capsys: pytest.CaptureFixture[str]) -> None:
    """A reference run of one rank reads '1 rank', not '1 ranks'."""
    from pario.units import nranks

    assert (nranks(1), nranks(4), nranks(65536)) == ("1 rank", "4 ranks", "65,536 ranks")
    code, out, err = run_cli(capsys, str(log("partial_data_stdio")), str(log("mpi-io-test-x86_64-3.5.0")),
                             "--scaling", "strong", "--no-diagnosis")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "reference run: 1 rank." in flat and "1 ranks" not in flat


@pytest.mark.slow
def test_report_says_where_it_wrote_its_files(tmp_path: Path, pario_cmd: list[str]) -> None:
    """--json, --csv and --html each end with a line on stderr naming the file (stdout stays the
    report); JSON on standard output names nothing."""
    log = next(p for p in ALL_LOGS if p.name.startswith("mpi-io-test-x86_64-3.5.0"))
    proc = subprocess.run([*pario_cmd, "report", str(log), "--json", "r.json", "--csv", "tables", "--html",
                           "r.html", "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [f"pario: JSON report written to {tmp_path / 'r.json'}",
                                        f"pario: CSV tables written into {tmp_path / 'tables'}",
                                        f"pario: HTML report written to {tmp_path / 'r.html'}"]
    assert (tmp_path / "r.html").stat().st_size > 0 and (tmp_path / "tables").is_dir()
    to_stdout = subprocess.run([*pario_cmd, "report", str(log), "--json", "-"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=120)
    assert to_stdout.stderr == "" and json.loads(to_stdout.stdout)["runs"]


@pytest.mark.parametrize(("argv", "usage"), [(["report", "x.pario", "--bogus"], "usage: pario report "),
                                              (["diagnose", "--bogus", "x.pario"], "usage: pario diagnose "),
                                              (["--bogus"], "usage: pario [-h]")])
def test_an_unknown_option_gets_its_own_command_s_usage(pario_cmd, argv: list[str], usage: str) -> None:
    """`pario report app.pario --bogus` printed the top-level usage; it is the report's now."""
    proc = subprocess.run([*pario_cmd, *argv], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.startswith(usage), proc.stderr
    assert proc.stderr.strip().splitlines()[-1].endswith("error: unrecognized arguments: --bogus")
