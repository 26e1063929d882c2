"""pario.table: the model's tables and pario's rules for distinct values, groups and sums, on values
worked out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pario.table import Table, as_table, distinct, group_codes, group_reduce, group_sum


def sample() -> Table:
    return Table({"id": np.array([7, 3, 7, 5, 3], dtype=np.uint64), "rank": np.array([0, 1, 2, 3, 4]),
                  "bytes": np.array([10.0, np.nan, 5.0, 1.0, 2.0]),
                  "name": np.array(list("abcde"), dtype=object)})


def test_columns_rows_and_selection() -> None:
    t = sample()
    assert len(t) == 5 and t.columns == ["id", "rank", "bytes", "name"] and "rank" in t and not t.empty
    assert t["rank"].tolist() == [0, 1, 2, 3, 4]
    sub = t[t["rank"] >= 3]
    assert sub["name"].tolist() == ["d", "e"] and len(sub) == 2
    assert t[[4, 0]]["name"].tolist() == ["e", "a"]
    assert t[1:3]["rank"].tolist() == [1, 2] and len(t.head(2)) == 2
    assert t[["name", "id"]].columns == ["name", "id"]
    assert t.row(2) == {"id": 7, "rank": 2, "bytes": 5.0, "name": "c"}
    t2 = t.assign(twice=t["rank"] * 2, one=1)
    assert t2["twice"].tolist() == [0, 2, 4, 6, 8] and t2["one"].tolist() == [1] * 5 and "twice" not in t
    assert t.drop(["name"]).columns == ["id", "rank", "bytes"]
    assert t.rename({"rank": "r"}).columns[1] == "r"
    assert len(Table.concat([t, t])) == 10
    assert len(Table({}, length=3)) == 3 and Table().empty


def test_bad_shapes_are_refused() -> None:
    t = sample()
    with pytest.raises(ValueError, match="has 2 values, the table 5 rows"):
        t["x"] = [1, 2]
    with pytest.raises(ValueError, match="mask of 2 values"):
        t.take(np.array([True, False]))


def test_pandas_round_trip() -> None:
    t = sample()
    frame = t.to_pandas(index_name="rank_index")
    assert frame.index.name == "rank_index" and list(frame.columns) == t.columns
    back = as_table(frame)
    for name in t.columns:
        np.testing.assert_array_equal(back[name], t[name])
    assert as_table(t) is t
    grouped = as_table(frame.groupby("id", sort=False).agg(total=("bytes", "sum")))
    assert grouped.columns == ["id", "total"] and grouped["id"].tolist() == [7, 3, 5]
    assert as_table(frame).columns == t.columns  # a RangeIndex is only positions
    ids = pd.DataFrame({"n": [5, 6]}, index=pd.Index([0, 1], name="id"))
    assert as_table(ids).columns == ["id", "n"]  # ids that happen to be positions stay


KEYS = np.array([5, 2, 5, 9, 2, 5], dtype=np.uint64)
FLOATS = np.array([np.nan, 1.5, 2.0, np.nan, -0.5, 4.0])
NAMES = np.array([None, "b", "a", None, "c", "d"], dtype=object)


@pytest.mark.parametrize("how, floats, names", [
    # groups in order of first appearance: 5 (rows 0, 2, 5), 2 (rows 1, 4), 9 (row 3)
    ("sum", [6.0, 1.0, 0.0], None),
    ("min", [2.0, -0.5, np.nan], None),
    ("max", [4.0, 1.5, np.nan], None),
    ("first", [2.0, 1.5, np.nan], ["a", "b", None]),
    ("count", [2, 2, 0], [2, 2, 0]),
    ("size", [3, 2, 1], [3, 2, 1]),
])
def test_group_reduce_by_hand(how: str, floats: list, names: list | None) -> None:
    keys, codes = group_codes(KEYS, sort=False)
    assert keys.tolist() == [5, 2, 9]
    np.testing.assert_array_equal(group_reduce(FLOATS, codes, 3, how), np.array(floats))
    if names is not None:
        assert group_reduce(NAMES, codes, 3, how).tolist() == names


def test_group_codes_first_appearance() -> None:
    keys, codes = group_codes(np.array([5, 2, 5, 9, 2]), sort=False)
    assert keys.tolist() == [5, 2, 9] and codes.tolist() == [0, 1, 0, 2, 1]
    assert group_reduce(np.array([1, 2, 3, 4, 5]), codes, 3, "sum").tolist() == [4, 7, 4]
    sorted_keys, sorted_codes = group_codes(np.array([5, 2, 5, 9, 2]))
    assert sorted_keys.tolist() == [2, 5, 9] and sorted_codes.tolist() == [1, 0, 1, 2, 0]
    empty_keys, empty_codes = group_codes(np.zeros(0))
    assert len(empty_keys) == 0 and len(empty_codes) == 0


def test_distinct() -> None:
    assert distinct(np.array([5, 1, 5, 2, 1], dtype=np.uint64)).tolist() == [1, 2, 5]
    assert len(distinct(np.zeros(0))) == 0 and distinct(np.array([7])).tolist() == [7]


def test_float_group_sums_add_in_row_order() -> None:
    """1e16 + 1 + 1 is 1e16 in row order (each 1 is lost), 1e16 + 2 with the ones first."""
    _, codes = group_codes(np.array([0, 0, 0, 1, 1, 1]))
    values = np.array([1e16, 1.0, 1.0, 1.0, 1.0, 1e16])
    assert group_sum(values, codes, 2).tolist() == [1e16, 1e16 + 2.0]
    assert group_sum(np.array([np.nan, -0.0]), np.array([0, 1]), 3).tolist() == [0.0, 0.0, 0.0]


def test_empty_selections_and_mismatched_concat() -> None:
    t = sample()
    assert len(t[[]]) == 0 and t[[]].columns == t.columns
    assert len(t.take([])) == 0 and len(t.take(np.array([], dtype=np.int64))) == 0
    with pytest.raises(ValueError, match="concat of tables with other columns"):
        Table.concat([t, t.drop(["name"])])


def test_unique_index_isin_and_median_are_numpys_without_numpy_ma() -> None:
    """pario's own unique (by a stable sort), isin (by a sorted search) and median (by a
    partition) give what np.unique, np.isin and np.median give, on integers, ids, names and
    floats with NaN; they exist so that a short command does not import numpy.ma."""
    from pario.table import isin, median, unique_index

    rng = np.random.default_rng(3)
    ints = rng.integers(-5, 6, 200)
    ids = rng.integers(0, 2**64 - 1, 50, dtype=np.uint64)[rng.integers(0, 50, 300)]
    names = np.array([f"/d/{i}" for i in rng.integers(0, 30, 100)], dtype=object)
    floats = np.array([3.0, np.nan, 1.0, 3.0, np.nan, 2.0])
    for keys in (ints, ids, names, floats, ints[:0]):
        want = np.unique(keys, return_index=True, return_inverse=True)
        got = unique_index(keys)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_array_equal(g, np.asarray(w).reshape(g.shape))
    among = ids[:7]
    assert isin(ids, among).tolist() == np.isin(ids, among).tolist()
    assert isin(ints, np.array([-5, 0, 5])).tolist() == np.isin(ints, [-5, 0, 5]).tolist()
    assert not isin(ints, ints[:0]).any()
    for values in (ints, ids[:11].astype(np.float64), np.array([4.0, 1.0]), np.array([2.5]), floats):
        want = float(np.median(values))
        got = median(values)
        assert (np.isnan(want) and np.isnan(got)) or got == want
    assert np.isnan(median([]))


def test_from_arrays_takes_the_arrays_as_they_are() -> None:
    a, b = np.arange(3), np.array(["x", "y", "z"], dtype=object)
    t = Table.from_arrays({"a": a, "b": b}, 3)
    assert t.columns == ["a", "b"] and len(t) == 3
    assert t["a"] is a and t["b"] is b  # no copy, no conversion
    for bad in ({"a": np.arange(4)}, {"a": np.zeros((3, 1))}, {"a": [1, 2, 3]}):
        with pytest.raises(ValueError, match="column 'a' is not a 1-D array of 3 values"):
            Table.from_arrays(bad, 3)  # type: ignore[arg-type]
