"""Collective-write bandwidth: ROMIO, OMPIO and each algorithm of pario's engine, on the kernels.

Every configuration (file system, kernel, ranks) runs the same kernel command with the same
MPI-IO hints (``cb_buffer_size``) under each variant:

- ``romio``: Open MPI with ``--mca io romio321``;
- ``ompio``: Open MPI's default I/O component, with ``io_ompio_bytes_per_agg`` set to the same
  buffer size (OMPIO sizes its collective buffer from that MCA parameter); the fcoll component
  it picks is recorded from a ``fcoll_base_verbose`` run (the kernels' JSON ``hints`` are
  empty under Open MPI 4.1, which reports no defaults);
- each engine variant of ``--algorithms`` (``ALGO`` runs with the p2p shuffle, ``ALGO:SHUFFLE`` as
  given, ``auto`` as itself), and the best ``ALGO:p2p`` (from the untimed pilot round, or
  ``--rma-algorithm``) with ``rma-fence`` and ``rma-lock``: libpario.so preloaded as
  ``pario run`` does it (``mpirun -x LD_PRELOAD=... -x PARIO_COLL=ALGO:SHUFFLE``), its log
  written to a temporary directory and read after each run: a run whose log shows no write
  served by the engine (``engine_writes`` 0, or any fallback) is an error, so no number is
  silently the MPI library's;
- ``pwrite``: the practical limit, one process writing the same number of bytes to a new file
  in the same directory with ``os.pwrite`` of ``cb_buffer_size`` blocks (the largest write a
  two-phase aggregator makes), no fsync, timed like the kernels' write phase (calls only).

One untimed pilot round warms each configuration, records OMPIO's fcoll and picks the rma
algorithm; then ``--reps`` rounds run every configuration, all variants of a configuration
back to back, their order rotated from round to round (A B C, B C A, ...).  Bandwidth is the
kernel's ``bytes_written / time_s.write`` (time inside the write calls, the maximum over ranks);
tables give medians.  Usage:

    .venv/bin/python bench/collective.py [--quick] [--ranks 4,8,16] [--reps 5]
        [--kernels s3d,bt,tile-small,tile-large,block] [--algorithms none,comm,...]
        [--dir /tmp --dir /dev/shm] [--control] [--out results.md]
    .venv/bin/python bench/collective.py --from-json results.json     # the tables again

bt needs a square number of ranks: each requested count is replaced by the nearest square
(4, 8, 16 -> 4, 9, 16).  Writes the Markdown tables to --out and every sample to the same
path with a .json suffix.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from pario import paths

MIB = 1 << 20
PHASES = ("setup", "shuffle", "write", "wait")  # the engine's times in the log, engine_<phase>_time
ALGORITHMS = ("none", "comm", "write", "write-comm", "write-comm-2")
ALGORITHM_CODES = {1: "none", 2: "comm", 3: "write", 4: "write-comm", 5: "write-comm-2", 7: "direct"}
SHUFFLE_CODES = {1: "p2p", 2: "rma-fence", 3: "rma-lock"}
KERNELS = ("s3d", "bt", "tile-small", "tile-large", "block")
EXTRA_KERNELS = ("block-small",)
# Which target of the issue a kernel is judged against.
NONCONTIGUOUS = {"s3d", "bt", "tile-small", "tile-large", "block-small"}
CONTIGUOUS = {"block"}
RUN_TIMEOUT = 300.0
# libpario records no file under these (src/runtime/core.c, default_excludes); the engine still
# serves them, but its counters would be missing: such a directory is reached through a symlink.
RUNTIME_EXCLUDES = ("/proc/", "/sys/", "/dev/", "/etc/", "/usr/", "/lib/", "/lib64/", "/run/", "/var/run/")


def parse_size(text: str) -> int:
    m = re.fullmatch(r"(\d+)([kmg]?)", text.strip().lower())
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {text!r} (e.g. 32m, 1m, 65536)")
    return int(m.group(1)) << {"": 0, "k": 10, "m": 20, "g": 30}[m.group(2)]


def csv(text: str) -> list[str]:
    return [x for x in (s.strip() for s in text.split(",")) if x]


def nearest_square(n: int) -> int:
    q = max(1, round(math.sqrt(n)))
    return q * q


def tile_shape(elements: int) -> tuple[int, int]:
    """A tile of about ``elements`` elements, as square as powers of two allow."""
    tx = 1 << math.ceil(math.log2(max(1, elements)) / 2)
    return tx, max(1, elements // tx)


def kernel_command(kind: str, nprocs: int, size: int) -> tuple[str, int, list[str]]:
    """(installed program, ranks, kernel options) writing about ``size`` bytes in all."""
    if kind == "s3d":
        # 64 x 64 x nz doubles, 16 per point (11 species + u, pressure, temperature)
        nz = max(1, size // (64 * 64 * 16 * 8))
        return "pario-kernel-s3d", nprocs, ["--nx", "64", "--ny", "64", "--nz", str(nz)]
    if kind == "bt":
        n = round((size / 40) ** (1 / 3))
        return "pario-kernel-bt", nearest_square(nprocs), ["--size", str(n)]
    if kind in ("tile-small", "tile-large"):
        esize = 8 if kind == "tile-small" else 4096
        tx, ty = tile_shape(size // (esize * nprocs))
        return "pario-kernel-tile", nprocs, ["--tile-x", str(tx), "--tile-y", str(ty),
                                             "--element-size", str(esize)]
    if kind in ("block", "block-small"):
        block = MIB if kind == "block" else 64 << 10
        segments = max(1, size // (nprocs * block))
        return "pario-kernel-block", nprocs, ["--layout", "strided", "--block-size", str(block),
                                              "--transfer-size", str(block), "--segments", str(segments)]
    raise ValueError(f"unknown kernel {kind!r}; known: {', '.join(KERNELS + EXTRA_KERNELS)}")


@dataclass
class Config:
    fs: str                      # label of the directory (its file system type)
    dir: Path
    kernel: str
    ranks: int
    program: str
    args: list[str]
    file_bytes: int = 0
    fcoll: str = ""
    rma_algorithm: str = ""
    pilot: dict[str, float] = field(default_factory=dict)
    #: what auto ran in the pilot, as a fixed variant: (ALGO:SHUFFLE, its aggregators), or None
    #: (auto wrote directly, or ran two variants: one per class of calls)
    auto_start: tuple[str, int] | None = None
    samples: dict[str, list[dict]] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.dir / f"{self.kernel}-{self.ranks}.dat"

    @property
    def label(self) -> str:
        return f"{self.fs} {self.kernel} {self.ranks}"


class Bench:
    def __init__(self, args: argparse.Namespace, work: Path):
        self.args = args
        self.work = work
        self.lib = paths.runtime_library()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PARIO_") and k != "LD_PRELOAD"}
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
        self.env = env
        self.log = work / "engine.pario"
        self.engine_check: dict | None = None   # one engine run's counters, for the report

    # -- one run ---------------------------------------------------------------------------
    def mpirun(self, cfg: Config, variant: str, verbose_fcoll: bool = False) -> dict:
        cb = self.args.cb_buffer_size
        cmd = ["mpirun", "--oversubscribe", "-np", str(cfg.ranks)]
        engine = variant not in ("romio", "ompio")
        if variant == "romio":
            cmd += ["--mca", "io", "romio321"]
        elif variant in ("ompio", "ompio+pario"):
            cmd += ["--mca", "io", "ompio", "--mca", "io_ompio_bytes_per_agg", str(cb)]
            if self.args.cb_nodes:
                cmd += ["--mca", "io_ompio_num_aggregators", str(self.args.cb_nodes)]
            if verbose_fcoll:
                cmd += ["--mca", "fcoll_base_verbose", "100"]
        cb_nodes = self.args.cb_nodes
        coll = "mpi" if variant == "ompio+pario" else variant
        if variant == "auto-start":  # auto's first call as a fixed variant, with auto's aggregators
            coll, cb_nodes = cfg.auto_start
        if engine:
            self.log.unlink(missing_ok=True)
            cmd += ["-x", f"LD_PRELOAD={self.lib}", "-x", f"PARIO_LOG={self.log}",
                    "-x", f"PARIO_COLL={coll}", "-x", "PARIO_PARENT_PID=mpi"]
        hints = f"cb_buffer_size={cb}" + (f",cb_nodes={cb_nodes}" if cb_nodes else "")
        cmd += [str(paths.program(cfg.program)), *cfg.args, "--path", str(cfg.path), "--hints", hints]
        os.sync()  # every run starts with no dirty pages of an earlier one to write back
        t0 = time.monotonic()
        rc, out, err = run_group(cmd, self.env, RUN_TIMEOUT)
        sample: dict = {"variant": variant, "ok": False, "wall_s": round(time.monotonic() - t0, 3)}
        line = next((x for x in reversed(out.splitlines()) if x.startswith("{")), None)
        if rc != 0 or line is None:
            sample["error"] = f"exit {rc}: " + " | ".join((err or out).strip().splitlines()[-3:])
            return sample
        res = json.loads(line)
        wtime = float(res["time_s"]["write"])
        sample.update(ok=True, bytes=int(res["bytes_written"]), file_bytes=int(res["file_bytes"]),
                      write_s=wtime, mib_s=res["bytes_written"] / wtime / MIB if wtime > 0 else None,
                      hints=res.get("hints"))
        if verbose_fcoll:
            picked = sorted(set(re.findall(r"component (\w+) selected", err)))
            sample["fcoll"] = ",".join(picked) or "?"
        if engine:
            self.engine_counters(cfg, variant, sample)
        return sample

    def engine_counters(self, cfg: Config, variant: str, sample: dict) -> None:
        """Read the run's pario log: the engine must have served every collective write."""
        from pario.log import read_log  # imported late: the baselines need none of it

        try:
            records = read_log(self.log).layer("mpiio")
            rec = records[records["name"] == str(cfg.path)].row(0)
        except Exception as exc:  # noqa: BLE001 - any unreadable log makes the sample invalid
            sample.update(ok=False, error=f"no engine record in the pario log: {exc}")
            return
        eng = {k: (float(rec[k]) if k.endswith("_time") else int(rec[k])) for k in (
            "engine_writes", "engine_fallbacks", "engine_algorithm", "engine_shuffle", "engine_cycles",
            "engine_aggregators", "engine_setup_time", "engine_shuffle_time", "engine_write_time",
            "engine_wait_time", "engine_auto_kept_one", "engine_auto_kept_many",
            "coll_writes", "nranks")}
        sample["engine"] = eng
        if variant == "ompio+pario":
            if eng["engine_writes"] != 0:
                sample.update(ok=False, error=f"engine off, yet {eng['engine_writes']} writes served")
            return
        algo, _, shuffle = (cfg.auto_start[0] if variant == "auto-start" else variant).partition(":")
        ran = (f"{ALGORITHM_CODES.get(eng['engine_algorithm'], '?')}:"
               f"{SHUFFLE_CODES.get(eng['engine_shuffle'], '?')}")
        if eng["engine_writes"] <= 0 or eng["engine_fallbacks"] != 0:
            sample.update(ok=False, error=f"engine served {eng['engine_writes']} writes, "
                                          f"{eng['engine_fallbacks']} fallbacks")
        elif algo != "auto" and ran != f"{algo}:{shuffle}":
            sample.update(ok=False, error=f"asked for {variant}, the log says {ran}")
        if self.engine_check is None and sample["ok"]:
            self.engine_check = {"config": cfg.label, "variant": variant, **eng}

    def pwrite(self, cfg: Config) -> dict:
        """Single-stream sequential pwrite of the configuration's file size: the practical limit."""
        block = self.args.cb_buffer_size
        nbytes = cfg.file_bytes
        buf = memoryview(os.urandom(block))
        path = cfg.path
        path.unlink(missing_ok=True)
        os.sync()
        fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        try:
            t0 = time.perf_counter()
            off = 0
            while off < nbytes:
                chunk = buf[:min(block, nbytes - off)]
                done = 0
                while done < len(chunk):
                    done += os.pwrite(fd, chunk[done:], off + done)
                off += len(chunk)
            secs = time.perf_counter() - t0
        finally:
            os.close(fd)
        return {"variant": "pwrite", "ok": True, "bytes": nbytes, "write_s": secs,
                "mib_s": nbytes / secs / MIB}

    def run(self, cfg: Config, variant: str, **kw) -> dict:
        return self.pwrite(cfg) if variant == "pwrite" else self.mpirun(cfg, variant, **kw)


