"""I/O metrics: time, bytes, operations, rates, request sizes and I/O load balance.

Two views: ``overall`` counts every I/O call once, at its outermost layer
(MPI-IO time includes the POSIX calls made inside it), from the per-rank
time classes; ``layers`` shows what each layer saw, nested calls included,
from the file records.  docs/metrics.md defines every quantity.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from pario.analysis.times import RankTimes
from pario.model import ALL_LAYERS, LAYERS, SIZE_BUCKETS, Profile, size_columns
from pario.model import LAYER_LABELS as MODEL_LABELS
from pario.model.layers import LIBRARY_TABLE, OPS
from pario.model.rankio import (
    LIBRARY_DATA_LAYERS,
    LIBRARY_FILE_LAYERS,
    SHARED_NOTE,
    ProfileIO,
    RankIO,
    float_values,
    layer_members,
    library_file_time,
    rank_io,
)
from pario.table import Table, as_table, distinct
from pario.values import Value, ratio

LAYER_LABELS: dict[str, str] = {"all": "All layers", **MODEL_LABELS}

#: A file's layer in the files table: a library file's is the library.
FILE_LAYER_LABELS: dict[str, str] = {**LAYER_LABELS, **{lib.files: lib.label for lib in LIBRARY_TABLE}}

BYTES_OF = {"read": "bytes_read", "write": "bytes_written"}
#: A library file row's bytes: its datasets' or variables' (counted in their row, not twice).
IN_DATA_ROW = {lib.files: f"counted in the {MODEL_LABELS[lib.data]} row" for lib in LIBRARY_TABLE}


@dataclass(frozen=True)
class KindIO:
    """Reads, writes or metadata of one layer (or of all layers).

    Rates and request sizes are None for metadata.
    """

    kind: str
    time_total: Value
    time_mean: Value
    time_max: Value
    share_of_runtime: Value
    load_balance: Value
    ops: Value
    bytes: Value | None = None
    mean_request: Value | None = None
    rate_per_process: Value | None = None
    rate_aggregate: Value | None = None


@dataclass(frozen=True)
class LayerIO:
    layer: str
    label: str
    files: int
    read: KindIO
    write: KindIO
    meta: KindIO
    total: KindIO
    #: request counts per size bucket (model.SIZE_BUCKETS), None if the layer has no histogram
    histogram_read: tuple[int, ...] | None = None
    histogram_write: tuple[int, ...] | None = None

    def kinds(self) -> tuple[KindIO, KindIO, KindIO, KindIO]:
        return (self.read, self.write, self.meta, self.total)


@dataclass(frozen=True)
class IOSummary:
    has_io: bool
    overall: LayerIO
    layers: tuple[LayerIO, ...]
    buckets: tuple[str, ...] = SIZE_BUCKETS


def _sum(records: Table, cols: tuple[str, ...]) -> float:
    present = [c for c in cols if c in records]
    if not present or not len(records):
        return 0.0
    # the columns one after the other, in one sum (whole numbers add up exactly in any order
    # while the total stays below 2**53, the usual counts: integers need no float copy first)
    columns = [np.asarray(records[c]) for c in present]
    if all(v.dtype.kind in "iu" for v in columns):
        ints = columns[0] if len(columns) == 1 else np.concatenate(columns)
        total = float(np.maximum(ints, 0).sum(dtype=np.float64))
        if total < _EXACT:
            return total
    return float(np.clip(np.concatenate([float_values(v, 0.0) for v in columns]), 0.0, None).sum())


#: below this, sums of whole numbers as floats are exact
_EXACT = float(2**53)


def _ops(tables: Mapping[str, Table], kind: str) -> float:
    return sum(_sum(records, OPS[layer][kind]) for layer, records in tables.items() if layer in OPS)


def _kind(kind: str, per_rank: np.ndarray, runtime: float, ops: float, nbytes: float | None, *,
          exact_max: bool, exact_ranks: bool) -> KindIO:
    """Metrics of one kind from per-rank times and totals."""
    n = len(per_rank)
    total = float(per_rank.sum()) if n else 0.0
    mx = float(per_rank.max()) if n else 0.0
    approx_max = not exact_max
    note = SHARED_NOTE if approx_max else ""
    nothing = {"read": "no reads", "write": "no writes", "meta": "no metadata calls", "total": "no I/O"}[kind]
    mean = Value.of(total / n, "s") if n else Value.unavailable("no rank data", "s")
    # the data kinds' bytes, request size and rates (None for metadata and the total)
    sizes: list[Value | None] = [None] * 4
    if nbytes is not None:
        no_bytes = f"no bytes {'read' if kind == 'read' else 'written'}"
        sizes = [
            Value.of(nbytes, "B"),
            ratio(nbytes, ops, unit="B", when_zero=f"{nothing} recorded"),
            (ratio(nbytes, total, unit="B/s", when_zero=f"no time recorded in {kind}s")
             if nbytes > 0 else Value.unavailable(no_bytes, "B/s")),
            (ratio(nbytes, mx, unit="B/s", when_zero=f"no time recorded in {kind}s", approximate=approx_max,
                   note=note)
             if nbytes > 0 else Value.unavailable(no_bytes, "B/s")),
        ]
    return KindIO(
        kind=kind,
        time_total=Value.of(total, "s"),
        time_mean=mean,
        time_max=Value.of(mx, "s", approximate=approx_max, note=note),
        share_of_runtime=ratio(total / n if n else 0.0, runtime, when_zero="the run time is zero"),
        load_balance=ratio(total / n if n else 0.0, mx, when_zero=f"{nothing} recorded",
                           approximate=approx_max, note=note),
        ops=Value.of(ops, "calls"),
        bytes=sizes[0],
        mean_request=sizes[1],
        rate_per_process=sizes[2],
        rate_aggregate=sizes[3],
    )


def layer_histogram(table: Table, layer: str, direction: str) -> tuple[int, ...] | None:
    """Requests per size bucket (``SIZE_BUCKETS``) of the records ``table`` of ``layer`` read
    or written (``direction``), None when the layer keeps no histogram."""
    cols = size_columns(layer, direction)
    if not any(c in table for c in cols):
        return None
    present = [np.asarray(table[c]) for c in cols if c in table]
    if len(table) and len(present) == len(cols) and all(v.dtype.kind in "iu" for v in present):
        # the usual counts: every bucket at once (whole numbers add up exactly below 2**53)
        totals = np.maximum(np.stack(present), 0).sum(axis=1, dtype=np.float64)
        if float(totals.max()) < _EXACT:
            return tuple(int(t) for t in totals.tolist())
    return tuple(int(_sum(table, (c,))) for c in cols)


_OWN_CALLS = {
    lib.files: (MODEL_LABELS[lib.files], lib.file_calls, MODEL_LABELS[lib.data]) for lib in LIBRARY_TABLE
}


def library_layers_note(layers: tuple[LayerIO, ...]) -> str:
    """What the library rows of the per-layer tables hold (empty without library layers)."""
    present = [_OWN_CALLS[lay.layer] for lay in layers if lay.layer in _OWN_CALLS]
    if not present:
        return ""
    own = "; ".join(f"{label}: their own calls ({calls}), their reads, writes and bytes are in the "
                    f"{data} row" for label, calls, data in present)
    return (f"{own}. The MPI-IO and POSIX rows include the calls the library makes beneath "
            "(the Libraries table compares the two).")


def _in_data_row(k: KindIO, note: str) -> KindIO:
    """A library file row's read or write: its bytes (and so sizes and rates) are its datasets'
    or variables', shown in their row only."""
    gone = {f: Value.unavailable(note, getattr(k, f).unit) for f in
            ("bytes", "mean_request", "rate_per_process", "rate_aggregate") if getattr(k, f) is not None}
    return KindIO(**{**{f: getattr(k, f) for f in k.__dataclass_fields__}, **gone})


