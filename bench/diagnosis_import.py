"""CPU of importing the diagnosis, its detector records as they are against two earlier forms.

Every command that diagnoses imports pario.diagnosis, whose rule modules declare their records
(hits and the file and rank records in them) with ``pario.diagnosis.hits.record``: a dataclass
with ``__init__`` only, and a class without a docstring given its name as one (else dataclasses
makes one from ``inspect.signature``).  B builds the same records with ``__repr__`` and the
signature docstrings, C as frozen dataclasses with eq, by wrapping ``dataclasses.dataclass``
before the import, as they were before.  Each sample is a fresh process that imports NumPy and
Rich first (every command has them) and measures the CPU time (``time.process_time``) of
``import pario.diagnosis``; A, B and C alternate, medians.  Usage:

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
if sys.argv[1] != "record":
    original = dataclasses.dataclass

    def earlier(cls=None, /, **kw):
        if kw == {"eq": False, "repr": False}:  # record's dataclass
            if cls is not None and cls.__doc__ == cls.__name__:
                cls.__doc__ = None  # the docstring record gave it
            kw = {"frozen": True} if sys.argv[1] == "frozen" else {"eq": False}
        return original(cls, **kw) if cls is not None else original(**kw)

    dataclasses.dataclass = earlier
t = time.process_time()
import pario.diagnosis
print(time.process_time() - t)
"""
KINDS = {"record": "A record", "repr": "B with __repr__ and signatures", "frozen": "C frozen with eq"}


def sample(kind: str) -> float:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", SAMPLE, kind], env=env, capture_output=True, text=True,
                         check=True, timeout=120)
    return float(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8, help="rounds of A, B and C (default 8)")
    args = parser.parse_args()
    rounds = [{kind: sample(kind) for kind in KINDS} for _ in range(args.rounds)]
    med = {kind: statistics.median(r[kind] for r in rounds) for kind in KINDS}
    print("   ".join(f"{label}: {med[kind]:.3f} s" for kind, label in KINDS.items()))
    for kind in ("repr", "frozen"):
        ratio = statistics.median(r["record"] / r[kind] for r in rounds)
        print(f"A/{KINDS[kind][0]} (median of the rounds' ratios): {ratio:.2f}")

if __name__ == "__main__":
    main()
