"""auto against the runtime it replaces and against fixed variants, on files written many times.

Each configuration (kernel, ranks, directory) runs the kernel with ``--steps STEPS`` (so every
file gets STEPS x its calls per step collective writes) under:

- ``baseline`` (when ``--baseline LIBPARIO`` is given): another build of the runtime (the one
  before a change) with ``PARIO_COLL=auto``;
- ``auto``: this checkout's runtime with ``PARIO_COLL=auto``;
- each fixed variant ``ALGO:SHUFFLE`` of ``--variants`` with this checkout's runtime.

Variants of a configuration run back to back, their order rotated from round to round; one
untimed pilot round first.  Bandwidth is the kernel's ``bytes_written / time_s.write``; the
table gives medians and the ratio of each to the baseline (or, without one, to auto), all
from the same run, and with a baseline the paired ratio: the median over the rounds of auto's
bandwidth over the baseline's in the same round, its quartiles, and how many rounds auto won.
After each timed run of this checkout's auto, its pario log gives what auto
did with the file: the variants it ran (calls, mean time of a call), the calls spent exploring
and the variant it kept; the last round's are printed below the table.  A directory under
/dev/ is written through a symlink (libpario records no file under /dev/).

With ``--record DIR`` it records instead, for bench/auto_sim.py: each kernel runs under auto
and under each candidate variant of auto's lists (src/collective/auto.c, both classes; not
``--variants``), the runs of a round back to back in rotated order after one untimed pilot
round, each with ``PARIO_COLL_CALLS`` set (src/collective/engine.c: rank 0 appends a line per
call); every call of every timed run goes to ``DIR/calls.csv`` with the machine (hostname,
cores), the git commit, the kernel, ranks, run, round, the call's variant, file range, cycles
and their class, size class, aggregators, the slowest rank's time (ticks and ns) and, for
auto's runs, its candidate and whether it explored.  auto left to choose puts more aggregators
on a node than a fixed variant does (src/collective/domains.c): the fixed variants run with
``cb_nodes`` set to the count auto used in its pilot run, so that their times are those auto
would see.  Usage:

    .venv/bin/python bench/collective_auto.py [--baseline /path/to/old/libpario.so]
        [--kernels s3d,bt,tile-small,block] [--ranks 4] [--steps 8] [--reps 5]
        [--size 8m] [--dir /tmp] [--variants write-comm:p2p,comm:rma-lock,...] [--out FILE]
    .venv/bin/python bench/collective_auto.py --record DIR [--kernels ...] [--ranks 4]
        [--steps 8] [--reps 5] [--size 8m] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from auto_sim import Policy, SimError, parse_calls, recording_rows, write_recording  # noqa: E402
from collective import MIB, RUNTIME_EXCLUDES, csv, kernel_command, parse_size  # noqa: E402
from pario import paths  # noqa: E402

CANDIDATES = ("write-comm:p2p", "comm:rma-lock", "none:rma-lock", "write:rma-lock", "write:rma-fence",
              "write-comm-2:p2p", "write-comm:rma-lock")


def auto_summary(log: Path) -> str:
    """What auto did with the kernel's file, from the run's pario log."""
    from pario.analysis.engine import engine_files
    from pario.log import read_log

    try:
        files = engine_files(read_log(log))
    except Exception as exc:  # noqa: BLE001 - the summary is information, not a result
        return f"no log ({type(exc).__name__}: {exc})"
    if not files:
        return "no engine record"
    e = files[0]
    ran = ", ".join(f"{v.variant} {v.calls} x {v.per_call * 1e3:.2f} ms" for v in e.variants)
    return (f"{e.calls} calls, aggregators {e.aggregators}, explored {e.explored}, "
            f"kept {e.kept_many or '-'}: {ran}")


def run_once(lib: str, coll: str, program: str, ranks: int, args: list[str], path: Path, cb: int,
             env: dict[str, str], calls: Path | None = None, hints: str = "") -> float | None:
    """MiB/s of one run (None on failure); with calls, PARIO_COLL_CALLS appends to that file;
    hints: more hints (",key=value...")."""
    cmd = ["mpirun", "--oversubscribe", "-np", str(ranks), "--mca", "io", "romio321",
           "-x", f"LD_PRELOAD={lib}", "-x", f"PARIO_COLL={coll}", "-x", f"PARIO_LOG={path}.pario",
           *(["-x", f"PARIO_COLL_CALLS={calls}"] if calls else []),
           str(paths.program(program)), *args, "--path", str(path), "--hints", f"cb_buffer_size={cb}{hints}",
           "--delete"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    line = next((x for x in reversed(proc.stdout.splitlines()) if x.startswith("{")), None)
    if proc.returncode != 0 or line is None:
        print(f"  failed: {' '.join(cmd)}: {proc.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    res = json.loads(line)
    t = float(res["time_s"]["write"])
    return res["bytes_written"] / t / MIB if t > 0 else None


def paired(ratios: list[float]) -> str:
    """The median of the rounds' auto / baseline ratios, its quartiles, and in how many rounds
    auto was the faster: runs back to back share the machine's slow and fast moments, which
    the medians of each side apart do not cancel."""
    if not ratios:
        return "-"
    r = sorted(ratios)
    n = len(r)
    return (f"{statistics.median(r):.2f} [{r[n // 4]:.2f}, {r[(3 * n) // 4]:.2f}], "
            f"faster in {sum(x > 1.0 for x in r)}/{n}")


def git_commit() -> str:
    """This checkout's commit, "-dirty" when tracked files differ from it; "-" outside git."""
    root = Path(__file__).resolve().parent.parent
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return "-"
    dirty = subprocess.run(["git", "-C", str(root), "diff", "--quiet", "HEAD"]).returncode != 0
    return head.stdout.strip() + ("-dirty" if dirty else "")


