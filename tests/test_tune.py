"""`pario tune` end to end: the space, the objective read from real logs, real studies of the
block kernel under mpirun (their stored trials, hints files and logs), resuming a SIGKILLed study, journal
and PostgreSQL storage, failed trials, bad options, and the pract strategy.

The kernel writes SEGMENTS x BLOCK bytes per rank to one shared file, so every write-bw value can be
recomputed from the trial's own log."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import statistics
import subprocess
import time
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from kernel_helpers import kernel_exe
from pario.errors import ParioError
from pario.log import read_log
from pario.tune.objective import NoObjective, measure
from pario.tune.pract import held_out_error
from pario.tune.space import (
    Detected,
    apply_space_file,
    build_space,
    enumerate_configs,
)
from pario.tune.storage import open_storage

ROOT = Path(__file__).resolve().parents[1]
FLAKY = ROOT / "tests" / "programs" / "tune_flaky.sh"
SEGMENTS, BLOCK = 256, 8192
KERNEL_ARGS = ["--block-size", "8k", "--transfer-size", "8k", "--segments", str(SEGMENTS)]
TIMEOUT = 240  # seconds for one `pario tune`; a hang fails instead of blocking the suite
MIB = 1 << 20
SIZES = tuple(str(m * MIB) for m in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512))
BUDGET_ROLES = ("default", "search")


def kernel(np_: int, *before: str) -> list[str]:
    """mpirun of the block kernel (``before``: a wrapper put between mpirun and the kernel)."""
    return ["mpirun", "--oversubscribe", "-np", str(np_), *before, str(kernel_exe("block")), *KERNEL_ARGS]


def tune(pario_cmd: list[str], env: dict[str, str], cwd: Path, *args: str,
         timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([*pario_cmd, "tune", *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def sqlite_url(cwd: Path) -> str:
    return f"sqlite:///{cwd / '.pario' / 'tune.db'}"


def trials_of(storage, name: str) -> list:
    return sorted(optuna.load_study(study_name=name, storage=storage).get_trials(), key=lambda t: t.number)


def budget_trials(trials: list) -> list:
    return [t for t in trials if t.user_attrs.get("role") in BUDGET_ROLES
            and t.state in (TrialState.COMPLETE, TrialState.FAIL)]


def hints_of(config: dict[str, str]) -> dict[str, str]:
    """The MPI-IO hints a configuration sets: its dimensions that are not MCA, engine or lfs settings."""
    return {k: v for k, v in config.items()
            if v != "default" and not k.startswith(("mca.", "pario.", "lfs."))}


def hints_file_entries(path: Path) -> dict[str, str]:
    lines = [ln for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    return dict(ln.split(" ", 1) for ln in lines)


def data_file_hints(profile, table: dict) -> dict:
    """``table`` (effective or injected hints by file id) for the kernel's data file."""
    mpiio = profile.layer("mpiio")
    ids = [int(i) for i, n in zip(mpiio["id"], mpiio["name"], strict=True)
           if str(n).endswith("/pario-block.dat")]
    assert len(ids) == 1, list(mpiio["name"])
    return dict(table.get(ids[0], {}))


def check_values_from_logs(trials: list) -> None:
    """Every finished trial's values are the write-bw of its own logs, run by run."""
    for t in trials:
        if t.state != TrialState.COMPLETE:
            continue
        if t.user_attrs["role"] == "duplicate":
            # a configuration the sampler proposed again: not run, told the median of its samples
            earlier = [v for e in trials if e.number < t.number and e.state == TrialState.COMPLETE
                       and e.user_attrs["config"] == t.user_attrs["config"] for v in e.user_attrs["values"]]
            assert earlier and "runs" not in t.user_attrs and t.value == statistics.median(earlier)
            continue
        runs = t.user_attrs["runs"]
        assert [r["status"] for r in runs] == ["ok"] * len(runs)
        assert t.user_attrs["values"] == [measure(read_log(Path(r["log"])), "write-bw").value for r in runs]
        assert t.value == t.user_attrs["values"][0]


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines, proc.stderr
    return lines[-1]


# ---- 1. the space -----------------------------------------------------------------------

FCOLL = ("vulcan", "dynamic", "two_phase")
OMPI4 = Detected(mpi="openmpi", io_components=("ompio", "romio321"), default_io="ompio",
                 fcoll_components=FCOLL, fs_type="ext4", directory="/data", ranks=4, nodes=1)
