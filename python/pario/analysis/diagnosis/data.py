"""Data rules: what the log itself cannot tell (incomplete data, no I/O at all, modules pario does not
analyse, library records without their counters)."""

from __future__ import annotations

import shlex
from collections.abc import Iterator

import numpy as np

import pario.analysis.diagnosis._fmt as fmt
from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.diagnosis.facts import Facts
from pario.analysis.diagnosis.findings import Finding, Metric, Recommendation, Severity, Subject
from pario.analysis.diagnosis.registry import finding, rule
from pario.analysis.libraries import LIBRARY_LABELS
from pario.analysis.modules import UNSEEN_IO, skipped_modules
from pario.analysis.rankio import (
    LIBRARY_FILE_LAYERS,
    beneath_time_by_file,
    blind_library_files,
    library_time_by_file,
)
from pario.model import ALL_LAYERS
from pario.table import Table

FAMILY = "data"


@rule("DATA-INCOMPLETE", title="The log is incomplete", family=FAMILY)
def incomplete(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """Some of the run's data is missing from the log, so findings may be missing or understated."""
    job = facts.profile.job
    if job.complete:
        return
    reasons = list(job.partial_reasons) or ["the log says its data is partial"]
    evidence = [Metric(f"reason_{i}", "missing", r, "text") for i, r in enumerate(reasons, 1)]
    if job.source == "darshan":
        mods = job.metadata.get("modules") or {}
        partial = [m for m, info in dict(mods).items() if isinstance(info, dict) and info.get("partial")]
        evidence.append(
            Metric("partial_modules", "Darshan modules with partial data", ", ".join(partial), "text")
        )
        recs = [
            Recommendation(
                "environment",
                (
                    "Give Darshan more record memory in the next run (in MiB; Darshan 3.2 and later), so "
                    "that every file is recorded:"
                ),
                "export DARSHAN_MODMEM=64\nexport DARSHAN_NAMEMEM=16",
            )
        ]
    else:
        recs = []
        if any("overflow" in r for r in reasons):
            recs.append(
                Recommendation(
                    "environment",
                    "Give pario more record memory in the next run:",
                    "pario run ... (with PARIO_MEM=64M in the environment)",
                )
            )
        if any("MPI_Finalize" in r or "no data" in r for r in reasons):
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
        "The log is incomplete: " + "; ".join(reasons) + ". Findings about the missing data may be "
        "absent or understated, and per-rank statistics cover only what was recorded."
    )
    yield finding(
        "DATA-INCOMPLETE",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        severity=Severity.WARNING,
        time_basis="not estimated: this finding is about the data, not the run",
    )


