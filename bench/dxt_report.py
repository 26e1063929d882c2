"""How fast is `pario report` on a Darshan log with a large DXT trace?  (docs/performance.md, "DXT traces")

Builds (once) a Darshan log whose DXT_POSIX module holds 1 000 000 segments, written through
libdarshan-util by pario's Darshan writer: 64 ranks write a shared 30.5 GiB file in 64 KiB pieces,
interleaved (rank r's i-th piece at (64 i + r) x 64 KiB), 7 813 writes each, in 20 steps, then read
it back the same way (7 812 reads each), over a 40 s run.  Then times:

* A = ``pario report LOG --html OUT`` in a fresh process (median of ``--reps``), and the size
  of OUT;
* the phases in this process: reading the log (validation, the library in a forked child, the
  trace), the analysis (with the diagnosis and its trace rules), and rendering the HTML;
* B = PyDarshan loading the same log, DXT included (``DarshanReport(LOG, read_all=True)``, a
  fresh process), for scale;
* with ``--drishti CMD`` / ``--dxt-explorer CMD``, those tools on the same log (a fresh process
  each; CMD is their command, e.g. a separate venv's ``bin/drishti``).

Usage: .venv/bin/python bench/dxt_report.py [--log PATH] [--segments N] [--nprocs 64] [--reps 5]
       [--drishti CMD] [--dxt-explorer CMD]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NPROCS = 64
PIECE = 64 * 1024
FILE = "/scratch/bench/field.dat"
FILE_ID = 0x5EED00D5EED00D01
RUNTIME = 40.0


def build(path: Path, segments: int, nprocs: int = 64) -> None:
    """The log: ``segments`` DXT_POSIX segments (half writes, half reads) of ``nprocs`` ranks and
    their POSIX counters."""
    global NPROCS
    NPROCS = nprocs
    from pario.log.darshan_lib import SEGMENT_DTYPE, DxtSegments, counter_names
    from pario.log.darshan_writer import DarshanJob, DarshanLog, ModuleRecords, write_darshan_log

    rng = np.random.default_rng(7)
    writes = segments // 2 // NPROCS + (1 if segments // 2 % NPROCS else 0)
    reads = (segments - writes * NPROCS) // NPROCS
    extra = segments - NPROCS * (writes + reads)  # the first ranks read one more
    segs, nw, nr = [], [], []
    for r in range(NPROCS):
        n_r = reads + (1 if r < extra else 0)
        parts = []
        for count, t0, span in ((writes, 2.0, 16.0), (n_r, 22.0, 16.0)):
            i = np.arange(count)
            step = i * 20 // max(count, 1)  # 20 steps, 0.2 s of other work between them
            start = t0 + i * (span - 20 * 0.2) / max(count, 1) + step * 0.2 + rng.uniform(0, 2e-5, count)
            dur = rng.gamma(4.0, 2.5e-5, count)  # about 100 us per 64 KiB
            seg = np.zeros(count, dtype=SEGMENT_DTYPE)
            seg["offset"] = (i * NPROCS + r) * PIECE
            seg["length"] = PIECE
            seg["start"] = start
            seg["end"] = start + dur
            parts.append(seg)
        segs += parts
        nw.append(writes)
        nr.append(n_r)
    dxt = DxtSegments(np.full(NPROCS, FILE_ID, np.uint64), np.arange(NPROCS, dtype=np.int64),
                      tuple(f"nid{r // 16:05d}" for r in range(NPROCS)), np.array(nw, np.int64),
                      np.array(nr, np.int64), np.concatenate(segs))
    names, fnames = counter_names("POSIX"), counter_names("POSIX", floating=True)
    counters = np.zeros((NPROCS, len(names)), np.int64)
    fcounters = np.zeros((NPROCS, len(fnames)), np.float64)
    first = np.cumsum([0, *(w + r for w, r in zip(nw, nr, strict=True))])
    for r in range(NPROCS):
        s = dxt.segments[first[r]:first[r + 1]]
        w, rd = s[:nw[r]], s[nw[r]:]
        c = dict.fromkeys(names, 0)
        c.update(POSIX_OPENS=1, POSIX_WRITES=len(w), POSIX_READS=len(rd),
                 POSIX_BYTES_WRITTEN=int(w["length"].sum()), POSIX_BYTES_READ=int(rd["length"].sum()),
                 POSIX_MAX_BYTE_WRITTEN=int((w["offset"] + w["length"]).max()) - 1,
                 POSIX_MAX_BYTE_READ=int((rd["offset"] + rd["length"]).max()) - 1,
                 POSIX_SIZE_WRITE_10K_100K=len(w), POSIX_SIZE_READ_10K_100K=len(rd),
                 POSIX_ACCESS1_ACCESS=PIECE, POSIX_ACCESS1_COUNT=len(w) + len(rd),
                 POSIX_FILE_ALIGNMENT=4096, POSIX_MEM_ALIGNMENT=8,
                 POSIX_SEQ_WRITES=len(w) - 1, POSIX_SEQ_READS=len(rd) - 1)
        counters[r] = [c[n] for n in names]
        f = dict.fromkeys(fnames, 0.0)
        f.update(POSIX_F_WRITE_TIME=float((w["end"] - w["start"]).sum()),
                 POSIX_F_READ_TIME=float((rd["end"] - rd["start"]).sum()),
                 POSIX_F_OPEN_START_TIMESTAMP=1.9, POSIX_F_OPEN_END_TIMESTAMP=1.91,
                 POSIX_F_WRITE_START_TIMESTAMP=float(w["start"].min()),
                 POSIX_F_WRITE_END_TIMESTAMP=float(w["end"].max()),
                 POSIX_F_READ_START_TIMESTAMP=float(rd["start"].min()),
                 POSIX_F_READ_END_TIMESTAMP=float(rd["end"].max()),
                 POSIX_F_CLOSE_START_TIMESTAMP=39.0, POSIX_F_CLOSE_END_TIMESTAMP=39.01)
        fcounters[r] = [f[n] for n in fnames]
    posix = ModuleRecords("POSIX", np.full(NPROCS, FILE_ID, np.uint64), np.arange(NPROCS, dtype=np.int64),
                          counters, fcounters)
    start = 1_700_000_000
    job = DarshanJob(uid=1000, start_time_sec=start, start_time_nsec=0, end_time_sec=start + int(RUNTIME),
                     end_time_nsec=0, nprocs=NPROCS, jobid=4242, metadata="")
    content = DarshanLog(job=job, exe="./field_io --steps 20", mounts=(("/scratch", "lustre"), ("/", "ext4")),
                         names={FILE_ID: FILE}, modules=(posix,), lustre=(), partial_modules=())
    write_darshan_log(dataclasses.replace(content, dxt={"DXT_POSIX": dxt}), path)


#: CPU seconds (user + system) of each fresh process run by :func:`fresh`, children included:
#: on a shared machine the wall time follows the load, the CPU time much less
CPU: dict[str, list[float]] = {}


def fresh(argv: list[str], env: dict[str, str] | None = None, label: str = "") -> float:
    """Wall seconds of ``argv`` in a fresh process (its CPU seconds go to CPU[label])."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault(label, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(argv)}\n{proc.stderr[-2000:]}")
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", type=Path, default=Path(tempfile.gettempdir()) / "pario-dxt-1e6.darshan")
    ap.add_argument("--segments", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--nprocs", type=int, default=NPROCS, help="ranks of the built log (default 64)")
    ap.add_argument("--drishti", help="command running Drishti (e.g. /path/venv/bin/drishti)")
    ap.add_argument("--dxt-explorer", help="command running DXT Explorer (e.g. /path/venv/bin/dxt-explorer)")
    args = ap.parse_args()

    if not args.log.exists():
        t = time.perf_counter()
        build(args.log, args.segments, args.nprocs)
        took = time.perf_counter() - t
        print(f"built {args.log} ({args.log.stat().st_size / 2**20:.1f} MiB) in {took:.1f} s")
    from pario.diagnosis import analyze
    from pario.log import read_log
    from pario.report.html import render_html

    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.html"
        a = [fresh([sys.executable, "-m", "pario", "report", str(args.log), "--html", str(out)], env, "A")
             for _ in range(args.reps)]
        size = out.stat().st_size
    t0 = time.perf_counter()
    profile = read_log(args.log)
    t1 = time.perf_counter()
    run = analyze(profile)
    t2 = time.perf_counter()
    html = render_html([run], traces=[profile.trace])
    t3 = time.perf_counter()
    trace = profile.trace
    assert trace is not None
    nseg = trace.nevents + sum(len(r.events) for r in trace.inner)
    print(f"log: {args.log.stat().st_size / 2**20:.1f} MiB, {nseg:,} DXT segments, {trace.nprocs} ranks")
    print(f"A  pario report --html (fresh process), median of {args.reps}: {statistics.median(a):.2f} s "
          f"(min {min(a):.2f}, max {max(a):.2f}), CPU {statistics.median(CPU['A']):.2f} s; "
          f"HTML {size / 2**20:.1f} MiB")
    print(f"   in process: read {t1 - t0:.2f} s, analyse {t2 - t1:.2f} s, render {t3 - t2:.2f} s "
          f"(HTML {len(html.encode()) / 2**20:.1f} MiB); "
          f"findings: {', '.join(f.id for f in run.findings)}")
    load = "import darshan, sys; darshan.DarshanReport(sys.argv[1], read_all=True)"
    b = [fresh([sys.executable, "-c", load, str(args.log)], label="B") for _ in range(max(1, args.reps // 2))]
    print(f"B  PyDarshan DarshanReport(read_all=True) (fresh process): {statistics.median(b):.2f} s, "
          f"CPU {statistics.median(CPU['B']):.2f} s")
    for name, cmd in (("Drishti", args.drishti), ("DXT Explorer", args.dxt_explorer)):
        if not cmd:
            continue
        argv = cmd.split()
        # both run helpers of their own by name (DXT Explorer: python3 on its plot scripts): their
        # venv's bin first on PATH
        tool_env = dict(env, PATH=f"{Path(argv[0]).parent}{os.pathsep}{env.get('PATH', '')}")
        with tempfile.TemporaryDirectory() as tmp:
            if name == "Drishti":  # --backtrace: its DXT insights
                argv += ["--backtrace", "--html", "--export_dir", tmp, str(args.log)]
            else:  # the operation timeline of each file, written in the working directory
                argv += [str(args.log)]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(argv, cwd=tmp, env=tool_env, capture_output=True, text=True)
            elapsed = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            html_bytes = sum(p.stat().st_size for p in Path(tmp).rglob("*.html"))
        state = "" if proc.returncode == 0 else f" (exit {proc.returncode})"
        print(f"   {name}: {elapsed:.2f} s{state}, CPU {cpu:.2f} s, HTML {html_bytes / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
