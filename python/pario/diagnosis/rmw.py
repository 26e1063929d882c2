"""MPIIO-COLLECTIVE-RMW: collective writes whose aggregators read before they write.

When the pieces the ranks give a collective write leave gaps in an aggregator's buffer, ROMIO
reads that part of the file first, fills the pieces in and writes the whole part back (a
read-modify-write): the file system sees reads the program never asked for and more bytes
written than MPI-IO was given.  E3SM-IO's aggregators spent 27% of a run that way.
"""

from __future__ import annotations

from collections.abc import Iterator

from pario.diagnosis import rmw_words as words
from pario.diagnosis.columns import counter, mpiio_files
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts
from pario.diagnosis.file_facts import fs_of, io_component
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.mpiio_records import of_file
from pario.diagnosis.registry import rule
from pario.diagnosis.stake import stake

FAMILY = "mpiio"


@record
class RmwFile:
    fid: int
    name: str
    collective_writes: float
    asked: float  # bytes MPI-IO was given to write
    written: float  # bytes the POSIX calls beneath wrote
    reads: float  # POSIX reads beneath (MPI-IO read nothing of the file)
    read_bytes: float
    read_time: float  # all ranks
    at_stake: float  # the slowest rank's time in those reads and in the extra writes
    component: str
    fs: str
    mean_piece: float  # bytes per collective write call and rank


@record
class CollectiveRmw(Hit):
    files: tuple[RmwFile, ...] = ()


def _file(facts: Facts, cfg: RuleConfig, r: dict) -> RmwFile | None:
    fid = int(r["id"])
    calls = float(r["coll_writes"])
    if calls <= 0 or float(r["bytes_read"]) > 0 or float(r["bytes_written"]) <= 0:
        return None
    posix = of_file(facts, "posix", fid)
    if not len(posix):
        return None
    asked = float(r["bytes_written"])
    written = float(counter(posix, "bytes_written").sum())
    reads = float(counter(posix, "reads").sum())
    if reads < cfg.rmw_min_reads and written < cfg.rmw_min_amplification * asked:
        return None
    extra = max(0.0, 1.0 - asked / written) if written > 0 else 0.0
    st = stake(facts, "posix", posix, {"read": 1.0, "write": extra})
    if st.max < cfg.min_time_lost_share * facts.runtime:
        return None
    read_bytes = float(counter(posix, "bytes_read").sum())
    return RmwFile(fid, str(r["name"]), calls, asked, written, reads, read_bytes,
                   float(counter(posix, "read_time").sum()), st.max, io_component(facts, fid),
                   fs_of(facts, fid, str(r["name"])), asked / calls)


@rule(
    "MPIIO-COLLECTIVE-RMW",
    title="Collective writes that read the file first (read-modify-write of the gaps)",
    family=FAMILY,
    config=("rmw_min_reads", "rmw_min_amplification", "min_time_lost_share"),
    words=words.collective_rmw,
)
def collective_rmw(facts: Facts, cfg: RuleConfig) -> Iterator[CollectiveRmw]:
    """The aggregators of collective writes read the file (which the program never read through
    MPI-IO) or write more bytes than they were given: read-modify-write of the gaps between pieces."""
    files = mpiio_files(facts)
    if not len(files) or not len(facts.layer("posix")):
        return
    found = [f for r in files.rows() if (f := _file(facts, cfg, r)) is not None]
    if not found:
        return
    found.sort(key=lambda f: f.at_stake, reverse=True)
    yield CollectiveRmw(time_lost=found[0].at_stake, files=tuple(found))
