"""A tuning study: measure the default, search, re-measure, and say what won.

Every trial is a configuration run ``repeat`` times (its value is the median of the runs)
and stored in an Optuna study: its parameters are the dimensions that apply, its user
attributes the whole configuration, every run's value, the logs, the hints the MPI library
ignored and, for failures, the tail of stderr.  Trials have a role:

* ``default``: the default configuration, measured first, the same way;
* ``search``: proposed by the strategy (these and the default make the budget);
* ``remeasure``: a configuration that just became the best is run again at once, so that one
  lucky run does not make an incumbent;
* ``verify``: at the end the best and the default are run until each has at least
  :data:`VERIFY_SAMPLES` samples, and the best is called better only if a one-sided
  Mann-Whitney U test on all their samples gives p <= :data:`ALPHA`.

Studies resume: ``--study NAME`` with the same storage continues where a killed run stopped
(trials left RUNNING by a killed process are marked failed and their configuration run
again); no finished trial is lost, as each is stored when it ends.
"""

from __future__ import annotations

import json
import os
import random
import socket
import statistics
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from pario.errors import ParioError
from pario.launch.job_logs import step_logs
from pario.tune import config as tune_config
from pario.tune import file_state
from pario.tune.objective import (
    MAXIMISE,
    NoObjective,
    direction,
    measure,
    measure_steps,
    show_value,
    workload_features,
)
from pario.tune.runner import RunResult, pario_run_argv, run_local, run_slurm
from pario.tune.space import (
    DEFAULT,
    Detected,
    Dimension,
    Space,
    config_key,
    enumerate_configs,
    random_config,
    read_stripe,
)

ROLES_IN_BUDGET = ("default", "search")
#: Written in the command, it becomes each run's own directory (files trials must not share).
TRIAL_DIR = "{trial_dir}"


def in_trial_dir(command: Sequence[str], rdir: Path) -> list[str]:
    """The command of one run: every ``{trial_dir}`` in it becomes the run's own directory."""
    return [a.replace(TRIAL_DIR, str(rdir)) for a in command]


def shared_paths(command: Sequence[str]) -> list[str]:
    """The absolute paths in ``command`` (arguments, or values of ``--opt=PATH``) that concurrent
    trials would all use, other than programs and directories: files a run may write."""
    out = []
    for arg in command[1:]:
        path = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if not path.startswith("/") or TRIAL_DIR in path:
            continue
        p = Path(path)
        if p.is_dir() or (p.is_file() and os.access(p, os.X_OK)):
            continue
        out.append(path)
    return out
#: How a failed run's error names the file that holds all of the command's messages (its last
#: line): the error keeps only the tail of them.
MESSAGES_IN = "all its messages: "
VERIFY_SAMPLES = 3
# configurations run to VERIFY_SAMPLES at the end besides the default (3 bought nothing measurable in
# bench/tune.py's replays at 4 more runs per study: docs/performance.md, "Tuning")
VERIFY_TOP = 1
MAX_DUPLICATES = 10  # measured configurations the sampler may propose in a row
ALPHA = 0.05
SCHEMA = 1


@dataclass
class Settings:
    """What ``pario tune`` was asked to do."""

    command: list[str]
    objective: str = "write-bw"
    files: str | None = None
    strategy: str = "exact"
    budget: int = 20
    repeat: int = 1
    jobs: int = 1
    launcher: str = "local"
    timeout: float | None = 600.0
    seed: int | None = None
    sbatch_args: list[str] = field(default_factory=list)
    workdir: Path = field(default_factory=Path.cwd)
    out_root: Path = field(default_factory=lambda: Path.cwd() / ".pario" / "tune")
    verify: bool = True
    #: extra environment of every run (tests and benchmarks)
    env: dict[str, str] = field(default_factory=dict)


# ---- which process owns a running trial --------------------------------------------------

HOST = socket.gethostname()


