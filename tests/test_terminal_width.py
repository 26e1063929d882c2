"""Every command's text at 80 and 120 columns: no line wider than the terminal, no scientific
notation, and no word broken in the middle (a long path may break only after a '/'), with the
content all there (no cell left blank, the same words as at 1000 columns): the terminal report
and diagnosis on real runs (pario logs made here with mpirun) and the shared Darshan logs; the
survey's status line, `survey report` and `survey sql` on a store of those logs; `kernel --list`
and each kernel's --help; `tune --show-space`, a real study's progress lines and end-of-study
text, and `tune report`; every command's --help."""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from darshan_logs import LOGS
from kernel_helpers import small_independent_writes
from pario.log import read_log
from pario.report import build
from pario.report.findings import findings_renderable
from pario.report.terminal import render
from pario.textfit import wrap_words

DARSHAN = [
    "skew-app.darshan",
    "imbalanced-io.darshan",
    "treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan",
    "shane_ior-HDF5_id438090-438090_11-9-41522-17417065676046418211_1.darshan",
    "shane_ior-PNETCDF_id438100-438100_11-9-41525-10280033558448664385_1.darshan",
    "hdf5_diagonal_write_1_byte_dxt.darshan",  # the I/O libraries table: 8 columns
]
SCIENTIFIC = re.compile(r"\d(\.\d+)?e[+-]?\d+\b")
BOX = "│╭╮╰╯─┃━┏┓┗┛╶╴ ;,:()"
LONG_DIR = "a_directory_name_long_enough_to_break/and_a_second_level_below_it"
WIDTHS = [80, 120]


def _text(renderable: object, width: int) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, no_color=True, highlight=False, force_terminal=False).print(renderable)
    return buf.getvalue()


def _report(paths: list[Path], width: int, scaling: str = "auto") -> str:
    runs, table = build([read_log(str(p)) for p in paths], scaling=scaling)
    buf = io.StringIO()
    render(runs, table, file=buf, width=width, color=False, details=True)
    return buf.getvalue()


def _words(text: str) -> list[str]:
    """The words of the text, a shell line's continuation backslash (alone, or ending a path cut
    after a '/') left out."""
    words = [w.strip(BOX) for line in text.splitlines() for w in line.split() if w.strip(BOX)]
    return [w.removesuffix("\\") for w in words if w != "\\"]


def broken_words(narrow: str, wide: str) -> list[str]:
    """Words of the narrow output that are pieces of a word of the wide one, cut elsewhere than
    after a '/' (or a '-' or '_' of a file name): a mid-word wrap, or a word cut short.  A name
    shortened in the middle ("vpic-h…/Timestep_0/x") is whole: the start and the end of a word."""
    vocabulary = set(_words(wide))
    whole = " ".join(vocabulary)
    bad = []
    for w in set(_words(narrow)) - vocabulary:
        head, ellipsis, tail = w.partition("…")
        if ellipsis and head and tail and any(v.startswith(head) and v.endswith(tail) for v in vocabulary):
            continue
        at = [m.start() for m in re.finditer(re.escape(w), whole)]
        ok = any(
            (i == 0 or whole[i - 1] in " /-_")
            and (w[-1] in "/-_" or i + len(w) == len(whole) or whole[i + len(w)] == " ")
            for i in at
        )
        if not ok:
            bad.append(w)
    return sorted(bad)


def check(narrow: str, wide: str, width: int) -> None:
    lines = narrow.splitlines()
    assert max(len(line) for line in lines) <= width
    assert [line for line in lines if SCIENTIFIC.search(line)] == []
    # "(continued)": a table split in two where it does not fit, and the note of the columns a
    # table leaves out: words of the narrow text only
    narrow = re.sub(r"\(left out at \d+ columns: [^)]*\)", "", narrow.replace(" (continued)", ""))
    assert broken_words(narrow, wide) == []


def fits(text: str, width: int) -> None:
    """No line wider than ``width`` (the lines that are, in the message)."""
    assert text.strip() and [line for line in text.splitlines() if len(line) > width] == []


