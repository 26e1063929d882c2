"""Everything the report shows about one run, computed once from the model."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pario.analysis.activity import Activity, activity
from pario.analysis.breakdown import TimeShares, rank_breakdown, time_shares
from pario.analysis.engine import EngineFile, engine_files
from pario.analysis.files import file_table
from pario.analysis.io import IOSummary, io_summary, outermost_bytes_per_rank
from pario.analysis.libraries import LibrarySummary, library_summary
from pario.analysis.memory import MemorySummary, memory_summary
from pario.analysis.modules import unseen_io_phrase
from pario.analysis.mpi import MpiSummary, mpi_summary
from pario.analysis.mpihints import HintsInEffect, hints_in_effect
from pario.analysis.pop import PopMetrics, pop_metrics
from pario.analysis.times import RankTimes, at_ranks, rank_times
from pario.launch.hints import rejected_notes
from pario.model import Profile
from pario.model.rankio import SHARED_NOTE
from pario.table import Table
from pario.values import Value


@dataclass(frozen=True)
class JobInfo:
    source: str
    path: str
    exe: str
    argv: tuple[str, ...]
    nprocs: int
    ranks_with_data: int
    runtime: float
    start_time: float
    end_time: float
    jobid: str
    hostname: str
    mpi_library: str
    complete: bool
    partial_reasons: tuple[str, ...]
    format_version: str


@dataclass(frozen=True)
class Totals:
    """Sums over ranks, used by the scaling table."""

    useful: Value
    io: Value
    io_max: Value
    bytes: Value


@dataclass(frozen=True)
class RunAnalysis:
    job: JobInfo
    has_io: bool
    shares: TimeShares
    pop: PopMetrics
    io: IOSummary
    mpi: MpiSummary
    memory: MemorySummary
    totals: Totals
    #: one row per (layer, file), slowest first (analysis.files.FILE_COLUMNS)
    files: Table
    #: one row per rank: wall, compute, mpi, read, write, meta, io, non_io (s), bytes_read, bytes_written
    ranks: Table
    #: what the data cannot tell exactly, in sentences
    notes: tuple[str, ...]
    #: the diagnosis (pario.diagnosis.Finding), ordered by estimated time lost
    findings: tuple[Any, ...] = ()
    #: False when the diagnosis was not run (``pario report --no-diagnosis``): no findings asked for
    diagnosed: bool = True
    #: the MPI-IO hints in effect, files with the same hints grouped (pario.analysis.mpihints)
    hints: HintsInEffect = HintsInEffect()
    #: what pario's collective-write engine did, per MPI-IO file it served or gave back
    #: (pario.analysis.engine)
    engine: tuple[EngineFile, ...] = ()
    #: the I/O libraries (HDF5, PnetCDF): per file, bytes asked vs moved beneath and the library's
    #: overhead; their datasets and variables (pario.analysis.libraries)
    libraries: LibrarySummary = LibrarySummary()
    #: I/O activity over time, from a heat map (Darshan's HEATMAP module); None without one
    activity: Activity | None = None


#: the diagnosis of a run, given its per-rank times (pario.diagnosis.analyze passes it)
Diagnose = Callable[[Profile, RankTimes], Sequence[Any]]


@dataclass(frozen=True)
class RunSummary:
    """The part of :class:`RunAnalysis` a survey row reads (pario.survey.row): the job, its time
    classes, I/O, POP metrics, files and findings, without the per-rank, MPI, memory, hints,
    engine, library and activity sections of the report."""

    job: JobInfo
    times: RankTimes
    has_io: bool
    shares: TimeShares
    pop: PopMetrics
    io: IOSummary
    totals: Totals
    files: Table
    findings: tuple[Any, ...]


def summarize(profile: Profile, *, diagnose: Diagnose | None = None, config: Any = None) -> RunSummary:
    """The :class:`RunSummary` of one run (its findings with ``diagnose``; ``config``: as for
    :func:`analyze`)."""
    rt = rank_times(profile)
    io = io_summary(profile, rt)
    findings = tuple(diagnose(profile, rt)) if diagnose is not None else ()
    shares = time_shares(rt, unseen_io_phrase(profile.job), **_io_bound_thresholds(config))
    return RunSummary(job=_job_info(profile, rt), times=rt, has_io=io.has_io,
                      shares=_launcher_verdict(shares, findings),
                      pop=pop_metrics(rt, _trace_metrics(profile)), io=io, totals=_totals(rt, io),
                      files=file_table(profile), findings=findings)


def analyze(profile: Profile, *, diagnose: Diagnose | None = None, config: Any = None) -> RunAnalysis:
    """Compute every metric of the report for one run, and its findings with ``diagnose`` (None:
    not diagnosed).  :func:`pario.diagnosis.analyze` is the whole of it, diagnosis included.

    ``config`` is a :class:`pario.diagnosis.RuleConfig` (None: defaults): its I/O-bound thresholds.
    """
    run = summarize(profile, diagnose=diagnose, config=config)
    rt = run.times
    ranks = rank_breakdown(rt)
    per_rank_bytes = outermost_bytes_per_rank(profile)
    ranks["bytes_read"] = at_ranks(per_rank_bytes["bytes_read"], rt.ranks)
    ranks["bytes_written"] = at_ranks(per_rank_bytes["bytes_written"], rt.ranks)
    return RunAnalysis(
        job=run.job,
        has_io=run.has_io,
        shares=run.shares,
        pop=run.pop,
        io=run.io,
        mpi=mpi_summary(profile, rt.runtime),
        memory=memory_summary(profile),
        totals=run.totals,
        files=run.files,
        ranks=ranks,
        notes=_notes(profile, rt),
        findings=run.findings,
        diagnosed=diagnose is not None,
        hints=hints_in_effect(profile),
        engine=engine_files(profile),
        libraries=library_summary(profile),
        activity=activity(profile.heatmap, profile.job.nprocs),
    )


def _trace_metrics(profile: Profile) -> Any:
    """The replays' POP factors when the run was traced (pario run --trace), else None."""
    trace = profile.trace
    if trace is None:
        return None
    from pario.trace.metrics import trace_metrics

    return trace_metrics(trace)


