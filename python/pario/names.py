"""File names: how they are shown where columns are narrow (relative to the directory they
share, said once in the title, and shortened from the left, where names differ), and which of
a million of them match glob patterns without a Python call per name (:class:`NameIndex`,
:func:`glob_mask`, :func:`matching`)."""

from __future__ import annotations

import fnmatch
import functools
import posixpath
import re
from collections.abc import Iterable, Sequence

import numpy as np

from pario.table import unique_index


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


_SEP = "\0"  # cannot occur in a path
_WILD = re.compile(r"[*?\[\]]")


class NameIndex:
    """Names joined into one NUL-separated UTF-8 string, searched for literal pieces.

    The names that start or end with a piece are found by comparing bytes at every
    name's start or end at once (NumPy); those that contain it by ``bytes.find``:
    no Python call per name either way.
    """

    def __init__(self, blob: bytes, seps: np.ndarray) -> None:
        self.blob = blob
        self.bytes = b = np.frombuffer(blob, dtype=np.uint8)
        self.starts = seps[:-1] + 1  # where each name begins in ``blob``
        self.ends = seps[1:]  # where it ends (its terminating NUL)
        self.lens = self.ends - self.starts
        # each name's first two and last two bytes (for a shorter name they include a NUL
        # or a neighbour's byte: the length check that follows them settles it)
        self.head = (b[self.starts].astype(np.uint16) << 8) | b[np.minimum(self.starts + 1, len(b) - 1)]
        self.tail = (b[np.maximum(self.ends - 2, 0)].astype(np.uint16) << 8) | b[self.ends - 1]

    @classmethod
    def build(cls, names: np.ndarray) -> NameIndex | None:
        """An index of ``names`` (None unless they are all strings free of NUL)."""
        values = names.tolist()
        try:
            text = _SEP + _SEP.join(values) + _SEP
        except TypeError:  # a missing or non-text name
            return None
        blob = text.encode("utf-8", "surrogatepass")
        seps = np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 0)
        if len(seps) != len(values) + 1:
            return None
        return cls(blob, seps)

    def __len__(self) -> int:
        return len(self.starts)

    def rows_with(self, piece: str, *, start: bool = False, end: bool = False) -> np.ndarray:
        """Sorted rows whose name contains ``piece`` (at its start / end when asked)."""
        p = piece.encode("utf-8", "surrogatepass")
        if start or end:
            n = len(p)
            # the two bytes at the anchored end first: most names differ there
            if start:
                rows = np.flatnonzero(self.head == (p[0] << 8 | p[1]) if n >= 2 else (self.head >> 8) == p[0])
            else:
                rows = np.flatnonzero(
                    self.tail == (p[-2] << 8 | p[-1]) if n >= 2 else (self.tail & 0xFF) == p[-1]
                )
            lens = self.lens[rows]
            rows = rows[lens == n] if start and end else rows[lens >= n]
            base = self.starts if start else self.ends - n
            for j in range(2, n) if start else range(n - 3, -1, -1):
                if not len(rows):
                    break
                rows = rows[self.bytes[base[rows] + j] == p[j]]
            return rows
        find = self.blob.find
        found: list[int] = []
        i = find(p)
        while i >= 0:
            found.append(i)
            i = find(p, find(b"\0", i + 1))  # the next match lies in a later name
        if not found:
            return np.zeros(0, dtype=np.int64)
        rows = np.searchsorted(self.starts, np.asarray(found, dtype=np.int64), side="right") - 1
        return rows

    def suffix_mask(self, suffixes: Sequence[str]) -> np.ndarray:
        """Per name: it ends with one of ``suffixes``."""
        out = np.zeros(len(self), dtype=bool)
        for s in suffixes:
            out[self.rows_with(s, end=True)] = True
        return out


def _glob_candidates(index: NameIndex, pattern: str) -> np.ndarray | None:
    """Rows whose name may match the glob ``pattern`` (a superset; None: every row may)."""
    if _SEP in pattern:
        return None
    if not _WILD.search(pattern):
        return index.rows_with(pattern, start=True, end=True)
    head = _WILD.split(pattern, maxsplit=1)[0]
    tail = _WILD.split(pattern)[-1]
    # a literal start or end is checked on every name at once; prefer it
    if head or tail:
        if len(head) >= len(tail):
            return index.rows_with(head, start=True)
        return index.rows_with(tail, end=True)
    if "[" in pattern or "]" in pattern:
        return None
    # every literal piece between wildcards must occur somewhere in the name
    pieces = [piece for piece in re.split(r"[*?]", pattern) if piece]
    if not pieces:
        return None
    return index.rows_with(max(pieces, key=len))


@functools.lru_cache(maxsize=256)
def glob_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regular expression that matches what any of the glob patterns matches (made once per
    set of patterns: a survey diagnoses thousands of logs with the same ones)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def glob_mask(index: NameIndex, values: np.ndarray, patterns: tuple[str, ...]) -> np.ndarray:
    """Per name of ``values`` (indexed by ``index``): it matches one of the glob patterns.

    As ``re.match`` of :func:`fnmatch.translate` says, but each pattern's regular expression
    (made once per pattern: the profiler's own log is a pattern of its own in every log) runs
    only on the names not matched yet that contain its longest literal piece in its place.
    """
    out = np.zeros(len(values), dtype=bool)
    for p in patterns:
        rows = _glob_candidates(index, p)
        rows = np.arange(len(values)) if rows is None else np.asarray(rows)
        rows = rows[~out[rows]]
        if not len(rows):
            continue
        if _plain(p):  # the literal search found exactly the matches
            out[rows] = True
        else:
            match = glob_regex((p,)).match
            out[rows] = np.fromiter((match(values[i]) is not None for i in rows), dtype=bool, count=len(rows))
    return out


def _plain(pattern: str) -> bool:
    """Whether :func:`_glob_candidates` finds exactly the names ``pattern`` matches: a literal with
    stars before it, after it, or both (``*x*``, ``*x``, ``x*``, ``x``): ``*`` matches anything."""
    inner = pattern.strip("*")
    return bool(inner) and _SEP not in pattern and not _WILD.search(inner)


#: Up to this many names, :func:`matching` runs one regular expression on each name: on a log of
#: a few files, the NameIndex's literal searches (a few NumPy calls per pattern) cost more.
FEW_NAMES = 64


def matching(names: np.ndarray, patterns: tuple[str, ...], index: NameIndex | None = None) -> np.ndarray:
    """Per name: it matches one of the glob patterns (``index``: a :class:`NameIndex` of ``names``
    already at hand). One regular expression on each name for up to :data:`FEW_NAMES` names;
    else through a :class:`NameIndex` when the names are all text, else one regular expression
    on each distinct name."""
    if not patterns or not len(names):
        return np.zeros(len(names), dtype=bool)
    if len(names) <= FEW_NAMES:  # the usual log: one regular expression on each name costs less
        values = names.tolist()
        if all(isinstance(v, str) for v in values):
            match = glob_regex(tuple(patterns)).match
            return np.fromiter((match(v) is not None for v in values), dtype=bool, count=len(values))
    index = index if index is not None else NameIndex.build(names)
    if index is not None:
        return glob_mask(index, names, patterns)
    regex = glob_regex(tuple(patterns))
    uniques, _, codes = unique_index(names.astype(str))
    hit = np.fromiter((regex.match(u) is not None for u in uniques.tolist()), dtype=bool, count=len(uniques))
    return hit[codes]
