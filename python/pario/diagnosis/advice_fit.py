"""Advice checked against the run: a recommendation the run's description rules out is not printed.

Every finding of a run passes through :func:`fitted` once its rule has made it.  A hint line is
dropped where it cannot act on the files the finding concerns (a ROMIO hint under OMPIO; a
collective-buffering hint for a direction with no collective call; a data-sieving hint for a file
read and written through the default view, where every access is contiguous), a code change
where it is already done (collective calls asked for where the calls already are collective) or
names a library the run does not use (HDF5 calls without HDF5 records).  Advice to call MPI-IO's
collective functions is put in the I/O library's own terms when the file is written through
HDF5 or PnetCDF.  What was dropped, and why, is kept in the finding's notes, so that a reader
sees the advice pario decided against.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from pario.analysis.mpihints import romio_only
from pario.diagnosis.findings import Finding, Recommendation
from pario.diagnosis.run_description import FileAccess, RunDescription
from pario.units import seconds

#: (hint key, value) -> the reason it cannot act on these files, or None when it may
HintCheck = Callable[[str, list[FileAccess]], "str | None"]

_CB = re.compile(r"^romio_cb_(read|write)$")
_DS = re.compile(r"^romio_ds_(read|write)$")
#: a recommendation to call MPI-IO's collective functions (direction in group 1)
_COLLECTIVE_CALL = re.compile(r"MPI_File_(read|write)(?:_at)?_all\b")
#: a recommendation that proposes running with ROMIO (Open MPI's --mca io romio321)
_SWITCH_TO_ROMIO = re.compile(r"--mca io romio|OMPI_MCA_io=romio")
_HDF5_CALL = re.compile(r"\bH5[A-Z][A-Za-z_]*\(")


#: file systems of one machine's disk or memory: no lock to contend for, no servers to spread over
LOCAL_FS = frozenset({"ext4", "xfs", "btrfs", "tmpfs", "zfs", "overlayfs"})


def with_gain(r: Recommendation, f: Finding, desc: RunDescription) -> Recommendation:
    """A code change with what it can gain (the finding's time at stake) and when it pays: pario
    verify cannot run it, so the user weighs it before changing the program."""
    if f.time_lost is None or f.time_lost <= 0:
        return r
    share = f" ({f.time_share:.1%} of the run)" if f.time_share is not None else ""
    gain = f" Expected gain: at most {seconds(f.time_lost)}{share}, the time at stake here"
    if _COLLECTIVE_CALL.search(r.text + r.snippet):
        local = sorted(desc.file_systems & LOCAL_FS)
        where = (f"; these files are on {', '.join(local)}, where it may not: time the run before and "
                 "after" if local else "")
        return replace(r, text=r.text + gain + "; it pays where many ranks move small pieces of one "
                       "shared file on a parallel file system (Lustre, GPFS), while on a local file system "
                       "or with few ranks the exchange between ranks can cost more than it saves (measured: "
                       f"30-40x slower on a local disk){where}.")
    return replace(r, text=r.text + gain + ", if the change costs less than that (pario verify cannot run "
                   "a code change: time the run before and after it).")


#: said where a command to run is rebuilt from a log that does not record the launch command
REBUILT = ("This finding's pario commands are rebuilt from the log as mpirun -np N and the program's "
           "command line: the log does not record how the run was launched, so add your launcher's own "
           "options (--oversubscribe, -x VAR, --mca ..., or srun's) before running them.")


def concerned(f: Finding, desc: RunDescription) -> list[FileAccess]:
    """The MPI-IO files a finding is about: its file subjects that the description knows."""
    ids = [int(s.id, 16) for s in f.subjects if s.kind == "file" and s.id]
    return [desc.files[i] for i in ids if i in desc.files]


def _romio_under_ompio(key: str, files: list[FileAccess]) -> str | None:
    if romio_only(key) and files and all(a.component == "ompio" for a in files):
        return "OMPIO, the MPI-IO component that ran, does not read ROMIO's hints"
    return None


def _cb_without_collective(key: str, files: list[FileAccess]) -> str | None:
    m = _CB.match(key)
    if m is None or not files:
        return None
    k = m[1]
    if all(a.collective[k] == 0 for a in files) and any(a.calls(k) > 0 for a in files):
        return (f"collective buffering acts only on collective calls, and every MPI-IO {k} of "
                f"{_files_text(files)} was independent")
    return None


def _ds_without_view(key: str, files: list[FileAccess]) -> str | None:
    m = _DS.match(key)
    if m is None or not files:
        return None
    if all(a.views == 0 and not a.noncontig for a in files):
        return (f"data sieving runs only for accesses that are not contiguous in the file, and "
                f"{_files_text(files)} kept the default file view (no MPI_File_set_view)")
    return None


HINT_CHECKS: tuple[HintCheck, ...] = (_romio_under_ompio, _cb_without_collective, _ds_without_view)


def _files_text(files: list[FileAccess]) -> str:
    return files[0].name if len(files) == 1 else f"these {len(files)} files"


def _fit_hint(r: Recommendation, files: list[FileAccess]) -> tuple[Recommendation | None, list[str]]:
    if _SWITCH_TO_ROMIO.search(r.text):  # the hints are for the run with ROMIO that it proposes
        files = [replace(a, component="romio") for a in files]
    kept, dropped = [], []
    for line in r.snippet.splitlines():
        parts = line.split()
        reason = None
        if len(parts) == 2 and not parts[0].startswith("#"):
            reason = next((why for check in HINT_CHECKS if (why := check(parts[0], files))), None)
        if reason is None:
            kept.append(line)
        else:
            dropped.append(f"Not advised here: the hint {line.strip()} ({reason}).")
    if not dropped:
        return r, []
    if not any(line.split() and not line.lstrip().startswith("#") for line in kept):
        return None, dropped
    return replace(r, snippet="\n".join(kept)), dropped


def _already_collective(r: Recommendation, files: list[FileAccess]) -> str | None:
    found = _COLLECTIVE_CALL.findall(r.text + "\n" + r.snippet)
    if not found or not files:
        return None
    kinds = set(found)
    shares = [(k, a) for k in kinds for a in files if a.calls(k) > 0]
    if shares and all((a.collective_share(k) or 0.0) >= 0.9 for k, a in shares):
        calls = sum(a.calls(k) for k, a in shares)
        coll = sum(a.collective[k] for k, a in shares)
        return (f"the calls are collective already: {coll:,.0f} of the {calls:,.0f} MPI-IO "
                f"{'/'.join(sorted(kinds))} calls on {_files_text(files)}")
    return None


def _hdf5_asked_already(r: Recommendation, files: list[FileAccess]) -> str | None:
    """Why advice to make the calls collective cannot help an HDF5 file: the program asks HDF5 for
    collective transfers already (in 90% or more of them), and HDF5 does them independently."""
    found = set(_COLLECTIVE_CALL.findall(r.text + "\n" + r.snippet))
    hdf5 = [a for a in files if "hdf5" in a.libraries]
    if not found or not hdf5:
        return None
    pairs = [(k, a) for k in found for a in hdf5 if a.hdf5_calls[k] > 0]
    if not pairs or any(a.hdf5_collective[k] < 0.9 * a.hdf5_calls[k] for k, a in pairs):
        return None
    asked = sum(a.hdf5_collective[k] for k, a in pairs)
    calls = sum(a.hdf5_calls[k] for k, a in pairs)
    verbs = "/".join(sorted("H5Dwrite" if k == "write" else "H5Dread" for k in found))
    return (f"the program already asks HDF5 for collective transfers in {asked:,.0f} of its {calls:,.0f} "
            f"{verbs} calls on {_files_text(hdf5)}, and HDF5 did them independently: "
            "LIB-COLLECTIVE-NOT-DONE says why")


def _hdf5_unfit(r: Recommendation, desc: RunDescription, files: list[FileAccess]) -> str | None:
    """Why HDF5 calls cannot help here: the files are PnetCDF's, or the run (whose log would
    record HDF5) has no HDF5 records."""
    if not _HDF5_CALL.search(r.snippet):
        return None
    if files and all("pnetcdf" in a.libraries and "hdf5" not in a.libraries for a in files):
        return f"{_files_text(files)} {'is' if len(files) == 1 else 'are'} written through PnetCDF, not HDF5"
    if "hdf5" not in desc.libraries and desc.records_hdf5:
        return "the log has no HDF5 records: the program does not use HDF5"
    return None


def _hdf5_unknown(r: Recommendation, desc: RunDescription) -> Recommendation:
    """HDF5 advice for a log that cannot show whether HDF5 was used says it depends on it."""
    if "hdf5" in desc.libraries or desc.records_hdf5 or not _HDF5_CALL.search(r.snippet):
        return r
    return replace(r, text="If the program writes these files with HDF5 (this log has no HDF5 module to "
                           "tell): " + r.text)


def _in_library_terms(r: Recommendation, files: list[FileAccess]) -> Recommendation:
    """Advice to call MPI_File_*_all for files written through HDF5 or PnetCDF, in the library's terms."""
    m = _COLLECTIVE_CALL.search(r.text + "\n" + r.snippet)
    if m is None or not files:
        return r
    libs = set.intersection(*(set(a.libraries) for a in files))
    if "hdf5" in libs:
        verb = "H5Dwrite" if m[1] == "write" else "H5Dread"
        return Recommendation(
            "code",
            (f"The file is accessed through HDF5: ask HDF5 for collective transfers on the dataset "
             f"transfer property list passed to {verb}, so that MPI-IO merges the ranks' pieces "
             "(two-phase I/O)."),
            ("hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);\nH5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);\n"
             f"{verb}(dset, memtype, memspace, filespace, dxpl, buf);"),
        )
    if "pnetcdf" in libs:
        verb = "put" if m[1] == "write" else "get"
        return Recommendation(
            "code",
            (f"The file is accessed through PnetCDF: use the collective form of the {verb} calls (the "
             f"ones ending in _all, in collective data mode), so that MPI-IO merges the ranks' pieces."),
            f"ncmpi_{verb}_vara_double_all(ncid, varid, start, count, buf);",
        )
    return r


