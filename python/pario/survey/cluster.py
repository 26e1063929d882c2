"""The Dask cluster a survey runs on: local worker processes, an existing scheduler, or Slurm
jobs through dask-jobqueue."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from pario.errors import ParioError
from pario.malloc import WORKER, set_thresholds


@dataclass(frozen=True)
class SlurmOptions:
    """``--slurm``: dask-jobqueue's SLURMCluster, ``jobs`` batch jobs of ``cores`` worker processes."""

    jobs: int = 1
    cores: int = 1
    memory: str = "2GB"
    queue: str | None = None
    account: str | None = None
    walltime: str = "01:00:00"
    #: extra #SBATCH options, e.g. "--nodelist=n1"
    options: tuple[str, ...] = field(default_factory=tuple)
    #: where the jobs' output files go (None: the current directory, Slurm's default)
    log_directory: str | None = None


@dataclass(frozen=True)
class ClusterSpec:
    workers: int = 0                 # local worker processes (0: one per core)
    scheduler: str | None = None     # address of a running scheduler
    slurm: SlurmOptions | None = None
    start_timeout: float = 120.0     # seconds to wait for the first worker
    connect_timeout: float = 20.0    # seconds to reach a running scheduler


def roomy_malloc() -> bool:
    """Raise this process's malloc trim and mmap thresholds (glibc; False elsewhere).

    Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which also turns off
    glibc's dynamic mmap threshold: every array over 128 KiB is then mapped and unmapped anew,
    and analysing a log took 17.8 ms instead of 13.5 (docs/performance.md, "Facility survey").
    A survey worker holds one batch of rows, so a larger heap left untrimmed stays bounded."""
    return set_thresholds(*WORKER)


class RoomyMalloc(WorkerPlugin):
    """:func:`roomy_malloc` on every worker of a cluster the survey starts, those that join
    later too (a site's own scheduler keeps its workers' settings)."""

    name = "pario-roomy-malloc"

    def setup(self, worker: Any) -> None:
        roomy_malloc()


def _quiet() -> None:
    for name in ("distributed", "distributed.core", "distributed.scheduler", "distributed.nanny",
                 "distributed.worker", "distributed.http.proxy", "dask_jobqueue"):
        logging.getLogger(name).setLevel(logging.ERROR)


#: The Dask settings of the workers pario starts: no statistical profiler (it samples every
#: worker thread's stack every 10 ms for Dask's dashboard, which a survey never shows: 3% of a
#: worker's time, docs/performance.md).
WORKER_CONFIG: dict[str, object] = {"distributed.worker.profile.enabled": False}


def _environment_line(key: str, value: object) -> str:
    """The shell line that gives a Dask worker the setting ``key`` (its DASK_* variable)."""
    name = "DASK_" + key.upper().replace(".", "__").replace("-", "_")
    return f"export {name}={value}"


def slurm_options(s: SlurmOptions) -> dict[str, Any]:
    """dask-jobqueue's SLURMCluster arguments for ``s``."""
    return {"cores": s.cores, "processes": s.cores, "memory": s.memory, "queue": s.queue,
            "account": s.account, "walltime": s.walltime, "job_extra_directives": list(s.options),
            "python": sys.executable, "worker_extra_args": ["--nthreads", "1"],
            "log_directory": s.log_directory, "scheduler_options": {"dashboard_address": None},
            "job_script_prologue": [_environment_line(k, v) for k, v in WORKER_CONFIG.items()]}


def _slurm_cluster(s: SlurmOptions) -> Any:
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise ParioError(f"--slurm needs dask-jobqueue: {exc}") from None
    cluster = SLURMCluster(**slurm_options(s))
    cluster.scale(jobs=s.jobs)
    return cluster


def _refused(address: str) -> str:
    """Why a TCP scheduler address refuses connections ("" when it accepts one, or when that cannot
    be told at once): Dask's client would retry a refused port until its timeout."""
    import socket
    from urllib.parse import urlsplit

    try:
        where = urlsplit(address if "://" in address else f"tcp://{address}")
        if where.scheme != "tcp" or where.hostname is None or where.port is None:
            return ""
        with socket.create_connection((where.hostname, where.port), timeout=5):
            return ""
    except ConnectionRefusedError:
        return "connection refused"
    except (OSError, ValueError):
        return ""


@contextmanager
def client_for(spec: ClusterSpec) -> Iterator[Any]:
    """A dask.distributed Client on the cluster the spec names, closed (and the cluster it
    started stopped) on exit."""
    _quiet()
    from distributed import Client, LocalCluster

    cluster = None
    try:
        if spec.scheduler:
            refused = _refused(spec.scheduler)
            if refused:
                raise ParioError(f"cannot reach the Dask scheduler {spec.scheduler}: {refused}")
            try:
                client = Client(spec.scheduler, timeout=spec.connect_timeout)
            except OSError as exc:
                raise ParioError(f"cannot reach the Dask scheduler {spec.scheduler}: {exc}") from None
        else:
            if spec.slurm:
                cluster = _slurm_cluster(spec.slurm)
            else:
                import dask

                n = spec.workers or os.cpu_count() or 1
                with dask.config.set(WORKER_CONFIG):  # the workers take the settings as they start
                    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
            client.register_plugin(RoomyMalloc())
        try:
            if spec.slurm or spec.scheduler:
                try:
                    client.wait_for_workers(1, timeout=spec.start_timeout)
                except (TimeoutError, OSError):
                    where = "the Slurm jobs" if spec.slurm else spec.scheduler
                    raise ParioError(f"no Dask worker came up from {where} "
                                     f"in {spec.start_timeout:.0f} s") from None
            yield client
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()
