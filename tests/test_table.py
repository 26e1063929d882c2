"""pario.table: the model's pandas-free tables, checked against the pandas expressions they replace."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pario.table import Table, as_table, group_by, group_codes, group_reduce


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


@pytest.mark.parametrize("sort", [True, False])
@pytest.mark.parametrize("how", ["sum", "min", "max", "first", "count", "size"])
def test_grouping_matches_pandas(how: str, sort: bool) -> None:
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 9, 200).astype(np.uint64)
    values = rng.integers(0, 1000, 200).astype(np.float64)
    values[rng.integers(0, 200, 20)] = np.nan
    values[np.flatnonzero(keys == 4)[:2]] = np.nan  # a group whose first values are missing
    ints = rng.integers(-50, 50, 200)
    frame = pd.DataFrame({"k": keys, "v": values, "i": ints})
    agg = {"v": ("v", how), "i": ("i", how)}
    expect = frame.groupby("k", sort=sort).agg(**agg)
    got = group_by(Table({"k": keys, "v": values, "i": ints}), "k", agg, sort=sort)
    np.testing.assert_array_equal(got["k"], expect.index.to_numpy())
    np.testing.assert_array_equal(got["v"], expect["v"].to_numpy())
    np.testing.assert_array_equal(got["i"], expect["i"].to_numpy())


def test_group_codes_first_appearance() -> None:
    keys, codes = group_codes(np.array([5, 2, 5, 9, 2]), sort=False)
    assert keys.tolist() == [5, 2, 9] and codes.tolist() == [0, 1, 0, 2, 1]
    assert group_reduce(np.array([1, 2, 3, 4, 5]), codes, 3, "sum").tolist() == [4, 7, 4]
    empty_keys, empty_codes = group_codes(np.zeros(0))
    assert len(empty_keys) == 0 and len(empty_codes) == 0


def test_count_distinct() -> None:
    from pario.table import count_distinct

    assert count_distinct(np.array([5, 1, 5, 2, 1], dtype=np.uint64)) == 3
    assert count_distinct(np.zeros(0)) == 0 and count_distinct(np.array([7])) == 1


@pytest.mark.parametrize("sorted_keys", [True, False])
def test_float_group_sums_are_pandas_digit_for_digit(sorted_keys: bool) -> None:
    from pario.table import group_sum

    rng = np.random.default_rng(7)
    keys = rng.integers(0, 50, 5000)
    if sorted_keys:  # each group's rows together, no NaN: pandas' reduceat path
        keys = np.sort(keys)
    values = rng.random(5000) * 10.0 ** rng.integers(-6, 6, 5000)
    expect = pd.DataFrame({"k": keys, "v": values}).groupby("k", sort=True)["v"].sum()
    uniq, codes = group_codes(keys)
    np.testing.assert_array_equal(group_sum(values, codes, len(uniq)), expect.to_numpy())
