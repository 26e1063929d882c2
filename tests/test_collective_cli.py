"""The user's side of pario's collective-write engine: `pario run --collective` and `pario env
--collective` (checked before launch, PARIO_COLL reaching the ranks), the hints
pario_cb_algorithm / pario_cb_shuffle in hints files, and the engine's counters in `pario report`
(terminal, HTML, JSON) and in the MPIIO-CB-CYCLES finding."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from kernel_helpers import STEPS, assert_file_is_pattern, expected_bytes, kernel_args, kernel_exe
from pario.analysis.engine import engine_files
from pario.diagnosis import analyze, diagnose
from pario.errors import ParioError
from pario.launch.hints import parse_hints
from pario.log import read_log
from pario.model import Job, Profile, add_derived_rank_columns
from pario.report.html import render_html
from pario.report.json_out import to_json
from pario.report.terminal import render_to_string
from pario.table import Table
from test_terminal_width import check

ALGO_ERROR = ("unknown algorithm {!r} (expected ALGO[:SHUFFLE], ALGO one of none, comm, write, write-comm, "
              "write-comm-2, auto or mpi)")
SHUFFLE_ERROR = "unknown shuffle {!r} (expected one of p2p, rma-fence or rma-lock)"
BAD_VALUES = {
    "fast": ALGO_ERROR.format("fast"),
    "Write-Comm": ALGO_ERROR.format("Write-Comm"),  # the runtime's names are case-sensitive
    "write:udp": SHUFFLE_ERROR.format("udp"),
    "write-comm:": SHUFFLE_ERROR.format(""),
    ":p2p": ALGO_ERROR.format(""),
    "mpi:p2p": "mpi (the MPI library's own collective writes) takes no shuffle",
}


# ---- pario run / pario env: checked before launch -----------------------------------------------

@pytest.mark.parametrize("value", sorted(BAD_VALUES))
def test_pario_run_refuses_a_bad_value(value, tmp_path, run_under_pario):
    marker = tmp_path / "launched"
    log = tmp_path / "run.pario"
    proc = run_under_pario(log, ["mpirun", "-np", "2", "touch", str(marker)], extra=["--collective", value])
    assert proc.returncode == 2
    assert proc.stderr == f"pario: error: --collective {value}: {BAD_VALUES[value]}\n"
    assert proc.stdout == ""
    assert not marker.exists() and not log.exists()  # nothing was launched


def test_pario_env_refuses_a_bad_value(pario_cmd):
    proc = subprocess.run([*pario_cmd, "env", "--collective", "write:udp"], capture_output=True, text=True,
                          timeout=60)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"pario: error: --collective write:udp: {SHUFFLE_ERROR.format('udp')}\n"


@pytest.mark.parametrize("value", ["write-comm:rma-lock", "auto", "mpi"])
def test_pario_run_sets_pario_coll_on_every_rank(value, tmp_path, run_under_pario):
    proc = run_under_pario(tmp_path / "run.pario", ["mpirun", "-np", "3", "printenv", "PARIO_COLL"],
                           extra=["--collective", value])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{value}\n" * 3


def test_pario_env_exports_and_forwards_pario_coll(pario_cmd, mpi_env, tmp_path):
    proc = subprocess.run([*pario_cmd, "env", "--log", f"{tmp_path}/", "--collective",
                           "write-comm-2:rma-fence"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "export PARIO_COLL=write-comm-2:rma-fence" in lines
    # Open MPI's mpirun forwards it to every node
    assert lines[-1].startswith("export OMPI_MCA_mca_base_env_list=")
    assert "PARIO_COLL" in lines[-1].rstrip('"').split(";")
    # in a batch script: every rank of an mpirun started after the exports sees it
    script = f"{proc.stdout}\nmpirun -np 2 printenv PARIO_COLL\n"
    env = {k: v for k, v in mpi_env.items() if k != "PARIO_COLL"}
    ran = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "write-comm-2:rma-fence\n" * 2


def test_help_names_every_algorithm_and_shuffle(pario_cmd):
    for command in ("run", "env"):
        out = subprocess.run([*pario_cmd, command, "--help"], capture_output=True, text=True, timeout=60,
                             env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"}).stdout
        assert max(len(line) for line in out.splitlines()) <= 80
        for line in ("  none          classic blocking two-phase: shuffle a buffer-full to the",
                     "  comm          the shuffle of the next cycle overlapped with the write of this",
                     "  write         asynchronous write of one buffer while the next is filled",
                     "  write-comm    both: the next shuffle and an asynchronous write overlap",
                     "  write-comm-2  data flow with two shuffles and two writes in flight",
                     "  auto          direct when each rank writes its own range; otherwise",
                     "  p2p           MPI_Isend/MPI_Irecv (the default of a fixed algorithm)",
                     "  rma-fence     MPI_Put into the aggregators' windows, epochs closed by fences",
                     "  rma-lock      MPI_Put with passive-target MPI_Win_lock/MPI_Win_unlock"):
            assert line in out.splitlines(), (command, line)
        assert "--collective ALGO[:SHUFFLE]" in out


# ---- hints files ----------------------------------------------------------------------------------

def test_hints_accept_the_engines_values():
    data = (b"pario_cb_algorithm write-comm-2\npario_cb_shuffle=rma-lock\ncb_buffer_size 1048576\n")
    assert parse_hints(data, "h") == [("pario_cb_algorithm", "write-comm-2"),
                                      ("pario_cb_shuffle", "rma-lock"), ("cb_buffer_size", "1048576")]
    assert parse_hints(b"pario_cb_algorithm mpi\n", "h") == [("pario_cb_algorithm", "mpi")]


@pytest.mark.parametrize(("line", "message"), [
    (b"pario_cb_algorithm fast", "pario_cb_algorithm must be one of none, comm, write, write-comm, "
                                 "write-comm-2, auto or mpi, not 'fast'"),
    (b"pario_cb_algorithm Write", "pario_cb_algorithm must be one of none, comm, write, write-comm, "
                                  "write-comm-2, auto or mpi, not 'Write'"),
    (b"pario_cb_shuffle=udp", "pario_cb_shuffle must be one of p2p, rma-fence or rma-lock, not 'udp'"),
    (b"pario_cb_shuffle write-comm", "pario_cb_shuffle must be one of p2p, rma-fence or rma-lock, "
                                     "not 'write-comm'"),
])
def test_hints_refuse_other_values(line, message):
    with pytest.raises(ParioError) as exc:
        parse_hints(b"# engine\ncb_nodes 2\n" + line + b"\n", "h")
    assert str(exc.value) == f"hints file h:3: {message}"


def test_pario_run_refuses_a_bad_engine_hint(tmp_path, run_under_pario):
    hints = tmp_path / "hints.txt"
    hints.write_text("pario_cb_algorithm write-comm\npario_cb_shuffle tcp\n")
    marker = tmp_path / "launched"
    proc = run_under_pario(tmp_path / "run.pario", ["mpirun", "-np", "2", "touch", str(marker)],
                           extra=["--hints", str(hints)])
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"pario: error: hints file {hints}:2: pario_cb_shuffle must be one of p2p, "
                           "rma-fence or rma-lock, not 'tcp'\n")
    assert not marker.exists()


# ---- the report, from synthetic records -------------------------------------------------------------

def engine_profile() -> Profile:
    """Four ranks; block.dat served by write-comm (two records of one communicator split in two
    per-rank halves would be summed the same way: counts are once per call), atomic.dat mostly
    given back to the MPI library, rank2.dat opened by one rank, plain.dat not touched by the engine."""
    ranks = pd.DataFrame({"wall": [10.0] * 4, "mpiio_write": [2.0] * 4, "mpi_coll": [1.0] * 4,
                          "mpi_coll_bytes": [1e6] * 4, "mpi_coll_calls": [10] * 4, "maxrss": [1e7] * 4})
    ranks.index.name = "rank"
    mpiio = pd.DataFrame({
        "id": [11, 12, 13, 14], "rank": [-1, -1, 2, -1], "nranks": [4, 4, 1, 4],
        "name": ["/scratch/run/block.dat", "/scratch/run/atomic.dat", "/scratch/run/rank2.dat",
                 "/scratch/run/plain.dat"],
        "write_time": [8.0, 1.0, 0.5, 0.25], "bytes_written": [64 << 20, 1 << 20, 4096, 4096],
        "coll_writes": [32, 12, 1, 4],
        "engine_writes": [8, 1, 1, 0], "engine_algorithm": [4, 1, 5, 0], "engine_shuffle": [1, 2, 3, 0],
        "engine_cycles": [16, 1, 1, 0], "engine_aggregators": [2, 1, 1, 0],
        "engine_setup_time": [0.5, 0.0, 0.0, 0.0],
        "engine_shuffle_time": [0.25, 0.001, 0.0, 0.0], "engine_write_time": [1.5, 0.002, 0.0001, 0.0],
        "engine_wait_time": [0.0123, 0.0, 0.0, 0.0],
        "engine_fallbacks": [0, 3, 0, 0], "engine_fb_atomic": [0, 2, 0, 0],
        "engine_fb_datatype": [0, 1, 0, 0],
    })
    job = Job(source="pario", path="/runs/engine.pario", exe="/bin/app", nprocs=4, start_time=0.0,
              end_time=10.0, runtime=10.0)
    return Profile(job=job, ranks=add_derived_rank_columns(ranks), files={"mpiio": mpiio})


BLOCK = ("block.dat: collective engine: write-comm/p2p, 8 calls, 16 cycles, 2 aggregators; setup 500 ms, "
         "shuffle 250 ms, "
         "write 1.5 s, wait 12.3 ms (summed over ranks)")
ATOMIC = ("atomic.dat: collective engine: none/rma-fence, 1 call, 1 cycle, 1 aggregator; setup 0 s, "
          "shuffle 1 ms, write 2 ms, wait 0 s (summed over ranks); 3 collective writes went to the MPI "
          "library: atomic mode (2), datatype or view beyond the engine's limits (1)")
RANK2 = ("rank2.dat: collective engine: write-comm-2/rma-lock, 1 call, 1 cycle, 1 aggregator; setup 0 s, "
         "shuffle 0 s, write 100 µs, wait 0 s (summed over ranks)")


def _unwrapped(text: str) -> str:
    """The terminal text with its wrapped paragraphs joined (continuation lines start with 4 blanks)."""
    return text.replace("\n    ", " ")


@pytest.mark.parametrize("width", [80, 120])
def test_terminal_shows_the_engine_per_file(width):
    run = analyze(engine_profile(), diagnosis=False)
    text = render_to_string([run], width=width, details=True)
    check(text, render_to_string([run], width=1000), width)  # width, plain numbers, no word cut
    files = text[text.index("\nFiles\n"):]
    engine = [line for line in _unwrapped(files).splitlines() if "collective engine" in line]
    assert engine == [BLOCK, ATOMIC, RANK2]  # most calls first; plain.dat has no engine line


def test_only_fallbacks_and_one_reason():
    p = engine_profile()
    m = p.files["mpiio"]
    for col, value in {"engine_writes": 0, "engine_fallbacks": 1, "engine_fb_atomic": 1,
                       "engine_fb_datatype": 0}.items():
        m[col][1] = value
    e = {f.name: f for f in engine_files(p)}["/scratch/run/atomic.dat"]
    assert e.served_text() == ""
    assert e.fallback_text() == "1 collective write went to the MPI library: atomic mode"
    text = render_to_string([analyze(p, diagnosis=False)], width=80)
    assert "atomic.dat: 1 collective write went to the MPI library: atomic mode\n" in text


def test_direct_is_shown_without_shuffle_or_cycles():
    """auto's 'direct' (algorithm 7): each rank wrote its own range; the shuffle code means nothing."""
    p = engine_profile()
    p.files["mpiio"]["engine_algorithm"][2] = 7
    p.files["mpiio"]["engine_cycles"][2] = 0
    e = {f.name: f for f in engine_files(p)}["/scratch/run/rank2.dat"]
    assert e.served_text() == ("collective engine: direct (auto: each rank wrote its own range), 1 call; "
                               "setup 0 s, shuffle 0 s, write 100 µs, wait 0 s (summed over ranks)")
    p.files["mpiio"]["engine_cycles"][2] = 3  # other calls of the file cycled: their counts shown
    (e,) = [f for f in engine_files(p) if f.name.endswith("rank2.dat")]
    assert e.served_text().startswith("collective engine: direct (auto: each rank wrote its own range), "
                                      "1 call, 3 cycles, 1 aggregator; ")


