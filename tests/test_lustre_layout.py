"""Lustre layouts recorded by the runtime (POSIX_LUSTRE_*), read back and diagnosed.

There is no Lustre here: a real `pario run` shows the counters stay 0 off Lustre,
and a real pario log written with pario_writer (with the counters of a file on
Lustre filled in as the runtime would) shows the reader and the diagnosis using
them.  The parser of the "lustre.lov" attribute itself is tested in
tests/c/test_lustre.c.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pario.diagnosis import diagnose
from pario.diagnosis.facts import STRIPING_SOURCES
from pario.log import read_log
from pario.model import Profile, add_derived_rank_columns
from pario_writer import write_pario_log

MiB = 1 << 20
GiB = 1 << 30
LUSTRE_SUPER_MAGIC = 0x0BD00BD0
LUSTRE_COLUMNS = ("lustre_stripe_size", "lustre_stripe_count", "lustre_stripe_offset", "lustre_components")
NP = 4


@pytest.fixture(scope="module")
def real_log(known_run) -> Path:
    """io_known on 4 ranks under `pario run` (conftest), on this machine's (non-Lustre) file system."""
    _, out, _ = known_run
    return out / "known.pario"


def test_counters_are_zero_off_lustre(real_log: Path):
    profile = read_log(real_log)
    posix = profile.layer("posix")
    assert len(posix) >= NP + 2  # fpp.0-3, shared.dat, pair.dat
    assert set(LUSTRE_COLUMNS) <= set(posix.columns)
    assert (posix["fs_type"] != 0).all()
    if (posix["fs_type"] == LUSTRE_SUPER_MAGIC).any():
        pytest.skip("on Lustre: the test directory is on Lustre")
    for c in LUSTRE_COLUMNS:
        assert (posix[c] == 0).all(), c
    assert profile.job.metadata["lustre_striping"] == {}


def _record(fid: int, rank: int, name: str, **counters: int | float) -> dict:
    return {"id": fid, "rank": rank, "name": name, **counters}


def _on_lustre(profile: Profile) -> Profile:
    """The real profile turned into 8 ranks writing one 64 GiB file on 1 OST, as the runtime logs it.

    The shared file's reduced record carries the layout (the reduction takes the max of what every
    rank read); a per-rank log file on Lustre has its own record; a Data-on-MDT file (stripe count
    0) and a file on another file system carry no usable striping.
    """
    n = 8
    lustre = {"fs_type": LUSTRE_SUPER_MAGIC, "file_alignment": MiB}
    shared = _record(
        0x1111, -1, "/lus/scratch/run/out.dat", nranks=n, opens=n, writes=n * 8192, bytes_written=64 * GiB,
        max_byte_written=64 * GiB - 1, max_write_size=MiB, size_write_1m_4m=n * 8192, write_time=8 * 60.0,
        fastest_rank_time=55.0, slowest_rank_time=65.0, lustre_stripe_size=MiB, lustre_stripe_count=1,
        lustre_stripe_offset=3, lustre_components=1, **lustre,
    )
    own = [
        _record(0x2000 + r, r, f"/lus/scratch/run/log.{r}", opens=1, writes=10, bytes_written=10 * 4096,
                max_byte_written=10 * 4096 - 1, write_time=0.01, lustre_stripe_size=4 * MiB,
                lustre_stripe_count=2, lustre_stripe_offset=r, lustre_components=3, **lustre)
        for r in range(n)
    ]
    dom = _record(0x3000, 0, "/lus/scratch/run/small.cfg", opens=1, reads=1, bytes_read=100,
                  max_byte_read=99, lustre_stripe_size=64 * 1024, lustre_stripe_count=0,
                  lustre_stripe_offset=-1, lustre_components=2, **lustre)
    elsewhere = _record(0x4000, 0, "/home/user/input.nml", opens=1, reads=1, bytes_read=100, max_byte_read=99,
                        fs_type=0xEF53)
    posix = pd.DataFrame([shared, *own, dom, elsewhere]).fillna(0)
    posix["id"] = posix["id"].astype(np.uint64)
    empty = profile.layer("stdio")[0:0]
    ranks = pd.DataFrame(0.0, index=pd.RangeIndex(n, name="rank"), columns=list(profile.ranks.columns))
    ranks["wall"] = 600.0
    ranks["posix_write"] = 60.0
    ranks["finalized"] = 1.0
    job = dataclasses.replace(profile.job, nprocs=n, runtime=600.0)
    return Profile(job=job, ranks=add_derived_rank_columns(ranks),
                   files={"posix": posix, "stdio": empty, "mpiio": profile.layer("mpiio")[0:0]},
                   hints={}, file_ranks={("posix", 0x1111): np.arange(n)})


@pytest.fixture(scope="module")
def lustre_log(real_log: Path, tmp_path_factory) -> Path:
    log = tmp_path_factory.mktemp("lustre-synthetic") / "on-lustre.pario"
    write_pario_log(_on_lustre(read_log(real_log)), log)
    return log


def test_reader_fills_lustre_striping(lustre_log: Path):
    profile = read_log(lustre_log)
    striping = profile.job.metadata["lustre_striping"]
    expected = {0x1111: {"stripe_size": MiB, "stripe_count": 1}}
    expected.update({0x2000 + r: {"stripe_size": 4 * MiB, "stripe_count": 2} for r in range(8)})
    assert striping == expected  # not the Data-on-MDT file, not the file elsewhere
    posix = profile.layer("posix")
    (row,) = np.flatnonzero(posix["id"] == 0x1111)
    rec = posix.row(int(row))
    assert rec["lustre_stripe_offset"] == 3 and rec["lustre_components"] == 1


def test_stripe_count_rule_cites_the_runtime(lustre_log: Path):
    found = [f for f in diagnose(read_log(lustre_log)) if f.id == "LUSTRE-STRIPE-COUNT"]
    assert len(found) == 1
    ev = {m.name: m.value for m in found[0].evidence}
    assert ev["stripe_count"] == 1 and ev["stripe_size"] == MiB
    assert ev["file_size"] == 64 * GiB and ev["ranks"] == 8 and ev["suggested"] == 16
    assert ev["striping_source"] == STRIPING_SOURCES["pario"]
    assert "pario runtime" in ev["striping_source"]
    snippets = [r.snippet for r in found[0].recommendations]
    assert "lfs setstripe -c 16 -S 1048576 /lus/scratch/run" in snippets


def test_log_without_lustre_counters_still_reads(real_log: Path, tmp_path: Path):
    """A log written before the runtime recorded layouts: no POSIX_LUSTRE_* in its META."""
    profile = _on_lustre(read_log(real_log))
    schema = profile.job.metadata["schema"]
    layers = [
        {**lay, "counters": [c for c in lay["counters"] if not c.startswith("POSIX_LUSTRE_")]}
        for lay in schema["layers"]
    ]
    assert sum(len(a["counters"]) for a in layers) == sum(len(a["counters"]) for a in schema["layers"]) - 4
    old = dataclasses.replace(
        profile, job=dataclasses.replace(profile.job, metadata={**profile.job.metadata,
                                                               "schema": {**schema, "layers": layers}}))
    log = tmp_path / "old.pario"
    write_pario_log(old, log)
    back = read_log(log)
    assert "lustre_stripe_count" not in back.layer("posix").columns
    assert back.job.metadata["lustre_striping"] == {}
    assert "LUSTRE-STRIPE-COUNT" not in {f.id for f in diagnose(back)}
