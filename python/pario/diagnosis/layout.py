"""The Lustre layout to recommend for a file: one function, so that every finding about a file
prints the same ``lfs setstripe`` command and the same striping hints.

:func:`layout_of` reads what the log says about a file (its striping, size, the ranks sharing
it, the ranks doing its file-system I/O and its request size) and gives the stripe count and
size to recommend, both values ``lfs setstripe`` accepts.  The rules that print a striping
command, the MPI-IO hints ``striping_factor`` / ``striping_unit`` or the aggregator count that
goes with the stripes (LUSTRE-STRIPE-COUNT, LUSTRE-STRIPE-SIZE, MPIIO-SINGLE-AGGREGATOR,
MPIIO-AGGREGATORS-STRIPES, IO-MISALIGNED, TIME-IO-BOUND) take them from here.  The rules and
their rounding are documented in docs/diagnosis.md, "Lustre layout advice".
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

import numpy as np

from pario.diagnosis.columns import counter, nranks
from pario.diagnosis.config import KiB, RuleConfig
from pario.diagnosis.facts import Facts, Striping
from pario.diagnosis.file_facts import file_size, participation, uint64_ids
from pario.table import group_codes, group_reduce, isin

# What lfs setstripe accepts (liblustreapi: llapi_stripe_size_is_aligned,
# llapi_stripe_size_is_too_big, llapi_stripe_count_is_valid, llapi_stripe_index_is_valid).
#: a stripe size is a multiple of LOV_MIN_STRIPE_SIZE
STRIPE_UNIT = 64 * KiB
#: sizes of 4 GiB and more are refused ("would wrap")
MAX_STRIPE_SIZE = (1 << 32) - STRIPE_UNIT
#: LOV_MAX_STRIPE_COUNT (-1: every OST)
MAX_STRIPE_COUNT = 2000
#: LOV_V1_INSANE_STRIPE_COUNT, the largest OST index -i takes (-1: any)
MAX_STRIPE_INDEX = 65532

#: a request within this share of a multiple of 64 KiB counts as that multiple (a mean of
#: mixed sizes is never exact)
ALIGNABLE_SHARE = 0.01
#: a request fits a stripe when one is a whole multiple of the other to within this share
FIT_SHARE = 0.05
#: "far fewer stripes than the size calls for": at most this share of the suggested count
FEW_STRIPES_SHARE = 0.25


def fits(request: float, stripe: float) -> bool:
    """The request is a whole multiple or a whole divisor of the stripe (to within FIT_SHARE)."""
    if request <= 0 or stripe <= 0:
        return True
    big, small = max(request, stripe), min(request, stripe)
    ratio = big / small
    whole = max(round(ratio), 1)
    return abs(ratio - whole) <= FIT_SHARE * ratio / whole


def lfs_stripe_size(size: float) -> int:
    """``size`` as a stripe size lfs accepts: rounded up to a multiple of 64 KiB, at least 64 KiB
    and below 4 GiB."""
    units = max(1, math.ceil(size / STRIPE_UNIT))
    return int(min(units * STRIPE_UNIT, MAX_STRIPE_SIZE))


def lfs_stripe_count(count: int, osts: int | None = None) -> int:
    """``count`` as a stripe count lfs accepts: 1 to 2000, and no more than the OSTs known."""
    top = MAX_STRIPE_COUNT if osts is None or osts <= 0 else min(MAX_STRIPE_COUNT, osts)
    return int(min(max(count, 1), top))


def stripe_size_for(request: float, current: int) -> int:
    """The stripe size for requests of ``request`` bytes on a file striped at ``current`` bytes.

    The rounding rule: a request that fits the current stripe keeps it; a request that is a
    multiple of 64 KiB (to within ALIGNABLE_SHARE) becomes the stripe size, one request per
    stripe.  Any other request (800,964 bytes, say) fits no stripe size lfs accepts: stripe
    boundaries fall inside requests whatever the size, and a smaller stripe only adds
    boundaries (one per stripe size of data, each shared by two writers), so the current size
    stays unless it is smaller than one request, which it is rounded up to (each request then
    spans at most two stripes).
    """
    if request <= 0 or fits(request, current):
        return lfs_stripe_size(current)
    nearest = round(request / STRIPE_UNIT) * STRIPE_UNIT
    if STRIPE_UNIT <= nearest <= MAX_STRIPE_SIZE and abs(nearest - request) <= ALIGNABLE_SHARE * request:
        return int(nearest)
    return lfs_stripe_size(max(current, request))


def suggested_stripes(size: float, cfg: RuleConfig) -> int:
    """The power of two covering one OST per ``lustre_bytes_per_ost``, from 4 to
    ``lustre_max_suggested_stripes``."""
    per_ost = size / cfg.lustre_bytes_per_ost
    pow2 = 1 if per_ost <= 1 else 1 << int(math.ceil(math.log2(per_ost)))
    return lfs_stripe_count(int(min(cfg.lustre_max_suggested_stripes, max(4, pow2))))


def stripe_count_for(size: float, sharing: float, current: int, cfg: RuleConfig) -> int:
    """The stripe count for a file of ``size`` bytes shared by ``sharing`` ranks on ``current`` OSTs.

    A file one rank uses keeps its count (a file per process belongs on one OST); a shared file
    of at least ``large_shared_file_bytes`` on one OST (MPI-IO on Lustre then has one
    aggregator), or of at least ``lustre_large_file_bytes`` on at most a quarter of the
    suggested count, gets the suggested count.
    """
    if sharing < 2:
        return current
    want = suggested_stripes(size, cfg)
    one_ost = current == 1 and size >= cfg.large_shared_file_bytes
    few = size >= cfg.lustre_large_file_bytes and current <= FEW_STRIPES_SHARE * want
    return want if (one_ost or few) and want > current else current


def aggregators_for(stripe_count: int, in_use: float | None, per_ost_max: float) -> int:
    """cb_nodes for a file on ``stripe_count`` OSTs: a multiple of it, with as many per OST as
    the aggregators in use give (rounded down), from 1 to ``per_ost_max``."""
    k = int(in_use // stripe_count) if in_use and stripe_count > 0 else 1
    return max(1, min(int(per_ost_max), k)) * max(stripe_count, 1)


#: The directory of a file whose path is anonymised: a shell word that stands for it and says what
#: to fill in, so that the line stays valid as printed.
UNKNOWN_DIRECTORY = "${DIR:?set DIR to the directory of the file}"


def directory_of(name: str) -> str:
    """The directory to stripe for file ``name`` (new files inherit its layout), shell-quoted; a
    name without a directory is relative to where the program ran: "."."""
    return quoted_directory(directory_key(name))


def directory_key(name: str) -> str | None:
    """What :func:`directory_of` quotes: the directory as it is, or None when it is not known;
    cheap enough to run over a million names, each distinct one then quoted once (two distinct
    keys quote distinctly)."""
    head, sep, base = name.rpartition("/")
    if not sep:
        return "."
    if base.isdigit() and len(base) >= 8:
        # an anonymised Darshan path (the mount point, then a hash of the rest): its directory is
        # not known, and the mount point is not the directory to stripe
        return None
    return head or "/"


def quoted_directory(key: str | None) -> str:
    """A :func:`directory_key` as :func:`directory_of` gives it."""
    return UNKNOWN_DIRECTORY if key is None else shlex.quote(key)


@dataclass(frozen=True)
class Layout:
    """The layout recommended for one file, and what it was judged on."""

    name: str
    current: Striping
    stripe_count: int
    stripe_size: int
    #: the request size the stripe size was matched to (0: unknown or not judged)
    request: float
    #: ``request`` is Darshan's most common access size (else the mean request)
    common: bool
    file_size: float
    #: ranks with records of the file
    sharing: float
    #: ranks doing its file-system I/O (participation ratio; 0: unknown)
    writers: float

    @property
    def changes_count(self) -> bool:
        return self.stripe_count != self.current.stripe_count

    @property
    def changes_size(self) -> bool:
        return self.stripe_size != self.current.stripe_size

    @property
    def changed(self) -> bool:
        return self.changes_count or self.changes_size

    @property
    def directory(self) -> str:
        return directory_of(self.name)

    def command(self) -> str:
        """``lfs setstripe -c COUNT -S SIZE DIRECTORY``."""
        return f"lfs setstripe -c {self.stripe_count} -S {self.stripe_size} {self.directory}"

    def hints(self) -> str:
        """The MPI-IO hints that give a new file this layout."""
        return f"striping_factor {self.stripe_count}\nstriping_unit {self.stripe_size}"


def striped_files(facts: Facts) -> tuple[dict[int, float], dict[int, str]]:
    """Per striped file with records: the ranks sharing it (the most of any layer) and its name
    (that of its last record, in the last layer that has one).  Cached."""
    return facts.cached("layout: striped files", lambda: _striped_files(facts))


def _striped_files(facts: Facts) -> tuple[dict[int, float], dict[int, str]]:
    wanted = np.array([f for f in facts.striping if 0 <= f < 1 << 64], dtype=np.uint64)
    shared: dict[int, float] = {}
    names: dict[int, str] = {}
    for records in facts.files.values():
        if not len(records):
            continue
        ids = uint64_ids(records["id"])
        rows = np.flatnonzero(isin(ids, wanted))
        if not len(rows):
            continue
        keys, codes = group_codes(ids[rows])
        per = group_reduce(nranks(records, facts.nprocs)[rows], codes, len(keys), "sum")
        last = np.zeros(len(keys), dtype=np.intp)
        np.maximum.at(last, codes, np.arange(len(rows)))
        layer_names = np.asarray(records["name"])[rows[last]]
        for f, v, name in zip(keys.tolist(), per.tolist(), layer_names, strict=True):
            shared[f] = max(shared.get(f, 0.0), v)
            names[f] = str(name)
    return shared, names


def request_size(facts: Facts, fid: int) -> tuple[float, bool]:
    """A file's request size at the file-system level: Darshan's most common access size when
    recorded (True), else the mean POSIX request (False); 0 without POSIX requests."""
    posix = facts.layer("posix")
    if not len(posix):
        return 0.0, False
    rec = posix[uint64_ids(posix["id"]) == np.uint64(fid)]
    n = float((counter(rec, "reads") + counter(rec, "writes")).sum())
    if n <= 0:
        return 0.0, False
    common = float(counter(rec, "access1_access").max()) if "access1_access" in rec and len(rec) else 0.0
    if common > 0:
        return common, True
    return float((counter(rec, "bytes_read") + counter(rec, "bytes_written")).sum()) / n, False


def layout_of(facts: Facts, fid: int, cfg: RuleConfig) -> Layout | None:
    """The layout to recommend for file ``fid`` (None when its striping is not known).  Cached."""
    s = facts.striping.get(int(fid))
    if s is None:
        return None
    return facts.cached(("layout", int(fid), cfg), lambda: _layout(facts, int(fid), s, cfg))


def _layout(facts: Facts, fid: int, s: Striping, cfg: RuleConfig) -> Layout:
    sharing, names = striped_files(facts)
    size = file_size(facts, fid)
    ranks = sharing.get(fid, 0.0)
    request, common = request_size(facts, fid)
    p = participation(facts, fid)
    writers = p.effective if p is not None else 0.0
    # the stripe size is matched to the requests only where ranks share stripes (LUSTRE-STRIPE-SIZE)
    judged = writers >= 2 and request > cfg.small_request_bytes
    return Layout(
        name=names.get(fid, ""),
        current=s,
        stripe_count=lfs_stripe_count(stripe_count_for(size, ranks, s.stripe_count, cfg)),
        stripe_size=stripe_size_for(request, s.stripe_size) if judged else lfs_stripe_size(s.stripe_size),
        request=request if judged else 0.0,
        common=common,
        file_size=size,
        sharing=ranks,
        writers=writers,
    )