def _layer(layer: str, records: Table, rio: RankIO, runtime: float) -> LayerIO:
    """One layer's row.  A library file layer (``h5f``, ``pnetcdf_file``) shows the files' own
    calls only (create/open/flush/close; a Darshan PnetCDF file's waits): their reads and writes
    are their datasets' or variables' row, as in Darshan's H5F records (``rio`` is then of
    :func:`library_file_time`'s records)."""
    t = rio.table
    by_layer = {layer: records}
    ops = {kind: _ops(by_layer, kind) for kind in ("read", "write", "meta")}
    kinds = {}
    for kind in ("read", "write", "meta"):
        col = f"{kind}_time"
        nbytes = _sum(records, (BYTES_OF[kind],)) if kind in BYTES_OF else None
        kinds[kind] = _kind(kind, t[col], runtime, ops[kind], nbytes,
                            exact_max=rio.exact_max[col], exact_ranks=rio.exact_ranks[col])
        if layer in IN_DATA_ROW and kind in BYTES_OF:
            kinds[kind] = _in_data_row(kinds[kind], IN_DATA_ROW[layer])
    all_ops = sum(ops.values())
    total = _kind("total", t["time"], runtime, all_ops, None,
                  exact_max=rio.exact_max["time"], exact_ranks=rio.exact_ranks["time"])
    nfiles = len(distinct(records["id"])) if "id" in records and len(records) else 0
    hist = {d: layer_histogram(records, layer, d) for d in ("read", "write")}
    return LayerIO(layer, LAYER_LABELS.get(layer, layer), nfiles, kinds["read"], kinds["write"],
                   kinds["meta"], total, hist["read"], hist["write"])


