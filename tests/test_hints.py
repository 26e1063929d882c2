"""Hints files: refused before launch by `pario run --hints`, and never fatal to the application
when given to the runtime directly (PARIO_HINTS): bad lines are skipped and listed in the log."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from pario.diagnosis import analyze
from pario.errors import ParioError
from pario.launch.hints import MAX_HINTS, parse_hints, parse_line, read_hints, rejected_notes
from pario.log import read_log

GOOD_BEFORE = b"# hints for the test\nromio_cb_write enable\n"
GOOD_AFTER = b"\ncb_nodes 2\n"
BINARY = b"\x7fELF\x02\x01\x01" + bytes(range(10))
LONG_KEY = b"k" * 300

# (bad line 3, what `pario run` says about it, the runtime's reason, the runtime's text of it)
BAD_LINES = {
    "empty-key": (b"=bad", "empty key in '=bad' (expected 'key value' or 'key=value')", "empty key", "=bad"),
    "empty-value": (b"cb_nodes=", "no value for cb_nodes (expected 'key value' or 'key=value')", "no value",
                    "cb_nodes="),
    "long-key": (LONG_KEY, "key of 300 characters, at most 35 allowed (MPI_MAX_INFO_KEY)",
                 "key of 300 characters, at most 35 allowed", "k" * 47),
    "binary": (BINARY, "not a text line: byte 0x7f (hints are printable ASCII)", "not a text line: byte 0x7f",
               "?ELF" + "?" * 13),
    "two-values": (b"striping_factor 4 extra", "one value expected for striping_factor, found 2: '4 extra'",
                   "one value expected, found 2", "striping_factor 4 extra"),
}


def _hints_file(tmp_path: Path, bad: bytes) -> Path:
    path = tmp_path / "hints.txt"
    path.write_bytes(GOOD_BEFORE + bad + GOOD_AFTER)
    return path


# ---- the file syntax ----------------------------------------------------------------------------


def test_valid_file_both_syntaxes_and_comments():
    data = (b"# ROMIO hints\n\ncb_nodes 4\n  romio_cb_write = enable   # collective buffering\r\n"
            b"cb_config_list=*:1#2\nstriping_unit\t1048576\nmy_own_hint x=y\n")
    assert parse_hints(data, "h") == [("cb_nodes", "4"), ("romio_cb_write", "enable"),
                                      ("cb_config_list", "*:1#2"), ("striping_unit", "1048576"),
                                      ("my_own_hint", "x=y")]


@pytest.mark.parametrize(("data", "message"), [
    (b"cb_nodes 2\ncb_nodes 4\n", "h:2: duplicate key cb_nodes (first on line 1)"),
    (b"cb_nodes\n", "h:1: no value for cb_nodes (expected 'key value' or 'key=value')"),
    (b"cb_nodes four\n", "h:1: cb_nodes must be a positive integer, not 'four'"),
    (b"cb_buffer_size=0\n", "h:1: cb_buffer_size must be a positive integer, not '0'"),
    (b"romio_cb_write yes\n", "h:1: romio_cb_write must be enable, disable or automatic, not 'yes'"),
    (b"romio_no_indep_rw 1\n", "h:1: romio_no_indep_rw must be true or false, not '1'"),
    (b"x " + b"v" * 256 + b"\n",
     "h:1: value of x has 256 characters, at most 255 allowed (MPI_MAX_INFO_VAL)"),
    (b"a\tb\x00c\n", "h:1: not a text line: a NUL byte (hints are printable ASCII)"),
    ("cb_nodes 2\nclé 1\n".encode(), "h:2: not a text line: byte 0xc3 (hints are printable ASCII)"),
])
def test_bad_lines(data: bytes, message: str):
    with pytest.raises(ParioError) as exc:
        parse_hints(data, "h")
    assert str(exc.value) == f"hints file {message}"


def test_limits_exactly():
    assert parse_hints(b"k" * 35 + b" " + b"v" * 255, "h") == [("k" * 35, "v" * 255)]
    many = b"".join(b"h%d 1\n" % i for i in range(MAX_HINTS + 1))
    with pytest.raises(ParioError, match=r"^hints file h: 65 hints, at most 64 are injected$"):
        parse_hints(many, "h")
    assert len(parse_hints(many[: many.index(b"h64")], "h")) == 64


def test_missing_file(tmp_path: Path):
    with pytest.raises(ParioError, match=r"^hints file .*nope\.txt: no such file$"):
        read_hints(tmp_path / "nope.txt")
    with pytest.raises(ParioError, match=r"^hints file .*: a directory, not a file$"):
        read_hints(tmp_path)


def test_rejected_notes():
    meta = {"rejected_hints": [{"line": 3, "text": "=bad", "reason": "empty key"}],
            "rejected_hints_total": 17, "hints_fallback_opens": 1}
    assert rejected_notes(meta) == [
        "PARIO_HINTS: 17 line(s) of the hints file were not injected (line 3 '=bad': empty key; "
        "and 16 more); the other hints were.",
        "PARIO_HINTS: 1 MPI_File_open call(s) failed with the injected hints and succeeded without them; "
        "those files were opened without the hints.",
    ]
    assert rejected_notes({"injected_hints": {}}) == []


# ---- pario run refuses a bad file before launch ---------------------------------------------------


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_pario_run_refuses_bad_hints(case, tmp_path, compile_program, run_under_pario):
    bad, message, _, _ = BAD_LINES[case]
    exe = compile_program("hints_open.c")
    hints = _hints_file(tmp_path, bad)
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "run.pario"
    proc = run_under_pario(log, ["mpirun", "-np", "2", str(exe), str(out), "100"],
                           extra=["--hints", str(hints)])
    assert proc.returncode == 2
    assert proc.stderr == f"pario: error: hints file {hints}:3: {message}\n"
    assert proc.stdout == ""
    assert list(out.iterdir()) == [] and not log.exists()  # nothing was launched


def test_pario_run_refuses_a_program_as_hints(tmp_path, compile_program, run_under_pario):
    exe = compile_program("hints_open.c")
    proc = run_under_pario(tmp_path / "x.pario", [str(exe)], extra=["--hints", str(exe)])
    assert proc.returncode == 2
    assert proc.stderr == (f"pario: error: hints file {exe}:1: not a text line: byte 0x7f "
                           "(hints are printable ASCII)\n")


# ---- the runtime skips what pario run would refuse ------------------------------------------------


def _run_direct(tmp_path: Path, exe: Path, libpario: Path, mpi_env: dict[str, str], hints: Path, *args: str):
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "direct.pario"
    cmd = ["mpirun", "-np", "2", "-x", f"LD_PRELOAD={libpario}", "-x", f"PARIO_LOG={log}", "-x",
           f"PARIO_HINTS={hints}", "-x", "OMPI_MCA_io=romio321", str(exe), str(out), "100", *args]
    proc = subprocess.run(cmd, env=mpi_env, capture_output=True, text=True, timeout=120)
    return proc, out, log


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_runtime_skips_bad_hints(case, tmp_path, compile_program, libpario, mpi_env):
    bad, _, reason, text = BAD_LINES[case]
    exe = compile_program("hints_open.c")
    hints = _hints_file(tmp_path, bad)
    proc, out, log = _run_direct(tmp_path, exe, libpario, mpi_env, hints)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hints_open: wrote 200 bytes\nmissing: error\n"
    assert (out / "hints.dat").read_bytes() == b"a" * 100 + b"b" * 100
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("pario:")]
    assert warnings == [f"pario: PARIO_HINTS {hints}: 1 line(s) skipped, first line 3: {reason}; the other 2 "
                        "hint(s) are injected (the log lists them as rejected_hints)"]  # once, by rank 0
    profile = read_log(log)
    meta = profile.job.metadata
    assert meta["rejected_hints"] == [{"line": 3, "text": text, "reason": reason}]
    assert meta["rejected_hints_total"] == 1
    assert meta["hints_fallback_opens"] == 0
    assert meta["injected_hints"] == {"romio_cb_write": "enable", "cb_nodes": "2"}
    files = profile.layer("mpiio")
    rec = files[files["name"] == str(out / "hints.dat")]
    assert len(rec) == 1
    in_effect = profile.hints[int(rec["id"][0])]
    assert (in_effect["romio_cb_write"], in_effect["cb_nodes"]) == ("enable", "2")
    shown = repr(text if len(text) <= 40 else text[:40] + "...")
    assert analyze(profile, diagnosis=False).notes.count(
        f"PARIO_HINTS: 1 line(s) of the hints file were not injected (line 3 {shown}: {reason}); "
        "the other hints were.") == 1


def test_runtime_keeps_the_applications_file_error_handler(tmp_path, compile_program, libpario, mpi_env):
    """With hints injected, a file opened after MPI_File_set_errhandler(MPI_FILE_NULL, fatal) still
    inherits the fatal handler, and a valid file is injected whole."""
    exe = compile_program("hints_open.c")
    hints = tmp_path / "good.txt"
    hints.write_text("cb_nodes 1\nromio_cb_write=disable\n")
    proc, _, log = _run_direct(tmp_path, exe, libpario, mpi_env, hints, "fatal")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hints_open: wrote 200 bytes\ninherited fatal: yes\n"
    assert "pario:" not in proc.stderr
    meta = read_log(log).job.metadata
    assert meta["injected_hints"] == {"cb_nodes": "1", "romio_cb_write": "disable"}
    assert (meta["rejected_hints"], meta["rejected_hints_total"], meta["hints_fallback_opens"]) == ([], 0, 0)


def test_runtime_skips_a_binary_file(tmp_path, compile_program, libpario, mpi_env):
    """A program given as the hints file: its lines rejected, nothing injected, the program runs.
    The log keeps the first PARIO_MAX_REJECTED (16) rejected lines and counts them all."""
    exe = compile_program("hints_open.c")
    proc, _, log = _run_direct(tmp_path, exe, libpario, mpi_env, exe)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hints_open: wrote 200 bytes\nmissing: error\n"
    meta = read_log(log).job.metadata
    assert meta["injected_hints"] == {}
    assert meta["rejected_hints"][0]["line"] == 1
    assert meta["rejected_hints"][0]["reason"] == "not a text line: byte 0x7f"
    assert len(meta["rejected_hints"]) == min(meta["rejected_hints_total"], 16)


# ---- per-file sections ([GLOB]) -------------------------------------------------------------------


def test_sections_apply_in_file_order():
    from pario.launch.hints import HintSection, hints_for, parse_hints_file

    data = (b"cb_nodes 2\n[*.h5]   # hdf5 files\nstriping_factor 8\ncb_nodes 4\n"
            b"[/scratch/*/ckpt_*]\nromio_cb_write disable\n[ckpt_*.h5]\ncb_nodes 8\n")
    parsed = parse_hints_file(data, "h")
    assert parsed.global_hints == (("cb_nodes", "2"),)
    assert parsed.sections == (HintSection("*.h5", (("striping_factor", "8"), ("cb_nodes", "4"))),
                               HintSection("/scratch/*/ckpt_*", (("romio_cb_write", "disable"),)),
                               HintSection("ckpt_*.h5", (("cb_nodes", "8"),)))
    assert parse_hints(data, "h") == [("cb_nodes", "2")]  # the global hints
    assert hints_for(parsed, "out/a.dat") == {"cb_nodes": "2"}
    assert hints_for(parsed, "/scratch/u/b.h5") == {"cb_nodes": "4", "striping_factor": "8"}
    # '*' crosses '/' in a glob with '/'; a glob without '/' sees the base name only
    assert hints_for(parsed, "/scratch/u/run/ckpt_1.h5") == {"cb_nodes": "8", "striping_factor": "8",
                                                              "romio_cb_write": "disable"}
    assert hints_for(parsed, "scratch/u/ckpt_1") == {"cb_nodes": "2"}  # not the path as opened
    assert hints_for(parsed, "/x/ckpt_1.h5/y") == {"cb_nodes": "2"}


@pytest.mark.parametrize(("data", "message"), [
    (b"cb_nodes 2\n[]\ncb_nodes 4\n", "h:2: empty glob in section header []"),
    (b"[*.h5\n", "h:1: section header '[*.h5' not closed by ']' (expected [GLOB] alone on its line)"),
    (b"[*.h5] cb_nodes 4\n", "h:1: section header '[*.h5] cb_nodes 4' not closed by ']' (expected [GLOB] "
     "alone on its line)"),
    (b"[" + b"g" * 256 + b"]\n", "h:1: glob of 256 characters, at most 255 allowed"),
    (b"[a]\ncb_nodes 1\n[b]\ncb_nodes 2\ncb_nodes 3\n",
     "h:5: duplicate key cb_nodes in section [b] (first on line 4)"),
    (b"".join(b"[g%d]\n" % i for i in range(17)), "h:17: more than 16 sections"),
    (b"".join(b"h%d 1\n" % i for i in range(40)) + b"[x]\n" + b"".join(b"s%d 1\n" % i for i in range(25)),
     "h: 65 hints, at most 64 are injected"),
])
def test_bad_sections_are_refused(data, message):
    with pytest.raises(ParioError) as err:
        parse_hints(data, "h")
    assert str(err.value) == f"hints file {message}"


def test_same_key_in_two_sections_is_fine():
    from pario.launch.hints import parse_hints_file

    parsed = parse_hints_file(b"cb_nodes 1\n[a*]\ncb_nodes 2\n[b*]\ncb_nodes 3\n", "h")
    assert [s.hints for s in parsed.sections] == [(("cb_nodes", "2"),), (("cb_nodes", "3"),)]


def test_ignored_hints_compares_values_by_kind():
    from pario.analysis.mpihints import ignored_hints

    injected = {"cb_buffer_size": "016777216", "romio_cb_write": "DISABLE", "romio_no_indep_rw": "True",
                "cb_nodes": "4", "striping_factor": "8", "cb_config_list": "*:1", "pario_cb_algorithm": "mpi"}
    effective = {"cb_buffer_size": "16777216", "romio_cb_write": "disable", "romio_no_indep_rw": "true",
                 "cb_nodes": "2", "cb_config_list": "*:*"}
    assert ignored_hints(injected, effective) == [
        ("cb_nodes", "4", "2", ""), ("striping_factor", "8", None, ""), ("cb_config_list", "*:1", "*:*", "")]
    assert ignored_hints({}, effective) == []
    assert ignored_hints({"romio_cb_write": "enable"}, {"romio_cb_write": "automatic"}) == [
        ("romio_cb_write", "enable", "automatic", "")]


def test_romio_hints_given_to_ompio_are_ignored():
    """Open MPI reports every hint set at the open back, read or not: under OMPIO (``mca:io``)
    ROMIO's own hints are ignored though they look in effect; under ROMIO they are not."""
    from pario.analysis.mpihints import OMPIO_IGNORES, ignored_hints

    injected = {"romio_cb_write": "disable", "cb_config_list": "*:1", "cb_nodes": "1",
                "striping_unit": "65536"}
    echoed = dict(injected)
    got = ignored_hints(injected, echoed | {"mca:io": "ompio"})
    assert got == [("romio_cb_write", "disable", "disable", OMPIO_IGNORES),
                   ("cb_config_list", "*:1", "*:1", OMPIO_IGNORES)]
    assert got[0].text == f"romio_cb_write (asked disable, {OMPIO_IGNORES})"
    assert ignored_hints(injected, echoed | {"mca:io": "romio321"}) == []
    assert ignored_hints(injected, echoed) == []


