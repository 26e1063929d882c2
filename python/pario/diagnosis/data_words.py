"""The words of the data rules (data.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, Subject
from pario.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.diagnosis.data import Incomplete, LibraryNoCounters, ModulesNotAnalysed, NoIO
    from pario.diagnosis.facts import Facts

NOT_ABOUT_THE_RUN = "not estimated: this finding is about the data, not the run"
#: How the Darshan reader ends the reason of a module region it could not read (darshan_reader).
DAMAGED_ENDINGS = (": not read",)


def incomplete(hit: Incomplete, facts: Facts, cfg: RuleConfig) -> Words:
    evidence = [Metric(f"reason_{i}", "missing", r, "text") for i, r in enumerate(hit.reasons, 1)]
    if hit.source == "darshan":
        partial = ", ".join(hit.partial_modules)
        evidence.append(Metric("partial_modules", "Darshan modules with partial data", partial, "text"))
        recs = []
        if hit.partial_modules:
            recs.append(
                Recommendation(
                    "environment",
                    (
                        "Give Darshan more record memory in the next run (in MiB; Darshan 3.2 and later), so "
                        "that every file is recorded:"
                    ),
                    "export DARSHAN_MODMEM=64\nexport DARSHAN_NAMEMEM=16",
                )
            )
        if any(r.endswith(DAMAGED_ENDINGS) for r in hit.reasons):
            recs.append(
                Recommendation(
                    "investigate",
                    (
                        "The log file itself is cut short or damaged: copy it again from where Darshan wrote "
                        "it (a copy made while the job was still writing it is cut), and check that that "
                        "file system did not fill up."
                    ),
                )
            )
        if not recs:
            recs.append(Recommendation("investigate", "See what is missing with darshan-parser:",
                                       f"darshan-parser {shlex.quote(facts.profile.job.path)}"))
    else:
        recs = []
        if any("overflow" in r for r in hit.reasons):
            recs.append(
                Recommendation(
                    "environment",
                    "Give pario more record memory in the next run:",
                    "pario run ... (with PARIO_MEM=64M in the environment)",
                )
            )
        if any("MPI_Finalize" in r or "no data" in r for r in hit.reasons):
            recs.append(
                Recommendation(
                    "code",
                    (
                        "Make sure every rank reaches MPI_Finalize (a rank that exits or is killed earlier "
                        "leaves only its own per-rank log)."
                    ),
                )
            )
        if not recs:
            recs.append(Recommendation("investigate", "Rerun the job under pario to get a complete log."))
    statement = (
        "The log is incomplete: " + "; ".join(hit.reasons) + ". Findings about the missing data may be "
        "absent or understated, and per-rank statistics cover only what was recorded."
    )
    return Words(statement, evidence, recs, time_basis=NOT_ABOUT_THE_RUN)


def no_io(hit: NoIO, facts: Facts, cfg: RuleConfig) -> Words:
    statement = "No I/O of the application's files was recorded in this log: there is nothing to diagnose."
    if hit.ignored:
        statement += (f" ({hit.ignored} records of library or system files were left out: "
                      "ignored_path_patterns.)")
    evidence = [
        Metric("records", "file records of the application", 0, "count"),
        Metric("ignored", "records of library or system files", hit.ignored, "count"),
        Metric("io_time", "I/O time of all ranks", hit.io_time, "s"),
    ]
    if hit.source == "darshan":
        rec = Recommendation(
            "investigate",
            (
                "If the application does write files, check that Darshan instruments them: "
                "DARSHAN_EXCLUDE_DIRS, files opened before MPI_Init or by a statically linked library are "
                "not recorded."
            ),
        )
    else:
        rec = Recommendation(
            "investigate",
            (
                "If the application does write files, check that they are not under an excluded prefix "
                "(/proc, /sys, /dev, /etc, /usr, /lib, /run, PARIO_EXCLUDE) and that the ranks were started "
                "by the launcher pario run wrapped."
            ),
        )
    return Words(statement, evidence, [rec], time_basis="not estimated: there is no I/O")


#: The darshan-util or PyDarshan command that reads a module's records (LOG: the log's path).
READ_WITH: dict[str, str] = {
    "DFS": "darshan-parser LOG | grep -E '^(DFS|DAOS)[[:space:]]'",
    "DAOS": "darshan-parser LOG | grep -E '^(DFS|DAOS)[[:space:]]'",
    "DXT_POSIX": "darshan-dxt-parser LOG",
    "DXT_MPIIO": "darshan-dxt-parser LOG",
    "HEATMAP": "python -m darshan summary LOG",
    "APMPI": "darshan-parser LOG | grep -E '^APMPI[[:space:]]'",
    "APXC": "darshan-parser LOG | grep -E '^APXC[[:space:]]'",
}


def modules_not_analysed(hit: ModulesNotAnalysed, facts: Facts, cfg: RuleConfig) -> Words:
    parts = []
    if hit.unseen:
        parts.append(
            "This log holds I/O that pario does not measure: "
            + "; ".join(f"{m.name} ({m.holds})" for m in hit.unseen)
            + ". Its time and bytes are missing from every figure of this report, so a finding not made "
            "here is not a problem ruled out."
        )
    if hit.others:
        parts.append(
            ("Also read past: " if hit.unseen else "pario reads past these modules of the log: ")
            + "; ".join(f"{m.name} ({m.holds})" for m in hit.others)
            + "."
        )
    skipped = (*hit.unseen, *hit.others)
    evidence = [Metric(f"module_{i}", m.name, m.holds, "text") for i, m in enumerate(skipped, 1)]
    evidence.append(Metric("measured_io", "mean I/O time per rank that pario measures", hit.measured_io, "s"))
    log = shlex.quote(hit.log)
    commands = dict.fromkeys(READ_WITH[m.name].replace("LOG", log) for m in skipped if m.name in READ_WITH)
    recs = [
        Recommendation(
            "investigate",
            "Read these modules' records with Darshan's own tools (darshan-util, PyDarshan):",
            "\n".join(commands),
        )
    ] if commands else [
        Recommendation("investigate", "Read the log with a Darshan as new as the one that wrote it.")
    ]
    return Words(" ".join(parts), evidence, recs, time_basis="not estimated: the modules' time is not read")


def library_no_counters(hit: LibraryNoCounters, facts: Facts, cfg: RuleConfig) -> Words:
    nfiles = len(hit.files)
    s = "s" if nfiles > 1 else ""
    lib_time = sum(f.library_time for f in hit.files)
    beneath = sum(f.beneath_time for f in hit.files)
    libraries = sorted({f.library for f in hit.files})
    statement = (
        f"The {' and '.join(libraries)} record{s} of {nfiles} file{s} (e.g. {hit.files[0].name}) "
        f"hold{'' if nfiles > 1 else 's'} {fmt.seconds(lib_time)} of I/O time where the calls beneath took "
        f"{fmt.seconds(beneath)} (over all ranks): the library's counters were not recorded. pario counts "
        "these files' time and bytes at the layer beneath (MPI-IO, else POSIX), and the library checks "
        "(its requests, waits and overhead) cannot judge them."
    )
    evidence = [
        Metric("files", "library files without their time", nfiles, "count"),
        Metric("library_time", "their library time (all ranks)", lib_time, "s"),
        Metric("beneath_time", "the time beneath them (all ranks)", beneath, "s"),
    ]
    subjects = [
        Subject("file", f.name, (
            Metric("library_time", "library time (all ranks)", f.library_time, "s"),
            Metric("beneath_time", "time beneath (all ranks)", f.beneath_time, "s"),
        ))
        for f in hit.files[: cfg.top_subjects]
    ]
    rec = Recommendation(
        "investigate",
        "To see the library's own calls, profile a run with pario run (it records HDF5 and PnetCDF calls) "
        "or with a Darshan built with the library's module enabled.",
    )
    return Words(statement, evidence, [rec], time_basis=NOT_ABOUT_THE_RUN, subjects=subjects,
                 subjects_total=nfiles)
