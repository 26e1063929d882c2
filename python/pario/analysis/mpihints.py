"""The MPI-IO hints in effect: what the MPI library reported after each file's open
(``profile.hints``), files with identical hint sets grouped, and the hints pario injected
(``pario run --hints``: ``job.metadata['injected_hints']`` for every file, and per file
``profile.injected_hints``), with the injected hints the library did not take
(:func:`ignored_hints`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from pario.model import Profile
from pario.table import as_table


@dataclass(frozen=True)
class HintGroup:
    """Files whose MPI-IO hints after open were the same."""

    files: tuple[str, ...]
    hints: tuple[tuple[str, str], ...]


class Ignored(NamedTuple):
    """An injected hint the MPI library did not take."""

    key: str
    asked: str
    #: the value the library reported after the open, None when it did not report the key
    in_effect: str | None
    #: why, when the reported value does not tell (a component that echoes hints it never reads)
    reason: str = ""

    @property
    def text(self) -> str:
        """``key (asked v, in effect w | not reported | reason)``."""
        said = self.reason or ("not reported" if self.in_effect is None else f"in effect {self.in_effect}")
        return f"{self.key} (asked {self.asked}, {said})"


_WORDS = frozenset({"enable", "disable", "automatic", "true", "false"})

#: Hints only ROMIO reads.  Open MPI's OMPIO hands every hint given at the open back from
#: MPI_File_get_info, read or not, so under OMPIO these look in effect and do nothing.
ROMIO_ONLY_PREFIX = "romio_"
ROMIO_ONLY = frozenset({"ind_rd_buffer_size", "ind_wr_buffer_size", "cb_config_list"})

#: What the log's hints say when OMPIO ignores one of ROMIO's.
OMPIO_IGNORES = "OMPIO, the MPI-IO component that ran, does not read it: OMPI_MCA_io=romio321 does"


def _same_value(asked: str, effective: str) -> bool:
    """Whether a reported value is the one asked: numbers as integers, the switch and boolean
    words (enable/disable/automatic, true/false) without regard to case, the rest exactly."""
    a, e = asked.strip(), effective.strip()
    if a.isdigit() and e.isdigit():
        return int(a) == int(e)
    if a.lower() in _WORDS and e.lower() in _WORDS:
        return a.lower() == e.lower()
    return a == e


def romio_only(key: str) -> bool:
    """Whether only ROMIO reads this hint."""
    return key.startswith(ROMIO_ONLY_PREFIX) or key in ROMIO_ONLY


def ignored_hints(injected: Mapping[str, str], effective: Mapping[str, str]) -> list[Ignored]:
    """The injected hints the MPI library ignored, in injection order: absent from what it
    reports after the open (effective value None), reported with another value, or ROMIO's
    hints given to Open MPI's OMPIO (Open MPI reports the component as ``mca:io``).  pario's
    own hints (``pario_*``, read by its collective-write engine, not by the library), the
    HDF5 properties it sets itself (``hdf5.*``, never given to MPI_File_open) and PnetCDF's
    hints (``nc_*``, read by PnetCDF, which passes them on to MPI_File_open, where the MPI
    library does not know them) are never counted as ignored."""
    ompio = effective.get("mca:io", "").strip().lower().startswith("ompio")
    out: list[Ignored] = []
    for key, asked in injected.items():
        if key.startswith(("pario_", "hdf5.", "nc_")):
            continue
        got = effective.get(key)
        if got is None or not _same_value(asked, got):
            out.append(Ignored(key, asked, got))
        elif ompio and romio_only(key):
            out.append(Ignored(key, asked, got, OMPIO_IGNORES))
    return out


@dataclass(frozen=True)
class FileInjection:
    """The hints pario injected at one file's open and those the MPI library ignored."""

    file: str
    injected: tuple[tuple[str, str], ...]
    ignored: tuple[Ignored, ...]

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "injected": dict(self.injected),
                "ignored": [{"key": i.key, "asked": i.asked, "in_effect": i.in_effect, "reason": i.reason}
                            for i in self.ignored]}


@dataclass(frozen=True)
class HintsInEffect:
    groups: tuple[HintGroup, ...] = ()
    injected: tuple[tuple[str, str], ...] = ()
    #: per MPI-IO file that got injected hints, by name
    per_file: tuple[FileInjection, ...] = ()
    #: the ``[GLOB]`` sections of PARIO_HINTS: (glob, hints)
    sections: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    @property
    def empty(self) -> bool:
        return not self.groups and not self.injected and not self.per_file

    def as_dict(self) -> dict[str, object]:
        """The JSON form (docs/report-json.md, ``hints``)."""
        return {"files": [{"files": list(g.files), "hints": dict(g.hints)} for g in self.groups],
                "injected": dict(self.injected),
                "sections": [{"glob": g, "hints": dict(h)} for g, h in self.sections],
                "per_file": [f.as_dict() for f in self.per_file]}


def _names(profile: Profile) -> dict[int, str]:
    """The names of the files that have hints (a log may hold a million other files)."""
    wanted = np.array(sorted({int(f) for f in (*profile.hints, *profile.injected_hints)}), dtype=np.uint64)
    names: dict[int, str] = {}
    if not len(wanted):
        return names
    for layer in ("mpiio", "posix", "stdio"):
        records = as_table(profile.layer(layer))
        if len(records) and "id" in records and "name" in records:
            ids = np.asarray(records["id"])
            # candidates by their bits, in log order (the first record names a file)
            rows = np.flatnonzero(np.isin(ids.astype(np.uint64), wanted))
            for fid, name in zip(ids[rows].tolist(), records["name"][rows].tolist(), strict=True):
                names.setdefault(int(fid), str(name))
    return names


def injected_hints(profile: Profile) -> dict[str, str]:
    """The hints pario injected at MPI_File_open (``pario run --hints``); {} when none or damaged."""
    raw = profile.job.metadata.get("injected_hints") or {}
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}


def hint_sections(profile: Profile) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """The ``[GLOB]`` sections of PARIO_HINTS from the job metadata; () when none or damaged."""
    raw = profile.job.metadata.get("injected_hint_sections")
    if not isinstance(raw, list):
        return ()
    return tuple((str(s.get("glob", "")), tuple((str(k), str(v)) for k, v in s["hints"].items()))
                 for s in raw if isinstance(s, Mapping) and isinstance(s.get("hints"), Mapping))


def file_injections(profile: Profile) -> tuple[FileInjection, ...]:
    """Per MPI-IO file with injected hints: what pario injected and what the MPI library
    ignored of it (against the hints it reported after the open), by file name."""
    names = _names(profile)
    out = []
    for fid, injected in profile.injected_hints.items():
        effective = profile.hints.get(fid, {})
        out.append(FileInjection(names.get(int(fid), f"file {int(fid):016x}"), tuple(injected.items()),
                                 tuple(ignored_hints(injected, effective))))
    return tuple(sorted(out, key=lambda f: f.file))


def hints_in_effect(profile: Profile) -> HintsInEffect:
    """Hint sets in effect, largest group of files first (then by name)."""
    names = _names(profile)
    groups: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for fid, hints in profile.hints.items():
        key = tuple(sorted((str(k), str(v)) for k, v in hints.items()))
        groups.setdefault(key, []).append(names.get(int(fid), f"file {int(fid):016x}"))
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), sorted(kv[1])))
    injected = tuple(sorted(injected_hints(profile).items()))
    return HintsInEffect(tuple(HintGroup(tuple(sorted(f)), h) for h, f in ordered), injected,
                         file_injections(profile), hint_sections(profile))