def run_group(cmd: list[str], env: dict[str, str], timeout: float) -> tuple[int, str, str]:
    """Run ``cmd`` in its own process group; on timeout kill the whole group (mpirun and ranks)."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return -1, out, f"timed out after {timeout:.0f} s\n{err}"
    return proc.returncode, out, err


# -- file systems ------------------------------------------------------------------------------
def fs_type(path: Path) -> str:
    """Type of the file system holding ``path``, from /proc/mounts (longest mount point)."""
    best, kind = "", "?"
    real = str(path.resolve())
    with open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            mnt = parts[1].replace("\\040", " ")
            if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                best, kind = mnt, parts[2]
    return kind


def df_line(path: Path) -> str:
    out = subprocess.run(["df", "-hT", str(path)], capture_output=True, text=True).stdout.splitlines()
    return out[-1] if out else "?"


# -- statistics and tables -------------------------------------------------------------------
def median_of(samples: list[dict], key: str = "mib_s") -> float | None:
    vals = [s[key] for s in samples if s.get("ok") and s.get(key) is not None]
    return statistics.median(vals) if vals else None


def fmt(x: float | None, digits: int = 0) -> str:
    return "fail" if x is None else f"{x:.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    return "–" if a is None or not b else f"{a / b:.2f}"


def paired_ratio(cfg: Config, variant: str, base: str) -> float | None:
    """Median over the repetitions of variant / base within the same repetition."""
    by_rep = {x["rep"]: x["mib_s"] for x in cfg.samples.get(base, []) if x.get("ok")}
    vals = [x["mib_s"] / by_rep[x["rep"]] for x in cfg.samples.get(variant, [])
            if x.get("ok") and by_rep.get(x["rep"])]
    return statistics.median(vals) if vals else None


def auto_start_of(sample: dict) -> tuple[str, int] | None:
    """auto's first call of a run as a fixed variant: the variant it kept for its one class of
    calls (a file written once per class keeps what it ran) and its aggregators; None when it wrote
    directly, or kept a variant for both classes (two starting variants, no one fixed run)."""
    eng = sample.get("engine")
    if not sample.get("ok") or not eng:
        return None
    one, many = eng["engine_auto_kept_one"], eng["engine_auto_kept_many"]
    if (one and many) or not (one or many):
        return None
    code = one or many
    return f"{ALGORITHM_CODES[code // 10]}:{SHUFFLE_CODES[code % 10]}", eng["engine_aggregators"]


def engine_variants(cfg: Config) -> list[str]:
    return [v for v in cfg.samples if v not in ("romio", "ompio", "ompio+pario", "pwrite", "auto-start")]


def best_engine(cfg: Config) -> tuple[str | None, float | None]:
    meds = {v: median_of(cfg.samples[v]) for v in engine_variants(cfg)}
    meds = {v: m for v, m in meds.items() if m is not None}
    if not meds:
        return None, None
    v = max(meds, key=meds.__getitem__)
    return v, meds[v]


def short(variant: str) -> str:
    return variant[:-4] if variant.endswith(":p2p") else variant


def engine_variant(name: str) -> str:
    """The variant an --algorithms entry names: ALGO runs with p2p, ALGO:SHUFFLE as given, and
    auto as itself (it chooses its shuffles)."""
    return name if name == "auto" or ":" in name else f"{name}:p2p"


def derived_rma(cfg: Config, variant: str) -> bool:
    """Whether ``variant`` is one of the configuration's rma algorithm's two runs."""
    return bool(cfg.rma_algorithm) and variant in (f"{cfg.rma_algorithm}:rma-fence",
                                                    f"{cfg.rma_algorithm}:rma-lock")


def tables(configs: list[Config], args: argparse.Namespace) -> str:
    out = []
    algos = [engine_variant(a) for a in args.algorithms]
    out.append("**Bandwidth**, MiB/s, median of the repetitions (`bytes_written / time_s.write`). "
               "`rma` = the rma algorithm (the pilot round's best p2p algorithm unless given).\n")
    control = ["OMPIO under libpario"] if args.control else []
    head = ["fs", "kernel", "ranks", "MiB", "ROMIO", "OMPIO (fcoll)", *control, *[short(a) for a in algos],
            "rma-fence", "rma-lock", "rma", "pwrite limit"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for c in configs:
        s = c.samples
        rma = [v for v in s if derived_rma(c, v) and v not in algos]
        fence = next((v for v in rma if v.endswith("rma-fence")), None)
        lock = next((v for v in rma if v.endswith("rma-lock")), None)
        row = [c.fs, c.kernel, str(c.ranks), f"{c.file_bytes / MIB:.1f}", fmt(median_of(s["romio"])),
               f"{fmt(median_of(s['ompio']))} ({c.fcoll})",
               *([fmt(median_of(s["ompio+pario"]))] if args.control else []),
               *[fmt(median_of(s[a])) if a in s else "–" for a in algos],
               fmt(median_of(s[fence])) if fence else "–", fmt(median_of(s[lock])) if lock else "–",
               c.rma_algorithm or "–", fmt(median_of(s["pwrite"]))]
        out.append("| " + " | ".join(row) + " |")

    out.append("\n**Best engine variant against the MPI library and the limit** (ratios of medians, "
               "and in brackets the median of the ratios within each repetition; "
               "targets: non-contiguous kernels ≥ 1.3× ROMIO and ≥ 1.15× OMPIO, "
               "large contiguous requests (block) ≥ 70% of the pwrite limit).\n")
    head = ["fs", "kernel", "ranks", "best engine", "MiB/s", "/ ROMIO", "/ OMPIO", "/ limit", "target"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for c in configs:
        v, bw = best_engine(c)
        romio, ompio, limit = (median_of(c.samples[k]) for k in ("romio", "ompio", "pwrite"))
        pr = {k: paired_ratio(c, v, k) if v else None for k in ("romio", "ompio", "pwrite")}
        out.append("| " + " | ".join([c.fs, c.kernel, str(c.ranks), short(v) if v else "–", fmt(bw),
                                      f"{ratio(bw, romio)} ({fmt(pr['romio'], 2)})",
                                      f"{ratio(bw, ompio)} ({fmt(pr['ompio'], 2)})",
                                      f"{ratio(bw, limit)} ({fmt(pr['pwrite'], 2)})",
                                      target_verdict(c.kernel, bw, romio, ompio, limit)]) + " |")

    if any("auto" in c.samples for c in configs):
        out.append(first_call_table(configs))

    out.append("\n**Engine phases**, from the pario log of each run: seconds summed over the ranks, "
               "medians, as setup / shuffle / write / wait (setup = views flattened, extents and "
               "requests exchanged, buffers; shuffle = posting the pieces and waiting for the peers; "
               "write = the aggregators' pread+pwrite; wait = callers waiting on writer threads), and "
               "in brackets the buffer cycles. `in phases` = the four times per rank over the call "
               "time (`time_s.write`), median over every engine sample of the configuration.\n")
    variants = [*algos, "rma-fence", "rma-lock"]
    head = ["fs", "kernel", "ranks", "in phases", *[short(v) for v in variants]]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for c in configs:
        cells, share = [], []
        for v in variants:
            name = v if v in algos else next((x for x in c.samples if derived_rma(c, x)
                                              and x.endswith(":" + v)), "")
            good = [x for x in c.samples.get(name, []) if x.get("ok") and "engine" in x]
            if not good:
                cells.append("–")
                continue
            med = {k: statistics.median(x["engine"].get(f"engine_{k}_time", 0.0) for x in good)
                   for k in PHASES}
            cycles = int(statistics.median(x["engine"]["engine_cycles"] for x in good))
            cells.append(" / ".join(f"{med[k]:.2f}" for k in PHASES) + f" ({cycles})")
            share += [sum(x["engine"].get(f"engine_{k}_time", 0.0) for k in PHASES)
                      / x["engine"]["nranks"] / x["write_s"] for x in good if x["write_s"] > 0]
        in_phases = f"{statistics.median(share):.2f}" if share else "–"
        out.append("| " + " | ".join([c.fs, c.kernel, str(c.ranks), in_phases, *cells]) + " |")

    out.append("\n**Each variant over all configurations**: geometric mean of its median over ROMIO's "
               "and over OMPIO's, and the configurations where it is the fastest engine variant.\n")
    out.append("| variant | configurations | × ROMIO | × OMPIO | fastest engine variant in |")
    out.append("|---|---|---|---|---|")
    rows: dict[str, list[tuple[float, float]]] = {}
    wins: dict[str, int] = {}
    for c in configs:
        romio, ompio = median_of(c.samples["romio"]), median_of(c.samples["ompio"])
        for v in c.samples:
            if v in ("romio", "ompio", "pwrite"):
                continue
            key = v.split(":")[1] if derived_rma(c, v) and v not in algos else v
            m = median_of(c.samples[v])
            if m and romio and ompio:
                rows.setdefault(key, []).append((m / romio, m / ompio))
        best, _ = best_engine(c)
        if best:
            key = best.split(":")[1] if derived_rma(c, best) and best not in algos else best
            wins[key] = wins.get(key, 0) + 1
    for key, rs in rows.items():
        gr = math.exp(statistics.fmean(math.log(a) for a, _ in rs))
        go = math.exp(statistics.fmean(math.log(b) for _, b in rs))
        label = "OMPIO under libpario (engine off)" if key == "ompio+pario" else short(key)
        won = "–" if key == "ompio+pario" else str(wins.get(key, 0))
        out.append(f"| {label} | {len(rs)} | {gr:.2f} | {go:.2f} | {won} |")
    return "\n".join(out) + "\n"


def first_call_table(configs: list[Config]) -> str:
    """auto against the variant it starts with (``auto-start``: the same variant and aggregators,
    fixed), ROMIO and OMPIO, as medians of the ratios within each repetition; target: auto at least
    0.95 of each (issue 45: a first call costs nothing beyond its static choice)."""
    out = ["\n**auto's first call** against the variant it starts with (`auto-start`: that variant and "
           "auto's aggregators, fixed), ROMIO and OMPIO: bandwidth ratios, median of the ratios within "
           "each repetition; target ≥ 0.95 of each.\n",
           "| fs | kernel | ranks | auto ran | auto / auto-start | auto / ROMIO | auto / OMPIO | target |",
           "|---|---|---|---|---|---|---|---|"]
    for c in configs:
        if "auto" not in c.samples:
            continue
        ran = (f"{c.auto_start[0]}, {c.auto_start[1]} aggregators" if c.auto_start
               else "direct, or one variant per class")
        ratios = [paired_ratio(c, "auto", base) if base in c.samples else None
                  for base in ("auto-start", "romio", "ompio")]
        judged = [r for r in ratios if r is not None]
        verdict = "no data" if len(judged) < 2 else "met" if min(judged) >= 0.95 else "not met"
        cells = [fmt(r, 2) if r else "–" for r in ratios]
        out.append("| " + " | ".join([c.fs, c.kernel, str(c.ranks), ran, *cells, verdict]) + " |")
    return "\n".join(out)


def target_verdict(kernel: str, bw, romio, ompio, limit) -> str:
    if bw is None:
        return "no data"
    if kernel in NONCONTIGUOUS:
        ok = romio and ompio and bw / romio >= 1.3 and bw / ompio >= 1.15
        return "met" if ok else "not met"
    if kernel in CONTIGUOUS:
        return "met" if limit and bw / limit >= 0.7 else "not met"
    return "–"


# -- driver ----------------------------------------------------------------------------------
def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="a ~3 minute check: 8 ranks (9 for bt), 3 repetitions, 16 MiB files, "
                        "/dev/shm only (unless --dir is given)")
    p.add_argument("--ranks", type=lambda s: [int(x) for x in csv(s)], default=None,
                   help="rank counts, comma separated (default 4,8,16; bt uses the nearest squares)")
    p.add_argument("--kernels", type=csv, default=None,
                   help=f"default {','.join(KERNELS)}; also {','.join(EXTRA_KERNELS)}")
    p.add_argument("--algorithms", type=csv, default=list(ALGORITHMS),
                   help="engine variants: ALGO (run with the p2p shuffle), ALGO:SHUFFLE, or auto")
    p.add_argument("--rma-algorithm", default="best",
                   help="algorithm run with rma-fence and rma-lock: 'best' (the pilot's best p2p "
                        "algorithm, per configuration), an algorithm name, or 'off'")
    p.add_argument("--control", action="store_true",
                   help="also run 'ompio+pario': libpario preloaded with the engine off (PARIO_COLL=mpi), "
                        "to show what the profiler alone changes")
    p.add_argument("--reps", type=int, default=None, help="timed repetitions (default 5; 3 with --quick)")
    p.add_argument("--dir", action="append", type=Path, default=None,
                   help="directory to write in (repeatable); default a new directory under /tmp "
                        "(the local disk) and one under /dev/shm")
    p.add_argument("--size", type=parse_size, default=None,
                   help="bytes each kernel writes, about (default 32m; 16m with --quick)")
    p.add_argument("--cb-buffer-size", type=parse_size, default=MIB,
                   help="cb_buffer_size hint for every variant (default 1m)")
    p.add_argument("--cb-nodes", type=int, default=0,
                   help="cb_nodes hint for every variant (OMPIO: io_ompio_num_aggregators); default none "
                        "(one aggregator per node)")
    p.add_argument("--auto-start", action="store_true",
                   help="also run auto's first call as a fixed variant ('auto-start': the variant and "
                        "aggregator count the pilot's auto run chose), and compare auto with it, "
                        "ROMIO and OMPIO within each repetition (adds auto to --algorithms)")
    p.add_argument("--out", type=Path, default=None,
                   help="write the Markdown tables here and every sample to the same path with .json")
    p.add_argument("--from-json", type=Path, default=None,
                   help="no run: print (and with --out, write) the tables of a JSON written by --out")
    args = p.parse_args()
    if args.from_json:
        return from_json(args.from_json, args)

    args.ranks = args.ranks or ([8] if args.quick else [4, 8, 16])
    args.kernels = args.kernels or list(KERNELS)
    args.reps = args.reps or (3 if args.quick else 5)
    args.size = args.size or (16 * MIB if args.quick else 32 * MIB)
    if args.auto_start and "auto" not in args.algorithms:
        args.algorithms.append("auto")
    for a in args.algorithms:
        algo, _, shuffle = a.partition(":")
        if algo not in (*ALGORITHMS, "auto") or shuffle not in ("", *SHUFFLE_CODES.values()):
            p.error(f"unknown engine variant {a!r}")
    if args.rma_algorithm not in ("best", "off", *ALGORITHMS, "auto"):
        p.error(f"--rma-algorithm: unknown algorithm {args.rma_algorithm!r}")

    made: list[Path] = []
    dirs = args.dir
    if not dirs:
        dirs = []
        for base in (("/dev/shm",) if args.quick else ("/tmp", "/dev/shm")):
            d = Path(tempfile.mkdtemp(prefix="pario-bench-coll-", dir=base))
            made.append(d)
            dirs.append(d)
    work = Path(tempfile.mkdtemp(prefix="pario-bench-coll-logs-"))
    made.append(work)
    bench = Bench(args, work)

    configs: list[Config] = []
    fs_info = []
    for i, d in enumerate(dirs):
        d.mkdir(parents=True, exist_ok=True)
        kind = fs_type(d)
        fs_info.append({"dir": str(d), "type": kind, "df": df_line(d)})
        if (str(d.resolve()) + "/").startswith(RUNTIME_EXCLUDES):
            link = work / f"dir{i}"
            link.symlink_to(d.resolve())
            fs_info[-1]["through"] = str(link)
            d = link
        for kernel in args.kernels:
            seen = set()
            for n in args.ranks:
                program, ranks, kargs = kernel_command(kernel, n, args.size)
                if ranks in seen:
                    continue
                seen.add(ranks)
                configs.append(Config(kind, d, kernel, ranks, program, kargs))

    load_start = os.getloadavg()
    started = time.time()
    say(f"{len(configs)} configurations, {args.reps} repetitions; load {load_start[0]:.2f}")
    for d in fs_info:
        say(f"  {d['dir']}: {d['df']}")

    fixed = [engine_variant(a) for a in args.algorithms]
    p2p = [v for v in fixed if v.endswith(":p2p")]
    try:
        # Pilot: warm every configuration, record OMPIO's fcoll, the file size and the rma algorithm.
        for cfg in configs:
            pilot = {}
            for v in ["romio", "ompio", *(p2p if args.rma_algorithm == "best" else []),
                      *(["auto"] if args.auto_start else [])]:
                s = bench.run(cfg, v, verbose_fcoll=(v == "ompio"))
                if not s["ok"]:
                    say(f"  pilot {cfg.label} {v}: {s['error']}")
                    continue
                pilot[v] = s["mib_s"]
                cfg.file_bytes = cfg.file_bytes or s["file_bytes"]
                if v == "ompio":
                    cfg.fcoll = s.get("fcoll", "?")
                if v == "auto":
                    cfg.auto_start = auto_start_of(s)
            cfg.pilot = {k: round(x, 1) for k, x in pilot.items()}
            engine_pilot = {v: x for v, x in pilot.items() if v in p2p}
            if args.rma_algorithm == "best":
                cfg.rma_algorithm = (max(engine_pilot, key=engine_pilot.__getitem__).split(":")[0]
                                     if engine_pilot else "")
            elif args.rma_algorithm != "off":
                cfg.rma_algorithm = args.rma_algorithm
            rma = [f"{cfg.rma_algorithm}:{s}" for s in ("rma-fence", "rma-lock")] if cfg.rma_algorithm else []
            rma = [v for v in rma if v not in fixed]
            control = ["ompio+pario"] if args.control else []
            start = ["auto-start"] if cfg.auto_start else []
            cfg.samples = {v: [] for v in ["romio", "ompio", *control, *fixed, *start, *rma, "pwrite"]}
            say(f"pilot {cfg.label}: fcoll {cfg.fcoll}, rma with {cfg.rma_algorithm or '-'}, "
                f"{cfg.file_bytes / MIB:.1f} MiB"
                + (f", auto starts with {cfg.auto_start[0]} on {cfg.auto_start[1]} aggregators"
                   if cfg.auto_start else ""))
            if not cfg.file_bytes:
                say(f"  {cfg.label}: no variant ran; skipped")
        configs = [c for c in configs if c.file_bytes]

        for rep in range(args.reps):
            for cfg in configs:
                variants = list(cfg.samples)
                k = rep % len(variants)
                order = variants[k:] + variants[:k]
                line = []
                for v in order:
                    s = bench.run(cfg, v)
                    s["rep"] = rep
                    cfg.samples[v].append(s)
                    line.append(f"{short(v)} {fmt(s.get('mib_s'))}" if s["ok"] else f"{short(v)} FAIL")
                    if not s["ok"]:
                        say(f"  {cfg.label} {v}: {s['error']}")
                say(f"rep {rep + 1}/{args.reps} {cfg.label}: " + ", ".join(line))
            if args.out:  # what a run cut short still leaves
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.with_suffix(".partial.json").write_text(json.dumps(
                    {"reps_done": rep + 1, "configs": [{"fs": c.fs, "kernel": c.kernel, "ranks": c.ranks,
                                                        "samples": c.samples} for c in configs]}))
    finally:
        for c in configs:
            c.path.unlink(missing_ok=True)
        for d in made:
            shutil.rmtree(d, ignore_errors=True)

    data = {
        "command": sys.argv, "git": git_state(), "started": started, "minutes": (time.time() - started) / 60,
        "load_start": load_start, "load_end": os.getloadavg(), "cores": os.cpu_count(),
        "filesystems": fs_info, "cb_buffer_size": args.cb_buffer_size,
        "cb_nodes": args.cb_nodes, "size": args.size, "reps": args.reps,
        "engine_check": bench.engine_check,
        "configs": [{"fs": c.fs, "dir": str(c.dir), "kernel": c.kernel, "ranks": c.ranks,
                     "program": c.program, "args": c.args, "file_bytes": c.file_bytes,
                     "ompio_fcoll": c.fcoll, "rma_algorithm": c.rma_algorithm, "pilot_mib_s": c.pilot,
                     "auto_start": c.auto_start,
                     "medians_mib_s": {v: median_of(ss) for v, ss in c.samples.items()},
                     "samples": c.samples} for c in configs],
    }
    report, failed = render(data, configs, args)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
        args.out.with_suffix(".json").write_text(json.dumps(data, indent=1))
        say(f"wrote {args.out} and {args.out.with_suffix('.json')}")
    return 1 if failed else 0


def render(data: dict, configs: list[Config], args: argparse.Namespace) -> tuple[str, int]:
    """The report: conditions of the run, then the tables; and the number of failed samples."""
    check = data["engine_check"]
    notes = [
        f"Run of {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(data['started']))}, "
        f"{data['minutes']:.1f} min; load average {data['load_start'][0]:.2f} at the start, "
        f"{data['load_end'][0]:.2f} at the end; {data.get('cores')} cores; checkout {data.get('git')}.",
        f"{data['reps']} interleaved repetitions after one pilot round; cb_buffer_size "
        f"{data['cb_buffer_size']} for every variant"
        + (f", cb_nodes {data['cb_nodes']}" if data.get("cb_nodes") else "")
        + f"; kernels of about {data['size'] / MIB:.0f} MiB.",
        *[f"`{d['dir']}`: {d['type']} (`df -hT`: {d['df']})"
          + (f", written through the symlink `{d['through']}`: libpario records no file under "
             f"/{d['dir'].split('/')[1]}/" if "through" in d else "") for d in data["filesystems"]],
    ]
    if check:
        notes.append(f"Engine check ({check['config']}, {check['variant']}): engine_writes "
                     f"{check['engine_writes']}, engine_fallbacks {check['engine_fallbacks']}, "
                     f"cycles {check['engine_cycles']}, aggregators {check['engine_aggregators']} "
                     "(every engine sample is checked the same way; a failed check is a failed sample).")
    failed = sum(1 for c in configs for ss in c.samples.values() for s in ss if not s["ok"])
    notes.append(f"Failed samples: {failed}.")
    return "\n".join(f"- {n}" for n in notes) + "\n\n" + tables(configs, args), failed


def from_json(path: Path, args: argparse.Namespace) -> int:
    """Render the tables again from a JSON written by --out (no run)."""
    data = json.loads(path.read_text())
    configs = []
    for c in data["configs"]:
        cfg = Config(c["fs"], Path(c["dir"]), c["kernel"], c["ranks"], c["program"], c["args"],
                     c["file_bytes"], c["ompio_fcoll"], c["rma_algorithm"], c["pilot_mib_s"],
                     tuple(c["auto_start"]) if c.get("auto_start") else None, c["samples"])
        configs.append(cfg)
    variants = [v for c in configs for v in c.samples]
    args.algorithms = list(dict.fromkeys(
        short(v) for c in configs for v in c.samples
        if v not in ("romio", "ompio", "ompio+pario", "pwrite", "auto-start") and not derived_rma(c, v)))
    args.control = "ompio+pario" in variants
    report, failed = render(data, configs, args)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
    return 1 if failed else 0


def git_state() -> str | None:
    """HEAD of the checkout this script lies in, and whether src/ has uncommitted changes
    (the installed package is whatever was last installed; this is a hint, not a proof)."""
    here = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "src"], capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + (" (src/ modified)" if dirty else "")


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
