"""How file names are shown where columns are narrow: relative to the directory they
share (said once, in the title), and shortened from the left, where names differ."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable


def common_directory(names: Iterable[str]) -> str:
    """The deepest directory that holds every absolute name, with a trailing '/'.

    '' when there is nothing to strip: no names, a relative name, or only '/' in common.
    """
    names = list(names)
    if not names or not all(n.startswith("/") for n in names):
        return ""
    common = posixpath.commonpath([posixpath.dirname(n) for n in names])
    return "" if common == "/" else common + "/"


def relative(name: str, directory: str) -> str:
    """``name`` without the leading ``directory`` (from common_directory)."""
    return name[len(directory):] if directory and name.startswith(directory) else name


def shorten(name: str, width: int) -> str:
    """At most ``width`` characters, keeping the end of the name (the file, not the mount point)."""
    return name if len(name) <= width else "…" + name[-(width - 1):]
