"""Reading the text pario prints as a user would paste or read it."""

from __future__ import annotations


def joined(lines: list[str]) -> list[str]:
    """The lines with each command continued by a backslash joined into one, as a shell reads it:
    after a space the backslash ends a word (the next line's indent goes), inside a word it joins
    the word's pieces (the next line as it is, leading blanks included)."""
    out: list[str] = []
    for line in lines:
        if out and out[-1].endswith(" \\"):
            out[-1] = out[-1][:-1] + line.lstrip()
        elif out and out[-1].endswith("\\"):
            out[-1] = out[-1][:-1] + line
        else:
            out.append(line)
    return out
