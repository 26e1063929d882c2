"""Interface rules: independent MPI-IO on shared files, file per process, STDIO bulk data, metadata load.

Detectors only: the words are in interfaces_words.py."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np

from pario.diagnosis import interfaces_words as words
from pario.diagnosis._table_ops import per_file, sort_order
from pario.diagnosis.columns import (
    counter,
    layer_counter,
    layer_ops,
    layer_values,
    mpiio_files,
    nranks,
    ops,
    outer_unique,
)
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts
from pario.diagnosis.file_rows import files_of, part
from pario.diagnosis.findings import Severity
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.layout import directory_key, quoted_directory
from pario.diagnosis.registry import rule
from pario.diagnosis.stake import Stake, stake, stake_rows
from pario.table import Table, distinct, isin

FAMILY = "interfaces"


@record
class IndependentFile:
    """One direction of a shared file accessed with independent MPI-IO calls."""

    fid: int
    name: str
    kind: str  # "write" or "read"
    independent: float  # independent calls
    calls: float  # all calls of that direction
    mean: float  # mean request size
    noncontig: bool  # a non-contiguous file view
    ranks: int
    time: float  # the time of the independent calls (all ranks)


@record
class IndependentShared(Hit):
    files: tuple[IndependentFile, ...] = ()  # the costliest first
    exact: bool = True  # the time at stake (time_lost) is exact


def _independent_files(files: Table, cfg: RuleConfig) -> list[IndependentFile]:
    """The directions of shared MPI-IO files done mostly independently, in requests collective
    I/O would merge (small ones, or a non-contiguous view), the costliest first."""
    out = []
    cand = files[
        (files["ranks"] >= 2)
        & ((files["indep_writes"] + files["indep_reads"]) >= cfg.independent_min_requests)
    ]
    for r in cand.rows():
        for kind in ("write", "read"):
            indep = float(r[f"indep_{kind}s"])
            alln = indep + float(r[f"coll_{kind}s"]) + float(r[f"other_{kind}s"])
            nbytes = float(r["bytes_written" if kind == "write" else "bytes_read"])
            if alln <= 0 or indep < cfg.independent_min_requests or indep / alln < cfg.independent_min_share:
                continue
            mean = nbytes / alln
            if mean >= cfg.collective_max_request_bytes and not r["noncontig"]:
                continue
            out.append(IndependentFile(int(r["id"]), str(r["name"]), kind, indep, alln, mean,
                                       bool(r["noncontig"]), int(r["ranks"]),
                                       float(r[f"{kind}_time"]) * indep / alln))
    out.sort(key=lambda f: f.time, reverse=True)
    return out


def _independent_stake(facts: Facts, files: list[IndependentFile]) -> Stake:
    """Per rank: its time in the independent calls on these files."""
    m = facts.layer("mpiio")
    m_ids = np.asarray(m["id"])
    sel = isin(m_ids, np.array(sorted({f.fid for f in files}), dtype=m_ids.dtype))
    allops = {k: ops(m, "mpiio", k) for k in ("read", "write")}
    w = {
        k: np.where(allops[k][sel] > 0, counter(m, f"indep_{k}s")[sel] / np.maximum(allops[k][sel], 1.0), 0.0)
        for k in {f.kind for f in files}
    }
    return stake(facts, "mpiio", m[sel], w)


@rule(
    "IFACE-INDEPENDENT-SHARED",
    title="Independent MPI-IO on a shared file where collective I/O would merge requests",
    family=FAMILY,
    config=("independent_min_share", "independent_min_requests", "collective_max_request_bytes"),
    words=words.independent_shared,
)
def independent_shared(facts: Facts, cfg: RuleConfig) -> Iterator[IndependentShared]:
    """Ranks access a shared file with independent MPI-IO calls in pieces that collective I/O would merge."""
    files = mpiio_files(facts)
    if not len(files):
        return
    found = _independent_files(files, cfg)
    if not found:
        return
    st = _independent_stake(facts, found)
    yield IndependentShared(time_lost=st.max, files=tuple(found), exact=st.exact)


@record
class FilePerProcess(Hit):
    files: int = 0  # files written by a single rank
    owners: int = 0  # ranks writing their own files
    metadata_ops: float = 0.0  # metadata calls on them (all ranks)
    metadata_time: float = 0.0  # metadata time on them (all ranks)
    directory: str = ""  # the directory most of them are in, shell-quoted
    lustre: bool = False  # some of them are on Lustre


def _place_of(facts: Facts, ids: np.ndarray) -> tuple[str, bool]:
    """The directory most of the files ``ids`` are in (shell-quoted), and whether any is on Lustre."""
    dirs: Counter[str | None] = Counter()  # by directory_key: distinct keys quote distinctly
    for layer, records in facts.outermost().items():
        if len(records):
            keep = part(layer_values(facts, layer, "id"), facts.outer_rows(layer))
            names = np.asarray(records["name"])[isin(keep, ids)]
            dirs.update(directory_key(str(n)) for n in names)
    striped = np.fromiter(facts.striping, dtype=np.uint64, count=len(facts.striping))
    lustre = bool(len(striped)) and bool(isin(np.asarray(ids).astype(np.uint64), striped).any())
    return (quoted_directory(dirs.most_common(1)[0][0]) if dirs else "."), lustre


def _outer_records(facts: Facts) -> tuple[list[dict[str, np.ndarray]], list[tuple[str, np.ndarray | None]]]:
    """Per outermost layer with records: the columns the file-per-process rule reads, and which of
    the layer's rows they are (None: all)."""
    rows, parts = [], []
    for layer, table in facts.outermost().items():
        if not len(table):
            continue
        keep = facts.outer_rows(layer)
        rows.append(
            {
                "id": part(layer_values(facts, layer, "id"), keep),
                "rank": np.asarray(table["rank"], dtype=np.int64),
                "bytes": part(layer_counter(facts, layer, "bytes_read"), keep)
                + part(layer_counter(facts, layer, "bytes_written"), keep),
                "meta": part(layer_counter(facts, layer, "meta_time"), keep),
                "opens": part(layer_ops(facts, layer, "meta"), keep),
            }
        )
        parts.append((layer, keep))
    return rows, parts


