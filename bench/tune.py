"""Tuning strategies against the measured landscape: how close each gets to the grid's best.

Two stages (docs/performance.md, "Tuning"):

1. **Ground truth.** For each workload (a kernel at a rank count) the whole grid of a reduced
   space (:data:`SPACE_TOML`: the I/O component, ROMIO's ``romio_cb_write``, ``cb_nodes``,
   OMPIO's ``fcoll`` and pario's collective engine; 30 configurations) is measured ``--repeats``
   times with pario tune's own trial machinery (:class:`pario.tune.study.Runner`: the hints file,
   the ``OMPI_MCA_*`` variables, ``pario run``, the objective read from the log).  Runs are
   interleaved (repeat -> workload -> configurations in a shuffled order) so that slow drift of
   the shared machine hits every configuration alike.  Every sample is saved to
   ``OUT/samples.json`` after each round.
2. **Replay.** Each strategy runs through the real :meth:`pario.tune.study.Study.run` loop (default
   first, re-measure, verify) in a fresh in-memory Optuna storage, with a
   :class:`ReplayRunner` whose "run" returns one of the configuration's measured samples, drawn
   at random (seeded).  This is the usual way to compare tuners when trials are expensive: every
   strategy sees the same landscape and its noise.  A strategy's result is the *true* median (all
   measured samples) of the configuration the study picked, over the grid's best median.

Usage:

    .venv/bin/python bench/tune.py [--quick] [--out build/bench-tune] [--repeats 3]
        [--workloads block-4,s3d-4,...] [--budgets 10,20,40] [--seeds 20]
        [--strategies exact,tpe-independent,...] [--jobs 2]
    .venv/bin/python bench/tune.py --from-samples build/bench-tune/samples.json   # replay only

Writes ``OUT/samples.json`` (the measurements), ``OUT/replays.json`` (one record per study)
and ``OUT/tables.md`` (the tables).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pario import paths
from pario.tune import config as tune_config
from pario.tune.space import Space, apply_space_file, build_space, detect, enumerate_configs
from pario.tune.study import (
    ROLES_IN_BUDGET,
    Runner,
    Settings,
    TrialOutcome,
    config_key,
    grid_proposer,
    make_sampler,
    open_study,
    sampler_proposer,
    space_from_json,
    space_to_json,
)

MIB = 1 << 20
OBJECTIVE = "write-bw"
#: failures of a run that come from a concurrent reinstall of pario, not from the configuration
TRANSIENT = ("ModuleNotFoundError", "ImportError", "No module named", "libpario.so: cannot open")

#: The reduced space: 18 configurations under ROMIO, 12 under OMPIO (Open MPI's default here).
SPACE_TOML = """\
only = ["mca.io", "cb_nodes", "romio_cb_write", "mca.fcoll", "pario.collective"]
[dimensions."mca.io"]
values = ["romio321"]          # default is OMPIO
[dimensions.cb_nodes]
values = [1, 4]
[dimensions.romio_cb_write]
values = ["enable", "disable"]
[dimensions."mca.fcoll"]
values = ["individual"]
[dimensions."pario.collective"]
values = ["write-comm"]
"""


@dataclass(frozen=True)
class Workload:
    name: str
    kernel: str
    ranks: int
    args: tuple[str, ...]

    def command(self, bindir: Path | None = None) -> list[str]:
        name = f"pario-kernel-{self.kernel}"
        exe = bindir / name if bindir else paths.program(name)
        return ["mpirun", "--oversubscribe", "-np", str(self.ranks), str(exe), *self.args]


#: About 4-16 MiB each, 0.8-2 s a run with pario's overhead on this machine.
WORKLOADS = (
    Workload("block-4", "block", 4, ("--block-size", "8k", "--transfer-size", "8k", "--segments", "512")),
    Workload("block-8", "block", 8, ("--block-size", "8k", "--transfer-size", "8k", "--segments", "256")),
    Workload("s3d-4", "s3d", 4, ("--nx", "64", "--ny", "64", "--nz", "32")),
    Workload("s3d-8", "s3d", 8, ("--nx", "64", "--ny", "64", "--nz", "32")),
    Workload("bt-4", "bt", 4, ("--size", "64")),
    Workload("bt-9", "bt", 9, ("--size", "63")),
    Workload("tile-4", "tile", 4, ("--tile-x", "512", "--tile-y", "256")),
    Workload("tile-8", "tile", 8, ("--tile-x", "256", "--tile-y", "256")),
)
QUICK_WORKLOADS = ("block-4", "s3d-4")

STRATEGIES = ("exact", "tpe-independent", "tpe-multivariate", "gp", "random", "grid", "pract",
              "pract-history")
STRATEGY_HELP = {
    "exact": "pario's default: multivariate TPE with group (make_sampler('exact'))",
    "tpe-independent": "TPE, multivariate=False (otherwise as exact)",
    "tpe-multivariate": "TPE, multivariate=True, group=False (otherwise as exact)",
    "gp": "Optuna's GPSampler (needs PyTorch; not in pario's environment)",
    "random": "Optuna's RandomSampler",
    "grid": "every configuration once, in a random order",
    "pract": "XGBoost model of the objective, top prediction run (after random start-up)",
    "pract-history": "pract with the storage holding the other workloads' measured grids (as earlier "
                     "studies would)",
}


# ---- the space ---------------------------------------------------------------------------

def reduced_space(command: list[str], directory: Path, toml: Path) -> Space:
    return apply_space_file(build_space(detect(command, directory), OBJECTIVE), toml)


# ---- stage 1: the ground truth -------------------------------------------------------------

def measure_grid(args: argparse.Namespace, workloads: list[Workload], out: Path) -> dict:
    root = Path(tempfile.mkdtemp(prefix="pario-bench-tune-", dir=args.dir))
    toml = root / "space.toml"
    toml.write_text(SPACE_TOML)
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    os.environ.update(env)
    snapshot = snapshot_package(root / "pkg")
    env["PYTHONPATH"] = str(snapshot.parent)
    entries = []
    for w in workloads:
        wdir = root / w.name
        wdir.mkdir()
        command = w.command(snapshot / "bin")
        space = reduced_space(command, wdir, toml)
        settings = Settings(command=command, objective=OBJECTIVE, repeat=1, workdir=wdir,
                            out_root=root / "trials", verify=False, env=env)
        runner = Runner(settings, space, root / "trials" / w.name)
        configs = [space.normalise(c) for c in enumerate_configs(space)]
        entries.append({"w": w, "runner": runner, "space": space, "configs": configs,
                        "samples": {config_key(c): [] for c in configs},
                        "features": {}})
    data: dict = {"command": sys.argv, "git": git_state(), "started": time.time(), "cores": os.cpu_count(),
                  "load_start": os.getloadavg(), "directory": str(root), "fs": fs_line(root),
                  "space_toml": SPACE_TOML, "repeats": args.repeats, "workloads": []}
    say(f"{len(workloads)} workloads x {len(entries[0]['configs'])} configurations x {args.repeats} repeats; "
        f"runs in {root}; load {data['load_start'][0]:.2f}")
    rng = random.Random(args.order_seed)
    number = 0
    try:
        for rep in range(args.repeats):
            for e in entries:
                order = list(e["configs"])
                rng.shuffle(order)
                t0 = time.monotonic()
                failed = 0
                for c in order:
                    number += 1
                    o = run_once(e["runner"], number, c)
                    run = o.runs[0] if o.runs else {"status": "failed", "error": "no run"}
                    sample = {"rep": rep, "status": run.get("status"), "seconds": run.get("seconds")}
                    if o.ok:
                        sample["value"] = o.values[0]
                        e["features"].setdefault(config_key(o.config), o.workload)
                    else:
                        failed += 1
                        sample["error"] = str(run.get("error", ""))[-400:]
                    e["samples"][config_key(o.config)].append(sample)
                    shutil.rmtree(e["runner"].dir / f"trial-{number:04d}", ignore_errors=True)
                say(f"repeat {rep + 1}/{args.repeats} {e['w'].name}: {len(order)} runs in "
                    f"{time.monotonic() - t0:.0f} s, {failed} failed")
            data["workloads"] = [workload_json(e) for e in entries]
            data["minutes"] = (time.time() - data["started"]) / 60
            data["load_end"] = os.getloadavg()
            save_json(out / "samples.json", data)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return data


def snapshot_package(into: Path) -> Path:
    """A private copy of the installed package (programs and libpario.so included) that every run
    uses: other jobs on this machine reinstall pario while the benchmark runs."""
    import pario

    for attempt in range(10):
        shutil.rmtree(into, ignore_errors=True)
        into.mkdir(parents=True)
        target = into / "pario"
        shutil.copytree(Path(pario.__file__).parent, target, ignore=shutil.ignore_patterns("__pycache__"))
        check = subprocess.run([sys.executable, "-c", "import pario.cli, pario.tune.study, pario.log"],
                               env={**os.environ, "PYTHONPATH": str(into)}, capture_output=True, text=True)
        if check.returncode == 0:
            return target
        say(f"the installed package does not import ({check.stderr.strip()[-160:]}); waiting")
        time.sleep(15 * (attempt + 1))
    raise SystemExit("bench/tune.py: the installed pario package does not import")


def run_once(runner: Runner, number: int, config: dict[str, str]) -> TrialOutcome:
    """One run of a configuration; retried when it failed because the installed package was
    being replaced by a concurrent ``make install`` (a shared machine), not by the configuration."""
    for attempt in range(4):
        o = runner.run_trial(number, config, "search")
        error = " ".join(str(r.get("error", "")) for r in o.runs)
        if o.ok or not any(s in error for s in TRANSIENT):
            return o
        say(f"  run {number}: the installed package was changing ({error.strip()[-120:]}); again")
        time.sleep(10 * (attempt + 1))
    return o


def workload_json(e: dict) -> dict:
    w: Workload = e["w"]
    space: Space = e["space"]
    return {"name": w.name, "kernel": w.kernel, "ranks": w.ranks, "args": list(w.args),
            "command": w.command(), "space": space_to_json(space),
            "configs": [{"key": config_key(c), "config": c, "samples": e["samples"][config_key(c)],
                         "workload": e["features"].get(config_key(c))} for c in e["configs"]]}


# ---- the landscape -------------------------------------------------------------------------

@dataclass
class Landscape:
    """One workload's measured grid."""

    name: str
    space: Space
    command: list[str]
    values: dict[str, list[float]]  # config key -> every successful sample
    features: dict[str, dict[str, float] | None]
    configs: dict[str, dict[str, str]]

    @classmethod
    def from_json(cls, w: Mapping) -> Landscape:
        values = {c["key"]: [s["value"] for s in c["samples"] if s.get("value")] for c in w["configs"]}
        any_features = next((c["workload"] for c in w["configs"] if c.get("workload")), None)
        return cls(w["name"], space_from_json(w["space"]), list(w["command"]), values,
                   {c["key"]: c.get("workload") or any_features for c in w["configs"]},
                   {c["key"]: c["config"] for c in w["configs"]})

    def truth(self, key: str) -> float | None:
        vals = self.values.get(key)
        return float(statistics.median(vals)) if vals else None

    def default_key(self) -> str:
        return config_key(self.space.default())

    def best_key(self) -> str:
        return max((k for k in self.values if self.values[k]), key=lambda k: self.truth(k) or 0.0)


