"""Per-file hints (PARIO_HINTS ``[GLOB]`` sections): what the runtime injects at each file's
open, what it records per file, and what the MPI library ignored of it.

Real runs of tests/programs/hints_files.c (one MPI_File_open per file, a collective write,
rank 0 prints MPI_File_get_info).  By hand, first: Open MPI 4.1's MPI_File_get_info returns
the hints that were set, under ROMIO (``--mca io romio321``) as under OMPIO, so there only
ROMIO's own hints given to OMPIO are known to be ignored; MPICH's ROMIO reports the hints it
applies, so there a hint it drops
(``striping_factor`` on a UFS file, an unknown key) or overrides (``cb_nodes`` above the
number of hosts, ``romio_cb_write disable`` with ``romio_no_indep_rw true``) is ignored.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pario.analysis.mpihints import OMPIO_IGNORES, hints_in_effect, ignored_hints
from pario.launch.hints import hints_for, parse_hints_file
from pario.log import read_log

NP = 3
S = 4096
TIMEOUT = 120

HINTS = b"""# global: every file
cb_buffer_size 1048576
romio_cb_write enable
[*.h5]                 # base name
romio_cb_write disable
striping_factor 4
[*/ckpt/*]             # a '/': the path as opened
cb_buffer_size 2097152
[ckpt_*]               # later section wins for the same key
cb_buffer_size 4194304
[]
cb_nodes 1
[*.dat
"""
FILES = ("a.dat", "b.h5", "ckpt/ckpt_1.dat")
EXPECTED = {
    "a.dat": {"cb_buffer_size": "1048576", "romio_cb_write": "enable"},
    "b.h5": {"cb_buffer_size": "1048576", "romio_cb_write": "disable", "striping_factor": "4"},
    "ckpt/ckpt_1.dat": {"cb_buffer_size": "4194304", "romio_cb_write": "enable"},
}
REJECTED = [
    {"line": 11, "text": "[]", "reason": "empty glob in section header []"},
    {"line": 12, "text": "cb_nodes 1", "reason": "under a rejected section header"},
    {"line": 13, "text": "[*.dat",
     "reason": "section header not closed by ']' (expected [GLOB] alone on its line)"},
]


def _run(tmp_path: Path, hints: bytes, env: dict[str, str], launch: list[str], exe: Path,
         pario_cmd: list[str], files: tuple[str, ...] = FILES,
         ) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """exe under `pario run` with PARIO_HINTS set in the environment (not checked before launch)."""
    out = tmp_path / "out"
    (out / "ckpt").mkdir(parents=True)
    hints_file = tmp_path / "hints.txt"
    hints_file.write_bytes(hints)
    log = tmp_path / "run.pario"
    command = [*launch, str(exe), str(out), str(S), *files]
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", *command],
                          env={**env, "PARIO_HINTS": str(hints_file)}, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return log, out, proc


def _printed(stdout: str) -> dict[str, dict[str, str]]:
    """hints_files' lines "NAME:<TAB>k=v<TAB>k=v" -> {NAME: {k: v}}."""
    out = {}
    for line in stdout.splitlines():
        name, *pairs = line.split("\t")
        out[name.removesuffix(":")] = dict(kv.split("=", 1) for kv in pairs)
    return out


@pytest.mark.parametrize("io", ["romio321", "ompio"])
@pytest.mark.slow
def test_each_file_gets_its_sections_hints(io, tmp_path, compile_program, mpi_env, pario_cmd):
    exe = compile_program("hints_files.c")
    launch = ["mpirun", "-np", str(NP), "--mca", "io", io]
    log, out, proc = _run(tmp_path, HINTS, mpi_env, launch, exe, pario_cmd)
    # the same rules as pario run's check, applied to the paths as the program opened them
    parsed = parse_hints_file(HINTS.replace(b"[]\ncb_nodes 1\n[*.dat\n", b""), "h")
    assert {f: hints_for(parsed, f"{out}/{f}") for f in FILES} == EXPECTED
    # what the MPI library reported to the program itself: the injected hints took
    printed = _printed(proc.stdout)
    for f in FILES:
        assert {k: printed[f][k] for k in EXPECTED[f]} == EXPECTED[f]

    profile = read_log(log)
    mpiio = profile.layer("mpiio")
    names = {int(i): n for i, n in zip(mpiio["id"], mpiio["name"], strict=True)}
    injected = {names[fid]: h for fid, h in profile.injected_hints.items()}
    assert injected == {f"{out}/{f}": EXPECTED[f] for f in FILES}
    meta = profile.job.metadata
    assert meta["injected_hints"] == EXPECTED["a.dat"]  # the global hints only
    assert meta["injected_hint_sections"] == [
        {"glob": "*.h5", "hints": {"romio_cb_write": "disable", "striping_factor": "4"}},
        {"glob": "*/ckpt/*", "hints": {"cb_buffer_size": "2097152"}},
        {"glob": "ckpt_*", "hints": {"cb_buffer_size": "4194304"}},
    ]
    assert meta["rejected_hints"] == REJECTED and meta["rejected_hints_total"] == 3
    # the log's hints in effect are what the program was told, plus the MCA choice
    for fid, hints in profile.hints.items():
        name = names[fid].removeprefix(f"{out}/")
        assert hints == {**printed[name], "mca:io": io}
        # Open MPI reports every hint that was set, under either component: only ROMIO's own
        # hints, which OMPIO does not read, are ignored
        romio_only = [k for k in profile.injected_hints[fid] if k.startswith("romio_") and io == "ompio"]
        assert [i.key for i in ignored_hints(profile.injected_hints[fid], hints)] == romio_only
    shown = hints_in_effect(profile)
    cb_write = {"a.dat": "enable", "b.h5": "disable", "ckpt/ckpt_1.dat": "enable"}
    ignored = {f: (("romio_cb_write", v, v, OMPIO_IGNORES),) if io == "ompio" else ()
               for f, v in cb_write.items()}
    assert [(f.file, dict(f.injected), f.ignored) for f in shown.per_file] == [
        (f"{out}/{f}", EXPECTED[f], ignored[f]) for f in FILES]


MPICH_HINTS = b"""cb_buffer_size 1048576
cb_nodes 7
foo_bar 3
[*.h5]
romio_no_indep_rw true
romio_cb_write DISABLE
striping_factor 4
pario_cb_algorithm mpi
"""


@pytest.mark.slow
def test_hints_the_mpi_library_ignored_under_mpich(tmp_path, compile_program, mpi_env, mpich_runtime,
                                                   pario_cmd):
    mpiexec = shutil.which("mpiexec.mpich")
    assert mpiexec, "mpiexec.mpich not found: Debian's mpich is needed (make deps installs it)"
    exe = compile_program("hints_files.c", mpicc="mpicc.mpich")
    env = {k: v for k, v in mpi_env.items() if not k.startswith(("PARIO_", "OMPI_MCA_"))}
    env["PARIO_RUNTIME"] = str(mpich_runtime)
    log, out, proc = _run(tmp_path, MPICH_HINTS, env, [mpiexec, "-n", "2"], exe, pario_cmd,
                          files=("a.dat", "b.h5"))
    printed = _printed(proc.stdout)
    profile = read_log(log)
    by_name = {f.file: f for f in hints_in_effect(profile).per_file}
    a, b = by_name[f"{out}/a.dat"], by_name[f"{out}/b.h5"]
    assert dict(a.injected) == {"cb_buffer_size": "1048576", "cb_nodes": "7", "foo_bar": "3"}
    assert dict(b.injected) == {"cb_buffer_size": "1048576", "cb_nodes": "7", "foo_bar": "3",
                                "romio_no_indep_rw": "true", "romio_cb_write": "DISABLE",
                                "striping_factor": "4", "pario_cb_algorithm": "mpi"}
    # ROMIO caps cb_nodes at the hosts of cb_config_list (one here), drops the keys it does not
    # know or cannot apply on UFS, and forces collective writes with romio_no_indep_rw;
    # pario's own engine hint is not the library's to take
    assert printed["a.dat"]["cb_nodes"] == "1" and "striping_factor" not in printed["b.h5"]
    assert printed["b.h5"]["romio_cb_write"] == "enable"
    assert a.ignored == (("cb_nodes", "7", "1", ""), ("foo_bar", "3", None, ""))
    assert b.ignored == (("cb_nodes", "7", "1", ""), ("foo_bar", "3", None, ""),
                         ("romio_cb_write", "DISABLE", "enable", ""), ("striping_factor", "4", None, ""))
    # wide enough for the temporary directory's path whole (it is longer under pytest-xdist)
    text = subprocess.run([*pario_cmd, "report", str(log)], env={**mpi_env, "COLUMNS": "240"},
                          capture_output=True, text=True, timeout=TIMEOUT).stdout
    flat = " ".join(w for w in text.split() if w != "│")
    assert (f"{out}/b.h5: injected: cb_buffer_size=1048576 cb_nodes=7 foo_bar=3 romio_no_indep_rw=true "
            "romio_cb_write=DISABLE striping_factor=4 pario_cb_algorithm=mpi; ignored by the MPI library: "
            "cb_nodes (asked 7, in effect 1), foo_bar (asked 3, not reported), "
            "romio_cb_write (asked DISABLE, in effect enable), "
            "striping_factor (asked 4, not reported)") in flat


def test_pario_run_refuses_a_bad_section_before_launch(tmp_path, compile_program, run_under_pario):
    exe = compile_program("hints_files.c")
    hints = tmp_path / "hints.txt"
    hints.write_bytes(b"cb_nodes 2\n[*.h5] striping_factor 4\n")
    out = tmp_path / "out"
    out.mkdir()
    proc = run_under_pario(tmp_path / "x.pario", ["mpirun", "-np", "2", str(exe), str(out), "10"],
                           extra=["--hints", str(hints)])
    assert proc.returncode == 2
    assert proc.stderr == (f"pario: error: hints file {hints}:2: section header '[*.h5] striping_factor 4' "
                           "not closed by ']' (expected [GLOB] alone on its line)\n")
    assert list(out.iterdir()) == []
