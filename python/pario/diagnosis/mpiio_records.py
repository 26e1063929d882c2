"""What the MPI-IO and Lustre rules (mpiio.py, lustre.py) read of the records: a file's records,
the MPI-IO files, the share of collective calls, and how many ranks aggregate a file's collective
I/O.

The rules read tables with NumPy (no pandas: ``pario diagnose`` must not import it).
Records taken from ``Facts`` are selected with a mask and handed back to its functions
(``counter``, ``stake``, ``nranks``) as they came.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

import pario.diagnosis._fmt as fmt
from pario.diagnosis.columns import counter, layer_values, mpiio_files
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts
from pario.diagnosis.file_facts import hint, hint_origin, io_component, participation
from pario.diagnosis.layout import Layout, aggregators_for
from pario.table import Table, as_table

if TYPE_CHECKING:
    from typing import TypeAlias

    import pandas as pd

    #: Records as ``Facts.layer`` gives them (Tables; a DataFrame built by hand works too).
    Records: TypeAlias = Table | pd.DataFrame


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


def ranks_doing(k: float) -> str:
    """'1 rank does' / '3.2 ranks do'."""
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
            return Aggregators(
                float(n), f"{src}; measured: {ranks_doing(p.effective)} the file-system I/O", True
            )
        return Aggregators(
            p.effective,
            f"measured: {ranks_doing(p.effective)} the file-system I/O although {src}: collective buffering "
            "was not used",
            False,
            True,
        )
    if measured and p is not None:
        return Aggregators(
            p.effective,
            f"measured: {ranks_doing(p.effective)} the file-system I/O (participation ratio of bytes per "
            "rank in the POSIX records)",
            False,
        )
    s = facts.striping.get(fid)
    if s is not None and io_component(facts, fid) != "ompio":
        return Aggregators(float(s.stripe_count), "ROMIO's Lustre default: one aggregator per OST", False)
    return None


def cb_nodes_for(facts: Facts, fid: int, layout: Layout, cfg: RuleConfig) -> int:
    """The aggregator count to recommend with a file's layout (the same in every finding about it):
    a multiple of its recommended stripe count, as many per OST as the aggregators in use give."""
    agg = aggregators(facts, fid)
    return aggregators_for(layout.stripe_count, agg.count if agg is not None else None,
                           cfg.aggregators_per_ost_max)


def coll_weight(m_rec: Records, kinds: tuple[str, ...] = ("read", "write")) -> dict[str, np.ndarray]:
    """Per MPI-IO record and kind: the share of its calls that are collective."""
    out = {}
    for k in kinds:
        coll = counter(m_rec, f"coll_{k}s") + counter(m_rec, f"split_{k}s")
        alln = (coll + counter(m_rec, f"indep_{k}s") + counter(m_rec, f"nb_{k}s")
                + counter(m_rec, f"shared_{k}s"))
        out[k] = np.where(alln > 0, coll / np.maximum(alln, 1.0), 0.0)
    return out


def ids_of(facts: Facts, layer: str) -> np.ndarray:
    """Per record of ``facts.layer(layer)``: its file id as uint64 (cached)."""
    return facts.cached(
        ("mpiio rules: ids", layer), lambda: np.asarray(layer_values(facts, layer, "id")).astype(np.uint64)
    )


def of_file(facts: Facts, layer: str, fid: int) -> Records:
    """The records of file ``fid`` in ``facts.layer(layer)``."""
    return facts.layer(layer)[ids_of(facts, layer) == np.uint64(fid)]


def mpiio_records(facts: Facts, fid: int) -> Records:
    """The MPI-IO records of file ``fid``."""
    return of_file(facts, "mpiio", fid)


def files_table(facts: Facts) -> Table:
    """:func:`mpiio_files` as a Table, one row per file, its id in column "id" (cached)."""

    def make() -> Table:
        t = as_table(mpiio_files(facts))
        if len(t) and "id" not in t:  # ids 0..n-1 are taken for row positions and dropped
            t = Table({"id": np.arange(len(t), dtype=np.uint64), **dict(t.items())})
        return t

    return facts.cached("mpiio rules: files", make)


def column_sum(t: Table, *names: str) -> np.ndarray:
    """Per row: the sum of the columns ``names``."""
    out = np.asarray(t[names[0]], dtype=np.float64)
    for name in names[1:]:
        out = out + t[name]
    return out
