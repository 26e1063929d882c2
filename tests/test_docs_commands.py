"""Every `pario` command line shown in README.md and docs/*.md is one pario's own parser takes as
written (continuation lines joined, as a shell reads them).  Synopses (with `[OPTION]` or `A|B`),
placeholders (`<...>`, `...`) and output lines (`pario run: ...`) are not commands.  The shell
examples are also run as written (tests/test_docs_examples.py, tests/test_docs_tune.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from advice_check import pario_line_errors

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def command_lines(text: str) -> list[str]:
    """The `pario ...` lines of the page's code blocks, continuations joined, comments and `$ ` cut."""
    out = []
    for lang, block in re.findall(r"^ *```(\S*)\n(.*?)^ *```$", text, re.S | re.M):
        if lang not in ("", "sh", "console", "text"):
            continue
        line = ""
        for raw in block.splitlines():
            line = f"{line} {raw.strip()}" if line else raw.strip()
            if line.endswith("\\"):
                line = line[:-1].rstrip()
                continue
            cmd = line.removeprefix("$ ").split("  #")[0].strip()
            line = ""
            if not cmd.startswith("pario ") or re.match(r"pario( \w+)?:", cmd):
                continue  # not pario, or an output line
            if "[" in cmd or "|" in cmd or "<" in cmd or "..." in cmd:
                continue  # a synopsis or a placeholder
            out.append(cmd)
    return out


def test_the_pages_show_commands() -> None:
    assert sum(len(command_lines(p.read_text())) for p in PAGES) >= 50


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_documented_command_parses(page: Path) -> None:
    errors = [e for cmd in command_lines(page.read_text()) for e in pario_line_errors(cmd)]
    assert errors == []
