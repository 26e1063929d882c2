"""The terminal report and diagnosis at 80 and 120 columns: no line wider than the terminal,
no scientific notation, and no word broken in the middle (a long path may break only after
a '/'), on real runs (pario logs made here with mpirun) and the shared Darshan logs."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from darshan_logs import LOGS
from pario.analysis.diagnosis import findings_renderable
from pario.log import read_log
from pario.report import build
from pario.report.terminal import render
from pario.textfit import wrap_words

DARSHAN = [
    "skew-app.darshan",
    "imbalanced-io.darshan",
    "treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan",
    "shane_ior-HDF5_id438090-438090_11-9-41522-17417065676046418211_1.darshan",
    "shane_ior-PNETCDF_id438100-438100_11-9-41525-10280033558448664385_1.darshan",
]
SCIENTIFIC = re.compile(r"\d(\.\d+)?e[+-]?\d+\b")
BOX = "│╭╮╰╯─┃━┏┓┗┛╶╴ ;,:()"
LONG_DIR = "a_directory_name_long_enough_to_break/and_a_second_level_below_it"


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
    return [w.strip(BOX) for line in text.splitlines() for w in line.split() if w.strip(BOX)]


def broken_words(narrow: str, wide: str) -> list[str]:
    """Words of the narrow output that are pieces of a word of the wide one, cut elsewhere than
    after a '/' (or a '-' or '_' of a file name): a mid-word wrap, or a word cut short."""
    vocabulary = set(_words(wide))
    whole = " ".join(vocabulary)
    bad = []
    for w in set(_words(narrow)) - vocabulary:
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
    assert broken_words(narrow, wide) == []


def test_checker_fails_on_cut_words_and_long_lines() -> None:
    wide = "a 4 KiB /tmp/x/dir/block_output_file.dat direction"
    assert broken_words("a 4 KiB /tmp/x/dir/block_out\nput_file.dat directio\nn", wide) == [
        "/tmp/x/dir/block_out",
        "directio",
        "n",
        "put_file.dat",
    ]
    assert broken_words("a 4 KiB /tmp/x/\ndir/block_output_file.dat direction", wide) == []
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
def pario_logs(tmp_path_factory, pario_cmd, mpi_env) -> list[Path]:  # type: ignore[no-untyped-def]
    """The block kernel (4 KiB independent writes, so the diagnosis suggests hints) at 2 and
    4 ranks under ROMIO, writing below a long directory name, and the demo program."""
    from pario import paths

    root = tmp_path_factory.mktemp("width")
    out = root / LONG_DIR
    out.mkdir(parents=True)
    logs = []
    for n in (2, 4):
        log = root / f"block{n}.pario"
        cmd = [
            *pario_cmd,
            "run",
            "--log",
            str(log),
            "--",
            "mpirun",
            "--oversubscribe",
            "-np",
            str(n),
            "--mca",
            "io",
            "romio321",
            str(paths.program("pario-kernel-block")),
            "--transfer-size",
            "4k",
            "--block-size",
            "256k",
            "--independent",
            "-o",
            str(out / "block_output_file.dat"),
        ]
        proc = subprocess.run(cmd, env=mpi_env, capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, proc.stderr
        logs.append(log)
    log = root / "demo.pario"
    proc = subprocess.run(
        [
            *pario_cmd,
            "run",
            "--log",
            str(log),
            "--",
            "mpirun",
            "--oversubscribe",
            "-np",
            "4",
            str(paths.program("pario-demo-io")),
            str(out),
        ],
        env=mpi_env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    return [*logs, log]


@pytest.mark.parametrize("width", [80, 120])
def test_pario_logs_fit(pario_logs: list[Path], width: int) -> None:
    for log in pario_logs:
        check(_report([log], width), _report([log], 1000), width)
    check(_report(pario_logs[:2], width), _report(pario_logs[:2], 1000), width)
    narrow = _report(pario_logs[:2], width)
    assert f"{LONG_DIR}/" in narrow.replace("\n", "")  # the directory shown, unbroken


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("name", DARSHAN)
def test_darshan_logs_fit(name: str, width: int) -> None:
    path = LOGS / name
    check(_report([path], width), _report([path], 1000), width)
    findings = build([read_log(str(path))])[0][0].findings
    check(
        _text(findings_renderable(findings, title="x"), width),
        _text(findings_renderable(findings, title="x"), 1000),
        width,
    )


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
    for c in timed:
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


@pytest.mark.parametrize("command", ["tune", "kernel", "run", "env", "report", "diagnose", "replay", "dump"])
def test_help_fits_80_columns(command: str) -> None:
    """Every command's --help at 80 columns: no line wider (examples included)."""
    out = subprocess.run([sys.executable, "-m", "pario", command, "--help"], capture_output=True, text=True,
                         timeout=60, env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"}).stdout
    assert out and max(len(line) for line in out.splitlines()) <= 80, [
        line for line in out.splitlines() if len(line) > 80]


def test_datasets_table_keeps_every_column_at_80(tmp_path: Path, pario_cmd, mpi_env) -> None:
    """vpic --hdf5's datasets have long names: they wrap, and the numbers (writes included) fit."""
    from pario import paths

    log = tmp_path / "vpic.pario"
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", "2",
                           str(paths.program("pario-kernel-vpic")), "--hdf5", "--particles", "4k", "--path",
                           str(tmp_path / "vpic-hdf5-with-a-long-name.data"), "--delete"],
                          env=mpi_env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    narrow = _report([log], 80)
    check(narrow, _report([log], 1000), 80)
    (head,) = [line for line in narrow.splitlines() if line.startswith("dataset / variable")]
    assert head.split()[-2:] == ["reads", "writes"], head