class ReplayRunner(Runner):
    """A trial returns one of the configuration's measured samples, drawn at random (no run)."""

    def __init__(self, settings: Settings, space: Space, study_dir: Path, land: Landscape, seed: int) -> None:
        super().__init__(settings, space, study_dir)
        self.land = land
        self.rng = random.Random(seed)

    def run_trial(self, number: int, config: Mapping[str, str], role: str) -> TrialOutcome:
        config = self.space.normalise(config)
        key = config_key(config)
        vals = self.land.values.get(key) or []
        if not vals:
            run = {"status": "failed", "error": "every measured run of this configuration failed"}
            return TrialOutcome(config, role, [], [run], None, [])
        values = [self.rng.choice(vals) for _ in range(self.settings.repeat)]
        runs = [{"status": "ok", "seconds": 0.0, "value": v} for v in values]
        return TrialOutcome(config, role, values, runs, self.land.features.get(key), [])


# ---- stage 2: the replays --------------------------------------------------------------------

def has_torch() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def strategy_parts(strategy: str, seed: int, budget: int) -> tuple[str, object | None]:
    """(pario strategy, replacement Optuna sampler or None) of a benchmark strategy."""
    if strategy in ("tpe-independent", "tpe-multivariate"):
        import optuna

        base = make_sampler("exact", seed, budget)  # same start-up and liar as pario's default
        kw = ({"multivariate": False} if strategy == "tpe-independent"
              else {"multivariate": True, "group": False})
        return "exact", optuna.samplers.TPESampler(seed=seed, n_startup_trials=base._n_startup_trials,
                                                   constant_liar=base._constant_liar, **kw)
    if strategy == "gp":
        # Optuna's Gaussian-process sampler needs PyTorch, which pario does not depend on: run the
        # replays with an interpreter that has it (docs/performance.md, "Tuning")
        import optuna

        base = make_sampler("exact", seed, budget)
        return "exact", optuna.samplers.GPSampler(seed=seed, n_startup_trials=base._n_startup_trials)
    if strategy == "pract-history":
        return "pract", None
    return strategy, None


