"""Shared fixtures: MPI environment, compiled test programs, running under pario."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "tests" / "programs"

#: The only reasons a test may skip: facts about the machine that `make test` cannot change.  A skip
#: reason starts with one of these words; any other skip (missing test data, a tool that `make
#: deps-test` should have installed, a failed run) fails the session.
MACHINE_SKIPS = {
    "not root:": "the test needs root (e.g. /proc is 'writable' only for root)",
    "on Lustre:": "the test checks what pario records off Lustre",
}
_bad_skips: list[str] = []

#: What mpirun needs here: root allowed, oversubscription allowed, quiet (the mpi_env fixture;
#: kernel_helpers.mpi_env for the kernels).
MPI_VARS = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
}


def machine_skip_reason(reason: str) -> bool:
    return reason.startswith(tuple(MACHINE_SKIPS))


#: Fixtures that start a service or need a second MPI: a test using one is marked ``service``.
#: Under pytest-xdist a test runs on the worker of its first service here (its group), so that
#: each service starts once (the MPICH build of the runtime takes the longest).
SERVICE_FIXTURES = ("mpich_runtime", "slurm", "slurm_env", "postgres", "browser")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        service = next((f for f in SERVICE_FIXTURES if f in used), None)
        if service == "slurm_env":
            service = "slurm"
        if service is not None and item.get_closest_marker("service") is None:
            item.add_marker(pytest.mark.service)
        # Under pytest-xdist's --dist loadgroup (make test): a file's tests run on one worker, so
        # that the runs its session fixtures make are made once, and each service's tests on one.
        item.add_marker(pytest.mark.xdist_group(service or item.nodeid.split("::")[0]))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2]).removeprefix("Skipped: ")
        if not machine_skip_reason(reason):
            _bad_skips.append(f"{report.nodeid}: {reason}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _bad_skips and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _bad_skips:
        terminalreporter.section("skips that are not about the machine (they fail the run)", red=True)
        for line in _bad_skips:
            terminalreporter.line(line)


@pytest.fixture(scope="session")
def mpi_env() -> dict[str, str]:
    """Environment for mpirun: root allowed, oversubscription allowed, quiet."""
    return {**os.environ, **MPI_VARS}


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("programs")


@pytest.fixture(scope="session")
def compile_program(build_dir: Path):
    """compile_program("io_known.c") -> path of the binary (built once per session).

    ``mpicc`` names another MPI's wrapper (``mpicc.mpich``) for a second build of the program.
    """
    built: dict[tuple[str, bool, str], Path] = {}

    def _compile(source: str, mpi: bool = True, extra: tuple[str, ...] = (), mpicc: str = "mpicc") -> Path:
        key = (source, mpi, mpicc)
        if key not in built:
            # another MPI's build goes to its own directory, under the program's own name
            wrapper = Path(mpicc).name
            where = build_dir if wrapper == "mpicc" or not mpi else build_dir / wrapper
            where.mkdir(exist_ok=True)
            out = where / (Path(source).stem + ("" if mpi else "-nompi"))
            cc = mpicc if mpi else (shutil.which("cc") or "gcc")
            cmd = [cc, "-std=c11", "-O1", "-Wall", "-o", str(out), str(PROGRAMS / source), *extra]
            if not mpi:
                cmd.append("-pthread")
            subprocess.run(cmd, check=True)
            built[key] = out
        return built[key]

    return _compile


@pytest.fixture(scope="session")
def pario_cmd() -> list[str]:
    """How to call the installed CLI."""
    exe = Path(sys.executable).parent / "pario"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "pario"]


@pytest.fixture(scope="session")
def libpario() -> Path:
    from pario import paths

    return paths.runtime_library()


@pytest.fixture
def run_under_pario(pario_cmd: list[str], mpi_env: dict[str, str]):
    """run_under_pario(log, [cmd...]) -> CompletedProcess of `pario run --log log -- cmd`."""

    def _run(log: Path, command: list[str], env: dict[str, str] | None = None, timeout: float = 180,
             cwd: Path | None = None, extra: list[str] | None = None):
        return subprocess.run(
            [*pario_cmd, "run", "--log", str(log), *(extra or []), "--", *command],
            env=env or mpi_env, capture_output=True, text=True, timeout=timeout, cwd=cwd,
        )

    return _run


@pytest.fixture(scope="session")
def known_run(tmp_path_factory, compile_program, pario_cmd, mpi_env):
    """io_known under `pario run -- mpirun` (shared by the runtime and Lustre tests): IO_KNOWN_NP
    ranks; returns (profile, outdir, completed process)."""
    from pario.log import read_log
    from record_helpers import IO_KNOWN_K, IO_KNOWN_NP, IO_KNOWN_S

    out = tmp_path_factory.mktemp("known")
    exe = compile_program("io_known.c")
    log = out / "known.pario"
    proc = subprocess.run(
        [*pario_cmd, "run", "--log", str(log), "--", "mpirun", "-np", str(IO_KNOWN_NP), str(exe), str(out),
         str(IO_KNOWN_K), str(IO_KNOWN_S)],
        env=mpi_env, capture_output=True, text=True, timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    return read_log(log), out, proc


@pytest.fixture(scope="session")
def mpich_runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """libpario.so built against MPICH (Debian's mpicc.mpich) from this source tree."""
    mpicc = shutil.which("mpicc.mpich")
    assert mpicc, "mpicc.mpich not found: Debian's mpich and libmpich-dev are needed (make deps-test)"
    build = tmp_path_factory.mktemp("build-mpich")
    configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", f"-DMPI_C_COMPILER={mpicc}"]
    for cmd in (configure, ["cmake", "--build", str(build), "--target", "pario"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lib = build / "libpario.so"
    linked = subprocess.run(["ldd", str(lib)], capture_output=True, text=True).stdout
    assert "libmpich" in linked and "libmpi.so" not in linked
    return lib


@pytest.fixture(scope="session")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """A one-node Slurm cluster (tests/slurm_cluster.py) started for this session and stopped after it."""
    from slurm_cluster import local_slurm

    with local_slurm(tmp_path_factory.mktemp("slurm")) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """A private PostgreSQL server (tests/postgres_server.py) with the database ``pario``, for this session;
    ``postgres.url`` is the SQLAlchemy URL (Optuna's RDBStorage)."""
    from postgres_server import local_postgres

    with local_postgres(tmp_path_factory.mktemp("postgres")) as server:
        yield server


@pytest.fixture(scope="session")
def slurm_env(slurm, mpi_env: dict[str, str]) -> dict[str, str]:
    """mpi_env (root allowed for Open MPI) with the local cluster's SLURM_* variables only."""
    env = {k: v for k, v in mpi_env.items() if not k.startswith("SLURM_")}
    return env | {k: v for k, v in slurm.env.items() if k.startswith("SLURM_")}


@pytest.fixture(scope="session")
def browser() -> Iterator:
    """Headless chromium under Selenium (tests/browser.py), for this session."""
    import browser as chromium

    driver = chromium.start()
    try:
        yield driver
    finally:
        driver.quit()
