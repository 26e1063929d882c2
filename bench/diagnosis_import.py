"""CPU of importing the diagnosis, its detector records as they are against frozen ones with eq.

Every command that diagnoses imports pario.diagnosis, whose rule modules declare their records
(hits and the file and rank records in them) with ``pario.diagnosis.hits.record``: a dataclass
with ``__init__`` and ``__repr__`` only.  B builds the same records as frozen dataclasses with
eq, by wrapping ``dataclasses.dataclass`` before the import, as they were before.  Each sample is
a fresh process that imports NumPy and Rich first (every command has them) and measures the CPU
time (``time.process_time``) of ``import pario.diagnosis``; A and B alternate, medians.  Usage:

    .venv/bin/python bench/diagnosis_import.py [--rounds 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

#: one sample: the CPU seconds of the import, printed
SAMPLE = """
import dataclasses, sys, time
import numpy, rich
if sys.argv[1] == "frozen":
    original = dataclasses.dataclass

    def frozen(cls=None, /, **kw):
        if kw == {"eq": False}:  # record's dataclass
            kw = {"frozen": True}
        return original(cls, **kw) if cls is not None else original(**kw)

    dataclasses.dataclass = frozen
t = time.process_time()
import pario.diagnosis
print(time.process_time() - t)
"""


def sample(kind: str) -> float:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", SAMPLE, kind], env=env, capture_output=True, text=True,
                         check=True, timeout=120)
    return float(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8, help="A/B pairs (default 8)")
    args = parser.parse_args()
    pairs = [(sample("record"), sample("frozen")) for _ in range(args.rounds)]
    a, b = (statistics.median(p[i] for p in pairs) for i in (0, 1))
    ratio = statistics.median(x / y for x, y in pairs)
    print(f"A record: {a:.3f} s   B frozen with eq: {b:.3f} s   A/B (median of the pairs): {ratio:.2f}")


if __name__ == "__main__":
    main()
