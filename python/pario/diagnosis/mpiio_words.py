"""The words of the MPI-IO rules (mpiio.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.commands import autotune, objective_of, run_command, tune_command
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, file_subject
from pario.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.diagnosis.facts import Facts
    from pario.diagnosis.layout import Layout
    from pario.diagnosis.mpiio import (
        AggregatorsStripes,
        CbCycles,
        CbDisabled,
        DefaultHints,
        IndependentOverhead,
        SingleAggregator,
    )


def per_ost(aggregators: int, stripes: int) -> str:
    """'one per OST' / '2 per OST'."""
    k = aggregators // max(stripes, 1)
    return "one per OST" if k <= 1 else f"{k} per OST"


def _aggr_recs(component: str, n: int, layout: Layout | None) -> list[Recommendation]:
    """How to get ``n`` aggregators with the file's MPI-IO component."""
    count = layout.stripe_count if layout is not None else 0
    per = f" ({per_ost(n, count)} of the file's {count} stripes)" if count > 1 else ""
    romio = Recommendation(
        "hint",
        f"Use {n} aggregators{per}: with ROMIO, cb_nodes sets how many and cb_config_list how many per "
        "node (ROMIO's default is one per node).",
        f"cb_nodes {n}\ncb_config_list *:{max(1, min(n, 8))}",
    )
    if component != "ompio":
        return [romio]
    ompio = Recommendation(
        "hint",
        f"Use {n} aggregators{per}: Open MPI's OMPIO takes cb_nodes from the hints (measured: cb_nodes N "
        "puts the file-system I/O of a collective write on N ranks; its own default chooses automatically, "
        "here one):",
        f"cb_nodes {n}",
    )
    every_file = Recommendation(
        "environment",
        "Or for every file of the run, OMPIO's MCA parameter (an option of mpirun):",
        f"--mca io_ompio_num_aggregators {n}",
    )
    return [ompio, every_file]


def _lost(hit: SingleAggregator | AggregatorsStripes | CbDisabled | IndependentOverhead) -> float:
    """The hit's time at stake (every hit of these rules has one)."""
    return hit.time_lost if hit.time_lost is not None else 0.0


def single_aggregator(hit: SingleAggregator, facts: Facts, cfg: RuleConfig) -> Words:
    top, agg, part, lost = hit.files[0], hit.aggregators, hit.participation, _lost(hit)
    how = []
    if agg is not None and agg.hinted:
        how.append(agg.source)
    if part is not None:
        how.append(
            f"rank {part.top_rank} moved {fmt.pct(part.top_share)} of the file's "
            f"{fmt.nbytes(part.bytes)} at the "
            "POSIX level"
        )
    statement = (
        f"{top.ranks} ranks do collective I/O on {top.name} ({fmt.nbytes(top.bytes)}) through a single "
        f"aggregator ({'; '.join(how)}): one rank's link and one process do all of the file-system I/O while "
        "the others wait in the collective call."
    )
    notes = []
    if hit.striping is not None and hit.striping.stripe_count == 1:
        notes.append(
            "The file is striped over a single OST (stripe count 1); MPI-IO on Lustre uses one aggregator "
            "per OST by default, which is why there is only one. Striping the file over more OSTs is the "
            "fix (LUSTRE-STRIPE-COUNT)."
        )
    if hit.injected_cb_nodes:
        notes.append(
            "cb_nodes came from the hints file given to pario run --hints, not from the application: change "
            "that file."
        )
    evidence = [
        Metric("ranks", "ranks sharing the file", top.ranks, "count"),
        Metric("bytes", "bytes through MPI-IO", top.bytes, "B"),
        Metric("collective_calls", "collective calls", hit.collective_calls, "count"),
        Metric(
            "aggregators",
            "aggregators",
            agg.count if agg else (part.effective if part else None),
            "",
            approximate=not (agg and agg.hinted),
        ),
        Metric(
            "aggregators_source",
            "how the aggregator count is known",
            agg.source if agg else "measured",
            "text",
        ),
        Metric(
            "time_at_stake",
            "slowest rank's collective I/O time on the file",
            lost,
            "s",
            approximate=not hit.exact,
        ),
    ]
    if part is not None:
        evidence.append(
            Metric(
                "top_rank_share",
                f"share of the POSIX bytes moved by rank {part.top_rank}",
                part.top_share,
                "share",
            )
        )
    subjects = [
        file_subject(
            f.name,
            f.fid,
            Metric("ranks", "ranks", f.ranks, "count"),
            Metric("bytes", "bytes", f.bytes, "B"),
            Metric("time_at_stake", "slowest rank's collective time", f.at_stake, "s"),
        )
        for f in hit.files
    ]
    return Words(
        statement,
        evidence,
        _single_recs(hit, facts),
        subjects=subjects,
        subjects_total=len(hit.files),
        notes=notes,
        time_basis=(
            "upper bound: the slowest rank's collective I/O time on the file (more aggregators shorten it, "
            "if the storage keeps up)"
        ),
    )