def seed_history(storage, land: Landscape) -> None:
    """An earlier study of another workload in the storage: one trial per measured configuration."""
    import optuna

    study = optuna.create_study(study_name=f"history-{land.name}", storage=storage, direction="maximize")
    study.set_user_attr("pario", {"objective": OBJECTIVE, "command": land.command})
    for key, vals in land.values.items():
        if vals:
            study.add_trial(optuna.trial.create_trial(
                value=float(statistics.median(vals)),
                user_attrs={"config": land.configs[key], "values": vals, "workload": land.features.get(key),
                            "role": "search"}))


def replay(job: tuple[dict, str, int, int, list[dict], int]) -> dict:
    """One study of one strategy at one budget and seed on one landscape."""
    import optuna

    from pario.tune import pract
    from pario.tune.results import summarise

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)  # PartialFixedSampler
    wjson, strategy, budget, seed, others, repeat = job
    land = Landscape.from_json(wjson)
    kind, sampler = strategy_parts(strategy, seed, budget)
    with tempfile.TemporaryDirectory(prefix="pario-bench-tune-replay-") as tmp:
        settings = Settings(command=land.command, objective=OBJECTIVE, strategy=kind, budget=budget,
                            repeat=repeat, seed=seed, workdir=Path(tmp), out_root=Path(tmp), verify=True)
        storage = optuna.storages.InMemoryStorage()
        for other in others:
            seed_history(storage, Landscape.from_json(other))
        study = open_study(storage, f"{land.name}-{strategy}-{budget}-{seed}", settings, land.space)
        if sampler is not None:
            study.study.sampler = sampler
        propose: Callable = (grid_proposer(seed) if kind == "grid" else pract.pract_proposer(seed)
                             if kind == "pract" else sampler_proposer)
        # the replay's draws depend on the seed and the strategy, not on the order of the jobs
        draws = hash_seed(land.name, strategy, budget, seed)
        runner = ReplayRunner(settings, land.space, Path(tmp), land, draws)
        t0 = time.monotonic()
        study.run(propose, runner)
        seconds = time.monotonic() - t0
        summary = summarise(study.study)
        trials = study.study.get_trials(deepcopy=False)
        roles = [t.user_attrs.get("role") for t in trials]
        picked = config_key(summary.best.config) if summary.best else None
        held = pract.held_out_error(study.study) if kind == "pract" else None
    truth_best = land.truth(land.best_key())
    truth_picked = land.truth(picked) if picked else None
    truth_default = land.truth(land.default_key())
    return {"workload": land.name, "strategy": strategy, "budget": budget, "seed": seed,
            "picked": picked, "verdict": summary.verdict,
            "share": truth_picked / truth_best if truth_picked and truth_best else 0.0,
            "speedup": truth_picked / truth_default if truth_picked and truth_default else None,
            "budget_trials": sum(1 for r in roles if r in ROLES_IN_BUDGET),
            "trials": len(trials),
            "runs": sum(len(t.user_attrs.get("values") or []) for t in trials),
            "duplicates": roles.count("duplicate"),
            "distinct": len({config_key(t.user_attrs.get("config", {})) for t in trials
                             if t.user_attrs.get("role") in ROLES_IN_BUDGET}),
            "held_out_mdape": held, "seconds": round(seconds, 2)}


