"""Text that fits the terminal without breaking words: Rich renderables that wrap at spaces
and, inside a long path, after a '/' (Rich itself folds a word that does not fit mid-word).

:func:`terminal_width` is the width to fit; :func:`wrap_words` is the pure rule;
:class:`Wrapped` applies it at render time, when the width is known; :class:`Fit` shows the
first of several layouts that fits the width; :class:`Tabular` is a table of text cells that
fits the width, or becomes one record per block; :class:`Shortened` is a name kept on one
line, shortened in the middle where it must be.
"""

from __future__ import annotations

import copy
import os
import re
import sys
from collections.abc import Sequence
from typing import TextIO

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

#: The width of output that goes to no terminal (a file, a pipe) and names no COLUMNS.
DEFAULT_WIDTH = 80


def terminal_width(stream: TextIO | None = None) -> int:
    """The width to fit: $COLUMNS where it is a positive number, else the width of the terminal
    ``stream`` (standard output by default) writes to, else DEFAULT_WIDTH."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        fd = (stream if stream is not None else sys.stdout).fileno()
        if os.isatty(fd):
            return os.get_terminal_size(fd).columns or DEFAULT_WIDTH
    except (AttributeError, OSError, ValueError):  # no file descriptor (a StringIO), closed
        pass
    return DEFAULT_WIDTH


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


def shell_tokens(line: str) -> list[str]:
    """A shell command's words as written (quotes and ``${...}`` kept whole, nothing re-quoted)."""
    words: list[str] = []
    word, quote, depth = "", "", 0
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "{" and i > 0 and line[i - 1] == "$":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        elif ch == " " and not depth:
            if word:
                words.append(word)
            word = ""
            continue
        word += ch
    return [*words, word] if word else words


def command_lines(line: str, width: int, indent: int = 4) -> list[str]:
    """A shell command in lines of at most ``width`` columns (:func:`words_lines` of its words,
    a word too long for a line cut after a '/')."""
    return words_lines(shell_tokens(line), width, indent, cut_words=True)


def words_lines(words: list[str], width: int, indent: int = 4, cut_words: bool = False) -> list[str]:
    """A shell command's words (as the shell reads them: quoted where they need it) in lines of at
    most ``width`` columns where the words allow, each but the last ending with a backslash: it
    pastes into a shell as one command.  Between words the next line is indented; with
    ``cut_words`` a word too long for a line is cut after a '/' and goes on at the start of the
    next line (a backslash and a newline inside a word join its pieces, where an indent would split
    them)."""
    out: list[str] = []
    current = ""
    for word in words:
        if current.strip() and len(current) + 1 + len(word) + 2 > width:
            out.append(current + " \\")
            current = " " * indent
        current = f"{current} {word}" if current.strip() else current + word
        while cut_words and len(current) > width and \
                (cut := current.rfind("/", 0, width - 1)) > len(current) - len(word):
            out.append(current[:cut + 1] + "\\")
            current = current[cut + 1:]
    return [*out, current] if current else out


class ShellCommand:
    """A shell command laid out by :func:`command_lines` at the width it is given (a Rich renderable)."""

    def __init__(self, command: str, style: str = "", margin: int = 0) -> None:
        self.command = command
        self.style = style
        self.margin = margin

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        longest = max((len(w) for w in shell_tokens(self.command)), default=0)
        return Measurement(self.margin + 4 + longest + 2, self.margin + len(self.command))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        pad = " " * self.margin
        inside_word = False  # a line that goes on with a word cut on the line before starts at 0
        for line in command_lines(self.command, max(options.max_width - self.margin, 20)):
            yield Text(("" if inside_word else pad) + line, style=self.style, no_wrap=True, overflow="fold")
            inside_word = line.endswith("\\") and not line.endswith(" \\")


