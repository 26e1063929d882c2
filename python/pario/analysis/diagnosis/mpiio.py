"""MPI-IO settings and Lustre striping rules, from the hints actually in effect.

The hints in effect (``Profile.hints``, recorded after MPI_File_open) are the
application's settings, including the ``mca:*`` entries that say which Open
MPI component ran.  pario's own injection (``pario run --hints``) is in effect
too, but a recommendation then says to change the hints file, not the code.
Darshan's own log-writing hints (job metadata) are never used.  Where hints
are unknown (Darshan logs), the number of aggregators is measured from the
POSIX records beneath MPI-IO: the participation ratio of bytes per rank.

The rules read tables with NumPy (no pandas: ``pario diagnose`` must not import it).
Records taken from ``Facts`` are selected with a mask and handed back to its functions
(``counter``, ``stake``, ``nranks``) as they came.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

import pario.analysis.diagnosis._fmt as fmt
from pario.analysis.diagnosis.commands import autotune, objective_for, objective_of, run_command, tune_command
from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.diagnosis.facts import (
    Facts,
    Striping,
    counter,
    fs_of,
    hex_id,
    hint,
    hint_origin,
    io_component,
    layer_values,
    mpiio_files,
    participation,
    stake,
)
from pario.analysis.diagnosis.findings import Finding, Metric, Recommendation, Subject
from pario.analysis.diagnosis.layout import Layout, aggregators_for, fits, layout_of, striped_files
from pario.analysis.diagnosis.registry import finding, merged, rule
from pario.table import Table, as_table

if TYPE_CHECKING:
    import pandas as pd

    #: Records as ``Facts.layer`` gives them (Tables; a DataFrame built by hand works too).
    Records = Table | pd.DataFrame

FAMILY = "mpiio"

#: Hints whose presence means someone already chose MPI-IO settings.
TUNING_KEYS: tuple[str, ...] = (
    "cb_nodes",
    "cb_buffer_size",
    "cb_config_list",
    "romio_cb_write",
    "romio_cb_read",
    "romio_ds_write",
    "romio_ds_read",
    "striping_factor",
    "striping_unit",
    "num_aggregators",
    "collective_buffering",
    "mca:fcoll",
    "mca:io_ompio_num_aggregators",
    "mca:io_ompio_bytes_per_agg",
    "romio_no_indep_rw",
)


@dataclass(frozen=True)
class Aggregators:
    """How many ranks aggregate a file's collective I/O, and how that is known.

    ``hinted``: the count comes from a hint that the measurement (if any) agrees with.
    ``bypassed``: a hint asked for aggregators, but every rank did its own file-system
    I/O: collective buffering was not used (ROMIO switches to independent I/O when the
    ranks' pieces do not interleave, unless romio_cb_write=enable).
    """

    count: float
    source: str
    hinted: bool
    bypassed: bool = False


def _ranks(k: float) -> str:
    return "1 rank does" if round(k, 2) == 1 else f"{fmt.plain(k)} ranks do"


def aggregators(facts: Facts, fid: int) -> Aggregators | None:
    """Aggregators of a file's collective I/O: from the hints, measured, or Lustre's default."""
    hinted: tuple[int, str] | None = None
    for key in ("cb_nodes", "num_aggregators"):
        v = hint(facts, fid, key)
        try:
            n = int(v) if v is not None else 0
        except ValueError:
            n = 0
        if n > 0:
            injected = hint_origin(facts, key, v or "") == "PARIO_HINTS"
            how = "injected by pario run --hints" if injected else "in effect"
            hinted = (n, f"hint {key}={n} ({how})")
            break
    p = participation(facts, fid)
    measured = p is not None and p.ranks >= 2
    if hinted is not None:
        n, src = hinted
        if not measured or p is None:
            return Aggregators(float(n), src, True)
        if p.effective <= 1.5 * n:
            return Aggregators(float(n), f"{src}; measured: {_ranks(p.effective)} the file-system I/O", True)
        return Aggregators(
            p.effective,
            f"measured: {_ranks(p.effective)} the file-system I/O although {src}: collective buffering was "
            "not used",
            False,
            True,
        )
    if measured and p is not None:
        return Aggregators(
            p.effective,
            f"measured: {_ranks(p.effective)} the file-system I/O (participation ratio of bytes per rank in "
            "the POSIX records)",
            False,
        )
    s = facts.striping.get(fid)
    if s is not None and io_component(facts, fid) != "ompio":
        return Aggregators(float(s.stripe_count), "ROMIO's Lustre default: one aggregator per OST", False)
    return None


def _coll_weight(m_rec: Records, kinds: tuple[str, ...] = ("read", "write")) -> dict[str, np.ndarray]:
    out = {}
    for k in kinds:
        coll = counter(m_rec, f"coll_{k}s") + counter(m_rec, f"split_{k}s")
        alln = (coll + counter(m_rec, f"indep_{k}s") + counter(m_rec, f"nb_{k}s")
                + counter(m_rec, f"shared_{k}s"))
        out[k] = np.where(alln > 0, coll / np.maximum(alln, 1.0), 0.0)
    return out


def _ids(facts: Facts, layer: str) -> np.ndarray:
    """Per record of ``facts.layer(layer)``: its file id as uint64 (cached)."""
    return facts.cached(
        ("mpiio rules: ids", layer), lambda: np.asarray(layer_values(facts, layer, "id")).astype(np.uint64)
    )


def _of_file(facts: Facts, layer: str, fid: int) -> Records:
    """The records of file ``fid`` in ``facts.layer(layer)``."""
    return facts.layer(layer)[_ids(facts, layer) == np.uint64(fid)]


def _records(facts: Facts, fid: int) -> Records:
    return _of_file(facts, "mpiio", fid)


def _files(facts: Facts) -> Table:
    """:func:`mpiio_files` as a Table, one row per file, its id in column "id" (cached)."""

    def make() -> Table:
        t = as_table(mpiio_files(facts))
        if len(t) and "id" not in t:  # ids 0..n-1 are taken for row positions and dropped
            t = Table({"id": np.arange(len(t), dtype=np.uint64), **dict(t.items())})
        return t

    return facts.cached("mpiio rules: files", make)


def _sum(t: Table, *names: str) -> np.ndarray:
    """Per row: the sum of the columns ``names``."""
    out = np.asarray(t[names[0]], dtype=np.float64)
    for name in names[1:]:
        out = out + t[name]
    return out


def cb_nodes_for(facts: Facts, fid: int, layout: Layout, cfg: RuleConfig) -> int:
    """The aggregator count to recommend with a file's layout (the same in every finding about it):
    a multiple of its recommended stripe count, as many per OST as the aggregators in use give."""
    agg = aggregators(facts, fid)
    return aggregators_for(layout.stripe_count, agg.count if agg is not None else None,
                           cfg.aggregators_per_ost_max)


def _per_ost(aggregators: int, stripes: int) -> str:
    """'one per OST' / '2 per OST'."""
    k = aggregators // max(stripes, 1)
    return "one per OST" if k <= 1 else f"{k} per OST"


def _aggr_recs(facts: Facts, fid: int, n: int, layout: Layout | None) -> list[Recommendation]:
    """How to get ``n`` aggregators with the file's MPI-IO component."""
    count = layout.stripe_count if layout is not None else 0
    per_ost = f" ({_per_ost(n, count)} of the file's {count} stripes)" if count > 1 else ""
    romio = Recommendation(
        "hint",
        f"Use {n} aggregators{per_ost}: with ROMIO, cb_nodes sets how many and cb_config_list how many per "
        "node (ROMIO's default is one per node).",
        f"cb_nodes {n}\ncb_config_list *:{max(1, min(n, 8))}",
    )
    if io_component(facts, fid) != "ompio":
        return [romio]
    ompio = Recommendation(
        "environment",
        f"Use {n} aggregators{per_ost}: Open MPI's OMPIO takes the count from an MCA parameter (its "
        "default chooses automatically, here one):",
        f"mpirun --mca io_ompio_num_aggregators {n} ...",
    )
    return [
        ompio,
        replace(
            romio, text="Or run with ROMIO (mpirun --mca io romio321), where hints set it: " + romio.text
        ),
    ]


@rule(
    "MPIIO-SINGLE-AGGREGATOR",
    title="A single aggregator for a large shared file",
    family=FAMILY,
    config=("large_shared_file_bytes", "single_aggregator_min_ranks"),
)
def single_aggregator(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Collective I/O on a large file shared by many ranks goes through one aggregator."""
    files = _files(facts)
    hits = []
    if not len(files):
        return
    coll_n = _sum(files, "coll_writes", "coll_reads")
    nbytes_n = _sum(files, "bytes_written", "bytes_read")
    large = (
        (files["ranks"] >= cfg.single_aggregator_min_ranks)
        & (coll_n > 0)
        & (nbytes_n >= cfg.large_shared_file_bytes)
    )
    for i in np.flatnonzero(large):
        r = files.row(i)
        fid, nbytes = int(r["id"]), float(nbytes_n[i])
        agg = aggregators(facts, fid)
        p = participation(facts, fid)
        single = agg is not None and (agg.count <= 1.0 if agg.hinted else False)
        measured_single = p is not None and p.effective <= 1.5 and p.top_share >= 0.9
        if not (single or measured_single):
            continue
        rec = _records(facts, fid)
        st = stake(facts, "mpiio", rec, _coll_weight(rec))
        hits.append((fid, r, agg, p, st, nbytes))
    if not hits:
        return
    hits.sort(key=lambda h: h[4].max, reverse=True)
    fid, r, agg, p, st, nbytes = hits[0]
    stripes = facts.striping.get(fid)
    how = []
    if agg is not None and agg.hinted:
        how.append(agg.source)
    if p is not None:
        how.append(
            f"rank {p.top_rank} moved {fmt.pct(p.top_share)} of the file's {fmt.nbytes(p.bytes)} at the "
            "POSIX level"
        )
    statement = (
        f"{int(r['ranks'])} ranks do collective I/O on {r['name']} ({fmt.nbytes(nbytes)}) through a single "
        f"aggregator ({'; '.join(how)}): one rank's link and one process do all of the file-system I/O while "
        "the others wait in the collective call."
    )
    notes = []
    if stripes is not None and stripes.stripe_count == 1:
        notes.append(
            "The file is striped over a single OST (stripe count 1); MPI-IO on Lustre uses one aggregator "
            "per OST by default, which is why there is only one. Striping the file over more OSTs is the "
            "fix (LUSTRE-STRIPE-COUNT)."
        )
    cbh = hint(facts, fid, "cb_nodes")
    if cbh is not None and hint_origin(facts, "cb_nodes", cbh) == "PARIO_HINTS":
        notes.append(
            "cb_nodes came from the hints file given to pario run --hints, not from the application: change "
            "that file."
        )
    evidence = [
        Metric("ranks", "ranks sharing the file", int(r["ranks"]), "count"),
        Metric("bytes", "bytes through MPI-IO", nbytes, "B"),
        Metric("collective_calls", "collective calls", float(r["coll_writes"] + r["coll_reads"]), "count"),
        Metric(
            "aggregators",
            "aggregators",
            agg.count if agg else (p.effective if p else None),
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
            st.max,
            "s",
            approximate=not st.exact,
        ),
    ]
    if p is not None:
        evidence.append(
            Metric(
                "top_rank_share", f"share of the POSIX bytes moved by rank {p.top_rank}", p.top_share, "share"
            )
        )
    layout = layout_of(facts, fid, cfg)
    n = cb_nodes_for(facts, fid, layout, cfg) if layout is not None else min(int(r["ranks"]), 8)
    recs = _aggr_recs(facts, fid, n, layout)
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
            [str(r["name"])],
            objective_of(float(r["bytes_written"]), float(r["bytes_read"])),
        )
    )
    subjects = [
        Subject(
            "file",
            str(h[1]["name"]),
            (
                Metric("ranks", "ranks", int(h[1]["ranks"]), "count"),
                Metric("bytes", "bytes", h[5], "B"),
                Metric("time_at_stake", "slowest rank's collective time", h[4].max, "s"),
            ),
            hex_id(h[0]),
        )
        for h in hits
    ]
    yield finding(
        "MPIIO-SINGLE-AGGREGATOR",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=st.max,
        subjects=subjects,
        subjects_total=len(hits),
        notes=notes,
        time_basis=(
            "upper bound: the slowest rank's collective I/O time on the file (more aggregators shorten it, "
            "if the storage keeps up)"
        ),
    )


@rule(
    "MPIIO-AGGREGATORS-STRIPES",
    title="Aggregators not matched to the stripe count",
    family=FAMILY,
    config=("aggregators_per_ost_max", "large_shared_file_bytes", "min_time_lost_share"),
)
def aggregators_vs_stripes(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """The number of aggregators is not a small multiple of the file's stripe count."""
    yield from merged(list(_aggregators_vs_stripes(facts, cfg)), cfg, facts.runtime)


def _aggregators_vs_stripes(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    files = _files(facts)
    if not len(files) or not facts.striping:
        return
    large = (_sum(files, "coll_writes", "coll_reads") > 0) & (
        _sum(files, "bytes_written", "bytes_read") >= cfg.large_shared_file_bytes
    )
    for i in np.flatnonzero(large):
        r = files.row(i)
        fid = int(r["id"])
        s = facts.striping.get(fid)
        if s is None:
            continue
        agg = aggregators(facts, fid)
        if agg is None or agg.source.startswith("ROMIO's Lustre default"):
            continue
        a = int(round(agg.count))
        S = s.stripe_count
        per_ost = a / S
        if a < S:
            problem = (
                f"only {a} aggregator{'s' if a > 1 else ''} for {S} OSTs: {S - a} OSTs get no stream of "
                "their own, so the file is written at a fraction of the bandwidth its striping allows"
            )
        elif per_ost > cfg.aggregators_per_ost_max:
            problem = (
                f"{a} aggregators for {S} OSTs ({fmt.plain(per_ost)} per OST): they contend for each OST's "
                "extent locks and disk queue"
            )
        elif a % S:
            problem = (
                f"{a} aggregators for {S} OSTs is not a multiple: some OSTs serve more aggregators than "
                "others, and the slowest sets the pace"
            )
        else:
            continue
        rec = _records(facts, fid)
        st = stake(facts, "mpiio", rec, _coll_weight(rec))
        if st.max < cfg.min_time_lost_share * facts.runtime:
            continue
        statement = f"Collective I/O on {r['name']} uses {problem}."
        evidence = [
            Metric("aggregators", "aggregators", agg.count, "", approximate=not agg.hinted),
            Metric("aggregators_source", "how the aggregator count is known", agg.source, "text"),
            Metric("stripe_count", "stripe count (OSTs)", S, "count"),
            Metric("stripe_size", "stripe size", s.stripe_size, "B"),
            Metric("per_ost", "aggregators per OST", per_ost, "x", approximate=not agg.hinted),
            Metric(
                "time_at_stake",
                "slowest rank's collective I/O time on the file",
                st.max,
                "s",
                approximate=not st.exact,
            ),
        ]
        layout = layout_of(facts, fid, cfg)
        want = cb_nodes_for(facts, fid, layout, cfg) if layout is not None else S
        count = layout.stripe_count if layout is not None else S
        restripe = layout is not None and layout.changes_count
        recs = [
            Recommendation(
                "hint",
                f"Set the aggregator count to a multiple of the stripe count (here {want}: "
                f"{_per_ost(want, count)}"
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
                [str(r["name"])],
                objective_of(float(r["bytes_written"]), float(r["bytes_read"])),
            ),
        ]
        yield finding(
            "MPIIO-AGGREGATORS-STRIPES",
            cfg,
            statement=statement,
            evidence=evidence,
            recommendations=recs,
            runtime=facts.runtime,
            time_lost=st.max,
            subjects=[
                Subject(
                    "file",
                    str(r["name"]),
                    (
                        Metric("aggregators", "aggregators", agg.count, ""),
                        Metric("stripe_count", "stripe count", S, "count"),
                    ),
                    hex_id(fid),
                )
            ],
            time_basis="upper bound: the slowest rank's collective I/O time on the file",
        )


@rule(
    "LUSTRE-STRIPE-COUNT",
    title="Large shared file on too few OSTs",
    family=FAMILY,
    config=("lustre_large_file_bytes", "lustre_bytes_per_ost", "lustre_max_suggested_stripes"),
)
def stripe_count(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """A large file shared by several ranks is striped over one OST (or far fewer than its size calls for)."""
    if not facts.striping:
        return
    hits: list[tuple[int, str, Striping, Layout, int]] = []
    shared, names = striped_files(facts)
    for fid, s in facts.striping.items():
        if fid not in names or shared.get(fid, 0.0) < 2:
            continue
        layout = layout_of(facts, fid, cfg)
        if layout is None or layout.file_size < cfg.lustre_large_file_bytes or not layout.changes_count:
            continue
        hits.append((fid, names[fid], s, layout, int(shared[fid])))
    if not hits:
        return
    per_rank = None
    stakes = {}
    outer = {layer: frame for layer, frame in facts.outermost().items() if len(frame)}
    outer_ids = {layer: np.asarray(frame["id"]).astype(np.uint64) for layer, frame in outer.items()}
    for fid, *_ in hits:
        st_sum = None
        for layer, frame in outer.items():
            sel = outer_ids[layer] == np.uint64(fid)
            if sel.any():
                st = stake(facts, layer, frame[sel], {"read": 1.0, "write": 1.0})
                st_sum = st.per_rank if st_sum is None else st_sum + st.per_rank
        stakes[fid] = float(st_sum.max()) if st_sum is not None else 0.0
        per_rank = st_sum if per_rank is None else (per_rank + st_sum if st_sum is not None else per_rank)
    hits.sort(key=lambda h: stakes[h[0]], reverse=True)
    lost = float(per_rank.max()) if per_rank is not None else 0.0
    fid, name, s, layout, nr = hits[0]
    size, want = layout.file_size, layout.stripe_count
    statement = (
        f"{name} ({fmt.nbytes(size)}, shared by {nr} ranks) is striped over {s.stripe_count} "
        f"OST{'s' if s.stripe_count > 1 else ''}: all of its data goes through "
        f"{'that one storage target' if s.stripe_count == 1 else 'those few storage targets'}, whatever the "
        f"number of ranks; a file this size wants about {want}."
        + (f" {len(hits) - 1} more file(s) likewise." if len(hits) > 1 else "")
    )
    p = participation(facts, fid)
    notes = []
    if p is not None and s.stripe_count == 1:
        notes.append(
            f"At the POSIX level, rank {p.top_rank} moves {fmt.pct(p.top_share)} of this file's bytes "
            f"({_ranks(p.effective)} its file-system I/O): with one OST, MPI-IO on Lustre uses one "
            "aggregator."
        )
    evidence = [
        Metric("stripe_count", "stripe count", s.stripe_count, "count"),
        Metric("stripe_size", "stripe size", s.stripe_size, "B"),
        Metric("file_size", "file size", size, "B"),
        Metric("ranks", "ranks sharing it", nr, "count"),
        Metric("suggested", "suggested stripe count", want, "count"),
        Metric("striping_source", "striping from", s.source, "text"),
        Metric("time_at_stake", "slowest rank's read and write time on these files", lost, "s"),
    ]
    subjects = [
        Subject(
            "file",
            n,
            (
                Metric("stripe_count", "stripe count", st_.stripe_count, "count"),
                Metric("file_size", "size", lay.file_size, "B"),
                Metric("suggested", "suggested stripe count", lay.stripe_count, "count"),
                Metric("time_at_stake", "slowest rank's time on it", stakes[f], "s"),
            ),
            hex_id(f),
        )
        for f, n, st_, lay, _ in hits
    ]
    cb = cb_nodes_for(facts, fid, layout, cfg)
    recs = [
        Recommendation(
            "striping",
            f"Stripe the output directory (new files inherit it) over {want} OSTs, "
            + (
                f"with {fmt.nbytes(layout.stripe_size)} stripes that its requests fit (LUSTRE-STRIPE-SIZE):"
                if layout.changes_size
                else f"keeping its {fmt.nbytes(layout.stripe_size)} stripes:"
            ),
            layout.command(),
        ),
        Recommendation(
            "hint",
            "Or set the striping when MPI-IO creates the file (ignored for an existing file):",
            layout.hints(),
        ),
        Recommendation("hint", f"Then match the aggregators to the OSTs ({_per_ost(cb, want)}):",
                       f"cb_nodes {cb}"),
        autotune(
            facts, "the stripe count and size and the aggregator count", [name], objective_for(facts, [fid])
        ),
    ]
    yield finding(
        "LUSTRE-STRIPE-COUNT",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=lost,
        subjects=subjects,
        subjects_total=len(hits),
        notes=notes,
        time_basis="upper bound: the slowest rank's read and write time on these files (more OSTs "
        "multiply the bandwidth available to them)",
    )


@rule(
    "LUSTRE-STRIPE-SIZE",
    title="Stripe size not matched to the request size",
    family=FAMILY,
    config=("small_request_bytes",),
)
def stripe_size(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Requests of several ranks to a shared Lustre file neither divide nor fill the stripe size."""
    posix = facts.layer("posix")
    if not facts.striping or not len(posix):
        return
    hits: list[tuple[int, Layout]] = []
    for fid in facts.striping:
        layout = layout_of(facts, fid, cfg)
        # judged only with two writers or more and requests that are not small (IO-SMALL-* covers those)
        if layout is None or layout.request <= 0 or fits(layout.request, layout.current.stripe_size):
            continue
        hits.append((fid, layout))
    if not hits:
        return
    stakes = {}
    for fid, _ in hits:
        stakes[fid] = stake(facts, "posix", _of_file(facts, "posix", fid), {"read": 1.0, "write": 1.0}).max
    hits.sort(key=lambda h: stakes[h[0]], reverse=True)
    fid, layout = hits[0]
    s, size, name = layout.current, layout.request, layout.name
    statement = (
        f"{'The most common' if layout.common else 'The mean'} request to {name} is {fmt.nbytes(size)} but "
        f"its stripe size is {fmt.nbytes(s.stripe_size)}: requests straddle stripe boundaries, so about "
        f"{fmt.plain(layout.writers)} ranks writing it share stripes and contend for their locks."
    )
    evidence = [
        Metric("request_size", "most common request" if layout.common else "mean request", size, "B"),
        Metric("stripe_size", "stripe size", s.stripe_size, "B"),
        Metric("stripe_count", "stripe count", s.stripe_count, "count"),
        Metric(
            "writers", "ranks doing its file-system I/O (participation)", layout.writers, "", approximate=True
        ),
        Metric("suggested_stripe_size", "suggested stripe size", layout.stripe_size, "B"),
        Metric("time_at_stake", "slowest rank's POSIX time on the file", stakes[fid], "s"),
    ]
    recs = _stripe_size_recs(layout) + [
        autotune(facts, "the stripe size and count", [name], objective_for(facts, [fid])),
    ]
    yield finding(
        "LUSTRE-STRIPE-SIZE",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=stakes[fid],
        subjects=[Subject("file", h[1].name, (), hex_id(h[0])) for h in hits],
        subjects_total=len(hits),
        time_basis="upper bound: the slowest rank's POSIX read and write time on the file",
    )


def _stripe_size_recs(layout: Layout) -> list[Recommendation]:
    """LUSTRE-STRIPE-SIZE's fix: the recommended layout when it changes the stripe size, else
    (requests no stripe size lfs accepts can fit) requests aligned to the stripe."""
    s, size = layout.current, layout.request
    if layout.changes_size:
        more = f" over {layout.stripe_count} OSTs (LUSTRE-STRIPE-COUNT)" if layout.changes_count else ""
        return [
            Recommendation(
                "striping",
                f"Use a stripe size of {fmt.nbytes(layout.stripe_size)}{more}, which requests of "
                f"{fmt.nbytes(size)} fit (lfs takes multiples of 64 KiB), or make the requests a multiple "
                f"of {fmt.nbytes(s.stripe_size)} and aligned to it:",
                layout.command(),
            ),
            Recommendation("hint", "With MPI-IO at file creation:", layout.hints()),
        ]
    return [
        Recommendation(
            "code",
            f"No stripe size fits requests of {int(size):,} bytes: lfs takes multiples of 64 KiB, and a "
            "smaller stripe only puts more boundaries inside the requests, so keep "
            f"{fmt.nbytes(s.stripe_size)} stripes"
            + (" (the stripe count is LUSTRE-STRIPE-COUNT's)" if layout.changes_count else "")
            + f" and make the requests multiples of {fmt.nbytes(s.stripe_size)} starting on a stripe: pad "
            "the records, align the library's objects (PnetCDF's nc_var_align_size, HDF5's "
            "H5Pset_alignment), or write collectively, so that the MPI-IO aggregators write whole "
            "stripes.",
        )
    ]


@rule(
    "MPIIO-CB-DISABLED",
    title="Collective buffering disabled on a non-contiguous pattern",
    family=FAMILY,
    config=("collective_max_request_bytes",),
)
def cb_disabled(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Collective calls run with collective buffering off: their small pieces reach the file system as is."""
    yield from merged(list(_cb_disabled(facts, cfg)), cfg, facts.runtime)


def _cb_disabled(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    files = _files(facts)
    if not len(files):
        return
    for i in np.flatnonzero(_sum(files, "coll_writes", "coll_reads") > 0):
        r = files.row(i)
        fid = int(r["id"])
        for kind in ("write", "read"):
            if float(r[f"coll_{kind}s"]) <= 0:
                continue
            key = f"romio_cb_{kind}"
            val = hint(facts, fid, key)
            fcoll = hint(facts, fid, "mca:fcoll")
            if val is not None and val.lower() == "disable":
                setting, origin = f"{key}=disable", hint_origin(facts, key, val)
            elif fcoll is not None and fcoll.lower() == "individual":
                setting, origin = "fcoll=individual (OMPIO)", "application"
            else:
                continue
            rec = _of_file(facts, "posix", fid)
            n = float(counter(rec, f"{kind}s").sum())
            b = float(counter(rec, "bytes_written" if kind == "write" else "bytes_read").sum())
            mean = b / n if n > 0 else float("nan")
            noncontig = bool(r["noncontig"])
            if not (noncontig or (n > 0 and mean < cfg.collective_max_request_bytes)):
                continue
            m = _records(facts, fid)
            st = stake(facts, "mpiio", m, {kind: _coll_weight(m, (kind,))[kind]})
            statement = (
                f"Collective {kind}s to {r['name']} run with {setting}: the {int(r['ranks'])} ranks' pieces "
                f"reach the file system separately ({fmt.count(n)} POSIX {kind}s, mean {fmt.nbytes(mean)}) "
                "instead of being merged into large contiguous requests."
            )
            evidence = [
                Metric("setting", "setting in effect", setting, "text"),
                Metric(
                    "origin",
                    "set by",
                    "pario run --hints (PARIO_HINTS)"
                    if origin == "PARIO_HINTS"
                    else "the application or its environment",
                    "text",
                ),
                Metric("collective_calls", f"collective {kind}s", float(r[f"coll_{kind}s"]), "count"),
                Metric("posix_requests", f"POSIX {kind}s beneath them", n, "count"),
                Metric("mean_posix_request", "mean POSIX request", mean, "B"),
                Metric("noncontig_view", "non-contiguous file view", "yes" if noncontig else "no", "text"),
                Metric(
                    "time_at_stake",
                    f"slowest rank's collective {kind} time",
                    st.max,
                    "s",
                    approximate=not st.exact,
                ),
            ]
            where = (
                "remove it from the hints file given to pario run --hints"
                if origin == "PARIO_HINTS"
                else "change it where the application sets its MPI_Info (or in ROMIO_HINTS)"
            )
            # ROMIO takes a hint; OMPIO's collective module is an MCA parameter of the launch
            romio = "romio" in setting
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
                    [str(r["name"])],
                    f"{kind}-bw",
                ),
            ]
            yield finding(
                "MPIIO-CB-DISABLED",
                cfg,
                statement=statement,
                evidence=evidence,
                recommendations=recs,
                runtime=facts.runtime,
                time_lost=st.max,
                subjects=[
                    Subject(
                        "file",
                        str(r["name"]),
                        (
                            Metric("setting", "setting", setting, "text"),
                            Metric("mean_posix_request", f"mean POSIX {kind}", mean, "B"),
                            Metric("time_at_stake", "slowest rank's collective time", st.max, "s"),
                        ),
                        hex_id(fid),
                    )
                ],
                time_basis="upper bound: the slowest rank's collective call time on the file",
            )


@rule(
    "MPIIO-CB-CYCLES",
    title="Collective writes cycle many times through the collective buffer",
    family=FAMILY,
    config=(
        "cb_cycles_min",
        "romio_cb_buffer_default_bytes",
        "ompio_buffer_default_bytes",
    ),
)
def cb_cycles(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Each collective write moves many buffer-fulls per aggregator, one after the other.

    Silent for a file pario's collective-write engine served (its cycles already overlap, or
    ran as the algorithm asked for): the rule is about the MPI library's two-phase writes.
    """
    yield from merged(list(_cb_cycles(facts, cfg)), cfg, facts.runtime)


def _cb_cycles(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    from pario.analysis.engine import engine_files

    files = _files(facts)
    if not len(files):
        return
    engine = {e.id: e for e in facts.cached("engine", lambda: engine_files(facts.profile))}
    writes = (files["coll_writes"] > 0) & (files["ranks"] > 0) & (files["bytes_written"] > 0)
    for i in np.flatnonzero(writes):
        r = files.row(i)
        fid = int(r["id"])
        served = engine.get(fid)
        if served is not None and served.calls:
            continue
        coll = float(r["coll_writes"])
        allw = coll + float(r["indep_writes"] + r["other_writes"])
        agg = aggregators(facts, fid)
        if agg is None or agg.bypassed:
            continue
        a = max(1.0, float(round(agg.count, 2)))
        comp = io_component(facts, fid)
        buf_hint = hint(facts, fid, "cb_buffer_size")
        try:
            buf = int(buf_hint) if buf_hint is not None else 0
        except ValueError:
            buf = 0
        buf_src = f"hint cb_buffer_size={buf}" if buf > 0 else ""
        if buf <= 0:
            buf = cfg.ompio_buffer_default_bytes if comp == "ompio" else cfg.romio_cb_buffer_default_bytes
            buf_src = f"{'OMPIO' if comp == 'ompio' else 'ROMIO'} default"
        calls = coll / float(r["ranks"])  # collective write calls per rank = collective operations
        coll_bytes = float(r["bytes_written"]) * coll / allw
        per_call = coll_bytes / max(calls, 1.0)
        cycles = math.ceil(per_call / (a * buf))
        if cycles < cfg.cb_cycles_min:
            continue
        m = _records(facts, fid)
        st = stake(facts, "mpiio", m, {"write": _coll_weight(m, ("write",))["write"]})
        lost = 0.5 * st.max
        statement = (
            f"Each collective write to {r['name']} moves {fmt.nbytes(per_call)} through {fmt.plain(a)} "
            f"aggregator{'s' if a != 1 else ''} with a {fmt.nbytes(buf)} buffer: {cycles} cycles per call, "
            "each a shuffle followed by a write, one after the other."
        )
        evidence = [
            Metric(
                "cycles", "buffer cycles per collective write", cycles, "count", approximate=not agg.hinted
            ),
            Metric(
                "bytes_per_call", "bytes per collective write (all ranks)", per_call, "B", approximate=True
            ),
            Metric("calls", "collective writes per rank", calls, ""),
            Metric("aggregators", "aggregators", a, "", approximate=not agg.hinted),
            Metric("aggregators_source", "how the aggregator count is known", agg.source, "text"),
            Metric("cb_buffer_size", "collective buffer per aggregator", buf, "B"),
            Metric("buffer_source", "buffer size from", buf_src, "text"),
            Metric(
                "time_at_stake", "slowest rank's collective write time", st.max, "s", approximate=not st.exact
            ),
        ]
        bigger = min(cycles, 4) * buf
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
        recs = [
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
                [str(r["name"])],
            ),
        ]
        yield finding(
            "MPIIO-CB-CYCLES",
            cfg,
            statement=statement,
            evidence=evidence,
            recommendations=recs,
            runtime=facts.runtime,
            time_lost=lost,
            subjects=[
                Subject(
                    "file",
                    str(r["name"]),
                    (
                        Metric("cycles", "cycles per call", cycles, "count"),
                        Metric("bytes_per_call", "bytes per call", per_call, "B"),
                        Metric("aggregators", "aggregators", a, ""),
                        Metric("cb_buffer_size", "buffer", buf, "B"),
                    ),
                    hex_id(fid),
                )
            ],
            time_basis=(
                "upper bound: half the slowest rank's collective write time on the file (overlap hides at "
                "most the shorter of shuffle and write)"
            ),
        )


@rule(
    "MPIIO-INDEPENDENT-OVERHEAD",
    title="Independent MPI-IO calls take far longer than the file-system calls beneath them",
    family=FAMILY,
    config=(
        "mpiio_overhead_min_share",
        "mpiio_overhead_min_per_call",
        "independent_min_share",
        "min_time_lost_share",
    ),
)
def independent_overhead(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Most of the time of independent MPI-IO calls is spent outside their POSIX calls (locks, sieving)."""
    files = _files(facts)
    if not len(files) or not len(facts.layer("posix")):
        return
    hits = []
    indep_n = _sum(files, "indep_reads", "indep_writes")
    alln_n = indep_n + _sum(files, "coll_reads", "coll_writes", "other_reads", "other_writes")
    mostly = alln_n > 0
    mostly[mostly] = indep_n[mostly] / alln_n[mostly] >= cfg.independent_min_share
    for i in np.flatnonzero(mostly):
        r = files.row(i)
        fid, indep = int(r["id"]), float(indep_n[i])
        prec = _of_file(facts, "posix", fid)
        p_bytes = float((counter(prec, "bytes_read") + counter(prec, "bytes_written")).sum())
        m_bytes = float(r["bytes_read"] + r["bytes_written"])
        if not len(prec) or m_bytes <= 0 or p_bytes < 0.5 * m_bytes:
            continue  # no file-system records to compare with (partial log)
        m_time = float(r["read_time"] + r["write_time"])
        p_time = float((counter(prec, "read_time") + counter(prec, "write_time")).sum())
        if m_time <= 0 or (m_time - p_time) / m_time < cfg.mpiio_overhead_min_share:
            continue
        if (m_time - p_time) / indep < cfg.mpiio_overhead_min_per_call:
            continue  # a preempted rank on a busy machine, not locks or sieving
        rw = {"read": 1.0, "write": 1.0}
        per_rank = (
            stake(facts, "mpiio", _records(facts, fid), rw).per_rank
            - stake(facts, "posix", prec, rw).per_rank
        )
        lost = float(np.clip(per_rank, 0.0, None).max())
        if lost < cfg.min_time_lost_share * facts.runtime:
            continue
        split = {k: (float(r[f"{k}_time"]), float(counter(prec, f"{k}_time").sum()))
                 for k in ("write", "read")}
        hits.append(
            (
                fid,
                str(r["name"]),
                m_time,
                p_time,
                lost,
                fs_of(facts, fid, str(r["name"])),
                int(r["ranks"]),
                split,
            )
        )
    if not hits:
        return
    hits.sort(key=lambda h: h[4], reverse=True)
    fid, name, m_time, p_time, lost, fs, nr, split = hits[0]
    share = (m_time - p_time) / m_time
    kind = max(split, key=lambda k: split[k][0] - split[k][1])
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
        Metric("ranks", "ranks", nr, "count"),
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
    yield finding(
        "MPIIO-INDEPENDENT-OVERHEAD",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=lost,
        subjects=[
            Subject(
                "file",
                h[1],
                (
                    Metric("mpiio_time", "MPI-IO time", h[2], "s"),
                    Metric("posix_time", "POSIX time", h[3], "s"),
                ),
                hex_id(h[0]),
            )
            for h in hits
        ],
        time_basis="upper bound: the largest per-rank MPI-IO time not spent in POSIX calls",
    )


@rule(
    "MPIIO-DEFAULT-HINTS",
    title="MPI-IO runs on default settings that tuning could beat",
    family=FAMILY,
    config=("default_hints_min_share",),
)
def default_hints(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """MPI-IO takes a noticeable share of the run and no MPI-IO setting was chosen.  Files whose
    collective writes pario's engine served are not on the library's defaults: left out."""
    if facts.source != "pario":
        return  # Darshan does not record the hints in effect: nothing to say about them
    from pario.analysis.engine import engine_files

    files = _files(facts)
    if not len(files):
        return
    engines = facts.cached("engine", lambda: engine_files(facts.profile))
    served = np.array([e.id for e in engines if e.calls], dtype=np.uint64)
    files = files[~np.isin(files["id"].astype(np.uint64), served)]
    if not len(files):
        return
    m = facts.layer("mpiio")
    m = m[~np.isin(_ids(facts, "mpiio"), served)]
    st = stake(facts, "mpiio", m, {"read": 1.0, "write": 1.0})
    share = st.max / facts.runtime if facts.runtime > 0 else 0.0
    if share < cfg.default_hints_min_share:
        return
    tuned = sorted({k for fid in files["id"] for k in facts.hints.get(int(fid), {}) if k in TUNING_KEYS})
    if tuned:
        return
    comps = sorted({io_component(facts, int(fid)) or "unknown" for fid in files["id"]})
    statement = (
        f"MPI-IO reads and writes take {fmt.pct(share)} of the run ({fmt.seconds(st.max)} on the slowest "
        f"rank) and run with the library's defaults ({', '.join(comps)}; no aggregator, buffer or striping "
        "hint set). The I/O component and its hints often change MPI-IO bandwidth by several times for the "
        "same pattern."
    )
    evidence = [
        Metric("mpiio_share", "slowest rank's MPI-IO time / run time", share, "share"),
        Metric("mpiio_time", "slowest rank's MPI-IO read and write time", st.max, "s"),
        Metric("component", "MPI-IO component", ", ".join(comps), "text"),
        Metric("files", "MPI-IO files", len(files), "count"),
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
            [str(n) for n in files["name"]],
            objective_of(float(np.sum(files["bytes_written"])), float(np.sum(files["bytes_read"]))),
        ),
    ]
    yield finding(
        "MPIIO-DEFAULT-HINTS",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        time_lost=None,
        time_basis="not estimated: what tuning gains is only known by measuring it",
    )
