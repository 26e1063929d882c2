"""Per-file rows gathered over several layers.

Rules that judge a file whatever layer records it collect, per layer, a few columns of the
layer's records (a mapping of equal-length arrays, the file ids in "id"), then group the
records of all layers by file.  :func:`files_of` is that step, written once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pario.diagnosis._table_ops import per_file
from pario.table import Table


def part(values: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """``values`` at ``rows`` (a mask or positions; None: all of them)."""
    return values if rows is None else values[rows]


def files_of(
    rows: Sequence[Mapping[str, np.ndarray]],
    agg: Mapping[str, tuple[str, str]],
    unique: bool | None = None,
) -> Table:
    """The records of ``rows`` (one mapping of columns per layer, "id" among them), one layer's
    after the other, grouped by file as :func:`~pario.diagnosis._table_ops.per_file` does
    (``agg``: output column -> (input column, reduction); ``unique``: no file id repeats, if the
    caller knows).  With no rows, a table of no files."""
    columns = ["id", *dict.fromkeys(src for src, _ in agg.values())]
    data = {k: np.concatenate([r[k] for r in rows]) if rows else np.zeros(0) for k in columns}
    return per_file(data.pop("id"), data, agg, unique)
