"""``pario tune [options] -- <launch command>`` and ``pario tune report STUDY``: autotune the I/O settings."""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from pario.commands import add_slurm_launcher, add_timeout, positive_int, sbatch_args
from pario.errors import ParioError

_EPILOG = """\
examples:
  pario tune --budget 20 -- mpirun -np 16 ./app input.nml
  pario tune --objective write-bw --files '*.h5' --repeat 3 -- srun -n 64 ./app
  pario tune --show-space -- mpirun -np 16 ./app
  pario tune --strategy pract --study app-16 \\
      --storage postgresql://me@db/pario -- mpirun -np 16 ./app
  pario tune --launcher slurm --jobs 4 \\
      --sbatch-args "-N 2 -n 64 -t 10" -- srun ./app -o '{trial_dir}/out.dat'
  pario tune report app-16 --html app-16.html

Each trial is a `pario run` of the command with one configuration (MPI-IO
hints through PARIO_HINTS, Open MPI MCA variables, pario's collective engine,
Lustre striping). The default configuration is measured first, the same way
(if it fails, the study stops there); at the end the best and the default are
run until each has 3 samples and the best is only called better when the
difference is outside the noise. {trial_dir} in the command becomes each
run's own directory: give it for the files trials running at once (--jobs)
must not share. Studies are stored (default: SQLite in .pario/tune.db) and
resume with --study NAME. Files: .pario/tune/<study>/ (each run's log,
stdout and stderr; best.hints). See docs/tune.md."""


def register(sub: argparse._SubParsersAction) -> None:
    from pario.tune.choices import OBJECTIVES, STRATEGIES

    parser = sub.add_parser(
        "tune",
        help="autotune MPI-IO hints, MPI-IO components, collective algorithms and striping for a program",
        description=textwrap.fill(
            "Run a program again and again under pario with different I/O settings, read the "
            "objective from each run's log, search (Bayesian optimisation, an XGBoost prediction model, "
            "random or grid), and hand back a hints file usable without recompiling. "
            "'pario tune report STUDY [--html FILE] [--json FILE]' reports on a stored study.", 79),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--budget", type=positive_int, default=20, metavar="N",
                        help="configurations to measure, the default included (default 20)")
    parser.add_argument("--objective", choices=list(OBJECTIVES), default="write-bw",
                        help="what to optimise (default write-bw): " +
                        "; ".join(f"{k}: {v}" for k, v in OBJECTIVES.items()))
    parser.add_argument("--files", metavar="GLOB", help="measure (and set hints for) only the files "
                        "matching GLOB (with a '/': the whole path, else the base name)")
    parser.add_argument("--space", metavar="FILE", type=Path,
                        help="TOML file that narrows or extends the detected space (docs/tune.md)")
    parser.add_argument("--show-space", action="store_true", help="print the space for this command and exit")
    parser.add_argument("--strategy", choices=list(STRATEGIES), default="exact",
                        help="exact: Optuna's multivariate TPE over real runs (default); pract: XGBoost "
                        "model, its top predictions run for real; random; grid")
    parser.add_argument("--repeat", type=positive_int, default=1, metavar="R", help="runs per "
                        "configuration (the median counts; default 1)")
    parser.add_argument("--study", metavar="NAME",
                        help="study name; an existing study of the same command resumes "
                        "(default: <program>-<objective>-<date>)")
    parser.add_argument("--storage", metavar="URL", help="Optuna storage: sqlite:///PATH (default "
                        "sqlite:///.pario/tune.db), postgresql://USER@HOST/DB, journal:PATH")
    parser.add_argument("--jobs", type=positive_int, default=1, metavar="J", help="trials at once "
                        "(default 1)")
    add_slurm_launcher(parser, "each run is an sbatch job")
    add_timeout(parser)
    parser.add_argument("--seed", type=int, metavar="N", help="seed of the strategy")
    parser.add_argument("--no-verify", action="store_true", help="skip the final re-measurement of the "
                        "best and the default (no winner is then declared)")
    parser.add_argument("--json", metavar="FILE", help="write the result as JSON ('-': standard output)")
    parser.add_argument("--out", metavar="DIR", type=Path, help="where the best hints files go (default "
                        ".pario/tune/<study>/)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the launch command")
    parser.set_defaults(func=_run)


def _report_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pario tune report", description="Report on a stored tuning study.")
    p.add_argument("study", metavar="STUDY")
    p.add_argument("--storage", metavar="URL", help="the study's storage (default sqlite:///.pario/tune.db)")
    p.add_argument("--html", metavar="FILE",
                   help="also write an HTML report (convergence, importances, trials)")
    p.add_argument("--json", metavar="FILE", help="write the summary as JSON ('-': standard output)")
    return p


