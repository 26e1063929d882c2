"""Helpers shared by the tests that check a log's file records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pario.model import Profile
from pario.table import Table

# io_known's standard run: IO_KNOWN_NP ranks, each making IO_KNOWN_K collective writes of IO_KNOWN_S bytes
IO_KNOWN_NP, IO_KNOWN_K, IO_KNOWN_S = 4, 8, 4096


def one_record(records: Table, name: str) -> dict[str, Any]:
    """The single record of file ``name`` in a layer's table (fails if there are none or several)."""
    rows = records[records["name"] == name]
    assert len(rows) == 1, f"expected one record for {name}, got {len(rows)}"
    return rows.row(0)


def check_io_known(profile: Profile, out: Path, nprocs: int = IO_KNOWN_NP, k: int = IO_KNOWN_K,
                   s: int = IO_KNOWN_S) -> None:
    """The counters of tests/programs/io_known.c (``io_known OUT k s`` on ``nprocs`` ranks),
    whatever launched it (mpirun, srun, MPICH's mpiexec): they depend on the program only."""
    job = profile.job
    assert job.nprocs == nprocs and job.complete and job.partial_reasons == ()
    assert job.exe.endswith("io_known") and len(profile.ranks) == nprocs and "rank" not in profile.ranks

    rec = one_record(profile.layer("mpiio"), str(out / "shared.dat"))
    assert rec["rank"] == -1 and rec["nranks"] == nprocs and rec["coll_opens"] == nprocs
    assert rec["coll_writes"] == nprocs * k and rec["indep_writes"] == 0
    assert rec["indep_reads"] == nprocs * k
    assert rec["bytes_written"] == nprocs * k * s and rec["bytes_read"] == nprocs * k * s
    assert rec["size_write_agg_1k_10k"] == nprocs * k
    assert rec["syncs"] == 2 * nprocs

    posix = profile.layer("posix")
    for r in range(nprocs):
        rec = one_record(posix, str(out / f"fpp.{r}"))
        assert rec["rank"] == r and rec["opens"] == 1
        assert rec["writes"] == 16 and rec["bytes_written"] == 16000
        assert rec["reads"] == 1 and rec["bytes_read"] == 500
        assert rec["seeks"] == 1 and rec["fsyncs"] == 1

    pair = one_record(posix, str(out / "pair.dat"))
    assert pair["nranks"] == 2 and pair["bytes_written"] == 600
    assert list(profile.file_ranks[("posix", int(pair["id"]))]) == [1, 2]
    log = one_record(profile.layer("stdio"), str(out / "log.txt"))
    assert log["rank"] == 0 and log["writes"] == 10 and log["bytes_written"] == 80
