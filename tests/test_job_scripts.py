"""Job scripts under pario: the MPI jobs a script starts are profiled, one log per job step.

``pario run --log job.pario -- ./job.sh``: the script's own shell writes
``job.pario`` and each mpirun/srun it runs writes ``job.step<N>.pario`` with the
counters of the program, number for number (``check_io_known``).  Inside an
existing script, ``eval "$(pario env ...)"`` does the same without ``pario run``;
under a real Slurm, ``sbatch`` runs such a script and each job step writes a log
named after the job and the step.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pario.analysis.times import rank_ids
from pario.log import read_log
from record_helpers import check_io_known, one_record

K, S = 8, 4096  # io_known: K collective writes of S bytes per rank
TIMEOUT = 180


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/bash\nset -e\n" + body)
    path.chmod(0o755)
    return path


def run_script(pario_cmd: list[str], env: dict[str, str], log: Path,
               job: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*pario_cmd, "run", "--log", str(log), "--", str(job)], env=env,
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=job.parent)


def io_known_dirs(root: Path, *names: str) -> list[Path]:
    dirs = [root / n for n in names]
    for d in dirs:
        d.mkdir()
    return dirs


@pytest.mark.slow
def test_script_with_two_mpirun_steps(tmp_path: Path, compile_program, pario_cmd, mpi_env):
    exe = compile_program("io_known.c")
    out1, out2 = io_known_dirs(tmp_path, "one", "two")
    job = script(tmp_path / "job.sh", f"""echo setup > {tmp_path}/notes.txt
mpirun -np 3 {exe} {out1} {K} {S}
mpirun -np 4 {exe} {out2} {K} {S}
""")
    log = tmp_path / "job.pario"
    proc = run_script(pario_cmd, mpi_env, log, job)
    assert proc.returncode == 0, proc.stderr
    step1, step2 = tmp_path / "job.step1.pario", tmp_path / "job.step2.pario"
    assert f"log of the command itself: {log} (bash, 1 rank)" in proc.stderr
    assert "2 MPI jobs started by the command, one log each:" in proc.stderr
    assert f"  {step1} (io_known, 3 ranks)" in proc.stderr
    assert f"  {step2} (io_known, 4 ranks)" in proc.stderr
    check_io_known(read_log(step1), out1, 3, K, S)
    check_io_known(read_log(step2), out2, 4, K, S)
    # the shell's own log: bash, the file of its redirect, and no rank's data
    own = read_log(log)
    assert own.job.exe.endswith("bash") and own.job.nprocs == 1
    assert one_record(own.layer("posix"), str(tmp_path / "notes.txt"))["opens"] == 1
    assert not any("shared.dat" in n for n in own.layer("mpiio")["name"])
    assert sorted(p.name for p in tmp_path.glob("job*.pario*")) == ["job.pario", "job.step1.pario",
                                                                    "job.step2.pario"]

    # the report on the shell's log says what it is and where the ranks are
    diag = subprocess.run([*pario_cmd, "diagnose", "--json", str(log)], capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert diag.returncode == 0, diag.stderr
    (found,) = [f for f in json.loads(diag.stdout)["logs"][0]["findings"] if f["id"] == "RUN-LAUNCHER-ONLY"]
    assert "bash (a shell)" in found["statement"]
    assert found["recommendations"][0]["snippet"] == f"pario report {step1}\npario report {step2}"
    # ... and the report's verdict says so, rather than call the shell compute-bound
    report = subprocess.run([*pario_cmd, "report", "--json", "-", str(log)], capture_output=True, text=True,
                            timeout=TIMEOUT)
    shares = json.loads(report.stdout)["runs"][0]["time_shares"]
    assert shares["verdict"] == found["statement"] and shares["bound"] is None

    # a second run under the same name replaces the old step logs
    script(job, f"mpirun -np 3 {exe} {out1} {K} {S}\n")
    proc = run_script(pario_cmd, mpi_env, log, job)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.glob("job*.pario*")) == ["job.pario", "job.step1.pario"]
    check_io_known(read_log(step1), out1, 3, K, S)


def test_launcher_rule_silent_on_programs(tmp_path: Path, known_run, pario_cmd, mpi_env):
    """Silent on an MPI run, and on a serial Python program (an interpreter is a program too)."""
    from pario.diagnosis import diagnose

    profile, _, _ = known_run
    assert "RUN-LAUNCHER-ONLY" not in {f.id for f in diagnose(profile)}
    log = tmp_path / "py.pario"
    code = f"open({str(tmp_path / 'out.txt')!r}, 'w').write('x' * 1000)"
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", "python3", "-c", code], env=mpi_env,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    serial = read_log(log)
    assert one_record(serial.layer("posix"), str(tmp_path / "out.txt"))["bytes_written"] == 1000
    assert "RUN-LAUNCHER-ONLY" not in {f.id for f in diagnose(serial)}


@pytest.mark.slow
def test_step_that_dies_leaves_rank_logs_under_its_step_name(tmp_path: Path, compile_program, pario_cmd,
                                                            mpi_env):
    exe = compile_program("no_finalize.c")
    job = script(tmp_path / "job.sh", f"mpirun -np 2 {exe} {tmp_path} 0 || echo mpirun failed: $?\n")
    log = tmp_path / "job.pario"
    proc = run_script(pario_cmd, mpi_env, log, job)
    assert proc.returncode == 0 and "mpirun failed: 1" in proc.stdout, proc.stderr
    step = tmp_path / "job.step1.pario"
    assert not step.exists() and not (tmp_path / "job.step1.pario.tmp").exists()
    assert f"{step} (the job did not finish MPI: 2 per-rank log(s)" in proc.stderr
    merged = read_log(step)
    assert list(rank_ids(merged.ranks)) == [0, 1] and not merged.job.complete
    assert int(merged.layer("posix")["bytes_written"].sum()) == 1000


@pytest.mark.slow
def test_pario_kernel_under_pario_run(tmp_path: Path, pario_cmd, mpi_env):
    """`pario run -- pario kernel ...`: pario's own Python process is the command, the kernel a step."""
    log = tmp_path / "k.pario"
    data = tmp_path / "block.dat"
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", *pario_cmd, "kernel", "block",
                           "--np", "2", "--path", str(data), "--block-size", "64k", "--transfer-size", "16k",
                           "--segments", "2"],
                          env=mpi_env, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    step = read_log(tmp_path / "k.step1.pario")
    assert step.job.exe.endswith("pario-kernel-block") and step.job.nprocs == 2
    rec = one_record(step.layer("mpiio"), str(data))
    assert rec["bytes_written"] == 2 * 2 * 65536 and rec["coll_writes"] == 2 * 2 * 4
    assert read_log(log).job.nprocs == 1