def _own_stake(facts: Facts, rows: list[dict[str, Any]], parts: list[tuple[str, Any]], all_own: Table,
               mine: np.ndarray) -> float:
    """The slowest rank's metadata time on the files of ``all_own`` picked by ``mine``."""
    # one record per file: the files are the records
    if len(all_own) == sum(len(r["id"]) for r in rows):
        sel_all = mine
    else:
        sel_all = isin(np.concatenate([r["id"] for r in rows]), all_own["id"][mine])
    stakes, start = [], 0
    for r, (layer, keep) in zip(rows, parts, strict=True):
        sel = sel_all[start : start + len(r["id"])]
        start += len(r["id"])
        if sel.any():
            pos = np.flatnonzero(sel) if keep is None else np.flatnonzero(keep)[sel]
            stakes.append(stake_rows(facts, layer, pos, {"meta": 1.0}))
    return float(np.sum([s.per_rank for s in stakes], axis=0).max())


@rule(
    "IFACE-FILE-PER-PROCESS",
    title="File per process at a scale where metadata load hurts",
    family=FAMILY,
    config=("fpp_min_files",),
    words=words.file_per_process,
)
def file_per_process(facts: Facts, cfg: RuleConfig) -> Iterator[FilePerProcess]:
    """Each rank writes its own files, and there are enough of them to load the metadata servers."""
    # the cheap test first: a file of one rank has a record of that rank
    own_records = sum(int(np.count_nonzero(np.asarray(t["rank"], dtype=np.int64) >= 0))
                      for t in facts.outermost().values() if len(t))
    if own_records < cfg.fpp_min_files:
        return
    rows, parts = _outer_records(facts)
    if not rows:
        return
    agg = {"rmin": ("rank", "min"), "rmax": ("rank", "max"), "bytes": ("bytes", "sum"),
           "meta": ("meta", "sum"), "opens": ("opens", "sum")}
    all_own = files_of(rows, agg, unique=outer_unique(facts))
    mine = (all_own["rmin"] >= 0) & (all_own["rmin"] == all_own["rmax"]) & (all_own["bytes"] > 0)
    own = all_own[mine]
    nfiles = len(own)
    owners = len(distinct(own["rmin"])) if nfiles else 0
    if nfiles < cfg.fpp_min_files or owners < max(2, 0.5 * facts.nprocs):
        return
    directory, lustre = _place_of(facts, np.asarray(own["id"]))
    yield FilePerProcess(time_lost=_own_stake(facts, rows, parts, all_own, mine), floor=Severity.WARNING,
                         files=nfiles, owners=owners, metadata_ops=float(own["opens"].sum()),
                         metadata_time=float(own["meta"].sum()), directory=directory, lustre=lustre)


