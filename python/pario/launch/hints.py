"""MPI-IO hints files (``pario run --hints FILE``): parse and validate before launch.

One hint per line, ``key value`` (ROMIO_HINTS style) or ``key=value``; blank lines and
``#`` comments (a ``#`` at the start of a line or after a blank) are ignored. A file is
refused with one error naming ``file:line`` when a line would make ``MPI_Info_set`` fail
(and, without the check, abort the application) or would not say what the user meant:

- the line is not printable ASCII (a binary file, a NUL or control byte, non-ASCII text);
- the key is empty (``=4``) or the value is missing or empty (``cb_nodes``, ``cb_nodes=``);
- the value is more than one token (``striping_factor 4 extra``);
- the key is longer than :data:`MAX_KEY` or the value longer than :data:`MAX_VALUE`
  characters (Open MPI's ``MPI_MAX_INFO_KEY`` is 36 and ``MPI_MAX_INFO_VAL`` 256, MPICH's
  255 and 1024; the smaller ones minus the terminating NUL, so a file is valid under both);
- a key given twice (which of the two was meant is not knowable);
- a known hint whose value has the wrong type (:data:`KNOWN_HINTS`).

Unknown keys are allowed: MPI libraries ignore the hints they do not know.  Keys starting
with ``hdf5.`` are HDF5 properties that pario sets itself (docs/libraries.md), never MPI-IO
hints: an unknown one is refused.

Per-file hints: a line ``[GLOB]`` (a ``#`` comment may follow) starts a section; the lines
under it apply only to the files whose name matches GLOB, the lines before the first section
to every file::

    cb_buffer_size 16777216      # every file
    [*.h5]                       # files whose base name matches *.h5
    striping_factor 8
    [/scratch/*/ckpt_*]          # a glob with '/' is matched against the whole path
    romio_cb_write disable

Matching is fnmatch(3) without FNM_PATHNAME (``*`` crosses ``/``): a glob containing ``/`` is
matched against the path exactly as the program gives it to ``MPI_File_open``, a glob without
``/`` against the file's base name.  A file gets the global hints, then the hints of every
matching section in file order, a later section overriding an earlier one (or a global hint)
for the same key (:func:`hints_for`).  A key given twice in one section (or twice before the
first section) is refused; the same key in two sections is fine.  Also refused: an empty glob
``[]``, a header not closed by ``]``, a glob over :data:`MAX_GLOB` characters, more than
:data:`MAX_SECTIONS` sections, and more than :data:`MAX_HINTS` hints in all (globals and
sections).  The runtime (``src/runtime/hints_file.c``) skips the same lines and records them as
``rejected_hints``, and with a rejected header it skips the lines under it too.  The line
grammar is written twice, here and in include/pario-hint-line.h (the runtime and the kernels);
both are tested on one corpus of lines, tests/data/hint-lines.tsv.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pario.collective import ALGORITHM_VALUES, ALGORITHMS, OFF, SHUFFLE_VALUES, SHUFFLES, check_setting
from pario.errors import ParioError

MAX_KEY = 35
MAX_VALUE = 255
MAX_FILE_BYTES = 1 << 20
MAX_HINTS = 64  # what the runtime injects at most (globals and sections together)
MAX_SECTIONS = 16
MAX_GLOB = 255

POSITIVE_INT = "a positive integer"
NON_NEGATIVE_INT = "a non-negative integer"
TRANSFER = "collective or independent"
SWITCH = "enable, disable or automatic"
TRUE_FALSE = "true or false"
COLL_ALGORITHM = f"one of {ALGORITHM_VALUES}"
COLL_SHUFFLE = f"one of {SHUFFLE_VALUES}"
# the values each kind accepts (POSITIVE_INT is checked as a number); the words of a
# switch are not case-sensitive for ROMIO, the engine's names are
_CHOICES: dict[str, frozenset[str]] = {
    SWITCH: frozenset({"enable", "disable", "automatic"}),
    TRUE_FALSE: frozenset({"true", "false"}),
    COLL_ALGORITHM: frozenset([*ALGORITHMS, OFF]),
    COLL_SHUFFLE: frozenset(SHUFFLES),
    TRANSFER: frozenset({"collective", "independent"}),
}
_CASE_SENSITIVE = frozenset({COLL_ALGORITHM, COLL_SHUFFLE})

# Known hints and the type of their value (ROMIO's and the MPI standard's reserved hints, and
# the hints that select pario's collective-write engine for a file, pario.collective).
KNOWN_HINTS: dict[str, str] = {
    "cb_nodes": POSITIVE_INT,
    "cb_buffer_size": POSITIVE_INT,
    "striping_factor": POSITIVE_INT,
    "striping_unit": POSITIVE_INT,
    "ind_rd_buffer_size": POSITIVE_INT,
    "ind_wr_buffer_size": POSITIVE_INT,
    "romio_cb_read": SWITCH,
    "romio_cb_write": SWITCH,
    "romio_ds_read": SWITCH,
    "romio_ds_write": SWITCH,
    "romio_no_indep_rw": TRUE_FALSE,
    "romio_lustre_ds_in_coll": SWITCH,  # ROMIO's Lustre driver: read-modify-write in collective writes
    "pario_cb_algorithm": COLL_ALGORITHM,
    "pario_cb_shuffle": COLL_SHUFFLE,
    # HDF5 properties pario sets itself (src/runtime/hdf5.c, docs/libraries.md): on a copy of
    # the file access list at H5Fcreate/H5Fopen, and of the transfer list at H5Dread/H5Dwrite;
    # never given to MPI_File_open
    "hdf5.alignment_threshold": NON_NEGATIVE_INT,
    "hdf5.alignment": POSITIVE_INT,
    "hdf5.meta_block_size": NON_NEGATIVE_INT,
    "hdf5.sieve_buf_size": NON_NEGATIVE_INT,
    "hdf5.coll_metadata_ops": TRUE_FALSE,
    "hdf5.coll_metadata_write": TRUE_FALSE,
    "hdf5.transfer": TRANSFER,
    # PnetCDF hints (docs/libraries.md): pario merges them into the MPI_Info given to
    # ncmpi_create/ncmpi_open; PnetCDF reads them, and passes them on to MPI_File_open
    "nc_header_align_size": POSITIVE_INT,
    "nc_var_align_size": POSITIVE_INT,
    "nc_record_align_size": POSITIVE_INT,
}
#: the prefix of the keys that are a library's properties, not MPI-IO hints
LIBRARY_PREFIXES = ("hdf5.",)


def _value_ok(kind: str, value: str) -> bool:
    if kind == POSITIVE_INT:
        return value.isdigit() and int(value) > 0
    if kind == NON_NEGATIVE_INT:
        return value.isdigit()
    return (value if kind in _CASE_SENSITIVE else value.lower()) in _CHOICES[kind]


def _show(text: str, limit: int = 40) -> str:
    """A short, printable rendering of (part of) a line for an error message."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _strip_comment(line: str) -> str:
    """The line without a '#' comment (one at the start or after a blank), trimmed."""
    for i, ch in enumerate(line):
        if ch == "#" and (i == 0 or line[i - 1] in " \t"):
            line = line[:i]
            break
    return line.strip(" \t")