ROMIO_WHEN = ("mca.io", ("romio321",))
OMPIO_WHEN = ("mca.io", ("ompio", "default"))
ALGOS = ("none", "comm", "write", "write-comm", "write-comm-2", "auto")


def dims(space) -> list[tuple]:
    return [(d.name, d.kind, d.choices, d.when) for d in space.dimensions]


@pytest.mark.slow
def test_space_of_open_mpi_with_romio_and_ompio():
    space = build_space(OMPI4, "write-bw")
    assert dims(space) == [
        ("mca.io", "mca", ("default", "ompio", "romio321"), None),
        ("cb_nodes", "hint", ("default", "1", "2", "3", "4"), None),
        ("cb_buffer_size", "hint", ("default", *SIZES), None),
        ("romio_cb_write", "hint", ("default", "enable", "disable", "automatic"), ROMIO_WHEN),
        ("romio_ds_write", "hint", ("default", "enable", "disable", "automatic"), ROMIO_WHEN),
        ("cb_config_list", "hint", ("default", "*:1", "*:2", "*:4", "*:*"), ROMIO_WHEN),
        ("mca.fcoll", "mca", ("default", *FCOLL), OMPIO_WHEN),
        ("mca.io_ompio_num_aggregators", "mca", ("default", "1", "2", "3", "4"), OMPIO_WHEN),
        ("mca.io_ompio_bytes_per_agg", "mca", ("default", *SIZES), OMPIO_WHEN),
        ("pario.collective", "collective", ("default", *ALGOS), None),
        ("pario.shuffle", "collective", ("default", "p2p", "rma-fence", "rma-lock"),
         ("pario.collective", ALGOS)),
    ]
    assert space.notes == ("striping left out: the output directory is on ext4, not Lustre",)
    # by hand: cb_nodes 5 x cb_buffer_size 11 x the engine (default, or 6 algorithms x 4 shuffles) x the I/O
    # component: default and ompio (4 fcoll x 5 aggregators x 11 sizes each), romio321 (4 x 4 x 5)
    assert space.size() == 5 * 11 * (1 + 6 * 4) * (2 * 4 * 5 * 11 + 4 * 4 * 5)
    assert space.size() == len(enumerate_configs(space, None))
    # conditions: ROMIO's hints only under romio321, OMPIO's variables only under OMPIO (the default)
    config = {d.name: d.choices[-1] for d in space.dimensions}
    assert space.normalise(config)["romio_cb_write"] == "automatic"  # mca.io is romio321 (last)
    assert space.normalise(config)["mca.fcoll"] == "default"
    ompio = space.normalise({**config, "mca.io": "default"})
    assert ompio["romio_cb_write"] == "default" and ompio["mca.fcoll"] == "two_phase"
    # reads: their twins instead, and no collective-write engine
    names = [d.name for d in build_space(OMPI4, "read-bw").dimensions]
    assert "romio_cb_read" in names and "romio_ds_read" in names
    assert "romio_cb_write" not in names and "pario.collective" not in names


def test_space_of_mpich_has_no_mca_dimensions():
    space = build_space(Detected(mpi="mpich", fs_type="ext4", ranks=4), "write-bw")
    assert space.names() == ["cb_nodes", "cb_buffer_size", "romio_cb_write", "romio_ds_write",
                             "cb_config_list", "pario.collective", "pario.shuffle"]
    assert all(d.when is None for d in space.dimensions if d.kind == "hint")
    assert "MPICH: its MPI-IO is ROMIO; hints are injected per file (PARIO_HINTS)" in space.notes


def test_space_on_lustre_adds_striping():
    from dataclasses import replace

    lustre = replace(OMPI4, fs_type="lustre", has_lfs=True)
    added = {d.name: (d.kind, d.choices) for d in build_space(lustre).dimensions}
    units = ("default", *(str(m * MIB) for m in (1, 4, 16, 64)))
    counts = ("default", "1", "2", "4", "8", "16")  # up to 4 x ranks
    assert added["striping_factor"] == ("hint", counts)
    assert added["striping_unit"] == ("hint", units)
    assert added["lfs.stripe_count"] == ("stripe", counts)
    assert added["lfs.stripe_size"] == ("stripe", units)
    no_lfs = build_space(replace(lustre, has_lfs=False))
    assert "striping_factor" in no_lfs.names() and "lfs.stripe_count" not in no_lfs.names()
    assert any("lfs not found" in n for n in no_lfs.notes)