@record
class StdioFile:
    fid: int
    name: str
    bytes: float
    calls: int  # fread/fwrite calls
    time: float  # all ranks
    ranks: int


@record
class StdioBulk(Hit):
    bytes: float = 0.0  # bytes through STDIO
    total: float = 0.0  # all bytes moved
    files: tuple[StdioFile, ...] = ()  # the largest (top_subjects of them)
    nfiles: int = 0  # STDIO files with data
    mean_call: float = 0.0  # mean bytes per fread/fwrite call
    buffered: bool = False  # calls small enough to go through the stream's buffer
    at_stake: float = 0.0  # the slowest rank's STDIO time
    exact: bool = True  # ... exact


def _stdio_files(facts: Facts, stdio: Table, sb: np.ndarray) -> Table:
    """STDIO files with data, the most bytes first (``sb``: bytes per record)."""
    per = per_file(
        np.asarray(stdio["id"]),
        {
            "name": np.asarray(stdio["name"]),
            "bytes": sb,
            "time": counter(stdio, "read_time") + counter(stdio, "write_time") + counter(stdio, "meta_time"),
            "ops": ops(stdio, "stdio", "read") + ops(stdio, "stdio", "write"),
            "ranks": nranks(stdio, facts.nprocs),
        },
        {
            "name": ("name", "first"),
            "bytes": ("bytes", "sum"),
            "time": ("time", "sum"),
            "ops": ("ops", "sum"),
            "ranks": ("ranks", "sum"),
        },
    )
    per = per[sort_order(per, "bytes")]
    return per[per["bytes"] > 0]


@rule(
    "IFACE-STDIO-BULK",
    title="STDIO used for bulk data",
    family=FAMILY,
    config=("stdio_bulk_min_bytes", "stdio_bulk_min_share", "stdio_buffered_call_bytes"),
    words=words.stdio_bulk,
)
def stdio_bulk(facts: Facts, cfg: RuleConfig) -> Iterator[StdioBulk]:
    """Most of the data goes through fread/fwrite/fprintf streams."""
    stdio = facts.layer("stdio")
    if not len(stdio):
        return
    sb = counter(stdio, "bytes_read") + counter(stdio, "bytes_written")
    s_bytes = float(sb.sum())
    total = float(
        sum((counter(f, "bytes_read") + counter(f, "bytes_written")).sum()
            for f in facts.outermost().values())
    )
    if s_bytes < cfg.stdio_bulk_min_bytes or total <= 0 or s_bytes / total < cfg.stdio_bulk_min_share:
        return
    st = stake(facts, "stdio", stdio, {"read": 1.0, "write": 1.0, "meta": 1.0})
    per = _stdio_files(facts, stdio, sb)
    calls = float(per["ops"].sum())
    mean_call = s_bytes / calls if calls > 0 else 0.0
    buffered = mean_call < cfg.stdio_buffered_call_bytes
    top = tuple(
        StdioFile(int(r["id"]), str(r["name"]), float(r["bytes"]), int(r["ops"]), float(r["time"]),
                  int(r["ranks"]))
        for r in per.head(cfg.top_subjects).rows()  # the finding lists these; nfiles counts all
    )
    yield StdioBulk(time_lost=st.max if buffered else None, severity=None if buffered else Severity.INFO,
                    bytes=s_bytes, total=total, files=top, nfiles=len(per), mean_call=mean_call,
                    buffered=buffered, at_stake=st.max, exact=st.exact)


