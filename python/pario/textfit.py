"""Text that fits the terminal without breaking words: Rich renderables that wrap at spaces
and, inside a long path, after a '/' (Rich itself folds a word that does not fit mid-word).

:func:`wrap_words` is the pure rule; :class:`Wrapped` applies it at render time, when the
width is known; :class:`Fit` shows the first of several layouts that fits the width.
"""

from __future__ import annotations

import re

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.text import Text


def _cut(word: str, width: int) -> int:
    """Where to cut ``word`` to fit ``width``: after the last '/' that fits, else after the last
    '-' or '_' (a file name without directories), else at ``width``."""
    slash = word.rfind("/", 0, width) + 1
    if slash:
        return slash
    return max(word.rfind("-", 0, width), word.rfind("_", 0, width)) + 1 or width


def _pieces(word: str, width: int) -> list[str]:
    """``word`` cut into pieces of at most ``width``, each ending after a '/' where possible."""
    out: list[str] = []
    while len(word) > width:
        cut = _cut(word, width)
        out.append(word[:cut])
        word = word[cut:]
    return [*out, word]


def wrap_words(text: str, width: int, indent: int = 0) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at spaces (the spaces between
    words on a line are kept); a word longer than a line is broken after a path separator,
    starting on the current line.  Lines after the first start with ``indent`` spaces (a
    hanging indent); the first keeps the text's own leading spaces."""
    width = max(width, indent + 8)
    lines: list[str] = []
    line = " " * (len(text) - len(text.lstrip(" ")))
    base = len(line)
    for gap, word in re.findall(r"( *)(\S+)", text.lstrip(" ")):
        sep = gap if len(line) > base else ""
        if len(line) + len(sep) + len(word) > width and len(line) > base:
            room = width - len(line) - len(sep)
            if not (len(word) > width - indent and word.rfind("/", 0, room) > 0):
                lines.append(line)
                line, base, sep = " " * indent, indent, ""
        line += sep
        while len(line) + len(word) > width:
            cut = _cut(word, width - len(line))
            lines.append(line + word[:cut])
            line, base, word = " " * indent, indent, word[cut:]
        line += word
    if len(line) > base or not lines:
        lines.append(line)
    return lines


def longest_piece(text: str, width: int = 40) -> int:
    """The narrowest width at which :func:`wrap_words` breaks nothing but at spaces and '/'."""
    return max((len(p) for w in text.split() for p in _pieces(w, width)), default=0)


class Wrapped:
    """Text wrapped by :func:`wrap_words` at the width it is given (a Rich renderable)."""

    def __init__(self, text: str, style: str = "", indent: int = 0) -> None:
        self.text = text
        self.style = style
        self.indent = indent

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        longest = max((len(line) for line in self.text.splitlines()), default=0)
        return Measurement(min(longest, self.indent + longest_piece(self.text)), longest)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for paragraph in self.text.splitlines() or [""]:
            for line in wrap_words(paragraph, options.max_width, self.indent):
                yield Text(line, style=self.style, no_wrap=True, overflow="ignore")


class Fit:
    """The first layout whose natural width fits (the last one otherwise)."""

    def __init__(self, *layouts: RenderableType) -> None:
        self.layouts = layouts

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for layout in self.layouts[:-1]:
            if Measurement.get(console, options.update(width=10**6), layout).maximum <= options.max_width:
                yield layout
                return
        yield self.layouts[-1]