def test_tuned_hints_bring_their_mpi_component(tmp_path: Path, pario_cmd, mpi_env) -> None:
    """A hints file written by pario tune names the I/O component it was tuned with: pario run
    applies it, or warns when the run's own setting differs."""
    from pario.tune import config as tune_config

    hints = tmp_path / "best.hints"
    hints.write_text(tune_config.hints_text({"romio_cb_write": "enable"}, None, {"OMPI_MCA_io": "romio321"}))
    assert "# pario: tuned with OMPI_MCA_io=romio321" in hints.read_text()
    env = {k: v for k, v in mpi_env.items() if k != "OMPI_MCA_io"}
    command = [*pario_cmd, "run", "--log", str(tmp_path / "x.pario"), "--hints", str(hints), "--",
               "mpirun", "-np", "2", "printenv", "OMPI_MCA_io"]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert proc.stdout == "romio321\n" * 2, proc.stderr
    assert f"pario: OMPI_MCA_io=romio321: the hints of {hints} were tuned with it" in proc.stderr
    other = subprocess.run(command, env=env | {"OMPI_MCA_io": "ompio"}, capture_output=True, text=True,
                           timeout=120)
    assert other.stdout == "ompio\n" * 2
    assert (f"pario: warning: the hints of {hints} were tuned with OMPI_MCA_io=romio321, but this run has "
            "OMPI_MCA_io=ompio: they may do nothing") in other.stderr