@pytest.mark.slow
def test_pario_env_inside_a_script(tmp_path: Path, compile_program, pario_cmd, mpi_env):
    """eval "$(pario env --log DIR/)": each MPI job writes its own automatically named log in DIR,
    and neither the shell nor mpirun writes one."""
    exe = compile_program("io_known.c")
    logs = tmp_path / "logs"
    logs.mkdir()
    out1, out2 = io_known_dirs(tmp_path, "one", "two")
    job = script(tmp_path / "job.sh", f"""eval "$({' '.join(pario_cmd)} env --log {logs}/)"
mpirun -np 3 {exe} {out1} {K} {S}
ls {tmp_path} > /dev/null
mpirun -np 4 {exe} {out2} {K} {S}
""")
    proc = subprocess.run([str(job)], env=mpi_env, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    written = sorted(logs.iterdir(), key=lambda p: read_log(p).job.nprocs)
    assert len(written) == 2 and all(p.name.startswith("io_known-") for p in written)
    check_io_known(read_log(written[0]), out1, 3, K, S)
    check_io_known(read_log(written[1]), out2, 4, K, S)

    # with a file name, the jobs are numbered steps of it; --trace records their event traces
    env = f"{' '.join(pario_cmd)} env --trace --log {tmp_path}/run.pario"
    job = script(tmp_path / "job2.sh", f"""eval "$({env})"
mpirun -np 3 {exe} {out1} {K} {S}
mpirun -np 4 {exe} {out2} {K} {S}
""")
    proc = subprocess.run([str(job)], env=mpi_env, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.glob("run*")) == ["run.step1.pario", "run.step2.pario"]
    step2 = read_log(tmp_path / "run.step2.pario")
    check_io_known(step2, out2, 4, K, S)
    assert step2.trace is not None and [r.rank for r in step2.trace.ranks] == [0, 1, 2, 3]
    assert read_log(tmp_path / "run.step1.pario").trace.nprocs == 3


def test_pario_run_of_a_script_that_sets_its_own_log_says_where_the_logs_went(
        tmp_path: Path, compile_program, pario_cmd, mpi_env):
    """pario run --log jobrun.pario -- ./job.sh, where job.sh runs pario env --log itself: the MPI
    jobs write envlogs/run.step1.pario and .step2, and pario run names them instead of saying that
    no process called MPI_Init."""
    exe = compile_program("io_known.c")
    (tmp_path / "envlogs").mkdir()
    out1, out2 = io_known_dirs(tmp_path, "one", "two")
    env = f"{' '.join(pario_cmd)} env --log {tmp_path}/envlogs/run.pario"
    job = script(tmp_path / "job.sh", f"""eval "$({env})"
mpirun -np 2 {exe} {out1} {K} {S}
mpirun -np 2 {exe} {out2} {K} {S}
""")
    proc = run_script(pario_cmd, mpi_env, tmp_path / "jobrun.pario", job)
    assert proc.returncode == 0, proc.stderr
    steps = [tmp_path / "envlogs" / f"run.step{i}.pario" for i in (1, 2)]
    assert all(p.is_file() for p in steps)
    said = proc.stderr[proc.stderr.index(f"pario: no log was written to {tmp_path / 'jobrun.pario'}"):]
    assert said.splitlines()[0].endswith("the command's MPI jobs wrote their logs where their own "
                                         "PARIO_LOG said (a pario env inside the command):")
    assert said.splitlines()[1:3] == [f"pario:   {p}" for p in steps]
    assert "MPI_Init" not in proc.stderr


def test_pario_env_prints_what_it_sets(pario_cmd, libpario, tmp_path: Path):
    proc = subprocess.run([*pario_cmd, "env", "--log", f"{tmp_path}/"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f'export LD_PRELOAD={libpario}"${{LD_PRELOAD:+:$LD_PRELOAD}}"'
    assert f"export PARIO_LOG={tmp_path}/" in lines and "export PARIO_STEPS=1" in lines
    assert "export PARIO_PARENT_PID=mpi" in lines and not any("PARIO_TRACE=" in line for line in lines)
    assert lines[-1].endswith('LD_PRELOAD;PARIO_LOG;PARIO_STEPS;PARIO_PARENT_PID"')  # what is set
    bad = subprocess.run([*pario_cmd, "env", "--log", f"{tmp_path}/missing/"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "does not exist" in bad.stderr


@pytest.mark.slow
def test_script_with_srun_steps(tmp_path: Path, compile_program, pario_cmd, slurm_env):
    """A job script that calls srun twice, run under `pario run`, against a real local Slurm."""
    exe = compile_program("io_known.c")
    out1, out2 = io_known_dirs(tmp_path, "one", "two")
    job = script(tmp_path / "job.sh", f"""srun -n 3 --overcommit --mpi=pmix {exe} {out1} {K} {S}
srun -n 4 --overcommit --mpi=pmix {exe} {out2} {K} {S}
""")
    proc = run_script(pario_cmd, slurm_env, tmp_path / "job.pario", job)
    assert proc.returncode == 0, proc.stderr
    check_io_known(read_log(tmp_path / "job.step1.pario"), out1, 3, K, S)
    check_io_known(read_log(tmp_path / "job.step2.pario"), out2, 4, K, S)


@pytest.mark.slow
def test_sbatch_script_with_pario_env(tmp_path: Path, compile_program, pario_cmd, slurm_env):
    """sbatch runs a batch script that switches pario on itself: one log per job step, named
    <program>-job<id>.<step>-<date>.pario."""
    exe = compile_program("io_known.c")
    logs = tmp_path / "logs"
    logs.mkdir()
    (out,) = io_known_dirs(tmp_path, "one")
    job = script(tmp_path / "batch.sh", f"""eval "$({' '.join(pario_cmd)} env --log {logs}/)"
srun -n 3 --overcommit --mpi=pmix {exe} {out} {K} {S}
""")
    proc = subprocess.run(["sbatch", "--wait", "-n", "3", "--overcommit", "-o", str(tmp_path / "out.txt"),
                           "--parsable", str(job)],
                          env=slurm_env, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr + (tmp_path / "out.txt").read_text()
    jobid = proc.stdout.strip().split(";")[0]
    (log,) = logs.iterdir()
    assert log.name.startswith(f"io_known-job{jobid}.0-"), log.name
    profile = read_log(log)
    assert profile.job.jobid == jobid
    check_io_known(profile, out, 3, K, S)


def test_pario_env_forwards_only_what_is_set(pario_cmd, mpi_env, tmp_path: Path):
    """Open MPI warns at every mpirun about a forwarded name absent from the environment."""
    env = {k: v for k, v in mpi_env.items() if not k.startswith("PARIO_")}
    proc = subprocess.run([*pario_cmd, "env", "--log", f"{tmp_path}/"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    forwarded = proc.stdout.splitlines()[-1].split('"')[1].split("}")[-1].split(";")
    assert forwarded == ["LD_PRELOAD", "PARIO_LOG", "PARIO_STEPS", "PARIO_PARENT_PID"]
    ran = subprocess.run(["bash", "-c", f"{proc.stdout}\nmpirun -np 1 true\n"], env=env, capture_output=True,
                         text=True, timeout=120)
    assert ran.returncode == 0 and ran.stderr == "", ran.stderr


def _killed_in_timeout(tmp_path: Path, compile_program, pario_cmd, mpi_env) -> tuple[str, Path, str]:
    """`pario run --log t.pario -- timeout 5 mpirun -np 2 no_finalize ...`: timeout kills the job
    before its ranks write any log.  (pario run's stderr, the wrapper's log, the step's reason for
    having no log from t.step1.pario.lost)."""
    exe = compile_program("no_finalize.c")
    log = tmp_path / "t.pario"
    proc = subprocess.run([*pario_cmd, "run", "--log", str(log), "--", "timeout", "5", "mpirun", "-np", "2",
                           str(exe), str(tmp_path), "0", "120"], env=mpi_env, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode == 124, proc.stderr
    return proc.stderr, log, (tmp_path / "t.step1.pario.lost").read_text().strip()


@pytest.mark.slow
def test_step_killed_inside_a_wrapper_is_named_and_leaves_no_tmp(tmp_path: Path, compile_program, pario_cmd,
                                                                 mpi_env):
    """pario run says that the job left no log and why, turns the step's reservation
    (t.step1.pario.tmp) into t.step1.pario.lost, and reading the step log says the same."""
    stderr, log, why = _killed_in_timeout(tmp_path, compile_program, pario_cmd, mpi_env)
    step = tmp_path / "t.step1.pario"
    assert sorted(p.name for p in tmp_path.glob("t.*")) == ["t.pario", "t.step1.pario.lost"]
    assert why.startswith("its ranks were killed or aborted before MPI_Finalize (")
    assert why.endswith("never reached their exit) (the command exited with code 124)")
    assert f"log of the command itself: {log} (timeout, 1 rank)" in stderr
    assert "1 MPI job started by the command, 1 of them without a log:" in stderr
    assert f"  {step}: no log, {why}" in stderr
    report = subprocess.run([*pario_cmd, "report", str(step)], capture_output=True, text=True,
                            timeout=TIMEOUT)
    assert report.returncode == 2
    assert report.stderr.strip().splitlines()[-1] == f"pario: error: {step}: this MPI job wrote no log: {why}"
    assert [(p.name, p.read_bytes()) for p in sorted(tmp_path.glob("nf.*"))] == [
        ("nf.0", b"n" * 500), ("nf.1", b"n" * 500)]


@pytest.mark.slow
def test_the_wrapper_s_report_names_the_job_that_wrote_no_log(tmp_path: Path, compile_program, pario_cmd,
                                                              mpi_env):
    """The wrapper's own log (timeout) says it is only the wrapper, that its MPI job wrote no log and
    why, and offers no `pario report` of a log that does not exist."""
    from pario.diagnosis import diagnose

    _, log, why = _killed_in_timeout(tmp_path, compile_program, pario_cmd, mpi_env)
    (f,) = [f for f in diagnose(read_log(log)) if f.id == "RUN-LAUNCHER-ONLY"]
    assert f.statement == ("This log holds only timeout (an interpreter or wrapper) that ran the job, not "
                           "the ranks of an MPI job; 1 MPI job(s) it started wrote no log "
                           f"(t.step1.pario: {why}).")
    assert {m.name: m.value for m in f.evidence}["lost_steps"] == 1
    assert not any("pario report" in r.snippet for r in f.recommendations)
