"""auto's policy replayed offline on a recording of every variant's per-call times.

A recording (``bench/collective_auto.py --record DIR`` writes ``DIR/calls.csv``) holds, for
each kernel and round, every collective call of a run of each fixed variant of auto's
candidate lists and of auto itself.  The simulator runs src/collective/auto.c itself,
compiled with bench/auto_sim.c into a shared library (its two engine functions replaced by
the recorded cycles and the algorithm kept), called through ctypes: for each call of a
file auto picks a variant, the simulator gives it that variant's recorded time of the same
call in the same round, and sums the times.  It prints, per kernel and round, auto's
simulated total, each fixed variant's total and the best, in ms (each run's ticks converted
with its own clock readings).  ``-D NAME=VALUE`` (repeatable) builds the policy with other
constants (AUTO_EXPLORE_SHARE, AUTO_RECHECK); several ``--policy`` sets compare variants of
the policy side by side.  ``--check`` replays each auto run of the recording with the times
it saw and reports any call where the simulator's choice differs from the recorded one
(exit status 1).  Calls every rank wrote directly (auto's direct path) are auto's own and
are left out of all totals.  Usage:

    .venv/bin/python bench/auto_sim.py RECORDING.csv [--kernels s3d,bt] [--round N]
        [--policy "AUTO_RECHECK=8,AUTO_EXPLORE_SHARE=0.2" ...] [--check]
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "bench" / "auto_sim.c"
POLICY = ROOT / "src" / "collective" / "auto.c"
ALGORITHMS = {1: "none", 2: "comm", 3: "write", 4: "write-comm", 5: "write-comm-2", 7: "direct"}
SHUFFLES = {1: "p2p", 2: "rma-fence", 3: "rma-lock"}
# the columns PARIO_COLL_CALLS writes (src/collective/engine.c, calls_line)
CALL_COLUMNS = ("pid", "file", "call", "variant", "span", "cycles", "ncycles", "aggregators", "slowest_ticks",
                "auto_slot", "auto_candidate", "auto_explored", "now_ticks", "now_ns")
# the columns of a recording: the machine and commit, the run, then each call
COLUMNS = ("machine", "nproc", "commit", "kernel", "ranks", "run", "round", "file", "call", "variant", "span",
           "cycles", "cycle_class", "size_log2", "ncycles", "aggregators", "slowest_ticks", "slowest_ns",
           "auto_candidate", "auto_explored", "auto_slot")


class SimError(Exception):
    """A bad recording or a policy that does not build: one line for the user."""


def variant_name(code: int) -> str:
    """10 * algorithm + shuffle as ``write:rma-lock``; ``direct`` for auto's direct calls."""
    algorithm = ALGORITHMS.get(code // 10)
    if algorithm == "direct":
        return "direct"
    if algorithm is None or code % 10 not in SHUFFLES:
        raise SimError(f"unknown variant code {code}")
    return f"{algorithm}:{SHUFFLES[code % 10]}"


def size_log2(span: int) -> int:
    """floor(log2(span)), 0 for span <= 1: auto's size class."""
    return max(span, 1).bit_length() - 1


def build(defines: dict[str, str] | None = None) -> Path:
    """The policy library for these -D constants, built once into a cache directory."""
    flags = [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]
    cc = shutil.which("mpicc") or shutil.which("cc")
    if cc is None:
        raise SimError("no mpicc or cc on PATH to build the policy")
    key = hashlib.sha256(DRIVER.read_bytes() + POLICY.read_bytes()
                         + b"".join(p.read_bytes() for p in sorted(POLICY.parent.glob("*.h")))
                         + " ".join(flags).encode()).hexdigest()[:16]
    out = Path(tempfile.gettempdir()) / f"pario-auto-sim-{os.getuid()}" / f"{key}.so"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    cmd = [cc, "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
           "-I", str(POLICY.parent), "-I", str(ROOT / "include"), *flags, str(DRIVER), "-o", str(tmp)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SimError(f"building the policy failed: {proc.stderr.strip().splitlines()[-1:]}")
    tmp.replace(out)
    return out


class Policy:
    """auto.c's policy in a shared library: one file's state per ``new_file``."""

    def __init__(self, defines: dict[str, str] | None = None):
        self.defines = dict(defines or {})
        lib = ctypes.CDLL(str(build(self.defines)))
        lib.sim_new.restype = ctypes.c_void_p
        lib.sim_new.argtypes = [ctypes.c_int]
        lib.sim_free.argtypes = [ctypes.c_void_p]
        lib.sim_pick.restype = ctypes.c_int
        out_int = ctypes.POINTER(ctypes.c_int)
        lib.sim_pick.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, out_int, out_int, out_int]
        lib.sim_learn.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
        lib.sim_candidates.restype = ctypes.c_int
        lib.sim_candidates.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
        lib.sim_explore_share.restype = ctypes.c_double
        lib.sim_recheck.restype = ctypes.c_int
        self.lib = lib
        self.explore_share = lib.sim_explore_share()
        self.recheck = lib.sim_recheck()

    def candidates(self, cls: int, hint_shuffle: int = 0) -> list[str]:
        """The candidate variants of a class (0 one cycle, 1 several), the static choice first."""
        codes = (ctypes.c_int * 8)()
        n = self.lib.sim_candidates(cls, hint_shuffle, codes)
        return [variant_name(codes[i]) for i in range(n)]

    def all_candidates(self) -> list[str]:
        """Both classes' candidates, several cycles' first, each once."""
        return list(dict.fromkeys(self.candidates(1) + self.candidates(0)))

    def file(self) -> PolicyFile:
        return PolicyFile(self)


class PolicyFile:
    """auto's state for one file."""

    def __init__(self, policy: Policy):
        self.lib = policy.lib
        self.handle = self.lib.sim_new(0)
        if not self.handle:
            raise MemoryError("sim_new")

    def pick(self, span: int, cycles: int) -> tuple[str, int, int]:
        """The variant auto runs for a call, its candidate index and whether it explores."""
        cand, explored, slot = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        code = self.lib.sim_pick(self.handle, span, cycles, ctypes.byref(cand), ctypes.byref(explored),
                                 ctypes.byref(slot))
        return variant_name(code), cand.value, explored.value

    def learn(self, ticks: int) -> None:
        self.lib.sim_learn(self.handle, ticks)

    def close(self) -> None:
        if self.handle:
            self.lib.sim_free(self.handle)
            self.handle = None

    def __enter__(self) -> PolicyFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Call:
    """One recorded call."""

    file: int
    call: int
    variant: str
    span: int
    cycles: int
    ticks: int
    ns: float
    candidate: int
    explored: int


def parse_calls(text: str) -> list[dict[str, int]]:
    """The lines PARIO_COLL_CALLS wrote, as dicts of CALL_COLUMNS."""
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        fields = line.split(",")
        if len(fields) != len(CALL_COLUMNS):
            raise SimError(f"calls line {n}: {len(fields)} fields, expected {len(CALL_COLUMNS)}")
        rows.append(dict(zip(CALL_COLUMNS, map(int, fields), strict=True)))
    return rows


def ns_per_tick(rows: list[dict[str, int]]) -> float:
    """The hooks' clock against CLOCK_MONOTONIC over a run's lines (one line: their ratio)."""
    first, last = min(rows, key=lambda r: r["now_ticks"]), max(rows, key=lambda r: r["now_ticks"])
    if last["now_ticks"] > first["now_ticks"] and last["now_ns"] > first["now_ns"]:
        return (last["now_ns"] - first["now_ns"]) / (last["now_ticks"] - first["now_ticks"])
    return first["now_ns"] / first["now_ticks"] if first["now_ticks"] else 1.0


def recording_rows(calls: list[dict[str, int]], meta: dict[str, str | int]) -> list[dict[str, object]]:
    """A run's calls as rows of a recording (COLUMNS), meta giving the machine and run columns."""
    if len({r["pid"] for r in calls}) > 1:
        raise SimError("the calls come from more than one process (files of several communicators)")
    scale = ns_per_tick(calls) if calls else 1.0
    return [{**meta, "file": r["file"], "call": r["call"], "variant": variant_name(r["variant"]),
             "span": r["span"], "cycles": r["cycles"], "cycle_class": int(r["cycles"] > 1),
             "size_log2": size_log2(r["span"]), "ncycles": r["ncycles"], "aggregators": r["aggregators"],
             "slowest_ticks": r["slowest_ticks"], "slowest_ns": round(r["slowest_ticks"] * scale),
             "auto_candidate": r["auto_candidate"], "auto_explored": r["auto_explored"],
             "auto_slot": r["auto_slot"]} for r in calls]


def write_recording(path: Path, rows: list[dict[str, object]], append: bool = False) -> None:
    new = not append or not path.exists()
    with path.open("w" if not append else "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        if new:
            w.writeheader()
        w.writerows(rows)


def read_recording(path: Path) -> dict[tuple[str, int, int], dict[str, list[Call]]]:
    """(kernel, ranks, round) -> run (a variant or "auto") -> its calls in order."""
    try:
        with path.open(newline="") as fh:
            reader = csv.DictReader(fh)
            missing = set(COLUMNS) - set(reader.fieldnames or ())
            if missing:
                raise SimError(f"{path}: not a recording (no column {', '.join(sorted(missing))})")
            out: dict[tuple[str, int, int], dict[str, list[Call]]] = defaultdict(lambda: defaultdict(list))
            for r in reader:
                out[(r["kernel"], int(r["ranks"]), int(r["round"]))][r["run"]].append(Call(
                    int(r["file"]), int(r["call"]), r["variant"], int(r["span"]), int(r["cycles"]),
                    int(r["slowest_ticks"]), float(r["slowest_ns"]), int(r["auto_candidate"]),
                    int(r["auto_explored"])))
    except (OSError, ValueError, KeyError) as exc:
        raise SimError(f"{path}: {exc}") from None
    return out


@dataclass
class Result:
    """A simulated run: the time (ms) and what auto chose, call by call."""

    ms: float
    choices: list[tuple[str, int, int]]  # (variant, candidate, explored)


def simulate(policy: Policy, runs: dict[str, list[Call]], key: object = "") -> Result:
    """auto over the recorded calls of one kernel and round: each call gets the recorded time
    of the variant auto picks (ticks to decide with, ns to sum)."""
    fixed = {k: v for k, v in runs.items() if k != "auto"}
    if not fixed:
        raise SimError(f"{key}: no fixed-variant run to take times from")
    shape = next(iter(fixed.values()))
    times = {k: {(c.file, c.call): c for c in v} for k, v in fixed.items()}
    direct = {(c.file, c.call) for c in runs.get("auto", []) if c.variant == "direct"}
    files: dict[int, PolicyFile] = {}
    total, choices = 0.0, []
    try:
        for c in shape:
            if (c.file, c.call) in direct or c.span <= 0:
                continue
            f = files.setdefault(c.file, policy.file())
            variant, cand, explored = f.pick(c.span, c.cycles)
            got = times.get(variant, {}).get((c.file, c.call))
            if got is None:
                raise SimError(f"{key}: auto picked {variant} for call {c.call}, which the recording lacks")
            if (got.span, got.cycles) != (c.span, c.cycles):
                raise SimError(f"{key}: call {c.call} differs between the runs (span, cycles)")
            f.learn(got.ticks)
            total += got.ns
            choices.append((variant, cand, explored))
    finally:
        for f in files.values():
            f.close()
    return Result(total / 1e6, choices)


def fixed_totals(runs: dict[str, list[Call]]) -> dict[str, float]:
    """Each fixed variant's time (ms) over the calls auto did not write directly."""
    direct = {(c.file, c.call) for c in runs.get("auto", []) if c.variant == "direct"}
    return {k: sum(c.ns for c in v if (c.file, c.call) not in direct and c.span > 0) / 1e6
            for k, v in runs.items() if k != "auto"}


def replay_auto(policy: Policy, calls: list[Call]) -> list[int]:
    """Replay an auto run with the times it saw; the indices of the calls whose choice (variant,
    candidate, explored) differs from the recorded one."""
    files: dict[int, PolicyFile] = {}
    wrong = []
    try:
        for i, c in enumerate(calls):
            if c.variant == "direct" or c.span <= 0:
                continue
            f = files.setdefault(c.file, policy.file())
            got = f.pick(c.span, c.cycles)
            if got != (c.variant, c.candidate, c.explored):
                wrong.append(i)
            f.learn(c.ticks)
    finally:
        for f in files.values():
            f.close()
    return wrong


def parse_policy(text: str) -> dict[str, str]:
    out = {}
    for item in filter(None, text.split(",")):
        name, eq, value = item.partition("=")
        if not eq or not name.isidentifier() or not value:
            raise SimError(f"--policy {text!r}: expected NAME=VALUE[,NAME=VALUE]")
        out[name] = value
    return out


def check(policy: Policy, rec: dict, keys: list) -> int:
    """--check: each auto run replayed with its own times; 1 if a choice differs."""
    bad = 0
    for key in keys:
        calls = rec[key].get("auto", [])
        chosen = sum(c.variant != "direct" and c.span > 0 for c in calls)
        wrong = replay_auto(policy, calls)
        bad += len(wrong)
        print(f"{key[0]} {key[1]} round {key[2]}: {len(calls)} auto calls, {chosen} chosen by the "
              f"policy, {chosen - len(wrong)} same choice, {len(wrong)} different")
    return 1 if bad else 0


def table(policies: list[Policy], names: list[str], rec: dict, keys: list) -> None:
    """Per kernel and round: each policy's simulated total, the best fixed variant, every variant."""
    variants = policies[0].all_candidates()
    print("ms of the calls, summed (auto: simulated on the recorded times; auto run: the recorded auto "
          "run's own; ratio to the best fixed)\n")
    columns = [*names, "auto run", "best fixed", *variants]
    print(f"| kernel | ranks | round | {' | '.join(columns)} |")
    print("|---|---|---|" + "---|" * (len(names) + 2 + len(variants)))
    sums: dict[str, float] = defaultdict(float)
    for key in keys:
        head = f"| {key[0]} | {key[1]} | {key[2]} |"
        fixed = fixed_totals(rec[key])
        best = min(fixed, key=lambda v: fixed[v])
        if fixed[best] <= 0:
            print(f"{head} every call direct |" + " - |" * (len(names) + 1 + len(variants)))
            continue
        sims = [simulate(pol, rec[key], key).ms for pol in policies]
        for n, ms in zip(names, sims, strict=False):
            sums[n] += ms
        sums["best fixed"] += fixed[best]
        ran = [c.ns for c in rec[key].get("auto", []) if c.variant != "direct" and c.span > 0]
        sims.append(sum(ran) / 1e6 if ran else float("nan"))
        cells = " | ".join(f"{ms:.1f} ({ms / fixed[best]:.2f})" for ms in sims)
        others = " | ".join(f"{fixed[v]:.1f}" if v in fixed else "-" for v in variants)
        print(f"{head} {cells} | {best} {fixed[best]:.1f} | {others} |")
    if sums["best fixed"] > 0:
        totals = ", ".join(f"{n} {sums[n]:.1f} ms ({sums[n] / sums['best fixed']:.2f})" for n in names)
        print(f"\nover all: {totals}, best fixed per run {sums['best fixed']:.1f} ms")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("recording", type=Path, help="calls.csv of bench/collective_auto.py --record")
    p.add_argument("--kernels", default="", help="comma-separated kernels (default: all recorded)")
    p.add_argument("--round", type=int, default=None, help="one round only (default: every round)")
    p.add_argument("--policy", action="append", default=[],
                   help="NAME=VALUE[,...] constants of a policy variant (repeatable; the first column is "
                        "always auto.c as it is)")
    p.add_argument("--check", action="store_true",
                   help="replay each recorded auto run with its own times: the choices must be the same")
    args = p.parse_args(argv)
    try:
        rec = read_recording(args.recording)
        kernels = set(filter(None, args.kernels.split(",")))
        keys = sorted(k for k in rec if (not kernels or k[0] in kernels)
                      and (args.round is None or k[2] == args.round))
        if not keys:
            raise SimError(f"{args.recording}: no recorded run of the kernels and round asked for")
        policies = [Policy(), *(Policy(parse_policy(t)) for t in args.policy)]
        if args.check:
            return check(policies[0], rec, keys)
        table(policies, ["auto"] + [f"auto[{t}]" for t in args.policy], rec, keys)
        return 0
    except SimError as exc:
        print(f"auto_sim: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
