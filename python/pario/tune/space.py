"""The search space of ``pario tune``: which settings are tried, built from what is detected.

A :class:`Dimension` is one setting with a finite list of choices, the first of which is always
``default`` (leave the setting alone, so the default configuration is every dimension at
``default``).  A dimension has a *kind*, which says how a trial applies it
(:mod:`pario.tune.config`):

* ``hint``: an MPI-IO hint injected at ``MPI_File_open`` (``PARIO_HINTS``);
* ``mca``: an Open MPI MCA variable (``OMPI_MCA_<name>`` in the launch's environment);
* ``collective``: pario's collective-write engine (``PARIO_COLL``);
* ``stripe``: ``lfs setstripe`` on the output directory (Lustre only);
* ``hdf5``: an HDF5 file-access property pario sets at ``H5Fcreate``/``H5Fopen`` (``PARIO_HINTS``
  key ``hdf5.*``), when the program links libhdf5;
* ``pnetcdf``: a PnetCDF hint (``nc_*``) pario merges into the info of ``ncmpi_create``/``ncmpi_open``
  (``PARIO_HINTS``), when the program links libpnetcdf.

A dimension may apply only when another has one of some values (``when``): the ROMIO hints
only matter when Open MPI's I/O component is ROMIO, OMPIO's variables only under OMPIO.

:func:`detect` finds the MPI library, its I/O components, the file system of the output
directory, the rank and node counts and the I/O libraries the program links (HDF5,
PnetCDF); :func:`build_space` turns them into dimensions, and a space file (TOML,
:func:`apply_space_file`) narrows or extends them.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pario import paths
from pario.errors import ParioError
from pario.launch import mpi_match
from pario.launch import run as launch

DEFAULT = "default"
KINDS = ("hint", "mca", "collective", "stripe", "hdf5", "pnetcdf")
#: the kinds applied through PARIO_HINTS (MPI-IO hints, HDF5 properties, PnetCDF hints)
HINT_KINDS = ("hint", "hdf5", "pnetcdf")
KIB = 1 << 10
MIB = 1 << 20

#: Open MPI's I/O components pario knows how to tune, and OMPIO's collective components.
OMPI_IO = ("ompio", "romio321", "romio341", "romio")
OMPI_FCOLL = ("vulcan", "dynamic", "dynamic_gen2", "two_phase", "individual")
ROMIO_SWITCH = ("enable", "disable", "automatic")
ENGINE_ALGORITHMS = ("none", "comm", "write", "write-comm", "write-comm-2", "auto")
ENGINE_SHUFFLES = ("p2p", "rma-fence", "rma-lock")

#: HDF5's H5Pset_alignment threshold tied to a tuned alignment A: objects of at least min(A, this)
#: bytes are aligned, so the raw data of datasets and large metadata blocks start on A boundaries
#: while small metadata (object headers, B-tree nodes) stays packed instead of leaving holes
HDF5_ALIGN_THRESHOLD = 64 * KIB


@dataclass(frozen=True)
class Dimension:
    """One setting: its name, how it is applied, its choices (``default`` first) and when it applies."""

    name: str
    kind: str
    choices: tuple[str, ...]
    #: (other dimension, its values for which this one applies); None: always
    when: tuple[str, tuple[str, ...]] | None = None
    help: str = ""

    def active(self, config: Mapping[str, str]) -> bool:
        if self.when is None:
            return True
        parent, values = self.when
        return config.get(parent, DEFAULT) in values


@dataclass(frozen=True)
class Detected:
    """What the space is built from."""

    mpi: str  # "openmpi", "mpich" or "unknown"
    io_components: tuple[str, ...] = ()  # Open MPI's io components (empty for MPICH)
    default_io: str = ""  # the one Open MPI picks by itself
    fcoll_components: tuple[str, ...] = ()
    fs_type: str = ""  # of the output directory: "lustre", "ext4", ...
    directory: str = "."
    ranks: int = 1
    nodes: int = 1
    has_lfs: bool = False
    engine: bool = True  # pario's collective-write engine is in the runtime
    #: the program's HDF5 / PnetCDF library as its ELF file names it (DT_NEEDED), "" if it links none
    hdf5: str = ""
    pnetcdf: str = ""
    stripe_size: int = 0  # Lustre: the output directory's own stripe size (0: none or unknown)

    def describe(self) -> list[str]:
        mpi = mpi_match.FAMILY_NAMES.get(self.mpi, "an unknown MPI library")
        lines = [f"MPI library: {mpi}"]
        if self.io_components:
            lines.append(f"Open MPI I/O components: {', '.join(self.io_components)} "
                         f"(default {self.default_io or 'unknown'})")
        lines.append(f"output directory: {self.directory} ({self.fs_type or 'file system unknown'})")
        lines.append(f"ranks: {self.ranks}, nodes: {self.nodes}")
        libraries = [f"{what} ({lib})" for what, lib in (("HDF5", self.hdf5), ("PnetCDF", self.pnetcdf))
                     if lib]
        lines.append(f"I/O libraries: {', '.join(libraries)}" if libraries else
                     "I/O libraries: none (the program links neither libhdf5 nor libpnetcdf)")
        return lines


@dataclass(frozen=True)
class Space:
    dimensions: tuple[Dimension, ...]
    detected: Detected
    #: what was left out and why (shown by --show-space and at the end of a study)
    notes: tuple[str, ...] = field(default_factory=tuple)

    def names(self) -> list[str]:
        return [d.name for d in self.dimensions]

    def get(self, name: str) -> Dimension:
        for d in self.dimensions:
            if d.name == name:
                return d
        raise KeyError(name)

    def default(self) -> dict[str, str]:
        """The default configuration: every dimension that applies left at ``default``."""
        return {d.name: DEFAULT for d in self.dimensions}

    def normalise(self, config: Mapping[str, str]) -> dict[str, str]:
        """``config`` with every dimension that does not apply set to ``default`` (its key kept)."""
        out: dict[str, str] = {}
        for d in self.dimensions:  # parents come before their children
            value = config.get(d.name, DEFAULT)
            out[d.name] = value if d.active(out) and value in d.choices else DEFAULT
        return out

    def relevant(self, config: Mapping[str, str]) -> dict[str, str]:
        """``config`` (normalised) with the settings that cannot matter given the others set back
        to ``default``: ROMIO's collective-buffering settings (CB_SETTINGS) when collective
        buffering is disabled for every direction searched (romio_cb_write, romio_cb_read)."""
        out = self.normalise(config)
        switches = [k for k in CB_SWITCHES if any(d.name == k for d in self.dimensions)]
        if switches and all(out.get(k) == "disable" for k in switches):
            out.update({k: DEFAULT for k in CB_SETTINGS if k in out})
        return out

    def size(self) -> int:
        """The number of distinct configurations (conditional dimensions counted where they apply)."""
        return count_configs(self)


#: ROMIO's collective-buffering switches, one per direction, and the settings that only matter
#: while it is on.
CB_SWITCHES = ("romio_cb_write", "romio_cb_read")
CB_SETTINGS = ("cb_nodes", "cb_buffer_size", "cb_config_list")


def _powers_of_two_to(n: int) -> list[int]:
    out, k = [], 1
    while k < n:
        out.append(k)
        k *= 2
    return out + [n]


def count_choices(ranks: int) -> tuple[str, ...]:
    """Aggregator counts worth trying for ``ranks`` processes: 1..P up to 16, else powers of two and P."""
    values = range(1, ranks + 1) if ranks <= 16 else _powers_of_two_to(ranks)
    return tuple(str(v) for v in values)


def size_choices(lo_mib: int = 1, hi_mib: int = 512) -> tuple[str, ...]:
    """Buffer sizes from ``lo_mib`` to ``hi_mib`` MiB in powers of two, as byte counts."""
    return tuple(str(m * MIB) for m in _powers_of_two_to(hi_mib) if m >= lo_mib)


# ---- detection -------------------------------------------------------------------------

_NP_FLAGS = ("-np", "-n", "--np", "-c", "--n", "--ntasks")
_NODE_FLAGS = ("-N", "--nodes")


def _flag_value(command: Sequence[str], flags: Sequence[str]) -> int | None:
    for i, arg in enumerate(command):
        for flag in flags:
            value = None
            if arg == flag and i + 1 < len(command):
                value = command[i + 1]
            elif flag.startswith("--") and arg.startswith(flag + "="):
                value = arg.split("=", 1)[1]
            if value is not None and value.isdigit() and int(value) > 0:
                return int(value)
    return None


def ranks_and_nodes(command: Sequence[str], environ: Mapping[str, str]) -> tuple[int, int]:
    """Rank and node counts of a launch command (its -np / -n / -N), else Slurm's, else 1."""
    ranks = _flag_value(command, _NP_FLAGS) or int(environ.get("SLURM_NTASKS", "1") or 1)
    nodes = _flag_value(command, _NODE_FLAGS) or int(environ.get("SLURM_JOB_NUM_NODES", "1") or 1)
    return max(ranks, 1), max(min(nodes, ranks), 1)


