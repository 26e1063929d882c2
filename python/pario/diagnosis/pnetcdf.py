"""PnetCDF rules: many small blocking puts, variables not aligned to the stripe (docs/diagnosis.md,
"I/O libraries"; the rules for HDF5 and both libraries are in libraries.py, which imports this
module where these rules take their place in the catalogue).  Detectors only: the words are in
pnetcdf_words.py."""

from __future__ import annotations

from collections.abc import Iterator

from pario.diagnosis import pnetcdf_words as words
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.library_records import by_id, first, grouped, layer, per_rank
from pario.diagnosis.registry import rule
from pario.model.layers import PNETCDF

FAMILY = "libraries"


@record
class SmallCalls:
    """One variable's small blocking puts (or gets)."""

    vid: int
    name: str
    kind: str  # "put" or "get"
    calls: float  # all ranks
    mean: float  # bytes per call
    time: float  # summed over ranks


@record
class SmallPuts(Hit):
    variables: tuple[SmallCalls, ...] = ()
    calls: float = 0.0  # all of them


@rule(
    "LIB-PNETCDF-SMALL-PUTS",
    title="Many small blocking PnetCDF puts",
    family=FAMILY,
    config=("pnetcdf_small_put_bytes", "pnetcdf_small_min_calls"),
    words=words.small_puts,
)
def pnetcdf_small_puts(facts: Facts, cfg: RuleConfig) -> Iterator[SmallPuts]:
    """A variable written (or read) with at least pnetcdf_small_min_calls blocking calls of at most
    pnetcdf_small_put_bytes each on average, and no nonblocking ones: ncmpi_iput + ncmpi_wait_all
    would combine them into one MPI-IO call."""
    v = layer(facts, PNETCDF.data)
    if not len(v):
        return
    cols = (
        "indep_writes",
        "coll_writes",
        "nb_writes",
        "indep_reads",
        "coll_reads",
        "nb_reads",
        "bytes_written",
        "bytes_read",
        "write_time",
        "read_time",
    )
    found = []
    for r in grouped(v, cols, facts.nprocs):
        for kind, calls, nb, nbytes, t in (
            ("put", r["indep_writes"] + r["coll_writes"], r["nb_writes"], r["bytes_written"],
             r["write_time"]),
            ("get", r["indep_reads"] + r["coll_reads"], r["nb_reads"], r["bytes_read"], r["read_time"]),
        ):
            if calls < cfg.pnetcdf_small_min_calls or nb > 0 or nbytes / calls > cfg.pnetcdf_small_put_bytes:
                continue
            found.append(SmallCalls(int(r["id"]), str(r["name"]), kind, calls, nbytes / calls, t))
    if not found:
        return
    yield SmallPuts(time_lost=per_rank(facts, sum(s.time for s in found)), variables=tuple(found),
                    calls=sum(s.calls for s in found))


@record
class MisalignedFile:
    fid: int
    name: str
    var_align: float  # nc_var_align_size
    stripe_size: int


@record
class Alignment(Hit):
    files: tuple[MisalignedFile, ...] = ()
    stripe_size: int = 0  # the largest of their stripe sizes


@rule("LIB-PNETCDF-ALIGNMENT", title="PnetCDF variables not aligned to the stripe", family=FAMILY, config=(),
      words=words.alignment)
def pnetcdf_alignment(facts: Facts, cfg: RuleConfig) -> Iterator[Alignment]:
    """A PnetCDF file on Lustre whose variable alignment (nc_var_align_size) is not a multiple of
    the stripe size: the variables' data starts in the middle of stripes."""
    f = layer(facts, PNETCDF.files)
    if not len(f) or "var_align" not in f:
        return
    names = by_id(f, f["name"])
    found = []
    for fid, a in first(f, "var_align").items():
        stripe = facts.striping.get(fid)
        if stripe is None or a < 0 or stripe.stripe_size <= 0 or (a > 0 and a % stripe.stripe_size == 0):
            continue
        found.append(MisalignedFile(fid, str(names[fid]), a, stripe.stripe_size))
    if not found:
        return
    yield Alignment(files=tuple(found), stripe_size=max(m.stripe_size for m in found))
