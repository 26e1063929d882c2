"""Applying a configuration to a run, without recompiling, and saying how to reuse it.

A configuration maps dimension names (:mod:`pario.tune.space`) to choices.  For a trial it
becomes: a hints file for ``pario run --hints`` (``PARIO_HINTS``; under a ``[GLOB]`` section
when the study tunes only some files), ``OMPI_MCA_*`` variables in the launch's environment,
``pario run --collective`` for the engine, and ``lfs setstripe`` of the output directory.
HDF5 properties (``hdf5.*``) and PnetCDF hints (``nc_*``) go into the same hints file: the
runtime sets them at ``H5Fcreate``/``H5Fopen`` and ``ncmpi_create``/``ncmpi_open``.  Without
pario, PnetCDF reads its hints from ``PNETCDF_HINTS``; HDF5 has no such variable, so its
properties are offered as the calls to add to the program (:func:`hdf5_code_lines`).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pario.launch.hints import TUNED_WITH
from pario.textfit import words_lines
from pario.tune.space import DEFAULT, HDF5_ALIGN_THRESHOLD, HINT_KINDS, Space, library_kind


@dataclass(frozen=True)
class Applied:
    """What a configuration changes in a trial."""

    hints: dict[str, str] = field(default_factory=dict)
    mca: dict[str, str] = field(default_factory=dict)  # MCA variable name (no prefix) -> value
    collective: str | None = None  # ALGO[:SHUFFLE] for pario run --collective
    stripe: dict[str, str] = field(default_factory=dict)  # "count"/"size" -> value

    def env(self) -> dict[str, str]:
        return {f"OMPI_MCA_{k}": v for k, v in self.mca.items()}


def applied(space: Space, config: Mapping[str, str]) -> Applied:
    """The settings a configuration makes (dimensions at ``default`` or not applying change nothing)."""
    config = space.normalise(config)
    hints: dict[str, str] = {}
    mca: dict[str, str] = {}
    stripe: dict[str, str] = {}
    algorithm = shuffle = None
    for d in space.dimensions:
        value = config[d.name]
        if value == DEFAULT:
            continue
        if d.kind in HINT_KINDS:
            hints[d.name] = value
        elif d.kind == "mca":
            mca[d.name.removeprefix("mca.")] = value
        elif d.name == "pario.collective":
            algorithm = value
        elif d.name == "pario.shuffle":
            shuffle = value
        elif d.kind == "stripe":
            stripe[d.name.removeprefix("lfs.stripe_")] = value
    if "hdf5.alignment" in hints and "hdf5.alignment_threshold" not in hints:
        # the alignment dimension sets its threshold too (unless a space file made that a dimension)
        hints["hdf5.alignment_threshold"] = str(min(int(hints["hdf5.alignment"]), HDF5_ALIGN_THRESHOLD))
    collective = None if algorithm is None else algorithm + (f":{shuffle}" if shuffle else "")
    return Applied(hints, mca, collective, stripe)


#: The first line of a hints file pario tune writes.
WRITTEN_BY = "# written by pario tune"


def hints_text(hints: Mapping[str, str], files: str | None, env: Mapping[str, str] | None = None) -> str:
    """A PARIO_HINTS file: the hints for every file, or under a ``[files]`` section.  ``env``: the
    MPI library's settings the hints were tuned with (``OMPI_MCA_io``...), as ``# pario: tuned
    with NAME=VALUE`` lines that ``pario run --hints`` applies (pario.launch.hints.tuned_environment)."""
    lines = [WRITTEN_BY]
    lines += [f"{TUNED_WITH}{k}={v}" for k, v in (env or {}).items()]
    if files:
        lines.append(f"[{files}]")
    lines += [f"{k} {v}" for k, v in hints.items()]
    return "\n".join(lines) + "\n"


def mpiio_hints(hints: Mapping[str, str]) -> dict[str, str]:
    """The hints the MPI library reads: without pario's own, HDF5's properties and PnetCDF's hints."""
    return {k: v for k, v in hints.items() if not k.startswith("pario_") and library_kind(k) is None}


def romio_hints_text(hints: Mapping[str, str]) -> str:
    """A ROMIO_HINTS file (ROMIO applies it to every file; pario's own hints and the libraries' left out)."""
    return "".join(f"{k} {v}\n" for k, v in mpiio_hints(hints).items())


def pnetcdf_hints_value(hints: Mapping[str, str]) -> str:
    """PnetCDF's hints as ``PNETCDF_HINTS`` takes them (``key=value;key=value``), "" without any."""
    return ";".join(f"{k}={v}" for k, v in hints.items() if library_kind(k) == "pnetcdf")


