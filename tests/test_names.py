"""How file names are shown in narrow columns (pario.names)."""

from __future__ import annotations

import fnmatch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pario.names import common_directory, matching, relative, shorten


@pytest.mark.parametrize(
    ("names", "directory"),
    [
        (["/scratch/run/a.dat", "/scratch/run/b.dat"], "/scratch/run/"),
        (["/scratch/run/a.dat", "/scratch/run/sub/b.dat"], "/scratch/run/"),
        (["/scratch/run/a.dat"], "/scratch/run/"),
        (["/scratch/runA/a.dat", "/scratch/runB/b.dat"], "/scratch/"),  # directories, not characters
        (["/a.dat", "/b.dat"], ""),  # only '/' in common: nothing to strip
        (["/scratch/a.dat", "relative.dat"], ""),
        ([], ""),
    ],
)
def test_common_directory(names, directory):
    assert common_directory(names) == directory


def test_relative_and_shorten():
    assert relative("/scratch/run/sub/b.dat", "/scratch/run/") == "sub/b.dat"
    assert relative("/other/b.dat", "/scratch/run/") == "/other/b.dat"
    assert relative("b.dat", "") == "b.dat"
    assert shorten("/lus/theta-fs0/projects/x/out.h5", 12) == "…ts/x/out.h5"
    assert shorten("short", 12) == "short"


# -- matching: glob patterns over many names ---------------------------------------------------

GLOBS = ("*.locktest.*", "*/ompi.*/*", "*_cid-*.sm", "/proc/*", "*.so", "*.so.*", "*/.nfs*", "a?c",
         "/x/[ab]*")


def fnmatch_mask(names: list, patterns: tuple[str, ...]) -> list[bool]:
    return [any(fnmatch.fnmatchcase(str(n), p) for p in patterns) for n in names]


def test_matching_says_what_fnmatch_says() -> None:
    names = ["/scratch/out.dat", "/scratch/out.dat.locktest.0", "/tmp/ompi.node.0/seg", "/tmp/ompi.x",
             "/dev/shm/vader_cid-3.sm", "/dev/shm/a_cid-3.smx", "/proc/self/status", "/proc", "libz.so",
             "libz.so.1", "/home/u/.nfs0001", "abc", "abcd", "a/c", "/x/a1", "/x/c1", "é/ompi.1/x", ""]
    got = matching(np.array(names, dtype=object), GLOBS)
    assert got.tolist() == fnmatch_mask(names, GLOBS)
    assert got.tolist()[:3] == [False, True, True]
    # a name that is not text: the regular expression on each distinct name, the same answer
    mixed = np.array([*names, None], dtype=object)
    assert matching(mixed, GLOBS).tolist() == fnmatch_mask([*names, None], GLOBS)
    assert matching(np.array([], dtype=object), GLOBS).tolist() == []
    assert matching(np.array(names, dtype=object), ()).tolist() == [False] * len(names)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="/._-acos*?é", max_size=12), max_size=30),
       st.lists(st.sampled_from(GLOBS), min_size=1, max_size=4))
def test_matching_agrees_with_fnmatch_on_any_names(names: list[str], patterns: list[str]) -> None:
    got = matching(np.array(names, dtype=object), tuple(patterns))
    assert got.tolist() == fnmatch_mask(names, tuple(patterns))
