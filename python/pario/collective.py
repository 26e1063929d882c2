"""pario's collective-write engine as the Python side names it: the algorithms and shuffles
``PARIO_COLL=ALGO[:SHUFFLE]`` (``pario run --collective``, ``pario env --collective``) and the
MPI-IO hints ``pario_cb_algorithm`` / ``pario_cb_shuffle`` select, checked before launch, and
the codes the runtime writes in the MPI-IO counters ``engine_algorithm``, ``engine_shuffle``
and ``engine_fb_*`` (include/pario-log-format.h), turned back into words for the report.

The engine (src/collective) replaces the MPI library's ``MPI_File_write_all``,
``MPI_File_write_at_all`` and their split forms when selected; it gives a call back to the
MPI library in atomic mode, for a data representation other than ``native``, for a file
opened ``MPI_MODE_SEQUENTIAL`` and for datatypes it cannot handle.
"""

from __future__ import annotations

import textwrap

from pario.errors import ParioError

#: The engine's algorithms, in the order of their counter codes (engine_algorithm 1..5), then
#: ``auto``, each with the line ``--help`` gives it.
ALGORITHMS: dict[str, str] = {
    "none": "classic blocking two-phase: shuffle a buffer-full to the aggregators, write it, then the next",
    "comm": "the shuffle of the next cycle overlapped with the write of this one by nonblocking "
            "communication",
    "write": "asynchronous write of one buffer while the next is filled",
    "write-comm": "both: the next shuffle and an asynchronous write overlap",
    "write-comm-2": "data flow with two shuffles and two writes in flight",
    "auto": "direct when each rank writes its own range; otherwise write:rma-lock (up to 4 aggregators per "
            "node unless cb_nodes says), then per file other variants tried and the fastest kept",
}
#: The shuffles (engine_shuffle 1..3): how the pieces reach the aggregators.
SHUFFLES: dict[str, str] = {
    "p2p": "MPI_Isend/MPI_Irecv (the default of a fixed algorithm)",
    "rma-fence": "MPI_Put into the aggregators' windows, epochs closed by fences",
    "rma-lock": "MPI_Put with passive-target MPI_Win_lock/MPI_Win_unlock",
}
#: The setting that leaves collective writes to the MPI library (the default).
OFF = "mpi"

#: engine_algorithm / engine_shuffle codes of a log
#: (7, direct: what auto ran when every rank's bytes were one contiguous range of its own)
ALGORITHM_CODES: dict[int, str] = {1: "none", 2: "comm", 3: "write", 4: "write-comm", 5: "write-comm-2",
                                   7: "direct"}
DIRECT = "direct"
SHUFFLE_CODES: dict[int, str] = {1: "p2p", 2: "rma-fence", 3: "rma-lock"}

#: The calls the engine served with each algorithm: (counter, algorithm), in the order of the codes.
ALGORITHM_CALLS: tuple[tuple[str, str], ...] = (
    ("engine_calls_none", "none"), ("engine_calls_comm", "comm"), ("engine_calls_write", "write"),
    ("engine_calls_write_comm", "write-comm"), ("engine_calls_write_comm_2", "write-comm-2"),
    ("engine_calls_direct", DIRECT),
)

#: Each algorithm:shuffle pair the engine can run, as the log lays out its calls
#: (``engine_variant_calls_<algorithm>_<shuffle>``) and their time, slowest rank
#: (``engine_variant_time_<algorithm>_<shuffle>``), algorithm-major.
VARIANTS: tuple[str, ...] = tuple(f"{a}:{s}" for a in ALGORITHMS if a != "auto" for s in SHUFFLES)


def variant_column(variant: str, what: str) -> str:
    """``engine_variant_calls_comm_rma_lock`` for ("comm:rma-lock", "calls")."""
    return f"engine_variant_{what}_" + variant.replace(":", "_").replace("-", "_")


def variant_of_code(code: int) -> str:
    """auto's kept variant in the log (10 * algorithm + shuffle) as ``comm:rma-lock``; '' for 0."""
    algorithm, shuffle = ALGORITHM_CODES.get(code // 10, ""), SHUFFLE_CODES.get(code % 10, "")
    return f"{algorithm}:{shuffle}" if algorithm and shuffle else ""


#: Why the engine gave a collective write to the MPI library: (counter, words for the report).
FALLBACK_REASONS: tuple[tuple[str, str], ...] = (
    ("engine_fb_atomic", "atomic mode"),
    ("engine_fb_datarep", "data representation not native"),
    ("engine_fb_sequential", "MPI_MODE_SEQUENTIAL"),
    ("engine_fb_datatype", "datatype or view beyond the engine's limits"),
    ("engine_fb_other", "other reason"),
)


def _one_of(names: list[str]) -> str:
    return ", ".join(names[:-1]) + " or " + names[-1]


#: What pario_cb_algorithm / pario_cb_shuffle accept, in words (hints.KNOWN_HINTS).
ALGORITHM_VALUES = _one_of([*ALGORITHMS, OFF])
SHUFFLE_VALUES = _one_of(list(SHUFFLES))


def check_setting(value: str, what: str = "--collective") -> str:
    """``value`` if it is a valid ``ALGO[:SHUFFLE]`` (or ``mpi``); else a one-line ParioError.

    Names are case-sensitive, as the runtime reads them.
    """
    algorithm, colon, shuffle = value.partition(":")
    if algorithm == OFF:
        if colon:
            raise ParioError(f"{what} {value}: {OFF} (the MPI library's own collective writes) "
                             "takes no shuffle")
        return value
    if algorithm not in ALGORITHMS:
        raise ParioError(f"{what} {value}: unknown algorithm {algorithm!r} (expected ALGO[:SHUFFLE], "
                         f"ALGO one of {ALGORITHM_VALUES})")
    if colon and shuffle not in SHUFFLES:
        raise ParioError(f"{what} {value}: unknown shuffle {shuffle!r} (expected one of {SHUFFLE_VALUES})")
    return value


def help_text(width: int = 79) -> str:
    """The algorithms and shuffles, one entry each, for ``--help`` (lines of at most ``width``)."""
    name_width = max(len(n) for n in (*ALGORITHMS, *SHUFFLES, OFF))
    indent = " " * (name_width + 4)

    def entry(name: str, text: str) -> str:
        return textwrap.fill(text, width, initial_indent=f"  {name:<{name_width}}  ",
                             subsequent_indent=indent, break_on_hyphens=False)

    lines = [textwrap.fill("--collective ALGO[:SHUFFLE] (sets PARIO_COLL): pario's two-phase "
                           "collective-write engine replaces the MPI library's MPI_File_write_all, "
                           "MPI_File_write_at_all and their split forms. ALGO is one of:", width,
                           break_on_hyphens=False)]
    lines += [entry(n, d) for n, d in ALGORITHMS.items()]
    lines.append(entry(OFF, "the MPI library's own collective writes (the default)"))
    lines.append("SHUFFLE, how the data reach the aggregators:")
    lines += [entry(n, d) for n, d in SHUFFLES.items()]
    lines.append(textwrap.fill(
        "Per file, the MPI-IO hints pario_cb_algorithm (ALGO or mpi) and pario_cb_shuffle select "
        "them; cb_nodes, cb_buffer_size (default 16 MiB), cb_config_list and striping_unit mean what "
        "they mean for ROMIO (default: one aggregator per node). Calls in atomic mode, with a data "
        "representation other than native, on a file opened MPI_MODE_SEQUENTIAL or with datatypes "
        "beyond the engine go to the MPI library; pario report counts them.", width,
        break_on_hyphens=False))
    return "\n".join(lines)