def test_records_of_one_file_are_added_up():
    """Per-rank records of a file (no reduction): counts and times summed, codes and aggregators by max."""
    p = engine_profile()
    m = p.files["mpiio"]
    half = m[[0]].copy()
    half["rank"][0] = 1
    m["rank"][0] = 0
    p.files["mpiio"] = Table.concat([m, half])
    (e,) = [f for f in engine_files(p) if f.name.endswith("block.dat")]
    assert (e.calls, e.cycles, e.aggregators, e.algorithm, e.shuffle) == (16, 32, 2, "write-comm", "p2p")
    assert (e.shuffle_time, e.write_time) == (0.5, 3.0)


def test_json_and_html():
    run = analyze(engine_profile(), diagnosis=False)
    data = json.loads(to_json([run], None))["runs"][0]["collective_engine"]
    assert [d["name"] for d in data] == ["/scratch/run/block.dat", "/scratch/run/atomic.dat",
                                         "/scratch/run/rank2.dat"]
    # a profile without the engine_calls_* counters (as older logs): the calls by algorithm are unknown
    assert data[1] == {"id": 12, "name": "/scratch/run/atomic.dat", "algorithm": "none",
                       "algorithm_calls": {}, "shuffle": "rma-fence", "calls": 1, "cycles": 1,
                       "aggregators": 1,
                       "setup_time": 0.0, "shuffle_time": 0.001, "write_time": 0.002, "wait_time": 0.0,
                       "fallbacks": 3,
                       "fallback_reasons": {"atomic": 2, "datarep": 0, "sequential": 0, "datatype": 1,
                                            "other": 0},
                       "variants": [],
                       "auto": {"explored": 0, "kept_one_cycle": None, "kept_several_cycles": None}}
    html = render_html([run], plotly_js="")
    assert "<td class=\"name\">/scratch/run/block.dat</td><td>" + BLOCK.split(": ", 1)[1] + "</td>" in html
    assert ("atomic mode (2), datatype or view beyond the engine&#39;s limits (1)</td>") in html