def _single_recs(hit: SingleAggregator, facts: Facts) -> list[Recommendation]:
    layout = hit.layout
    recs = _aggr_recs(hit.component, hit.cb_nodes, layout)
    if layout is not None and layout.changes_count:
        recs.insert(
            0,
            Recommendation(
                "striping",
                f"Stripe the file over {layout.stripe_count} OSTs first (before it is created):",
                layout.command(),
            ),
        )
    recs.append(
        Recommendation(
            "tune",
            "Try other aggregator counts and buffer sizes on this run, one hints file per trial:",
            tune_command(facts),
        )
    )
    recs.append(
        autotune(
            facts,
            "the number of aggregators (cb_nodes, OMPIO's aggregators) and the collective buffer size",
            [hit.files[0].name],
            objective_of(hit.bytes_written, hit.bytes_read),
        )
    )
    return recs


def _mismatch(hit: AggregatorsStripes) -> str:
    a = int(round(hit.aggregators.count))
    S = hit.striping.stripe_count
    per = a / S
    if hit.problem == "fewer":
        return (
            f"only {a} aggregator{'s' if a > 1 else ''} for {S} OSTs: {S - a} OSTs get no stream of "
            "their own, so the file is written at a fraction of the bandwidth its striping allows"
        )
    if hit.problem == "more":
        return (
            f"{a} aggregators for {S} OSTs ({fmt.plain(per)} per OST): they contend for each OST's "
            "extent locks and disk queue"
        )
    return (
        f"{a} aggregators for {S} OSTs is not a multiple: some OSTs serve more aggregators than "
        "others, and the slowest sets the pace"
    )


def aggregators_stripes(hit: AggregatorsStripes, facts: Facts, cfg: RuleConfig) -> Words:
    agg, s, layout, lost = hit.aggregators, hit.striping, hit.layout, _lost(hit)
    nstripes = s.stripe_count
    per = int(round(agg.count)) / nstripes
    statement = f"Collective I/O on {hit.name} uses {_mismatch(hit)}."
    evidence = [
        Metric("aggregators", "aggregators", agg.count, "", approximate=not agg.hinted),
        Metric("aggregators_source", "how the aggregator count is known", agg.source, "text"),
        Metric("stripe_count", "stripe count (OSTs)", nstripes, "count"),
        Metric("stripe_size", "stripe size", s.stripe_size, "B"),
        Metric("per_ost", "aggregators per OST", per, "x", approximate=not agg.hinted),
        Metric(
            "time_at_stake",
            "slowest rank's collective I/O time on the file",
            lost,
            "s",
            approximate=not hit.exact,
        ),
    ]
    want = hit.cb_nodes
    count = layout.stripe_count if layout is not None else nstripes
    restripe = layout is not None and layout.changes_count
    recs = [
        Recommendation(
            "hint",
            f"Set the aggregator count to a multiple of the stripe count (here {want}: "
            f"{per_ost(want, count)}"
            + (f" of the {count} stripes recommended for this file, below)." if restripe else ")."),
            f"cb_nodes {want}",
        ),
        *(
            [Recommendation("striping", f"Stripe the file over {count} OSTs (before it is created):",
                            layout.command())]
            if restripe and layout is not None
            else []
        ),
        Recommendation("tune", "Or try values on this run:", tune_command(facts)),
        autotune(
            facts,
            "the aggregator count and the striping",
            [hit.name],
            objective_of(hit.bytes_written, hit.bytes_read),
        ),
    ]
    return Words(
        statement,
        evidence,
        recs,
        subjects=[
            file_subject(
                hit.name,
                hit.fid,
                Metric("aggregators", "aggregators", agg.count, ""),
                Metric("stripe_count", "stripe count", nstripes, "count"),
            )
        ],
        time_basis="upper bound: the slowest rank's collective I/O time on the file",
    )