def _start_time(pid: int) -> str | None:
    """The start time of a process (field 22 of /proc/PID/stat), None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


OWNER = [HOST, os.getpid(), _start_time(os.getpid())]


def owner_dead(owner: Sequence | None) -> bool:
    """True for a trial of a process on this host that no longer runs."""
    if not owner:
        return False
    host, pid, started = owner[0], int(owner[1]), owner[2]
    return host == HOST and _start_time(pid) != started


# ---- the space, stored with the study ---------------------------------------------------

def space_to_json(space: Space) -> dict:
    return {"dimensions": [asdict(d) for d in space.dimensions], "detected": asdict(space.detected),
            "notes": list(space.notes)}


def space_from_json(data: Mapping) -> Space:
    dims = []
    for d in data["dimensions"]:
        when = d.get("when")
        dims.append(Dimension(d["name"], d["kind"], tuple(d["choices"]),
                              (when[0], tuple(when[1])) if when else None, d.get("help", "")))
    return Space(tuple(dims), Detected(**data["detected"]), tuple(data.get("notes", ())))


# ---- trials ------------------------------------------------------------------------------

def suggest(trial, space: Space) -> dict[str, str]:
    """Ask Optuna's trial for every dimension that applies, in order (define-by-run)."""
    config: dict[str, str] = {}
    for d in space.dimensions:
        config[d.name] = trial.suggest_categorical(d.name, list(d.choices)) if d.active(config) else DEFAULT
    return space.normalise(config)


def params_of(space: Space, config: Mapping[str, str]) -> dict[str, str]:
    """The Optuna parameters of a configuration: its dimensions that apply."""
    config = space.normalise(config)
    return {d.name: config[d.name] for d in space.dimensions if d.active(config)}


def in_budget(t) -> bool:
    """Does the trial count against the budget?  Default and search trials, but not those failed
    by an interruption (their configuration runs again)."""
    return (t.user_attrs.get("role") in ROLES_IN_BUDGET
            and not str(t.user_attrs.get("error", "")).startswith("interrupted"))


def budget_count(trials) -> int:
    """How many of ``trials`` count against the budget (:func:`in_budget`): a failed default that
    a later default trial replaces (the study resumed after the command was fixed) does not, as
    the search never ran after it."""
    from optuna.trial import TrialState

    defaults = [t.number for t in trials if t.user_attrs.get("role") == "default"]
    last = max(defaults, default=-1)
    return sum(1 for t in trials if in_budget(t) and not (
        t.user_attrs.get("role") == "default" and t.state == TrialState.FAIL and t.number < last))


def pooled_samples(trials) -> dict[str, list[float]]:
    """Every run's value of every configuration, over all its finished trials (in trial order)."""
    out: dict[str, list[float]] = {}
    for t in trials:
        out.setdefault(config_key(t.user_attrs["config"]), []).extend(t.user_attrs.get("values", []))
    return out


def ranked(samples: Mapping[str, list[float]], objective: str) -> list[str]:
    """The configurations with samples, best median first (ties in the order they were measured)."""
    keys = [k for k, vals in samples.items() if vals]
    return sorted(keys, key=lambda k: statistics.median(samples[k]), reverse=objective in MAXIMISE)


@dataclass(frozen=True)
class TrialOutcome:
    config: dict[str, str]
    role: str
    values: list[float]
    runs: list[dict]
    workload: dict[str, float] | None
    ignored: list[list]
    predicted: float | None = None

    @property
    def ok(self) -> bool:
        return bool(self.values) and len(self.values) == len(self.runs)

    @property
    def value(self) -> float:
        return float(statistics.median(self.values))