@rule("DATA-NO-IO", title="No file I/O recorded", family=FAMILY)
def no_io(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """The log holds no I/O of the application's files: there is nothing to diagnose."""
    if facts.has_io:
        return
    ignored = sum(facts.ignored.values())
    statement = "No I/O of the application's files was recorded in this log: there is nothing to diagnose."
    if ignored:
        statement += f" ({ignored} records of library or system files were left out: ignored_path_patterns.)"
    evidence = [
        Metric("records", "file records of the application", 0, "count"),
        Metric("ignored", "records of library or system files", ignored, "count"),
        Metric("io_time", "I/O time of all ranks", float(facts.times.io.sum()), "s"),
    ]
    if facts.source == "darshan":
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
    yield finding(
        "DATA-NO-IO",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=[rec],
        runtime=facts.runtime,
        severity=Severity.INFO,
        time_basis="not estimated: there is no I/O",
    )


_READ_WITH: dict[str, str] = {
    "DFS": "darshan-parser LOG | grep -E '^(DFS|DAOS)[[:space:]]'",
    "DAOS": "darshan-parser LOG | grep -E '^(DFS|DAOS)[[:space:]]'",
    "DXT_POSIX": "darshan-dxt-parser LOG",
    "DXT_MPIIO": "darshan-dxt-parser LOG",
    "HEATMAP": "python -m darshan summary LOG",
    "APMPI": "darshan-parser LOG | grep -E '^APMPI[[:space:]]'",
}


@rule("DATA-MODULES-NOT-ANALYSED", title="Log modules pario does not analyse", family=FAMILY)
def modules_not_analysed(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """The log carries Darshan modules pario reads past; those holding I/O that no analysed layer
    counts (DAOS's own APIs) leave the I/O figures short."""
    skipped = skipped_modules(facts.profile.job)
    if not skipped:
        return
    unseen = [m for m in skipped if m.kind == UNSEEN_IO]
    others = [m for m in skipped if m.kind != UNSEEN_IO]
    parts = []
    if unseen:
        parts.append(
            "This log holds I/O that pario does not measure: "
            + "; ".join(f"{m.name} ({m.holds})" for m in unseen)
            + ". Its time and bytes are missing from every figure of this report, so a finding not made "
            "here is not a problem ruled out."
        )
    if others:
        parts.append(
            ("Also read past: " if unseen else "pario reads past these modules of the log: ")
            + "; ".join(f"{m.name} ({m.holds})" for m in others)
            + "."
        )
    mean_io = float(facts.times.io.mean()) if facts.times.nranks else 0.0
    evidence = [Metric(f"module_{i}", m.name, m.holds, "text") for i, m in enumerate(skipped, 1)]
    evidence.append(Metric("measured_io", "mean I/O time per rank that pario measures", mean_io, "s"))
    log = shlex.quote(facts.profile.job.path)
    commands = dict.fromkeys(_READ_WITH[m.name].replace("LOG", log) for m in skipped if m.name in _READ_WITH)
    recs = [
        Recommendation(
            "investigate",
            "Read these modules' records with Darshan's own tools (darshan-util, PyDarshan):",
            "\n".join(commands),
        )
    ] if commands else [
        Recommendation("investigate", "Read the log with a Darshan as new as the one that wrote it.")
    ]
    yield finding(
        "DATA-MODULES-NOT-ANALYSED",
        cfg,
        statement=" ".join(parts),
        evidence=evidence,
        recommendations=recs,
        runtime=facts.runtime,
        severity=Severity.WARNING if unseen else Severity.INFO,
        time_basis="not estimated: the modules' time is not read",
    )


@rule("DATA-LIBRARY-NO-COUNTERS", title="I/O library records without their time", family=FAMILY)
def library_no_counters(facts: Facts, cfg: RuleConfig) -> Iterator[Finding]:
    """An HDF5 or PnetCDF record holds less than half the time of the MPI-IO or POSIX calls beneath
    it on the same file (Darshan writes -1 for counters it did not record): that file is counted at
    the layer beneath, and the library's own checks cannot judge it."""
    files = {layer: facts.profile.layer(layer) for layer in ALL_LAYERS}
    blind = blind_library_files(files)
    if not blind.size:
        return
    lib = library_time_by_file(files)
    beneath = beneath_time_by_file(files, blind)
    names = _library_file_names(files)
    ids = sorted(blind.tolist(), key=lambda i: -beneath[int(i)])
    libraries = sorted({names[int(i)][0] for i in ids})
    first = names[int(ids[0])][1]
    statement = (
        f"The {' and '.join(libraries)} record{'s' if len(ids) > 1 else ''} of {len(ids)} file"
        f"{'s' if len(ids) > 1 else ''} (e.g. {first}) hold{'' if len(ids) > 1 else 's'} "
        f"{fmt.seconds(sum(lib.get(int(i), 0.0) for i in ids))} of I/O time where the calls beneath took "
        f"{fmt.seconds(sum(beneath[int(i)] for i in ids))} (over all ranks): the library's counters were not "
        "recorded. pario counts these files' time and bytes at the layer beneath (MPI-IO, else POSIX), "
        "and the library checks (its requests, waits and overhead) cannot judge them."
    )
    evidence = [
        Metric("files", "library files without their time", len(ids), "count"),
        Metric("library_time", "their library time (all ranks)", sum(lib.get(int(i), 0.0) for i in ids), "s"),
        Metric("beneath_time", "the time beneath them (all ranks)", sum(beneath[int(i)] for i in ids), "s"),
    ]
    subjects = [
        Subject("file", names[int(i)][1], (
            Metric("library_time", "library time (all ranks)", lib.get(int(i), 0.0), "s"),
            Metric("beneath_time", "time beneath (all ranks)", beneath[int(i)], "s"),
        ))
        for i in ids[: cfg.top_subjects]
    ]
    yield finding(
        "DATA-LIBRARY-NO-COUNTERS",
        cfg,
        statement=statement,
        evidence=evidence,
        recommendations=[Recommendation(
            "investigate",
            "To see the library's own calls, profile a run with pario run (it records HDF5 and PnetCDF "
            "calls) or with a Darshan built with the library's module enabled.",
        )],
        runtime=facts.runtime,
        subjects=subjects,
        subjects_total=len(ids),
        severity=Severity.INFO,
        time_basis="not estimated: this finding is about the data, not the run",
    )


def _library_file_names(files: dict[str, Table]) -> dict[int, tuple[str, str]]:
    """Library file id -> (library label, file name)."""
    out: dict[int, tuple[str, str]] = {}
    for layer, library in LIBRARY_FILE_LAYERS.items():
        frame = files.get(layer)
        if frame is None or not len(frame):
            continue
        for rid, name in zip(np.asarray(frame["id"]).astype(np.uint64).tolist(), frame["name"], strict=True):
            out.setdefault(int(rid), (LIBRARY_LABELS[library], str(name)))
    return out
