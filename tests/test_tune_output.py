"""What pario tune hands back: hints the MPI library ignored in every run of the best
configuration are left out of the hints files and named; the verdict's test on samples worked
out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from pario.tune import output
from pario.tune.objective import show_value
from pario.tune.results import Sampled, Summary, TrialRow, mann_whitney_p, speedup
from pario.tune.space import Detected, build_space
from text_helpers import joined

DET = Detected(mpi="mpich", ranks=4, nodes=1, fs_type="ext4", directory="/tmp")


def prose(lines: list[str]) -> str:
    """The lines as one text with single spaces (wrapped prose compared as it reads)."""
    return " ".join(" ".join(lines).split())


def _summary(best_cfg: dict[str, str], rows: list[TrialRow], verdict: str = "better") -> Summary:
    default = {k: "default" for k in best_cfg}
    return Summary("s", "write-bw", ["mpiexec", "-n", "4", "./app"], "exact", rows,
                   Sampled(default, [1.0, 1.1, 0.9]), Sampled(best_cfg, [3.0, 3.1, 2.9]), 3.0, 0.05,
                   verdict, len(rows), 0, [])


def test_hints_ignored_in_every_run_of_the_best_are_left_out(tmp_path: Path):
    space = build_space(DET)
    best = space.normalise({"cb_nodes": "4", "romio_cb_write": "enable", "cb_buffer_size": "4194304"})
    rows = [
        # cb_nodes=4 came back as 1 both times (ROMIO's cb_config_list *:1 on one node);
        # cb_buffer_size was ignored only once, so it was tested and stays
        TrialRow(3, "search", "complete", best, 3.0, [3.0], "",
                 [["/d/a.dat", "cb_nodes", "4", "1"], ["/d/a.dat", "cb_buffer_size", "4194304", None]]),
        TrialRow(4, "remeasure", "complete", best, 3.1, [3.1], "", [["/d/a.dat", "cb_nodes", "4", "1"]]),
        TrialRow(5, "search", "fail", best, None, [], "failed", []),  # a failed trial says nothing
    ]
    summary = _summary(best, rows)
    assert output.untested_hints(summary) == {"cb_nodes": ("4", "1")}
    written = output.best_files(summary, space, tmp_path, None)
    assert written["hints"].read_text() == "# written by pario tune\ncb_buffer_size 4194304\n" \
                                           "romio_cb_write enable\n"
    assert written["romio_hints"].read_text() == "cb_buffer_size 4194304\nromio_cb_write enable\n"
    text = output.lines(summary, space, written, ["mpiexec", "-n", "4", "./app"])
    # 80 columns, but for one word that cannot be broken (a long path, an export of one)
    assert all(len(line) <= 80 or len(line.removesuffix(" \\").removeprefix("  export ").split()) == 1
               for line in text), text
    flat = joined(text)
    left_out = "left out of the hints file: cb_nodes=4, which the MPI library ignored (in effect: 1)"
    assert left_out in prose(text)
    assert f"  pario run --hints {written['hints']} -- mpiexec -n 4 ./app" in flat
    at = flat.index(f"  export ROMIO_HINTS={written['romio_hints']}")
    assert flat[at - 1] == "  # ROMIO (MPICH, Open MPI's romio) applies it to every file:"


def test_with_files_the_hints_file_has_a_section(tmp_path: Path):
    space = build_space(DET)
    best = space.normalise({"romio_ds_write": "enable"})
    summary = _summary(best, [TrialRow(1, "search", "complete", best, 3.0, [3.0], "", [])])
    written = output.best_files(summary, space, tmp_path, "*.h5")
    assert written["hints"].read_text() == "# written by pario tune\n[*.h5]\nromio_ds_write enable\n"


def test_no_hints_file_is_offered_inside_the_noise(tmp_path: Path):
    space = build_space(DET)
    best = space.normalise({"romio_ds_write": "enable"})
    summary = _summary(best, [TrialRow(1, "search", "complete", best, 3.0, [3.0], "", [])], "within-noise")
    text = output.lines(summary, space, output.best_files(summary, space, tmp_path, None), ["./app"])
    assert not any(line.startswith("hints file:") for line in text)


@pytest.mark.slow
def test_mann_whitney_and_speedup_by_hand():
    # 3 against 3, completely separated: U = 9, exact one-sided p = 1 / C(6,3) = 0.05
    assert mann_whitney_p("write-bw", [3.0, 3.1, 2.9], [1.0, 1.1, 0.9]) == pytest.approx(0.05)
    # times: smaller is better, the same separation gives the same p
    assert mann_whitney_p("io-time", [1.0, 1.1, 0.9], [3.0, 3.1, 2.9]) == pytest.approx(0.05)
    # one overlap (2.95 vs 3.0): U = 8, p = 2/20
    assert mann_whitney_p("write-bw", [3.0, 3.1, 2.9], [1.0, 1.1, 2.95]) == pytest.approx(0.10)
    assert speedup("write-bw", 3.0, 1.0) == 3.0 and speedup("wall-time", 2.0, 6.0) == 3.0


def test_lustre_striping_commands_restore_the_directory():
    from pario.tune.config import stripe_command

    d = Path("/lustre/run")
    # the directory had its own layout: a dimension at default gets its original value back
    assert stripe_command(d, {"count": "8"}, ("4", "1048576")) == \
        ["lfs", "setstripe", "-c", "8", "-S", "1048576", "/lustre/run"]
    assert stripe_command(d, {}, ("4", "1048576")) == ["lfs", "setstripe", "-c", "4", "-S", "1048576",
                                                      "/lustre/run"]
    # it had none: the default configuration (and the end of the study) removes the trials' layout
    assert stripe_command(d, {}, None) == ["lfs", "setstripe", "-d", "/lustre/run"]
    assert stripe_command(d, {"size": "4194304"}, None) == ["lfs", "setstripe", "-S", "4194304",
                                                            "/lustre/run"]


def test_no_plain_lines_when_the_best_needs_the_engine(tmp_path: Path):
    space = build_space(DET)
    best = space.normalise({"romio_cb_write": "disable", "pario.collective": "write-comm",
                            "pario.shuffle": "rma-lock"})
    summary = _summary(best, [TrialRow(1, "search", "complete", best, 3.0, [3.0], "", [])])
    text = output.lines(summary, space, output.best_files(summary, space, tmp_path, None), ["./app"])
    assert any(line.startswith("  pario run --hints ") and "--collective write-comm:rma-lock -- ./app" in line
               for line in joined(text))
    assert ("(the best uses pario's collective-write engine, --collective write-comm:rma-lock: "
            "without pario in the job it is not the configuration measured)") in prose(text)
    assert not any("ROMIO_HINTS" in line for line in text)


@pytest.mark.slow
def test_files_in_dev_shm_are_measured(tmp_path: Path, run_under_pario, pario_cmd):
    """/dev/shm holds real files (the runtime records them): the default objective measures them,
    while the rest of /dev is never the program's data."""
    import os
    import subprocess

    from pario.log import read_log
    from pario.tune.objective import measure, selected_files

    exe = subprocess.run([*pario_cmd, "path", "pario-kernel-block"], capture_output=True, text=True,
                         check=True).stdout.strip()
    data = Path(f"/dev/shm/pario-tune-test-{os.getpid()}.dat")
    log = tmp_path / "shm.pario"
    try:
        done = run_under_pario(log, ["mpirun", "--oversubscribe", "-np", "2", exe, "--path", str(data),
                                     "--api", "posix", "--block-size", "64k", "--transfer-size", "16k",
                                     "--delete"])
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        data.unlink(missing_ok=True)
    profile = read_log(log)
    m = measure(profile, "write-bw")
    assert m.files == (str(data),) and m.bytes == 2 * 64 * 1024
    assert all(not n.startswith("/dev/") or n.startswith("/dev/shm/")
               for f in selected_files(profile, None).values() for n in f["name"])