def io_summary(profile: Profile, rt: RankTimes) -> IOSummary:
    """I/O metrics of a run, overall (outermost layer) and per layer."""
    io = profile.per_rank_io()
    files = {layer: as_table(profile.layer(layer)) for layer in ALL_LAYERS}
    has_io = any(len(f) for f in files.values())
    layers = tuple(_layer(layer, table, _layer_io(profile, io, layer, table), rt.runtime)
                   for layer, table in files.items() if len(table))
    # every call once, at its outermost layer: an I/O library's datasets and variables (the
    # bytes the application asked for) instead of the MPI-IO and POSIX records beneath them
    outer = {k: v for k, v in io.time_records(ALL_LAYERS).items() if len(v)}
    # a library file's own calls are counted from its record's counters (opens, creates...)
    counted = {k: files[k] if k in LIBRARY_FILE_LAYERS else v for k, v in outer.items()}
    ops = {kind: _ops(counted, kind) for kind in ("read", "write", "meta")}
    kinds = {}
    for kind in ("read", "write", "meta"):
        nbytes = sum(_sum(f, (BYTES_OF[kind],)) for f in outer.values()) if kind in BYTES_OF else None
        kinds[kind] = _kind(kind, rt.io_of(kind), rt.runtime, ops[kind], nbytes,
                            exact_max=rt.exact_max(kind), exact_ranks=rt.exact_ranks(kind))
    total = _kind("total", rt.io, rt.runtime, sum(ops.values()), None,
                  exact_max=rt.exact_max("io"), exact_ranks=rt.exact_ranks("io"))
    # files only (a dataset's or variable's record is not a file)
    ids = [np.asarray(f["id"]).astype(np.uint64) for k, f in outer.items() if k not in LIBRARY_DATA_LAYERS]
    nfiles = len(distinct(np.concatenate(ids))) if ids else 0
    overall = LayerIO("all", LAYER_LABELS["all"], nfiles, kinds["read"], kinds["write"], kinds["meta"], total)
    return IOSummary(has_io, overall, layers)


def _layer_io(profile: Profile, io: ProfileIO, layer: str, records: Table) -> RankIO:
    """Per-rank I/O of a layer's row: a library file layer's own calls only."""
    if layer not in LIBRARY_FILE_LAYERS:
        return io.layer(layer)
    members = layer_members(profile.file_ranks, layer)
    return rank_io(library_file_time(records), profile.job.nprocs, members)


def outermost_bytes_per_rank(profile: Profile) -> Table:
    """Bytes read and written per rank (row i: rank i) at the outermost layer (estimated for
    shared records)."""
    nprocs = profile.job.nprocs
    io = profile.per_rank_io()
    per_layer, _ = io.outermost()
    # the layers in LAYERS' order (the order of the sums), those without outermost records left out
    parts = [per_layer[layer].table for layer in LAYERS
             if layer in per_layer and len(io.outer_records[layer])]
    if not parts:
        return Table({"bytes_read": np.zeros(nprocs), "bytes_written": np.zeros(nprocs)}, length=nprocs)
    total = parts[0][["bytes_read", "bytes_written"]].copy()
    for part in parts[1:]:
        for c in ("bytes_read", "bytes_written"):
            total[c] = total[c] + part[c]
    return total