class FittingTable(Table):
    """A table that, where even its narrowest layout is wider than the terminal, leaves out its last
    columns (never the first) and says which, instead of cutting the values of its columns
    (a "23.9 ms" cut to "23.9 m" reads as minutes)."""

    def _narrowest(self, console: Console, options: ConsoleOptions) -> int:
        """The width the table needs at least: each column as wide as its widest value where it
        cannot wrap, its longest word where it can (a path: its longest part between '/'), with
        the padding and rules between columns."""
        wide = options.update(width=10**6)

        def need(cell: RenderableType, no_wrap: bool) -> int:
            if isinstance(cell, Wrapped) and not no_wrap:
                return cell.indent + longest_piece(cell.text, 1)
            m = Measurement.get(console, wide, cell)
            return m.maximum if no_wrap else m.minimum

        widths = []
        for col in self.columns:
            cells = [col.header, *col.cells] if self.show_header else list(col.cells)
            widths.append(max(max((need(c, col.no_wrap) for c in cells), default=0), col.min_width or 0))
        _, right, _, left = self.padding
        gap = (max(left, right) if self.collapse_padding else left + right) + (1 if self.box else 0)
        edges = (left + right if self.pad_edge else 0) + (2 if self.box and self.show_edge else 0)
        return sum(widths) + gap * (len(widths) - 1) + edges

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        m = Table.__rich_measure__(self, console, options)
        return Measurement(min(m.minimum, options.max_width), m.maximum)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table: FittingTable = self
        dropped: list[str] = []
        while len(table.columns) > 1 and table._narrowest(console, options) > options.max_width:
            dropped.insert(0, str(table.columns[-1].header))
            table = copy.copy(table)
            table.columns = table.columns[:-1]
        yield from Table.__rich_console__(table, console, options)
        if dropped:
            them = "them" if len(dropped) > 1 else "it"
            yield Wrapped(f"(left out at {options.max_width} columns: {', '.join(dropped)}; a wider "
                          f"terminal shows {them})", style="dim")


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


