"""Run a launch command (mpirun, mpiexec, srun, or a plain program) under the runtime.

The runtime reaches the application's processes, and only them: Open MPI's
mpirun gets ``-x LD_PRELOAD=...``, MPICH's Hydra ``-genv``, srun
``--export=ALL,...``; a plain program gets the variables in its environment
(with ``PARIO_PARENT_PID`` so that programs it starts in turn stay silent).
A job script, or any command that starts MPI jobs itself, is a plain program
whose MPI jobs each write a step log of their own (``PARIO_STEPS``).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pario import paths
from pario.errors import ParioError
from pario.launch import mpi_match, run_notes
from pario.launch.job_logs import LOST_SUFFIX, lost_reason, rank_logs, step_logs, step_stem
from pario.launch.mpi_match import MPIRUN_NAMES


@dataclass(frozen=True)
class Launch:
    """A fully prepared launch: argument list, environment, and where the logs will be.

    ``log`` is the log of the job (a file), or the directory in which the
    runtime names each job's log; ``steps`` is True when the command is not a
    launcher (a job script, a program that runs mpirun itself): each MPI job it
    starts then writes ``<log stem>.step<N>.pario`` beside ``log``.
    """

    argv: list[str]
    env: dict[str, str]
    log: Path
    log_is_dir: bool = False
    steps: bool = False
    notes: Path | None = None
    #: the logs that were already there before the run (path -> inode, mtime, size): not announced
    previous: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    #: "openmpi" or "hydra" for mpirun/mpiexec, None otherwise
    flavour: str | None = None


def is_launcher(command: list[str]) -> bool:
    """True for mpirun/mpiexec (Open MPI, MPICH) and srun."""
    name = Path(command[0]).name
    return name in MPIRUN_NAMES or name == "srun"


@lru_cache(maxsize=8)
def mpirun_flavour(launcher: str) -> str:
    """'openmpi' or 'hydra' (MPICH, Intel MPI), from ``launcher --version``."""
    try:
        out = subprocess.run([launcher, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "openmpi"
    text = (out.stdout + out.stderr).lower()
    if "hydra" in text or "mpich" in text or "intel(r) mpi" in text:
        return "hydra"
    return "openmpi"


def default_log_name(command: list[str]) -> str:
    """``<program>-<date>-<time>.pario`` in the current directory."""
    program = _guess_program(command)
    return f"{program}-{time.strftime('%Y%m%d-%H%M%S')}.pario"


def _guess_program(command: list[str]) -> str:
    if is_launcher(command):
        program = mpi_match.program_in(command, launcher_known=True)
        return program.name if program else "job"
    return Path(command[0]).name


def mark_lost_steps(launch: Launch, exit_code: int) -> list[Path]:
    """The steps whose job reached MPI_Init but left no log (its ranks killed before they wrote
    one): each one's reservation (the empty ``<step log>.tmp`` rank 0 made at MPI_Init) becomes
    a ``<step log>.lost`` note saying why, so that nothing temporary is left and the reports can
    say what happened.  Their step log paths."""
    if not launch.steps:
        return []

    lost = []
    for tmp in sorted(launch.log.parent.glob(f"{step_stem(launch.log)}.step*.pario.tmp")):
        step = tmp.with_name(tmp.name[: -len(".tmp")])
        try:
            empty = tmp.stat().st_size == 0
        except OSError:
            continue
        if not empty or step.exists() or rank_logs(step):
            continue  # a log being written, or written: not lost
        why = run_notes.lost_job_reason(launch.notes, exit_code)
        try:
            (step.parent / (step.name + LOST_SUFFIX)).write_text(why + "\n")
            tmp.unlink()
        except OSError:
            continue
        lost.append(step)
    return lost


def _clear_step_logs(log: Path) -> None:
    """A new run under the same log name replaces the old step logs (as it replaces the log)."""

    for path in step_logs(log):
        for stale in [path, *path.parent.glob(path.name + ".rank*"), path.parent / (path.name + ".tmp"),
                      path.parent / (path.name + LOST_SUFFIX)]:
            stale.unlink(missing_ok=True)


def log_target(log: str) -> tuple[Path, bool]:
    """``log`` as an absolute path, and whether it names a directory (it ends in '/' or is one);
    one-line error when the directory it needs does not exist."""
    path = Path(log)
    as_dir = log.endswith("/") or path.is_dir()
    path = path.resolve()
    where = path if as_dir else path.parent
    if not where.is_dir():
        raise ParioError(f"--log: directory {where} does not exist")
    return path, as_dir


def prepare(command: list[str], log: str | None = None, extra_env: dict[str, str] | None = None,
            notes: bool = False) -> Launch:
    """Build the argument list and environment that run ``command`` under libpario.so.

    ``notes``: the processes say why they wrote no log (run_notes; call :func:`finish` after).
    """
    if not command:
        raise ParioError("no command given: use `pario run [--log PATH] -- <launch command>`")
    exe = shutil.which(command[0])
    if exe is None:
        raise ParioError(f"command not found: {command[0]}")
    lib = paths.runtime_library()
    launcher = Path(command[0]).name
    flavour = mpirun_flavour(exe) if launcher in MPIRUN_NAMES else None
    mpi_match.check(lib, launcher, flavour, mpi_match.program_in(command, is_launcher(command)))
    log_path, log_is_dir = log_target(log or default_log_name(command))

    pario_vars = {k: v for k, v in os.environ.items() if k.startswith("PARIO_")}
    pario_vars.update(extra_env or {})
    pario_vars["PARIO_LOG"] = str(log_path) + ("/" if log_is_dir else "")
    # The command as the user gave it, recorded in the log so that the
    # report's suggestions can repeat the launcher's own options.
    pario_vars["PARIO_LAUNCH"] = json.dumps(command)
    # Only the profiled program writes the log: under a launcher, only MPI
    # ranks ("mpi" matches no parent pid); a plain program is the direct
    # child of this process.  Tools those processes spawn stay silent.
    pario_vars["PARIO_PARENT_PID"] = "mpi"
    pario_vars.pop("PARIO_STEPS", None)
    pario_vars.pop("PARIO_RUN_NOTES", None)
    notes_file = run_notes.create(log_path if log_is_dir else log_path.parent) if notes else None
    if notes_file is not None:
        pario_vars["PARIO_RUN_NOTES"] = str(notes_file)
    preload = ":".join(p for p in (str(lib), os.environ.get("LD_PRELOAD", "")) if p)

    env = dict(os.environ)
    steps = False
    if flavour is not None:
        if flavour == "hydra":
            inject = ["-genv", "LD_PRELOAD", preload]
            for k, v in sorted(pario_vars.items()):
                inject += ["-genv", k, v]
        else:
            inject = ["-x", f"LD_PRELOAD={preload}"]
            for k, v in sorted(pario_vars.items()):
                inject += ["-x", f"{k}={v}"]
        argv = [command[0], *inject, *command[1:]]
    elif launcher == "srun":
        # --export=ALL carries srun's own environment too: values with a
        # comma (the JSON command) travel that way.
        env["PARIO_LAUNCH"] = pario_vars.pop("PARIO_LAUNCH")
        values = {"LD_PRELOAD": preload, **pario_vars}
        bad = [k for k, v in values.items() if "," in v]
        if bad:
            raise ParioError(f"srun --export cannot carry a comma in {', '.join(bad)}; "
                             "use a path without commas")
        export = ",".join(["ALL", *(f"{k}={v}" for k, v in sorted(values.items()))])
        argv = [command[0], f"--export={export}", *command[1:]]
    else:
        # A plain program, or a job script / tool that starts MPI jobs itself:
        # the direct child writes the log asked for, and every MPI job started
        # beneath it a step log of its own (the environment reaches the ranks
        # through mpirun, mpiexec and srun, which pass it on).
        env.update(pario_vars)
        env["LD_PRELOAD"] = preload
        env["PARIO_PARENT_PID"] = str(os.getpid())
        env["PARIO_STEPS"] = "1"
        argv = list(command)
        steps = not log_is_dir
        if steps:
            _clear_step_logs(log_path)
    previous = {} if log_is_dir else _signatures(log_path)
    return Launch(argv=argv, env=env, log=log_path, log_is_dir=log_is_dir, steps=steps, notes=notes_file,
                  previous=previous, flavour=flavour)


#: How long the command has to end by itself after a signal to ``pario run`` before pario passes
#: the signal on: a signal sent to the whole process group (Ctrl-C, Slurm, pario tune's
#: timeout) has reached the command too, and a second one makes mpirun abort at once, leaving
#: its ranks behind.
SIGNAL_GRACE = 10.0


def run(launch: Launch) -> int:
    """Run a prepared launch; return the command's exit code.

    SIGTERM and SIGHUP sent to ``pario run`` reach the command once: sent to the process group,
    the command has them already; sent to ``pario run`` alone, they are passed on when the
    command is still running :data:`SIGNAL_GRACE` seconds later.  Ctrl-C likewise: the command
    is ended (SIGTERM, then SIGKILL) only if the terminal's SIGINT has not ended it.  pario then
    cleans up after it (:func:`finish`)."""
    try:
        proc = subprocess.Popen(launch.argv, env=launch.env)
    except OSError as exc:
        raise ParioError(f"cannot run {launch.argv[0]}: {exc.strerror}") from None

    received: list[int] = []

    def note(signum: int, _frame: object) -> None:
        received.append(signum)

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            previous[sig] = signal.signal(sig, note)
        except ValueError:  # not the main thread: leave the signals alone
            break
    try:
        while True:
            try:
                return proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
            if received:
                signum = received[-1]
                received.clear()
                if not _ended_within(proc, SIGNAL_GRACE):
                    proc.send_signal(signum)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if proc.poll() is None and not _ended_within(proc, SIGNAL_GRACE):  # interrupted (Ctrl-C)
            proc.terminate()
            if not _ended_within(proc, SIGNAL_GRACE):
                proc.kill()


def _ended_within(proc: subprocess.Popen, seconds: float) -> bool:
    try:
        proc.wait(timeout=seconds)
        return True
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        return False


def finish(launch: Launch) -> None:
    """Remove what the launch left beside the log for pario itself (the notes)."""
    run_notes.discard(launch.notes)


#: how the summary names a log it found: the command layer gives pario.log's reading of its
#: metadata (``job.step1.pario (io_known, 4 ranks)``); the path alone by default
Describe = Callable[[Path], str]


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _signatures(log: Path) -> dict[str, tuple[int, int, int]]:
    """The log and its per-rank logs as they are now (inode, mtime, size)."""

    found = {str(p): _signature(p) for p in [log, *rank_logs(log)]}
    return {k: v for k, v in found.items() if v is not None}


def _one_log(log: Path, previous: dict[str, tuple[int, int, int]], describe: Describe) -> str | None:
    """The log this run wrote at ``log`` (or its per-rank logs), None if it wrote none: a file
    still as it was before the run is an earlier run's."""

    def new(p: Path) -> bool:
        return _signature(p) != previous.get(str(p))

    if log.is_file() and new(log):
        return describe(log)
    partial = [p for p in rank_logs(log) if new(p)]
    if partial:
        return (f"{log} (the job did not finish MPI: {len(partial)} per-rank log(s) "
                f"{partial[0].name}{' ...' if len(partial) > 1 else ''}, read together under this name)")
    return None


