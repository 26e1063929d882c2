"""How file names are shown in narrow columns (pario.names)."""

from __future__ import annotations

import pytest

from pario.names import common_directory, relative, shorten


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