def shorten_middle(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: whole where it fits, else its start and its end
    (the longer part: a dataset's own name, a file's) around an ellipsis."""
    if len(text) <= width:
        return text
    keep = max(width - 1, 2)
    head = keep // 3
    return text[:head] + "…" + text[len(text) - (keep - head):]


class Shortened:
    """A name on one line (a Rich renderable): whole where the width allows, else shortened in
    the middle (:func:`shorten_middle`), never broken across lines."""

    def __init__(self, text: str, style: str = "", least: int = 12) -> None:
        self.text = text
        self.style = style
        self.least = least

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(min(len(self.text), self.least), len(self.text))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text(shorten_middle(self.text, options.max_width), style=self.style, no_wrap=True,
                   overflow="ignore")


def _words_width(text: str) -> int:
    return max((len(w) for w in text.split()), default=0)


def _path_pieces_width(text: str) -> int:
    """The longest word of ``text``, a path counting as its pieces, each up to and with a '/'."""
    return max((len(p) for w in text.split() for p in re.findall(r"[^/]*/|[^/]+", w)), default=0)


class Tabular:
    """A table of text cells that fits the width it is given.

    The first layout that fits: the table as it is; the table with the columns that may wrap
    (``wrap``) wrapped by :func:`wrap_words` and the headers at their spaces, no column
    narrower than its longest word (a path: its longest piece up to a '/'); the table
    without its last text columns, each row followed by their cells as ``label: value`` lines
    (folded under the row); else one record per block: ``label: value`` for the first cell,
    then for each other cell on a line of its own.  A cell is never cut in the middle of a
    word, and none is left blank for want of room.
    """

    GAP = 2  # spaces between two columns

    def __init__(self, headers: Sequence[str], rows: Sequence[Sequence[str]], *,
                 right: Sequence[bool] | None = None, wrap: Sequence[bool] | None = None) -> None:
        self.headers = list(headers)
        self.rows = [[re.sub(r"\s", " ", c) for c in r] for r in rows]  # a value's lines: one line
        n = len(self.headers)
        self.right = list(right) if right is not None else [False] * n
        self.wrap = list(wrap) if wrap is not None else [not r for r in self.right]
        cells = [[self.headers[i], *(r[i] for r in self.rows)] for i in range(n)]
        self.natural = [max(len(c) for c in col) for col in cells]
        self.least = [max([_words_width(col[0]),
                           *((_path_pieces_width(c) if self.wrap[i] else len(c)) for c in col[1:])])
                       for i, col in enumerate(cells)]

    def widths(self, width: int, shown: Sequence[int]) -> list[int] | None:
        """The widths of the columns ``shown`` in ``width`` characters, or None where they
        cannot fit.  Room beyond the least goes to the headers of numbers first (one line each),
        then to the text columns, a character at a time."""
        room = width - self.GAP * (len(shown) - 1)
        natural = [self.natural[i] for i in shown]
        if sum(natural) <= room:
            return natural
        widths = [self.least[i] for i in shown]
        if sum(widths) > room:
            return None
        spare = room - sum(widths)
        for k, i in enumerate(shown):
            if not self.wrap[i]:
                more = min(spare, natural[k] - widths[k])
                widths[k] += more
                spare -= more
        while spare > 0:
            short = [k for k in range(len(widths)) if widths[k] < natural[k]]
            if not short:
                break
            for k in short[:spare]:
                widths[k] += 1
            spare -= min(spare, len(short))
        return widths

    def layout(self, width: int) -> tuple[list[int], list[int]] | None:
        """The columns shown in the table and their widths (the others folded under each row),
        or None for one record per block."""
        shown = list(range(len(self.headers)))
        folded = [i for i in shown[1:] if self.wrap[i]]
        while True:
            widths = self.widths(width, shown)
            if widths is not None:
                return shown, widths
            if not folded:
                return None
            shown.remove(folded.pop())

    def _line(self, cells: Sequence[list[str]], shown: Sequence[int], widths: Sequence[int],
              bottom: bool = False) -> list[str]:
        height = max(len(c) for c in cells)
        out = []
        for j in range(height):
            parts = []
            for k, (i, w) in enumerate(zip(shown, widths, strict=True)):
                lines = cells[k]
                at = j - (height - len(lines)) if bottom else j
                text = lines[at] if 0 <= at < len(lines) else ""
                parts.append(text.rjust(w) if self.right[i] else text.ljust(w))
            out.append((" " * self.GAP).join(parts).rstrip())
        return out

    def table_lines(self, width: int, shown: Sequence[int], widths: Sequence[int]) -> list[Text]:
        heads = [wrap_words(self.headers[i], w) for i, w in zip(shown, widths, strict=True)]
        out = [Text(line, style="bold") for line in self._line(heads, shown, widths, bottom=True)]
        out.append(Text("─" * (sum(widths) + self.GAP * (len(shown) - 1))))
        rest = [i for i in range(len(self.headers)) if i not in shown]
        for r in self.rows:
            cells = [wrap_words(r[i], w) if self.wrap[i] else [r[i]]
                     for i, w in zip(shown, widths, strict=True)]
            out += [Text(line) for line in self._line(cells, shown, widths)]
            for i in rest:
                out += [Text(line) for line in wrap_words(f"  {self.headers[i]}: {r[i]}", width, 4)]
        return out

    def records(self, width: int) -> list[Text]:
        out: list[Text] = []
        for k, r in enumerate(self.rows):
            if k:
                out.append(Text(""))
            out += [Text(line, style="bold") for line in wrap_words(f"{self.headers[0]}: {r[0]}", width, 4)]
            for h, c in zip(self.headers[1:], r[1:], strict=True):
                out += [Text(line) for line in wrap_words(f"  {h}: {c}", width, 4)]
        return out

    def lines(self, width: int) -> list[Text]:
        """The text at ``width`` columns, line by line."""
        fit = self.layout(width)
        return self.table_lines(width, *fit) if fit is not None else self.records(width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        natural = sum(self.natural) + self.GAP * (len(self.headers) - 1)
        return Measurement(min(natural, 6 + max(self.least, default=0)), natural)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.lines(options.max_width):
            line.no_wrap = True
            line.overflow = "ignore"
            yield line