def cb_disabled(hit: CbDisabled, facts: Facts, cfg: RuleConfig) -> Words:
    kind, n, mean, lost = hit.kind, hit.requests, hit.mean, _lost(hit)
    setting = f"romio_cb_{kind}=disable" if hit.romio else "fcoll=individual (OMPIO)"
    statement = (
        f"Collective {kind}s to {hit.name} run with {setting}: the {hit.ranks} ranks' pieces "
        f"reach the file system separately ({fmt.count(n)} POSIX {kind}s, mean {fmt.nbytes(mean)}) "
        "instead of being merged into large contiguous requests."
    )
    evidence = [
        Metric("setting", "setting in effect", setting, "text"),
        Metric(
            "origin",
            "set by",
            "pario run --hints (PARIO_HINTS)"
            if hit.injected
            else "the application or its environment",
            "text",
        ),
        Metric("collective_calls", f"collective {kind}s", hit.collective, "count"),
        Metric("posix_requests", f"POSIX {kind}s beneath them", n, "count"),
        Metric("mean_posix_request", "mean POSIX request", mean, "B"),
        Metric("noncontig_view", "non-contiguous file view", "yes" if hit.noncontig else "no", "text"),
        Metric(
            "time_at_stake",
            f"slowest rank's collective {kind} time",
            lost,
            "s",
            approximate=not hit.exact,
        ),
    ]
    where = (
        "remove it from the hints file given to pario run --hints"
        if hit.injected
        else "change it where the application sets its MPI_Info (or in ROMIO_HINTS)"
    )
    # ROMIO takes a hint; OMPIO's collective module is an MCA parameter of the launch
    romio = hit.romio
    recs = [
        Recommendation(
            "hint" if romio else "environment",
            f"Enable collective buffering for this file ({where}):",
            f"romio_cb_{kind} enable" if romio else "mpirun --mca fcoll dynamic ...",
        ),
        Recommendation(
            "tune",
            (
                "On a node-local or lightly loaded file system disabling can win, so measure both "
                "(romio_cb_write enable, then disable, in the hints file):"
            ),
            tune_command(facts),
        ),
        autotune(
            facts,
            f"collective buffering (romio_cb_{kind}, OMPIO's fcoll) and the aggregators",
            [hit.name],
            f"{kind}-bw",
        ),
    ]
    return Words(
        statement,
        evidence,
        recs,
        subjects=[
            file_subject(
                hit.name,
                hit.fid,
                Metric("setting", "setting", setting, "text"),
                Metric("mean_posix_request", f"mean POSIX {kind}", mean, "B"),
                Metric("time_at_stake", "slowest rank's collective time", lost, "s"),
            )
        ],
        time_basis="upper bound: the slowest rank's collective call time on the file",
    )


