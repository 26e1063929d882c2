"""Reading the text pario prints as a user would paste or read it."""

from __future__ import annotations


def joined(lines: list[str]) -> list[str]:
    """The lines with each command continued by a backslash joined into one, as a shell reads it."""
    out: list[str] = []
    for line in lines:
        if out and out[-1].endswith(" \\"):
            out[-1] = out[-1][:-1] + line.lstrip()
        else:
            out.append(line)
    return out