def _bad_byte(raw: bytes) -> int | None:
    """The first byte that is neither printable ASCII nor a tab, or None."""
    for b in raw:
        if not (0x20 <= b < 0x7F or b == 0x09):
            return b
    return None


def _text_of(raw: bytes) -> str:
    """A line (without its newline, maybe with a CR) as text without its comment; ValueError for a
    byte that is not printable ASCII or a tab."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    bad = _bad_byte(raw)
    if bad is not None:
        what = "a NUL byte" if bad == 0 else f"byte 0x{bad:02x}"
        raise ValueError(f"not a text line: {what} (hints are printable ASCII)")
    return _strip_comment(raw.decode("ascii"))


def parse_line(raw: bytes) -> tuple[str, str] | None:
    """One line (without its newline) -> (key, value), None for a blank or comment line.

    Raises ValueError saying what is wrong.
    """
    text = _text_of(raw)
    if not text:
        return None
    end = len(text)
    for i, ch in enumerate(text):
        if ch in " \t=":
            end = i
            break
    key, rest = text[:end], text[end:].strip(" \t")
    if rest.startswith("="):
        rest = rest[1:].strip(" \t")
    if not key:
        raise ValueError(f"empty key in {_show(text)} (expected 'key value' or 'key=value')")
    if len(key) > MAX_KEY:
        raise ValueError(f"key of {len(key)} characters, at most {MAX_KEY} allowed (MPI_MAX_INFO_KEY)")
    if not rest:
        raise ValueError(f"no value for {key} (expected 'key value' or 'key=value')")
    tokens = rest.split()
    if len(tokens) > 1:
        raise ValueError(f"one value expected for {key}, found {len(tokens)}: {_show(rest)}")
    if len(rest) > MAX_VALUE:
        raise ValueError(f"value of {key} has {len(rest)} characters, at most {MAX_VALUE} allowed "
                         "(MPI_MAX_INFO_VAL)")
    kind = KNOWN_HINTS.get(key)
    if kind is None and key.startswith(LIBRARY_PREFIXES):
        known = ", ".join(k for k in KNOWN_HINTS if k.startswith(key.split(".")[0] + "."))
        raise ValueError(f"unknown library key {key} (known: {known})")
    if kind and not _value_ok(kind, rest):
        raise ValueError(f"{key} must be {kind}, not {_show(rest)}")
    return key, rest


@dataclass(frozen=True)
class HintSection:
    """The hints under one ``[GLOB]`` header of a hints file."""

    glob: str
    hints: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class HintsFile:
    """A parsed hints file: the hints for every file, then the per-file sections in file order."""

    global_hints: tuple[tuple[str, str], ...]
    sections: tuple[HintSection, ...] = ()


def parse_section_header(raw: bytes) -> str | None:
    """The glob of a ``[GLOB]`` header line, None when the line is not a header (its first
    non-blank character is not ``[``).  Raises ValueError saying what is wrong."""
    if not raw.lstrip(b" \t").startswith(b"["):
        return None
    text = _text_of(raw)
    if len(text) < 2 or not text.endswith("]"):
        raise ValueError(f"section header {_show(text)} not closed by ']' "
                         "(expected [GLOB] alone on its line)")
    glob = text[1:-1]
    if not glob:
        raise ValueError("empty glob in section header []")
    if len(glob) > MAX_GLOB:
        raise ValueError(f"glob of {len(glob)} characters, at most {MAX_GLOB} allowed")
    return glob


def parse_hints_file(data: bytes, name: str) -> HintsFile:
    """The global hints and the ``[GLOB]`` sections of a hints file's contents, in order;
    ParioError naming ``name:line`` at the first bad line."""
    if len(data) > MAX_FILE_BYTES:
        raise ParioError(f"hints file {name}: larger than {MAX_FILE_BYTES} bytes (not a hints file?)")
    global_pairs: list[tuple[str, str]] = []
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    first_line: dict[str, int] = {}  # of the keys of the current scope
    total = 0
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        try:
            glob = parse_section_header(raw)
            pair = None if glob is not None else parse_line(raw)
        except ValueError as exc:
            raise ParioError(f"hints file {name}:{lineno}: {exc}") from None
        if glob is not None:
            if len(sections) >= MAX_SECTIONS:
                raise ParioError(f"hints file {name}:{lineno}: more than {MAX_SECTIONS} sections")
            sections.append((glob, []))
            first_line = {}
            continue
        if pair is None:
            continue
        key = pair[0]
        if key in first_line:
            where = f" in section [{sections[-1][0]}]" if sections else ""
            raise ParioError(f"hints file {name}:{lineno}: duplicate key {key}{where} "
                             f"(first on line {first_line[key]})")
        first_line[key] = lineno
        total += 1
        (sections[-1][1] if sections else global_pairs).append(pair)
    if total > MAX_HINTS:
        raise ParioError(f"hints file {name}: {total} hints, at most {MAX_HINTS} are injected")
    return HintsFile(tuple(global_pairs), tuple(HintSection(g, tuple(h)) for g, h in sections))


def parse_hints(data: bytes, name: str) -> list[tuple[str, str]]:
    """The global (key, value) pairs of a hints file's contents, in order (the whole file is
    checked, sections included: :func:`parse_hints_file`); ParioError naming ``name:line`` at
    the first bad line."""
    return list(parse_hints_file(data, name).global_hints)


def section_matches(glob: str, path: str) -> bool:
    """Whether a section's glob applies to a file opened as ``path`` (as given to
    MPI_File_open): fnmatch(3) without FNM_PATHNAME, on the whole path when the glob has a
    '/', else on the base name.  Case-sensitive, as the runtime's."""
    name = path if "/" in glob else path.rsplit("/", 1)[-1]
    return fnmatch.fnmatchcase(name, glob)


