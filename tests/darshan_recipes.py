"""Recipes of the Darshan logs in tests/data/darshan-built: cases no real log here shows, written
through libdarshan-util's own write functions (pario's Darshan writer,
:func:`pario.log.darshan_writer.write_darshan_log`), so the library reads them as it reads a
log Darshan wrote.

Each recipe is a function returning a :class:`~pario.log.darshan_writer.DarshanLog`, registered
in :data:`RECIPES` under its log's file name.  ``python tests/darshan_recipes.py [DIR]`` writes
them all (default: tests/data/darshan-built); the tests read the committed logs, and
``test_built_logs_match_their_recipes`` checks that the recipes still give those bytes.

A counter a recipe does not name is 0 (``fill=-1``: Darshan's "not recorded" for every counter
not named, as a module that was built without its counters writes them).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from pario.log import darshan_lib
from pario.log.darshan_lib import SEGMENT_DTYPE, DxtSegments
from pario.log.darshan_writer import (
    DarshanJob,
    DarshanLog,
    LustreComponent,
    LustreRecord,
    ModuleRecords,
    write_darshan_log,
)

BUILT_DIR = Path(__file__).parent / "data" / "darshan-built"
RECIPES: dict[str, Callable[[], DarshanLog]] = {}

#: (record id, rank, {counter or fcounter name: value})
Row = tuple[int, int, Mapping[str, float]]


def recipe(name: str) -> Callable[[Callable[[], DarshanLog]], Callable[[], DarshanLog]]:
    """Register a recipe under its log's file name."""
    def register(fn: Callable[[], DarshanLog]) -> Callable[[], DarshanLog]:
        RECIPES[name] = fn
        return fn
    return register


def module(mod: str, rows: Sequence[Row], *, fill: float = 0) -> ModuleRecords:
    """A module's records; every counter not named in a row is ``fill``."""
    names = darshan_lib.counter_names(mod)
    fnames = darshan_lib.counter_names(mod, floating=True)
    counters = np.full((len(rows), len(names)), int(fill), dtype=np.int64)
    fcounters = np.full((len(rows), len(fnames)), float(fill), dtype=np.float64)
    for i, (_, _, values) in enumerate(rows):
        for key, value in values.items():
            if key in names:
                counters[i, names.index(key)] = int(value)
            elif key in fnames:
                fcounters[i, fnames.index(key)] = float(value)
            else:
                raise KeyError(f"{mod} has no counter {key}")
    file_ids = np.zeros(len(rows), dtype=np.uint64) if mod in ("H5D", "PNETCDF_VAR") else None
    return ModuleRecords(module=mod, ids=np.array([r[0] for r in rows], dtype=np.uint64),
                         ranks=np.array([r[1] for r in rows], dtype=np.int64), counters=counters,
                         fcounters=fcounters, file_rec_ids=file_ids)


def lustre(rec_id: int, stripe_size: int, stripe_count: int) -> LustreRecord:
    """A file's Lustre layout: one component, OSTs 0..count-1."""
    comps = {"LUSTRE_COMP_STRIPE_SIZE": stripe_size, "LUSTRE_COMP_STRIPE_COUNT": stripe_count,
             "LUSTRE_COMP_STRIPE_PATTERN": 0, "LUSTRE_COMP_FLAGS": 0, "LUSTRE_COMP_EXT_START": 0,
             "LUSTRE_COMP_EXT_END": -1, "LUSTRE_COMP_MIRROR_ID": 0}
    return LustreRecord(id=rec_id, rank=-1, components=(LustreComponent(comps, tuple(range(stripe_count))),))


def job(nprocs: int, start: float, end: float, *, jobid: int = 1234, whole_seconds: bool = False,
        metadata: str = "") -> DarshanJob:
    """The job record; ``whole_seconds``: start and end without their nanoseconds, as Darshan
    before 3.4.1 wrote them."""
    s_ns, e_ns = round(start * 1e9), round(end * 1e9)
    if whole_seconds:
        s_ns, e_ns = s_ns // 10**9 * 10**9, e_ns // 10**9 * 10**9
    return DarshanJob(uid=1000, start_time_sec=s_ns // 10**9, start_time_nsec=s_ns % 10**9,
                      end_time_sec=e_ns // 10**9, end_time_nsec=e_ns % 10**9, nprocs=nprocs,
                      jobid=jobid, metadata=metadata)


