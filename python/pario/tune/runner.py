"""Running one measurement of a trial: ``pario run`` of the user's command, locally or as a Slurm job.

Commands are argument lists, never shell strings.  A run that exits non-zero, outlives its
timeout (its whole process group is killed) or writes no log is a failure, kept with the tail
of its stderr; the study goes on.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

STDERR_TAIL_LINES = 15
KILL_GRACE = 5.0  # seconds between SIGTERM and SIGKILL of a run past its timeout


@dataclass(frozen=True)
class RunResult:
    status: str  # "ok", "failed", "timeout"
    log: Path
    seconds: float
    returncode: int | None
    stderr_tail: str


def pario_run_argv(log: Path, run_args: Sequence[str], command: Sequence[str]) -> list[str]:
    """``pario run --log LOG [options] -- COMMAND`` with the same Python as this process."""
    return [sys.executable, "-m", "pario", "run", "--log", str(log), *run_args, "--", *command]


def tail(path: Path, lines: int = STDERR_TAIL_LINES) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(size - 16384, 0))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


#: runs going on, with what cancels them besides a kill (scancel of a Slurm job)
_live: dict[subprocess.Popen, Callable[[], None] | None] = {}
_live_lock = threading.Lock()


def _started(proc: subprocess.Popen, cancel: Callable[[], None] | None = None) -> subprocess.Popen:
    with _live_lock:
        _live[proc] = cancel
    return proc


def kill_all() -> int:
    """Stop every run still going (Ctrl-C of pario tune: the runs are in sessions of their own)."""
    with _live_lock:
        procs = list(_live.items())
    for proc, cancel in procs:
        if cancel:
            cancel()
        _kill_group(proc)
    return len(procs)


def _kill_group(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=KILL_GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


def _wait(proc: subprocess.Popen, timeout: float | None) -> int:
    """proc.wait in short steps, so that a KeyboardInterrupt reaches the main thread at once."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        step = 0.5 if deadline is None else min(0.5, max(deadline - time.monotonic(), 0.0))
        try:
            return proc.wait(timeout=step)
        except subprocess.TimeoutExpired:
            if deadline is not None and time.monotonic() >= deadline:
                raise


def _finish(proc: subprocess.Popen, timeout: float | None, log: Path, err: Path, started: float) -> RunResult:
    try:
        code = _wait(proc, timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return RunResult("timeout", log, time.monotonic() - started, None,
                         f"killed after the timeout of {timeout:g} s\n" + tail(err))
    except BaseException:  # Ctrl-C: the run must not outlive pario tune
        _kill_group(proc)
        raise
    finally:
        with _live_lock:
            _live.pop(proc, None)
    seconds = time.monotonic() - started
    if code < 0 and -code in (signal.SIGTERM, signal.SIGKILL) and not log.is_file():
        return RunResult("failed", log, seconds, code, f"killed by signal {-code}\n" + tail(err))
    if code != 0:
        return RunResult("failed", log, seconds, code, f"exit code {code}\n" + tail(err))
    if not log.is_file():
        return RunResult("failed", log, seconds, code, "no log was written\n" + tail(err))
    return RunResult("ok", log, seconds, code, "")


def run_local(argv: Sequence[str], env: Mapping[str, str], workdir: Path, out_dir: Path, log: Path,
              timeout: float | None) -> RunResult:
    """Run ``argv`` in ``workdir`` with stdout/stderr in ``out_dir``; kill its process group on timeout."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out, err = out_dir / "stdout.txt", out_dir / "stderr.txt"
    started = time.monotonic()
    with open(out, "wb") as fo, open(err, "wb") as fe:
        try:
            proc = _started(subprocess.Popen(list(argv), cwd=workdir, env=dict(env), stdout=fo, stderr=fe,
                                             stdin=subprocess.DEVNULL, start_new_session=True))
        except OSError as exc:
            return RunResult("failed", log, 0.0, None, f"cannot start {argv[0]}: {exc.strerror}")
        return _finish(proc, timeout, log, err, started)


JOB_SCRIPT = "#!/bin/sh\n# pario tune: one trial as a Slurm job; the command comes as arguments\n" \
    "exec \"$@\"\n"


def slurm_argv(job_script: Path, argv: Sequence[str], out_dir: Path, name: str, timeout: float | None,
               sbatch_args: Sequence[str], workdir: Path) -> list[str]:
    """``sbatch --wait`` of one run: the user's resources (``sbatch_args``), output in ``out_dir``."""
    limit = [f"--time={max(1, math.ceil(timeout / 60) + 1)}"] if timeout else []
    return ["sbatch", "--wait", "--parsable", f"--job-name={name}", f"--chdir={workdir}",
            f"--output={out_dir / 'stdout.txt'}", f"--error={out_dir / 'stderr.txt'}", *limit,
            *sbatch_args, str(job_script), *argv]


def run_slurm(argv: Sequence[str], env: Mapping[str, str], workdir: Path, out_dir: Path, log: Path,
              timeout: float | None, sbatch_args: Sequence[str], name: str) -> RunResult:
    """Run ``argv`` as a Slurm batch job and wait for it; ``scancel`` it past the timeout.

    The job inherits this environment (sbatch's default ``--export=ALL``), so the trial's
    ``OMPI_MCA_*`` settings reach it.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    script = out_dir / "job.sh"
    script.write_text(JOB_SCRIPT)
    script.chmod(0o755)
    full = slurm_argv(script, argv, out_dir, name, timeout, sbatch_args, workdir)
    submit = out_dir / "sbatch.txt"
    started = time.monotonic()

    def cancel() -> None:
        jobid = submit.read_text(errors="replace").strip().split(";")[0].splitlines()
        if jobid and jobid[0].isdigit():
            subprocess.run(["scancel", jobid[0]], env=dict(env), capture_output=True, timeout=30)

    with open(submit, "wb") as fo:
        try:
            proc = _started(subprocess.Popen(full, cwd=workdir, env=dict(env), stdout=fo,
                                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                             start_new_session=True), cancel)
        except OSError as exc:
            return RunResult("failed", log, 0.0, None, f"cannot run sbatch: {exc.strerror}")
    # no local timeout: Slurm's --time limits the run, and time in the queue is not a failure
    result = _finish(proc, None, log, out_dir / "stderr.txt", started)
    if result.status == "failed" and "TIME LIMIT" in tail(out_dir / "stderr.txt"):
        result = RunResult("timeout", log, result.seconds, result.returncode, result.stderr_tail)
    if result.status != "ok":
        extra = tail(submit, 5)
        return RunResult(result.status, log, result.seconds, result.returncode,
                         (result.stderr_tail + ("\n" + extra if extra else "")).strip())
    return result
