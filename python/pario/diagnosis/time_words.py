"""The words of the time rules (time.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.commands import autotune, tune_command
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation
from pario.diagnosis.hits import Words
from pario.model.layers import HDF5

if TYPE_CHECKING:
    from pario.diagnosis.facts import Facts
    from pario.diagnosis.time import IOBound


def io_bound(hit: IOBound, facts: Facts, cfg: RuleConfig) -> Words:
    T = facts.runtime
    mean_io = hit.time_lost if hit.time_lost is not None else 0.0
    share, ioe, kinds, main, rates = hit.share, hit.efficiency, hit.kinds, hit.main, hit.rates
    b_read, b_write, io_max = hit.bytes_read, hit.bytes_written, hit.max_io
    nbytes = b_read + b_write
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
        Metric("max_io", "slowest rank's I/O time", io_max, "s", approximate=not hit.max_exact),
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
            approximate=not hit.max_exact,
        ),
    ]
    notes = []
    if ioe is None:
        notes.append(
            f"I/O efficiency needs MPI time, which this log does not record ({hit.no_efficiency}); "
            "the share of the run time spent in I/O is used instead."
        )
    return Words(
        statement,
        evidence,
        _recs(hit, facts),
        notes=notes,
        time_basis="exact: the mean per-rank I/O time (POP's avg(IO)), what I/O costs the average rank; "
        f"faster I/O saves the run at most the slowest rank's I/O time, {fmt.seconds(io_max)}",
    )


def _recs(hit: IOBound, facts: Facts) -> list[Recommendation]:
    main = hit.main
    recs = [_where_it_goes(list(hit.others), main, hit.bytes_read + hit.bytes_written, hit.rates.get(main))]
    if hit.mpiio:
        recs += [
            Recommendation(
                "tune",
                "Try other MPI-IO and file-system settings on this run, one hints file per trial:",
                tune_command(facts),
            ),
            autotune(facts, "the MPI-IO hints, the I/O component and the striping", objective="io-time"),
        ]
    else:
        recs += _posix_recs(hit, facts)
    recs.append(_overlap(main, mpiio=hit.mpiio, hdf5=len(facts.profile.layer(HDF5.files)) > 0))
    return recs


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


def _posix_recs(hit: IOBound, facts: Facts) -> list[Recommendation]:
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
    layout = hit.layout
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


def _overlap(main: str, *, mpiio: bool, hdf5: bool = False) -> Recommendation:
    """Overlap the I/O with computation: HDF5's asynchronous I/O for an HDF5 program, MPI-IO's
    nonblocking collectives, or a thread without MPI-IO."""
    call = "MPI_File_iread_all" if main == "read" else "MPI_File_iwrite_all"
    if hdf5:
        how = ("HDF5's asynchronous I/O: the async VOL connector with H5Dwrite_async / H5Dread_async "
               "and an event set waited on with H5ESwait, or a dedicated I/O thread or rank")
    elif mpiio:
        how = f"nonblocking {call}, or dedicated I/O ranks or threads"
    else:
        how = "a dedicated I/O thread or rank, or POSIX aio_write / aio_read"
    return Recommendation(
        "code",
        f"Overlap I/O with computation ({how}) and write only what is needed, as often as needed "
        "(checkpoint frequency, output precision).",
    )


def _split(
    main: str, kinds: Mapping[str, float], b_read: float, b_write: float, rates: Mapping[str, float | None]
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
