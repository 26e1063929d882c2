"""Column helpers of the rules: a counter as floats, operations and small requests per record,
the ranks of a record, and the same read through a :class:`Facts` cache per layer."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pario.diagnosis._table_ops import per_file
from pario.diagnosis.facts import BYTES_COLS, Facts, Records
from pario.model import size_columns
from pario.model.layers import OPS
from pario.model.rankio import counter_column
from pario.table import Table, distinct


def counter(records: Records, name: str) -> np.ndarray:
    """A counter as floats; missing columns, NaN and Darshan's -1 ("unknown") become 0
    (:func:`pario.model.rankio.counter_column`)."""
    return counter_column(records, name)


CounterGetter = Callable[[str], np.ndarray]


def ops(records: Records, layer: str, kind: str, column: CounterGetter | None = None) -> np.ndarray:
    """Per record: operations of ``kind`` (read, write, meta) of ``layer``.

    ``column(name)`` gives ``counter(records, name)`` (from :func:`layer_counter`'s cache, say).
    """
    get = column or (lambda c: counter(records, c))
    out = np.zeros(len(records))
    for c in OPS[layer][kind]:
        out += get(c)
    return out


def small_ops(
    records: Records, layer: str, kind: str, limit: int, column: CounterGetter | None = None
) -> np.ndarray:
    """Per record: requests of ``kind`` in the histogram buckets at or below ``limit`` bytes."""
    from pario.diagnosis.config import SMALL_BOUNDS

    get = column or (lambda c: counter(records, c))
    cols = size_columns(layer, kind)
    n = SMALL_BOUNDS.index(limit) + 1 if limit in SMALL_BOUNDS else 0
    out = np.zeros(len(records))
    for c in cols[:n]:
        out += get(c)
    return out


#: Upper bounds (bytes) of the ten request-size buckets; a bucket's lower bound is the previous one + 1.
BUCKET_UPPER: tuple[float, ...] = (
    100,
    1 << 10,
    10 << 10,
    100 << 10,
    1 << 20,
    4 << 20,
    10 << 20,
    100 << 20,
    1 << 30,
    float("inf"),
)


def small_bytes_bound(
    records: Records, layer: str, kind: str, limit: int, column: CounterGetter | None = None
) -> np.ndarray:
    """Per record: an upper bound of the bytes moved by small requests.

    The smaller of: small requests x their buckets' upper bounds, and the bytes moved
    minus the least the other requests can carry (their buckets' lower bounds).
    """
    get = column or (lambda c: counter(records, c))
    cols = size_columns(layer, kind)
    small = np.zeros(len(records))
    large_min = np.zeros(len(records))
    lower = 0.0
    for c, upper in zip(cols, BUCKET_UPPER, strict=True):
        n = get(c)
        if upper <= limit:
            small += n * upper
        else:
            large_min += n * lower
        lower = upper + 1
    nbytes = get(BYTES_COLS[kind])
    return np.clip(np.minimum(small, nbytes - large_min), 0.0, None)


def nranks(records: Records, nprocs: int) -> np.ndarray:
    """Per record: ranks that touched it (1 for a rank's own record)."""
    n = len(records)
    rank = np.asarray(records["rank"], dtype=np.int64) if "rank" in records else np.zeros(n, np.int64)
    shared = counter(records, "nranks")
    return np.where(rank >= 0, 1.0, np.where(shared > 0, shared, float(nprocs)))


# cached per layer: each column is converted once however many rules read it


def layer_counter(facts: Facts, layer: str, name: str) -> np.ndarray:
    """``counter(facts.layer(layer), name)``, cached (read-only)."""
    return facts.cached(("counter", layer, name), lambda: counter(facts.layer(layer), name))


def layer_counter_getter(facts: Facts, layer: str) -> CounterGetter:
    """The ``column`` argument of :func:`ops` and friends for ``facts.layer(layer)``."""
    return lambda name: layer_counter(facts, layer, name)


def layer_ops(facts: Facts, layer: str, kind: str) -> np.ndarray:
    """``ops(facts.layer(layer), layer, kind)``, cached (read-only)."""
    return facts.cached(
        ("ops", layer, kind), lambda: ops(facts.layer(layer), layer, kind, layer_counter_getter(facts, layer))
    )


def layer_values(facts: Facts, layer: str, name: str) -> np.ndarray:
    """``facts.layer(layer)[name]``, cached (a read-only view; ids, ranks, names)."""
    # a view: the cache makes it read-only, not the table's own column
    return facts.cached(("values", layer, name), lambda: np.asarray(facts.layer(layer)[name]).view())


def layer_nranks(facts: Facts, layer: str) -> np.ndarray:
    """``nranks(facts.layer(layer), facts.nprocs)``, cached (read-only)."""
    return facts.cached(("nranks", layer), lambda: nranks(facts.layer(layer), facts.nprocs))


def layer_ids(facts: Facts, layer: str) -> np.ndarray:
    """The file ids of ``facts.layer(layer)``, sorted and distinct (cached)."""
    return facts.cached(("ids", layer), lambda: distinct(layer_values(facts, layer, "id")))


def layer_unique(facts: Facts, layer: str) -> bool:
    """No file has two records in ``facts.layer(layer)`` (cached)."""
    return len(layer_ids(facts, layer)) == len(layer_values(facts, layer, "id"))


def outer_unique(facts: Facts) -> bool | None:
    """No file has two records among :meth:`Facts.outermost`'s (None: not known without a look).

    Outermost POSIX records exclude the MPI-IO files; STDIO files may have POSIX records too.
    """
    layers = [layer for layer, table in facts.outermost().items() if len(table)]
    if "stdio" in layers and len(layers) > 1:
        return None
    return all(layer_unique(facts, layer) for layer in layers)


def mpiio_files(facts: Facts) -> Table:
    """One row per MPI-IO file, its id in the first column "id": ranks, independent and
    collective requests, bytes, times (computed once per Facts: share, do not modify)."""
    return facts.cached("mpiio_files", lambda: _mpiio_files(facts))


def _mpiio_files(facts: Facts) -> Table:
    m = facts.layer("mpiio")
    if not len(m):
        return Table()
    records = {
        "name": np.asarray(m["name"]),
        "ranks": nranks(m, facts.nprocs),
        "indep_reads": counter(m, "indep_reads"),
        "indep_writes": counter(m, "indep_writes"),
        "coll_reads": counter(m, "coll_reads") + counter(m, "split_reads"),
        "coll_writes": counter(m, "coll_writes") + counter(m, "split_writes"),
        "other_reads": counter(m, "nb_reads") + counter(m, "shared_reads"),
        "other_writes": counter(m, "nb_writes") + counter(m, "shared_writes"),
        "bytes_read": counter(m, "bytes_read"),
        "bytes_written": counter(m, "bytes_written"),
        "read_time": counter(m, "read_time"),
        "write_time": counter(m, "write_time"),
        "noncontig": counter(m, "noncontig_view"),
        "views": counter(m, "views"),
    }
    agg = {c: (c, "sum") for c in records}
    agg.update(name=("name", "first"), noncontig=("noncontig", "max"))
    return per_file(np.asarray(m["id"]), records, agg)
