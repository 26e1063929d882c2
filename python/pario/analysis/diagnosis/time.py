"""Time rules: the run is I/O-bound (with how its I/O time splits between reads, writes and metadata)."""

from __future__ import annotations

from collections.abc import Iterator

import pario.analysis.diagnosis._fmt as fmt
from pario.analysis.diagnosis.commands import autotune, tune_command
from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.diagnosis.facts import Facts, counter, mpiio_files
from pario.analysis.diagnosis.findings import Finding, Metric, Recommendation
from pario.analysis.diagnosis.layout import Layout, layout_of
from pario.analysis.diagnosis.registry import RULES, finding, rule
from pario.analysis.pop import pop_metrics
from pario.analysis.rankio import time_records
from pario.model import LIBRARY_LAYERS

FAMILY = "time"


@rule(
    "TIME-IO-BOUND",
    title="The run is I/O-bound",
    family=FAMILY,
    config=("io_bound_max_efficiency", "io_bound_min_share"),
    after_others=True,
)
def io_bound(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """I/O takes a large share of the run (POP I/O efficiency below the rule of thumb)."""
    t = facts.times
    T = facts.runtime
    if T <= 0 or t.nranks == 0:
        return
    mean_io = float(t.io.mean())
    share = mean_io / T
    if share < cfg.io_bound_min_share:
        return
    pop = pop_metrics(t)
    ioe = pop.io_efficiency.value
    if ioe is not None and ioe >= cfg.io_bound_max_efficiency:
        return
    kinds = {k: float(t.io_of(k).mean()) for k in ("read", "write", "meta")}
    # the bytes at the outermost layer, as the report's I/O table: an I/O library's datasets and
    # variables (the bytes asked) instead of the MPI-IO and POSIX records beneath them
    libraries = {k: facts.profile.layer(k) for k in LIBRARY_LAYERS}
    outer = list(time_records({**facts.files, **libraries}).values())
    b_read = sum(float(counter(f, "bytes_read").sum()) for f in outer)
    b_write = sum(float(counter(f, "bytes_written").sum()) for f in outer)
    nbytes = b_read + b_write
    io_max = float(t.io.max())
    main = max(kinds, key=lambda k: kinds[k])
    rates = {
        k: (b / float(t.io_of(k).sum()) if b > 0 and float(t.io_of(k).sum()) > 0 else None)
        for k, b in (("read", b_read), ("write", b_write))
    }
    statement = (
        f"The run spends {fmt.pct(share)} of its time in I/O: {fmt.seconds(mean_io)} per rank on average of "
        f"{fmt.seconds(T)} (reads {fmt.seconds(kinds['read'])}, writes {fmt.seconds(kinds['write'])}, "
        f"metadata {fmt.seconds(kinds['meta'])})"
        + (
            f"; I/O efficiency is {ioe:.2f}, below POP's {cfg.io_bound_max_efficiency:g}"
            if ioe is not None
            else ""
        )
        + f". {_split(main, kinds, b_read, b_write, rates)}"
    )
    evidence = [
        Metric("io_share", "mean I/O time / run time", share, "share"),
        Metric("io_efficiency", "I/O efficiency IOE = sum(U) / sum(U + IO)", ioe, ""),
        Metric("mean_io", "mean I/O time per rank", mean_io, "s"),
        Metric("max_io", "slowest rank's I/O time", io_max, "s", approximate=not t.exact_max("io")),
        Metric("runtime", "run time", T, "s"),
        Metric("read_time", "mean read time", kinds["read"], "s"),
        Metric("write_time", "mean write time", kinds["write"], "s"),
        Metric("meta_time", "mean metadata time", kinds["meta"], "s"),
        Metric("bytes_read", "bytes read", b_read, "B"),
        Metric("bytes_written", "bytes written", b_write, "B"),
        Metric("read_rate", "read rate per process (bytes / read time)", rates["read"], "B/s"),
        Metric("write_rate", "write rate per process (bytes / write time)", rates["write"], "B/s"),
        Metric(
            "rate",
            "aggregate rate (bytes / slowest rank's I/O time)",
            nbytes / io_max if io_max > 0 else None,
            "B/s",
            approximate=not t.exact_max("io"),
        ),
    ]
    notes = []
    if ioe is None:
        notes.append(
            f"I/O efficiency needs MPI time, which this log does not record ({pop.io_efficiency.reason}); "
            "the share of the run time spent in I/O is used instead."
        )
    others = other_findings(facts, cfg)
    recs = [_where_it_goes(others, main, b_read + b_write, rates.get(main))]
    if len(mpiio_files(facts)):
        recs += [
            Recommendation(
                "tune",
                "Try other MPI-IO and file-system settings on this run, one hints file per trial:",
                tune_command(facts),
            ),
            autotune(facts, "the MPI-IO hints, the I/O component and the striping", objective="io-time"),
        ]
    else:
        recs += _posix_recs(facts, cfg)
    recs.append(_overlap(main, mpiio=bool(len(mpiio_files(facts)))))
    yield finding(
        "TIME-IO-BOUND",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=T,
        time_lost=mean_io,
        notes=notes,
        time_basis="exact: the mean per-rank I/O time (POP's avg(IO)); the run cannot save more "
        "than this by making I/O faster",
    )


def other_findings(facts: Facts, cfg: RuleConfig) -> list[str]:
    """The ids of the findings the other rules make on this run (data caveats and launcher logs
    aside: they do not say where I/O time goes).

    The diagnosis runs this rule after the others and hands it their findings
    (``Facts.findings_made``); called on its own, it asks the other rules, pure functions of
    the same Facts.
    """
    skip = set(cfg.disabled_rules) | {"TIME-IO-BOUND"}
    families = {r.id: r.family for r in RULES.values()}
    made = facts.findings_made
    if made is None:  # called on its own, not by the diagnosis: ask the other rules
        made = tuple(f for r in RULES.values() if not (r.across_runs or r.id in skip)
                     for f in r.func(facts, cfg))
    found = [f for f in made if f.id not in skip and families.get(f.id) not in ("data", "run")]
    # in the order the diagnosis lists them: the costliest first
    found.sort(key=lambda f: (f.time_lost is None, -(f.time_lost or 0.0), f.id))
    return list(dict.fromkeys(f.id for f in found))


def _where_it_goes(others: list[str], main: str, nbytes: float, rate: float | None) -> Recommendation:
    """Where to look next: the other findings when there are some."""
    what = "metadata calls" if main == "meta" else main + "s"
    if others:
        return Recommendation(
            "investigate",
            f"The other findings of this run ({', '.join(others)}) say where the I/O time goes; start with "
            f"the {what}, which take most of it.",
        )
    moved = f"{fmt.nbytes(nbytes)}" + (f" at {fmt.rate(rate)} per process" if rate else "")
    return Recommendation(
        "investigate",
        "No other rule finds a cause in this log (request sizes, alignment, order, balance across ranks, "
        f"interfaces): the time goes into moving {moved}, with the {what} taking most of it. What is "
        "left is to move less, less often, or in the background, and to measure what the storage gives "
        "this pattern.",
    )


def _posix_recs(facts: Facts, cfg: RuleConfig) -> list[Recommendation]:
    """What applies to a run without MPI-IO: no hints, no trial with a hints file."""
    levers = ["fewer and larger requests"]
    if facts.nprocs > 1:
        levers.append("fewer ranks writing one file at a time (or one file per node)")
    if facts.striping:
        levers.append("a stripe layout that fits the files' size and requests")
    recs = [
        Recommendation(
            "investigate",
            "This run does its I/O without MPI-IO, so MPI-IO hints and collective buffering do not apply. "
            f"What does: {', '.join(levers[:-1]) + ' and ' if len(levers) > 1 else ''}{levers[-1]}.",
        )
    ]
    layout = _lustre_layout(facts, cfg)
    if layout is not None:
        recs.append(
            Recommendation(
                "striping",
                f"The layout recommended for {layout.name} (set on the directory before the file is "
                "created):",
                layout.command(),
            )
        )
    return recs


def _lustre_layout(facts: Facts, cfg: RuleConfig) -> Layout | None:
    """The recommended layout of the largest Lustre file whose layout it changes (None: none)."""
    layouts = (layout_of(facts, fid, cfg) for fid in facts.striping)
    changed = [lay for lay in layouts if lay is not None and lay.changed and lay.name]
    return max(changed, key=lambda lay: lay.file_size) if changed else None


def _overlap(main: str, *, mpiio: bool) -> Recommendation:
    """Overlap the I/O with computation: MPI-IO's nonblocking collectives, or a thread without MPI-IO."""
    call = "MPI_File_iread_all" if main == "read" else "MPI_File_iwrite_all"
    how = (
        f"nonblocking {call}, or dedicated I/O ranks or threads"
        if mpiio
        else "a dedicated I/O thread or rank, or POSIX aio_write / aio_read"
    )
    return Recommendation(
        "code",
        f"Overlap I/O with computation ({how}) and write only what is needed, as often as needed "
        "(checkpoint frequency, output precision).",
    )


def _split(
    main: str, kinds: dict[str, float], b_read: float, b_write: float, rates: dict[str, float | None]
) -> str:
    """'Writes take 92% of it and move 60% of the bytes (at 148 KiB/s per process, reads at 1.1 MiB/s).'"""
    total = sum(kinds.values())
    if total <= 0:
        return ""
    nbytes = b_read + b_write
    if main == "meta":
        return f"Metadata calls take {fmt.pct(kinds['meta'] / total)} of it."
    other = "read" if main == "write" else "write"
    moved = b_write if main == "write" else b_read
    text = f"{main.capitalize()}s take {fmt.pct(kinds[main] / total)} of it"
    if nbytes > 0:
        text += f" and move {fmt.pct(moved / nbytes)} of the bytes"
    r_main, r_other = rates.get(main), rates.get(other)
    if r_main is not None and r_other is not None:
        text += f" (at {fmt.rate(r_main)} per process, {other}s at {fmt.rate(r_other)})"
    return text + "."
