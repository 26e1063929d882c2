"""What the report suggests a user run: the hints file named in "Try:" exists and holds the
suggested hints, the command repeats the user's launcher options, and it runs; directories
are not files; runs of different executables are not made into a scaling table."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kernel_helpers import kernel_exe
from pario import paths
from pario.analysis.files import file_table
from pario.log import read_log
from record_helpers import one_record

LAUNCH = ["mpirun", "--oversubscribe", "-np", "2", "--mca", "io", "romio321"]


def _block(out: Path) -> list[str]:
    """8 KiB interleaved collective writes of a shared file with the application's own
    romio_cb_write=disable: MPIIO-CB-DISABLED suggests romio_cb_write enable, a hint that acts on
    these collective calls under ROMIO."""
    return [*LAUNCH, str(kernel_exe("block")), "--block-size", "64k", "--transfer-size", "8k", "--segments",
            "8", "--collective", "--hints", "romio_cb_write=disable", "-o", str(out / "shared.dat")]


def _joined(text: str) -> str:
    """Terminal text as one line of words (panel borders and line breaks dropped)."""
    return " ".join(w for w in text.replace("│", " ").split())


@pytest.fixture(scope="module")
def block_log(tmp_path_factory, pario_cmd, mpi_env) -> Path:
    root = tmp_path_factory.mktemp("suggest")
    log = root / "block.pario"
    proc = subprocess.run(
        [*pario_cmd, "run", "--log", str(log), "--", *_block(root)],
        env=mpi_env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    return log


@pytest.mark.slow
def test_try_command_repeats_the_launch_and_its_hints_file_exists(
    block_log: Path, pario_cmd, mpi_env, tmp_path: Path
) -> None:
    """With --hints-dir the suggested hints file is written there and the trial command names it."""
    proc = subprocess.run(
        [*pario_cmd, "diagnose", "--json", "--hints-dir", str(tmp_path), str(block_log)],
        env=mpi_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    findings = {f["id"]: f for f in json.loads(proc.stdout)["logs"][0]["findings"]}
    finding = findings["MPIIO-CB-DISABLED"]
    hints_file = tmp_path / "block.pario.MPIIO-CB-DISABLED.hints"
    tune = [r for r in finding["recommendations"] if r["kind"] == "tune"]
    assert [r["snippet"] for r in tune] == [
        f"pario run --hints {hints_file} -- " + " ".join(_block(block_log.parent))
    ]
    assert f"pario wrote {hints_file} with romio_cb_write enable" in tune[0]["text"]
    assert hints_file.read_text() == (
        "# pario: hints suggested by MPIIO-CB-DISABLED (Collective buffering disabled on a non-contiguous "
        "pattern)\n"
        f"# for the run logged in {block_log}\n"
        "romio_cb_write enable\n"
    )
    # the suggestion runs as printed, and the hints reach MPI_File_open
    trial = block_log.parent / "trial.pario"
    run = subprocess.run(
        [*pario_cmd, "run", "--log", str(trial), "--hints", str(hints_file), "--", *_block(block_log.parent)],
        env=mpi_env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr
    assert read_log(str(trial)).job.metadata["injected_hints"] == {"romio_cb_write": "enable"}
    # the terminal form says the file was written and names it
    text = _joined(
        subprocess.run(
            [*pario_cmd, "diagnose", "--hints-dir", str(tmp_path), str(block_log)],
            env={**mpi_env, "COLUMNS": "200"},
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
    )
    assert f"pario wrote {hints_file} with romio_cb_write enable:" in text
    assert "--oversubscribe -np 2 --mca io romio321" in text


@pytest.mark.parametrize("command", ["report", "diagnose"])
def test_a_report_writes_nothing_unasked(block_log: Path, pario_cmd, mpi_env,
                                         command: str) -> None:
    """Without --hints-dir no file appears beside the log; the hints and the file's name are shown."""
    before = sorted(block_log.parent.iterdir())
    proc = subprocess.run([*pario_cmd, command, str(block_log)], env={**mpi_env, "COLUMNS": "200"},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert sorted(block_log.parent.iterdir()) == before
    text = _joined(proc.stdout)
    name = "block.pario.MPIIO-CB-DISABLED.hints"
    assert (f"a hints file {name} holding romio_cb_write enable (--hints-dir DIR writes it): "
            f"pario run --hints {name} --") in text


@pytest.mark.parametrize("command", ["report", "diagnose"])
@pytest.mark.slow
def test_hints_dir_must_be_a_directory(block_log: Path, pario_cmd, mpi_env,
                                       command: str, tmp_path: Path) -> None:
    proc = subprocess.run([*pario_cmd, command, "--hints-dir", str(tmp_path / "none"), str(block_log)],
                          env=mpi_env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    missing = tmp_path / "none"
    assert proc.stderr.strip().splitlines() == [
        f"pario: error: --hints-dir: {missing} does not exist (make it first: mkdir -p {missing})"]
    (tmp_path / "file").write_text("")
    proc = subprocess.run([*pario_cmd, command, "--hints-dir", str(tmp_path / "file"), str(block_log)],
                          env=mpi_env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    not_dir = tmp_path / "file"
    assert proc.stderr.strip().splitlines() == [f"pario: error: --hints-dir: {not_dir} is not a directory"]


def test_no_hints_file_is_offered_without_a_value_to_try(tmp_path: Path) -> None:
    """TIME-IO-BOUND on a Darshan log suggests a trial but no hint value, and Darshan records no hints
    in effect: a file would hold only comments and change nothing, so none is offered or written;
    the trial becomes what to try by hand, and says Darshan does not record hints (not that the MPI
    library reported none)."""
    from pario.diagnosis import diagnose
    from pario.report.hints_files import name_suggested_hints

    log = Path(__file__).parent / "data" / "darshan-logs" / "mpi-io-test-x86_64-3.5.0.darshan"
    profile = read_log(log)
    named = {f.id: f for f in name_suggested_hints(diagnose(profile), profile, tmp_path)}
    recs = named["TIME-IO-BOUND"].recommendations
    assert [r.kind for r in recs if "hints" in r.text and "pario run --hints" in r.text] == ["investigate"]
    (by_hand,) = [r for r in recs if "by hand" in r.text]
    assert by_hand.snippet == "" and by_hand.text.endswith(
        "run this command again with pario run --hints FILE (a Darshan log does not record the hints in "
        "effect; docs/tune.md lists the ones pario knows).")
    assert not any("HINTS_FILE" in r.snippet or r.kind == "tune" for r in recs)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_report_shows_the_hints_in_effect(block_log: Path, pario_cmd, mpi_env) -> None:
    proc = subprocess.run(
        [*pario_cmd, "report", str(block_log), "--json", "-"],
        env=mpi_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    hints = json.loads(proc.stdout)["runs"][0]["hints"]
    shared = str(block_log.parent / "shared.dat")
    expected = read_log(str(block_log)).hints
    assert hints == {"files": [{"files": [shared], "hints": next(iter(expected.values()))}], "injected": {},
                     "sections": [], "per_file": []}
    text = subprocess.run(
        [*pario_cmd, "report", str(block_log)],
        env={**mpi_env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    shown = ", ".join(f"{k} {v}" for k, v in sorted(next(iter(expected.values())).items()))
    assert f"MPI-IO hints in effect\n{shared}: {shown or 'none reported by the MPI library'}\n" in text


def test_a_directory_is_not_a_file(tmp_path: Path, compile_program, run_under_pario) -> None:
    exe = compile_program("open_dirs.c", mpi=False)
    log = tmp_path / "dirs.pario"
    proc = run_under_pario(log, [str(exe), str(tmp_path)])
    assert proc.returncode == 0, proc.stderr
    profile = read_log(str(log))
    data = str(tmp_path / "sub" / "data.bin")
    assert list(file_table(profile)["name"]) == [data]
    posix = profile.layer("posix")
    rec = one_record(posix, data)
    assert int(rec["bytes_written"]) == 1000 and int(rec["opens"]) == 1
    # the directory's first open (without O_DIRECTORY) leaves at most an empty record behind:
    # no open, stat or fsync of it is counted, and its descriptor is not followed
    others = posix[posix["name"] != data]
    counters = ["opens", "stats", "fsyncs", "reads", "writes", "bytes_read", "bytes_written"]
    assert list(others["name"]) in ([], [str(tmp_path / "sub")])
    assert int(sum(others[c].sum() for c in counters)) == 0


@pytest.mark.slow
def test_logs_of_different_programs_are_not_a_scaling_table(block_log: Path, pario_cmd, mpi_env) -> None:
    demo = block_log.parent / "demo.pario"
    proc = subprocess.run(
        [
            *pario_cmd,
            "run",
            "--log",
            str(demo),
            "--",
            "mpirun",
            "--oversubscribe",
            "-np",
            "2",
            str(paths.program("pario-demo-io")),
            str(block_log.parent),
        ],
        env=mpi_env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    env = {**mpi_env, "COLUMNS": "200"}
    out = subprocess.run(
        [*pario_cmd, "report", str(block_log), str(demo)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    first = (
        "These logs come from 2 different executables (pario-demo-io, pario-kernel-block). They are shown "
        "as separate runs, not as a scaling table; --scaling strong or --scaling weak compares them anyway."
    )
    assert out.splitlines()[0] == first
    assert "Scaling:" not in out and out.count("pario report") == 2
    forced = subprocess.run(
        [*pario_cmd, "report", str(block_log), str(demo), "--scaling", "strong"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert forced.splitlines()[0].startswith("These logs come from 2 different executables")
    assert forced.splitlines()[1] == "Scaling: strong"
