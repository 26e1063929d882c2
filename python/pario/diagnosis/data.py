"""Data rules: what the log itself cannot tell (incomplete data, no I/O at all, modules pario does not
analyse, library records without their counters).  Detectors only: the words are in data_words.py."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from pario.analysis.libraries import LIBRARY_LABELS
from pario.analysis.modules import UNSEEN_IO, SkippedModule, skipped_modules
from pario.diagnosis import data_words as words
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.facts import Facts
from pario.diagnosis.findings import Severity
from pario.diagnosis.hits import Hit, record
from pario.diagnosis.registry import rule
from pario.model import ALL_LAYERS
from pario.model.rankio import (
    LIBRARY_FILE_LAYERS,
    beneath_time_by_file,
    library_time_by_file,
)
from pario.table import Table

FAMILY = "data"


@record
class Incomplete(Hit):
    source: str = ""  # "darshan" or "pario"
    reasons: tuple[str, ...] = ()
    partial_modules: tuple[str, ...] = ()  # Darshan modules flagged partial


@rule("DATA-INCOMPLETE", title="The log is incomplete", family=FAMILY, words=words.incomplete)
def incomplete(facts: Facts, cfg: RuleConfig) -> Iterator[Incomplete]:
    """Some of the run's data is missing from the log, so findings may be missing or understated."""
    job = facts.profile.job
    if job.complete:
        return
    mods = (job.metadata.get("modules") or {}) if job.source == "darshan" else {}
    partial = tuple(m for m, info in dict(mods).items() if isinstance(info, dict) and info.get("partial"))
    yield Incomplete(severity=Severity.WARNING, source=job.source,
                     reasons=tuple(job.partial_reasons) or ("the log says its data is partial",),
                     partial_modules=partial)


@record
class NoIO(Hit):
    ignored: int = 0  # records of library or system files left out
    io_time: float = 0.0  # all ranks
    source: str = ""


@rule("DATA-NO-IO", title="No file I/O recorded", family=FAMILY, words=words.no_io)
def no_io(facts: Facts, cfg: RuleConfig) -> Iterator[NoIO]:
    """The log holds no I/O of the application's files: there is nothing to diagnose."""
    if facts.has_io:
        return
    yield NoIO(severity=Severity.INFO, ignored=sum(facts.ignored.values()),
               io_time=float(facts.times.io.sum()), source=facts.source)


@record
class ModulesNotAnalysed(Hit):
    unseen: tuple[SkippedModule, ...] = ()  # holding I/O no analysed layer counts
    others: tuple[SkippedModule, ...] = ()
    measured_io: float = 0.0  # mean I/O time per rank that pario measures
    log: str = ""


@rule("DATA-MODULES-NOT-ANALYSED", title="Log modules pario does not analyse", family=FAMILY,
      words=words.modules_not_analysed)
def modules_not_analysed(facts: Facts, cfg: RuleConfig) -> Iterator[ModulesNotAnalysed]:
    """The log carries Darshan modules pario reads past; those holding I/O that no analysed layer
    counts (DAOS's own APIs) leave the I/O figures short."""
    skipped = skipped_modules(facts.profile.job)
    if not skipped:
        return
    unseen = tuple(m for m in skipped if m.kind == UNSEEN_IO)
    yield ModulesNotAnalysed(
        severity=Severity.WARNING if unseen else Severity.INFO, unseen=unseen,
        others=tuple(m for m in skipped if m.kind != UNSEEN_IO),
        measured_io=float(facts.times.io.mean()) if facts.times.nranks else 0.0, log=facts.profile.job.path)


@record
class BlindFile:
    library: str  # "HDF5" or "PnetCDF"
    name: str
    library_time: float  # all ranks
    beneath_time: float  # all ranks


@record
class LibraryNoCounters(Hit):
    files: tuple[BlindFile, ...] = ()  # the time beneath them first


@rule("DATA-LIBRARY-NO-COUNTERS", title="I/O library records without their time", family=FAMILY,
      words=words.library_no_counters)
def library_no_counters(facts: Facts, cfg: RuleConfig) -> Iterator[LibraryNoCounters]:
    """An HDF5 or PnetCDF record holds less than half the time of the MPI-IO or POSIX calls beneath
    it on the same file (Darshan writes -1 for counters it did not record): that file is counted at
    the layer beneath, and the library's own checks cannot judge it."""
    files = {layer: facts.profile.layer(layer) for layer in ALL_LAYERS}
    blind = facts.profile.per_rank_io().blind()
    if not blind.size:
        return
    lib = library_time_by_file(files)
    beneath = beneath_time_by_file(files, blind)
    names = _library_file_names(files)
    ids = sorted(blind.tolist(), key=lambda i: -beneath[int(i)])
    yield LibraryNoCounters(severity=Severity.INFO, files=tuple(
        BlindFile(*names[int(i)], lib.get(int(i), 0.0), beneath[int(i)]) for i in ids))


def _library_file_names(files: dict[str, Table]) -> dict[int, tuple[str, str]]:
    """Library file id -> (library label, file name)."""
    out: dict[int, tuple[str, str]] = {}
    for layer, library in LIBRARY_FILE_LAYERS.items():
        records = files.get(layer)
        if records is None or not len(records):
            continue
        ids = np.asarray(records["id"]).astype(np.uint64).tolist()
        for rid, name in zip(ids, records["name"], strict=True):
            out.setdefault(int(rid), (LIBRARY_LABELS[library], str(name)))
    return out