def one_line(text: str) -> str:
    """The words of the text, one space apart: what it says, however it is wrapped."""
    return " ".join(text.split())


def unwrapped(text: str) -> str:
    """:func:`one_line` of the text, a path broken after a '/' joined again."""
    return one_line(re.sub(r"/ *\n *", "/", text))


def test_checker_fails_on_cut_words_and_long_lines() -> None:
    wide = "a 4 KiB /tmp/x/dir/block_output_file.dat direction"
    assert broken_words("a 4 KiB /tmp/x/dir/block_out\nput_file.dat directio\nn", wide) == [
        "/tmp/x/dir/block_out",
        "directio",
        "n",
        "put_file.dat",
    ]
    assert broken_words("a 4 KiB /tmp/x/\ndir/block_output_file.dat direction", wide) == []
    assert broken_words("a 4 KiB /tmp/x/…_file.dat", wide) == []  # shortened in the middle
    assert broken_words("a 4 KiB /tmp/y/…_file.dat", wide) == ["/tmp/y/…_file.dat"]
    assert SCIENTIFIC.search("1.02e+03 KiB") and SCIENTIFIC.search("1.37e+04 h")


def test_wrap_words_breaks_only_at_spaces_and_after_slashes() -> None:
    text = "pario run --hints /tmp/x/h.hints -- mpirun -np 4 /very/long/path/to/an/executable_file --opt 1"
    lines = wrap_words(text, 30, 2)
    assert lines == [
        "pario run --hints",
        "  /tmp/x/h.hints -- mpirun -np",
        "  4 /very/long/path/to/an/",
        "  executable_file --opt 1",
    ]
    assert wrap_words("4    run time", 80) == ["4    run time"]


@pytest.fixture(scope="module")
def pario_logs(tmp_path_factory, pario_cmd, mpi_env) -> list[Path]:
    """The block kernel (4 KiB independent writes, so the diagnosis suggests hints) at 2 and
    4 ranks under ROMIO, writing below a long directory name, and the demo program."""
    from pario import paths

    root = tmp_path_factory.mktemp("width")
    out = root / LONG_DIR
    out.mkdir(parents=True)

    def run(log: Path, *mpirun_args: str) -> Path:
        command = ["mpirun", "--oversubscribe", *mpirun_args]
        proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", *command], env=mpi_env,
                              capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr
        return log

    blocks = [run(root / f"block{n}.pario", "-np", str(n), "--mca", "io", "romio321",
                  *small_independent_writes(out / "block_output_file.dat")) for n in (2, 4)]
    return [*blocks, run(root / "demo.pario", "-np", "4", str(paths.program("pario-demo-io")), str(out))]


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.slow
def test_pario_logs_fit(pario_logs: list[Path], width: int) -> None:
    for log in pario_logs:
        check(_report([log], width), _report([log], 1000), width)
    check(_report(pario_logs[:2], width), _report(pario_logs[:2], 1000), width)
    narrow = _report(pario_logs[:2], width)
    assert f"{LONG_DIR}/" in narrow.replace("\n", "")  # the directory shown, unbroken


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("name", DARSHAN)
@pytest.mark.slow
def test_darshan_logs_fit(name: str, width: int) -> None:
    path = LOGS / name
    check(_report([path], width), _report([path], 1000), width)
    findings = build([read_log(str(path))])[0][0].findings
    check(
        _text(findings_renderable(findings, title="x"), width),
        _text(findings_renderable(findings, title="x"), 1000),
        width,
    )


def test_a_table_too_wide_leaves_out_columns_and_says_so() -> None:
    """A table whose values cannot all fit drops its last columns whole (never cuts "23.9 ms" to
    "23.9 m", which reads as minutes) and names them; at a width where they fit, nothing is left out."""
    from pario.textfit import FittingTable

    table = FittingTable(box=None, pad_edge=False)
    for name in ("file", "time", "beneath", "overhead"):
        table.add_column(name, no_wrap=name != "file")
    table.add_row("test_0.h5", "26.4 ms", "2.42 ms", "23.9 ms")
    narrow = _text(table, 30)
    rows = narrow.split("(left out")[0]
    assert "23.9" not in rows and "overhea" not in rows
    assert one_line(narrow).endswith("(left out at 30 columns: overhead; a wider terminal shows it)")
    assert "2.42 ms" in narrow
    assert "left out" not in _text(table, 40) and "23.9 ms" in _text(table, 40)