def test_space_file_narrows_extends_and_counts(tmp_path: Path):
    spec = tmp_path / "space.toml"
    spec.write_text('only = ["mca.io", "cb_nodes", "romio_cb_write", "striping_factor"]\n'
                    '[dimensions.cb_nodes]\nvalues = [1, 2]\n'
                    '[dimensions.striping_factor]\nkind = "hint"\nvalues = [2, "4"]\n')
    space = apply_space_file(build_space(OMPI4), spec)
    assert dims(space) == [
        ("mca.io", "mca", ("default", "ompio", "romio321"), None),
        ("cb_nodes", "hint", ("default", "1", "2"), None),
        ("romio_cb_write", "hint", ("default", "enable", "disable", "automatic"), ROMIO_WHEN),
        ("striping_factor", "hint", ("default", "2", "4"), None),
    ]
    configs = enumerate_configs(space)
    # (default, ompio) x 3 cb_nodes x 3 striping + romio321 x 3 x 4 romio_cb_write x 3 = 18 + 36
    assert len(configs) == 54 == space.size()
    assert configs[0] == space.default()
    assert len({json.dumps(c, sort_keys=True) for c in configs}) == 54
    assert all(c["romio_cb_write"] == "default" for c in configs if c["mca.io"] != "romio321")


@pytest.mark.parametrize("text, message", [
    ("only = [\n", "not valid TOML"),
    ('[dimensions.my_hint]\nvalues = ["1"]\n', "is not in the detected space; a new dimension needs kind"),
    ('only = ["cb_nodes", "striping_factor"]\n', "'only' names striping_factor, not in the space"),
])
def test_space_file_errors_are_one_line(tmp_path: Path, text: str, message: str):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    with pytest.raises(ParioError) as err:
        apply_space_file(build_space(OMPI4), spec)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith(f"{spec}: ")


@pytest.mark.slow
def test_show_space(tmp_path: Path, pario_cmd, mpi_env):
    # wide enough that no line wraps (test_terminal_width checks it at 80 and 120 columns)
    proc = tune(pario_cmd, {**mpi_env, "COLUMNS": "300"}, tmp_path, "--show-space", "--", *kernel(4))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "MPI library: Open MPI"
    assert lines[1].startswith("Open MPI I/O components: ") and lines[1].endswith("(default ompio)")
    assert {"romio321", "ompio"} <= set(lines[1].split(": ")[1].split(" (")[0].split(", "))
    assert lines[2].startswith(f"output directory: {tmp_path} (")
    assert "ranks: 4, nodes: 1" in lines
    assert "cb_nodes [hint]: default, 1, 2, 3, 4" in lines
    assert ("cb_buffer_size [hint]: default, 1M, 2M, 4M, 8M, 16M, 32M, 64M, 128M, 256M, 512M") in lines
    assert "romio_cb_write [hint]: default, enable, disable, automatic  (when mca.io is romio321)" in lines
    assert ("pario.collective [collective]: default, none, comm, write, write-comm, write-comm-2, auto"
            in lines)
    assert ("mca.io_ompio_num_aggregators [mca]: default, 1, 2, 3, 4  (when mca.io is ompio or default)"
            in lines)
    fcoll = next(ln for ln in lines if ln.startswith("mca.fcoll [mca]: "))
    fcoll_choices = len(fcoll.split(": ", 1)[1].split("  (")[0].split(", "))
    count = 5 * 11 * (1 + 6 * 4) * (2 * fcoll_choices * 5 * 11 + 4 * 4 * 5)  # as in the hand-made space above
    assert f"{count} configurations" in lines
    assert lines[-1].startswith("note: striping left out: the output directory is on ")
    assert not (tmp_path / ".pario" / "tune.db").exists()  # nothing run, nothing stored


# ---- 2. the objective ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def block_log(tmp_path_factory, pario_cmd, mpi_env):
    out = tmp_path_factory.mktemp("objective")
    log = out / "block.pario"
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", *kernel(4)], env=mpi_env, cwd=out,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    return read_log(log), out


@pytest.mark.slow
def test_write_bw_is_the_kernels_bytes_over_the_slowest_rank(block_log):
    profile, out = block_log
    m = measure(profile, "write-bw")
    data = str(out / "pario-block.dat")
    assert m.files == (data,)  # the MPI library's lock-test files are not measured
    assert m.bytes == SEGMENTS * BLOCK * 4
    # independently: the shared MPI-IO record of the file (outermost layer); its slowest rank's I/O time
    # is all write + metadata (nothing read), and with one file the slowest rank's time is the maximum
    mpiio = profile.layer("mpiio")
    rec = mpiio[mpiio["name"] == data].row(0)
    assert rec["rank"] == -1 and rec["bytes_written"] == SEGMENTS * BLOCK * 4 and rec["read_time"] == 0
    slowest = float(rec["slowest_rank_time"])
    assert slowest >= (rec["write_time"] + rec["meta_time"]) / 4 > 0
    assert m.seconds == pytest.approx(slowest, rel=1e-9)
    assert m.value == pytest.approx(SEGMENTS * BLOCK * 4 / slowest, rel=1e-9)
    assert measure(profile, "io-time").value == pytest.approx(slowest, rel=1e-9)
    assert measure(profile, "wall-time").value == pytest.approx(float(profile.job.runtime))
    with pytest.raises(NoObjective, match="no bytes read"):
        measure(profile, "read-bw")