def _ignored_hints(profile, injected: Mapping[str, str], glob: str | None) -> list[list]:
    """Hints injected but not in effect in the files measured: [file, key, asked, in effect or None].

    The log's per-file record of what was injected is the truth; ``injected`` (the trial's
    hints) stands in for a file without one.
    """
    if not injected:
        return []
    from pario.analysis.mpihints import ignored_hints
    from pario.tune.objective import library_file, matches

    out = []
    mpiio = profile.layer("mpiio")
    for fid, name in zip(mpiio["id"], mpiio["name"], strict=False):
        if not matches(str(name), glob) or library_file(str(name)):
            continue
        asked = profile.injected_hints.get(int(fid)) or dict(injected)
        effective = profile.hints.get(int(fid), {})
        for i in ignored_hints(asked, effective):
            out.append([str(name), i.key, i.asked, i.in_effect])
    return out


class Runner:
    """Runs configurations: applies them, launches, reads the objective from the logs."""

    def __init__(self, settings: Settings, space: Space, study_dir: Path) -> None:
        self.settings = settings
        self.space = space
        self.dir = study_dir
        self.directory = Path(space.detected.directory)
        self.stripes = any(d.kind == "stripe" for d in space.dimensions)
        # the output directory's own striping, set again for dimensions at default and at the end
        self.original_stripe = read_stripe(self.directory) if self.stripes else None
        # runs one after another start with the files as the first found them (file_state.py)
        self.files = (file_state.before_first_run(study_dir, settings.command, settings.workdir)
                      if settings.jobs == 1 else None)

    def _stripe_command(self, a: tune_config.Applied) -> list[str] | None:
        if not self.stripes:
            return None
        return tune_config.stripe_command(self.directory, a.stripe, self.original_stripe)

    def restore(self) -> None:
        """Give the output directory back its own striping (Lustre, when the study changed it)."""
        if self.stripes:
            import subprocess

            restore = tune_config.stripe_command(self.directory, {}, self.original_stripe)
            subprocess.run(restore, capture_output=True, timeout=60)

    def run_trial(self, number: int, config: Mapping[str, str], role: str) -> TrialOutcome:
        from pario.log import read_log

        trial_applied = tune_config.applied(self.space, config)
        tdir = self.dir / f"trial-{number:04d}"
        tdir.mkdir(parents=True, exist_ok=True)
        hints_file = None
        if trial_applied.hints:
            hints_file = tdir / "hints.txt"
            hints_file.write_text(tune_config.hints_text(trial_applied.hints, self.settings.files))
        env = {**os.environ, **self.settings.env, **trial_applied.env()}
        romio = tune_config.romio_hints_text(trial_applied.hints)
        if romio and not self.settings.files and self._romio(trial_applied):
            # what the job-script lines offer without pario (ROMIO_HINTS) is what the trial tested
            (tdir / "romio-hints.txt").write_text(romio)
            env["ROMIO_HINTS"] = str(tdir / "romio-hints.txt")
        values: list[float] = []
        runs: list[dict] = []
        workload = None
        ignored: list[list] = []
        for k in range(self.settings.repeat):
            rdir = tdir / f"run-{k + 1}"
            log = rdir / "trial.pario"
            if log.exists():
                log.unlink()
            stripe = self._stripe_command(trial_applied)
            if stripe:
                import subprocess

                done = subprocess.run(stripe, capture_output=True, text=True, timeout=60)
                if done.returncode != 0:
                    error = f"{' '.join(stripe)}: {done.stderr.strip()[:300]}"
                    runs.append({"status": "failed", "error": error})
                    break
            rdir.mkdir(parents=True, exist_ok=True)
            if self.files is not None:
                file_state.clear(self.files)
            settings = self.settings
            command = in_trial_dir(settings.command, rdir)
            argv = pario_run_argv(log, tune_config.pario_run_args(trial_applied, hints_file), command)
            if settings.launcher == "slurm":
                res = run_slurm(argv, env, settings.workdir, rdir, log, settings.timeout,
                                settings.sbatch_args, f"pario-tune-{number}")
            else:
                res = run_local(argv, env, settings.workdir, rdir, log, settings.timeout)
            entry = self._read(res, log, read_log)
            if self.files is not None and file_state.note_written(self.files, entry["written"], self.dir):
                file_state.save(self.files, self.dir)
            runs.append(entry["run"])
            if entry["run"]["status"] != "ok":
                break
            values.append(entry["value"])
            if workload is None:
                workload = entry["workload"]
                ignored = _ignored_hints(entry["profile"], trial_applied.hints, self.settings.files)
        return TrialOutcome(self.space.normalise(config), role, values, runs, workload, ignored)

    def _romio(self, a: tune_config.Applied) -> bool:
        """Is the trial's MPI-IO ROMIO (MPICH, or an Open MPI romio component)?"""
        det = self.space.detected
        io = a.mca.get("io", det.default_io)
        return det.mpi == "mpich" or (det.mpi == "openmpi" and io.startswith("romio"))

    def _read(self, res: RunResult, log: Path, read_log: Callable) -> dict:
        run = {"status": res.status, "seconds": round(res.seconds, 3), "log": str(log)}
        if res.status != "ok":
            messages = log.parent / "stderr.txt"
            run["error"] = res.stderr_tail + (f"\n{MESSAGES_IN}{messages}" if messages.is_file() else "")
            return {"run": run, "written": []}
        written: list[str] = []
        try:
            profile = read_log(log)
            steps = [read_log(p) for p in step_logs(log)] if self.settings.objective != "wall-time" else []
            written = sorted({w for p in (profile, *steps) for w in file_state.written_files(p)})
            if steps:  # the command started its MPI jobs itself: their logs hold the I/O
                m = measure_steps(steps, self.settings.objective, self.settings.files)
                profile = steps[0]
                run["steps"] = len(steps)
            else:
                m = measure(profile, self.settings.objective, self.settings.files)
        except (NoObjective, ParioError) as exc:
            run["status"] = "failed"
            run["error"] = f"{exc}"
            return {"run": run, "written": written}
        run.update(value=m.value, bytes=m.bytes, time=m.seconds)
        return {"run": run, "value": m.value, "profile": profile, "written": written,
                "workload": workload_features(profile, self.settings.files)}


