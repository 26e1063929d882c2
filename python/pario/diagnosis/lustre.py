"""Lustre striping rules: a large shared file on too few OSTs, a stripe size its requests do not
fit (docs/diagnosis.md, "MPI-IO and Lustre"; mpiio.py imports this module where these rules take
their place in the catalogue).  Detectors only: the words are in lustre_words.py."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from pario.diagnosis import lustre_words as words
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts, Striping
from pario.diagnosis.file_facts import Participation, participation
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.layout import Layout, fits, layout_of, striped_files
from pario.diagnosis.mpiio_records import cb_nodes_for, of_file
from pario.diagnosis.registry import rule
from pario.diagnosis.stake import stake

FAMILY = "mpiio"


@record
class NarrowFile:
    """A large shared Lustre file on fewer OSTs than its size calls for."""

    fid: int
    name: str
    striping: Striping
    layout: Layout  # the recommended one
    ranks: int  # sharing it
    at_stake: float  # the slowest rank's read and write time on it


@record
class StripeCount(Hit):
    files: tuple[NarrowFile, ...] = ()  # the costliest first; the rest is about the first
    participation: Participation | None = None
    cb_nodes: int = 0  # the aggregators to use with the recommended layout


def _narrow_files(facts: Facts, cfg: RuleConfig) -> list[tuple[int, str, Striping, Layout, int]]:
    """The large shared files whose recommended layout has more stripes."""
    hits: list[tuple[int, str, Striping, Layout, int]] = []
    shared, names = striped_files(facts)
    for fid, s in facts.striping.items():
        if fid not in names or shared.get(fid, 0.0) < 2:
            continue
        layout = layout_of(facts, fid, cfg)
        if layout is None or layout.file_size < cfg.lustre_large_file_bytes or not layout.changes_count:
            continue
        hits.append((fid, names[fid], s, layout, int(shared[fid])))
    return hits


def _stakes(facts: Facts, fids: list[int]) -> tuple[dict[int, float], float]:
    """Per file: the slowest rank's read and write time on it; and on all of them."""
    per_rank = None
    stakes = {}
    outer = {layer: records for layer, records in facts.outermost().items() if len(records)}
    outer_ids = {layer: np.asarray(records["id"]).astype(np.uint64) for layer, records in outer.items()}
    for fid in fids:
        st_sum = None
        for layer, records in outer.items():
            sel = outer_ids[layer] == np.uint64(fid)
            if sel.any():
                st = stake(facts, layer, records[sel], {"read": 1.0, "write": 1.0})
                st_sum = st.per_rank if st_sum is None else st_sum + st.per_rank
        stakes[fid] = float(st_sum.max()) if st_sum is not None else 0.0
        per_rank = st_sum if per_rank is None else (per_rank + st_sum if st_sum is not None else per_rank)
    return stakes, float(per_rank.max()) if per_rank is not None else 0.0


@rule(
    "LUSTRE-STRIPE-COUNT",
    title="Large shared file on too few OSTs",
    family=FAMILY,
    config=("lustre_large_file_bytes", "lustre_bytes_per_ost", "lustre_max_suggested_stripes"),
    words=words.stripe_count,
)
def stripe_count(facts: Facts, cfg: RuleConfig) -> Iterator[StripeCount]:
    """A large file shared by several ranks is striped over one OST (or far fewer than its size calls for)."""
    if not facts.striping:
        return
    hits = _narrow_files(facts, cfg)
    if not hits:
        return
    stakes, lost = _stakes(facts, [h[0] for h in hits])
    hits.sort(key=lambda h: stakes[h[0]], reverse=True)
    fid, _, _, layout, _ = hits[0]
    yield StripeCount(
        time_lost=lost, files=tuple(NarrowFile(*h, stakes[h[0]]) for h in hits),
        participation=participation(facts, fid), cb_nodes=cb_nodes_for(facts, fid, layout, cfg),
    )


@record
class StripeSize(Hit):
    files: tuple[tuple[int, Layout], ...] = ()  # (id, recommended layout), the costliest first


@rule(
    "LUSTRE-STRIPE-SIZE",
    title="Stripe size not matched to the request size",
    family=FAMILY,
    config=("small_request_bytes",),
    words=words.stripe_size,
)
def stripe_size(facts: Facts, cfg: RuleConfig) -> Iterator[StripeSize]:
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
        stakes[fid] = stake(facts, "posix", of_file(facts, "posix", fid), {"read": 1.0, "write": 1.0}).max
    hits.sort(key=lambda h: stakes[h[0]], reverse=True)
    yield StripeSize(time_lost=stakes[hits[0][0]], files=tuple(hits))
