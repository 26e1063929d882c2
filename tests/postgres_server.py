"""A real PostgreSQL server in a temporary directory, for the tests.

``local_postgres(root)`` starts a private PostgreSQL (Debian's packages: the
binaries in /usr/lib/postgresql/<version>/bin, the highest version installed)
with ``initdb`` and ``pg_ctl start``: its own data directory, log and unix
socket directory, listening on a free port of 127.0.0.1 only, trust
authentication for 127.0.0.1 and the socket only.  It touches nothing of a
PostgreSQL the machine may already run.  It creates the database ``pario`` and
yields the server, whose ``url`` is the SQLAlchemy URL Optuna's RDBStorage
takes; it stops the server on the way out (``pg_ctl stop -m immediate``, then
SIGKILL).  A server that does not come up raises ``PostgresError`` with the
tail of its log, within a bounded time.

PostgreSQL refuses to run as root.  As root the server runs as the system user
``pario-pg`` (created if absent) in a directory of its own under /tmp (pytest's
temporary directories are private to root), removed afterwards; its log is
copied to ``root`` first.  Otherwise it runs as the current user under ``root``.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import local_services
from local_services import free_port, log_tail

START_TIMEOUT = 30.0  # seconds until the server must accept connections
PG_LIB = Path("/usr/lib/postgresql")
SERVER_USER = "pario-pg"  # the system user the server runs as when we are root
DB_USER = "pario"  # the server's superuser (initdb -U), whatever the system user
DATABASE = "pario"
BIND_RETRIES = 3  # a free port can be taken between choosing it and binding it


class PostgresError(RuntimeError):
    """The local server could not be started."""


@dataclass
class PostgresServer:
    root: Path  # data, log and socket live here
    bin_dir: Path
    port: int
    user: str  # the database superuser
    run_as: list[str]  # prefix that runs a command as the server's system user ([] if ourselves)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "postgres.log"

    @property
    def socket_dir(self) -> Path:
        return self.root / "sock"

    @property
    def url(self) -> str:
        return f"postgresql+psycopg2://{self.user}@127.0.0.1:{self.port}/{DATABASE}"


def version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", path.name)) or (0,)


def find_bin_dir(lib: Path = PG_LIB) -> Path:
    """The bin directory of the highest PostgreSQL version installed (not PATH: wrappers may lurk)."""
    versions = [d for d in lib.glob("*") if all((d / "bin" / p).is_file() for p in ("initdb", "pg_ctl"))]
    if not versions:
        raise PostgresError(f"no PostgreSQL server under {lib}: "
                            "install Debian's postgresql (`make deps-test`)")
    return max(versions, key=version_key) / "bin"


def find_program(name: str) -> str:
    return local_services.find_program(name, PostgresError)


def server_user() -> pwd.struct_passwd:
    """The unprivileged system user for the server, created if absent."""
    try:
        return pwd.getpwnam(SERVER_USER)
    except KeyError:
        pass
    made = subprocess.run([find_program("useradd"), "--system", "--no-create-home", "--shell",
                           "/usr/sbin/nologin", SERVER_USER], capture_output=True, text=True, timeout=30)
    try:  # another process may have created it meanwhile
        return pwd.getpwnam(SERVER_USER)
    except KeyError:
        raise PostgresError(f"cannot create user {SERVER_USER}: {made.stderr.strip()}") from None


def clean_env() -> dict[str, str]:
    """Our environment without PG* variables, which would steer the client programs elsewhere."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")}


