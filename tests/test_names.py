"""How file names are shown in narrow columns (pario.names)."""

from __future__ import annotations

import contextlib
import fnmatch
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pario.names
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
         "/x/[ab]*", "*/a*", "abc", "*c")  # the last three: a literal's search is the match


def fnmatch_mask(names: list, patterns: tuple[str, ...]) -> list[bool]:
    return [any(fnmatch.fnmatchcase(str(n), p) for p in patterns) for n in names]


@contextlib.contextmanager
def few_names(n: int) -> Iterator[None]:
    """matching's threshold for one regular expression per name set to ``n`` (0: through the
    NameIndex always, as for a log of many names)."""
    old = pario.names.FEW_NAMES
    pario.names.FEW_NAMES = n
    try:
        yield
    finally:
        pario.names.FEW_NAMES = old


@pytest.mark.parametrize("few", [0, 64])
def test_matching_says_what_fnmatch_says(few: int) -> None:
    names = ["/scratch/out.dat", "/scratch/out.dat.locktest.0", "/tmp/ompi.node.0/seg", "/tmp/ompi.x",
             "/dev/shm/vader_cid-3.sm", "/dev/shm/a_cid-3.smx", "/proc/self/status", "/proc", "libz.so",
             "libz.so.1", "/home/u/.nfs0001", "abc", "abcd", "a/c", "/x/a1", "/x/c1", "é/ompi.1/x", ""]
    with few_names(few):
        _says_what_fnmatch_says(names)


def _says_what_fnmatch_says(names: list[str]) -> None:
    got = matching(np.array(names, dtype=object), GLOBS)
    assert got.tolist() == fnmatch_mask(names, GLOBS)
    assert got.tolist()[:3] == [False, True, True]
    # a name that is not text: the regular expression on each distinct name, the same answer
    mixed = np.array([*names, None], dtype=object)
    assert matching(mixed, GLOBS).tolist() == fnmatch_mask([*names, None], GLOBS)
    assert matching(np.array([], dtype=object), GLOBS).tolist() == []
    assert matching(np.array(names, dtype=object), ()).tolist() == [False] * len(names)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="/._-acos*?é", max_size=12), max_size=30),
       st.lists(st.sampled_from(GLOBS), min_size=1, max_size=4))
def test_matching_agrees_with_fnmatch_on_any_names(names: list[str], patterns: list[str]) -> None:
    want = fnmatch_mask(names, tuple(patterns))
    for few in (0, 64):  # through the NameIndex, and one regular expression per name
        with few_names(few):
            assert matching(np.array(names, dtype=object), tuple(patterns)).tolist() == want


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="/._-a*?[]é", min_size=1, max_size=8),
       st.lists(st.text(alphabet="/._-a*?[]é", max_size=12), max_size=20), st.booleans())
def test_own_log_is_the_glob_of_the_log_path(path: str, others: list[str], indexed: bool) -> None:
    """The profiler's own log and its temporary names (pario.diagnosis.facts.own_log): what the
    patterns glob.escape(path) and glob.escape(path) + ".*" match, through a NameIndex or not."""
    import glob

    from pario.diagnosis.facts import own_log
    from pario.names import NameIndex

    names = [path, path + ".tmp1", path + ".", path + "x", "/" + path, *others, *(o + path for o in others)]
    values = np.array(names, dtype=object)
    index = NameIndex.build(values) if indexed else None
    want = fnmatch_mask(names, (glob.escape(path), glob.escape(path) + ".*"))
    assert own_log(values, path, index).tolist() == want


# -- file systems: the set of a run's, without a look at each file ------------------------------

@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.text(alphabet="/abd", max_size=6)), max_size=30))
def test_file_system_kinds_are_the_set_of_each_file_s(files: list[tuple[int, str]]) -> None:
    """FileSystems.kinds (distinct magics, one name per directory) against .of, file by file."""
    from pario.analysis.filesystems import FileSystems
    from pario.model import Job, Profile
    from pario.table import Table

    nfs, ext4 = 0x6969, 0xEF53
    posix = Table({"id": np.array([1, 2, 3, 9], dtype=np.uint64), "rank": np.zeros(4, dtype=np.int64),
                   "name": np.array(["/a", "/b", "/c", "/d"], dtype=object),
                   "fs_type": np.array([nfs, ext4, nfs, 0], dtype=np.int64)})
    job = Job("pario", "/run.pario", "app", 1, 0.0, 1.0, 1.0,
              metadata={"lustre_striping": {4: {}, 2: {}},
                        "mounts": [["/", "rootfs"], ["/a", "xfs"], ["/a/b/", "lustre"], ["/d", "fuse"]]})
    systems = FileSystems(Profile(job, Table({"wall": np.ones(1)}), {"posix": posix}))
    ids = np.array([fid for fid, _ in files], dtype=np.uint64)
    names = np.array([name for _, name in files], dtype=object)
    assert systems.kinds(ids, names) == set(systems.of(ids, names.tolist()))
