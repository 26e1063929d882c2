"""Cost of the PnetCDF layer (src/runtime/pnetcdf.c): nanoseconds per intercepted call.

bench/pnetcdf_loop.c on one rank, without the runtime (A), with it (B), and with it but the
PnetCDF layer silent (C: a preloaded ncmpi_inq_libvers answers another version, as in
tests/test_pnetcdf_layer.py, so only the MPI-IO/POSIX/MPI layers beneath record), interleaved
(A B C A B C ...), medians over the repetitions; B - C is the PnetCDF layer's own cost, C - A
that of the layers beneath:

- ``iput``: ncmpi_iput_var1_int posts (the library copies 4 bytes and queues the request, so
  the wrapper's own work shows: the timer, the variable's record, the request table);
- ``put``: ncmpi_put_var1_int in independent mode, each a 4-byte write through MPI-IO and
  POSIX beneath (which pario also records, as inner calls).

Usage::

    .venv/bin/python bench/pnetcdf_overhead.py [--reps 9] [--calls 200000]

Prints the Markdown table of docs/performance.md ("PnetCDF layer").
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from pario import paths

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from overhead import run_ns  # noqa: E402  (bench/overhead.py, beside this file)

MODES = {
    "iput": "ncmpi_iput_var1_int (post only)",
    "put": "ncmpi_put_var1_int, independent (4-byte write beneath)",
}


def build(work: Path) -> tuple[Path, Path]:
    """The loop program and the library that fakes another PnetCDF version."""
    out, fake = work / "pnetcdf_loop", work / "fake_version.so"
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "pnetcdf"], capture_output=True,
                           text=True).stdout.split() or ["-lpnetcdf"]
    subprocess.run(["mpicc", "-O2", "-o", str(out), str(HERE / "pnetcdf_loop.c"), *flags], check=True)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(fake),
                    str(HERE.parent / "tests" / "programs" / "pnetcdf_fake_version.c")], check=True)
    return out, fake


def medians(exe: Path, mode: str, calls: int, target: Path, reps: int,
            envs: list[dict[str, str]]) -> list[float]:
    """Median ns per call of each configuration, run interleaved."""
    values: list[list[float]] = [[] for _ in envs]
    run_ns(exe, mode, calls // 10, target, envs[0])  # warm up
    for _ in range(reps):
        for i, env in enumerate(envs):
            values[i].append(run_ns(exe, mode, calls, target, env))
    return [statistics.median(v) for v in values]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--calls", type=int, default=200000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        exe, fake = build(work)
        env_a = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        lib = str(paths.runtime_library())
        env_b = {**env_a, "LD_PRELOAD": lib, "PARIO_LOG": str(work / "b.pario")}
        env_c = {**env_b, "LD_PRELOAD": f"{lib}:{fake}"}
        print("| call | A no pario (ns) | B pario (ns) | C pario, PnetCDF layer silent (ns) "
              "| B - C: the layer | C - A: beneath |")
        print("|---|---:|---:|---:|---:|---:|")
        for mode, label in MODES.items():
            calls = args.calls if mode == "iput" else args.calls // 10
            a, b, c = medians(exe, mode, calls, work / "loop.nc", args.reps, [env_a, env_b, env_c])
            print(f"| {label} | {a:.0f} | {b:.0f} | {c:.0f} | {b - c:+.0f} | {c - a:+.0f} |")


if __name__ == "__main__":
    main()
