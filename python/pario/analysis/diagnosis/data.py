"""Data rules: what the log itself cannot tell (incomplete data, no I/O at all)."""

from __future__ import annotations

from collections.abc import Iterator

from pario.analysis.diagnosis.config import RuleConfig
from pario.analysis.diagnosis.facts import Facts
from pario.analysis.diagnosis.findings import Finding, Metric, Recommendation, Severity
from pario.analysis.diagnosis.registry import finding, rule

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