def test_tuned_hints_bring_the_collective_engine(tmp_path: Path, pario_cmd, mpi_env) -> None:
    """A best configuration that ran under pario's collective-write engine: its hints file names the
    engine setting and pario run --hints uses it; a damaged setting is one line before launch."""
    from pario.tune import config as tune_config

    hints = tmp_path / "best.hints"
    hints.write_text(tune_config.hints_text({"cb_nodes": "2"}, None, {"PARIO_COLL": "write-comm:p2p"}))
    command = [*pario_cmd, "run", "--log", str(tmp_path / "x.pario"), "--hints", str(hints), "--",
               "mpirun", "-np", "2", "printenv", "PARIO_COLL"]
    proc = subprocess.run(command, env=mpi_env, capture_output=True, text=True, timeout=120)
    assert proc.stdout == "write-comm:p2p\n" * 2, proc.stderr
    assert f"pario: PARIO_COLL=write-comm:p2p: the hints of {hints} were tuned with it" in proc.stderr
    hints.write_text(hints.read_text().replace("write-comm:p2p", "write-comm:bogus"))
    bad = subprocess.run(command, env=mpi_env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1
    assert "PARIO_COLL write-comm:bogus: unknown shuffle 'bogus'" in bad.stderr


@pytest.mark.parametrize("component", ["ompio", "romio321"])
@pytest.mark.slow
def test_report_names_romio_hints_that_ompio_ignored(component, tmp_path, run_under_pario, mpi_env,
                                                     pario_cmd):
    """A real run with ROMIO's hints injected: under OMPIO the report says they were ignored
    (Open MPI still reports them back after the open); under ROMIO nothing is ignored."""
    from kernel_helpers import kernel_exe

    hints = tmp_path / "h.hints"
    hints.write_text("romio_cb_write disable\ncb_nodes 1\n")
    log = tmp_path / "run.pario"
    command = ["mpirun", "-np", "2", str(kernel_exe("block")), "--path", str(tmp_path / "t.dat"), "--delete"]
    env = mpi_env | {"OMPI_MCA_io": component}
    proc = run_under_pario(log, command, env=env, extra=["--hints", str(hints)])
    assert proc.returncode == 0, proc.stderr
    hints_in_effect = analyze(read_log(log)).hints
    (per_file,) = hints_in_effect.per_file
    assert per_file.file == str(tmp_path / "t.dat")
    if component == "ompio":
        from pario.analysis.mpihints import OMPIO_IGNORES

        assert per_file.ignored == (("romio_cb_write", "disable", "disable", OMPIO_IGNORES),)
    else:
        assert per_file.ignored == ()
    text = subprocess.run([*pario_cmd, "report", str(log), "--no-diagnosis"], capture_output=True, text=True,
                          env=mpi_env | {"COLUMNS": "200"}, timeout=120).stdout
    said = "ignored by the MPI library: romio_cb_write (asked disable, OMPIO, the MPI-IO component"
    assert (said in " ".join(text.split())) == (component == "ompio"), text


_ESCAPE = re.compile(rb"\\x([0-9a-fA-F]{2})|\\t|\\\\")


def _unescape(text: str) -> bytes:
    """A corpus line's \\t, \\\\ and \\xHH escapes decoded."""
    def one(m: re.Match[bytes]) -> bytes:
        if m.group(1):
            return bytes([int(m.group(1), 16)])
        return b"\t" if m.group(0) == rb"\t" else b"\\"
    return _ESCAPE.sub(one, text.encode())


def _corpus() -> list[tuple[str, bytes, str]]:
    """tests/data/hint-lines.tsv: (expected, line, what it shows); tests/c/test_hint_line.c reads it too."""
    out = []
    for row in (Path(__file__).parent / "data" / "hint-lines.tsv").read_text().splitlines():
        if row and not row.startswith("#"):
            expected, text, why = row.split("\t")
            out.append((expected, _unescape(text), why))
    return out


@pytest.mark.parametrize("expected,raw,why", _corpus(), ids=lambda x: x if isinstance(x, str) else None)
def test_line_grammar_corpus_shared_with_the_runtime(expected: str, raw: bytes, why: str) -> None:
    """The same corpus as the C parser's test (tests/c/test_hint_line.c): one grammar, two parsers."""
    if expected == "-":
        assert parse_line(raw) is None
    elif expected == "!":
        with pytest.raises(ValueError):
            parse_line(raw)
    else:
        assert parse_line(raw) == tuple(expected.split("=", 1))