def run(server: PostgresServer, argv: list[str], what: str, timeout: float = 60.0,
        as_server: bool = True) -> subprocess.CompletedProcess:
    """Run a PostgreSQL program (as the server's system user unless ``as_server`` is false)."""
    cmd = (server.run_as if as_server else []) + argv
    try:
        out = subprocess.run(cmd, cwd=server.root, env=clean_env(), capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PostgresError(f"{what}: no answer within {timeout:.0f} s; end of {server.log}:\n"
                            f"{log_tail(server.log)}") from None
    if out.returncode != 0:
        raise PostgresError(f"{what} failed ({out.returncode}): {(out.stdout + out.stderr).strip()}\n"
                            f"end of {server.log}:\n{log_tail(server.log)}")
    return out


def write_config(server: PostgresServer) -> None:
    """Listen on 127.0.0.1:port and our own socket; trust 127.0.0.1 and the socket, nothing else."""
    settings = [
        "listen_addresses = '127.0.0.1'",
        f"port = {server.port}",
        f"unix_socket_directories = '{server.socket_dir}'",
        # a throw-away server: durability buys nothing and costs time on a busy disk
        "fsync = off",
        "synchronous_commit = off",
        "full_page_writes = off",
        "shared_buffers = 32MB",
        "max_connections = 50",
        "logging_collector = off",
    ]
    with open(server.data / "postgresql.conf", "a") as conf:
        conf.write("\n# pario tests\n" + "\n".join(settings) + "\n")
    (server.data / "pg_hba.conf").write_text(
        "local all all trust\nhost all all 127.0.0.1/32 trust\n")


def postmaster_pid(server: PostgresServer) -> int | None:
    try:
        return int((server.data / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None


def start(server: PostgresServer) -> None:
    """pg_ctl start, waiting (bounded) until the server accepts connections."""
    argv = [str(server.bin_dir / "pg_ctl"), "-D", str(server.data), "-l", str(server.log), "-w",
            "-t", f"{START_TIMEOUT:.0f}", "start"]
    run(server, argv, "pg_ctl start", timeout=START_TIMEOUT + 10)
    ready = [str(server.bin_dir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(server.port), "-U",
             server.user, "-d", "postgres"]
    run(server, ready, f"server on 127.0.0.1:{server.port}", timeout=15, as_server=False)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs: a zombie does not (a container's init may reap the postmaster late)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def stop(server: PostgresServer) -> None:
    """pg_ctl stop -m immediate; SIGKILL the postmaster if it is still there."""
    pid = postmaster_pid(server)
    if pid is None:
        return
    argv = [str(server.bin_dir / "pg_ctl"), "-D", str(server.data), "-m", "immediate", "-w", "-t", "15",
            "stop"]
    try:
        subprocess.run(server.run_as + argv, cwd=server.root, env=clean_env(), capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=30)
    except subprocess.TimeoutExpired:
        pass
    if not alive(pid):
        return
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)


def bind_failed(server: PostgresServer) -> bool:
    return server.log.exists() and "could not bind" in server.log.read_text(errors="replace")


def server_root(root: Path) -> tuple[Path, list[str], bool]:
    """Where the server lives, the prefix that runs commands as its user, and whether to remove it."""
    if os.geteuid() != 0:
        return root, [], False
    user = server_user()
    base = Path(tempfile.mkdtemp(prefix="pario-pg-", dir="/tmp"))
    os.chown(base, user.pw_uid, user.pw_gid)
    return base, [find_program("runuser"), "-u", SERVER_USER, "--"], True


@contextmanager
def local_postgres(root: Path) -> Iterator[PostgresServer]:
    """Start a private PostgreSQL with the database ``pario``; yield it once it accepts connections."""
    root = root.resolve()
    root.mkdir(parents=True, exist_ok=True)
    base, run_as, owned = server_root(root)
    server = PostgresServer(base, find_bin_dir(), 0, DB_USER, run_as)
    try:
        run(server, [str(server.bin_dir / "initdb"), "-D", str(server.data), "-U", DB_USER, "-A", "trust",
                     "-E", "UTF8", "--locale=C", "--no-sync"], "initdb")
        run(server, ["mkdir", "-p", str(server.socket_dir)], "mkdir socket directory")
        config = (server.data / "postgresql.conf").read_text()
        for attempt in range(BIND_RETRIES):
            server.port = free_port()
            (server.data / "postgresql.conf").write_text(config)
            write_config(server)
            try:
                start(server)
                break
            except PostgresError:
                if attempt + 1 == BIND_RETRIES or not bind_failed(server):
                    raise
                stop(server)
        run(server, [str(server.bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(server.port), "-U",
                     DB_USER, DATABASE], "createdb", timeout=30, as_server=False)
        yield server
    finally:
        stop(server)
        if owned:
            try:
                shutil.copy(server.log, root / "postgres.log")
            except OSError:
                pass
            shutil.rmtree(base, ignore_errors=True)