def test_files_glob_base_name_or_path(block_log):
    profile, out = block_log
    whole = measure(profile, "write-bw")
    for glob in ("pario-block.dat", "*.dat", "pario-block.dat*", f"{out}/*", "*/pario-block.dat"):
        assert measure(profile, "write-bw", glob) == whole, glob
    # without '/': the base name, whole; with '/': the whole path
    for glob in ("pario-block", "block.dat", "objective*/pario-block.dat", "/nowhere/*"):
        with pytest.raises(NoObjective, match=re.escape(f"no file matches --files {glob}")):
            measure(profile, "write-bw", glob)


# ---- 3. a real study ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def random_study(tmp_path_factory, pario_cmd, mpi_env):
    cwd = tmp_path_factory.mktemp("study")
    proc = tune(pario_cmd, mpi_env, cwd, "--budget", "4", "--strategy", "random", "--seed", "3",
                "--study", "rs", "--json", "out.json", "--", *kernel(4))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return cwd, proc, json.loads((cwd / "out.json").read_text())


@pytest.mark.slow
def test_study_json_and_storage_agree(random_study):
    cwd, proc, data = random_study
    assert data["study"] == "rs" and data["objective"] == "write-bw" and data["strategy"] == "random"
    assert data["command"] == kernel(4)
    rows = data["trials"]
    assert [r["role"] for r in rows if r["role"] in BUDGET_ROLES] == ["default", "search", "search", "search"]
    assert rows[0]["number"] == 0 and rows[0]["role"] == "default"
    assert set(rows[0]["config"].values()) == {"default"}
    stored = trials_of(sqlite_url(cwd), "rs")
    assert len(budget_trials(stored)) == 4
    assert [(t.number, t.user_attrs["role"], t.state.name.lower(), t.user_attrs["config"],
             t.user_attrs["values"]) for t in stored] == [
        (r["number"], r["role"], r["state"], r["config"], r["values"]) for r in rows]
    # verification: the best and the default end with at least 3 samples each
    assert sum(len(r["values"]) for r in rows if set(r["config"].values()) == {"default"}) >= 3
    assert f"study rs: 4 trial(s) in the budget, 0 failed, {len(rows)} in all" in proc.stdout


@pytest.mark.slow
def test_study_values_are_those_of_each_trials_log(random_study):
    cwd, _, _ = random_study
    trials = trials_of(sqlite_url(cwd), "rs")
    assert all(t.state == TrialState.COMPLETE for t in trials)
    check_values_from_logs(trials)
    for t in trials:
        assert Path(t.user_attrs["runs"][0]["log"]).parent.parent == cwd / ".pario" / "tune" / "rs" / \
            f"trial-{t.number:04d}"


@pytest.mark.slow
def test_study_hints_files_are_the_configs_hints(random_study):
    cwd, _, _ = random_study
    for t in trials_of(sqlite_url(cwd), "rs"):
        hints = hints_of(t.user_attrs["config"])
        path = cwd / ".pario" / "tune" / "rs" / f"trial-{t.number:04d}" / "hints.txt"
        if hints:
            assert hints_file_entries(path) == hints, t.number
        else:
            assert not path.exists(), t.number


@pytest.mark.slow
def test_study_romio_trial_has_its_hints_in_effect(random_study):
    """The proof that a configuration is applied: under romio321 ROMIO reports the injected hints."""
    cwd, _, _ = random_study
    trials = trials_of(sqlite_url(cwd), "rs")
    romio = [t for t in trials if t.user_attrs["config"]["mca.io"] == "romio321"
             and t.user_attrs["config"]["cb_buffer_size"] != "default"]
    assert romio, [t.user_attrs["config"] for t in trials]
    for t in romio:
        profile = read_log(Path(t.user_attrs["runs"][0]["log"]))
        asked = hints_of(t.user_attrs["config"])
        assert data_file_hints(profile, profile.injected_hints) == asked
        effective = data_file_hints(profile, profile.hints)
        assert effective["cb_buffer_size"] == asked["cb_buffer_size"]
        for key in ("romio_cb_write", "romio_ds_write", "cb_nodes"):
            if key in asked:
                assert effective[key] == asked[key], key
    default = trials[0]
    profile = read_log(Path(default.user_attrs["runs"][0]["log"]))
    assert "cb_buffer_size" not in data_file_hints(profile, profile.hints)  # OMPIO reports no such hint