def _run(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command and command[0] == "report":
        return _report(_report_parser().parse_args(command[1:]))
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise ParioError("no command to tune: pario tune [options] -- mpirun -np N ./app")
    import shutil

    if shutil.which(command[0]) is None:  # found on PATH, or a path to an executable file
        raise ParioError(f"command not found: {command[0]}")
    if args.files is not None and not args.files.strip():
        raise ParioError("--files: an empty glob (give a file name pattern, e.g. '*.h5')")
    from pario.tune import session as tune
    from pario.tune.study import Settings

    settings = Settings(command=command, objective=args.objective, files=args.files, strategy=args.strategy,
                        budget=args.budget, repeat=args.repeat, jobs=args.jobs, launcher=args.launcher,
                        timeout=args.timeout, seed=args.seed, verify=not args.no_verify,
                        sbatch_args=sbatch_args(args.sbatch_args))
    if args.launcher == "slurm":
        if shutil.which("sbatch") is None:
            raise ParioError("--launcher slurm: sbatch not found on PATH")
    if args.jobs > 1:
        from pario.tune.study import shared_paths

        for path in shared_paths(command):
            print(f"pario tune: warning: with --jobs {args.jobs} the trials run at the same time, and all "
                  f"would use {path}: if the command writes it, write {{trial_dir}} in its place (each "
                  "run's own directory), e.g. -o '{trial_dir}/out.dat'", file=sys.stderr)
    space = tune.make_space(settings, args.space)
    if args.show_space:
        from pario.textfit import terminal_width
        from pario.tune.space import render

        print("\n".join(render(space, terminal_width())))
        return 0
    name = args.study or tune.default_study_name(command, args.objective)
    if "/" in name or not name.strip():
        raise ParioError(f"--study {name!r}: a name without '/'")
    # a bad --storage, a study of another command, a space too large for a grid: errors before
    # any progress is drawn
    study, runner = tune.start(settings, space, name, args.storage)
    try:
        with _progress(args.budget, args.objective) as progress:
            summary = tune.run(study, runner, progress)
    except KeyboardInterrupt:
        print(f"pario tune: interrupted; the finished trials are stored: resume with --study {name}"
              + (f" --storage {args.storage}" if args.storage else ""), file=sys.stderr)
        return 130
    return _finish(study, summary, args)




class _progress:
    """Progress on stderr: on a terminal a Rich bar (trial n/N, the best so far, the time left)
    and each trial's line; elsewhere (a log file, a batch job's output) plain lines per trial:
    its value and the best so far, then its settings, indented, within the terminal's width
    (textfit.terminal_width: $COLUMNS, else 80)."""

    def __init__(self, budget: int, objective: str) -> None:
        self.budget = budget
        self.objective = objective
        self.bar = None

    def __enter__(self):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        console = Console(stderr=True)
        if console.is_terminal:
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeRemainingColumn(), TextColumn("{task.fields[best]}"),
                                console=console, transient=False)
            self.bar.__enter__()
            self.task = self.bar.add_task("tuning", total=self.budget, best="")
        return self.update

    def update(self, state) -> None:
        from pario.textfit import Wrapped, terminal_width, wrap_words
        from pario.tune.objective import show_value

        best = ""
        if state.best:
            best = f"best {show_value(self.objective, state.best)} (trial {state.best_trial})"
        phase = "verifying" if state.phase == "verify" else "tuning"
        if self.bar is None:
            done = f"{min(state.done, self.budget)}/{self.budget}"
            line = f"pario tune: {phase} {done}: {state.last}" + (f"; {best}" if best else "")
            settings = f"    {state.last_config}"
            width = terminal_width(sys.stderr)
            lines = wrap_words(line, width, 4) + wrap_words(settings, width, 4)
            print("\n".join(lines), file=sys.stderr, flush=True)
            return
        self.bar.update(self.task, completed=min(state.done, self.budget), best=best, description=phase)
        self.bar.console.print(Wrapped(f"  {state.last}  {state.last_config}", indent=4))

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


def _finish(study, summary, args: argparse.Namespace) -> int:
    from pario.tune import output
    from pario.tune.results import dumps

    written = output.best_files(summary, study.space, args.out or study.dir, study.settings.files)
    from pario.textfit import terminal_width

    for line in output.lines(summary, study.space, written, study.settings.command, terminal_width()):
        print(line)
    if args.json:
        data = dumps(summary)
        if args.json == "-":
            print(data)
        else:
            Path(args.json).write_text(data + "\n")
    return 0 if summary.verdict != "no-result" else 1


def _report(args: argparse.Namespace) -> int:
    from pario.tune.report import report

    report(args.study, args.storage, html=args.html, json_path=args.json, out=sys.stdout)
    return 0