def test_skew_app_numbers_are_plain() -> None:
    path = LOGS / "skew-app.darshan"
    text = _report([path], 120)
    assert "1.02e+03 KiB" not in text and "1.37e+04 h" not in text
    assert "571 d" in text  # 13,700 h of I/O time summed over the ranks of the busiest file


def test_runs_with_long_names_are_labelled_not_cut() -> None:
    pair = [LOGS / DARSHAN[3], LOGS / DARSHAN[4]]
    text = _report(pair, 80, scaling="strong")
    assert "run 1      4   12.2 ms" in text and "run 2      4     13 ms" in text
    # the legend gives each full path, wrapped only after a '/' (wherever the checkout lies)
    unwrapped = re.sub(r"/\n +", "/", text)
    assert f"run 1: {pair[0]}" in unwrapped and f"run 2: {pair[1]}" in unwrapped
    assert "…" not in text.split("Diagnosis across the runs")[0]


@pytest.mark.parametrize("slower", [1.0, 7.0, 70.0, 700.0])
def test_scaling_tables_fit_whatever_the_numbers(pario_logs: list[Path], slower: float) -> None:
    """The tables keep every number whole at 80 columns when the times (and so the rates) take
    more digits: the second run's time classes made `slower` times longer (alone and beside the
    first run)."""
    import dataclasses

    from pario.model import LAYERS, MPI_TIME_COLUMNS, add_derived_rank_columns

    first, second = (read_log(str(p)) for p in pario_logs[:2])
    ranks = second.ranks.copy()
    timed = ["wall", *MPI_TIME_COLUMNS, *(f"{lay}_{k}" for lay in LAYERS for k in ("read", "write", "meta"))]
    for c in (c for c in timed if c in ranks):  # a pario log has no DFS and DAOS columns
        ranks[c] = ranks[c] * slower
    second = dataclasses.replace(second, ranks=add_derived_rank_columns(ranks),
                                 job=dataclasses.replace(second.job, runtime=second.job.runtime * slower))
    for profiles in ([first, second], [second]):
        texts = {}
        for width in (80, 1000):
            runs, table = build(profiles)
            buf = io.StringIO()
            render(runs, table, file=buf, width=width, color=False, details=True)
            texts[width] = buf.getvalue()
        check(texts[80], texts[1000], 80)
        assert "…" not in texts[80].split("Diagnosis across the runs")[0]


HELP = ["run", "env", "dump", "report", "diagnose", "replay", "tune", "tune report", "kernel", "path",
        "survey", "survey report", "survey sql", "survey compact", "export"]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", HELP)
def test_help_fits(command: str, width: int) -> None:
    """Every command's and subcommand's --help (examples included)."""
    out = subprocess.run([sys.executable, "-m", "pario", *command.split(), "--help"], capture_output=True,
                         text=True, timeout=60, env={"COLUMNS": str(width), "PATH": "/usr/bin:/bin"}).stdout
    fits(out, width)
    assert "usage: pario" in out


@pytest.fixture(scope="module")
def vpic_log(tmp_path_factory, pario_cmd, mpi_env) -> Path:
    """vpic --hdf5 --verify: POSIX, MPI-IO and HDF5 requests both ways (six request-size columns),
    and datasets with long names (the file's)."""
    from pario import paths

    root = tmp_path_factory.mktemp("vpic")
    log = root / "vpic.pario"
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", "2",
                           str(paths.program("pario-kernel-vpic")), "--hdf5", "--particles", "4k", "--verify",
                           "--path", str(root / "vpic-hdf5-with-a-long-name.data"), "--delete"],
                          env=mpi_env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return log


