"""I/O activity over time, from a heat map (docs/metrics.md, "I/O activity over time").

A heat map (:class:`pario.model.Heatmap`, Darshan's HEATMAP module) holds the bytes each rank
read and wrote in each time bin, per module.  The modules nest as the file layers do: the bytes
of an MPI-IO call are also the bytes of the POSIX calls beneath it, and the bytes of a DFS call
the bytes of the DAOS calls beneath it.  So the volume over time is the bytes through the file
system and DAOS (POSIX, STDIO, DFS, and DAOS in a log without DFS bytes; MPI-IO's only in a log
without any of those), and a rank is in I/O in a bin when it moved bytes there through any module:
a rank inside a collective MPI-IO call whose bytes an aggregator writes is in I/O too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pario.model import Heatmap
from pario.table import distinct

#: The heat-map modules whose bytes others also count (MPI-IO's bytes are POSIX's).
NESTED: frozenset[str] = frozenset({"MPIIO"})
#: module -> the module whose bytes also count its bytes where the heat map has both: DAOS's are
#: DFS's (a DFS file's I/O is DAOS array I/O on its object; a heat map does not tell the bytes of
#: objects used without DFS apart, which a run through DFS seldom has: its superblock's reads).
BENEATH: dict[str, str] = {"DAOS": "DFS"}
#: How the modules are named for people.
MODULE_LABELS: dict[str, str] = {"MPIIO": "MPI-IO"}


@dataclass(frozen=True)
class Activity:
    """Bytes over time, for the report and the activity rules."""

    bin_width: float  # seconds
    nbins: int
    #: the modules whose bytes make the volume (file-system level)
    layers: tuple[str, ...]
    read: np.ndarray  # int64 (nbins,): bytes read in each bin, over ``layers``
    write: np.ndarray  # int64 (nbins,)
    #: the ranks that moved bytes through any module, ascending; row i of the per-rank arrays
    ranks: np.ndarray  # int64
    #: bytes each of ``ranks`` moved through ``layers`` per bin (read + write)
    per_rank: np.ndarray  # int64 (len(ranks), nbins)
    #: bytes each of ``ranks`` moved through the nested modules (MPI-IO; DAOS beneath DFS) per bin
    nested: np.ndarray  # int64 (len(ranks), nbins)
    nprocs: int

    @property
    def volume(self) -> np.ndarray:
        """Bytes read and written in each bin."""
        return self.read + self.write

    @property
    def duration(self) -> float:
        return self.bin_width * self.nbins

    def busy(self, min_share: float = 0.0) -> np.ndarray:
        """(len(ranks), nbins) bool: where a rank is in I/O, by the modules it moved bytes through:
        at least ``min_share`` of its own busiest bin's bytes, and more than none (one measure
        per module family: the file system's, the nested modules')."""
        out = np.zeros(self.per_rank.shape, dtype=bool)
        for rows in (self.per_rank, self.nested):
            peak = rows.max(axis=1, initial=0)[:, None]
            out |= (rows > 0) & (rows >= min_share * peak)
        return out

    @property
    def ranks_active(self) -> np.ndarray:
        """How many ranks moved bytes in each bin."""
        return self.busy().sum(axis=0).astype(np.int64)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (docs/report-json.md, ``activity``)."""
        return {"bin_width_s": self.bin_width, "nbins": self.nbins,
                "layers": [MODULE_LABELS.get(m, m) for m in self.layers],
                "read_bytes": [int(x) for x in self.read.tolist()],
                "write_bytes": [int(x) for x in self.write.tolist()],
                "ranks_active": [int(x) for x in self.ranks_active.tolist()],
                "io_ranks": int(len(self.ranks)), "nprocs": self.nprocs}


def activity(heatmap: Heatmap | None, nprocs: int) -> Activity | None:
    """The activity over time of a profile's heat map (None without one)."""
    if heatmap is None or not heatmap.layers or heatmap.nbins < 1:
        return None
    nested_here = NESTED | {m for m, outer in BENEATH.items() if outer in heatmap.layers}
    flat = [m for m in heatmap.layers if m not in nested_here] or list(heatmap.layers)
    nested = [m for m in heatmap.layers if m not in flat]
    ranks = distinct(np.concatenate([heatmap.layers[m].ranks for m in heatmap.layers]))
    n = heatmap.nbins

    def per_rank(modules: list[str]) -> np.ndarray:
        out = np.zeros((len(ranks), n), dtype=np.int64)
        for m in modules:
            layer = heatmap.layers[m]
            rows = np.searchsorted(ranks, layer.ranks)
            np.add.at(out, rows, layer.read + layer.write)
        return out

    read = np.zeros(n, dtype=np.int64)
    write = np.zeros(n, dtype=np.int64)
    for m in flat:
        read += heatmap.layers[m].read.sum(axis=0)
        write += heatmap.layers[m].write.sum(axis=0)
    return Activity(bin_width=heatmap.bin_width, nbins=n, layers=tuple(flat), read=read, write=write,
                    ranks=ranks, per_rank=per_rank(flat), nested=per_rank(nested), nprocs=nprocs)


#: Eight levels of a one-line chart.
SPARKS = "▁▂▃▄▅▆▇█"


def merged(values: np.ndarray, width: int) -> tuple[np.ndarray, int]:
    """``values`` summed over groups of consecutive bins so that at most ``width`` remain, and the
    group size."""
    group = max(1, -(-len(values) // max(1, width)))
    if group == 1:
        return values, 1
    return np.add.reduceat(values, np.arange(0, len(values), group)), group


def sparkline(values: np.ndarray) -> str:
    """One character per value: a space for nothing, else one of eight levels of the largest."""
    peak = float(values.max(initial=0))
    if peak <= 0:
        return " " * len(values)
    levels = np.ceil(values / peak * len(SPARKS)).astype(np.int64) - 1
    return "".join(" " if v <= 0 else SPARKS[min(max(int(lv), 0), len(SPARKS) - 1)]
                   for v, lv in zip(values.tolist(), levels.tolist(), strict=True))