def hints_for(hints: HintsFile, path: str) -> dict[str, str]:
    """The hints pario injects for a file opened as ``path``: the global ones, then those of
    every matching section in file order (a later value replaces an earlier one)."""
    out = dict(hints.global_hints)
    for section in hints.sections:
        if section_matches(section.glob, path):
            out.update(section.hints)
    return out


def read_hints_file(path: Path) -> HintsFile:
    """Read and validate a hints file; ParioError (one line) if it cannot be used."""
    try:
        if path.is_dir():
            raise ParioError(f"hints file {path}: a directory, not a file")
        if not path.is_file():
            raise ParioError(f"hints file {path}: no such file")
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ParioError(f"hints file {path}: cannot read: {exc.strerror}") from None
    return parse_hints_file(data, str(path))


#: How a hints file written by ``pario tune`` names the MPI library's settings it was tuned with.
TUNED_WITH = "# pario: tuned with "


def tuned_environment(path: Path) -> dict[str, str]:
    """The ``NAME=VALUE`` settings of the hints file's ``# pario: tuned with`` lines, which the
    hints need to take effect: the MPI-IO component (``OMPI_MCA_io``) and pario's collective-write
    engine (``PARIO_COLL``, checked as ``pario run --collective`` checks it)."""
    out: dict[str, str] = {}
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith(TUNED_WITH):
            name, _, value = line[len(TUNED_WITH):].strip().partition("=")
            if name.startswith("OMPI_MCA_") and value:
                out[name] = value
            elif name == "PARIO_COLL" and value:
                out[name] = check_setting(value, f"{path}: PARIO_COLL")
    return out