def hash_seed(*parts: object) -> int:
    import hashlib

    return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "little")


def run_replays(data: dict, args: argparse.Namespace) -> list[dict]:
    wl = [w for w in data["workloads"] if not args.workloads or w["name"] in args.workloads]
    jobs = [(w, s, b, seed, [o for o in wl if o is not w] if s == "pract-history" else [], args.trial_repeat)
            for w in wl for s in args.strategies for b in args.budgets for seed in range(args.seeds)]
    say(f"{len(jobs)} replayed studies ({len(wl)} workloads x {len(args.strategies)} strategies x "
        f"{len(args.budgets)} budgets x {args.seeds} seeds), {args.jobs} processes")
    t0 = time.monotonic()
    out = []
    if args.jobs > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for k, r in enumerate(pool.map(replay, jobs, chunksize=4)):
                out.append(r)
                if (k + 1) % 100 == 0:
                    say(f"  {k + 1}/{len(jobs)} in {time.monotonic() - t0:.0f} s")
    else:
        for k, job in enumerate(jobs):
            out.append(replay(job))
            if (k + 1) % 100 == 0:
                say(f"  {k + 1}/{len(jobs)} in {time.monotonic() - t0:.0f} s")
    say(f"replays done in {time.monotonic() - t0:.0f} s")
    return out


# ---- the prediction model's error ------------------------------------------------------------

