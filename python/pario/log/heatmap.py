"""Darshan's HEATMAP records as the model's :class:`~pario.model.Heatmap`.

Darshan 3.3 and later keep one HEATMAP record per rank and instrumented module (POSIX, MPI-IO,
STDIO, DFS, DAOS): the bytes the rank wrote and read in each time bin since the job's start.
Bins start 0.1 s wide, at most 200 of them; a run that outlasts them has its bins merged in
pairs (the width doubles) as often as needed, and at the end every record is cut to the bins
the run covers, with the end agreed by all ranks, so all records of a log share one width and
one bin count.  A rank or module that moved nothing has no record.
"""

from __future__ import annotations

import numpy as np

from pario.log.darshan_lib import HeatmapRecords
from pario.model import Heatmap, HeatmapLayer

#: The record id of each module's heat map (Darshan hashes its name, ``heatmap:POSIX``...), for
#: a log whose name records lack them.
KNOWN_IDS: dict[int, str] = {
    16592106915301738621: "POSIX", 3668870418325792824: "MPIIO", 3989511027826779520: "STDIO",
    1597927878319380788: "DFS", 4131494093108637317: "DAOS",
}


def module_of(rec_id: int, names: dict[int, str]) -> str:
    """The module of a heat-map record: its name record says ``heatmap:MODULE``."""
    name = names.get(rec_id, "")
    if name.startswith("heatmap:"):
        return name.split(":", 1)[1]
    return KNOWN_IDS.get(rec_id, f"record {rec_id:016x}")


def _rebin(bins: np.ndarray, factor: int) -> np.ndarray:
    """Bins merged ``factor`` at a time (the last group may be short)."""
    if factor == 1:
        return bins
    return np.add.reduceat(bins, np.arange(0, len(bins), factor)) if len(bins) else bins


def build_heatmap(recs: HeatmapRecords, names: dict[int, str]) -> Heatmap | None:
    """The model's heat map of a log's HEATMAP records (None without any).

    Records of different bin widths (Darshan gives them all one width; a log merged by hand might
    not) are brought to the widest by merging bins, when it is a whole multiple of theirs; the
    others are left out.
    """
    if not len(recs.ids):
        return None
    width = float(recs.bin_widths.max())
    rows: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
    for i, rid in enumerate(recs.ids.tolist()):
        w = float(recs.bin_widths[i])
        if not w > 0:
            continue
        factor = width / w
        if abs(factor - round(factor)) > 1e-9:
            continue
        f = int(round(factor))
        write = _rebin(np.asarray(recs.write_bins[i], dtype=np.int64), f)
        read = _rebin(np.asarray(recs.read_bins[i], dtype=np.int64), f)
        layer = rows.setdefault(module_of(int(rid), names), {})
        rank = int(recs.ranks[i])
        if rank in layer:  # two records of one rank and module: add them up
            old_r, old_w = layer[rank]
            n = max(len(old_r), len(read))
            read = _padded(old_r, n) + _padded(read, n)
            write = _padded(old_w, n) + _padded(write, n)
        layer[rank] = (read, write)
    if not rows:
        return None
    nbins = max(len(r) for layer in rows.values() for r, _ in layer.values())
    layers = {}
    for module, per_rank in rows.items():
        ranks = sorted(per_rank)
        layers[module] = HeatmapLayer(
            ranks=np.array(ranks, dtype=np.int64),
            read=np.vstack([_padded(per_rank[r][0], nbins) for r in ranks]),
            write=np.vstack([_padded(per_rank[r][1], nbins) for r in ranks]))
    return Heatmap(bin_width=width, nbins=nbins, layers=layers)


def _padded(bins: np.ndarray, n: int) -> np.ndarray:
    return bins if len(bins) == n else np.concatenate([bins, np.zeros(n - len(bins), dtype=np.int64)])
