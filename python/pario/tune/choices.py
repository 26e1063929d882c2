"""The names ``pario tune`` offers, without importing anything heavy (the CLI's parser is built
for every ``pario`` command, and ``pario run`` must start fast)."""

from __future__ import annotations

OBJECTIVES: dict[str, str] = {
    "write-bw": "write bandwidth of the selected files (bytes / slowest rank's write+metadata time), "
                "maximised",
    "read-bw": "read bandwidth of the selected files (bytes / slowest rank's read+metadata time), maximised",
    "io-time": "I/O time of the slowest rank on the selected files, minimised",
    "wall-time": "run time of the job (longest rank), minimised",
}
MAXIMISE = frozenset({"write-bw", "read-bw"})
STRATEGIES = ("exact", "pract", "random", "grid")