def _fit_code(r: Recommendation, desc: RunDescription,
              files: list[FileAccess]) -> tuple[Recommendation | None, list[str]]:
    what = r.snippet.splitlines()[0] if r.snippet else r.text
    for why in (_hdf5_unfit(r, desc, files), _already_collective(r, files), _hdf5_asked_already(r, files)):
        if why:
            return None, [f"Not advised here: {what.rstrip(';:.')} ({why})."]
    return _in_library_terms(_hdf5_unknown(r, desc), files), []


def fitted(f: Finding, desc: RunDescription) -> Finding:
    """The finding with the recommendations its run rules out removed, and why in its notes."""
    files = concerned(f, desc)
    recs: list[Recommendation] = []
    notes: list[str] = []
    for r in f.recommendations:
        if r.kind == "hint":
            kept, why = _fit_hint(r, files)
        elif r.kind == "code":
            kept, why = _fit_code(r, desc, files)
            kept = with_gain(kept, f, desc) if kept is not None else None
        else:
            kept, why = r, []
        notes += why
        if kept is not None and kept not in recs:
            recs.append(kept)
    if not desc.launch_recorded and any(r.kind in ("tune", "autotune") and "mpirun -np" in r.snippet
                                        for r in recs):
        notes.append(REBUILT)
    if not notes and recs == list(f.recommendations):
        return f
    if any(r.kind == "hint" for r in f.recommendations) and not any(r.kind == "hint" for r in recs):
        # the trial would run a hints file of hints that cannot act here
        recs = [r for r in recs if r.kind != "tune"]
    return replace(f, recommendations=tuple(recs), notes=f.notes + tuple(dict.fromkeys(notes)))