def _refusal(launch: Launch, exit_code: int) -> str:
    """Why Open MPI's mpirun may have refused to start the job, when no process of it started:
    running as root, or more ranks than cores (what containers and small VMs meet first)."""
    if launch.flavour != "openmpi" or not exit_code or run_notes.tally(launch.notes).loaded:
        return ""
    env, argv = launch.env, launch.argv
    causes = []
    if os.geteuid() == 0 and not ("--allow-run-as-root" in argv or env.get("OMPI_ALLOW_RUN_AS_ROOT") == "1"
                                  and env.get("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM") == "1"):
        causes.append("Open MPI's mpirun refuses to run as root unless OMPI_ALLOW_RUN_AS_ROOT=1 and "
                      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set (or --allow-run-as-root is given)")
    ranks = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-np", "-n", "--np")), "")
    oversubscribe = "--oversubscribe" in argv or env.get("OMPI_MCA_rmaps_base_oversubscribe") in ("1", "true")
    if ranks.isdigit() and int(ranks) > (os.cpu_count() or 1) and not oversubscribe:
        causes.append(f"it refuses {ranks} ranks on {os.cpu_count()} cores unless --oversubscribe is given "
                      "(or OMPI_MCA_rmaps_base_oversubscribe=1 is set)")
    return ("; " + "; ".join(causes)) if causes else ""


def summary(launch: Launch, since: float, exit_code: int = 0, describe: Describe = str) -> list[str]:
    """What ``pario run`` says when the command is over: the logs written, one line each (each
    named by ``describe``), or why there is none."""
    if launch.log_is_dir:
        logs = sorted((p for p in launch.log.glob("*.pario") if p.stat().st_mtime >= since - 1),
                      key=lambda p: p.stat().st_mtime)
        if not logs:
            return [f"no log was written in {launch.log}: {run_notes.no_log_reason(launch.notes, exit_code)}"]
        return [f"log written to {describe(p)}" for p in logs]

    own = _one_log(launch.log, launch.previous, describe)
    step_paths = step_logs(launch.log) if launch.steps else []  # cleared before the run
    steps = [line for line in (_step_line(p, describe) for p in step_paths) if line]
    if not steps:
        if own:
            return [f"log written to {own}"]
        stale = f"; {launch.log} is an earlier run's, left as it was" if launch.log.is_file() else ""
        elsewhere = [p for p in run_notes.written(launch.notes) if Path(p) != launch.log]
        if elsewhere:
            jobs = "MPI job wrote its log" if len(elsewhere) == 1 else "MPI jobs wrote their logs"
            return [f"no log was written to {launch.log}: the command's {jobs} where their own PARIO_LOG "
                    f"said (a pario env inside the command){stale}:", *[f"  {p}" for p in elsewhere]]
        why = run_notes.no_log_reason(launch.notes, exit_code) + _refusal(launch, exit_code)
        return [f"no log was written to {launch.log}: {why}{stale}"]
    lines = [f"log of the command itself: {own}"] if own else []
    lost = sum(1 for p in step_paths if lost_reason(p) is not None)
    lines.append(f"{len(steps)} MPI {'job' if len(steps) == 1 else 'jobs'} started by the command"
                 + (", one log each:" if not lost else f", {lost} of them without a log:"))
    return lines + [f"  {line}" for line in steps]


def _step_line(step: Path, describe: Describe) -> str | None:
    """One step's line of the summary: its log, or why it has none."""

    why = lost_reason(step)
    return f"{step}: no log, {why}" if why is not None else _one_log(step, {}, describe)


#: Variables Open MPI's mpirun forwards to the ranks on other nodes too.
FORWARDED = ("LD_PRELOAD", "PARIO_LOG", "PARIO_STEPS", "PARIO_PARENT_PID", "PARIO_HINTS", "PARIO_MEM",
             "PARIO_EXCLUDE", "PARIO_COLL", "PARIO_TRACE", "PARIO_TRACE_BUFFER", "PARIO_TRACE_MAX")


def env_exports(log: str | None, hints: str | None = None, collective: str | None = None,
                trace: bool = False) -> list[str]:
    """Shell lines that switch the runtime on inside a job script (``eval "$(pario env)"``).

    Every MPI job started after them writes its own log: in the directory
    ``log`` (default: the current one) under an automatic name, or, for a
    file name, ``<stem>.step<N>.pario``.  Only MPI ranks write logs
    (``PARIO_PARENT_PID=mpi``); the shell and the tools it runs stay silent.
    ``srun`` and MPICH's ``mpiexec`` pass the environment on; Open MPI's
    ``mpirun`` is told to with ``OMPI_MCA_mca_base_env_list`` (the variables that are
    set).  ``hints`` (a checked hints file) and ``collective`` (a checked
    ``ALGO[:SHUFFLE]``) become ``PARIO_HINTS`` and ``PARIO_COLL``; ``trace`` exports
    ``PARIO_TRACE=1`` (event traces, docs/trace.md).
    """
    lib = paths.runtime_library()
    target, as_dir = log_target(log or f"{Path.cwd()}/")
    values = {
        "PARIO_LOG": str(target) + ("/" if as_dir else ""),
        "PARIO_STEPS": "1",
        "PARIO_PARENT_PID": "mpi",
    }
    if hints:
        values["PARIO_HINTS"] = hints
    if collective:
        values["PARIO_COLL"] = collective
    if trace:
        values["PARIO_TRACE"] = "1"
    # only variables that are set: Open MPI warns at every mpirun about a name it cannot find
    forwarded = ";".join(k for k in FORWARDED if k == "LD_PRELOAD" or k in values or os.environ.get(k))
    lines = [f'export LD_PRELOAD={shlex.quote(str(lib))}"${{LD_PRELOAD:+:$LD_PRELOAD}}"']
    lines += [f"export {k}={shlex.quote(v)}" for k, v in values.items()]
    lines.append(f'export OMPI_MCA_mca_base_env_list="${{OMPI_MCA_mca_base_env_list:+'
                 f'$OMPI_MCA_mca_base_env_list;}}{forwarded}"')
    return lines
