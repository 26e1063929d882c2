"""Where studies live: Optuna's storages, named by URL.

* default: SQLite in ``.pario/tune.db`` of the current directory;
* ``sqlite:///PATH``, ``postgresql://USER@HOST/DB`` (read as ``postgresql+psycopg2://``, the driver
  pario installs), ``mysql://``:
  Optuna's RDBStorage (SQLAlchemy URLs), for several workers sharing a study;
* ``journal:PATH``: Optuna's journal file, for shared file systems such as NFS where SQLite's
  locking is not to be trusted.

Optuna's dashboard opens the same URLs (``optuna-dashboard sqlite:///.pario/tune.db``).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from pario.errors import ParioError

DEFAULT_DIR = Path(".pario")
RDB_SCHEMES = ("sqlite", "postgresql", "mysql")
CREATE_ATTEMPTS = 5


def default_url(base: Path | None = None) -> str:
    root = (base or Path.cwd()) / DEFAULT_DIR
    return f"sqlite:///{root.resolve() / 'tune.db'}"


def quiet_optuna() -> None:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    logging.getLogger("alembic").setLevel(logging.WARNING)


def open_storage(url: str | None):
    """An Optuna storage for ``url`` (None: the default SQLite file, created with its directory)."""
    import optuna
    from sqlalchemy.exc import ArgumentError, DBAPIError

    quiet_optuna()
    url = url or default_url()
    if url.startswith("journal:"):
        path = Path(url.removeprefix("journal:")).expanduser()
        if not path.parent.is_dir():
            raise ParioError(f"--storage {url}: directory {path.parent} does not exist")
        from optuna.storages.journal import JournalFileBackend, JournalStorage

        return JournalStorage(JournalFileBackend(str(path)))
    scheme = url.split(":", 1)[0].split("+", 1)[0]
    if scheme not in RDB_SCHEMES or "://" not in url:
        raise ParioError(f"--storage {url}: expected sqlite:///PATH, postgresql://USER@HOST/DB or "
                         "journal:PATH")
    if url.startswith("postgresql://"):
        # SQLAlchemy's driver for a bare postgresql:// is psycopg 3; pario installs psycopg2
        url = "postgresql+psycopg2://" + url.removeprefix("postgresql://")
    if scheme == "sqlite":
        path = Path(url.split(":///", 1)[-1])
        if str(path) and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(CREATE_ATTEMPTS):
        try:
            return optuna.storages.RDBStorage(url, engine_kwargs={"pool_pre_ping": True}
                                              if scheme != "sqlite" else None)
        except DBAPIError as exc:
            # two processes opening a new storage at once both create its tables: the loser's
            # CREATE TABLE fails ("already exists"); the tables are there when it tries again
            racing = "already exists" in str(exc) or "duplicate key" in str(exc)
            if racing and attempt + 1 < CREATE_ATTEMPTS:
                time.sleep(0.2 * (attempt + 1))
                continue
            raise ParioError(f"--storage {url}: cannot open: {_reason(exc)}") from None
        except (ArgumentError, ImportError, ValueError) as exc:
            raise ParioError(f"--storage {url}: cannot open: {_reason(exc)}") from None
    raise AssertionError("unreachable")


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:200]
