"""The file system each file of a run lives on: one rule for the diagnosis and the survey.

In order, the first that knows:

1. pario's statfs magic of the file: its POSIX records, else its MPI-IO records (the largest
   non-zero value of the file's records);
2. a Lustre layout of the file: Darshan's LUSTRE record, pario's ``lustre.lov`` attribute
   (``job.metadata["lustre_striping"]``; striping asked for in MPI-IO hints is not evidence:
   ROMIO takes those hints on any file system);
3. the longest mount point of Darshan's mount table that is the name or holds it.

Otherwise the type is "" (unknown).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pario.model import MountTable, Profile, fs_name
from pario.model.rankio import float_values
from pario.table import distinct, isin

#: The layers whose records carry pario's statfs magic, the first one that has it wins.
MAGIC_LAYERS: tuple[str, ...] = ("posix", "mpiio")


def _magic(profile: Profile) -> dict[int, int]:
    """File id -> statfs magic (POSIX's where both layers have one)."""
    out: dict[int, int] = {}
    for layer in reversed(MAGIC_LAYERS):  # the first layer's values written last
        records = profile.layer(layer)
        if "fs_type" not in records or not len(records):
            continue
        codes = float_values(records["fs_type"], 0.0)
        keep = np.flatnonzero(codes > 0)
        order = keep[np.argsort(codes[keep], kind="stable")]  # each file's largest written last
        ids = np.asarray(records["id"]).astype(np.uint64)[order]
        out.update(zip(ids.tolist(), codes[order].astype(np.int64).tolist(), strict=True))
    return out


class FileSystems:
    """The file-system type of a profile's files (the module's rule), made once per profile."""

    def __init__(self, profile: Profile) -> None:
        self._magic = _magic(profile)
        striping: Any = profile.job.metadata.get("lustre_striping") or {}
        self._lustre = {int(fid) for fid in striping} if isinstance(striping, dict) else set()
        self._mounts = MountTable(profile.job.metadata.get("mounts"))

    def kinds(self, ids: Sequence[int] | np.ndarray, names: Sequence[str] | np.ndarray) -> set[str]:
        """The set of :meth:`of` (``ids`` and ``names`` in the same order), without a look at
        each file: the distinct statfs magics, "lustre" for a Lustre layout without one, and of
        the other files one per distinct directory (the mount table's answer is the same for
        the rest)."""
        fids = np.asarray(ids).astype(np.uint64)
        magic_ids = np.fromiter(self._magic.keys(), dtype=np.uint64, count=len(self._magic))
        magics = np.fromiter(self._magic.values(), dtype=np.int64, count=len(self._magic))
        has_magic = isin(fids, magic_ids)
        on_lustre = isin(fids, np.fromiter(self._lustre, dtype=np.uint64, count=len(self._lustre)))
        out: set[str] = set()
        if has_magic.any():
            order = np.argsort(magic_ids, kind="stable")
            found = magics[order][np.searchsorted(magic_ids[order], fids[has_magic])]
            out |= {fs_name(magic) for magic in distinct(found).tolist()}
        if (on_lustre & ~has_magic).any():
            out.add("lustre")
        rest = np.flatnonzero(~(has_magic | on_lustre))
        if len(rest):
            values = np.asarray(names, dtype=object)[rest]
            picked = values[np.asarray(self._mounts.distinct(values), dtype=np.int64)]
            out |= set(self._mounts.fs_types(str(n) for n in picked.tolist()))
        return out

    def of(self, ids: Sequence[int] | np.ndarray, names: Sequence[str]) -> list[str]:
        """The type of each file (``ids`` and ``names`` in the same order)."""
        by_mount = self._mounts.fs_types(names)
        out = []
        for fid, mounted in zip(np.asarray(ids).astype(np.uint64).tolist(), by_mount, strict=True):
            magic = self._magic.get(fid)
            out.append(fs_name(magic) if magic else "lustre" if fid in self._lustre else mounted)
        return out
