"""Rewrite the generated blocks of docs/diagnosis-examples.md from the tests' real Darshan logs.

Usage: .venv/bin/python docs/regenerate_examples.py [LOG_DIR]   (default tests/data/darshan-logs)
tests/test_diagnosis_logs.py fails when the page differs from what this writes.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from pario.diagnosis import diagnose
from pario.log import read_log
from pario.report.findings import findings_markdown, log_summary

PAGE = Path(__file__).resolve().parent / "diagnosis-examples.md"
BLOCK = re.compile(r"(<!-- BEGIN generated: (\S+) -->\n)(.*?)(<!-- END generated -->)", re.S)


def block(log: Path) -> str:
    profile = read_log(log)
    return findings_markdown(diagnose(profile), title=log_summary(profile), level=3)


def main() -> None:
    root = PAGE.parents[1]
    logs = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else root / "tests" / "data" / "darshan-logs"
    text = PAGE.read_text()
    # the logs named as a user at the top of the clone would (the commands the findings print hold
    # the log's path as given)
    os.chdir(root)
    new = BLOCK.sub(lambda m: m.group(1) + block(logs.relative_to(root) / m.group(2)) + m.group(4), text)
    PAGE.write_text(new)
    print(f"{PAGE}: {'rewritten' if new != text else 'up to date'}")


if __name__ == "__main__":
    main()