def fs_type_of(directory: Path) -> str:
    """The file system of ``directory`` by name (statfs magic via ``stat -f``), "" if unknown."""
    from pario.model import fs_name

    try:
        out = subprocess.run(["stat", "-f", "-c", "%t", str(directory)], capture_output=True, text=True,
                             timeout=10)
        return fs_name(int(out.stdout.strip(), 16)) if out.returncode == 0 else ""
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return ""


def mpi_of(command: Sequence[str]) -> str:
    """'openmpi', 'mpich' or 'unknown': the launcher's family, else the program's, else the runtime's."""
    if command and launch.is_launcher(list(command)) and Path(command[0]).name != "srun":
        launcher = shutil.which(command[0]) or command[0]
        return "mpich" if launch.mpirun_flavour(launcher) == "hydra" else "openmpi"
    program = mpi_match.program_in(list(command), launcher_known=bool(command) and launch.is_launcher(
        list(command))) if command else None
    for candidate in (program, paths.runtime_library()):
        family = mpi_match.mpi_family(mpi_match.needed_libraries(candidate) or []) if candidate else None
        if family:
            return family
    return "unknown"


def ompi_components(framework: str) -> tuple[str, ...]:
    """Open MPI's components of a framework (``ompi_info --parsable``), in its listed order."""
    try:
        out = subprocess.run(["ompi_info", "--parsable"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    found = re.findall(rf"^mca:{framework}:([A-Za-z0-9_]+):version", out.stdout, flags=re.M)
    return tuple(dict.fromkeys(found))


def io_libraries(command: Sequence[str]) -> tuple[str, str]:
    """The HDF5 and PnetCDF libraries (their DT_NEEDED names, "" for none) of the program a launch
    command runs: the first program after the launcher's options, or the command itself."""
    if not command:
        return "", ""
    program = mpi_match.program_in(list(command), launcher_known=launch.is_launcher(list(command)))
    needed = (mpi_match.needed_libraries(program) or []) if program else []
    return library_of(needed, "libhdf5"), library_of(needed, "libpnetcdf")


def library_of(needed: Sequence[str], prefix: str) -> str:
    """The library named ``prefix``* among DT_NEEDED names (HDF5's high-level ``_hl`` library only
    when it is the one linked), "" if none."""
    found = [n for n in needed if n.startswith(prefix)]
    return next((n for n in found if "_hl" not in n), found[0] if found else "")


def read_stripe(directory: Path) -> tuple[str, str] | None:
    """The directory's own stripe count and size (``lfs getstripe -d``), None if it has none."""
    import subprocess

    values = []
    for flag in ("-c", "-S"):
        try:
            out = subprocess.run(["lfs", "getstripe", "-d", flag, str(directory)], capture_output=True,
                                 text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        text = out.stdout.strip()
        if out.returncode != 0 or not text.lstrip("-").isdigit():
            return None
        values.append(text)
    return values[0], values[1]


def directory_stripe_size(directory: Path) -> int:
    """The stripe size of ``directory``'s own Lustre layout (``lfs getstripe -d``), 0 if none."""
    stripe = read_stripe(directory)
    return int(stripe[1]) if stripe is not None and stripe[1].isdigit() else 0


def detect(command: Sequence[str], directory: Path, environ: Mapping[str, str] | None = None) -> Detected:
    env = os.environ if environ is None else environ
    mpi = mpi_of(command)
    ranks, nodes = ranks_and_nodes(command, env)
    io: tuple[str, ...] = ()
    fcoll: tuple[str, ...] = ()
    default_io = ""
    if mpi == "openmpi":
        io = tuple(c for c in ompi_components("io") if c in OMPI_IO)
        fcoll = tuple(c for c in ompi_components("fcoll") if c in OMPI_FCOLL)
        # Open MPI 2 to 5 prefer OMPIO unless the file system is one it leaves to ROMIO (Lustre
        # in 4.0); the logged hints of the default trial say for sure.
        default_io = "ompio" if "ompio" in io else (io[0] if io else "")
    fs = fs_type_of(directory)
    has_lfs = shutil.which("lfs") is not None
    hdf5, pnetcdf = io_libraries(command)
    stripe_size = directory_stripe_size(directory) if fs == "lustre" and has_lfs and (hdf5 or pnetcdf) else 0
    return Detected(mpi=mpi, io_components=io, default_io=default_io, fcoll_components=fcoll, fs_type=fs,
                    directory=str(directory), ranks=ranks, nodes=nodes, has_lfs=has_lfs, hdf5=hdf5,
                    pnetcdf=pnetcdf, stripe_size=stripe_size)


# ---- building the space ------------------------------------------------------------------

def _dim(name: str, kind: str, values: Sequence[str], help: str,
         when: tuple[str, tuple[str, ...]] | None = None) -> Dimension:
    return Dimension(name, kind, (DEFAULT, *values), when, help)


def build_space(det: Detected, objective: str = "write-bw") -> Space:
    """The dimensions worth searching for what was detected, and notes on what was left out."""
    dims: list[Dimension] = []
    notes: list[str] = []
    romio_when: tuple[str, tuple[str, ...]] | None = None
    ompio_when: tuple[str, tuple[str, ...]] | None = None
    if det.mpi == "openmpi" and len(det.io_components) > 1:
        dims.append(_dim("mca.io", "mca", det.io_components, "Open MPI's MPI-IO component"))
        romio = tuple(c for c in det.io_components if c.startswith("romio"))
        romio_when = ("mca.io", romio + ((DEFAULT,) if det.default_io.startswith("romio") else ()))
        ompio_when = ("mca.io", ("ompio",) + ((DEFAULT,) if det.default_io == "ompio" else ()))
    elif det.mpi == "openmpi" and det.io_components == ("ompio",):
        romio_when = ("mca.io", ())  # no ROMIO: its hints never apply
        notes.append("ROMIO's hints left out: Open MPI has no ROMIO component here")
    ranks = count_choices(det.ranks)
    dims.append(_dim("cb_nodes", "hint", ranks, "aggregators of collective buffering"))
    dims.append(_dim("cb_buffer_size", "hint", size_choices(), "collective buffer per aggregator, bytes"))
    reads = objective != "write-bw"
    writes = objective != "read-bw"
    if romio_when is None or romio_when[1]:
        if writes:
            dims.append(_dim("romio_cb_write", "hint", ROMIO_SWITCH, "ROMIO collective buffering for writes",
                             romio_when))
            dims.append(_dim("romio_ds_write", "hint", ROMIO_SWITCH, "ROMIO data sieving for writes",
                             romio_when))
        if reads:
            dims.append(_dim("romio_cb_read", "hint", ROMIO_SWITCH, "ROMIO collective buffering for reads",
                             romio_when))
            dims.append(_dim("romio_ds_read", "hint", ROMIO_SWITCH, "ROMIO data sieving for reads",
                             romio_when))
        per_node = [c for c in ("1", "2", "4") if int(c) <= max(det.ranks // det.nodes, 1)]
        dims.append(_dim("cb_config_list", "hint", [f"*:{c}" for c in per_node] + ["*:*"],
                         "ROMIO aggregators per node", romio_when))
    if ompio_when is not None:
        if det.fcoll_components:
            dims.append(_dim("mca.fcoll", "mca", det.fcoll_components, "OMPIO's collective I/O component",
                             ompio_when))
        dims.append(_dim("mca.io_ompio_num_aggregators", "mca", ranks, "OMPIO's aggregator count",
                         ompio_when))
        dims.append(_dim("mca.io_ompio_bytes_per_agg", "mca", size_choices(1, 512),
                         "OMPIO's bytes per aggregator and cycle", ompio_when))
    if writes and det.engine:
        dims.append(_dim("pario.collective", "collective", ENGINE_ALGORITHMS,
                         "pario's collective-write engine algorithm (default: the MPI library's)"))
        dims.append(_dim("pario.shuffle", "collective", ENGINE_SHUFFLES, "the engine's shuffle",
                         ("pario.collective", ENGINE_ALGORITHMS)))
    if det.fs_type == "lustre":
        stripes = tuple(str(c) for c in (1, 2, 4, 8, 16, 32, 64) if c <= max(det.ranks, 4) * 4)
        units = tuple(str(m * MIB) for m in (1, 4, 16, 64))
        dims.append(_dim("striping_factor", "hint", stripes, "Lustre stripe count of new files (ROMIO hint)"))
        dims.append(_dim("striping_unit", "hint", units, "Lustre stripe size of new files (ROMIO hint)"))
        if det.has_lfs:
            dims.append(_dim("lfs.stripe_count", "stripe", stripes,
                             "lfs setstripe -c of the output directory"))
            dims.append(_dim("lfs.stripe_size", "stripe", units, "lfs setstripe -S of the output directory"))
        else:
            notes.append("lfs not found: the directory's striping is left out (the striping hints stay)")
    else:
        fs = det.fs_type or "an unknown file system"
        notes.append(f"striping left out: the output directory is on {fs}, not Lustre")
    if det.mpi == "mpich":
        notes.append("MPICH: its MPI-IO is ROMIO; hints are injected per file (PARIO_HINTS)")
    if det.hdf5:
        dims += hdf5_dimensions(det, objective)
        notes.append("HDF5: hdf5.transfer left out (forcing collective transfers can deadlock a program "
                     "whose transfers are not made by every rank; add it with --space)")
    if det.pnetcdf:
        pnetcdf = pnetcdf_dimensions(det, objective)
        dims += pnetcdf
        if not pnetcdf:
            notes.append("PnetCDF's alignments left out: they act only when a file's header is written, "
                         "not when it is read")
    return Space(tuple(dims), det, tuple(notes))


def _sizes(det: Detected, *values: int) -> tuple[str, ...]:
    """Byte counts as choices, with the output directory's Lustre stripe size among them."""
    extra = (det.stripe_size,) if det.fs_type == "lustre" and det.stripe_size > 0 else ()
    return tuple(str(v) for v in sorted({*values, *extra}))


def hdf5_dimensions(det: Detected, objective: str) -> list[Dimension]:
    """HDF5's file-access properties (docs/libraries.md): the layout ones only where files are written."""
    dims: list[Dimension] = []
    if objective != "read-bw":
        dims.append(_dim("hdf5.alignment", "hdf5", _sizes(det, 64 * KIB, MIB, 4 * MIB),
                         "H5Pset_alignment: file objects of at least min(A, 64 KiB) bytes start at "
                         "multiples of A (sets hdf5.alignment_threshold too)"))
        dims.append(_dim("hdf5.meta_block_size", "hdf5", ("65536", str(MIB)),
                         "H5Pset_meta_block_size: metadata is allocated in blocks of this size"))
    dims.append(_dim("hdf5.sieve_buf_size", "hdf5", (str(256 * KIB), str(4 * MIB)),
                     "H5Pset_sieve_buf_size: the data sieving buffer of contiguous datasets"))
    dims.append(_dim("hdf5.coll_metadata_ops", "hdf5", ("true",),
                     "H5Pset_all_coll_metadata_ops: collective metadata reads"))
    if objective != "read-bw":
        dims.append(_dim("hdf5.coll_metadata_write", "hdf5", ("true",),
                         "H5Pset_coll_metadata_write: collective metadata writes"))
    return dims


def pnetcdf_dimensions(det: Detected, objective: str) -> list[Dimension]:
    """PnetCDF's alignment hints: they lay out a file when its header is written, so not for reads."""
    if objective == "read-bw":
        return []
    return [
        _dim("nc_var_align_size", "pnetcdf", _sizes(det, 64 * KIB, MIB, 4 * MIB),
             "PnetCDF: the data section (fixed-size variables) starts at a multiple of this"),
        _dim("nc_header_align_size", "pnetcdf", ("65536", str(MIB)),
             "PnetCDF: room reserved for the header (its extent is a multiple of this)"),
        _dim("nc_record_align_size", "pnetcdf", ("65536", str(MIB)),
             "PnetCDF: the record variables' section starts at a multiple of this"),
    ]


# ---- configurations -----------------------------------------------------------------------

def config_key(config: Mapping[str, str]) -> str:
    """A configuration as one string, the same whatever the order of its keys (to compare and count)."""
    return json.dumps(dict(sorted(config.items())), separators=(",", ":"))


def random_config(space: Space, rng: random.Random) -> dict[str, str]:
    """A configuration drawn at random: each dimension that applies takes one of its choices."""
    config: dict[str, str] = {}
    for d in space.dimensions:
        config[d.name] = rng.choice(d.choices) if d.active(config) else DEFAULT
    return space.normalise(config)


# ---- enumeration ------------------------------------------------------------------------

def enumerate_configs(space: Space, limit: int | None = 100_000) -> list[dict[str, str]]:
    """Every distinct configuration (dimensions that do not apply stay ``default``), in a fixed order.

    Raises ParioError past ``limit`` configurations.
    """
    configs: list[dict[str, str]] = [{}]
    for d in space.dimensions:
        grown: list[dict[str, str]] = []
        for c in configs:
            for v in (d.choices if d.active(c) else (DEFAULT,)):
                grown.append({**c, d.name: v})
        configs = grown
        if limit is not None and len(configs) > limit:
            raise ParioError(f"the space has more than {limit} configurations: narrow it with --space "
                             "for a grid")
    return configs


def count_configs(space: Space) -> int:
    """``len(enumerate_configs(space))`` without building them: counts per value of the parent dimensions."""
    parents = {d.when[0] for d in space.dimensions if d.when}
    states: dict[tuple[tuple[str, str], ...], int] = {(): 1}
    for d in space.dimensions:
        grown: dict[tuple[tuple[str, str], ...], int] = {}
        for state, n in states.items():
            for v in (d.choices if d.active(dict(state)) else (DEFAULT,)):
                key = (*state, (d.name, v)) if d.name in parents else state
                grown[key] = grown.get(key, 0) + n
        states = grown
    return sum(states.values())


# ---- space files ------------------------------------------------------------------------

def _load_toml(path: Path) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]  # Python 3.10's tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ParioError(f"{path}: no such space file") from None
    except OSError as exc:
        raise ParioError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ParioError(f"{path}: not valid TOML: {exc}") from None


def _value_text(path: Path, name: str, value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ParioError(f"{path}: [dimensions.{name}] values must be strings or integers, got {value!r}")
    text = str(value)
    if not text or any(ch.isspace() for ch in text) or not text.isprintable():
        raise ParioError(f"{path}: [dimensions.{name}] value {text!r} is empty or has blanks")
    return text


def library_kind(name: str) -> str | None:
    """"hdf5" for an ``hdf5.*`` key, "pnetcdf" for an ``nc_*`` one, None for an MPI-IO hint."""
    return "hdf5" if name.startswith("hdf5.") else "pnetcdf" if name.startswith("nc_") else None


def new_kind(path: Path, name: str, kind: object) -> str:
    """The kind of a dimension a space file adds: ``hint`` keys named ``hdf5.*``/``nc_*`` are HDF5
    properties / PnetCDF hints; ``hdf5``/``pnetcdf`` must name such keys."""
    if kind not in ("hint", "mca", "hdf5", "pnetcdf"):
        raise ParioError(f"{path}: [dimensions.{name}] is not in the detected space; a new dimension "
                         "needs kind = \"hint\", \"mca\", \"hdf5\" or \"pnetcdf\" and values")
    if kind == "mca":
        return "mca"
    library = library_kind(name)
    if kind != "hint" and library != kind:
        prefix = "hdf5." if kind == "hdf5" else "nc_"
        raise ParioError(f"{path}: [dimensions.{name}] kind = \"{kind}\" needs a key that starts with "
                         f"{prefix}")
    return library or "hint"


def apply_space_file(space: Space, path: Path) -> Space:
    """``space`` narrowed or extended by a TOML space file (format in docs/tune.md).

    ``only = [...]`` keeps just those dimensions of the detected space (and every dimension the
    file adds); ``[dimensions.NAME]`` with ``values = [...]`` replaces a dimension's choices
    (``default`` is always kept first), ``drop = true`` removes it, and a new NAME with ``kind``
    (hint, mca, hdf5 or pnetcdf; an ``hdf5.*`` or ``nc_*`` NAME needs none) adds one.
    """
    data = _load_toml(path)
    unknown = set(data) - {"only", "dimensions"}
    if unknown:
        raise ParioError(f"{path}: unknown key(s) {', '.join(sorted(unknown))} (expected only, dimensions)")
    dims = {d.name: d for d in space.dimensions}
    order = list(dims)
    added: list[str] = []  # the dimensions the file adds: 'only' keeps them
    tables = data.get("dimensions", {})
    if not isinstance(tables, dict):
        raise ParioError(f"{path}: 'dimensions' must be a table of [dimensions.NAME] tables")
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ParioError(f"{path}: [dimensions.{name}] must be a table")
        bad = set(table) - {"values", "drop", "kind", "help"}
        if bad:
            raise ParioError(f"{path}: [dimensions.{name}] unknown key(s) {', '.join(sorted(bad))} "
                             "(expected values, drop, kind, help)")
        if table.get("drop"):
            dims.pop(name, None)
            continue
        values = table.get("values")
        if values is not None and (not isinstance(values, list) or not values):
            raise ParioError(f"{path}: [dimensions.{name}] values must be a non-empty list")
        texts = [v for v in (_value_text(path, name, v) for v in values or []) if v != DEFAULT]
        if name in dims:
            if texts:
                dims[name] = replace(dims[name], choices=(DEFAULT, *dict.fromkeys(texts)))
            continue
        # an hdf5.* or nc_* key is a library's even without kind, detected or not
        kind = new_kind(path, name, table.get("kind") or library_kind(name))
        if not texts:
            raise ParioError(f"{path}: [dimensions.{name}] needs values")
        full = name if kind != "mca" or name.startswith("mca.") else f"mca.{name}"
        dims[full] = Dimension(full, kind, (DEFAULT, *dict.fromkeys(texts)), None, str(table.get("help", "")))
        order.append(full)
        added.append(full)
    only = data.get("only")
    if only is not None:
        if not isinstance(only, list) or not all(isinstance(x, str) for x in only):
            raise ParioError(f"{path}: 'only' must be a list of dimension names")
        missing = [x for x in only if x not in dims]
        if missing:
            raise ParioError(f"{path}: 'only' names {', '.join(missing)}, not in the space "
                             f"(pario tune --show-space lists it)")
        dims = {k: v for k, v in dims.items() if k in only or k in added}
    kept = [dims[n] for n in dict.fromkeys(order) if n in dims]
    # a dimension whose parent was removed applies as if the parent were at its default
    names = {d.name for d in kept}
    kept = [d if d.when is None or d.when[0] in names
            else replace(d, when=None if DEFAULT in d.when[1] else (d.when[0], ())) for d in kept]
    kept = [d for d in kept if d.when is None or d.when[1]]
    return Space(tuple(kept), space.detected, space.notes)


def render(space: Space, width: int | None = None) -> list[str]:
    """The space as text lines (``pario tune --show-space``), wrapped at ``width`` columns where
    given: a dimension's choices continue 8 columns in, any other line 4."""
    from pario.textfit import wrap_words

    lines = [(line, 4) for line in space.detected.describe()] + [("", 0)]
    for d in space.dimensions:
        shown = ", ".join(_short(d.name, v) for v in d.choices)
        cond = f"  (when {d.when[0]} is {' or '.join(d.when[1])})" if d.when else ""
        lines.append((f"{d.name} [{d.kind}]: {shown}{cond}", 8))
        if d.help:
            lines.append((f"    {d.help}", 4))
    lines += [("", 0), (f"{space.size()} configurations", 4)]
    lines += [(f"note: {n}", 4) for n in space.notes]
    if width is None:
        return [line for line, _ in lines]
    return [w for line, indent in lines for w in wrap_words(line, width, indent)]


def _short(name: str, value: str) -> str:
    """Byte counts of size dimensions in MiB, for people."""
    sizes = value.isdigit() and any(w in name for w in ("size", "bytes", "unit", "align"))
    if sizes and int(value) >= MIB:
        return f"{int(value) / MIB:g}M"
    if sizes and int(value) >= KIB and int(value) % KIB == 0:
        return f"{int(value) // KIB}K"
    return value