def log(job_record: DarshanJob, exe: str, names: Mapping[int, str], modules: Sequence[ModuleRecords],
        *, mounts: Sequence[tuple[str, str]] = (("/", "ext4"),),
        lustre_records: Sequence[LustreRecord] = ()) -> DarshanLog:
    return DarshanLog(job=job_record, exe=exe, mounts=tuple(mounts), names=dict(names),
                      modules=tuple(modules), lustre=tuple(lustre_records), partial_modules=())


#: One DXT segment of a recipe: (rank, record id, is a write, offset, length, start, end).
Segment = tuple[int, int, bool, int, int, float, float]


def dxt_segments(rows: Sequence[Segment]) -> DxtSegments:
    """DXT records of ``rows``: one per (file, rank), its writes then its reads."""
    keys = sorted({(r[1], r[0]) for r in rows})
    segs, ids, ranks, nw, nr = [], [], [], [], []
    for fid, rank in keys:
        mine = [r for r in rows if (r[1], r[0]) == (fid, rank)]
        writes = [r for r in mine if r[2]]
        reads = [r for r in mine if not r[2]]
        segs += [(r[3], r[4], r[5], r[6]) for r in writes + reads]
        ids.append(fid)
        ranks.append(rank)
        nw.append(len(writes))
        nr.append(len(reads))
    return DxtSegments(np.array(ids, np.uint64), np.array(ranks, np.int64), tuple("nid0001" for _ in keys),
                       np.array(nw, np.int64), np.array(nr, np.int64), np.array(segs, dtype=SEGMENT_DTYPE))


def write(name: str, directory: Path = BUILT_DIR) -> Path:
    """Write the recipe ``name`` into ``directory``; its path."""
    out = directory / name
    write_darshan_log(RECIPES[name](), out)
    return out


# ---------------------------------------------------------------------------
# E3SM-IO: PnetCDF over MPI-IO on Lustre, the PnetCDF record without counters
# ---------------------------------------------------------------------------

E3SM_OUT = "/lustre/scratch/e3sm/f_case_866x72_16p.nc"
E3SM_IN = "/lustre/scratch/e3sm/map_f_case_16p.h5"
E3SM_OUT_ID, E3SM_IN_ID, E3SM_STDOUT_ID = 0x51A3F0C2D4E5A601, 0x51A3F0C2D4E5A602, 0x51A3F0C2D4E5A603
E3SM_NPROCS = 512
E3SM_RUNTIME = 726.0
#: MPI-IO write time over all ranks (darshan-parser's MPIIO_F_WRITE_TIME of the real log)
E3SM_MPIIO_WRITE_TIME = 350_932.0
E3SM_BYTES = 77_012_345_472
E3SM_POSIX_WRITES = 152_320  # 505,599-byte writes on average
E3SM_REQUEST = 800_964  # the most common POSIX write size