def _launcher_verdict(shares: TimeShares, findings: tuple[Any, ...]) -> TimeShares:
    """A log of a shell or launcher only (RUN-LAUNCHER-ONLY): the verdict says so first, rather than
    call the script's shell compute-bound; its shares stay what they are."""
    launcher = next((f for f in findings if f.id == "RUN-LAUNCHER-ONLY"), None)
    if launcher is None:
        return shares
    return dataclasses.replace(shares, bound=None, io_bound=None, verdict=launcher.statement)


def _io_bound_thresholds(config: Any) -> dict[str, float]:
    """The thresholds of the one I/O-bound definition: the diagnosis config's, else the defaults."""
    if config is None:
        return {}
    return {"min_share": config.io_bound_min_share, "max_efficiency": config.io_bound_max_efficiency}


def _job_info(profile: Profile, rt: RankTimes) -> JobInfo:
    job = profile.job
    version = str(job.metadata.get("darshan_log_version") or job.metadata.get("version") or "")
    return JobInfo(job.source, job.path, job.exe, tuple(job.argv), job.nprocs, len(profile.ranks), rt.runtime,
                   job.start_time, job.end_time, job.jobid, job.hostname, job.mpi_library, job.complete,
                   tuple(job.partial_reasons), version)


def _totals(rt: RankTimes, io: IOSummary) -> Totals:
    useful = (Value.of(float(rt.useful.sum()), "s") if rt.mpi is not None
              else Value.unavailable(f"{rt.no_mpi_reason}: computation and MPI cannot be separated", "s"))
    nbytes = sum((k.bytes.value or 0.0) for k in (io.overall.read, io.overall.write) if k.bytes is not None)
    return Totals(useful, io.overall.total.time_total, io.overall.total.time_max, Value.of(nbytes, "B"))


def _notes(profile: Profile, rt: RankTimes) -> tuple[str, ...]:
    job = profile.job
    notes = list(job.partial_reasons)
    if job.source == "darshan":
        if job.metadata.get("mpi_time_source"):  # APMPI: what it times (docs/metrics.md)
            notes.append(str(job.metadata["mpi_time_source"]))
        if not job.has_mpi_time:
            notes.append("Darshan records no MPI time without its APMPI module: computation and MPI are "
                         "reported together as 'compute + MPI', and the POP metrics that need them are "
                         "unavailable.")
        notes.append("Darshan records no per-rank wall time: every rank is taken to run for the job's run "
                     f"time T = {rt.runtime:g} s.")
        if job.metadata.get("runtime_source"):  # where T comes from (docs/metrics.md, "Darshan logs")
            notes.append(str(job.metadata["runtime_source"]))
        skipped = [str(m) for m in job.metadata.get("modules_not_analysed") or []]
        higher = [m for m in skipped if m.startswith(("H5", "PNETCDF", "ADIOS"))]
        libs = [m for m in ("H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR")
                if (job.metadata.get("modules") or {}).get(m)]
        if libs:
            notes.append("HDF5/PnetCDF (" + ", ".join(libs) + "): time in a library call is the library's "
                         "(Darshan's dataset and variable times plus the files' own metadata time); the "
                         "MPI-IO and POSIX time of the same files is beneath it, not counted again.")
            blind = len(profile.per_rank_io().blind())
            if blind:
                notes.append(f"The library records of {blind} file{'s' if blind > 1 else ''} hold less than "
                             "half the time of the calls beneath them (counters not recorded): "
                             f"{'their' if blind > 1 else 'its'} time and bytes are counted at MPI-IO "
                             "(or POSIX) instead.")
        if higher:
            notes.append("Modules not analysed: " + ", ".join(higher)
                         + " (their I/O is counted by the MPI-IO and POSIX layers beneath them).")
        if len(profile.layer("dfs")) and len(profile.layer("daos")):
            notes.append("DFS and DAOS: a DFS file's reads and writes are DAOS calls on its object, counted "
                         "once, as DFS time and bytes; the DAOS records of objects without a DFS record (a "
                         "DFS container's superblock, objects used through libdaos itself) count as DAOS.")
        unknown = [m for m in skipped if m.startswith("unknown module")]
        if unknown:
            notes.append("Modules not analysed: " + ", ".join(unknown) + " (unknown to the Darshan reader "
                         "library: written by a newer Darshan; their I/O may be missing from the figures).")
    if not rt.exact_max("io") or not rt.exact_ranks("io"):
        notes.append("Values marked ≈ are estimates: " + SHARED_NOTE + ".")
    notes += rejected_notes(job.metadata)  # PARIO_HINTS lines the runtime skipped
    if job.nprocs and len(profile.ranks) < job.nprocs:
        notes.append(f"Only {len(profile.ranks)} of {job.nprocs} ranks have data; averages are over those.")
    return tuple(dict.fromkeys(notes))
