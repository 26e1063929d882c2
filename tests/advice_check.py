"""Checks that every command and hint a finding prints is one its tool accepts, as printed.

One checker per kind of line pario prints in a recommendation:

- ``lfs setstripe ...``: the options lfs checks (-c -1 or 1..2000 and no more than the OSTs
  known; -S a multiple of 64 KiB, at least 64 KiB and below 4 GiB; -i -1..65532 and below
  the OSTs known) and a directory to set;
- MPI-IO hints (``key value`` lines of a ``hint`` recommendation): a known ROMIO / MPI / pario
  hint name, a value of its type, each key once, and a line pario's own hints-file parser takes;
- ``pario ...``: the line parses with pario's own argument parser (the one the ``pario``
  command uses).

Each checker returns the problems it finds, in words (an empty list: valid).  The tests run
them over every recommendation of every log they diagnose (tests/test_advice_valid.py).
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from collections.abc import Callable, Iterable

from pario.cli import build_parser
from pario.collective import ALGORITHMS, OFF, SHUFFLES
from pario.commands.kernel import protect_separator
from pario.commands.survey import joined_command
from pario.diagnosis.findings import Finding, Recommendation
from pario.diagnosis.layout import MAX_STRIPE_COUNT, MAX_STRIPE_INDEX, MAX_STRIPE_SIZE, STRIPE_UNIT
from pario.errors import ParioError
from pario.launch import hints
from pario.launch.hints import parse_hints

Check = Callable[[str], "str | None"]

# ---------------------------------------------------------------------------------------------
# lfs setstripe
# ---------------------------------------------------------------------------------------------

_LFS_OPTIONS = {
    "-c": "count", "--stripe-count": "count", "--stripe_count": "count", "--count": "count",
    "-S": "size", "--stripe-size": "size", "--stripe_size": "size", "--size": "size",
    "-i": "index", "--stripe-index": "index", "--stripe_index": "index", "--index": "index",
    "-p": "pool", "--pool": "pool",
}
_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def _lfs_number(text: str, suffixes: bool) -> int | None:
    """An integer as lfs reads it (-S also takes k, m, g, t: binary multiples); None if not one."""
    m = re.fullmatch(r"(-?\d+)([kKmMgGtT]?)" if suffixes else r"(-?\d+)()", text)
    if m is None:
        return None
    return int(m.group(1)) * _SUFFIX[m.group(2).lower()]


def stripe_count_error(count: int, osts: int | None = None) -> str | None:
    if count != -1 and not 1 <= count <= MAX_STRIPE_COUNT:
        return f"stripe count {count}: lfs takes -1 (every OST) or 1 to {MAX_STRIPE_COUNT}"
    if osts is not None and count > osts:
        return f"stripe count {count}: more than the {osts} OSTs known"
    return None


def stripe_size_error(size: int) -> str | None:
    if size < STRIPE_UNIT or size % STRIPE_UNIT:
        return f"stripe size {size}: lfs takes a multiple of 64 KiB ({STRIPE_UNIT}), at least 64 KiB"
    if size > MAX_STRIPE_SIZE:
        return f"stripe size {size}: lfs refuses 4 GiB or more"
    return None


def stripe_index_error(index: int, osts: int | None = None) -> str | None:
    if not -1 <= index <= MAX_STRIPE_INDEX:
        return f"stripe index {index}: lfs takes -1 (any OST) or 0 to {MAX_STRIPE_INDEX}"
    if osts is not None and index >= osts:
        return f"stripe index {index}: there are {osts} OSTs (0 to {osts - 1})"
    return None


def _parse_lfs(line: str, osts: int | None) -> tuple[list[str], list[str]]:
    """``lfs setstripe [options] TARGET...``: its targets and what lfs would refuse."""
    try:
        argv = shlex.split(line)
    except ValueError as exc:
        return [], [f"{line!r}: not a shell line ({exc})"]
    if argv[:2] != ["lfs", "setstripe"]:
        return [], [f"{line!r}: not an lfs setstripe command"]
    errors: list[str] = []
    targets: list[str] = []
    args = iter(argv[2:])
    for arg in args:
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if not name.startswith("-"):
            targets.append(arg)
            continue
        what = _LFS_OPTIONS.get(name)
        if what is None:
            errors.append(f"{line!r}: lfs setstripe option {name} is not one pario prints")
            continue
        if not eq:
            value = next(args, "")
        if not value:
            errors.append(f"{line!r}: {name} needs a value")
            continue
        if what == "pool":
            continue
        number = _lfs_number(value, suffixes=what == "size")
        if number is None:
            errors.append(f"{line!r}: {name} {value!r} is not a number")
            continue
        check = {"count": stripe_count_error(number, osts), "size": stripe_size_error(number),
                 "index": stripe_index_error(number, osts)}[what]
        if check:
            errors.append(f"{line!r}: {check}")
    if not targets:
        errors.append(f"{line!r}: no directory or file to set")
    return targets, errors


def lfs_setstripe_errors(line: str, osts: int | None = None) -> list[str]:
    """What lfs would refuse in ``line`` (``lfs setstripe [options] DIR...``); ``osts``: the OSTs
    known, if any."""
    return _parse_lfs(line, osts)[1]


# ---------------------------------------------------------------------------------------------
# MPI-IO hints
# ---------------------------------------------------------------------------------------------


def _positive(v: str) -> str | None:
    return None if v.isdigit() and int(v) > 0 else "a positive integer"


def _non_negative(v: str) -> str | None:
    return None if v.isdigit() else "a non-negative integer"


def _choice(*words: str, case: bool = False) -> Check:
    allowed = set(words)

    def check(v: str) -> str | None:
        return None if (v if case else v.lower()) in allowed else "one of " + ", ".join(sorted(allowed))

    return check


def _stripe_count(v: str) -> str | None:
    return _positive(v) or stripe_count_error(int(v))


def _stripe_unit(v: str) -> str | None:
    return _positive(v) or stripe_size_error(int(v))


def _start_iodevice(v: str) -> str | None:
    return _non_negative(v) or stripe_index_error(int(v))


_CB_CONFIG = re.compile(r"(\*|[A-Za-z0-9_.-]+)(:(\*|\d+))?(,(\*|[A-Za-z0-9_.-]+)(:(\*|\d+))?)*")
_ACCESS_STYLES = {"read_once", "write_once", "read_mostly", "write_mostly", "sequential",
                  "reverse_sequential", "random"}


def _cb_config_list(v: str) -> str | None:
    return None if _CB_CONFIG.fullmatch(v) else "host[:count],... (e.g. *:1)"


def _access_style(v: str) -> str | None:
    if set(v.split(",")) <= _ACCESS_STYLES:
        return None
    return "a comma list of " + ", ".join(sorted(_ACCESS_STYLES))


_SWITCH = _choice("enable", "disable", "automatic")
_TRUE_FALSE = _choice("true", "false")

#: The hints pario may print, with the type of their value: the MPI standard's reserved hints
#: and ROMIO's (its ad_lustre driver's included), which OMPIO also reads where it has them.
MPIIO_HINTS: dict[str, Check] = {
    "cb_nodes": _positive,
    "cb_buffer_size": _positive,
    "cb_config_list": _cb_config_list,
    "collective_buffering": _TRUE_FALSE,
    "romio_cb_read": _SWITCH,
    "romio_cb_write": _SWITCH,
    "romio_ds_read": _SWITCH,
    "romio_ds_write": _SWITCH,
    "romio_cb_pfr": _SWITCH,
    "romio_cb_alltoall": _SWITCH,
    "romio_no_indep_rw": _TRUE_FALSE,
    "ind_rd_buffer_size": _positive,
    "ind_wr_buffer_size": _positive,
    "striping_factor": _stripe_count,
    "striping_unit": _stripe_unit,
    "start_iodevice": _start_iodevice,
    "romio_lustre_co_ratio": _positive,
    "romio_lustre_coll_threshold": _non_negative,
    "romio_lustre_ds_in_coll": _choice("enable", "disable"),
    "direct_read": _TRUE_FALSE,
    "direct_write": _TRUE_FALSE,
    "access_style": _access_style,
}


def _pario_hint_checks() -> dict[str, Check]:
    """pario's own hint names (its engine's, HDF5's and PnetCDF's properties), typed as the
    hints-file parser types them."""

    kinds: dict[str, Check] = {
        hints.POSITIVE_INT: _positive,
        hints.NON_NEGATIVE_INT: _non_negative,
        hints.SWITCH: _SWITCH,
        hints.TRUE_FALSE: _TRUE_FALSE,
        hints.TRANSFER: _choice("collective", "independent"),
        hints.COLL_ALGORITHM: _choice(*ALGORITHMS, OFF, case=True),
        hints.COLL_SHUFFLE: _choice(*SHUFFLES, case=True),
    }
    return {k: kinds[kind] for k, kind in hints.KNOWN_HINTS.items() if k not in MPIIO_HINTS}


#: a '#' comment starts a line or follows a blank (as in a hints file)
_COMMENT = re.compile(r"(?:^|[ \t])#")


def hint_lines_errors(snippet: str) -> list[str]:
    """What is wrong with the hints-file lines ``snippet`` (``key value``, ``#`` comments)."""

    known = {**MPIIO_HINTS, **_pario_hint_checks()}
    errors: list[str] = []
    seen: set[str] = set()
    for line in snippet.splitlines():
        text = _COMMENT.split(line, 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        if len(parts) != 2:
            errors.append(f"{line!r}: a hint line is 'key value'")
            continue
        key, value = parts
        if key in seen:
            errors.append(f"{line!r}: {key} given twice")
        seen.add(key)
        check = known.get(key)
        if check is None:
            errors.append(f"{line!r}: {key} is not a known MPI-IO hint")
        elif (want := check(value)) is not None:
            errors.append(f"{line!r}: {key} takes {want}")
    try:
        parse_hints(snippet.encode(), "recommendation")
    except ParioError as exc:
        errors.append(str(exc))
    return errors


# ---------------------------------------------------------------------------------------------
# pario commands
# ---------------------------------------------------------------------------------------------


def pario_line_errors(line: str) -> list[str]:
    """What pario's own argument parser refuses in ``line`` (``pario SUBCOMMAND ...``)."""

    try:
        argv = shlex.split(line)
    except ValueError as exc:
        return [f"{line!r}: not a shell line ({exc})"]
    if not argv or argv[0] != "pario":
        return [f"{line!r}: not a pario command"]
    args = joined_command(protect_separator(argv[1:]))
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            ns = build_parser().parse_args(args)
    except SystemExit:
        return [f"{line!r}: {err.getvalue().strip().splitlines()[-1] if err.getvalue() else 'refused'}"]
    if not getattr(ns, "func", None):
        return [f"{line!r}: no subcommand"]
    return []


# ---------------------------------------------------------------------------------------------
# recommendations
# ---------------------------------------------------------------------------------------------


def _lines(snippet: str) -> Iterable[str]:
    return (line.strip() for line in snippet.splitlines() if line.strip())


def redirection_errors(line: str) -> list[str]:
    """A ``<`` or ``>`` a shell would take as a redirection (a ``<placeholder>`` left in a command)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars="<>")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as exc:
        return [f"{line!r}: not a shell line ({exc})"]
    if any(t and set(t) <= set("<>") for t in tokens):
        return [f"{line!r}: a shell reads its '<' or '>' as a redirection"]
    return []


def recommendation_errors(rec: Recommendation, osts: int | None = None) -> list[str]:
    """Every command and hint line of one recommendation, checked."""
    errors: list[str] = []
    if rec.kind == "hint":
        errors += hint_lines_errors(rec.snippet)
    lfs = [line for line in _lines(rec.snippet) if line.startswith("lfs ")]
    if rec.kind == "striping" and not lfs:
        errors.append(f"striping recommendation without an lfs command: {rec.snippet!r}")
    for line in lfs:
        errors += lfs_setstripe_errors(line, osts) + redirection_errors(line)
    commands = [line for line in _lines(rec.snippet) if line.startswith("pario ")]
    errors += [e for line in commands for e in redirection_errors(line)]
    if rec.kind in ("tune", "autotune") and not commands:
        errors.append(f"{rec.kind} recommendation without a pario command: {rec.snippet!r}")
    for line in commands:
        errors += pario_line_errors(line)
    return errors


def finding_errors(f: Finding, osts: int | None = None) -> list[str]:
    """The problems of every recommendation of a finding, each prefixed with its id."""
    return [f"{f.id}: {e}" for r in f.recommendations for e in recommendation_errors(r, osts)]


def striping_commands(findings: Iterable[Finding]) -> dict[str, set[str]]:
    """The ``lfs setstripe`` commands the findings print, by the directory they set (one
    directory should get one command, whichever finding prints it)."""
    out: dict[str, set[str]] = {}
    for f in findings:
        for r in f.recommendations:
            for line in _lines(r.snippet):
                if line.startswith("lfs setstripe"):
                    for target in _parse_lfs(line, None)[0]:
                        out.setdefault(target, set()).add(line)
    return out


__all__ = [
    "MPIIO_HINTS",
    "finding_errors",
    "hint_lines_errors",
    "lfs_setstripe_errors",
    "pario_line_errors",
    "recommendation_errors",
    "stripe_count_error",
    "stripe_index_error",
    "stripe_size_error",
    "striping_commands",
]
