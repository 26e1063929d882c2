"""Where studies live: Optuna's storages, named by URL.

* default: SQLite in ``.pario/tune.db`` of the current directory;
* ``sqlite:///PATH``, ``postgresql://USER@HOST/DB`` (or ``postgresql+psycopg2://``), ``mysql://``:
  Optuna's RDBStorage (SQLAlchemy URLs), for several workers sharing a study;
* ``journal:PATH``: Optuna's journal file, for shared file systems such as NFS where SQLite's
  locking is not to be trusted.

Optuna's dashboard opens the same URLs (``optuna-dashboard sqlite:///.pario/tune.db``).
"""

from __future__ import annotations

import logging
from pathlib import Path

from pario.errors import ParioError

DEFAULT_DIR = Path(".pario")
RDB_SCHEMES = ("sqlite", "postgresql", "mysql")


def default_url(base: Path | None = None) -> str:
    root = (base or Path.cwd()) / DEFAULT_DIR
    return f"sqlite:///{root.resolve() / 'tune.db'}"


def quiet_optuna() -> None:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    logging.getLogger("alembic").setLevel(logging.WARNING)


def open_storage(url: str | None):  # type: ignore[no-untyped-def]
    """An Optuna storage for ``url`` (None: the default SQLite file, created with its directory)."""
    import optuna
    from sqlalchemy.exc import ArgumentError, OperationalError

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
    if scheme == "sqlite":
        path = Path(url.split(":///", 1)[-1])
        if str(path) and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return optuna.storages.RDBStorage(url, engine_kwargs={"pool_pre_ping": True} if scheme != "sqlite"
                                          else None)
    except (ArgumentError, OperationalError, ImportError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ParioError(f"--storage {url}: cannot open: {reason[:200]}") from None