# ---- 4. persistence --------------------------------------------------------------------------

def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL pario tune's process group and the groups of its runs (each run is a session of its own)."""
    groups = {os.getpgid(p) for p in descendants(proc.pid) if _alive(p)} | {proc.pid}
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=30)


def _alive(pid: int) -> bool:
    try:
        os.getpgid(pid)
        return True
    except ProcessLookupError:
        return False


@pytest.mark.slow
def test_killed_study_resumes(tmp_path: Path, pario_cmd, mpi_env):
    args = ["--budget", "6", "--strategy", "random", "--seed", "5", "--study", "p", "--no-verify", "--",
            *kernel(2)]
    err = tmp_path / "first.err"
    with open(err, "wb") as fe:
        proc = subprocess.Popen([*pario_cmd, "tune", *args], env=mpi_env, cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=fe, start_new_session=True)
    url = sqlite_url(tmp_path)
    deadline = time.monotonic() + 120
    try:
        while True:  # until 2 trials are finished and the next one is running
            assert time.monotonic() < deadline, "the study did not finish 2 trials in 120 s"
            assert proc.poll() is None, "pario tune ended before it was killed: " + err.read_text()
            try:  # as a second worker would: pario's storage, which may find its tables half-made
                trials = trials_of(open_storage(url), "p")
            except KeyError:  # the study is not there yet
                trials = []
            done = [t for t in trials if t.state == TrialState.COMPLETE]
            if len(done) >= 2 and any(t.state == TrialState.RUNNING for t in trials):
                break
            time.sleep(0.2)
    finally:
        kill_tree(proc)
    before = trials_of(url, "p")
    finished = [(t.number, t.value, t.user_attrs["values"]) for t in before if t.state == TrialState.COMPLETE]
    running = [t.number for t in before if t.state == TrialState.RUNNING]
    assert len(finished) >= 2 and running

    again = tune(pario_cmd, mpi_env, tmp_path, *args)
    assert again.returncode in (0, 1), again.stderr
    assert "Traceback" not in again.stderr
    after = trials_of(url, "p")
    # the interrupted trial does not count (its configuration runs again), whether or not it kept its role
    assert len([t for t in budget_trials(after) if "interrupted" not in t.user_attrs.get("error", "")]) == 6
    by_number = {t.number: t for t in after}
    assert [(n, by_number[n].value, by_number[n].user_attrs["values"]) for n, _, _ in finished] == finished
    for n in running:
        assert by_number[n].state == TrialState.FAIL
        assert "interrupted" in by_number[n].user_attrs["error"]
    check_values_from_logs(after)


@pytest.mark.slow
def test_journal_storage(tmp_path: Path, pario_cmd, mpi_env):
    journal = tmp_path / "studies.journal"
    proc = tune(pario_cmd, mpi_env, tmp_path, "--budget", "2", "--strategy", "random", "--seed", "1",
                "--study", "j", "--storage", f"journal:{journal}", "--no-verify", "--", *kernel(2))
    assert proc.returncode in (0, 1), proc.stderr  # 1: no winner without verification is allowed
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    trials = trials_of(JournalStorage(JournalFileBackend(str(journal))), "j")
    assert [t.user_attrs["role"] for t in budget_trials(trials)] == ["default", "search"]
    assert all(t.state == TrialState.COMPLETE for t in trials)
    check_values_from_logs(trials)
    assert not (tmp_path / ".pario" / "tune.db").exists()


@pytest.mark.slow
def test_postgres_storage_with_two_jobs(tmp_path: Path, pario_cmd, mpi_env, postgres):
    proc = tune(pario_cmd, mpi_env, tmp_path, "--budget", "4", "--jobs", "2", "--strategy", "random",
                "--seed", "2", "--study", "pg", "--storage", postgres.url, "--no-verify", "--", *kernel(2))
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    from optuna.storages import RDBStorage

    storage = RDBStorage(postgres.url)
    assert storage.engine.dialect.name == "postgresql"
    trials = trials_of(storage, "pg")
    assert len(budget_trials(trials)) == 4
    assert all(t.state == TrialState.COMPLETE for t in trials)
    check_values_from_logs(trials)
    # two at once: some trials' runs overlap in time
    spans = [(t.datetime_start, t.datetime_complete) for t in trials]
    assert any(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1:])
    assert not (tmp_path / ".pario" / "tune.db").exists()