def test_budget_used_leaves_out_interrupted_trials():
    """A trial failed by an interruption runs again on resume, so the summary does not count it,
    as the study's own budget does (docs/tune.md, budget_used)."""
    import optuna
    from optuna.distributions import CategoricalDistribution
    from optuna.trial import TrialState, create_trial

    from pario.tune.results import summarise
    from pario.tune.study import space_to_json

    space = build_space(DET)
    default = space.default()
    study = optuna.create_study(direction="maximize")
    study.set_user_attr("pario", {"objective": "write-bw", "command": ["./app"], "strategy": "random"})
    study.set_user_attr("pario_space", space_to_json(space))
    dist = {"cb_nodes": CategoricalDistribution(["default", "1"])}

    def trial(role: str, state: TrialState, **attrs) -> None:
        study.add_trial(create_trial(state=state, value=1.0 if state == TrialState.COMPLETE else None,
                                     params={"cb_nodes": "default"}, distributions=dist,
                                     user_attrs={"role": role, "config": default, "values": [1.0]
                                                 if state == TrialState.COMPLETE else [], **attrs}))

    trial("default", TrialState.COMPLETE)
    trial("search", TrialState.FAIL, error="interrupted: pario tune was stopped")
    trial("search", TrialState.FAIL, runs=[{"status": "failed", "error": "exit code 1"}])
    trial("verify", TrialState.COMPLETE)
    summary = summarise(study)
    assert summary.budget_used == 2 and summary.failed == 2