# ---- the loop ---------------------------------------------------------------------------

@dataclass
class Progress:
    """What the loop reports as it goes (the CLI draws it)."""

    done: int = 0
    best: float | None = None
    best_trial: int | None = None  # the first trial of the best configuration
    last: str = ""  # ``trial N (role): value``
    last_config: str = ""  # the settings of the last trial (``default`` for none)
    phase: str = "search"


class Study:
    """An Optuna study with pario's settings, space and trials."""

    def __init__(self, optuna_study, settings: Settings, space: Space, directory: Path) -> None:
        self.study = optuna_study
        self.settings = settings
        self.space = space
        self.dir = directory

    # -- what is stored --
    def outcomes(self) -> list:  # the finished trials, oldest first
        from optuna.trial import TrialState

        return [t for t in self.study.get_trials(deepcopy=False) if t.state == TrialState.COMPLETE]

    def budget_used(self, running: bool = False) -> int:
        """Default and search trials that ended (and, with ``running``, that are running, in any
        worker sharing the study); trials failed by an interruption do not count."""
        from optuna.trial import TrialState

        states = (TrialState.COMPLETE, TrialState.FAIL) + ((TrialState.RUNNING,) if running else ())
        return budget_count(self.study.get_trials(deepcopy=False, states=states))

    def has_default(self) -> bool:
        """The default was measured, or is being measured (by this or another worker)."""
        from optuna.trial import TrialState

        return any(t.user_attrs.get("role") == "default" for t in self.study.get_trials(
            deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING)))

    def samples(self) -> dict[str, list[float]]:
        """Every run's value of every configuration, over all its trials."""
        return pooled_samples(self.outcomes())

    def asked(self) -> set[str]:
        """Every configuration asked for so far, run or running (by any worker)."""
        return {config_key(t.user_attrs.get("config", {})) for t in self.study.get_trials(deepcopy=False)}

    def default_key(self) -> str:
        return config_key(self.space.default())

    def top(self, k: int) -> list[str]:
        """The ``k`` configurations with the best medians over all their runs, best first."""
        return ranked(self.samples(), self.settings.objective)[:k]

    def incumbent(self) -> str | None:
        """The configuration with the best median over all its runs."""
        return next(iter(self.top(1)), None)

    # -- running --
    def _record(self, trial, outcome: TrialOutcome) -> None:
        from optuna.trial import TrialState

        attrs: dict[str, Any] = {"config": outcome.config, "role": outcome.role, "values": outcome.values,
                 "runs": outcome.runs, "workload": outcome.workload, "ignored_hints": outcome.ignored}
        if outcome.predicted is not None:
            attrs["predicted"] = outcome.predicted
        for k, v in attrs.items():
            trial.set_user_attr(k, v)
        if outcome.ok:
            self.study.tell(trial, outcome.value)
        else:
            self.study.tell(trial, state=TrialState.FAIL)

    def fail_stale(self) -> int:
        """Trials a killed ``pario tune`` left RUNNING are failed (their configuration will run again).

        A trial belongs to the process that asked for it (``owner``: host, pid, process start
        time).  Several workers may share a study (PostgreSQL, a journal file), so only trials
        whose owner is on this host and no longer alive are failed, and trials of other hosts
        once they are older than their worst case (timeout x repeat, plus an hour).
        """
        from datetime import datetime

        from optuna.trial import TrialState

        limit = (self.settings.timeout or 3600.0) * max(self.settings.repeat, 1) + 3600.0
        n = 0
        for t in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            owner = t.user_attrs.get("owner")
            started = t.datetime_start
            age = (datetime.now() - started).total_seconds() if started else float("inf")
            # a trial without an owner yet is one another worker has just asked for
            if not owner_dead(owner) and not ((not owner or owner[0] != HOST) and age > limit):
                continue
            self.study._storage.set_trial_user_attr(t._trial_id, "error",
                                                    "interrupted: pario tune was stopped")
            self.study._storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL)
            n += 1
        return n

    def ask(self, config: Mapping[str, str] | None, role: str):
        """A new Optuna trial of ``config`` (None: the sampler's choice), marked as this process's,
        with its role and configuration stored at once (other workers count it)."""
        import optuna
        from optuna.trial import TrialState

        base = self.study.sampler
        if config is not None:
            # fixed through the sampler, not enqueue_trial: an enqueued (WAITING) trial can be
            # taken by another worker sharing the study, or outlive a killed process
            with warnings.catch_warnings():  # PartialFixedSampler is "experimental" since Optuna 2.4
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                self.study.sampler = optuna.samplers.PartialFixedSampler(params_of(self.space, config), base)
        try:
            trial = self.study.ask()
            trial.set_user_attr("owner", OWNER)
            trial.set_user_attr("role", role)
            chosen = suggest(trial, self.space)
        finally:
            self.study.sampler = base
        trial.set_user_attr("config", chosen)
        known = self.samples().get(config_key(chosen)) if config is None else None
        if known:
            # the sampler proposed a configuration already measured: it learns the known median,
            # and neither a run nor the budget is spent on it
            trial.set_user_attr("role", "duplicate")
            trial.set_user_attr("values", [])
            self.study.tell(trial, float(statistics.median(known)))
            return None, chosen
        if role in ROLES_IN_BUDGET and self._surplus(trial.number, role):
            # another worker sharing the study asked first: this trial is not run
            trial.set_user_attr("role", "surplus")
            self.study.tell(trial, state=TrialState.PRUNED)
            return None, chosen
        return trial, chosen

    def _surplus(self, number: int, role: str) -> bool:
        """Is trial ``number`` past the budget (or a second default) counting only the trials
        numbered before it, in whatever worker they run?"""
        from optuna.trial import TrialState

        states = (TrialState.COMPLETE, TrialState.FAIL, TrialState.RUNNING)
        deadline = time.monotonic() + ATTRS_WAIT
        while True:
            earlier = [t for t in self.study.get_trials(deepcopy=False, states=states) if t.number < number]
            # a worker names a trial's role right after asking for it: wait for the names
            if all("role" in t.user_attrs for t in earlier) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if role == "default":
            return any(t.user_attrs.get("role") == "default" and t.state != TrialState.FAIL for t in earlier)
        return budget_count(earlier) >= self.settings.budget

    def run(self, propose: Callable[[Study, int], list[tuple[dict[str, str] | None, float | None]]],
            runner: Runner, progress: Callable[[Progress], None] | None = None) -> None:
        """Measure the default, then search until the budget is used, then verify; stop after the
        default if it fails (the command fails as it is)."""
        self.fail_stale()
        queue: list[tuple[dict[str, str] | None, str, float | None]] = []
        if not self.has_default():
            queue.append((self.space.default(), "default", None))
        state = Progress()
        started = time.monotonic()
        remeasured: set[str] = set()
        duplicates = 0  # the sampler's proposals in a row that were already measured
        rng = random.Random(self.settings.seed)
        default_failed = False  # then the command fails as it is: no search is worth running
        with ThreadPoolExecutor(max_workers=max(self.settings.jobs, 1)) as pool:
            running: dict[Future, tuple] = {}
            while True:
                while len(running) < max(self.settings.jobs, 1) and not default_failed:
                    used = self.budget_used(running=True)
                    if not queue and used < self.settings.budget:
                        # a new search trial: ask the strategy (None: the sampler decides)
                        queue += [(c, "search", p) for c, p in propose(self, 1)]
                    if not queue:
                        break
                    config, role, predicted = queue.pop(0)
                    if role in ROLES_IN_BUDGET and used >= self.settings.budget:
                        continue
                    if role == "default" and self.has_default():
                        continue  # another worker sharing the study measures it
                    if config is None and duplicates >= MAX_DUPLICATES:
                        # the sampler keeps proposing measured configurations: one not yet measured
                        config = self._unmeasured(rng)
                        if config is None:
                            break  # every configuration was measured
                    trial, chosen = self.ask(config, role)
                    if trial is None:
                        duplicates += 1  # (a surplus trial ends the budget at the next check)
                        continue
                    duplicates = 0
                    fut = pool.submit(runner.run_trial, trial.number, chosen, role)
                    running[fut] = (trial, role, predicted)
                if not running:
                    break
                try:
                    done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                except KeyboardInterrupt:
                    self._interrupt(running)
                    raise
                for fut in done:
                    trial, role, predicted = running.pop(fut)
                    outcome = fut.result()
                    if predicted is not None:
                        outcome = replace(outcome, predicted=predicted)
                    self._record(trial, outcome)
                    default_failed = default_failed or (role == "default" and not outcome.ok)
                    key = config_key(outcome.config)
                    if (outcome.ok and role == "search" and key == self.incumbent() and key not in remeasured
                            and key != self.default_key()):
                        remeasured.add(key)
                        queue.insert(0, (outcome.config, "remeasure", None))
                    self._report(state, progress, trial.number, outcome)
        if self.settings.verify and not default_failed:
            self.verify(runner, progress, state, started)
            self.ablate(runner, progress, state)

    def _report(self, state: Progress, progress, number: int, outcome: TrialOutcome) -> None:
        state.done = self.budget_used()
        finished = self.outcomes()
        samples = pooled_samples(finished)
        best = ranked(samples, self.settings.objective)
        if best:
            state.best = statistics.median(samples[best[0]])
            state.best_trial = min(t.number for t in finished
                                   if config_key(t.user_attrs.get("config", {})) == best[0])
        shown = show_value(self.settings.objective, outcome.value) if outcome.ok else "failed"
        state.last = f"trial {number} ({outcome.role}): {shown}"
        state.last_config = tune_config.describe(self.space, outcome.config)
        if progress:
            progress(state)

    def _unmeasured(self, rng: random.Random) -> dict[str, str] | None:
        """A configuration never measured nor asked for, at random; None when there is none."""
        asked = self.asked()
        try:
            pool = [c for c in enumerate_configs(self.space, limit=100_000) if config_key(c) not in asked]
            return rng.choice(pool) if pool else None
        except ParioError:  # too many to list: draw until one is new
            for _ in range(1000):
                config = random_config(self.space, rng)
                if config_key(config) not in asked:
                    return config
            return None

    def _interrupt(self, running: Mapping[Future, tuple]) -> None:
        """Ctrl-C: stop the runs, and mark their trials failed so that a resumed study runs them again."""
        from optuna.trial import TrialState

        from pario.tune.runner import kill_all

        kill_all()
        for fut, (trial, _, _) in running.items():
            fut.cancel()
            trial.set_user_attr("error", "interrupted: pario tune was stopped (Ctrl-C)")
            self.study.tell(trial, state=TrialState.FAIL)

    def ablate(self, runner: Runner, progress, state: Progress) -> None:
        """After the verify phase, when the best beats the default: the best without the settings
        its win does not need (pario.tune.ablation), kept in the study for the summary."""
        from pario.tune.ablation import ATTR, as_json, minimal
        from pario.tune.results import mann_whitney_p

        top = self.top(1)
        if not top or top[0] == self.default_key():
            return
        samples = self.samples()
        best, default = samples.get(top[0], []), samples.get(self.default_key(), [])
        if (min(len(best), len(default)) < VERIFY_SAMPLES
                or mann_whitney_p(self.settings.objective, best, default) > ALPHA):
            return
        state.phase = "ablation"

        def samples_of(config: dict[str, str]) -> list[float]:
            key = config_key(self.space.normalise(config))
            while len(self.samples().get(key, [])) < VERIFY_SAMPLES:
                trial, chosen = self.ask(config, "ablation")
                assert trial is not None  # ablation trials are never surplus
                outcome = runner.run_trial(trial.number, chosen, "ablation")
                self._record(trial, outcome)
                self._report(state, progress, trial.number, outcome)
                if not outcome.ok:
                    return []
            return self.samples()[key]

        found = minimal(self.space, json.loads(top[0]), self.settings.objective, samples_of)
        self.study.set_user_attr(ATTR, as_json(found))

    def verify(self, runner: Runner, progress, state: Progress, started: float) -> None:
        """Run the VERIFY_TOP best configurations and the default until each has VERIFY_SAMPLES samples.

        With single runs the best sample is often a lucky one (the winner's curse); the best is
        then chosen among configurations measured the same number of times.
        """
        state.phase = "verify"
        failed: set[str] = set()  # a configuration whose verification run failed is not tried again
        for _ in range(3):
            top = self.top(VERIFY_TOP)
            if not top:
                return  # nothing ran successfully: nothing to verify
            samples = self.samples()
            todo = [k for k in dict.fromkeys([*top, self.default_key()])
                    if len(samples.get(k, [])) < VERIFY_SAMPLES and k not in failed]
            if not todo:
                return
            for key in todo:
                for _ in range(VERIFY_SAMPLES):  # each trial adds --repeat samples
                    if len(self.samples().get(key, [])) >= VERIFY_SAMPLES:
                        break
                    trial, chosen = self.ask(json.loads(key), "verify")
                    assert trial is not None  # verify trials are never surplus
                    outcome = runner.run_trial(trial.number, chosen, "verify")
                    self._record(trial, outcome)
                    self._report(state, progress, trial.number, outcome)
                    if not outcome.ok:
                        failed.add(key)
                        break