def model_errors(lands: list[Landscape]) -> dict:
    """MdAPE of pario's XGBoost model on held-out data, three ways."""
    import numpy as np

    from pario.tune import pract

    per_sample_rows, per_sample_vals, med_rows, med_vals, groups = [], [], [], [], []
    for land in lands:
        for key, vals in land.values.items():
            if not vals:
                continue
            r = pract.row(land.configs[key], land.features.get(key))
            for v in vals:
                per_sample_rows.append(r)
                per_sample_vals.append(v)
            med_rows.append(r)
            med_vals.append(float(statistics.median(vals)))
            groups.append(land.name)
    out = {
        "samples": len(per_sample_vals), "configurations": len(med_vals),
        "cv_samples": pract.cross_validated_mdape(per_sample_rows, np.asarray(per_sample_vals)),
        "cv_configurations": pract.cross_validated_mdape(med_rows, np.asarray(med_vals)),
    }
    if len(set(groups)) < 2:
        out["leave_workload_out"], out["leave_workload_out_each"] = None, {}
    else:
        leave_one_out(out, med_rows, med_vals, groups)
    # noise floor: a sample against the median of its configuration's other samples
    floor = []
    for land in lands:
        for vals in land.values.values():
            for i, v in enumerate(vals):
                rest = vals[:i] + vals[i + 1:]
                if rest:
                    floor.append(abs(statistics.median(rest) - v) / v)
    out["noise_floor"] = statistics.median(floor) if floor else None
    return out


def leave_one_out(out: dict, med_rows: list, med_vals: list[float], groups: list[str]) -> None:
    """Each workload predicted by a model trained on the other workloads only."""
    import numpy as np

    from pario.tune import pract

    x = pract.features_of(med_rows)
    y = np.log(np.asarray(med_vals))
    g = np.asarray(groups)
    pred = np.empty(len(y))
    per: dict[str, float | None] = {}
    for name in dict.fromkeys(groups):
        test = g == name
        model = pract.fit(x.rows(~test), y[~test])
        pred[test] = np.exp(pract.predict(model, x.rows(test)))
        per[name] = pract.mdape(list(pred[test]), list(np.exp(y[test])))
    out["leave_workload_out"] = pract.mdape(list(pred), list(np.exp(y)))
    out["leave_workload_out_each"] = per


# ---- tables ---------------------------------------------------------------------------------

def mibs(x: float | None) -> str:
    return "–" if x is None else f"{x / MIB:.0f}"


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def repeats_done(data: dict) -> int:
    return 1 + max((s["rep"] for w in data["workloads"] for c in w["configs"] for s in c["samples"]),
                   default=-1)