def read_hints(path: Path) -> list[tuple[str, str]]:
    """The global hints of a validated hints file (:func:`read_hints_file` for the sections)."""
    return list(read_hints_file(path).global_hints)


def checked_file(path: str) -> str:
    """The absolute path of a hints file given on the command line, once it is read and valid."""
    read_hints(Path(path))
    return str(Path(path).resolve())


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def rejected_notes(metadata: Mapping[str, object]) -> list[str]:
    """Sentences for the report about the hints the runtime did not inject (a pario log's
    ``rejected_hints``) and the opens it retried without them; empty when there are none."""
    raw = metadata.get("rejected_hints")
    entries = [e for e in raw if isinstance(e, dict)] if isinstance(raw, list) else []
    total = max(_int(metadata.get("rejected_hints_total")), len(entries))
    notes = []
    if entries:
        shown = "; ".join(f"line {e.get('line')} {_show(str(e.get('text', '')))}: {e.get('reason')}"
                          for e in entries)
        more = f"; and {total - len(entries)} more" if total > len(entries) else ""
        notes.append(f"PARIO_HINTS: {total} line(s) of the hints file were not injected ({shown}{more}); "
                     "the other hints were.")
    fallback = _int(metadata.get("hints_fallback_opens"))
    if fallback:
        notes.append(f"PARIO_HINTS: {fallback} MPI_File_open call(s) failed with the injected hints and "
                     "succeeded without them; those files were opened without the hints.")
    return notes
