"""Byte layout of a pario trace (docs/trace.md): event records, kinds and flags.

The single Python definition of the event record; the runtime's is
``struct pario_trace_event`` in src/runtime/trace.h.  Keep the two in step.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

#: One event, 56 bytes, little-endian (docs/trace.md, "What is traced").
EVENT_DTYPE = np.dtype(
    [
        ("t0", "<u8"),
        ("t1", "<u8"),
        ("kind", "<u2"),
        ("flags", "<u2"),
        ("comm", "<i4"),
        ("peer", "<i4"),
        ("tag", "<i4"),
        ("bytes", "<u8"),
        ("aux", "<i8"),
        ("file", "<u8"),
    ]
)
assert EVENT_DTYPE.itemsize == 56

#: Block kinds added by log format version 2.
BLOCK_TRACE = 5
BLOCK_TRACE_INDEX = 6


class Kind(IntEnum):
    """Event kinds (the ``kind`` field)."""

    SEND = 1
    SSEND = 2
    RECV = 3
    ISEND = 4
    ISSEND = 5
    IRECV = 6
    WAIT = 7
    COMPLETE = 8
    MPI_OTHER = 9
    BARRIER = 20
    BCAST = 21
    GATHER = 22
    SCATTER = 23
    ALLGATHER = 24
    ALLTOALL = 25
    REDUCE = 26
    ALLREDUCE = 27
    REDUCE_SCATTER = 28
    SCAN = 29
    EXSCAN = 30
    IO_READ = 40
    IO_WRITE = 41
    IO_META = 42
    FINALIZE = 50


#: Flag bits (the ``flags`` field).
FLAG_CONT = 0x1
FLAG_NONBLOCKING = 0x2
FLAG_COLLECTIVE = 0x4
LAYER_SHIFT = 8
LAYER_MASK = 0x7 << LAYER_SHIFT

#: The I/O layer in bits 8-10 of ``flags`` (the runtime's layer numbers).
LAYERS = ("posix", "stdio", "mpiio", "h5f", "h5d", "pnetcdf_file", "pnetcdf_var")

#: ``peer`` / ``tag`` of an IRECV posted with MPI_ANY_SOURCE / MPI_ANY_TAG.
ANY = -2
NONE = -1

COLLECTIVES = frozenset(range(Kind.BARRIER, Kind.EXSCAN + 1))
IO_KINDS = frozenset((Kind.IO_READ, Kind.IO_WRITE, Kind.IO_META))