@recipe("e3sm-pnetcdf-no-counters.darshan")
def e3sm_pnetcdf_no_counters() -> DarshanLog:
    """512 ranks write one 77 GB file through PnetCDF over MPI-IO (collective) on Lustre
    (1 MiB stripes over 8 OSTs); the PNETCDF_FILE record has every counter at -1, as an
    E3SM-IO log does.  MPI-IO write time is 685 s per rank of a 726 s run."""
    n = E3SM_NPROCS
    mpiio = module("MPI-IO", [(E3SM_OUT_ID, -1, {
        "MPIIO_COLL_OPENS": n, "MPIIO_COLL_WRITES": 64 * n, "MPIIO_VIEWS": 64 * n, "MPIIO_HINTS": n,
        "MPIIO_MODE": 2, "MPIIO_BYTES_WRITTEN": E3SM_BYTES, "MPIIO_SIZE_WRITE_AGG_1M_4M": 64 * n,
        "MPIIO_ACCESS1_ACCESS": 2_350_080, "MPIIO_ACCESS1_COUNT": 64 * n,
        "MPIIO_FASTEST_RANK": 17, "MPIIO_FASTEST_RANK_BYTES": E3SM_BYTES // n,
        "MPIIO_SLOWEST_RANK": 0, "MPIIO_SLOWEST_RANK_BYTES": E3SM_BYTES // n,
        "MPIIO_F_OPEN_START_TIMESTAMP": 2.1, "MPIIO_F_WRITE_START_TIMESTAMP": 30.5,
        "MPIIO_F_WRITE_END_TIMESTAMP": 721.0, "MPIIO_F_CLOSE_START_TIMESTAMP": 721.2,
        "MPIIO_F_OPEN_END_TIMESTAMP": 2.4, "MPIIO_F_CLOSE_END_TIMESTAMP": 722.0,
        "MPIIO_F_WRITE_TIME": E3SM_MPIIO_WRITE_TIME, "MPIIO_F_META_TIME": 1_024.0,
        "MPIIO_F_MAX_WRITE_TIME": 31.0, "MPIIO_F_FASTEST_RANK_TIME": 672.0,
        "MPIIO_F_SLOWEST_RANK_TIME": 700.0})])
    posix = module("POSIX", [
        (E3SM_OUT_ID, -1, {
            "POSIX_OPENS": n, "POSIX_WRITES": E3SM_POSIX_WRITES, "POSIX_SEEKS": E3SM_POSIX_WRITES,
            "POSIX_BYTES_WRITTEN": E3SM_BYTES, "POSIX_MAX_BYTE_WRITTEN": E3SM_BYTES - 1,
            "POSIX_CONSEC_WRITES": 1_024, "POSIX_SEQ_WRITES": 150_000, "POSIX_FILE_NOT_ALIGNED": 149_000,
            "POSIX_FILE_ALIGNMENT": 4096, "POSIX_MEM_ALIGNMENT": 8,
            "POSIX_SIZE_WRITE_10K_100K": 2_320, "POSIX_SIZE_WRITE_100K_1M": 150_000,
            "POSIX_ACCESS1_ACCESS": E3SM_REQUEST, "POSIX_ACCESS1_COUNT": 90_000,
            "POSIX_ACCESS2_ACCESS": 262_144, "POSIX_ACCESS2_COUNT": 60_000,
            "POSIX_FASTEST_RANK": 3, "POSIX_FASTEST_RANK_BYTES": 0,
            "POSIX_SLOWEST_RANK": 0, "POSIX_SLOWEST_RANK_BYTES": 2_300_000_000,
            "POSIX_F_OPEN_START_TIMESTAMP": 2.1, "POSIX_F_WRITE_START_TIMESTAMP": 31.0,
            "POSIX_F_WRITE_END_TIMESTAMP": 720.9, "POSIX_F_CLOSE_START_TIMESTAMP": 721.5,
            "POSIX_F_OPEN_END_TIMESTAMP": 2.3, "POSIX_F_CLOSE_END_TIMESTAMP": 721.9,
            "POSIX_F_WRITE_TIME": 8_600.0, "POSIX_F_META_TIME": 40.0, "POSIX_F_MAX_WRITE_TIME": 2.5,
            "POSIX_F_FASTEST_RANK_TIME": 0.01, "POSIX_F_SLOWEST_RANK_TIME": 260.0}),
        (E3SM_IN_ID, 0, {
            "POSIX_OPENS": 1, "POSIX_READS": 40, "POSIX_BYTES_READ": 40 * 1_048_576,
            "POSIX_MAX_BYTE_READ": 40 * 1_048_576 - 1, "POSIX_CONSEC_READS": 39, "POSIX_SEQ_READS": 39,
            "POSIX_FILE_ALIGNMENT": 4096, "POSIX_SIZE_READ_1M_4M": 40,
            "POSIX_ACCESS1_ACCESS": 1_048_576, "POSIX_ACCESS1_COUNT": 40,
            "POSIX_F_OPEN_START_TIMESTAMP": 0.5, "POSIX_F_READ_START_TIMESTAMP": 0.6,
            "POSIX_F_READ_END_TIMESTAMP": 1.4, "POSIX_F_CLOSE_START_TIMESTAMP": 1.5,
            "POSIX_F_OPEN_END_TIMESTAMP": 0.55, "POSIX_F_CLOSE_END_TIMESTAMP": 1.55,
            "POSIX_F_READ_TIME": 0.8, "POSIX_F_META_TIME": 0.02}),
    ])
    # every counter -1: Darshan's PnetCDF module recorded the file but none of its counters
    pnetcdf = module("PNETCDF_FILE", [(E3SM_OUT_ID, -1, {})], fill=-1)
    stdio = module("STDIO", [(E3SM_STDOUT_ID, 0, {
        "STDIO_WRITES": 120, "STDIO_BYTES_WRITTEN": 5_936, "STDIO_MAX_BYTE_WRITTEN": 5_935,
        "STDIO_F_WRITE_TIME": 0.004, "STDIO_F_WRITE_START_TIMESTAMP": 0.1,
        "STDIO_F_WRITE_END_TIMESTAMP": 725.0})])
    return log(job(n, 1_700_000_000.25, 1_700_000_000.25 + E3SM_RUNTIME),
               "/global/homes/e3sm/E3SM-IO/build/e3sm_io -k -o f_case_866x72_16p.nc map_f_case_16p.h5",
               {E3SM_OUT_ID: E3SM_OUT, E3SM_IN_ID: E3SM_IN, E3SM_STDOUT_ID: "<STDOUT>"},
               [posix, mpiio, pnetcdf, stdio], mounts=(("/lustre/scratch", "lustre"), ("/", "ext4")),
               lustre_records=[lustre(E3SM_OUT_ID, 1_048_576, 8), lustre(E3SM_IN_ID, 1_048_576, 8)])