@record
class MetaFile:
    fid: int
    name: str
    time: float  # metadata time (all ranks)
    calls: int


@record
class MetadataHeavy(Hit):
    share: float = 0.0  # metadata time / I/O time
    exact: bool = True  # the slowest rank's metadata time (time_lost) is exact
    opens: float = 0.0
    stats: float = 0.0
    seeks: float = 0.0
    syncs: float = 0.0  # closes, flushes and syncs
    nfiles: int = 0  # files with metadata calls
    bytes: float = 0.0  # bytes moved
    files: tuple[MetaFile, ...] = ()  # the costliest (top_subjects of them)


def _metadata_calls(facts: Facts) -> tuple[dict[str, float], Table]:
    """Metadata calls by kind, and per file its metadata time and calls, the costliest first: at
    the outermost layer, as the metadata time the rule weighs (an MPI-IO open is one call, not
    also the POSIX open beneath it)."""
    counts = {"opens": 0.0, "stats": 0.0, "seeks": 0.0, "closes/flushes/syncs": 0.0}
    rows: list[dict[str, np.ndarray]] = []
    for layer, records in facts.outermost().items():
        if not len(records):
            continue
        counts["opens"] += float(
            (
                counter(records, "opens")
                + counter(records, "indep_opens")
                + counter(records, "coll_opens")
                + counter(records, "fdopens")
            ).sum()
        )
        counts["stats"] += float(counter(records, "stats").sum())
        counts["seeks"] += float(counter(records, "seeks").sum())
        counts["closes/flushes/syncs"] += float(
            np.sum([counter(records, c) for c in ("flushes", "fsyncs", "syncs", "fdsyncs")])
        )
        rows.append(
            {
                "id": np.asarray(records["id"]),
                "name": np.asarray(records["name"]),
                "meta": counter(records, "meta_time"),
                "metaops": ops(records, layer, "meta"),
            }
        )
    per = files_of(rows, {"name": ("name", "first"), "meta": ("meta", "sum"), "ops": ("metaops", "sum")})
    return counts, per[sort_order(per, "meta")]


@rule(
    "IFACE-METADATA-HEAVY",
    title="Metadata-heavy I/O (opens, stats, seeks per byte moved)",
    family=FAMILY,
    config=("metadata_min_share_of_io", "metadata_min_calls", "metadata_min_time_share"),
    words=words.metadata_heavy,
)
def metadata_heavy(facts: Facts, cfg: RuleConfig) -> Iterator[MetadataHeavy]:
    """Metadata calls take a large share of the I/O time."""
    t = facts.times
    io_total = float(t.io.sum())
    meta_total = float(t.io_meta.sum())
    if io_total <= 0 or facts.runtime <= 0 or meta_total / io_total < cfg.metadata_min_share_of_io:
        return
    lost = float(t.io_meta.max())
    if lost < cfg.metadata_min_time_share * facts.runtime:
        return
    counts, per = _metadata_calls(facts)
    if counts["opens"] + counts["stats"] + counts["seeks"] < cfg.metadata_min_calls:
        return
    nbytes = 0.0
    for records in facts.outermost().values():
        nbytes += float((counter(records, "bytes_read") + counter(records, "bytes_written")).sum())
    top = tuple(
        MetaFile(int(r["id"]), str(r["name"]), float(r["meta"]), int(r["ops"]))
        for r in per[: cfg.top_subjects].rows()
        if r["meta"] > 0
    )
    yield MetadataHeavy(
        time_lost=lost, share=meta_total / io_total, exact=t.exact_max("meta"), opens=counts["opens"],
        stats=counts["stats"], seeks=counts["seeks"], syncs=counts["closes/flushes/syncs"],
        nfiles=int((per["ops"] > 0).sum()) if len(per) else 0, bytes=nbytes, files=top,
    )
