"""MPI-IO settings and Lustre striping rules, from the hints actually in effect.

The hints in effect (``Profile.hints``, recorded after MPI_File_open) are the
application's settings, including the ``mca:*`` entries that say which Open
MPI component ran.  pario's own injection (``pario run --hints``) is in effect
too, but a recommendation then says to change the hints file, not the code.
Darshan's own log-writing hints (job metadata) are never used.  Where hints
are unknown (Darshan logs), the number of aggregators is measured from the
POSIX records beneath MPI-IO: the participation ratio of bytes per rank.

What the rules read of the records is in mpiio_records.py; the Lustre striping
rules are in lustre.py, which this module imports where they take their place
in the catalogue.  Detectors only: the words are in mpiio_words.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import field
from typing import Any

import numpy as np

from pario.diagnosis import mpiio_words as words
from pario.diagnosis.columns import counter
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts, Striping
from pario.diagnosis.file_facts import (
    Participation,
    fs_of,
    hint,
    hint_origin,
    io_component,
    participation,
)
from pario.diagnosis.findings import Finding
from pario.diagnosis.hits import Hit, Words, record
from pario.diagnosis.layout import Layout, layout_of
from pario.diagnosis.mpiio_records import (
    Aggregators,
    aggregators,
    cb_nodes_for,
    coll_weight,
    column_sum,
    files_table,
    ids_of,
    mpiio_records,
    of_file,
)
from pario.diagnosis.registry import explained, merged, rule
from pario.diagnosis.stake import stake

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


def _merged(rule_id: str, detect: Callable[[Facts, RuleConfig], Iterable[Any]],
            explain: Callable[[Any, Any, RuleConfig], Words], facts: Facts, cfg: RuleConfig) -> list[Finding]:
    """The findings of a rule's per-file hits as one (:func:`~pario.diagnosis.registry.merged`:
    the costliest file leads, the others are listed)."""
    return merged(list(explained(rule_id, detect, explain)(facts, cfg)), cfg, facts.runtime)


# ------------------------------------------------------------------------------------------
# MPIIO-SINGLE-AGGREGATOR
# ------------------------------------------------------------------------------------------


@record
class SingleFile:
    """A large shared file whose collective I/O goes through a single aggregator."""

    fid: int
    name: str
    ranks: int
    bytes: float  # through MPI-IO
    at_stake: float  # the slowest rank's collective I/O time on it


@record
class SingleAggregator(Hit):
    files: tuple[SingleFile, ...] = ()  # the costliest first; the rest is about the first
    aggregators: Aggregators | None = None
    participation: Participation | None = None
    exact: bool = True  # the slowest rank's collective time (time_lost) is exact
    collective_calls: float = 0.0
    bytes_written: float = 0.0
    bytes_read: float = 0.0
    striping: Striping | None = None  # on Lustre
    injected_cb_nodes: bool = False  # cb_nodes came from pario run --hints
    layout: Layout | None = None  # the recommended layout (Lustre)
    cb_nodes: int = 0  # the aggregators to use
    component: str = ""  # the MPI-IO component ("romio", "ompio", "": unknown)


def _single(facts: Facts, fid: int) -> tuple[Aggregators | None, Participation | None] | None:
    """The file's aggregators and participation, when one aggregator does its collective I/O."""
    agg = aggregators(facts, fid)
    p = participation(facts, fid)
    single = agg is not None and (agg.count <= 1.0 if agg.hinted else False)
    measured_single = p is not None and p.effective <= 1.5 and p.top_share >= 0.9
    return (agg, p) if single or measured_single else None


