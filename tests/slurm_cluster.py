"""A real one-node Slurm cluster in a temporary directory, for the tests.

``local_slurm(root)`` starts a private munged, slurmctld and slurmd (Debian's
packages: munge, slurm-wlm) with every file under ``root``: configuration,
state, spool, logs, pid files and the munge socket.  It needs no systemd and no
cgroups (proctrack/linuxproc, task/none), and touches nothing of a Slurm or
munge the machine may already run: its own ports, its own munge key and socket.
It yields the environment (``SLURM_CONF``) under which srun, sbatch and sinfo
talk to it, and stops the daemons it started on the way out.  A daemon that
does not come up raises ``SlurmError`` with the tail of its log, within a
bounded time.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import local_services
from local_services import free_port, log_tail

START_TIMEOUT = 60.0  # seconds until the node must be idle
# The node's name in Slurm (slurmd -N): fixed, so that whatever the host is called (an FQDN,
# a container id) it is a valid Slurm node name; the controller must still be the host's name.
NODE = "pario-node"


class SlurmError(RuntimeError):
    """The local cluster could not be started."""


@dataclass
class Daemon:
    name: str
    proc: subprocess.Popen
    log: Path


@dataclass
class SlurmCluster:
    root: Path
    conf: Path
    node: str
    mpi_default: str
    env: dict[str, str]
    spool: Path  # slurmd's spool directory (outside root: a short path)
    daemons: list[Daemon] = field(default_factory=list)


def find_program(name: str) -> str:
    return local_services.find_program(name, SlurmError,
                                       ": install Debian's slurm-wlm and munge (`make deps`)")


def write_config(root: Path, node: str, cpus: int, mpi_default: str, spool: Path) -> Path:
    """slurm.conf for one node running as root, everything under ``root`` but the spool
    directory (``spool``: the steps' sockets, whose paths must stay short)."""
    ctld_port, slurmd_port = free_port(), free_port()
    lines = [
        "ClusterName=pario-test",
        # slurmctld accepts only its host's own name here; the address given: no name lookup needed
        f"SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)",
        f"SlurmctldPort={ctld_port}",
        f"SlurmdPort={slurmd_port}",
        # job ids of their own: Slurm's PMIx plugin names its directories /tmp/spmix_appdir_UID_JOB.STEP,
        # so two clusters at once (tests on two workers) that both start at job 1 take each other's
        # and a step fails to launch ("aborted before step completely launched")
        f"FirstJobId={ctld_port * 100}",
        "SlurmUser=root",
        "SlurmdUser=root",
        # a private munged: its socket is ours, not /run/munge's
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={root / 'munge.sock'}",
        f"StateSaveLocation={root / 'state'}",
        f"SlurmdSpoolDir={spool}",
        f"SlurmctldPidFile={root / 'slurmctld.pid'}",
        f"SlurmdPidFile={root / 'slurmd.pid'}",
        f"SlurmctldLogFile={root / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'slurmd.log'}",
        # no cgroups, no accounting: works in a container without systemd
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "SchedulerType=sched/backfill",
        "ReturnToService=2",
        # the node is what we declare, even if a container shows other CPU or memory counts
        "SlurmdParameters=config_overrides",
        f"MpiDefault={mpi_default}",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
        f"NodeName={node} NodeHostname={socket.gethostname()} NodeAddr=127.0.0.1 CPUs={cpus} "
        "RealMemory=256 State=UNKNOWN",
        f"PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP",
    ]
    conf = root / "slurm.conf"
    conf.write_text("\n".join(lines) + "\n")
    return conf


def mpi_plugins(env: dict[str, str]) -> str:
    """What ``srun --mpi=list`` prints (it reads the configuration, no daemon needed)."""
    out = subprocess.run([find_program("srun"), "--mpi=list"], env=env, capture_output=True, text=True,
                         timeout=30)
    return out.stdout + out.stderr


def start_daemon(name: str, argv: list[str], log: Path, env: dict[str, str]) -> Daemon:
    """Start a daemon in the foreground (-D/-F) so that it stays our child and is easy to stop."""
    with open(log.with_suffix(".out"), "w") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    return Daemon(name, proc, log)


def check_alive(daemons: list[Daemon]) -> None:
    for d in daemons:
        if d.proc.poll() is not None:
            raise SlurmError(f"{d.name} exited with code {d.proc.returncode}; end of {d.log}:\n"
                             f"{log_tail(d.log)}\n{log_tail(d.log.with_suffix('.out'))}")


def wait_until(ready: Callable[[], bool], what: str, daemons: list[Daemon],
               timeout: float = START_TIMEOUT) -> None:
    """Poll ``ready()`` until true; fail early if a daemon died, and after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not ready():
        check_alive(daemons)
        if time.monotonic() > deadline:
            tails = "\n".join(f"--- {d.log}:\n{log_tail(d.log)}" for d in daemons)
            raise SlurmError(f"{what} not reached within {timeout:.0f} s\n{tails}")
        time.sleep(0.5)


def start_munged(root: Path, env: dict[str, str]) -> Daemon:
    key = root / "munge.key"
    subprocess.run([find_program("mungekey"), "--create", "--keyfile", str(key)], check=True, timeout=30)
    # --force: as root, and the temporary directory is not world-executable as munged wants
    argv = [find_program("munged"), "--foreground", "--force", f"--socket={root / 'munge.sock'}",
            f"--key-file={key}", f"--log-file={root / 'munged.log'}", f"--pid-file={root / 'munged.pid'}",
            f"--seed-file={root / 'munged.seed'}"]
    return start_daemon("munged", argv, root / "munged.log", env)


def munge_works(root: Path) -> bool:
    cred = subprocess.run([find_program("munge"), "-n", "-S", str(root / "munge.sock")],
                          capture_output=True, timeout=10)
    return cred.returncode == 0


def node_state(env: dict[str, str], node: str) -> str:
    out = subprocess.run([find_program("sinfo"), "-h", "-N", "-n", node, "-o", "%T"], env=env,
                         capture_output=True, text=True, timeout=10)
    return out.stdout.strip() if out.returncode == 0 else ""


def stop(daemons: list[Daemon]) -> None:
    """SIGTERM in reverse order of start, SIGKILL after 15 s."""
    for d in reversed(daemons):
        if d.proc.poll() is None:
            d.proc.terminate()
            try:
                d.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                d.proc.kill()
                d.proc.wait(timeout=15)


@contextmanager
def local_slurm(root: Path, cpus: int | None = None) -> Iterator[SlurmCluster]:
    """Start munged, slurmctld and slurmd under ``root``; yield the cluster once its node is idle."""
    root = root.resolve()
    (root / "state").mkdir(parents=True, exist_ok=True)
    # the spool holds the steps' Unix sockets (PMIx's among them), whose paths may not pass 107
    # bytes: under a deep temporary directory (pytest-xdist adds a level) they would, and the
    # job's steps would never start
    spool = Path(tempfile.mkdtemp(prefix="pario-slurm-"))
    node = NODE
    cpus = cpus or os.cpu_count() or 1
    conf = write_config(root, node, cpus, "none", spool)
    # SLURM_* variables of an enclosing job (tests run under sbatch) would steer srun to that job
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["SLURM_CONF"] = str(conf)
    # PMIx is the default when Slurm's mpi/pmix plugin is installed (Debian: slurm-wlm-basic-plugins)
    mpi_default = "pmix" if "pmix" in mpi_plugins(env) else "none"
    write_config(root, node, cpus, mpi_default, spool)
    cluster = SlurmCluster(root, conf, node, mpi_default, env, spool)
    try:
        cluster.daemons.append(start_munged(root, env))
        wait_until(lambda: munge_works(root), "munged answering", cluster.daemons)
        cluster.daemons.append(start_daemon("slurmctld", [find_program("slurmctld"), "-D"],
                                            root / "slurmctld.log", env))
        cluster.daemons.append(start_daemon("slurmd", [find_program("slurmd"), "-D", "-N", node],
                                            root / "slurmd.log", env))
        wait_until(lambda: node_state(env, node) == "idle", f"node {node} idle", cluster.daemons)
        yield cluster
    finally:
        stop(cluster.daemons)
        shutil.rmtree(spool, ignore_errors=True)
