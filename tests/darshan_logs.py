"""The real Darshan logs the tests read: tests/data/darshan-logs (INDEX.md there says what each shows)."""

from __future__ import annotations

from pathlib import Path

LOGS = Path(__file__).resolve().parent / "data" / "darshan-logs"
ALL_LOGS = sorted(LOGS.glob("*.darshan"))
