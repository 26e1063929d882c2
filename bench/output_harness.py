"""Every output of pario's reading side, for comparing two versions of the code byte for byte.

A change that must not alter behaviour (a refactoring, a faster path) is checked with it:

    .venv/bin/python bench/output_harness.py logs build/harness/logs      # once: the pario logs
    .venv/bin/python bench/output_harness.py render build/harness/logs build/harness/before
    ... change the code, `make install` ...
    .venv/bin/python bench/output_harness.py render build/harness/logs build/harness/after
    .venv/bin/python bench/output_harness.py compare build/harness/before build/harness/after

``logs`` runs the kernels under ``pario run`` (block, block traced, s3d traced, s3d through
PnetCDF, vpic through HDF5, bt, tile; 4 ranks, small sizes) and copies the Darshan logs of
tests/data/darshan-logs beside them: the logs are made once, so both renders read the same
bytes.  ``render`` writes, for every log, the terminal report at 120 columns, ``report --json``,
``report --csv``, ``diagnose`` as text and JSON and ``dump``, and ``replay --json`` of the traced
logs, plus one two-log report; ``compare`` lists the files that differ and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DARSHAN = ROOT / "tests" / "data" / "darshan-logs"
PARIO = [str(Path(sys.executable).parent / "pario")]

#: name -> (kernel and its options, traced)
KERNEL_RUNS: dict[str, tuple[list[str], bool]] = {
    "block": (["block", "--block-size", "1m", "--transfer-size", "64k"], False),
    "block-traced": (["block", "--block-size", "1m", "--transfer-size", "64k"], True),
    "s3d-traced": (["s3d", "--read"], True),
    "s3d-pnetcdf": (["s3d", "--small", "--pnetcdf"], False),
    "vpic-hdf5": (["vpic", "--hdf5", "--particles", "64k"], False),
    "bt": (["bt", "--class", "S"], False),
    "tile": (["tile"], False),
}


def make_logs(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    for name, (kernel, traced) in KERNEL_RUNS.items():
        exe = subprocess.run([*PARIO, "path", f"pario-kernel-{kernel[0]}"], capture_output=True, text=True,
                             check=True).stdout.strip()
        data = out / f"{name}.data"
        command = ["mpirun", "-np", "4", exe, *kernel[1:], "--path", str(data)]
        run = [*PARIO, "run", "--log", str(out / f"{name}.pario"), *(["--trace"] if traced else []), "--"]
        subprocess.run([*run, *command], env=env, check=True, capture_output=True)
        for leftover in out.glob(f"{name}.data*"):
            leftover.unlink()
    for log in DARSHAN.glob("*.darshan"):
        shutil.copy(log, out / log.name)


def _write(path: Path, argv: list[str]) -> None:
    """The command's standard output and exit status, in ``path``; the output folder's own name
    is written as ``OUT`` (``report --csv`` names where it wrote), so that two renders compare."""
    env = dict(os.environ, COLUMNS="120", TERM="dumb")
    proc = subprocess.run([*PARIO, *argv], capture_output=True, text=True, env=env)
    text = proc.stdout + f"\n[exit {proc.returncode}]\n" + proc.stderr
    path.write_text(text.replace(str(path.parent), "OUT"))


def render(logs: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    all_logs = sorted([*logs.glob("*.pario"), *logs.glob("*.darshan")])
    for log in all_logs:
        stem = out / log.name
        _write(Path(f"{stem}.report.txt"), ["report", str(log)])
        _write(Path(f"{stem}.report-json.txt"), ["report", "-q", str(log), "--json", "-"])
        csv = Path(f"{stem}.csv")
        shutil.rmtree(csv, ignore_errors=True)
        _write(Path(f"{stem}.report-csv.txt"), ["report", "-q", str(log), "--csv", str(csv)])
        _write(Path(f"{stem}.diagnose.txt"), ["diagnose", str(log)])
        _write(Path(f"{stem}.diagnose-json.txt"), ["diagnose", "--json", str(log)])
        _write(Path(f"{stem}.dump.txt"), ["dump", str(log)])
        if "traced" in log.name:
            _write(Path(f"{stem}.replay.txt"), ["replay", str(log), "--json", "-"])
    pair = [str(logs / "mpi-io-test-x86_64-3.2.0.darshan"), str(logs / "mpi-io-test-x86_64-3.5.0.darshan")]
    _write(out / "two-logs.report.txt", ["report", *pair])


def compare(a: Path, b: Path) -> int:
    names = sorted({p.relative_to(a) for p in a.rglob("*") if p.is_file()}
                   | {p.relative_to(b) for p in b.rglob("*") if p.is_file()})
    differ = [n for n in names if not (a / n).is_file() or not (b / n).is_file()
              or not filecmp.cmp(a / n, b / n, shallow=False)]
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(names) - len(differ)} of {len(names)} files identical")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("logs").add_argument("out", type=Path)
    r = sub.add_parser("render")
    r.add_argument("logs", type=Path)
    r.add_argument("out", type=Path)
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.what == "logs":
        make_logs(args.out)
    elif args.what == "render":
        render(args.logs, args.out)
    else:
        return compare(args.a, args.b)
    return 0


if __name__ == "__main__":
    sys.exit(main())