def record(args: argparse.Namespace, lib: str, env: dict[str, str]) -> int:
    """Every call of auto's runs and of each candidate variant's, to args.record / calls.csv."""
    try:
        variants = Policy().all_candidates()
    except SimError as exc:
        print(f"collective_auto: {exc}", file=sys.stderr)
        return 2
    args.record.mkdir(parents=True, exist_ok=True)
    out = args.record / "calls.csv"
    out.unlink(missing_ok=True)
    machine = {"machine": socket.gethostname(), "nproc": os.cpu_count() or 0, "commit": git_commit()}
    runs = ["auto", *variants]
    failed = 0
    for kernel in args.kernels:
        program, ranks, kargs = kernel_command(kernel, args.ranks, args.size)
        kargs = [*kargs, "--steps", str(args.steps)]
        path = args.dir / f"pario-bench-auto-{kernel}.dat"
        calls = Path(tempfile.mkdtemp(prefix="pario-calls-")) / "calls"
        hints = ""  # the fixed variants': auto's aggregator count, from its pilot run
        for rnd in range(args.reps + 1):
            for run in runs[rnd % len(runs):] + runs[:rnd % len(runs)]:
                calls.unlink(missing_ok=True)
                bw = run_once(lib, run, program, ranks, kargs, path, args.cb_buffer_size, env, calls,
                              "" if run == "auto" else hints)
                if bw is None or not calls.exists():
                    failed += 1
                    continue
                if run == "auto" and not rnd:
                    hints = f",cb_nodes={max(r['aggregators'] for r in parse_calls(calls.read_text()))}"
                if rnd:  # round 0 is the untimed pilot
                    meta = {**machine, "kernel": kernel, "ranks": ranks, "run": run, "round": rnd}
                    write_recording(out, recording_rows(parse_calls(calls.read_text()), meta), append=True)
            print(f"{kernel}: round {rnd}/{args.reps}", file=sys.stderr, flush=True)
        calls.unlink(missing_ok=True)
        calls.parent.rmdir()
    print(f"{out}: {len(args.kernels)} kernels x {args.reps} rounds x {len(runs)} runs ({', '.join(runs)})"
          + (f", {failed} runs failed" if failed else ""))
    return 1 if failed else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline", default=None, help="libpario.so of the runtime to compare with")
    p.add_argument("--kernels", type=csv, default=["s3d", "bt", "tile-small", "block"])
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--size", type=parse_size, default=8 * MIB, help="bytes per step (default 8m)")
    p.add_argument("--cb-buffer-size", type=parse_size, default=MIB)
    p.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    p.add_argument("--variants", type=csv, default=list(CANDIDATES))
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--record", type=Path, default=None, metavar="DIR",
                   help="record every call of auto's and its candidates' runs to DIR/calls.csv")
    args = p.parse_args()
    if (str(args.dir.resolve()) + "/").startswith(RUNTIME_EXCLUDES):
        link = Path(tempfile.mkdtemp(prefix="pario-bench-auto-")) / "dir"
        link.symlink_to(args.dir.resolve())
        args.dir = link
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARIO_") and k != "LD_PRELOAD"}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    lib = str(paths.runtime_library())
    if args.record:
        return record(args, lib, env)
    runs = [*([("baseline", args.baseline, "auto")] if args.baseline else []), ("auto", lib, "auto"),
            *((v, lib, v) for v in args.variants)]
    rows = []
    done: dict[str, dict[str, list[float]]] = {}
    autos: dict[str, str] = {}
    for kernel in args.kernels:
        program, ranks, kargs = kernel_command(kernel, args.ranks, args.size)
        kargs = [*kargs, "--steps", str(args.steps)]
        path = args.dir / f"pario-bench-auto-{kernel}.dat"
        samples: dict[str, list[float]] = {name: [] for name, _, _ in runs}
        ratios: list[float] = []  # auto / baseline of each round (both ran back to back)
        for rnd in range(args.reps + 1):
            order = runs[rnd % len(runs):] + runs[:rnd % len(runs)]
            this_round: dict[str, float] = {}
            for name, so, coll in order:
                bw = run_once(so, coll, program, ranks, kargs, path, args.cb_buffer_size, env)
                if rnd and bw is not None:  # round 0 is the untimed pilot
                    samples[name].append(bw)
                    this_round[name] = bw
                    if name == "auto":
                        autos[f"{kernel} {ranks}"] = auto_summary(Path(f"{path}.pario"))
            if "baseline" in this_round and "auto" in this_round:
                ratios.append(this_round["auto"] / this_round["baseline"])
            print(f"{kernel}: round {rnd}/{args.reps}", file=sys.stderr, flush=True)
            if args.out:  # what a run cut short still leaves
                done[f"{kernel} {ranks}"] = samples
                args.out.with_suffix(".partial.json").write_text(json.dumps({"samples": done, "auto": autos}))
        med = {k: statistics.median(v) if v else None for k, v in samples.items()}
        fixed = {k: v for k, v in med.items() if k not in ("baseline", "auto") and v}
        best = max(fixed, key=lambda k: fixed[k]) if fixed else None
        rows.append((kernel, ranks, med, best, ratios))
    lines = [f"{args.steps} steps, {args.reps} rounds, {args.size // MIB} MiB per step, cb_buffer_size "
             f"{args.cb_buffer_size // MIB} MiB, {args.dir}, MiB/s medians (ratio to the baseline's auto, "
             "or without a baseline to auto)",
             "", "| kernel | ranks | baseline auto | auto | auto / baseline, paired | best fixed variant "
             "| auto / best | " + " | ".join(args.variants) + " |",
             "|---|---|---|---|---|---|---|" + "---|" * len(args.variants)]
    for kernel, ranks, med, best, ratios in rows:
        base = med.get("baseline", med["auto"])

        def cell(v: float | None, base: float | None = base) -> str:
            return "-" if v is None else f"{v:.0f}" + (f" ({v / base:.2f})" if base else "")

        best_cell = f"{best} {cell(med[best])}" if best else "-"
        share = f"{med['auto'] / med[best]:.2f}" if best and med["auto"] else "-"
        others = " | ".join(cell(med[v]) for v in args.variants)
        lines.append(f"| {kernel} | {ranks} | {cell(med.get('baseline'))} | {cell(med['auto'])} "
                     f"| {paired(ratios)} | {best_cell} | {share} | {others} |")
    lines += ["", "What auto did (last round, from its log):", ""]
    lines += [f"- {k}: {v}" for k, v in autos.items()]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