# ---------------------------------------------------------------------------
# Darshan 3.4.0: a 3.41 log whose job times are whole seconds
# ---------------------------------------------------------------------------

MPI_IO_TEST_350 = Path(__file__).parent / "data" / "darshan-logs" / "mpi-io-test-x86_64-3.5.0.darshan"
#: the run time the 3.5.0 log records (nanosecond job times)
MPI_IO_TEST_RUNTIME = 0.051283836364746094
#: a start 20 ms before a second boundary, so the whole-second times are 1 s apart
WHOLE_SECONDS_START = 1_762_569_885.98


@recipe("mpi-io-test-whole-seconds-3.41.darshan")
def mpi_io_test_whole_seconds() -> DarshanLog:
    """The 4-rank mpi-io-test run of mpi-io-test-x86_64-3.5.0.darshan (its POSIX, MPI-IO, STDIO
    and LUSTRE records, copied) with the job record Darshan 3.4.0 wrote: format 3.41, start and
    end in whole seconds (nanoseconds 0).  The run starts at x.98 s and lasts 51 ms, so the
    whole seconds are 1 s apart and libdarshan-util says the run took 1 s."""
    real = darshan_lib.read_log(str(MPI_IO_TEST_350))
    mods = [ModuleRecords(module=m, ids=r.ids, ranks=r.ranks, counters=r.counters, fcounters=r.fcounters,
                          file_rec_ids=r.file_rec_ids) for m, r in real.records.items()]
    assert real.lustre is not None  # one component per file in this log
    comps = real.lustre
    stripes = [LustreRecord(id=int(rid), rank=int(rank), components=(LustreComponent(
                   dict(zip(comps.counter_names, counters.tolist(), strict=True)), tuple(osts.tolist())),))
               for rid, rank, counters, osts in zip(comps.ids, comps.ranks, comps.counters, comps.ost_ids,
                                                    strict=True)]
    names = {rid: name for rid, name in real.names.items() if not name.startswith("heatmap:")}
    end = WHOLE_SECONDS_START + MPI_IO_TEST_RUNTIME
    return log(job(real.job["nprocs"], WHOLE_SECONDS_START, end, jobid=real.job["jobid"], whole_seconds=True,
                   metadata="lib_ver=3.4.0\nh=romio_no_indep_rw=true;cb_nodes=4\n"),
               real.exe, names, mods, mounts=[(p, t) for p, t in real.mounts], lustre_records=stripes)


# ---------------------------------------------------------------------------
# One rank re-reads byte 0 a million times (POSIX only, no MPI)
# ---------------------------------------------------------------------------

REREAD_FILE = "/home/user/run/state.flag"
REREAD_ID = 0x7E5EAD0000000001
REREAD_READS = 1_000_000
REREAD_RUNTIME = 20.0


@recipe("posix-reread-byte0.darshan")
def posix_reread_byte0() -> DarshanLog:
    """A 1-rank program without MPI polls a flag file: it reads its byte 0 a million times
    (pread of 1 byte at offset 0), so POSIX_MAX_BYTE_READ is 0 and no read is sequential
    (POSIX_SEQ_READS 0).  The reads take 6 s of a 20 s run."""
    posix = module("POSIX", [(REREAD_ID, 0, {
        "POSIX_OPENS": 1, "POSIX_READS": REREAD_READS, "POSIX_BYTES_READ": REREAD_READS,
        "POSIX_MAX_BYTE_READ": 0, "POSIX_SEQ_READS": 0, "POSIX_CONSEC_READS": 0,
        "POSIX_FILE_ALIGNMENT": 4096, "POSIX_MEM_ALIGNMENT": 8, "POSIX_SIZE_READ_0_100": REREAD_READS,
        "POSIX_ACCESS1_ACCESS": 1, "POSIX_ACCESS1_COUNT": REREAD_READS,
        "POSIX_F_OPEN_START_TIMESTAMP": 0.2, "POSIX_F_OPEN_END_TIMESTAMP": 0.21,
        "POSIX_F_READ_START_TIMESTAMP": 0.3, "POSIX_F_READ_END_TIMESTAMP": 19.5,
        "POSIX_F_CLOSE_START_TIMESTAMP": 19.6, "POSIX_F_CLOSE_END_TIMESTAMP": 19.61,
        "POSIX_F_READ_TIME": 6.0, "POSIX_F_META_TIME": 0.02, "POSIX_F_MAX_READ_TIME": 0.001})])
    return log(job(1, 1_700_100_000.25, 1_700_100_000.25 + REREAD_RUNTIME, jobid=4321),
               "/home/user/bin/poll_flag /home/user/run/state.flag", {REREAD_ID: REREAD_FILE}, [posix])


