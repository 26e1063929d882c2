"""The words of the Lustre striping rules (lustre.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.commands import autotune, objective_for
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, Subject, file_subject, hex_id
from pario.diagnosis.hits import Words
from pario.diagnosis.mpiio_records import ranks_doing
from pario.diagnosis.mpiio_words import per_ost

if TYPE_CHECKING:
    from pario.diagnosis.facts import Facts
    from pario.diagnosis.layout import Layout
    from pario.diagnosis.lustre import StripeCount, StripeSize


def stripe_count(hit: StripeCount, facts: Facts, cfg: RuleConfig) -> Words:
    top, p = hit.files[0], hit.participation
    lost = hit.time_lost if hit.time_lost is not None else 0.0
    fid, name, s, layout, nr = top.fid, top.name, top.striping, top.layout, top.ranks
    size, want = layout.file_size, layout.stripe_count
    statement = (
        f"{name} ({fmt.nbytes(size)}, shared by {nr} ranks) is striped over {s.stripe_count} "
        f"OST{'s' if s.stripe_count > 1 else ''}: all of its data goes through "
        f"{'that one storage target' if s.stripe_count == 1 else 'those few storage targets'}, whatever the "
        f"number of ranks; a file this size wants about {want}."
        + (f" {len(hit.files) - 1} more file(s) likewise." if len(hit.files) > 1 else "")
    )
    notes = []
    if p is not None and s.stripe_count == 1:
        notes.append(
            f"At the POSIX level, rank {p.top_rank} moves {fmt.pct(p.top_share)} of this file's bytes "
            f"({ranks_doing(p.effective)} its file-system I/O): with one OST, MPI-IO on Lustre uses one "
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
        file_subject(
            f.name,
            f.fid,
            Metric("stripe_count", "stripe count", f.striping.stripe_count, "count"),
            Metric("file_size", "size", f.layout.file_size, "B"),
            Metric("suggested", "suggested stripe count", f.layout.stripe_count, "count"),
            Metric("time_at_stake", "slowest rank's time on it", f.at_stake, "s"),
        )
        for f in hit.files
    ]
    cb = hit.cb_nodes
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
        Recommendation("hint", f"Then match the aggregators to the OSTs ({per_ost(cb, want)}):",
                       f"cb_nodes {cb}"),
        autotune(
            facts, "the stripe count and size and the aggregator count", [name], objective_for(facts, [fid])
        ),
    ]
    return Words(
        statement,
        evidence,
        recs,
        subjects=subjects,
        subjects_total=len(hit.files),
        notes=notes,
        time_basis="upper bound: the slowest rank's read and write time on these files (more OSTs "
        "multiply the bandwidth available to them)",
    )


def stripe_size(hit: StripeSize, facts: Facts, cfg: RuleConfig) -> Words:
    fid, layout = hit.files[0]
    at_stake = hit.time_lost if hit.time_lost is not None else 0.0
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
        Metric("time_at_stake", "slowest rank's POSIX time on the file", at_stake, "s"),
    ]
    recs = _stripe_size_recs(layout) + [
        autotune(facts, "the stripe size and count", [name], objective_for(facts, [fid])),
    ]
    return Words(
        statement,
        evidence,
        recs,
        subjects=[Subject("file", h[1].name, (), hex_id(h[0])) for h in hit.files],
        subjects_total=len(hit.files),
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