def cb_cycles(hit: CbCycles, facts: Facts, cfg: RuleConfig) -> Words:
    ncalls, buf, cycles, per_call, agg = hit.count, hit.buffer, hit.cycles, hit.per_call, hit.aggregators
    comp = hit.component
    buf_src = (f"hint cb_buffer_size={buf}" if hit.buffer_hinted
               else f"{'OMPIO' if comp == 'ompio' else 'ROMIO'} default")
    statement = (
        f"Each collective write to {hit.name} moves {fmt.nbytes(per_call)} through {fmt.plain(ncalls)} "
        f"aggregator{'s' if ncalls != 1 else ''} with a {fmt.nbytes(buf)} buffer: {cycles} cycles per call, "
        "each a shuffle followed by a write, one after the other."
    )
    evidence = [
        Metric(
            "cycles", "buffer cycles per collective write", cycles, "count", approximate=not agg.hinted
        ),
        Metric(
            "bytes_per_call", "bytes per collective write (all ranks)", per_call, "B", approximate=True
        ),
        Metric("calls", "collective writes per rank", hit.calls, ""),
        Metric("aggregators", "aggregators", ncalls, "", approximate=not agg.hinted),
        Metric("aggregators_source", "how the aggregator count is known", agg.source, "text"),
        Metric("cb_buffer_size", "collective buffer per aggregator", buf, "B"),
        Metric("buffer_source", "buffer size from", buf_src, "text"),
        Metric(
            "time_at_stake", "slowest rank's collective write time", hit.at_stake, "s",
            approximate=not hit.exact,
        ),
    ]
    return Words(
        statement,
        evidence,
        _cycles_recs(hit, facts),
        subjects=[
            file_subject(
                hit.name,
                hit.fid,
                Metric("cycles", "cycles per call", cycles, "count"),
                Metric("bytes_per_call", "bytes per call", per_call, "B"),
                Metric("aggregators", "aggregators", ncalls, ""),
                Metric("cb_buffer_size", "buffer", buf, "B"),
            )
        ],
        time_basis=(
            "upper bound: half the slowest rank's collective write time on the file (overlap hides at "
            "most the shorter of shuffle and write)"
        ),
    )


def _cycles_recs(hit: CbCycles, facts: Facts) -> list[Recommendation]:
    served, comp, buf = hit.engine, hit.component, hit.buffer
    bigger = min(hit.cycles, 4) * buf
    if served is not None and served.fallbacks:
        overlap = Recommendation(
            "investigate",
            "pario's collective-write engine, which overlaps the cycles, was selected for this file, "
            f"but {served.fallback_text()} (docs/collective.md, 'When it falls back'): without that "
            "cause it would serve them.",
        )
    else:
        overlap = Recommendation(
            "environment",
            "Overlap each cycle's shuffle with the previous cycle's write, which hides the shorter of "
            "the two: pario's collective-write engine does it (write-comm; --collective auto picks "
            "the algorithm per call):",
            run_command(facts, "--collective write-comm"),
        )
    return [
        overlap,
        Recommendation(
            "environment" if comp == "ompio" else "hint",
            f"Or fewer and larger cycles (if the aggregators have {fmt.nbytes(bigger)} of "
            "memory to spare), or more aggregators:",
            f"mpirun --mca io_ompio_bytes_per_agg {bigger} ..."
            if comp == "ompio"
            else f"cb_buffer_size {bigger}",
        ),
        Recommendation(
            "tune", "Try other buffer sizes and aggregator counts on this run:", tune_command(facts)
        ),
        autotune(
            facts,
            "the collective-write algorithm (pario's engine), the buffer size and the aggregators",
            [hit.name],
        ),
    ]


