"""The MPI-IO hints in effect: what the MPI library reported after each file's open
(``profile.hints``), files with identical hint sets grouped, and the hints pario injected
(``pario run --hints``, ``job.metadata['injected_hints']``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pario.model import Profile


@dataclass(frozen=True)
class HintGroup:
    """Files whose MPI-IO hints after open were the same."""

    files: tuple[str, ...]
    hints: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class HintsInEffect:
    groups: tuple[HintGroup, ...] = ()
    injected: tuple[tuple[str, str], ...] = ()

    @property
    def empty(self) -> bool:
        return not self.groups and not self.injected

    def as_dict(self) -> dict[str, object]:
        """The JSON form (docs/report-json.md, ``hints``)."""
        return {"files": [{"files": list(g.files), "hints": dict(g.hints)} for g in self.groups],
                "injected": dict(self.injected)}


def _names(profile: Profile) -> dict[int, str]:
    names: dict[int, str] = {}
    for layer in ("mpiio", "posix", "stdio"):
        frame = profile.layer(layer)
        if len(frame) and "id" in frame and "name" in frame:
            for fid, name in zip(frame["id"].to_numpy(), frame["name"].to_numpy(), strict=True):
                names.setdefault(int(fid), str(name))
    return names


def injected_hints(profile: Profile) -> dict[str, str]:
    """The hints pario injected at MPI_File_open (``pario run --hints``); {} when none or damaged."""
    raw = profile.job.metadata.get("injected_hints") or {}
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}


def hints_in_effect(profile: Profile) -> HintsInEffect:
    """Hint sets in effect, largest group of files first (then by name)."""
    names = _names(profile)
    groups: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for fid, hints in profile.hints.items():
        key = tuple(sorted((str(k), str(v)) for k, v in hints.items()))
        groups.setdefault(key, []).append(names.get(int(fid), f"file {int(fid):016x}"))
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), sorted(kv[1])))
    injected = tuple(sorted(injected_hints(profile).items()))
    return HintsInEffect(tuple(HintGroup(tuple(sorted(f)), h) for h, f in ordered), injected)