def test_a_failure_in_one_line_names_where_the_messages_are() -> None:
    """The stored error keeps the status, the tail of the command's messages (mpirun's banner lines
    included) and where all of them are; the summary line shows the status, the command's last
    message, pario run's last line and that file, never a line of dashes."""
    from pario.tune.output import _first_and_last

    error = ("exit code 1\nrank 0: no input deck: in.nml\n" + "-" * 74 + "\n"
             "pario: no log was written to /w/trial.pario: the command failed (exit code 1)\n"
             "all its messages: /w/run-1/stderr.txt")
    assert _first_and_last(error) == (
        "exit code 1; rank 0: no input deck: in.nml; pario: no log was written to /w/trial.pario: the "
        "command failed (exit code 1); all its messages: /w/run-1/stderr.txt")


@pytest.mark.parametrize(("verdict", "why"), [
    ("within-noise", "the best may be the default's noise"),
    ("default-best", "the default is as good as anything measured: keep it"),
])
def test_a_hints_file_only_for_a_significant_win(tmp_path: Path, verdict: str, why: str):
    """No best.hints on a verdict within noise (or when the default is best), and none left over from
    an earlier run of the study that did write one."""
    space = build_space(DET)
    best = space.normalise({"cb_nodes": "4"})
    rows = [TrialRow(3, "search", "complete", best, 3.0, [3.0], "", [])]
    written = output.best_files(_summary(best, rows), space, tmp_path, None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.hints", "best.romio-hints"]
    summary = _summary(best, rows, verdict)
    assert output.best_files(summary, space, tmp_path, None) == {} and not list(tmp_path.iterdir())
    text = prose(output.lines(summary, space, {}, ["./app"]))
    assert f"no hints file written: {why}" in text and "hints file:" not in text
    assert written  # the better verdict wrote them


def test_the_hints_file_carries_the_engine_the_best_ran_with(tmp_path: Path):
    """A best that ran under pario's collective-write engine: best.hints says so, and pario run
    --hints applies it (pario.launch.hints.tuned_environment), as the job-script line does."""
    from pario.launch.hints import tuned_environment

    space = build_space(DET)
    best = space.normalise({"cb_nodes": "4", "pario.collective": "write-comm", "pario.shuffle": "p2p"})
    summary = _summary(best, [TrialRow(3, "search", "complete", best, 3.0, [3.0], "", [])])
    written = output.best_files(summary, space, tmp_path, None)
    assert written["hints"].read_text().splitlines() == [
        "# written by pario tune", "# pario: tuned with PARIO_COLL=write-comm:p2p", "cb_nodes 4"]
    assert tuned_environment(written["hints"]) == {"PARIO_COLL": "write-comm:p2p"}
    flat = joined(output.lines(summary, space, written, ["./app"]))
    assert f"  pario run --hints {written['hints']} --collective write-comm:p2p -- ./app" in flat


def test_an_ablation_keeps_only_what_the_win_needs(tmp_path: Path):
    """The best sets cb_nodes 4 (the win: 3x) and cb_buffer_size 4 MiB (no effect): the ablation
    measures the best without each and keeps cb_nodes only; the summary hands back that
    configuration (still better than the default) and says what it left out and why."""
    from pario.tune import ablation
    from pario.tune.results import _minimal_best
    from pario.tune.space import config_key

    space = build_space(DET)
    best = space.normalise({"cb_nodes": "4", "cb_buffer_size": "4194304"})
    fast, slow = [3.0, 3.1, 2.9], [1.0, 1.1, 0.9]

    def samples_of(config: dict[str, str]) -> list[float]:
        return fast if config["cb_nodes"] == "4" else slow

    m = ablation.minimal(space, best, "write-bw", samples_of)
    small = space.normalise({"cb_nodes": "4"})
    assert m.config == small and [(d.name, d.value) for d in m.dropped] == [("cb_buffer_size", "4194304")]
    assert m.dropped[0].p > 0.05 and ablation.from_json(ablation.as_json(m)) == m

    class Stored:
        user_attrs = {ablation.ATTR: ablation.as_json(m)}

    samples = {config_key(best): fast, config_key(small): fast, config_key(space.default()): slow}
    chosen, p, ratio, notes = _minimal_best(Stored, "write-bw", samples, Sampled(best, fast),
                                            Sampled(space.default(), slow), (0.05, 3.0))
    assert chosen.config == small and p is not None and p <= 0.05 and ratio == pytest.approx(3.0)
    assert notes == ["left out of the hints file after an ablation: cb_buffer_size=4194304 (without it "
                     f"{show_value('write-bw', 3.0)} median, with it {show_value('write-bw', 3.0)}, "
                     f"p = {m.dropped[0].p:.2f}: the win does not need it)"]
    written = output.best_files(_summary(chosen.config, []), space, tmp_path, None)
    assert written["hints"].read_text().splitlines()[1:] == ["cb_nodes 4"]