def independent_overhead(hit: IndependentOverhead, facts: Facts, cfg: RuleConfig) -> Words:
    top, split, kind, fs, lost = hit.files[0], hit.split, hit.kind, hit.fs, _lost(hit)
    name, m_time, p_time = top.name, top.mpiio_time, top.posix_time
    share = (m_time - p_time) / m_time
    km, kp = split[kind]
    statement = (
        f"Independent MPI-IO {kind}s of {name} take {fmt.seconds(km)} (all ranks) but the POSIX {kind}s "
        f"they make take only {fmt.seconds(kp)}: {fmt.pct(share)} of the MPI-IO read and write time is "
        "spent inside the library, outside the file-system calls"
        + (
            " - on NFS, ROMIO locks the file (fcntl) around every access."
            if fs == "nfs"
            else " (file locks, data-sieving copies, or waits)."
        )
    )
    evidence = [
        Metric("mpiio_write_time", "MPI-IO write time (all ranks)", split["write"][0], "s"),
        Metric("posix_write_time", "POSIX write time beneath it", split["write"][1], "s"),
        Metric("mpiio_read_time", "MPI-IO read time (all ranks)", split["read"][0], "s"),
        Metric("posix_read_time", "POSIX read time beneath it", split["read"][1], "s"),
        Metric("overhead_share", "share of the MPI-IO time outside the POSIX calls", share, "share"),
        Metric("file_system", "file system", fs or "unknown", "text"),
        Metric("ranks", "ranks", hit.ranks, "count"),
        Metric("time_at_stake", "largest per-rank time outside the POSIX calls", lost, "s", approximate=True),
    ]
    recs = []
    if fs == "nfs":
        recs.append(
            Recommendation(
                "investigate",
                (
                    "NFS is not made for concurrent writes: ROMIO's NFS driver takes a byte-range lock "
                    "around every access to keep the file consistent, so the ranks wait for each other. "
                    "Write parallel output to a parallel file system (Lustre, GPFS, BeeGFS) or to "
                    "node-local storage."
                ),
            )
        )
    else:
        recs.append(
            Recommendation(
                "hint",
                (
                    "If the ranks' pieces do not overlap, data sieving (which reads, locks and rewrites "
                    "whole blocks) is not needed:"
                ),
                f"romio_ds_{kind} disable",
            )
        )
        recs.append(
            autotune(facts, f"data sieving (romio_ds_{kind}) and the I/O component", [name], f"{kind}-bw")
        )
    recs.append(
        Recommendation(
            "code",
            (
                f"Use collective calls (MPI_File_{kind}_at_all): a few aggregators issue large contiguous "
                "requests, so there are far fewer accesses to lock."
            ),
            f"MPI_File_{kind}_at_all(fh, offset, buf, count, MPI_BYTE, MPI_STATUS_IGNORE);",
        )
    )
    return Words(
        statement,
        evidence,
        recs,
        subjects=[
            file_subject(
                f.name,
                f.fid,
                Metric("mpiio_time", "MPI-IO time", f.mpiio_time, "s"),
                Metric("posix_time", "POSIX time", f.posix_time, "s"),
            )
            for f in hit.files
        ],
        time_basis="upper bound: the largest per-rank MPI-IO time not spent in POSIX calls",
    )


def default_hints(hit: DefaultHints, facts: Facts, cfg: RuleConfig) -> Words:
    share, comps, at_stake = hit.share, hit.components, hit.at_stake
    statement = (
        f"MPI-IO reads and writes take {fmt.pct(share)} of the run ({fmt.seconds(at_stake)} on the slowest "
        f"rank) and run with the library's defaults ({', '.join(comps)}; no aggregator, buffer or striping "
        "hint set). The I/O component and its hints often change MPI-IO bandwidth by several times for the "
        "same pattern."
    )
    evidence = [
        Metric("mpiio_share", "slowest rank's MPI-IO time / run time", share, "share"),
        Metric("mpiio_time", "slowest rank's MPI-IO read and write time", at_stake, "s"),
        Metric("component", "MPI-IO component", ", ".join(comps), "text"),
        Metric("files", "MPI-IO files", len(hit.names), "count"),
    ]
    recs = [
        Recommendation(
            "tune",
            (
                "Compare the I/O component (OMPI_MCA_io=ompio or romio321 in the environment), the hints "
                "cb_nodes, cb_buffer_size and romio_cb_write, and pario's own collective writes (pario run "
                "--collective auto) on this run, one setting per trial, and keep the fastest:"
            ),
            tune_command(facts),
        ),
        autotune(
            facts,
            "the I/O component, these hints and pario's collective writes",
            list(hit.names),
            objective_of(hit.bytes_written, hit.bytes_read),
        ),
    ]
    return Words(
        statement,
        evidence,
        recs,
        time_basis="not estimated: what tuning gains is only known by measuring it",
    )