def landscape_table(data: dict, lands: list[Landscape]) -> list[str]:
    out = ["**The measured landscape** (write bandwidth of the kernel's file, MiB/s, median of the "
           f"{repeats_done(data)} samples of each configuration; `spread` = median over the configurations "
           "of (max − min) / median of its samples).\n",
           "| workload | command | configs | failed runs | default | grid best | best configuration | "
           "best / default | best under OMPIO | best under ROMIO | spread |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for w, land in zip(data["workloads"], lands, strict=True):
        failed = sum(1 for c in w["configs"] for s in c["samples"] if not s.get("value"))
        best = land.best_key()
        spreads = [(max(v) - min(v)) / statistics.median(v) for v in land.values.values() if len(v) > 1]

        def best_where(pred: Callable[[dict], bool], land: Landscape = land) -> float | None:
            vals = [land.truth(k) for k, c in land.configs.items() if pred(c) and land.truth(k)]
            return max(vals) if vals else None

        romio = best_where(lambda c: c.get("mca.io") == "romio321")
        ompio = best_where(lambda c: c.get("mca.io") != "romio321")
        d = land.truth(land.default_key())
        b = land.truth(best)
        out.append(f"| {land.name} | `{w['kernel']} {' '.join(w['args'])}` | {len(land.values)} | {failed} | "
                   f"{mibs(d)} | {mibs(b)} | `{tune_config.describe(land.space, land.configs[best])}` | "
                   f"{b / d:.2f} | {mibs(ompio)} | {mibs(romio)} | "
                   f"{pct(statistics.median(spreads)) if spreads else '–'} |"
                   if d and b else f"| {land.name} | – | | | | | | | | | |")
    return out


def dimension_table(lands: list[Landscape]) -> list[str]:
    """For each dimension value: the best median with it set, over the grid best (median over workloads)."""
    dims = lands[0].space.dimensions
    head = ["dimension = value", *[land.name for land in lands]]
    out = ["\n**What matters**: the best configuration with a given setting, as a share of the grid "
           "best (100% = the best has it). `mca.io = default` is OMPIO; a dimension that applies only "
           "under one component (`romio_cb_write` under ROMIO, `mca.fcoll` under OMPIO) is compared "
           "among that component's configurations only.\n",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for d in dims:
        for v in d.choices:
            cells = []
            for land in lands:
                vals = [land.truth(k) for k, c in land.configs.items()
                        if d.active(c) and c.get(d.name) == v and land.truth(k)]
                b = land.truth(land.best_key())
                cells.append(pct(max(vals) / b) if vals and b else "–")
            out.append(f"| {d.name} = {v} | " + " | ".join(cells) + " |")
    return out


def med(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    return float(statistics.median(xs)) if xs else None


def replay_tables(reps: list[dict], args: argparse.Namespace) -> list[str]:
    by: dict[tuple[str, str, int], list[dict]] = {}
    for r in reps:
        by.setdefault((r["workload"], r["strategy"], r["budget"]), []).append(r)
    workloads = list(dict.fromkeys(r["workload"] for r in reps))
    strategies = [s for s in args.strategies if any(r["strategy"] == s for r in reps)]
    budgets = sorted({r["budget"] for r in reps})
    seeds = len({r["seed"] for r in reps})
    out = [f"\n**Share of the grid best reached**: for each workload, strategy and budget, the median "
           f"over {seeds} seeds of (true median of the configuration the study picked) / (grid best "
           "median), and in brackets the median speed-up of the pick over the default. `*` = "
           "median share above random search's at the same budget, `=` the same, nothing = below.\n"]
    for b in budgets:
        head = ["workload", *strategies]
        out += [f"\nBudget {b} trials (the default included; re-measurements and verification "
                "not counted):\n",
                "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for w in workloads:
            rnd = med([r["share"] for r in by.get((w, "random", b), [])])
            cells = []
            for s in strategies:
                rs = by.get((w, s, b), [])
                share = med([r["share"] for r in rs])
                mark = "" if s == "random" or rnd is None or share is None else (
                    "*" if share > rnd + 1e-9 else "=" if abs(share - rnd) <= 1e-9 else "")
                cells.append(f"{pct(share)}{mark} ({med([r['speedup'] for r in rs]) or 0:.2f}×)")
            out.append(f"| {w} | " + " | ".join(cells) + " |")
    # summary over workloads
    out += ["\n**Over all workloads**: median over workloads of the per-workload median share; "
            "`≥95%` = workloads whose median share is at least 95% (the target at 20 trials); "
            "`> random` = workloads where the median share beats random search's at the same budget "
            "(ties counted apart); mean share over every seed and workload.\n",
            "`distinct` = mean number of different configurations among the budget's trials "
            "(a sampler may propose one again).\n",
            "`− random` = mean over workloads and seeds of (share − random search's share with the same "
            "workload and seed), with a 95% bootstrap interval.\n",
            "| strategy | budget | median share | ≥95% | > random / = / < | mean share | − random | "
            "mean speed-up | distinct |",
            "|---|---|---|---|---|---|---|---|---|"]
    for s in strategies:
        for b in budgets:
            shares = [med([r["share"] for r in by.get((w, s, b), [])]) for w in workloads]
            rnds = [med([r["share"] for r in by.get((w, "random", b), [])]) for w in workloads]
            allr = [r for w in workloads for r in by.get((w, s, b), [])]
            win = sum(1 for a, r in zip(shares, rnds, strict=True)
                      if a is not None and r is not None and a > r + 1e-9)
            tie = sum(1 for a, r in zip(shares, rnds, strict=True) if a is not None and r is not None
                      and abs(a - r) <= 1e-9)
            lose = len(workloads) - win - tie
            vs = "–" if s == "random" else f"{win} / {tie} / {lose}"
            ok = sum(1 for a in shares if a is not None and a >= 0.95)
            mean_share = statistics.fmean(r["share"] for r in allr) if allr else None
            sp = [r["speedup"] for r in allr if r["speedup"]]
            gmean = math.exp(statistics.fmean(math.log(x) for x in sp)) if sp else 0.0
            diff = "–" if s == "random" else versus_random(by, workloads, s, b)
            out.append(f"| {s} | {b} | {pct(med(shares))} | {ok}/{len(workloads)} | {vs} | "
                       f"{pct(mean_share)} | {diff} | {gmean:.2f}× | "
                       f"{statistics.fmean(r['distinct'] for r in allr) if allr else 0:.1f} |")
    return out + verdict_lines(reps)


def verdict_lines(reps: list[dict]) -> list[str]:
    """How often the study's verdict agreed with the truth about its pick and the default."""
    counts: dict[tuple[str, bool], int] = {}
    for r in reps:
        slower = (r["speedup"] or 0.0) < 1.0
        counts[(r["verdict"], slower)] = counts.get((r["verdict"], slower), 0) + 1
    verdicts = sorted({v for v, _ in counts})
    out = ["\n**Verdicts against the truth**: studies by `pario tune`'s verdict on its pick, and whether "
           "the pick's true median is above or below the default's.\n",
           "| verdict | pick truly faster | pick truly slower |", "|---|---|---|"]
    for v in verdicts:
        out.append(f"| {v} | {counts.get((v, False), 0)} | {counts.get((v, True), 0)} |")
    return out


def versus_random(by: dict, workloads: list[str], strategy: str, budget: int) -> str:
    """Mean share difference to random search (same workload and seed), with a bootstrap 95% interval."""
    diffs = []
    for w in workloads:
        rnd = {r["seed"]: r["share"] for r in by.get((w, "random", budget), [])}
        diffs += [r["share"] - rnd[r["seed"]] for r in by.get((w, strategy, budget), []) if r["seed"] in rnd]
    if not diffs:
        return "–"
    rng = random.Random(0)
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(2000))
    lo, hi = means[50], means[1949]
    return f"{100 * statistics.fmean(diffs):+.0f} [{100 * lo:+.0f}, {100 * hi:+.0f}]"


def model_table(errors: dict, reps: list[dict]) -> list[str]:
    held = [r["held_out_mdape"] for r in reps if r["strategy"] == "pract" and r["held_out_mdape"] is not None]
    per_budget: dict[int, list[float]] = {}
    hist: dict[int, list[float]] = {}
    for r in reps:
        if r["held_out_mdape"] is not None:
            (per_budget if r["strategy"] == "pract" else hist).setdefault(r["budget"], []).append(
                r["held_out_mdape"])
    each = errors.get("leave_workload_out_each") or {}
    out = ["\n**PrAct model error** (MdAPE, target < 15%):\n",
           "| held out | MdAPE |", "|---|---|",
           f"| 5-fold over configurations (median of each configuration's samples; "
           f"{errors['configurations']} rows, all workloads) | {pct(errors['cv_configurations'])} |",
           f"| 5-fold over single samples ({errors['samples']} rows; repeats of a configuration may fall "
           f"on both sides) | {pct(errors['cv_samples'])} |",
           f"| one workload left out (trained on the others only) | {pct(errors['leave_workload_out'])} "
           f"({', '.join(f'{k} {pct(v)}' for k, v in each.items())}) |",
           f"| in the pract replays: each prediction made before its trial ran, median over studies "
           f"({len(held)}) | {pct(med(held))} "
           f"({', '.join(f'budget {b}: {pct(med(v))}' for b, v in sorted(per_budget.items()))}) |",
           "| in the pract-history replays (the other workloads' grids in the storage) | "
           f"{pct(med([x for v in hist.values() for x in v]))} "
           f"({', '.join(f'budget {b}: {pct(med(v))}' for b, v in sorted(hist.items()))}) |",
           f"| noise floor: a sample against the median of its configuration's other samples | "
           f"{pct(errors['noise_floor'])} |"]
    return out


def render(data: dict, reps: list[dict], errors: dict, args: argparse.Namespace) -> str:
    lands = [Landscape.from_json(w) for w in data["workloads"]]
    notes = [
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(data['started']))}, "
        f"{data.get('minutes', 0):.1f} min; load average {data['load_start'][0]:.2f} at the start, "
        f"{data.get('load_end', [0])[0]:.2f} at the end; {data.get('cores')} cores, shared with other jobs; "
        f"checkout {data.get('git')}; runs in `{data['directory']}` ({data.get('fs')}).",
        f"{repeats_done(data)} interleaved repeats of every configuration; Open MPI, objective {OBJECTIVE}.",
        f"Replays: {len(reps)} studies, seeds 0–{args.seeds - 1}, budgets "
        f"{', '.join(str(b) for b in args.budgets)}, --repeat {args.trial_repeat} (samples drawn per trial), "
        f"verify on; tuner of checkout {getattr(args, 'replay_git', None)}.",
    ]
    lines = [*(f"- {n}" for n in notes), "", *landscape_table(data, lands), *dimension_table(lands)]
    if reps:
        lines += replay_tables(reps, args)
    if errors:
        lines += model_table(errors, reps)
    return "\n".join(lines) + "\n"


# ---- driver ---------------------------------------------------------------------------------

def csv(text: str) -> list[str]:
    return [x for x in (s.strip() for s in text.split(",")) if x]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help=f"~3 minutes: {', '.join(QUICK_WORKLOADS)}, 2 repeats, 3 seeds, budgets 10,20")
    p.add_argument("--out", type=Path, default=Path("build/bench-tune"), help="directory of the results")
    p.add_argument("--from-samples", type=Path, default=None,
                   help="no measurement: replay on the samples of an earlier run (OUT/samples.json)")
    p.add_argument("--workloads", type=csv, default=None,
                   help=f"default all: {', '.join(w.name for w in WORKLOADS)}")
    p.add_argument("--repeats", type=int, default=None, help="samples per configuration (default 3)")
    p.add_argument("--budgets", type=lambda s: [int(x) for x in csv(s)], default=None,
                   help="default 10,20,40")
    p.add_argument("--seeds", type=int, default=None, help="seeds per strategy and budget (default 20)")
    p.add_argument("--strategies", type=csv, default=[s for s in STRATEGIES if s != "gp" or has_torch()],
                   help=", ".join(STRATEGIES) + " (default: all; gp only where PyTorch can be imported)")
    p.add_argument("--jobs", type=int, default=1, help="processes for the replays (default 1)")
    p.add_argument("--dir", type=Path, default=None, help="where the kernels write (default: a new /tmp dir)")
    p.add_argument("--trial-repeat", type=int, default=1,
                   help="runs per trial in the replays (pario tune --repeat; default 1): each draws a sample")
    p.add_argument("--tables-only", action="store_true",
                   help="with --from-samples: no replay, the tables of OUT/replays.json again")
    p.add_argument("--order-seed", type=int, default=0, help="seed of the shuffled run order")
    args = p.parse_args()
    args.repeats = args.repeats or (2 if args.quick else 3)
    args.budgets = args.budgets or ([10, 20] if args.quick else [10, 20, 40])
    args.seeds = args.seeds or (3 if args.quick else 20)
    if args.workloads is None and args.quick:
        args.workloads = list(QUICK_WORKLOADS)
    for s in args.strategies:
        if s not in STRATEGIES:
            p.error(f"unknown strategy {s!r}: one of {', '.join(STRATEGIES)}")
    if args.tables_only and not args.from_samples:
        p.error("--tables-only needs --from-samples (the samples the replays were made on)")
    known = {w.name: w for w in WORKLOADS}
    for name in args.workloads or []:
        if name not in known and not args.from_samples:
            p.error(f"unknown workload {name!r}: one of {', '.join(known)}")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.from_samples:
        try:
            data = json.loads(args.from_samples.read_text())
        except (OSError, ValueError) as exc:
            p.error(f"{args.from_samples}: {exc}")
    else:
        chosen = [known[n] for n in args.workloads] if args.workloads else list(WORKLOADS)
        data = measure_grid(args, chosen, args.out)
    if args.workloads:
        data["workloads"] = [w for w in data["workloads"] if w["name"] in args.workloads]
    if args.tables_only:
        saved = json.loads((args.out / "replays.json").read_text())
        reps, errors = saved["replays"], saved["model_errors"]
        args.seeds = 1 + max((r["seed"] for r in reps), default=-1)
        args.budgets = sorted({r["budget"] for r in reps})
        args.trial_repeat = saved["args"].get("trial_repeat", 1)
        args.replay_git = saved.get("git")
        args.strategies = [s for s in STRATEGIES if any(r["strategy"] == s for r in reps)]
    else:
        args.replay_git = git_state()
        reps = run_replays(data, args)
        lands = [Landscape.from_json(w) for w in data["workloads"]]
        enough = sum(len(v) for land in lands for v in land.values.values()) >= 10
        errors = model_errors(lands) if enough else {}
        save_json(args.out / "replays.json", {"args": {k: (str(v) if isinstance(v, Path) else v)
                                                       for k, v in vars(args).items()},
                                              "git": args.replay_git, "model_errors": errors,
                                              "replays": reps})
    report = render(data, reps, errors, args)
    (args.out / "tables.md").write_text(report)
    print(report)
    say(f"wrote {args.out}/{'' if args.from_samples else 'samples.json, '}replays.json and tables.md")
    return 0


def save_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def fs_line(path: Path) -> str:
    out = subprocess.run(["df", "-hT", str(path)], capture_output=True, text=True).stdout.splitlines()
    return " ".join(out[-1].split()[:3]) if out else "?"


def git_state() -> str | None:
    here = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
