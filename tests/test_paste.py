"""Every command a finding prints pastes whole from the terminal: wider than the panel, it goes on
with a backslash at the end of each line, never wrapped in the middle of a command (issue: the
demo's "pario run --hints ... -- mpirun" and "--oversubscribe -np 4 ./app" pasted as two commands).

The terminal text is read back as a user copies it: the panel's borders dropped, the lines joined
where one ends with a backslash; each pario command must then parse as pario parses it."""

from __future__ import annotations

import re
import subprocess

import pytest

from advice_check import pario_line_errors
from darshan_logs import ALL_LOGS, LOGS
from pario.textfit import command_lines, shell_tokens
from text_helpers import joined

IOR_HDF5 = next(LOGS.glob("shane_ior-HDF5_*.darshan"))


def test_a_long_command_goes_on_with_backslashes() -> None:
    cmd = ("pario run --hints app.pario.MPIIO-SINGLE-AGGREGATOR.hints -- mpirun --oversubscribe -np 4 "
           "./app --in 'a b.nml' ${APP:?set APP to your program and its arguments}")
    lines = command_lines(cmd, 40)
    assert all(line.endswith(" \\") for line in lines[:-1]) and len(lines) > 2
    # only a line of one word too long for the width is longer
    assert all(len(line) <= 40 for line in lines if len(shell_tokens(line.removesuffix(" \\"))) > 1)
    joined = " ".join(line.removesuffix(" \\").strip() for line in lines)
    assert shell_tokens(joined) == shell_tokens(cmd)
    assert "'a b.nml'" in shell_tokens(cmd) and shell_tokens(cmd)[-1].startswith("${APP:?")


def _commands(text: str) -> list[str]:
    """The pario commands of the terminal text as a user copies them: the panel's border and the
    one space of its padding dropped, the rest kept, and continued lines joined as a shell joins
    them (text_helpers.joined)."""
    rows = [re.sub(r"^[│|] ?", "", line).rstrip().removesuffix("│").rstrip() for line in text.splitlines()]
    return [row.strip() for row in joined(rows) if row.strip().startswith("pario ")]


@pytest.mark.parametrize("width", [80, 120])
def test_every_printed_pario_command_parses_as_pasted(pario_cmd, mpi_env, width: int) -> None:
    proc = subprocess.run([*pario_cmd, "diagnose", str(IOR_HDF5)], env={**mpi_env, "COLUMNS": str(width)},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    commands = _commands(proc.stdout)
    assert len(commands) >= 3, proc.stdout
    for cmd in commands:
        assert pario_line_errors(cmd) == [], cmd
        assert cmd.endswith("mpirun -np 4 ./src/ior -a HDF5"), cmd


def test_a_long_program_path_pastes_whole(tmp_path, pario_cmd, mpi_env) -> None:
    """A pario log's own command, with the kernel's long path, printed at 80 columns: each command
    read back holds the path whole (cut after a '/' with a backslash, joined again)."""
    from kernel_helpers import kernel_exe

    exe = str(kernel_exe("block"))
    log = tmp_path / "block.pario"
    command = ["mpirun", "-np", "2", exe, "--transfer-size", "4k", "--block-size", "256k", "--independent",
               "-o", str(tmp_path / "shared.dat")]
    run = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", *command], env=mpi_env,
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    proc = subprocess.run([*pario_cmd, "diagnose", str(log)], env={**mpi_env, "COLUMNS": "80"},
                          capture_output=True, text=True, timeout=120)
    commands = _commands(proc.stdout)
    assert commands and all(f" -- mpirun -np 2 {exe} --transfer-size 4k" in c for c in commands), proc.stdout
    assert all(pario_line_errors(c) == [] for c in commands)


#: what else a report prints for a user to run: the shell commands of its findings
SHELL_STARTS = ("lfs ", "darshan-parser ", "export ", "mpirun ", "srun ")


@pytest.mark.slow
@pytest.mark.parametrize("width", [80, 120])
def test_every_command_of_every_log_s_report_pastes(width: int) -> None:
    """The report (the diagnosis included) of every log in tests/data at 80 and 120 columns, read
    back as pasted: each pario command parses as pario parses it, each other command as a shell
    parses it (one command, its quotes closed)."""
    import io
    import shlex

    from pario.log import read_log
    from pario.report import build
    from pario.report.terminal import render

    seen = 0
    for path in ALL_LOGS:
        try:
            profile = read_log(str(path))
        except Exception:  # noqa: BLE001 - the damaged logs of tests/data have reports of their own
            continue
        runs, table = build([profile])
        buf = io.StringIO()
        render(runs, table, file=buf, width=width, color=False, details=True)
        rows = [re.sub(r"^[│|] ?", "", line).rstrip().removesuffix("│").rstrip()
                for line in buf.getvalue().splitlines()]
        # commands are the indented lines (a sentence that starts with "pario" is not one)
        for row in (r.strip() for r in joined(rows) if r.startswith("  ")):
            if row.startswith("pario "):
                assert pario_line_errors(row) == [], (path.name, row)
                seen += 1
            elif row.startswith(SHELL_STARTS):
                assert shlex.split(row), (path.name, row)
                seen += 1
    assert seen >= 20