# ---- proposers (strategies that are not a plain Optuna sampler) ----------------------------

def sampler_proposer(study: Study, n: int) -> list[tuple[dict[str, str] | None, float | None]]:
    """Leave the choice to the study's Optuna sampler."""
    return [(None, None)] * n


def grid_proposer(seed: int | None) -> Callable[[Study, int], list]:
    """Every configuration of the space once, in a random order fixed by the seed."""
    order: list[dict[str, str]] = []

    def propose(study: Study, n: int) -> list:
        if not order:
            configs = enumerate_configs(study.space)
            random.Random(seed).shuffle(configs)
            order.extend(configs)
        tried = study.asked()
        fresh = [c for c in order if config_key(study.space.normalise(c)) not in tried]
        return [(c, None) for c in fresh[:n]]

    return propose


def make_sampler(strategy: str, seed: int | None, budget: int):
    import optuna

    if strategy == "exact":
        # multivariate TPE with groups: the space is conditional (ROMIO's hints only under ROMIO);
        # docs/performance.md ("Tuning") compares it with independent TPE and random search.
        # Optuna warns that group/constant_liar are experimental and warn_independent_sampling
        # deprecated (4.9): not the user's business, so not on their terminal.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            warnings.simplefilter("ignore", FutureWarning)
            return optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True,
                                              n_startup_trials=max(3, min(10, budget // 4)),
                                              warn_independent_sampling=False, constant_liar=True)
    return optuna.samplers.RandomSampler(seed=seed)


# ---- creating and resuming ---------------------------------------------------------------

def settings_json(s: Settings) -> dict:
    return {"schema": SCHEMA, "command": s.command, "objective": s.objective, "files": s.files,
            "strategy": s.strategy, "repeat": s.repeat, "workdir": str(s.workdir),
            "launcher": s.launcher, "sbatch_args": s.sbatch_args}


ATTRS_WAIT = 10.0  # seconds another worker may take between creating a study and describing it


def _stored_settings(study) -> dict | None:
    """The study's pario attributes, waiting a little for a worker that is creating it."""
    deadline = time.monotonic() + ATTRS_WAIT
    while True:
        attrs = study.user_attrs
        if "pario" in attrs and "pario_space" in attrs:
            return attrs
        if time.monotonic() > deadline:
            return None
        time.sleep(0.2)


def open_study(storage, name: str, settings: Settings, space: Space) -> Study:
    """Create the study ``name``, or resume it when it exists with the same command and objective."""
    import optuna
    from optuna.exceptions import DuplicatedStudyError

    sampler = make_sampler(settings.strategy, settings.seed, settings.budget)
    try:
        existing = optuna.load_study(study_name=name, storage=storage, sampler=sampler)
    except KeyError:
        existing = None
    if existing is None:
        try:
            created = optuna.create_study(study_name=name, storage=storage, sampler=sampler,
                                          direction="maximize" if direction(settings.objective) == "maximize"
                                          else "minimize")
        except DuplicatedStudyError:  # another worker created it a moment ago
            existing = optuna.load_study(study_name=name, storage=storage, sampler=sampler)
        else:
            created.set_user_attr("pario_space", space_to_json(space))
            created.set_user_attr("pario", settings_json(settings))
            return Study(created, settings, space, settings.out_root / name)
    attrs = _stored_settings(existing)
    if not attrs:
        raise ParioError(f"study {name} in this storage was not made by pario tune")
    stored = attrs["pario"]
    for key in ("command", "objective", "files"):
        if stored.get(key) != settings_json(settings).get(key):
            raise ParioError(f"study {name} exists with another {key} ({stored.get(key)!r}); "
                             "choose another --study name")
    space = space_from_json(attrs["pario_space"])
    settings.strategy = stored.get("strategy", settings.strategy)
    existing.sampler = make_sampler(settings.strategy, settings.seed, settings.budget)
    return Study(existing, settings, space, settings.out_root / name)


def load_study(storage, name: str):
    """A stored study for reporting (ParioError if it is missing or not pario's)."""
    import optuna

    try:
        study = optuna.load_study(study_name=name, storage=storage)
    except KeyError:
        names = [s.study_name for s in optuna.get_all_study_summaries(storage)]
        known = f" (studies here: {', '.join(names[:10])})" if names else " (no study in this storage)"
        raise ParioError(f"no study {name}{known}") from None
    if "pario" not in study.user_attrs:
        raise ParioError(f"study {name} was not made by pario tune")
    return study


