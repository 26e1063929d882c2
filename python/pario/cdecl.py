"""C declarations for cffi, parsed once per machine and kept pre-parsed in the cache.

Parsing C declarations (pycparser) takes 20 ms and more, longer than reading a small log, at
every run.  cffi's out-of-line ABI mode writes them once, pre-parsed, as a Python module; it is
kept under the cache directory (``$XDG_CACHE_HOME/pario``, else ``~/.cache/pario``), named by a
hash of the declarations and cffi's version, so that new declarations or a new cffi get their
own.  Without a writable cache, the declarations are parsed in line.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import zlib
from typing import Any


def declared(header: str, prefix: str) -> Any:
    """A cffi FFI of the declarations ``header`` (``prefix``: the cached module's name begins so)."""
    import _cffi_backend

    # crc32 rather than hashlib, whose import (OpenSSL) alone takes 10 ms of a report
    data = f"{_cffi_backend.__version__}\n{header}".encode()
    name = f"{prefix}_{zlib.crc32(data):08x}{len(data):x}"
    path = os.path.join(cache_dir(), name + ".py")
    if not os.path.exists(path):
        with contextlib.suppress(Exception):  # a cache we cannot write: parse in line below
            _write_module(header, name, path)
    if os.path.exists(path):
        with contextlib.suppress(Exception):  # a damaged cache file: parse in line below
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                return module.ffi
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(header)
    return ffi


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pario")


def _write_module(header: str, name: str, path: str) -> None:
    """Write the pre-parsed declarations to ``path`` (atomically: a rename)."""
    import tempfile

    import cffi

    builder = cffi.FFI()
    builder.cdef(header)
    builder.set_source(name, None)  # ABI mode: a pure Python module, nothing to compile
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(path)) as tmp:
        built = builder.compile(tmpdir=tmp, verbose=False)  # no C compiler involved in ABI mode
        os.replace(built, path)