@rule(
    "MPIIO-SINGLE-AGGREGATOR",
    title="A single aggregator for a large shared file",
    family=FAMILY,
    config=("large_shared_file_bytes", "single_aggregator_min_ranks"),
    words=words.single_aggregator,
)
def single_aggregator(facts: Facts, cfg: RuleConfig) -> Iterator[SingleAggregator]:
    """Collective I/O on a large file shared by many ranks goes through one aggregator."""
    files = files_table(facts)
    hits = []
    if not len(files):
        return
    coll_n = column_sum(files, "coll_writes", "coll_reads")
    nbytes_n = column_sum(files, "bytes_written", "bytes_read")
    large = (
        (files["ranks"] >= cfg.single_aggregator_min_ranks)
        & (coll_n > 0)
        & (nbytes_n >= cfg.large_shared_file_bytes)
    )
    for i in np.flatnonzero(large):
        r = files.row(i)
        fid = int(r["id"])
        found = _single(facts, fid)
        if found is None:
            continue
        rec = mpiio_records(facts, fid)
        st = stake(facts, "mpiio", rec, coll_weight(rec))
        hits.append((fid, r, *found, st, float(nbytes_n[i])))
    if not hits:
        return
    hits.sort(key=lambda h: h[4].max, reverse=True)
    fid, r, agg, p, st, _ = hits[0]
    if not facts.words:  # what follows is the words'
        yield SingleAggregator(time_lost=st.max)
        return
    cbh = hint(facts, fid, "cb_nodes")
    layout = layout_of(facts, fid, cfg)
    yield SingleAggregator(
        time_lost=st.max, aggregators=agg, participation=p, exact=st.exact,
        files=tuple(SingleFile(h[0], str(h[1]["name"]), int(h[1]["ranks"]), h[5], h[4].max) for h in hits),
        collective_calls=float(r["coll_writes"] + r["coll_reads"]), bytes_written=float(r["bytes_written"]),
        bytes_read=float(r["bytes_read"]), striping=facts.striping.get(fid),
        injected_cb_nodes=cbh is not None and hint_origin(facts, "cb_nodes", cbh) == "PARIO_HINTS",
        layout=layout, component=io_component(facts, fid),
        cb_nodes=cb_nodes_for(facts, fid, layout, cfg) if layout is not None else min(int(r["ranks"]), 8),
    )


# ------------------------------------------------------------------------------------------
# MPIIO-AGGREGATORS-STRIPES
# ------------------------------------------------------------------------------------------


@record
class AggregatorsStripes(Hit):
    """One file whose aggregators do not match its stripes."""

    fid: int = 0
    name: str = ""
    aggregators: Aggregators = Aggregators(0.0, "", False)
    striping: Striping = Striping(0, 0, "")
    problem: str = ""  # "fewer" than the OSTs, "more" per OST than aggregators_per_ost_max, "uneven"
    exact: bool = True  # the slowest rank's collective time (time_lost) is exact
    layout: Layout | None = None  # the recommended layout
    cb_nodes: int = 0  # the aggregators to use
    bytes_written: float = 0.0
    bytes_read: float = 0.0


def _mismatch(agg: Aggregators, s: Striping, cfg: RuleConfig) -> str:
    """How the aggregators do not match the stripes ("": they do)."""
    a = int(round(agg.count))
    S = s.stripe_count
    if a < S:
        return "fewer"
    if a / S > cfg.aggregators_per_ost_max:
        return "more"
    return "uneven" if a % S else ""