#: HDF5 calls setting each property pario sets (docs/libraries.md), ``{v}`` its value
_HDF5_CALLS = {
    "hdf5.meta_block_size": "H5Pset_meta_block_size(fapl, {v});",
    "hdf5.sieve_buf_size": "H5Pset_sieve_buf_size(fapl, {v});",
    "hdf5.coll_metadata_ops": "H5Pset_all_coll_metadata_ops(fapl, {b});",
    "hdf5.coll_metadata_write": "H5Pset_coll_metadata_write(fapl, {b});",
    "hdf5.transfer": "H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_{u});   /* the transfer list of H5Dread/H5Dwrite */",
}


def hdf5_code_lines(hints: Mapping[str, str]) -> list[str]:
    """The HDF5 calls that set the configuration's HDF5 properties in the program itself, on the
    file access list (``fapl``) given to H5Fcreate/H5Fopen (HDF5 reads no environment variable
    for them)."""
    lines = []
    if "hdf5.alignment" in hints or "hdf5.alignment_threshold" in hints:
        # HDF5's defaults (threshold 1, alignment 1) for the one not given, as the runtime keeps
        threshold = hints.get("hdf5.alignment_threshold", "1")
        lines.append(f"H5Pset_alignment(fapl, {threshold}, {hints.get('hdf5.alignment', '1')});")
    for key, call in _HDF5_CALLS.items():
        if key in hints:
            value = hints[key]
            lines.append(call.format(v=value, b=int(value.lower() == "true"), u=value.upper()))
    return lines


def stripe_command(directory: Path, stripe: Mapping[str, str],
                   original: tuple[str, str] | None = None) -> list[str]:
    """``lfs setstripe`` of the output directory for a trial.

    A dimension at ``default`` gets the directory's original value (``original``: its stripe
    count and size before the study), so that the default configuration is measured with the
    directory as the user had it; a directory that had no layout of its own gets it removed
    again (``-d``) when nothing is set.
    """
    if original is None and not stripe:
        return ["lfs", "setstripe", "-d", str(directory)]
    count = stripe.get("count", original[0] if original else None)
    size = stripe.get("size", original[1] if original else None)
    argv = ["lfs", "setstripe"]
    if count is not None:
        argv += ["-c", count]
    if size is not None:
        argv += ["-S", size]
    return [*argv, str(directory)]


def pario_run_args(a: Applied, hints_file: Path | None) -> list[str]:
    """The ``pario run`` options of a trial (before ``--``)."""
    args: list[str] = []
    if hints_file is not None:
        args += ["--hints", str(hints_file)]
    if a.collective:
        args += ["--collective", a.collective]
    return args


def describe(space: Space, config: Mapping[str, str]) -> str:
    """``cb_nodes=2 mca.io=romio321`` (the settings that differ from the default), or ``default``."""
    config = space.normalise(config)
    parts = [f"{k}={v}" for k, v in config.items() if v != DEFAULT]
    return " ".join(parts) if parts else DEFAULT


def _mca_exports(a: Applied) -> list[str]:
    return [f"export {k}={shlex.quote(v)}" for k, v in a.env().items()]


def shell_lines(words: list[str], width: int = 76) -> list[str]:
    """One shell command as lines of at most ``width`` columns where the words allow, continued
    with a trailing backslash, so that it pastes into a terminal or a job script as it is."""
    return words_lines([shlex.quote(w) for w in words], width)


def job_script_lines(a: Applied, hints_file: Path, command: list[str], directory: Path,
                     width: int = 76) -> list[str]:
    """The exact lines that use a configuration in a job script, commands within ``width``
    columns where their words allow.  The hints file carries the MPI library's settings
    (``# pario: tuned with``), which ``pario run --hints`` applies, so they are exported only
    when there is no hints file to pass."""
    carried = bool(a.hints or a.mca)
    lines = [] if carried else _mca_exports(a)
    if a.stripe:
        lines += shell_lines(stripe_command(directory, a.stripe), width)
    options = pario_run_args(a, hints_file if carried else None)
    lines += shell_lines(["pario", "run", *options, "--", *command], width)
    return lines


def without_pario_lines(a: Applied, romio_file: Path) -> list[str]:
    """How to apply what the MPI library and PnetCDF themselves understand, without pario in the job."""
    lines = _mca_exports(a)
    if mpiio_hints(a.hints):
        lines.append("# ROMIO (MPICH, Open MPI's romio) applies it to every file:")
        lines.append(f"export ROMIO_HINTS={shlex.quote(str(romio_file))}")
    pnetcdf = pnetcdf_hints_value(a.hints)
    if pnetcdf:
        lines.append("# PnetCDF applies it to every file it creates or opens:")
        lines.append(f"export PNETCDF_HINTS={shlex.quote(pnetcdf)}")
    return lines
