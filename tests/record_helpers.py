"""Helpers shared by the tests that check a log's file records."""

from __future__ import annotations

import pandas as pd


def one_record(frame: pd.DataFrame, name: str) -> pd.Series:
    """The single record of file ``name`` in a layer's frame (fails if there are none or several)."""
    rows = frame[frame["name"] == name]
    assert len(rows) == 1, f"expected one record for {name}, got {len(rows)}"
    return rows.iloc[0]