@pytest.mark.slow
def test_datasets_table_keeps_every_column_at_80(vpic_log: Path) -> None:
    """vpic --hdf5's datasets have long names: each stays whole on its row (the file they are in
    said once below the table), and the numbers (writes included) fit."""
    narrow = _report([vpic_log], 80)
    check(narrow, _report([vpic_log], 1000), 80)
    lines = narrow.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("dataset / variable")]
    assert lines[at].split()[-2:] == ["reads", "writes"], lines[at]
    names = ["x", "y", "z", "id1", "id2", "px", "py", "pz"]
    rows = lines[at + 2:at + 2 + len(names)]
    # one line a dataset: its whole name, its library, then the numbers, both ways
    assert sorted(r.split()[0] for r in rows) == sorted(f"/Timestep_0/{n}" for n in names), rows
    row = r"/Timestep_0/\w+ +HDF5 +2 +\S+ \S+ +32 KiB +32 KiB +2 +2 *"
    assert all(re.fullmatch(row, r) for r in rows), rows
    # the directory they are in, on the next line when the path is long (as under pytest-xdist)
    below = " ".join(lines[at + 2 + len(names):at + 4 + len(names)]).split()
    assert below[:2] == ["in", str(vpic_log.parent / "vpic-hdf5-with-a-long-name.data")], below


def test_dataset_names_in_several_files_are_shortened_not_broken() -> None:
    from rich import box
    from rich.table import Table

    from pario.report.terminal import _dataset_names
    from pario.textfit import Shortened, shorten_middle

    names = ["/d/one-file-with-a-long-name.h5:/group/dataset_a", "/d/two.h5:/group/dataset_b"]
    shown, where = _dataset_names(names, ["/d/one-file-with-a-long-name.h5", "/d/two.h5"])
    assert shown == ["one-file-with-a-long-name.h5:/group/dataset_a", "two.h5:/group/dataset_b"]
    assert where == "/d/"
    assert shorten_middle(shown[0], 20) == "one-fi…oup/dataset_a"
    assert shorten_middle(shown[1], 23) == shown[1]
    t = Table("dataset", "bytes", box=box.SIMPLE_HEAD)
    t.columns[1].no_wrap = True
    for n in shown:
        t.add_row(Shortened(n), "1,234,567,890 B")
    text = _text(t, 46)
    fits(text, 46)
    assert broken_words(text, _text(t, 1000)) == []
    assert "two.h5:/group/dataset_b" in text  # what fits stays whole
    (short,) = [w for w in text.split() if "…" in w]
    assert short.startswith("one-") and short.endswith("dataset_a")


@pytest.mark.parametrize("width", WIDTHS)
def test_request_sizes_continue_only_when_they_do_not_fit(vpic_log: Path, width: int) -> None:
    heads = ["POSIX read", "POSIX write", "MPI-IO read", "MPI-IO write", "HDF5 datasets read",
             "HDF5 datasets write"]
    for w in (width, 200):
        text = _report([vpic_log], w)
        part = text[text.index("Requests by size"):text.index("\nMPI\n")]
        fits(part, w)
        header_lines = [line for line in part.splitlines() if line.startswith("size ")]
        assert sorted(h for line in header_lines for h in re.split(r"  +", line)[1:]) == sorted(heads)
        # one table where the six columns fit (they take 101 columns), else as few as fit
        assert part.count("(continued)") == (0 if w >= 101 else 1), part