# ---- 5. failures ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_failing_and_hanging_trials(tmp_path: Path, pario_cmd, mpi_env):
    """tune_flaky.sh fails under romio321 and hangs with cb_nodes 2: those trials fail, the study goes on."""
    spec = tmp_path / "space.toml"
    spec.write_text('only = ["mca.io", "cb_nodes"]\n[dimensions.cb_nodes]\nvalues = [1, 2]\n'
                    '[dimensions."mca.io"]\nvalues = ["romio321"]\n')
    proc = tune(pario_cmd, mpi_env, tmp_path, "--budget", "6", "--strategy", "grid", "--seed", "1",
                "--study", "f", "--space", str(spec), "--timeout", "8", "--no-verify", "--json", "out.json",
                "--", *kernel(2, str(FLAKY)))
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    trials = trials_of(sqlite_url(tmp_path), "f")
    assert len(budget_trials(trials)) == 6
    seen = set()
    for t in budget_trials(trials):
        c = t.user_attrs["config"]
        seen.add((c["mca.io"], c["cb_nodes"]))
        run = t.user_attrs["runs"][0]
        if c["mca.io"] == "romio321":
            assert t.state == TrialState.FAIL and run["status"] == "failed"
            assert run["error"].startswith("exit code ")
            assert "tune_flaky: refusing to run under OMPI_MCA_io=romio321" in run["error"]
            messages = Path(run["log"]).parent / "stderr.txt"
            assert run["error"].endswith(f"\nall its messages: {messages}") and messages.is_file()
        elif c["cb_nodes"] == "2":
            assert t.state == TrialState.FAIL and run["status"] == "timeout"
            assert run["error"].startswith("killed after the timeout of 8 s")
            assert run["seconds"] < 8 + 10
        else:
            assert t.state == TrialState.COMPLETE, run
    assert seen == {(io, n) for io in ("default", "romio321") for n in ("default", "1", "2")}
    check_values_from_logs(trials)
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["verdict"] in ("within-noise", "default-best")  # without verification, no winner
    assert hints_of(data["best"]["config"]) in ({}, {"cb_nodes": "1"})
    failed = [r for r in data["trials"] if r["state"] == "fail"]
    assert len(failed) == 4 and all(r["error"] for r in failed)
    # the hanging runs were killed with their whole process group: no sleeper left behind (its
    # odd length tells it from another program's sleep on the machine)
    assert not [p for p in descendants(1) if _cmdline(p).strip() == "sleep 120.417"]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.slow
def test_program_without_files_fails_every_trial(tmp_path: Path, pario_cmd, mpi_env, compile_program):
    exe = compile_program("mpi_comm.c")
    proc = tune(pario_cmd, mpi_env, tmp_path, "--budget", "2", "--seed", "1", "--study", "n", "--",
                "mpirun", "--oversubscribe", "-np", "2", str(exe))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "Warning" not in proc.stderr
    # the default failed: the search stops there instead of spending the budget
    assert "study n: 1 trial(s) in the budget, 1 failed, 1 in all" in proc.stdout
    assert "No configuration ran successfully (trial 0: failed: the program did no file I/O)" in proc.stdout
    assert "The default configuration failed, so no other was tried" in proc.stdout
    trials = trials_of(sqlite_url(tmp_path), "n")
    assert [t.state for t in trials] == [TrialState.FAIL]
    # not on a terminal: one plain line per trial, not a bar wrapped at 80 columns
    progress = [ln for ln in proc.stderr.splitlines() if ln.startswith("pario tune: ")]
    assert progress == ["pario tune: tuning 1/2: trial 0 (default): failed"], proc.stderr
    assert proc.stderr.splitlines()[proc.stderr.splitlines().index(progress[0]) + 1] == "    default"


