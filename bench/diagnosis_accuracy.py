"""Diagnosis accuracy on runs with planted I/O problems: recall and false alarms per finding level.

Each case runs a program whose I/O problem is known by construction (tests/programs/diag_patterns.c,
and the block kernel under ROMIO for the MPI-IO settings) under ``pario run``, exports the log as a
Darshan log (``pario export --darshan``), and diagnoses both.  A case states its truth: the findings
that name the planted problem (one of them must be found) and the findings that are true of the run
as consequences (the time in I/O of an I/O-heavy run).  A finding at a level that is neither is a
false alarm.  Where Drishti (``drishti``) is installed, it reads the Darshan log too, and its
triggered issues are listed beside.

    .venv/bin/python bench/diagnosis_accuracy.py [--np 4] [--cases rank0,random] [--out DIR]

Prints a table per case and the totals (docs/performance.md, "Diagnosis accuracy").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "programs" / "diag_patterns.c"
ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
       "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}
LEVELS = ("critical", "warning", "info")


@dataclass(frozen=True)
class Case:
    name: str
    #: program arguments after the launcher: ("pattern", MODE) or ("block", ARGS...) under ROMIO
    run: tuple[str, ...]
    #: any of these findings names the planted problem
    truth: frozenset[str]
    #: findings true of the run as consequences (not counted as false alarms)
    allowed: frozenset[str] = field(default_factory=frozenset)
    #: Drishti's issue codes that name the planted problem (its insight codes, drishti --csv)
    drishti: frozenset[str] = field(default_factory=frozenset)


IO_HEAVY = frozenset({"TIME-IO-BOUND", "IO-LATENCY-BOUND"})
CASES: tuple[Case, ...] = (
    Case("rank0", ("pattern", "rank0"), frozenset({"LOAD-FEW-RANKS"}),
         IO_HEAVY | {"IO-SMALL-WRITES", "LOAD-IMBALANCE"}, frozenset({"P18", "P19", "P21"})),
    Case("straggler", ("pattern", "straggler"), frozenset({"LOAD-STRAGGLERS", "LOAD-IMBALANCE"}),
         IO_HEAVY | {"IO-SMALL-WRITES"}, frozenset({"P18", "P19", "P21"})),
    Case("random", ("pattern", "random"), frozenset({"IO-RANDOM-ACCESS"}), IO_HEAVY,
         frozenset({"P11", "P13"})),
    Case("reread", ("pattern", "reread"), frozenset({"IO-REDUNDANT-READS"}), IO_HEAVY, frozenset({"P09"})),
    Case("overwrite", ("pattern", "overwrite"), frozenset({"IO-REDUNDANT-WRITES"}), IO_HEAVY,
         frozenset({"P10"})),
    Case("tinysync", ("pattern", "tinysync"), frozenset({"IO-LATENCY-BOUND", "IO-SMALL-WRITES"}),
         IO_HEAVY, frozenset({"P06"})),
    Case("stdio", ("pattern", "stdio"), frozenset({"IFACE-STDIO-BULK"}), IO_HEAVY | {"IO-SMALL-WRITES"},
         frozenset({"S01"})),
    Case("meta", ("pattern", "meta"), frozenset({"IFACE-METADATA-HEAVY"}), IO_HEAVY, frozenset({"P17"})),
    Case("compute", ("pattern", "shared"), frozenset(), frozenset()),
    Case("one-aggregator", ("block", "--block-size", "256k", "--transfer-size", "8k", "--segments", "16",
                            "--collective", "--hints",
                            "romio_cb_write=enable,cb_nodes=1,cb_buffer_size=1048576"),
         frozenset({"MPIIO-SINGLE-AGGREGATOR"}),
         IO_HEAVY | {"MPIIO-COLLECTIVE-RMW", "MPIIO-CB-CYCLES", "IO-SMALL-WRITES", "IO-RANDOM-ACCESS"},
         frozenset({"M08", "M09"})),
    Case("collective-rmw", ("block", "--block-size", "64k", "--transfer-size", "8k", "--segments", "8",
                            "--collective", "--hints", "romio_cb_write=enable"),
         frozenset({"MPIIO-COLLECTIVE-RMW"}), IO_HEAVY | {"IO-SMALL-WRITES", "MPIIO-SINGLE-AGGREGATOR"}),
    Case("independent-small", ("block", "--block-size", "256k", "--transfer-size", "1k", "--independent"),
         frozenset({"IFACE-INDEPENDENT-SHARED", "IO-SMALL-WRITES"}), IO_HEAVY,
         frozenset({"M03", "P06", "P16"})),
)


def _pario() -> list[str]:
    exe = Path(sys.executable).parent / "pario"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "pario"]


def _command(case: Case, np_: int, exe: Path, out: Path) -> list[str]:
    if case.run[0] == "pattern":
        return ["mpirun", "-np", str(np_), str(exe), case.run[1], str(out)]
    block = subprocess.run([*_pario(), "path", "pario-kernel-block"], capture_output=True, text=True,
                           check=True).stdout.strip()
    return ["mpirun", "-np", str(np_), "--mca", "io", "romio321", block, *case.run[1:], "-o",
            str(out / "data.dat")]


def _findings(log: Path) -> dict[str, str]:
    """finding id -> severity, from pario diagnose --json."""
    proc = subprocess.run([*_pario(), "diagnose", "--json", str(log)], capture_output=True, text=True,
                          env=ENV, check=True)
    return {f["id"]: f["severity"] for f in json.loads(proc.stdout)["logs"][0]["findings"]}


def _drishti(log: Path, drishti: str | None) -> set[str] | None:
    """The issue codes Drishti triggers on a Darshan log (None where Drishti is not installed)."""
    if drishti is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([drishti, "--csv", "--export_dir", tmp, str(log)], capture_output=True, text=True,
                       timeout=600)
        found = list(Path(tmp).glob("*.csv"))
        if not found:
            return set()
        head, row = found[0].read_text().splitlines()[:2]
        return {k for k, v in zip(head.split(","), row.split(","), strict=True) if v == "True"}


@dataclass
class Score:
    found: bool
    false_alarms: dict[str, list[str]]  # level -> finding ids


def score(case: Case, found: dict[str, str]) -> Score:
    """Whether the planted problem was named, and the findings that are neither it nor a consequence."""
    named = bool(case.truth & set(found)) if case.truth else True
    alarms: dict[str, list[str]] = {level: [] for level in LEVELS}
    for fid, level in sorted(found.items()):
        if fid in case.truth or fid in case.allowed or fid.startswith("DATA-"):
            continue
        alarms[level].append(fid)
    return Score(named, alarms)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--np", type=int, default=4, help="ranks (default 4)")
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    ap.add_argument("--out", type=Path, help="keep the logs here (default: a temporary directory)")
    ap.add_argument("--drishti", default=shutil.which("drishti"),
                    help="Drishti's command (default: drishti on PATH; without it, no Drishti column)")
    args = ap.parse_args()
    chosen = [c for c in CASES if not args.cases or c.name in args.cases.split(",")]
    if not chosen:
        ap.error(f"no such case; the cases are {', '.join(c.name for c in CASES)}")
    work = args.out or Path(tempfile.mkdtemp(prefix="pario-accuracy-"))
    work.mkdir(parents=True, exist_ok=True)
    exe = work / "diag_patterns"
    subprocess.run(["mpicc", "-std=c11", "-O1", "-o", str(exe), str(PROGRAM)], check=True)
    totals = {"pario": [0, 0, {lv: 0 for lv in LEVELS}], "darshan": [0, 0, {lv: 0 for lv in LEVELS}]}
    drishti_found = 0
    print(f"{'case':18} {'log':8} {'planted found':14} {'false alarms (critical/warning/info)':40} "
          "drishti (named? its issues)")
    for case in chosen:
        out = work / case.name
        out.mkdir(exist_ok=True)
        log = out / "run.pario"
        run = subprocess.run([*_pario(), "run", "--log", str(log), "--", *_command(case, args.np, exe, out)],
                             capture_output=True, text=True, env=ENV, timeout=600)
        if run.returncode != 0:
            print(f"{case.name}: the run failed: {run.stderr.strip().splitlines()[-1:]}")
            return 1
        darshan = out / "run.darshan"
        subprocess.run([*_pario(), "export", "--darshan", str(log), str(darshan)], check=True,
                       capture_output=True, env=ENV)
        drishti = _drishti(darshan, args.drishti)
        named = drishti is not None and (bool(case.drishti & drishti) if case.truth else True)
        drishti_found += int(named)
        for kind, path in (("pario", log), ("darshan", darshan)):
            s = score(case, _findings(path))
            t = totals[kind]
            t[0] += int(s.found)
            t[1] += 1
            for lv in LEVELS:
                t[2][lv] += len(s.false_alarms[lv])
            alarms = "/".join(",".join(s.false_alarms[lv]) or "-" for lv in LEVELS)
            extra = ""
            if kind == "darshan":
                extra = ("not installed" if drishti is None
                         else f"{'yes' if named else 'NO'}: {' '.join(sorted(drishti)) or '(none)'}")
            print(f"{case.name:18} {kind:8} {'yes' if s.found else 'NO':14} {alarms:40} {extra}")
    for kind, (found, n, alarms) in totals.items():
        per = ", ".join(f"{lv} {alarms[lv]}" for lv in LEVELS)
        print(f"total {kind}: planted problem named in {found} of {n} cases; false alarms: {per}")
    if args.drishti:
        print(f"total drishti: planted problem named in {drishti_found} of {len(chosen)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
