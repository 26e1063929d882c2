"""Time rules: the run is I/O-bound (with how its I/O time splits between reads, writes and metadata).
Detectors only: the words are in time_words.py."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field

from pario.analysis.breakdown import is_io_bound
from pario.analysis.pop import pop_metrics
from pario.diagnosis import time_words as words
from pario.diagnosis.columns import counter, mpiio_files
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.layout import Layout, layout_of
from pario.diagnosis.registry import RULES, rule
from pario.model import LIBRARY_LAYERS
from pario.model.rankio import time_records

FAMILY = "time"


@record
class IOBound(Hit):
    """``time_lost``: the mean per-rank I/O time."""

    share: float = 0.0  # mean I/O time / run time
    efficiency: float | None = None  # POP's I/O efficiency (None: the log has no MPI time)
    no_efficiency: str = ""  # ... why it has none
    max_io: float = 0.0  # the slowest rank's I/O time
    max_exact: bool = True  # ... exact
    kinds: Mapping[str, float] = field(default_factory=dict)  # mean read, write and metadata time per rank
    main: str = ""  # the kind that takes most of it
    bytes_read: float = 0.0  # at the outermost layer (an I/O library's bytes asked)
    bytes_written: float = 0.0
    rates: Mapping[str, float | None] = field(default_factory=dict)  # per process, by kind (None: none)
    others: tuple[str, ...] = ()  # the ids of the other findings of the run, the costliest first
    mpiio: bool = False  # the run does MPI-IO
    layout: Layout | None = None  # without MPI-IO: the layout recommended for a Lustre file


@rule(
    "TIME-IO-BOUND",
    title="The run is I/O-bound",
    family=FAMILY,
    config=("io_bound_max_efficiency", "io_bound_min_share"),
    after_others=True,
    words=words.io_bound,
)
def io_bound(facts: Facts, cfg: RuleConfig) -> Iterator[IOBound]:
    """I/O takes a large share of the run (POP I/O efficiency below the rule of thumb)."""
    t = facts.times
    T = facts.runtime
    if T <= 0 or t.nranks == 0:
        return
    mean_io = float(t.io.mean())
    share = mean_io / T
    if share < cfg.io_bound_min_share:  # the cheap test first: most runs stop here
        return
    pop = pop_metrics(t)
    ioe = pop.io_efficiency.value
    # the one definition, the report's verdict's too
    limits = {"min_share": cfg.io_bound_min_share, "max_efficiency": cfg.io_bound_max_efficiency}
    if not is_io_bound(share, ioe, **limits):
        return
    if not facts.words:  # what follows is the words'
        yield IOBound(time_lost=mean_io)
        return
    kinds = {k: float(t.io_of(k).mean()) for k in ("read", "write", "meta")}
    b_read, b_write = _outer_bytes(facts)
    rates = {
        k: (b / float(t.io_of(k).sum()) if b > 0 and float(t.io_of(k).sum()) > 0 else None)
        for k, b in (("read", b_read), ("write", b_write))
    }
    mpiio = bool(len(mpiio_files(facts)))
    yield IOBound(
        time_lost=mean_io, share=share, efficiency=ioe, no_efficiency=pop.io_efficiency.reason,
        max_io=float(t.io.max()), max_exact=t.exact_max("io"), kinds=kinds,
        main=max(kinds, key=lambda k: kinds[k]), bytes_read=b_read, bytes_written=b_write, rates=rates,
        others=tuple(other_findings(facts, cfg)), mpiio=mpiio,
        layout=None if mpiio else _lustre_layout(facts, cfg),
    )


def _outer_bytes(facts: Facts) -> tuple[float, float]:
    """The bytes read and written at the outermost layer, as the report's I/O table: an I/O
    library's datasets and variables (the bytes asked) instead of the MPI-IO and POSIX records
    beneath them."""
    libraries = {k: facts.profile.layer(k) for k in LIBRARY_LAYERS}
    outer = list(time_records({**facts.files, **libraries}).values())
    b_read = sum(float(counter(f, "bytes_read").sum()) for f in outer)
    b_write = sum(float(counter(f, "bytes_written").sum()) for f in outer)
    return b_read, b_write


def other_findings(facts: Facts, cfg: RuleConfig) -> list[str]:
    """The ids of the findings the other rules make on this run (data caveats, launcher logs and
    computation aside: they do not say where I/O time goes).

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
    compute = {r.id for r in RULES.values() if r.time_class == "compute"}
    found = [f for f in made
             if f.id not in skip | compute and families.get(f.id) not in ("data", "run")]
    # in the order the diagnosis lists them: the costliest first
    found.sort(key=lambda f: (f.time_lost is None, -(f.time_lost or 0.0), f.id))
    return list(dict.fromkeys(f.id for f in found))


def _lustre_layout(facts: Facts, cfg: RuleConfig) -> Layout | None:
    """The recommended layout of the largest Lustre file whose layout it changes (None: none)."""
    layouts = (layout_of(facts, fid, cfg) for fid in facts.striping)
    changed = [lay for lay in layouts if lay is not None and lay.changed and lay.name]
    return max(changed, key=lambda lay: lay.file_size) if changed else None