@pytest.mark.parametrize("args, message", [
    (["--budget", "0", "--", "mpirun", "-np", "2", "x"],
     "pario tune: error: argument --budget: must be at least 1"),
    (["--objective", "foo", "--", "mpirun", "-np", "2", "x"],
     "pario tune: error: argument --objective: invalid choice: 'foo'"),
    ([], "pario: error: no command to tune: pario tune [options] -- mpirun -np N ./app"),
    (["--storage", "foo://", "--"], "pario: error: --storage foo://: expected sqlite:///PATH"),
    (["--", "./no-such-program"], "pario: error: command not found: ./no-such-program"),
    (["--files", "", "--"], "pario: error: --files: an empty glob"),
])
@pytest.mark.slow
def test_bad_options(tmp_path: Path, pario_cmd, mpi_env, args: list[str], message: str):
    if args and args[-1] == "--":
        args = [*args, *kernel(2)]
    proc = tune(pario_cmd, mpi_env, tmp_path, *args, timeout=60)
    assert proc.returncode == 2
    last = one_error_line(proc)
    assert last.startswith(message), proc.stderr
    if last.startswith("pario: error"):
        assert len([ln for ln in proc.stderr.splitlines() if ln.strip()]) == 1, proc.stderr
    assert not (tmp_path / ".pario").exists()


# ---- 7. pract --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_pract_study(tmp_path: Path, pario_cmd, mpi_env):
    proc = tune(pario_cmd, mpi_env, tmp_path, "--budget", "8", "--strategy", "pract", "--seed", "4",
                "--study", "pr", "--no-verify", "--", *kernel(2))
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    study = optuna.load_study(study_name="pr", storage=sqlite_url(tmp_path))
    trials = sorted(study.get_trials(), key=lambda t: t.number)
    assert len(budget_trials(trials)) == 8
    search = [t for t in trials if t.user_attrs.get("role") == "search"]
    predicted = [t.user_attrs.get("predicted") is not None for t in search]
    # startup(8) = 4 random trials after the default, then the model's picks, each with its prediction
    assert predicted == [False] * 4 + [True] * 3, [(t.number, t.state.name) for t in search]
    for t in search[4:]:
        assert t.user_attrs["predicted"] > 0
    check_values_from_logs(trials)
    error = held_out_error(study)
    assert error is not None and math.isfinite(error) and error >= 0


def test_best_keeps_only_the_settings_that_matter():
    """With ROMIO's collective buffering disabled for every direction searched, its aggregator
    and buffer settings are noise: the best configuration leaves them out."""
    from pario.tune.space import build_space

    config = {"mca.io": "romio321", "romio_cb_write": "disable", "cb_nodes": "2", "cb_buffer_size": str(MIB)}
    writes = build_space(OMPI4, "write-bw")
    kept = {k: v for k, v in writes.relevant(config).items() if v != "default"}
    assert kept == {"mca.io": "romio321", "romio_cb_write": "disable"}
    on = writes.relevant({**config, "romio_cb_write": "enable"})
    enabled = {k: v for k, v in on.items() if v != "default"}
    assert enabled == {**config, "romio_cb_write": "enable"}
    # reading too: collective buffering still serves the reads
    both = build_space(OMPI4, "io-time")
    assert both.relevant(config)["cb_nodes"] == "2"


@pytest.mark.slow
def test_a_command_that_starts_its_mpi_jobs_itself_is_tuned(tmp_path: Path, pario_cmd, mpi_env):
    """`pario tune -- pario kernel block --np 2`: the command's own process (pario kernel) holds no
    I/O, the MPI job it starts does; each trial is measured on that job's log (trial.step1.pario),
    and its value is that log's write bandwidth."""
    args = ["--budget", "2", "--strategy", "random", "--seed", "3", "--study", "k", "--no-verify", "--",
            *pario_cmd, "kernel", "block", "--np", "2", *KERNEL_ARGS]
    done = tune(pario_cmd, mpi_env, tmp_path, *args)
    assert done.returncode == 0, done.stderr
    trials = budget_trials(trials_of(sqlite_url(tmp_path), "k"))
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 2
    for t in trials:
        (run,) = t.user_attrs["runs"]
        log = Path(run["log"])
        step = log.with_name("trial.step1.pario")
        assert run["steps"] == 1 and step.exists()
        m = measure(read_log(step), "write-bw")
        assert t.value == m.value and m.bytes == 2 * SEGMENTS * BLOCK