# ---------------------------------------------------------------------------
# IOR over POSIX (no MPI-IO): a clean shared-file write on Lustre
# ---------------------------------------------------------------------------

IOR_POSIX_FILE = "/lustre/scratch/ior/testFile"
IOR_POSIX_ID = 0x10A5000000000001
IOR_POSIX_NPROCS = 16
IOR_POSIX_BLOCK = 256 << 20  # -b 256m per rank
IOR_POSIX_TRANSFER = 1 << 20  # -t 1m
IOR_POSIX_RUNTIME = 100.0


@recipe("ior-posix-shared.darshan")
def ior_posix_shared() -> DarshanLog:
    """IOR -a POSIX -w -t 1m -b 256m on 16 ranks: one 4 GiB shared file on Lustre (1 MiB stripes
    over 4 OSTs) written in 1 MiB requests at stripe boundaries, in file order, the ranks evenly
    loaded (58 to 62 s of writes each in a 100 s run).  No MPI-IO record: IOR's POSIX backend."""
    n, per_rank = IOR_POSIX_NPROCS, IOR_POSIX_BLOCK // IOR_POSIX_TRANSFER
    writes, nbytes = n * per_rank, n * IOR_POSIX_BLOCK
    posix = module("POSIX", [(IOR_POSIX_ID, -1, {
        "POSIX_OPENS": n, "POSIX_WRITES": writes, "POSIX_BYTES_WRITTEN": nbytes,
        "POSIX_MAX_BYTE_WRITTEN": nbytes - 1, "POSIX_SEQ_WRITES": writes - n,
        "POSIX_CONSEC_WRITES": writes - n,
        "POSIX_FILE_ALIGNMENT": IOR_POSIX_TRANSFER, "POSIX_MEM_ALIGNMENT": 8, "POSIX_FILE_NOT_ALIGNED": 0,
        "POSIX_SIZE_WRITE_100K_1M": writes, "POSIX_ACCESS1_ACCESS": IOR_POSIX_TRANSFER,
        "POSIX_ACCESS1_COUNT": writes, "POSIX_FASTEST_RANK": 5, "POSIX_FASTEST_RANK_BYTES": IOR_POSIX_BLOCK,
        "POSIX_SLOWEST_RANK": 11, "POSIX_SLOWEST_RANK_BYTES": IOR_POSIX_BLOCK,
        "POSIX_F_OPEN_START_TIMESTAMP": 1.0, "POSIX_F_OPEN_END_TIMESTAMP": 1.2,
        "POSIX_F_WRITE_START_TIMESTAMP": 1.3, "POSIX_F_WRITE_END_TIMESTAMP": 63.5,
        "POSIX_F_CLOSE_START_TIMESTAMP": 63.6, "POSIX_F_CLOSE_END_TIMESTAMP": 64.0,
        "POSIX_F_WRITE_TIME": 60.0 * n, "POSIX_F_META_TIME": 0.3 * n, "POSIX_F_MAX_WRITE_TIME": 0.2,
        "POSIX_F_FASTEST_RANK_TIME": 58.3, "POSIX_F_SLOWEST_RANK_TIME": 62.3,
        "POSIX_F_VARIANCE_RANK_TIME": 1.2, "POSIX_F_VARIANCE_RANK_BYTES": 0.0})])
    return log(job(n, 1_700_200_000.25, 1_700_200_000.25 + IOR_POSIX_RUNTIME, jobid=5678),
               f"/home/user/ior/bin/ior -a POSIX -w -t 1m -b 256m -o {IOR_POSIX_FILE}",
               {IOR_POSIX_ID: IOR_POSIX_FILE}, [posix], mounts=(("/lustre/scratch", "lustre"), ("/", "ext4")),
               lustre_records=[lustre(IOR_POSIX_ID, IOR_POSIX_TRANSFER, 4)])


def main(argv: Sequence[str]) -> int:
    directory = Path(argv[0]) if argv else BUILT_DIR
    directory.mkdir(parents=True, exist_ok=True)
    for name in RECIPES:
        print(write(name, directory))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