@rule(
    "MPIIO-AGGREGATORS-STRIPES",
    title="Aggregators not matched to the stripe count",
    family=FAMILY,
    config=("aggregators_per_ost_max", "large_shared_file_bytes", "min_time_lost_share"),
)
def aggregators_vs_stripes(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """The number of aggregators is not a small multiple of the file's stripe count."""
    yield from _merged("MPIIO-AGGREGATORS-STRIPES", _aggregators_vs_stripes, words.aggregators_stripes, facts,
                       cfg)


def _aggregators_vs_stripes(facts: Facts, cfg: RuleConfig) -> Iterator[AggregatorsStripes]:
    files = files_table(facts)
    if not len(files) or not facts.striping:
        return
    large = (column_sum(files, "coll_writes", "coll_reads") > 0) & (
        column_sum(files, "bytes_written", "bytes_read") >= cfg.large_shared_file_bytes
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
        problem = _mismatch(agg, s, cfg)
        if not problem:
            continue
        rec = mpiio_records(facts, fid)
        st = stake(facts, "mpiio", rec, coll_weight(rec))
        if st.max < cfg.min_time_lost_share * facts.runtime:
            continue
        layout = layout_of(facts, fid, cfg)
        yield AggregatorsStripes(
            time_lost=st.max, fid=fid, name=str(r["name"]), aggregators=agg, striping=s, problem=problem,
            exact=st.exact, layout=layout,
            cb_nodes=cb_nodes_for(facts, fid, layout, cfg) if layout is not None else s.stripe_count,
            bytes_written=float(r["bytes_written"]), bytes_read=float(r["bytes_read"]),
        )


# ------------------------------------------------------------------------------------------
# LUSTRE-STRIPE-COUNT, LUSTRE-STRIPE-SIZE (lustre.py: its rules take their place in the catalogue here)
# ------------------------------------------------------------------------------------------

from pario.diagnosis import lustre as _lustre  # noqa: E402, F401

# ------------------------------------------------------------------------------------------
# MPIIO-CB-DISABLED
# ------------------------------------------------------------------------------------------


@record
class CbDisabled(Hit):
    """Collective calls of one direction to one file with collective buffering off."""

    fid: int = 0
    name: str = ""
    kind: str = "write"
    romio: bool = True  # romio_cb_<kind>=disable (else OMPIO's fcoll=individual)
    injected: bool = False  # the setting came from pario run --hints
    ranks: int = 0
    collective: float = 0.0  # collective calls of that direction
    requests: float = 0.0  # POSIX requests beneath them
    mean: float = 0.0  # their mean size
    noncontig: bool = False  # a non-contiguous file view
    exact: bool = True  # the slowest rank's collective time (time_lost) is exact


def _cb_off(facts: Facts, fid: int, kind: str) -> tuple[bool, bool] | None:
    """Whether collective buffering is off for ``kind`` on the file: by ROMIO's hint (True) or
    OMPIO's fcoll (False), and whether pario injected the hint; None: it is not."""
    key = f"romio_cb_{kind}"
    val = hint(facts, fid, key)
    fcoll = hint(facts, fid, "mca:fcoll")
    if val is not None and val.lower() == "disable":
        return True, hint_origin(facts, key, val) == "PARIO_HINTS"
    if fcoll is not None and fcoll.lower() == "individual":
        return False, False
    return None


@rule(
    "MPIIO-CB-DISABLED",
    title="Collective buffering disabled on a non-contiguous pattern",
    family=FAMILY,
    config=("collective_max_request_bytes",),
)
def cb_disabled(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Collective calls run with collective buffering off: their small pieces reach the file system as is."""
    yield from _merged("MPIIO-CB-DISABLED", _cb_disabled, words.cb_disabled, facts, cfg)


def _cb_disabled(facts: Facts, cfg: RuleConfig) -> Iterator[CbDisabled]:
    files = files_table(facts)
    if not len(files):
        return
    for i in np.flatnonzero(column_sum(files, "coll_writes", "coll_reads") > 0):
        r = files.row(i)
        fid = int(r["id"])
        for kind in ("write", "read"):
            if float(r[f"coll_{kind}s"]) <= 0:
                continue
            off = _cb_off(facts, fid, kind)
            if off is None:
                continue
            rec = of_file(facts, "posix", fid)
            n = float(counter(rec, f"{kind}s").sum())
            b = float(counter(rec, "bytes_written" if kind == "write" else "bytes_read").sum())
            mean = b / n if n > 0 else float("nan")
            noncontig = bool(r["noncontig"])
            if not (noncontig or (n > 0 and mean < cfg.collective_max_request_bytes)):
                continue
            m = mpiio_records(facts, fid)
            st = stake(facts, "mpiio", m, {kind: coll_weight(m, (kind,))[kind]})
            yield CbDisabled(
                time_lost=st.max, fid=fid, name=str(r["name"]), kind=kind, romio=off[0], injected=off[1],
                ranks=int(r["ranks"]), collective=float(r[f"coll_{kind}s"]), requests=n, mean=mean,
                noncontig=noncontig, exact=st.exact,
            )


# ------------------------------------------------------------------------------------------
# MPIIO-CB-CYCLES
# ------------------------------------------------------------------------------------------


@record
class CbCycles(Hit):
    """Collective writes to one file that cycle many times through the collective buffer."""

    fid: int = 0
    name: str = ""
    cycles: int = 0  # buffer cycles per collective write
    per_call: float = 0.0  # bytes per collective write (all ranks)
    calls: float = 0.0  # collective writes per rank
    aggregators: Aggregators = Aggregators(0.0, "", False)
    count: float = 0.0  # the aggregators, at least 1
    buffer: int = 0  # collective buffer per aggregator
    buffer_hinted: bool = False  # ... from the hint cb_buffer_size (else the component's default)
    component: str = ""  # the MPI-IO component ("romio", "ompio", "": unknown)
    at_stake: float = 0.0  # the slowest rank's collective write time on the file
    exact: bool = True  # ... exact
    engine: Any = None  # pario's collective-write engine on the file (an EngineFile), if selected


def _buffer(facts: Facts, fid: int, comp: str, cfg: RuleConfig) -> tuple[int, bool]:
    """The collective buffer per aggregator, and whether a hint sets it."""
    buf_hint = hint(facts, fid, "cb_buffer_size")
    try:
        buf = int(buf_hint) if buf_hint is not None else 0
    except ValueError:
        buf = 0
    if buf > 0:
        return buf, True
    return (cfg.ompio_buffer_default_bytes if comp == "ompio" else cfg.romio_cb_buffer_default_bytes), False


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
    yield from _merged("MPIIO-CB-CYCLES", _cb_cycles, words.cb_cycles, facts, cfg)


def _cb_cycles(facts: Facts, cfg: RuleConfig) -> Iterator[CbCycles]:
    from pario.analysis.engine import engine_files

    files = files_table(facts)
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
        buf, hinted = _buffer(facts, fid, comp, cfg)
        calls = coll / float(r["ranks"])  # collective write calls per rank = collective operations
        coll_bytes = float(r["bytes_written"]) * coll / allw
        per_call = coll_bytes / max(calls, 1.0)
        cycles = math.ceil(per_call / (a * buf))
        if cycles < cfg.cb_cycles_min:
            continue
        m = mpiio_records(facts, fid)
        st = stake(facts, "mpiio", m, {"write": coll_weight(m, ("write",))["write"]})
        yield CbCycles(
            time_lost=0.5 * st.max, fid=fid, name=str(r["name"]), cycles=cycles, per_call=per_call,
            calls=calls, aggregators=agg, count=a, buffer=buf, buffer_hinted=hinted, component=comp,
            at_stake=st.max, exact=st.exact, engine=served,
        )


# ------------------------------------------------------------------------------------------
# MPIIO-INDEPENDENT-OVERHEAD
# ------------------------------------------------------------------------------------------


@record
class OverheadFile:
    fid: int
    name: str
    mpiio_time: float  # MPI-IO read and write time (all ranks)
    posix_time: float  # POSIX read and write time beneath it
    at_stake: float  # the largest per-rank time outside the POSIX calls


@record
class IndependentOverhead(Hit):
    files: tuple[OverheadFile, ...] = ()  # the costliest first; the rest is about the first
    kind: str = "write"  # its direction with the most time outside the POSIX calls
    split: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # kind -> (MPI-IO, POSIX) time
    fs: str = ""  # its file system ("": unknown)
    ranks: int = 0


def _overhead(facts: Facts, cfg: RuleConfig, r: dict[str, Any], indep: float) -> tuple[
        OverheadFile, dict[str, tuple[float, float]]] | None:
    """A file whose MPI-IO reads and writes spend most of their time outside the POSIX calls
    beneath them, and its (MPI-IO, POSIX) time per direction (None: they do not, or it cannot
    be told)."""
    fid = int(r["id"])
    prec = of_file(facts, "posix", fid)
    p_bytes = float((counter(prec, "bytes_read") + counter(prec, "bytes_written")).sum())
    m_bytes = float(r["bytes_read"] + r["bytes_written"])
    if not len(prec) or m_bytes <= 0 or p_bytes < 0.5 * m_bytes:
        return None  # no file-system records to compare with (partial log)
    m_time = float(r["read_time"] + r["write_time"])
    p_time = float((counter(prec, "read_time") + counter(prec, "write_time")).sum())
    if m_time <= 0 or (m_time - p_time) / m_time < cfg.mpiio_overhead_min_share:
        return None
    if (m_time - p_time) / indep < cfg.mpiio_overhead_min_per_call:
        return None  # a preempted rank on a busy machine, not locks or sieving
    rw = {"read": 1.0, "write": 1.0}
    per_rank = (
        stake(facts, "mpiio", mpiio_records(facts, fid), rw).per_rank
        - stake(facts, "posix", prec, rw).per_rank
    )
    lost = float(np.clip(per_rank, 0.0, None).max())
    if lost < cfg.min_time_lost_share * facts.runtime:
        return None
    split = {k: (float(r[f"{k}_time"]), float(counter(prec, f"{k}_time").sum())) for k in ("write", "read")}
    return OverheadFile(fid, str(r["name"]), m_time, p_time, lost), split


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
    words=words.independent_overhead,
)
def independent_overhead(facts: Facts, cfg: RuleConfig) -> Iterator[IndependentOverhead]:
    """Most of the time of independent MPI-IO calls is spent outside their POSIX calls (locks, sieving)."""
    files = files_table(facts)
    if not len(files) or not len(facts.layer("posix")):
        return
    hits = []
    indep_n = column_sum(files, "indep_reads", "indep_writes")
    alln_n = indep_n + column_sum(files, "coll_reads", "coll_writes", "other_reads", "other_writes")
    mostly = alln_n > 0
    mostly[mostly] = indep_n[mostly] / alln_n[mostly] >= cfg.independent_min_share
    for i in np.flatnonzero(mostly):
        r = files.row(i)
        found = _overhead(facts, cfg, r, float(indep_n[i]))
        if found is not None:
            hits.append((*found, int(r["ranks"])))
    if not hits:
        return
    hits.sort(key=lambda h: h[0].at_stake, reverse=True)
    top, split, nr = hits[0]
    yield IndependentOverhead(
        time_lost=top.at_stake, files=tuple(h[0] for h in hits), split=split, ranks=nr,
        kind=max(split, key=lambda k: split[k][0] - split[k][1]), fs=fs_of(facts, top.fid, top.name),
    )


# ------------------------------------------------------------------------------------------
# MPIIO-DEFAULT-HINTS
# ------------------------------------------------------------------------------------------


@record
class DefaultHints(Hit):
    share: float = 0.0  # the slowest rank's MPI-IO read and write time / run time
    at_stake: float = 0.0  # that time
    components: tuple[str, ...] = ()  # the MPI-IO components ("unknown" where not known), sorted
    names: tuple[str, ...] = ()  # the MPI-IO files
    bytes_written: float = 0.0  # to them
    bytes_read: float = 0.0


@rule(
    "MPIIO-DEFAULT-HINTS",
    title="MPI-IO runs on default settings that tuning could beat",
    family=FAMILY,
    config=("default_hints_min_share",),
    words=words.default_hints,
)
def default_hints(facts: Facts, cfg: RuleConfig) -> Iterator[DefaultHints]:
    """MPI-IO takes a noticeable share of the run and no MPI-IO setting was chosen.  Files whose
    collective writes pario's engine served are not on the library's defaults: left out."""
    if facts.source != "pario":
        return  # Darshan does not record the hints in effect: nothing to say about them
    from pario.analysis.engine import engine_files

    files = files_table(facts)
    if not len(files):
        return
    engines = facts.cached("engine", lambda: engine_files(facts.profile))
    served = np.array([e.id for e in engines if e.calls], dtype=np.uint64)
    files = files[~np.isin(files["id"].astype(np.uint64), served)]
    if not len(files):
        return
    m = facts.layer("mpiio")
    m = m[~np.isin(ids_of(facts, "mpiio"), served)]
    st = stake(facts, "mpiio", m, {"read": 1.0, "write": 1.0})
    share = st.max / facts.runtime if facts.runtime > 0 else 0.0
    if share < cfg.default_hints_min_share:
        return
    tuned = sorted({k for fid in files["id"] for k in facts.hints.get(int(fid), {}) if k in TUNING_KEYS})
    if tuned:
        return
    yield DefaultHints(
        share=share, at_stake=st.max, names=tuple(str(n) for n in files["name"]),
        components=tuple(sorted({io_component(facts, int(fid)) or "unknown" for fid in files["id"]})),
        bytes_written=float(np.sum(files["bytes_written"])), bytes_read=float(np.sum(files["bytes_read"])),
    )