# -- pario survey ---------------------------------------------------------------------------------
def _cli(pario_cmd: list[str], args: list[str], width: int, env: dict[str, str] | None = None,
         cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``pario ARGS`` with COLUMNS=width, its output going to no terminal."""
    proc = subprocess.run([*pario_cmd, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**(env or os.environ), "COLUMNS": str(width)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.fixture(scope="module")
def survey_runs(tmp_path_factory, pario_cmd) -> tuple[Path, dict[int, tuple[Path, str]]]:
    """The shared Darshan logs and a corrupt one below a long directory name, surveyed (one
    Dask worker) at each width into a store of its own: the stores and the status lines."""
    root = tmp_path_factory.mktemp("survey")
    archive = root / LONG_DIR
    archive.mkdir(parents=True)
    for log in sorted(LOGS.glob("*.darshan")):
        shutil.copy(log, archive / log.name)
    (archive / "corrupt.darshan").write_bytes(bytes(range(256)) * 40)
    runs = {}
    for width in WIDTHS:
        store = root / f"store-{width}"
        proc = _cli(pario_cmd, ["survey", str(archive), "--store", str(store), "--workers", "1"], width)
        runs[width] = (store, proc.stdout)
    return archive, runs


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.slow
def test_survey_status_line_fits(survey_runs, width: int) -> None:
    from pario.survey.store import query

    archive, runs = survey_runs
    store, text = runs[width]
    fits(text, width)
    n = len(list(archive.iterdir()))
    bad = query(str(store), "SELECT count(*) FROM errors")[1][0][0]
    said = unwrapped(text)
    assert said.startswith(f"pario survey: {n} logs found, 0 already in the store, {n} read "
                           f"({bad} unreadable) on 1 Dask worker in "), said
    # a short run: the count and the time, no rate ("0 logs/s")
    assert re.search(rf" Dask worker in [\d.]+ m?s; store {re.escape(str(store))}$", said), said
    assert "logs/s" not in said and "log/s" not in said
    assert all(line.startswith("    ") for line in text.splitlines()[1:])  # one statement, continued


def test_survey_rate_only_for_long_runs() -> None:
    from pario.survey.run import SurveyResult

    short = SurveyResult(found=14, read=14, errors=1, seconds=2.34, workers=1)
    assert short.text() == ("14 logs found, 0 already in the store, 14 read (1 unreadable) on 1 Dask worker "
                            "in 2.34 s")
    long = SurveyResult(found=2000, unchanged=1000, read=1000, seconds=120.0, workers=2)
    assert long.text().endswith("1,000 read (0 unreadable) on 2 Dask workers in 2 min, 8.33 logs/s")
    assert SurveyResult(found=90, read=90, seconds=90.0, workers=2).text().endswith("in 90 s, 1 log/s")
    assert SurveyResult(found=9, read=9, seconds=900.0, workers=2).text().endswith("in 15 min, 0.01 logs/s")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.slow
def test_survey_report_fits(survey_runs, pario_cmd, width: int) -> None:
    """Every table of the facility report at the width: each row's cells there, none blank (the
    name first on the row's line, its numbers after it in order; a folded column's cells under
    it), the same words as at 1000 columns."""
    from pario.survey.facility import facility_report
    from pario.survey.render import _num, _pct, _rate
    from pario.units import nbytes

    store = survey_runs[1][80][0]
    narrow = _cli(pario_cmd, ["survey", "report", str(store)], width).stdout
    wide = _cli(pario_cmd, ["survey", "report", str(store)], 1000).stdout
    check(narrow, wide, width)
    lines = narrow.splitlines()
    said = unwrapped(narrow)

    def row(*cells: str) -> None:
        pattern = " +".join(re.escape(c) for c in cells)
        assert any(re.match(pattern + r"( |$)", line) for line in lines), (cells, narrow)

    r = facility_report(str(store))
    assert r.summary["jobs"] == 14 and len(r.errors) == 1
    for a in r.applications:
        row(a["exe_name"], f"{a['jobs']:,}", f"{a['users']:,}", _num(a["core_hours"]),
            _num(a["io_core_hours"]), _pct(a["io_share"]))
        assert all(re.search(rf"\b{f}\b", said) for f in a["top_findings"].split(", "))
    row("mpi-io-test", "5", "4")  # five jobs of four users among the shared logs
    for f in r.findings_by_time + r.findings_by_jobs:
        row(f["id"], f["severity"], f"{f['jobs']:,}", _num(f["core_hours_lost"]), _num(f["time_lost_s"]))
    for x in r.filesystems:
        row(x["fs"], x["month"], f"{x['jobs']:,}", nbytes(x["bytes"]), _rate(x["bw_p10"]), _rate(x["bw_p50"]),
            _rate(x["bw_p90"]))
    for x in r.small_files:
        row(x["exe_name"], f"{x['jobs']:,}", f"{x['files']:,}", f"{x['max_files']:,}",
            f"{x['small_requests']:,}", _pct(x["small_share"]))
    for x in r.metadata:
        row(x["exe_name"], f"{x['jobs']:,}", f"{x['meta_ops']:,}", _num(x["meta_core_hours"]),
            _pct(x["meta_share_of_io"]))
        # the same number format as every other table: one decimal, or two digits when smaller
        hours = _num(x["meta_core_hours"])
        assert (len(hours.partition(".")[2]) == 1 if x["meta_core_hours"] >= 0.05
                else float(hours) == float(f"{x['meta_core_hours']:.2g}") and "e" not in hours)
    # the unreadable log: its path in the first column, broken only after a '/', why beside it
    (error,) = r.errors
    assert error["path"] == str(survey_runs[0] / "corrupt.darshan")
    at = lines.index(next(line for line in lines if line.split() == ["log", "reason"]))
    col = lines[at].index("reason")
    body = lines[at + 2:]
    assert unwrapped("\n".join(line[:col] for line in body)) == error["path"]
    assert unwrapped("\n".join(line[col:] for line in body)) == one_line(error["error"])


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.slow
def test_survey_sql_fits(survey_runs, pario_cmd, width: int) -> None:
    """A table whose paths wrap after a '/' (at 120 columns) or go under each row (at 80: a file
    name of 72 characters does not fit beside the others), and one too wide for any table
    (every column of the jobs view), one record per block: every value there, by its column's
    name."""
    from pario.survey.render import plain
    from pario.survey.store import query

    store = str(survey_runs[1][80][0])
    q = "SELECT exe_name, nprocs, path FROM jobs ORDER BY path"
    narrow = _cli(pario_cmd, ["survey", "sql", store, q], width).stdout
    check(narrow, _cli(pario_cmd, ["survey", "sql", store, q], 1000).stdout, width)
    lines = narrow.splitlines()
    assert lines[0].split() == ["exe_name", "nprocs", "path"][:2 if width < 103 else 3]
    assert lines[-1] == "14 rows"
    for exe, nprocs, path in query(store, q)[1]:
        assert any(re.match(rf"{re.escape(exe)} +{nprocs}( +/|$)", line) for line in lines), (exe, narrow)
        assert path in unwrapped(narrow)

    none = _cli(pario_cmd, ["survey", "sql", store, "SELECT exe_name, nprocs FROM jobs WHERE false"], width)
    assert none.stdout.splitlines()[0].split() == ["exe_name", "nprocs"]
    assert none.stdout.endswith("\n0 rows\n")

    q = "SELECT * FROM jobs ORDER BY path LIMIT 2"
    narrow = _cli(pario_cmd, ["survey", "sql", store, q], width).stdout
    wide = _cli(pario_cmd, ["survey", "sql", store, q], 100_000).stdout  # one line a row: every value whole
    fits(narrow, width)
    assert broken_words(narrow, wide) == []
    said = unwrapped(narrow)
    columns, rows = query(store, q)
    assert len(columns) > 40
    for values in rows:
        for c, v in zip(columns, values, strict=True):
            assert f"{c}: {one_line('NULL' if v is None else str(plain(v)))}" in said, c
    assert said.endswith("2 rows")


# -- pario kernel -----------------------------------------------------------------------------------
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.slow
def test_kernel_list_and_help_fit(pario_cmd, width: int) -> None:
    from pario import kernels

    narrow = _cli(pario_cmd, ["kernel", "--list"], width).stdout
    wide = _cli(pario_cmd, ["kernel", "--list"], 1000).stdout
    check(narrow, wide, width)
    # one paragraph a kernel: its name, then its whole description
    assert [p.split(None, 1) for p in re.sub(r"\n +", " ", narrow).splitlines()] == [
        [k.name, one_line(k.description)] for k in kernels.KERNELS]
    for name in kernels.names():
        narrow = _cli(pario_cmd, ["kernel", name, "--help"], width).stdout
        wide = _cli(pario_cmd, ["kernel", name, "--help"], 1000).stdout
        check(narrow, wide, width)
        assert one_line(narrow) == one_line(wide)
        assert f"usage: pario-kernel-{name} [options]" in narrow and "--path VALUE" in narrow
        # an option's help continues under the help column, not under the options
        continued = [line for line in narrow.splitlines() if line.startswith("   ")]
        assert all(line.startswith(" " * 28) for line in continued)
        assert continued or width > 80


# -- pario tune -------------------------------------------------------------------------------------
def _block(np_: int = 2) -> list[str]:
    from kernel_helpers import kernel_exe

    return ["mpirun", "-np", str(np_), str(kernel_exe("block")), "--block-size", "8k", "--transfer-size",
            "8k", "--segments", "64"]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.slow
def test_tune_show_space_fits(tmp_path: Path, pario_cmd, mpi_env, width: int) -> None:
    args = ["tune", "--show-space", "--", *_block()]
    narrow = _cli(pario_cmd, args, width, env=mpi_env, cwd=tmp_path).stdout
    wide = _cli(pario_cmd, args, 1000, env=mpi_env, cwd=tmp_path).stdout
    check(narrow, wide, width)
    assert one_line(narrow) == one_line(wide)
    said = one_line(narrow)
    assert "cb_buffer_size [hint]: default, 1M, 2M, 4M, 8M, 16M, 32M, 64M, 128M, 256M, 512M" in said
    assert "mca.io_ompio_num_aggregators [mca]: default, 1, 2 (when mca.io is ompio or default)" in said
    # a dimension's choices continue 8 columns in, its help 4 columns in
    dims = [i for i, line in enumerate(narrow.splitlines()) if re.match(r"\S+ \[\w+\]: ", line)]
    assert len(dims) > 5 and all(
        line.startswith("        ") or line.startswith("    ") and not line.startswith("     ")
        for line in narrow.splitlines()[dims[0]:] if line.startswith(" "))


@pytest.fixture(scope="module")
def tune_runs(tmp_path_factory, pario_cmd, mpi_env) -> dict[int, tuple[str, str, str]]:
    """The same seeded study (the block kernel, 2 trials in the budget) at 80, 120 and 1000
    columns, each in a folder of its own: its progress (stderr), its end-of-study text and its
    `pario tune report`."""
    out = {}
    for width in (*WIDTHS, 1000):
        cwd = tmp_path_factory.mktemp(f"tune{width}")
        proc = _cli(pario_cmd, ["tune", "--budget", "2", "--strategy", "random", "--seed", "1", "--no-verify",
                                "--study", "w", "--", *_block()], width, env=mpi_env, cwd=cwd)
        report = _cli(pario_cmd, ["tune", "report", "w"], width, env=mpi_env, cwd=cwd).stdout
        out[width] = (proc.stderr, proc.stdout, report)
    return out


def _numbers(text: str) -> str:
    """The text with its numbers (values, times, the folders' widths) as N: the same study run
    again measures other values."""
    return re.sub(r"\d+(\.\d+)?", "N", text)


#: the roles of a trial: each width's tune run is its own, and noise asks one for a remeasure, not another
ROLES = " default search remeasure"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.slow
@pytest.mark.measured  # two studies' verdicts compared word for word: noise beside them parts them
def test_tune_progress_and_end_fit(tune_runs, width: int) -> None:
    progress, end, report = tune_runs[width]
    wide_progress, wide_end, wide_report = tune_runs[1000]

    def statements(text: str) -> list[str]:
        return [p for p in re.sub(r"\n +", " ", text).splitlines() if p.startswith("pario tune: ")]

    lines = [line for line in progress.splitlines() if line.startswith(("pario tune: ", "    "))]
    fits("\n".join(lines), width)
    assert broken_words(_numbers(progress), _numbers(wide_progress) + ROLES) == []
    said = statements(progress)
    statement = (r"pario tune: tuning \d/2: trial \d \((default|search|remeasure)\): \S+ \S+; "
                 r"best \S+ \S+ \(trial \d\) \S")
    assert len(said) >= 2 and all(re.match(statement, s) for s in said), said
    # the two runs measure alike up to where noise asks one of them for a remeasure
    wide = [s.split("):", 1)[0] for s in statements(wide_progress)]
    narrow = [s.split("):", 1)[0] for s in said]
    common = min(len(wide), len(narrow))
    assert common >= 2 and narrow[:common] == wide[:common]
    # the settings of each trial, whole (the study is seeded: the same at every width)
    settings = [s.split(") ", 2)[-1] for s in statements(wide_progress)]
    assert [s.split(") ", 2)[-1] for s in said][:common] == settings[:common]

    fits(end, width)
    # two studies: their ends say the same words up to where noise parts their verdicts (a p-value
    # on either side of 0.05); the words are checked whole where both say them
    said_end, said_wide = _numbers(one_line(end)).split(), _numbers(one_line(wide_end)).split()
    same = next((i for i, (x, y) in enumerate(zip(said_end, said_wide, strict=False)) if x != y),
                min(len(said_end), len(said_wide)))
    assert same >= 12, (end, wide_end)  # "study w: 2 trial(s) in the budget, 0 failed, ..." at least
    if said_end == said_wide:
        assert broken_words(_numbers(end), _numbers(wide_end)) == []
    first = end.splitlines()[0]
    statement = re.match(r"study w: 2 trial\(s\) in the budget, 0 failed, \d+ in all \(strategy random, "
                         r"objective write-bw\)", one_line(end))
    assert statement, end
    assert (first == statement.group(0)) == (width >= len(statement.group(0)))  # wrapped only where it must
    assert re.search(r"^default: \S+ \S+ median of 1 run\(s\)", end, re.M)

    fits(report, width)
    assert report.startswith("pario tune report: study w\n")
    assert re.search(r"^0 +default +complete +\S+ \S+ +default *$", report, re.M), report


@pytest.mark.parametrize("width", WIDTHS)
def test_tune_end_commands_paste_as_they_are(tmp_path: Path, width: int) -> None:
    """The job-script lines of a better configuration, for a command with a long path: within
    the width but for a word longer than a line, and each command whole once its backslashes
    are joined, as a shell reads it."""
    from pario.tune import output
    from pario.tune.results import Sampled, Summary, TrialRow
    from pario.tune.space import Detected, build_space
    from text_helpers import joined

    space = build_space(Detected(mpi="mpich", ranks=4, nodes=1, fs_type="ext4", directory=str(tmp_path)))
    best = space.normalise({"cb_nodes": "4", "romio_cb_write": "enable", "cb_buffer_size": "4194304"})
    rows = [TrialRow(3, "search", "complete", best, 3.0, [3.0], "", [])]
    default = Sampled({k: "default" for k in best}, [1.0, 1.1, 0.9])
    summary = Summary("s", "write-bw", ["x"], "exact", rows, default, Sampled(best, [3.0, 3.1, 2.9]), 3.0,
                      0.05, "better", len(rows), 0, [])
    written = output.best_files(summary, space, tmp_path / LONG_DIR, None)
    command = ["mpiexec", "-n", "4", f"/opt/{LONG_DIR}/bin/application", "--input", "input.nml", "--steps",
               "10"]
    text = output.lines(summary, space, written, command, width)
    # wider only for one word that cannot be broken (a long path, an export of one)
    assert [line for line in text if len(line) > width
            and len(line.removesuffix(" \\").removeprefix("  export ").split()) > 1] == []
    flat = joined(text)
    assert f"  pario run --hints {shlex.quote(str(written['hints']))} -- {shlex.join(command)}" in flat
    assert ("speed-up over the default: 3.00x, better than the default (one-sided Mann-Whitney U, p = 0.050)"
            in one_line("\n".join(text)))