def test_no_engine_no_lines():
    p = engine_profile()
    m = p.files["mpiio"]
    p.files["mpiio"] = m.drop([c for c in m if c.startswith("engine_")])
    run = analyze(p, diagnosis=False)
    assert run.engine == ()
    assert "collective engine" not in render_to_string([run], width=80)
    assert json.loads(to_json([run], None))["runs"][0]["collective_engine"] == []


# ---- end to end: the block kernel under pario run --collective ---------------------------------------

def _pario(pario_cmd, env, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*pario_cmd, *args], env=env, capture_output=True, text=True, timeout=180, cwd=cwd)


@pytest.fixture
def clean_env(mpi_env):
    env = {k: v for k, v in mpi_env.items() if not k.startswith(("PARIO_", "ROMIO_HINTS", "OMPI_MCA_io"))}
    return {**env, "COLUMNS": "80"}


@pytest.mark.slow
def test_block_kernel_through_the_engine_and_its_report(tmp_path, pario_cmd, clean_env):
    """4 ranks, 3 segments x 4 transfers x 2 steps = 24 collective writes of 16 KiB per rank: the
    engine serves each call once (64 KiB per call: one cycle of half the 16 MiB buffer, one
    aggregator on this one node); the file is the kernel's pattern; the report says so."""
    data, log = tmp_path / "block.dat", tmp_path / "L.pario"
    proc = _pario(pario_cmd, clean_env, "run", "--collective", "write-comm", "--log", str(log), "--",
                  "mpirun", "-np", "4", str(kernel_exe("block")), *kernel_args("block", 4),
                  "--path", str(data))
    assert proc.returncode == 0, proc.stderr
    assert_file_is_pattern(data, expected_bytes("block", 4)[1])
    calls = 3 * (64 // 16) * STEPS

    profile = read_log(log)
    (rec,) = [r for r in profile.layer("mpiio").rows() if r["name"] == str(data)]
    # the MPI-IO counters count the served calls as they count the MPI library's
    assert rec["coll_writes"] == 4 * calls and rec["size_write_agg_10k_100k"] == 4 * calls
    assert rec["bytes_written"] == expected_bytes("block", 4)[0] and rec["write_time"] > 0

    report = _pario(pario_cmd, clean_env, "report", str(log))
    assert report.returncode == 0, report.stderr
    assert max(len(line) for line in report.stdout.splitlines()) <= 80
    (line,) = [ln for ln in _unwrapped(report.stdout).splitlines() if "collective engine" in ln]
    assert re.fullmatch(rf"block\.dat: collective engine: write-comm/p2p, {calls} calls, {calls} cycles, "
                        r"1 aggregator; setup [\d.]+ [nµm]?s, shuffle [\d.]+ [nµm]?s, write [\d.]+ [nµm]?s, "
                        r"wait [\d.]+ [nµm]?s "
                        r"\(summed over ranks\)", line), line

    out = _pario(pario_cmd, clean_env, "report", str(log), "--json", "-")
    (engine,) = json.loads(out.stdout)["runs"][0]["collective_engine"]
    assert {k: engine[k] for k in ("name", "algorithm", "shuffle", "calls", "cycles", "aggregators",
                                   "fallbacks")} == {"name": str(data), "algorithm": "write-comm",
                                                     "shuffle": "p2p", "calls": calls, "cycles": calls,
                                                     "aggregators": 1, "fallbacks": 0}
    assert engine["write_time"] > 0 and engine["shuffle_time"] > 0 and engine["setup_time"] > 0


@pytest.mark.slow
def test_cb_cycles_is_silent_when_the_engine_served_the_file(tmp_path, pario_cmd, clean_env):
    """test_diagnosis's agg1 run (one 16 MiB collective write through 1 aggregator with a 1 MiB
    buffer: 16 cycles, where MPIIO-CB-CYCLES fires) under the engine: write-comm splits the buffer in
    two (docs/collective.md), so 32 cycles of 512 KiB, overlapped."""
    data, log = tmp_path / "agg1.dat", tmp_path / "agg1.pario"
    proc = _pario(pario_cmd, clean_env, "run", "--collective", "write-comm", "--log", str(log), "--",
                  "mpirun", "-np", "4", "--mca", "io", "romio321", str(kernel_exe("block")), "--path",
                  str(data), "--layout", "contiguous", "--block-size", "4m", "--transfer-size", "4m",
                  "--collective", "--hints", "cb_nodes=1,cb_buffer_size=1048576,romio_cb_write=enable")
    assert proc.returncode == 0, proc.stderr
    assert_file_is_pattern(data, 16 << 20)
    profile = read_log(log)
    (e,) = engine_files(profile)
    assert (e.algorithm, e.calls, e.cycles, e.aggregators, e.fallbacks) == ("write-comm", 1, 32, 1, 0)
    assert "MPIIO-CB-CYCLES" not in {f.id for f in diagnose(profile)}


@pytest.mark.slow
def test_atomic_mode_falls_back_and_the_report_says_why(tmp_path, pario_cmd, clean_env, compile_program):
    """tests/programs/coll_atomic.c: two collective writes in atomic mode (the MPI library's), then
    one out of it (the engine's); the file holds every rank's bytes either way."""
    exe = compile_program("coll_atomic.c")
    out, log = tmp_path / "out", tmp_path / "atomic.pario"
    out.mkdir()
    nprocs, block = 3, 4096
    proc = _pario(pario_cmd, clean_env, "run", "--collective", "write-comm", "--log", str(log), "--",
                  "mpirun", "-np", str(nprocs), str(exe), str(out))
    assert proc.returncode == 0, proc.stderr
    expected = b"".join(bytes([call * 16 + r]) * block for call in range(3) for r in range(nprocs))
    assert (out / "atomic.dat").read_bytes() == expected
    report = _pario(pario_cmd, clean_env, "report", str(log))
    assert report.returncode == 0, report.stderr
    (line,) = [ln for ln in _unwrapped(report.stdout).splitlines() if "collective engine" in ln]
    assert line.startswith("atomic.dat: collective engine: write-comm/p2p, 1 call, 1 cycle, 1 aggregator; ")
    assert line.endswith(" (summed over ranks); 2 collective writes went to the MPI library: atomic mode")


@pytest.mark.slow
def test_default_hints_is_silent_when_the_engine_served_the_file(tmp_path, pario_cmd, clean_env):
    """test_diagnosis's 'defaults' run (OMPIO defaults, 1024 collective writes of 8 KiB per rank, where
    MPIIO-DEFAULT-HINTS fires) under the engine: those writes no longer ran on the library's defaults."""
    data, log = tmp_path / "defaults.dat", tmp_path / "defaults.pario"
    proc = _pario(pario_cmd, clean_env, "run", "--collective", "auto", "--log", str(log), "--",
                  "mpirun", "-np", "4", str(kernel_exe("block")), "--path", str(data), "--block-size", "16k",
                  "--transfer-size", "8k", "--segments", "256", "--collective")
    assert proc.returncode == 0, proc.stderr
    assert_file_is_pattern(data, 4 * 256 * (16 << 10))
    profile = read_log(log)
    (e,) = engine_files(profile)
    assert (e.algorithm, e.calls, e.fallbacks) == ("direct", 512, 0)
    assert "MPIIO-DEFAULT-HINTS" not in {f.id for f in diagnose(profile)}


@pytest.mark.slow
def test_every_algorithm_auto_picked_is_counted(tmp_path, compile_program, run_under_pario):
    """auto serves a file's two collective writes with two algorithms (direct, then none): the log
    counts the calls of each, and the report names both, not only the last."""
    from pario.analysis.engine import engine_files
    from pario.log import read_log

    exe = compile_program("coll_auto_mix.c")
    proc = run_under_pario(tmp_path / "mix.pario", ["mpirun", "-np", "4", str(exe), str(tmp_path)],
                           extra=["--collective", "auto"])
    assert proc.returncode == 0, proc.stderr
    n, nprocs = 4096, 4
    block = [bytes((r * 7 + i) % 251 for i in range(n)) for r in range(nprocs)]
    interleaved = bytes(block[i % nprocs][i // nprocs] for i in range(n * nprocs))
    assert (tmp_path / "mix.dat").read_bytes() == b"".join(block) + interleaved
    (engine,) = engine_files(read_log(tmp_path / "mix.pario"))
    assert engine.calls == 2 and engine.algorithm_calls == (("none", 1), ("direct", 1))
    # each algorithm with the shuffles its own calls used (direct has none)
    assert engine.served_text().startswith("collective engine: none:p2p (1), direct (1), 2 calls")


def test_engine_line_names_each_algorithm_with_its_own_shuffles():
    """auto served 69 calls with none (p2p) and 3 with comm (2 rma-fence, 1 p2p): each algorithm
    with the shuffles of its own calls; a log without per-variant counters says the one shuffle it
    knows is the last call's."""
    from pario.analysis.engine import EngineFile, VariantRun

    e = EngineFile(id=1, name="f", algorithm="comm", shuffle="rma-fence", calls=72, cycles=72, aggregators=2,
                   setup_time=0.0, shuffle_time=0.0, write_time=0.0, wait_time=0.0, fallbacks=0,
                   algorithm_calls=(("none", 69), ("comm", 3)),
                   variants=(VariantRun("none:p2p", 69, 1.0), VariantRun("comm:rma-fence", 2, 0.1),
                             VariantRun("comm:p2p", 1, 0.1)))
    assert e.served_text().startswith("collective engine: none:p2p (69), comm:rma-fence/p2p (3), 72 calls")
    old = EngineFile(**{**e.__dict__, "variants": ()})
    assert old.served_text().startswith(
        "collective engine: none (69), comm (3), the last call's shuffle rma-fence, 72 calls")