@pytest.mark.slow
@pytest.mark.parametrize("before", ["absent", "there"])
def test_every_run_finds_the_files_as_the_first_run_did(tmp_path: Path, pario_cmd, mpi_env, before: str):
    """The program's output file, absent before the study, is removed before each run (every run
    creates it, as the default's did, instead of overwriting it in the page cache); a file that was
    there before is overwritten by every run and never removed.  A wrapper notes what each run
    found."""
    data, states = tmp_path / "b.dat", tmp_path / "states"  # in the working directory
    if before == "there":
        data.write_bytes(b"x" * 100)
    script = tmp_path / "job.sh"
    script.write_text(f"""#!/bin/sh
if [ -e {data} ]; then echo there >> {states}; else echo absent >> {states}; fi
exec mpirun --oversubscribe -np 2 {kernel_exe("block")} {" ".join(KERNEL_ARGS)} --path {data}
""")
    script.chmod(0o755)
    args = ["--budget", "3", "--strategy", "random", "--seed", "1", "--study", "f", "--no-verify", "--",
            str(script)]
    done = tune(pario_cmd, mpi_env, tmp_path, *args)
    assert done.returncode == 0, done.stderr
    found = states.read_text().split()
    assert len(found) >= 3 and set(found) == {before}  # the budget's 3 runs and any re-measurement
    assert data.is_file()  # the last run's file stays


@pytest.mark.slow
def test_trials_at_once_write_into_their_own_trial_dir(tmp_path: Path, pario_cmd, mpi_env):
    """--jobs 2 with the data file at '{trial_dir}/b.dat': each run writes its own file, in its own
    directory, and its log measures that file."""
    args = ["--budget", "2", "--jobs", "2", "--strategy", "random", "--seed", "2", "--study", "j",
            "--no-verify", "--", "mpirun", "--oversubscribe", "-np", "2", str(kernel_exe("block")),
            *KERNEL_ARGS, "--path", "{trial_dir}/b.dat"]
    done = tune(pario_cmd, mpi_env, tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    trials = budget_trials(trials_of(sqlite_url(tmp_path), "j"))
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 2
    for t in trials:
        (run,) = t.user_attrs["runs"]
        rdir = Path(run["log"]).parent
        data = rdir / "b.dat"
        assert data.stat().st_size == 2 * SEGMENTS * BLOCK
        assert [str(n) for n in read_log(Path(run["log"])).layer("mpiio")["name"]] == [str(data)]


@pytest.mark.slow
def test_a_shared_absolute_path_with_jobs_is_warned_about(tmp_path: Path, pario_cmd, mpi_env):
    shared = tmp_path / "shared.dat"
    done = tune(pario_cmd, mpi_env, tmp_path, "--jobs", "2", "--show-space", "--", "mpirun", "-np", "2",
                str(kernel_exe("block")), "--path", str(shared), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == (
        f"pario tune: warning: with --jobs 2 the trials run at the same time, and all would use {shared}: if "
        "the command writes it, write {trial_dir} in its place (each run's own directory), e.g. -o "
        "'{trial_dir}/out.dat'")
    alone = tune(pario_cmd, mpi_env, tmp_path, "--show-space", "--", "mpirun", "-np", "2",
                 str(kernel_exe("block")), "--path", str(shared), timeout=60)
    assert "warning" not in alone.stderr


@pytest.mark.slow
def test_a_resumed_study_does_not_count_the_default_that_failed_before(tmp_path: Path, pario_cmd, mpi_env):
    """The command fails (a missing input) and the study stops after its default; the input is
    fixed and the study resumed with the same budget: the earlier failed default does not take a
    trial of it, and the new default plus 2 search trials run."""
    gate = tmp_path / "gate.sh"
    gate.write_text(f'#!/bin/sh\ntest -f {tmp_path}/input.nml || {{ echo "no input.nml" >&2; exit 3; }}\n'
                    'exec "$@"\n')
    gate.chmod(0o755)
    args = ["--budget", "3", "--strategy", "random", "--seed", "4", "--study", "r", "--no-verify", "--",
            *kernel(2, str(gate))]
    first = tune(pario_cmd, mpi_env, tmp_path, *args)
    assert first.returncode == 1, first.stderr
    assert "study r: 1 trial(s) in the budget, 1 failed, 1 in all" in " ".join(first.stdout.split())
    (tmp_path / "input.nml").write_text("&run /\n")
    again = tune(pario_cmd, mpi_env, tmp_path, *args)
    assert again.returncode == 0, again.stdout + again.stderr
    # (the sampler may also propose a configuration already measured: a "duplicate", not run)
    assert "study r: 3 trial(s) in the budget, 1 failed, " in " ".join(again.stdout.split())
    trials = budget_trials(trials_of(sqlite_url(tmp_path), "r"))
    assert [(t.user_attrs["role"], t.state) for t in trials] == [
        ("default", TrialState.FAIL), ("default", TrialState.COMPLETE), ("search", TrialState.COMPLETE),
        ("search", TrialState.COMPLETE)]
