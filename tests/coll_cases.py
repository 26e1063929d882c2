"""Random collective-write cases for tests/programs/coll_cases.c, and an independent model of what
they write.

A case (``Case``) is one file written collectively by k ranks: each rank has a file view (disp,
etype, filetype) and a memory datatype, and makes one or two collective calls. The generator draws
nested MPI datatypes (``Type``: the expression coll_cases.c parses plus the model's type map and
bounds), file layouts that never write a file byte from two ranks (interleaved tiles, disjoint
regions, darray and subarray decompositions), empty contributions and writes over existing data.

The model computes, without MPI, what the file must hold: each rank's memory bytes (the pattern
``pat`` of coll_cases.c) taken through its memory type map and laid through its view's byte map onto
the pre-existing content; and the count and file pointer each call must report.

Every drawing function takes a ``Draw``: ``RandomDraw`` (a seeded random.Random, for reproducible
batches of hundreds of cases) or ``HypothesisDraw`` (inside ``st.composite``: ``case_strategy``),
so that the same code gives Hypothesis strategies and fixed batches.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np
from hypothesis import strategies as st

T_ = TypeVar("T_")

MASK32 = 0xFFFFFFFF
CALL_KINDS = ("write_all", "write_at_all", "write_all_begin", "write_at_all_begin", "iwrite_all",
              "iwrite_at_all")
#: Open MPI 4.1's ROMIO 3.2.1 crashes (SIGSEGV) in MPI_File_iwrite_at_all and iwrite_all, even
#: for one contiguous write of 100 bytes on 2 ranks: the ROMIO-safe batch leaves them out.
ROMIO_CALL_KINDS = CALL_KINDS[:4]
MAX_TYPE_SIZE = 384  # bytes of data in one generated datatype
MAX_CALL_BYTES = 3072  # bytes of one rank's call
MAX_EXTENT = 1 << 15


# ---- the byte pattern of coll_cases.c ----------------------------------------------------------

def pat(a: int, b: int, c: int, d: np.ndarray) -> np.ndarray:
    """pat(a, b, c, d) of coll_cases.c for an array of d (taken modulo 2**32): uint8 array."""
    x = (np.asarray(d, dtype=np.int64) & MASK32).astype(np.uint64)
    x = (x * np.uint64(0x27D4EB2F) + np.uint64((a * 0x9E3779B1 + b * 0x85EBCA77 + c * 0xC2B2AE3D) & MASK32))
    x &= np.uint64(MASK32)
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x2C1B3C6D)) & np.uint64(MASK32)
    x ^= x >> np.uint64(12)
    x = (x * np.uint64(0x297A2D39)) & np.uint64(MASK32)
    x ^= x >> np.uint64(15)
    return ((x >> np.uint64(8)) & np.uint64(0xFF)).astype(np.uint8)


def prefill_bytes(n: int, seed: int) -> np.ndarray:
    return pat(seed, 0x7FFFFFFF, 7, np.arange(n))


# ---- datatypes and their type maps -------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Type:
    """An MPI datatype: its prefix expression and, modelled, its type map as the byte displacements
    of its data in type-map order, its bounds (lb, ub), whether they come from explicit markers
    (MPI_Type_create_resized, subarray, darray: 'sticky' through every constructor above) and its
    alignment (Open MPI rounds the extent of a type without markers up to it)."""

    expr: str
    off: np.ndarray = field(repr=False)
    lb: int
    ub: int
    sticky: bool
    align: int
    exact: bool = True  # False: Open MPI's bounds may differ from the model's (see _combine)
    data_exact: bool = True  # False: and so may the data's displacements (a child's extent was not)
    empty_block: bool = False  # a block of length 0 somewhere inside (indexed, struct)
    inner_loose: bool = False  # a type inside (not this one) is 'loose'

    @property
    def loose(self) -> bool:
        """Bounds other than its data's, or data before its address."""
        return self.lb != self.true_lb or self.ub != self.true_ub or self.lb < 0

    @property
    def size(self) -> int:
        return len(self.off)

    @property
    def extent(self) -> int:
        return self.ub - self.lb

    @property
    def true_lb(self) -> int:
        return int(self.off.min()) if self.size else 0

    @property
    def true_ub(self) -> int:
        return int(self.off.max()) + 1 if self.size else 0

    def describe(self) -> list[int]:
        """[size, lb, extent, true_lb, true_extent] as coll_cases.c prints them."""
        return [self.size, self.lb, self.extent, self.true_lb, self.true_ub - self.true_lb]

    def monotone(self) -> bool:
        """Tiles into a legal filetype: data bytes strictly increasing in type-map order, inside
        [lb, ub) so that copies one extent apart follow each other, positive extent."""
        if self.size == 0 or self.extent <= 0:
            return False
        return bool(np.all(np.diff(self.off) > 0)) and self.lb <= self.true_lb and self.true_ub <= self.ub


# name: (data displacements, extent, alignment) with Open MPI on x86-64
NAMED: dict[str, tuple[list[int], int, int]] = {
    "byte": ([0], 1, 1), "char": ([0], 1, 1), "short": ([0, 1], 2, 2), "int": (list(range(4)), 4, 4),
    "float": (list(range(4)), 4, 4), "double": (list(range(8)), 8, 8),
    "long_double": (list(range(16)), 16, 16), "2int": (list(range(8)), 8, 4),
    "short_int": ([0, 1, 4, 5, 6, 7], 8, 4), "double_int": (list(range(12)), 16, 8),
    "long_int": (list(range(12)), 16, 8),
}


def named(name: str) -> Type:
    off, ext, align = NAMED[name]
    return Type(name, np.array(off, dtype=np.int64), 0, ext, False, align)


def _combine(expr: str, parts: Sequence[tuple[int, Type]], empty: bool = False) -> Type:
    """A type made of copies of other types shifted by some bytes (in type-map order); 'empty':
    one of its blocks has length 0."""
    t = _bounds(expr, parts)
    empty = empty or any(c.empty_block for _, c in parts)
    inner = any(c.loose or c.inner_loose for _, c in parts)
    data_exact = all(c.exact for _, c in parts)
    return dataclasses.replace(t, empty_block=empty, inner_loose=inner, data_exact=data_exact,
                               exact=t.exact and data_exact)


def _bounds(expr: str, parts: Sequence[tuple[int, Type]]) -> Type:
    offs = [t.off + s for s, t in parts]
    off = np.concatenate(offs) if offs else np.zeros(0, dtype=np.int64)
    # a child with no copy (zero block length) counts for nothing, not even its alignment
    align = max((t.align for _, t in parts), default=1)
    exact = True
    marked = [(s, t) for s, t in parts if t.sticky]
    if marked:
        lb = min(s + t.lb for s, t in marked)
        ub = max(s + t.ub for s, t in marked)
        return Type(expr, off, lb, ub, True, align, exact)
    if not parts:
        return Type(expr, off, 0, 0, False, align, exact)
    lb = min(s + t.lb for s, t in parts)
    ub = max(s + t.ub for s, t in parts)
    ub += -(ub - lb) % align
    # Open MPI pads the extent after adding each block, not once: the result is the model's when
    # every block starts at a multiple of the alignment (and no stride is negative)
    exact = exact and all((s + t.lb) % align == 0 for s, t in parts)
    return Type(expr, off, lb, ub, False, align, exact)


def contig(n: int, t: Type) -> Type:
    return _combine(f"contig {n} {t.expr}", [(i * t.extent, t) for i in range(n)])


def vector(c: int, b: int, stride: int, t: Type) -> Type:
    parts = [((i * stride + j) * t.extent, t) for i in range(c) for j in range(b)]
    return _combine(f"vector {c} {b} {stride} {t.expr}", parts)


def hvector(c: int, b: int, stride: int, t: Type) -> Type:
    parts = [(i * stride + j * t.extent, t) for i in range(c) for j in range(b)]
    return _combine(f"hvector {c} {b} {stride} {t.expr}", parts)


def indexed(blocks: Sequence[tuple[int, int]], t: Type, hbytes: bool = False) -> Type:
    """indexed (displacements in extents of t) or hindexed (hbytes: in bytes)."""
    unit = 1 if hbytes else t.extent
    parts = [(d * unit + j * t.extent, t) for b, d in blocks for j in range(b)]
    flat = " ".join(f"{b} {d}" for b, d in blocks)
    return _combine(f"{'hindexed' if hbytes else 'indexed'} {len(blocks)} {flat} {t.expr}", parts,
                    any(b == 0 for b, _ in blocks) or t.empty_block)


def indexed_block(b: int, displs: Sequence[int], t: Type, hbytes: bool = False) -> Type:
    unit = 1 if hbytes else t.extent
    parts = [(d * unit + j * t.extent, t) for d in displs for j in range(b)]
    flat = " ".join(str(d) for d in displs)
    return _combine(f"{'hiblock' if hbytes else 'iblock'} {len(displs)} {b} {flat} {t.expr}", parts)


def struct(fields: Sequence[tuple[int, int, Type]]) -> Type:
    parts = [(d + j * t.extent, t) for b, d, t in fields for j in range(b)]
    flat = " ".join(f"{b} {d} {t.expr}" for b, d, t in fields)
    return _combine(f"struct {len(fields)} {flat}", parts,
                    any(b == 0 or t.empty_block for b, _, t in fields))


def resized(lb: int, extent: int, t: Type) -> Type:
    return Type(f"resized {lb} {extent} {t.expr}", t.off, lb, lb + extent, True, t.align, t.data_exact,
                t.data_exact, t.empty_block, t.loose or t.inner_loose)


def dup(t: Type) -> Type:
    return Type(f"dup {t.expr}", t.off, t.lb, t.ub, t.sticky, t.align, t.exact, t.data_exact,
                t.empty_block, t.loose or t.inner_loose)


def _array_type(expr: str, sizes: Sequence[int], index_sets: Sequence[Sequence[int]], order: str,
                t: Type) -> Type:
    """Elements of a global array (C or Fortran order) at the given indices per dimension, in
    array order; bounds [0, whole array) as subarray and darray set them."""
    nd = len(sizes)
    dims = range(nd) if order == "c" else range(nd - 1, -1, -1)  # slowest dimension first
    strides = [0] * nd
    acc = 1
    for k in reversed(list(dims)):
        strides[k] = acc
        acc *= sizes[k]
    lin = np.zeros(1, dtype=np.int64)
    for k in dims:
        lin = (lin[:, None] + np.array(index_sets[k], dtype=np.int64)[None, :] * strides[k]).ravel()
    off = (lin[:, None] * t.extent + t.off[None, :]).ravel()
    return Type(expr, off, 0, math.prod(sizes) * t.extent, True, t.align, t.exact, t.exact,
                t.empty_block, t.loose or t.inner_loose)


def subarray(sizes: Sequence[int], subsizes: Sequence[int], starts: Sequence[int], order: str,
             t: Type) -> Type:
    nd = len(sizes)
    expr = (f"subarray {nd} {order} {' '.join(map(str, sizes))} {' '.join(map(str, subsizes))} "
            f"{' '.join(map(str, starts))} {t.expr}")
    sets = [range(s, s + n) for s, n in zip(starts, subsizes, strict=True)]
    return _array_type(expr, sizes, sets, order, t)


def darray_indices(g: int, distrib: str, darg: int, p: int, coord: int) -> list[int]:
    """Indices of one dimension (size g, p processes) that process coordinate 'coord' holds."""
    if distrib == "n":
        return list(range(g))
    if distrib == "b":
        b = darg if darg > 0 else -(-g // p)
        return list(range(min(coord * b, g), min(coord * b + b, g)))
    k = darg if darg > 0 else 1
    return [i for i in range(g) if (i // k) % p == coord]


def darray(size: int, rank: int, gsizes: Sequence[int], distribs: Sequence[str], dargs: Sequence[int],
           psizes: Sequence[int], order: str, t: Type) -> Type:
    nd = len(gsizes)
    coords, rest = [], rank
    for k in reversed(range(nd)):  # process grid in row-major order, whatever 'order' is
        coords.append(rest % psizes[k])
        rest //= psizes[k]
    coords.reverse()
    sets = [darray_indices(g, d, a, p, c)
            for g, d, a, p, c in zip(gsizes, distribs, dargs, psizes, coords, strict=True)]
    expr = (f"darray {size} {rank} {nd} {order} {' '.join(map(str, gsizes))} {' '.join(distribs)} "
            f"{' '.join(map(str, dargs))} {' '.join(map(str, psizes))} {t.expr}")
    return _array_type(expr, gsizes, sets, order, t)


# ---- drawing -----------------------------------------------------------------------------------

class Draw(Protocol):
    def int(self, lo: int, hi: int) -> int: ...
    def choice(self, seq: Sequence[T_]) -> T_: ...
    def chance(self, percent: int) -> bool: ...


class RandomDraw:
    """Draws from a seeded random.Random."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, seq: Sequence[T_]) -> T_:
        return seq[self.rng.randrange(len(seq))]

    def chance(self, percent: int) -> bool:
        return self.rng.randrange(100) < percent


class HypothesisDraw:
    """Draws inside st.composite (shrinks towards small numbers and the first choices)."""

    def __init__(self, draw) -> None:
        self.draw = draw

    def int(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def choice(self, seq: Sequence[T_]) -> T_:
        return self.draw(st.sampled_from(seq))

    def chance(self, percent: int) -> bool:
        return self.draw(st.integers(0, 99)) >= 100 - percent


def _leaf(d: Draw, unit: int, memory: bool) -> Type:
    if unit == 4:
        return named("int")
    if d.chance(70):
        return named(d.choice(("byte", "char")))
    # not the pair types with a hole (short_int, double_int, long_int): ROMIO 3.2.1 flattens them
    # with MPI_Type_get_contents, an error on a named type
    names = ["short", "int", "double", "2int"]
    if memory:
        names += ["float", "long_double"]
    return named(d.choice(names))


def _fix_monotone(t: Type) -> Type:
    """A type that is not monotone because of its bounds only gets bounds around its data."""
    if t.size and bool(np.all(np.diff(t.off) > 0)) and not t.monotone():
        lb = min(t.lb, t.true_lb)
        return resized(lb, max(t.ub, t.true_ub) - lb, t)
    return t


def mono_type(d: Draw, unit: int, depth: int) -> Type:
    """A datatype fit to tile a file view: data bytes strictly increasing in type-map order, inside
    its bounds, every byte quantity a multiple of 'unit' (the etype's size)."""
    for _ in range(8):
        t = _fix_monotone(_mono(d, unit, depth))
        if t.exact and t.monotone() and t.size <= MAX_TYPE_SIZE and t.extent <= MAX_EXTENT:
            return t
        depth = max(0, depth - 1)
    return contig(d.int(1, 4), _leaf(d, unit, False))


def _mono(d: Draw, unit: int, depth: int) -> Type:
    kinds = ["leaf"] if depth <= 0 else ["leaf", "contig", "vector", "hvector", "indexed", "hindexed",
                                         "iblock", "hiblock", "struct", "subarray", "darray", "resized",
                                         "dup"]
    kind = d.choice(kinds)
    if kind == "leaf":
        return _leaf(d, unit, False)
    if kind == "struct":
        fields, end = [], d.int(0, 2) * unit
        for _ in range(d.int(1, 3)):
            t = mono_type(d, unit, depth - 1)
            b = d.int(0, 3) if d.chance(15) else d.int(1, 3)
            disp = end - t.lb + d.int(0, 3) * _step(t, unit)  # the field's bounds after the previous field's
            disp += -disp % _step(t, unit)
            fields.append((b, disp, t))
            if b:
                end = disp + t.lb + b * t.extent
        return struct(fields)
    t = mono_type(d, unit, depth - 1)
    ext = t.extent
    if kind == "contig":
        return contig(d.int(1, 4), t)
    if kind == "vector":
        b = d.int(1, 3)
        return vector(d.int(1, 4), b, b + d.int(0, 3), t)
    if kind == "hvector":
        b = d.int(1, 3)
        return hvector(d.int(1, 4), b, b * ext + d.int(0, 4) * _step(t, unit), t)
    if kind in ("indexed", "hindexed"):
        blocks, pos = [], d.int(0, 3)
        for _ in range(d.int(1, 4)):
            b = d.int(0, 3) if d.chance(25) else d.int(1, 3)
            blocks.append((b, pos))
            pos += b + d.int(0, 2)
        if kind == "hindexed":
            blocks = [(b, p * ext + (d.int(0, 2) * _step(t, unit) if i else 0))
                      for i, (b, p) in enumerate(blocks)]
            blocks = _spread(blocks, ext)
        return indexed(blocks, t, hbytes=kind == "hindexed")
    if kind in ("iblock", "hiblock"):
        b, pos, displs = d.int(1, 3), d.int(0, 2), []
        for _ in range(d.int(1, 4)):
            displs.append(pos)
            pos += b + d.int(0, 2)
        if kind == "hiblock":
            displs = [p * ext + i * _step(t, unit) * d.int(0, 1) for i, p in enumerate(displs)]
        return indexed_block(b, displs, t, hbytes=kind == "hiblock")
    if kind in ("subarray", "darray"):
        if t.lb != 0 or t.extent > 64:
            t = _leaf(d, unit, False)
        return array_type(d, t, kind)
    if kind == "resized":
        lb = t.true_lb - d.int(0, 2) * unit
        return resized(lb, t.true_ub - lb + d.int(0, 3) * unit, t)
    return dup(t)


def _step(t: Type, unit: int) -> int:
    """Byte displacements of h* constructors and structs are multiples of the child's alignment:
    Open MPI's extents of types with misaligned members do not follow the MPI standard's rule."""
    return max(unit, t.align)


def _spread(blocks: list[tuple[int, int]], ext: int) -> list[tuple[int, int]]:
    """hindexed byte displacements made non-overlapping again after jitter."""
    out, end = [], None
    for b, p in blocks:
        if end is not None and p < end:
            p = end
        out.append((b, p))
        if b:
            end = p + b * ext
    return out


def array_type(d: Draw, t: Type, kind: str, size: int | None = None, rank: int | None = None) -> Type:
    """A subarray, or a darray of 'size' processes seen from 'rank' (drawn when None)."""
    nd = d.int(1, 3)
    order = d.choice(("c", "f"))
    if kind == "subarray":
        sizes = [d.int(1, 5) for _ in range(nd)]
        subs = [d.int(1, s) for s in sizes]
        starts = [d.int(0, s - n) for s, n in zip(sizes, subs, strict=True)]
        return subarray(sizes, subs, starts, order, t)
    if size is None:
        size = d.int(1, 4)
        rank = d.int(0, size - 1)
    assert rank is not None
    psizes = _factor(d, size, nd)
    gsizes, distribs, dargs = [], [], []
    for p in psizes:
        dist = "n" if p == 1 and d.chance(30) else d.choice(("b", "c"))
        darg = -1
        if dist == "b":
            g = d.int(p, 3 * p + 1)
            if d.chance(30):
                darg = -(-g // p) + d.int(0, 1)
        elif dist == "c":
            darg = d.choice((-1, 1, 2, 3))
            g = d.int(p * max(darg, 1), p * max(darg, 1) * 2 + 2)
        else:
            g = d.int(1, 4)
        gsizes.append(g)
        distribs.append(dist)
        dargs.append(darg)
    out = darray(size, rank, gsizes, distribs, dargs, psizes, order, t)
    if out.size == 0:  # a block distribution left this process empty: cyclic(1) never does
        distribs = ["c" if x == "b" else x for x in distribs]
        dargs = [1 if x == "c" else a for x, a in zip(distribs, dargs, strict=True)]
        out = darray(size, rank, gsizes, distribs, dargs, psizes, order, t)
    return out


def _factor(d: Draw, n: int, nd: int) -> list[int]:
    """n as a product of nd factors (a process grid)."""
    grid = [1] * nd
    rest = n
    while rest > 1:
        p = next(q for q in range(2, rest + 1) if rest % q == 0)
        grid[d.int(0, nd - 1)] *= p
        rest //= p
    return grid


def memory_type(d: Draw, unit: int, depth: int) -> Type:
    """Any datatype with data and a positive extent: negative, decreasing and overlapping
    displacements allowed (a send buffer may repeat bytes)."""
    for _ in range(8):
        t = _memory(d, unit, depth)
        if t.exact and t.size and t.extent > 0 and t.size <= MAX_TYPE_SIZE and t.extent <= MAX_EXTENT:
            return t
        depth = max(0, depth - 1)
    return contig(d.int(1, 4), _leaf(d, unit, True))


def _memory(d: Draw, unit: int, depth: int) -> Type:
    if depth <= 0 or d.chance(20):
        return _leaf(d, unit, True)
    kind = d.choice(("mono", "contig", "vector", "hvector", "indexed", "hindexed", "iblock", "hiblock",
                     "struct", "resized", "dup"))
    if kind == "mono":
        return mono_type(d, unit, depth)
    if kind == "struct":
        fields = []
        for _ in range(d.int(1, 3)):
            t = memory_type(d, unit, depth - 1)
            fields.append((d.int(0, 2) if d.chance(10) else d.int(1, 2), d.int(-8, 24) * _step(t, unit), t))
        return struct(fields)
    t = memory_type(d, unit, depth - 1)
    if kind == "contig":
        return contig(d.int(1, 3), t)
    if kind == "vector":
        # no negative stride: Open MPI 4.1 packs vector(3, 1, -1, char) and hvector(3, 1, -1, char)
        # as bytes 0, 1, 2 (the standard's type map is -0, -1, -2)
        return vector(d.int(1, 3), d.int(1, 3), d.int(0, 4), t)
    if kind == "hvector":
        return hvector(d.int(1, 3), d.int(1, 2), d.int(0, 24) * _step(t, unit), t)
    if kind in ("indexed", "hindexed"):
        n = d.int(1, 4)
        step = 1 if kind == "indexed" else _step(t, unit)
        blocks = [(d.int(0, 3), d.int(-4, 6) * step) for _ in range(n)]
        if all(b == 0 for b, _ in blocks):
            blocks[0] = (1, blocks[0][1])
        return indexed(blocks, t, hbytes=kind == "hindexed")
    if kind in ("iblock", "hiblock"):
        displs = [d.int(-4, 6) * (1 if kind == "iblock" else _step(t, unit)) for _ in range(d.int(1, 4))]
        return indexed_block(d.int(1, 2), displs, t, hbytes=kind == "hiblock")
    if kind == "resized":
        step = _step(t, unit)
        lb = d.int(-3, 3) * step + t.true_lb
        return resized(lb, max(step, t.true_ub - t.true_lb + d.int(-2, 3) * step), t)
    return dup(t)


# ---- cases -------------------------------------------------------------------------------------

@dataclass
class Call:
    kind: str
    offset: int | None  # etypes, for the _at_ forms
    count: int


@dataclass
class RankSpec:
    disp: int
    etype: str
    filetype: Type
    memtype: Type
    calls: list[Call]


@dataclass
class Case:
    id: int
    members: list[int]  # world ranks, by rank in the case's communicator
    ranks: list[RankSpec]
    layout: str
    prefill: int = 0
    prefill_seed: int = 0
    wronly: bool = False
    hints: dict[str, str] = field(default_factory=dict)

    def spec(self) -> str:
        lines = [f"case {self.id}  # {self.layout}", "members " + " ".join(map(str, self.members))]
        if self.prefill:
            lines.append(f"prefill {self.prefill} {self.prefill_seed}")
        if self.wronly:
            lines.append("amode wronly")
        lines += [f"hint {k} {v}" for k, v in self.hints.items()]
        for r, rs in enumerate(self.ranks):
            lines += [f"rank {r}", f"view {rs.disp} {rs.etype} {rs.filetype.expr}", f"mem {rs.memtype.expr}"]
            lines += [f"call {c.kind} {'-' if c.offset is None else c.offset} {c.count}" for c in rs.calls]
        lines.append("end")
        return "\n".join(lines) + "\n"

    def weight(self) -> int:
        """Size of the spec, to pick the smallest of several failing cases."""
        return len(self.spec())


ESIZE = {"byte": 1, "int": 4}


def view_offsets(rs: RankSpec, start: int, nbytes: int) -> np.ndarray:
    """File offsets of the view's data bytes [start, start + nbytes) (bytes of the view's stream)."""
    ft = rs.filetype
    n = np.arange(start, start + nbytes, dtype=np.int64)
    return rs.disp + (n // ft.size) * ft.extent + ft.off[n % ft.size]


def memory_bytes(case_id: int, rank: int, call: int, mt: Type, count: int) -> np.ndarray:
    """The data a call sends: memory type map over 'count' copies of the pattern buffer."""
    if count == 0:
        return np.zeros(0, dtype=np.uint8)
    disp = (np.arange(count, dtype=np.int64)[:, None] * mt.extent + mt.off[None, :]).ravel()
    return pat(case_id, rank, call + 1, disp)


@dataclass
class Expected:
    """What a case leaves: the file's bytes, which of them MPI defines (written, or existing before
    the open: a hole past the old end of file may hold anything, ROMIO leaves its buffer's garbage
    there) and per rank the JSON line of coll_cases.c less 'case' and 'world'."""

    content: bytes
    defined: np.ndarray  # bool per byte of content
    results: dict[int, dict]

    def mismatches(self, got: bytes) -> str | None:
        """None if a file's bytes agree with the model, else what differs."""
        if len(got) != len(self.content):
            return f"{len(got)} bytes instead of {len(self.content)}"
        a = np.frombuffer(got, dtype=np.uint8)
        b = np.frombuffer(self.content, dtype=np.uint8)
        bad = np.flatnonzero((a != b) & self.defined)
        if len(bad) == 0:
            return None
        return f"{len(bad)} bytes differ, the first at offsets {bad[:6].tolist()}"


def call_ranges(rs: RankSpec) -> list[tuple[int, int]]:
    """(start, nbytes) in the view's stream of each call, following the individual file pointer."""
    es, fp, out = ESIZE[rs.etype], 0, []
    for c in rs.calls:
        nbytes = c.count * rs.memtype.size
        start = c.offset * es if c.offset is not None else fp
        if c.offset is None:
            fp += nbytes
        out.append((start, nbytes))
    return out


def expected(case: Case) -> Expected:
    writes = []
    results = {}
    for r, rs in enumerate(case.ranks):
        es, fp, calls = ESIZE[rs.etype], 0, []
        for i, (c, (start, nbytes)) in enumerate(zip(rs.calls, call_ranges(rs), strict=True)):
            writes.append((view_offsets(rs, start, nbytes), memory_bytes(case.id, r, i, rs.memtype, c.count)))
            if c.offset is None:
                fp += nbytes
            calls.append({"err": 0, "count": c.count, "pos": fp // es})
        results[r] = {"rank": r, "ft": rs.filetype.describe(), "mt": rs.memtype.describe(), "open": 0,
                      "calls": calls}
    end = max([case.prefill] + [int(o.max()) + 1 for o, _ in writes if len(o)])
    content = np.zeros(end, dtype=np.uint8)
    defined = np.zeros(end, dtype=bool)
    content[:case.prefill] = prefill_bytes(case.prefill, case.prefill_seed)
    defined[:case.prefill] = True
    for offs, data in writes:
        content[offs] = data
        defined[offs] = True
    return Expected(content.tobytes(), defined, results)


def _counts(d: Draw, rs_mt: Type, budget: int = MAX_CALL_BYTES) -> int:
    if d.chance(15):
        return 0
    return d.int(1, max(1, min(6, budget // rs_mt.size)))


def draw_case(d: Draw, case_id: int, world: int, romio_safe: bool = False) -> Case:
    """One case for a world of 'world' ranks; romio_safe: only what ROMIO 3.2.1 writes right
    (see romio_safe_memory)."""
    k = d.int(1, world) if d.chance(70) else world
    members = list(range(world))
    if d.chance(50):  # any ranks in any order
        for i in range(world - 1, 0, -1):
            j = d.int(0, i)
            members[i], members[j] = members[j], members[i]
    members = members[:k]
    etype = "int" if d.chance(20) else "byte"
    unit = ESIZE[etype]
    layout = d.choice(("interleave", "interleave-type", "blocks", "darray", "subarray"))
    depth = d.int(0, 3)

    # filetypes without displacement; disps chosen after the counts, for 'blocks'
    if layout.startswith("interleave"):
        tiles = [_nonnegative(_file_type(d, unit, depth - 1, romio_safe) if d.chance(70) else
                              contig(d.int(1, 3), _leaf(d, unit, False))) for _ in range(k)]
        tile = max(t.true_ub for t in tiles)
        tile += -tile % unit + d.int(0, 2) * unit
        base = d.int(0, 8) * unit
        if layout == "interleave":
            ftypes = [resized(0, k * tile, t) for t in tiles]
            disps = [base + r * tile for r in range(k)]
        else:
            ftypes = [resized(0, k * tile, struct([(1, r * tile, t)])) for r, t in enumerate(tiles)]
            disps = [base] * k
    elif layout == "darray":
        elem = _leaf(d, unit, False) if d.chance(60) else contig(d.int(1, 3), _leaf(d, unit, False))
        first = array_type(d, elem, "darray", size=k, rank=0)
        ftypes = [_redraw_darray(first, k, r, elem) for r in range(k)]
        if any(t.size == 0 for t in ftypes):
            ftypes = [darray(k, r, [k], ["c"], [1], [k], "c", elem) for r in range(k)]
        wrap = d.choice(("none", "dup", "resized", "contig"))
        ftypes = [_wrap(t, wrap) for t in ftypes]
        disps = [d.int(0, 8) * unit] * k
    elif layout == "subarray":
        elem = _leaf(d, unit, False)
        nd = d.int(1, 3)
        sizes = [d.int(1, 4) for _ in range(nd)]
        cut = d.int(0, nd - 1)
        sizes[cut] = d.int(k, 2 * k + 1)
        edges = sorted(d.int(1, sizes[cut] - 1) for _ in range(k - 1)) if k > 1 else []
        edges = [0] + edges + [sizes[cut]]
        order = d.choice(("c", "f"))
        ftypes = []
        for r in range(k):
            lo, hi = edges[r], edges[r + 1]
            if hi == lo:  # an empty slab: this rank writes the whole array's first... nothing
                lo, hi = 0, 0
            subs = list(sizes)
            starts = [0] * nd
            subs[cut], starts[cut] = hi - lo, lo
            ftypes.append(subarray(sizes, subs, starts, order, elem) if hi > lo else None)
        disps = [d.int(0, 8) * unit] * k
    else:  # blocks
        ftypes = [_nonnegative(_file_type(d, unit, depth, romio_safe)) for _ in range(k)]
        disps = [0] * k

    ncalls = 2 if d.chance(35) else 1
    kinds = [d.choice(ROMIO_CALL_KINDS if romio_safe else CALL_KINDS) for _ in range(ncalls)]
    ranks: list[RankSpec] = []
    for r in range(k):
        mt = memory_type(d, unit, d.int(0, 3))
        for _ in range(10):
            if not romio_safe or romio_safe_memory(mt):
                break
            mt = memory_type(d, unit, d.int(0, 3))
        else:
            mt = contig(d.int(1, 4), _leaf(d, unit, True))
        ft = ftypes[r]
        calls = []
        for kind in kinds:
            count = 0 if ft is None else _counts(d, mt)
            offset = None
            if "_at_" in kind:
                fsize = ft.size if ft is not None else unit
                offset = d.int(0, 2 * fsize // unit + 2)
            calls.append(Call(kind, offset, count))
        if ft is None:  # no slab: a legal view, nothing written through it
            ft = contig(1, _leaf(d, unit, False))
        ranks.append(RankSpec(disps[r], etype, ft, mt, calls))

    if layout == "blocks":  # disjoint regions in a random order, gaps between them
        order = list(range(k))
        for i in range(k - 1, 0, -1):
            j = d.int(0, i)
            order[i], order[j] = order[j], order[i]
        cursor = d.int(0, 16) * unit
        for r in order:
            rs = ranks[r]
            spans = [view_offsets(rs, s, n) for s, n in call_ranges(rs) if n]
            if not spans:
                rs.disp = d.int(0, 4) * unit
                continue
            lo = min(int(s.min()) for s in spans)
            hi = max(int(s.max()) + 1 for s in spans)
            lo -= lo % unit
            rs.disp = cursor - lo
            cursor += hi - lo + -(hi - lo) % unit + d.int(0, 4) * unit
            if rs.disp < 0:  # the view's data starts later than the cursor: move the cursor on
                cursor -= rs.disp
                rs.disp = 0

    case = Case(case_id, members, ranks, layout)
    extent = len(expected(case).content)
    if d.chance(50):
        case.prefill = d.int(1, max(1, extent + extent // 4))
        case.prefill_seed = d.int(0, 1 << 30)
    case.wronly = d.chance(10)
    if d.chance(60):
        case.hints["cb_buffer_size"] = str(d.choice((16, 64, 100, 256, 1024, 4096)))
    if d.chance(40):
        case.hints["cb_nodes"] = str(d.int(1, k))
    if d.chance(30):
        case.hints["romio_cb_write"] = "enable"
    return case


def romio_safe_memory(t: Type) -> bool:
    """ROMIO 3.2.1 (Open MPI 4.1's romio321) writes the wrong bytes for a memory type whose data
    does not start at its address (a true lower bound or lower bound other than 0: it takes a
    'contiguous' type's data from the buffer's address) or that holds a 'loose' type (contig 3
    hindexed 2 1 4 2 8 iblock 1 1 -1 float), and crashes on a block of length 0."""
    return t.lb == 0 and t.true_lb == 0 and not t.inner_loose and not t.empty_block


def romio_safe_file(t: Type) -> bool:
    """ROMIO 3.2.1 flattens a filetype wrongly (wrong bytes, a crash in ADIOI_Optimize_flattened, or
    a hang) when a type inside it (a resized type, a subarray...) has bounds other than its data's
    (indexed 2 2 0 2 4 darray 2 0 1 c 2 b -1 2 short hangs 5 ranks of 9) or data before its address,
    and crashes (free(): invalid
    pointer) on a block of length 0; cases for ROMIO keep resized types to the outermost wrapper
    of the layouts and have no empty block in their filetypes; and it reports
    file positions wrongly for a filetype whose lower bound is not 0."""
    return not t.inner_loose and not t.empty_block and t.lb == 0


def _file_type(d: Draw, unit: int, depth: int, romio_safe: bool) -> Type:
    for _ in range(10):
        t = mono_type(d, unit, depth)
        if not romio_safe or romio_safe_file(t):
            return t
    return contig(d.int(1, 4), _leaf(d, unit, False))


def _nonnegative(t: Type) -> Type:
    """A filetype's data displacements must not be negative: shift the type when they are."""
    if t.true_lb >= 0:
        return t
    return _fix_monotone(struct([(1, -t.true_lb, t)]))


def _redraw_darray(first: Type, size: int, rank: int, elem: Type) -> Type:
    """The darray of 'first' (same parameters) seen from another rank."""
    words = first.expr.split()
    nd = int(words[3])
    gs = [int(x) for x in words[5:5 + nd]]
    di = words[5 + nd:5 + 2 * nd]
    da = [int(x) for x in words[5 + 2 * nd:5 + 3 * nd]]
    ps = [int(x) for x in words[5 + 3 * nd:5 + 4 * nd]]
    return darray(size, rank, gs, di, da, ps, words[4], elem)


def _wrap(t: Type, how: str) -> Type:
    if how == "dup":
        return dup(t)
    if how == "resized":
        return resized(0, t.extent, t)
    if how == "contig":
        return contig(1, t)
    return t


def draw_batch(seed: int, n: int, world: int, first_id: int = 0, romio_safe: bool = False) -> list[Case]:
    """n cases drawn from a seeded random.Random (reproducible)."""
    d = RandomDraw(seed)
    return [draw_case(d, first_id + i, world, romio_safe) for i in range(n)]


def case_strategy(world: int, case_id: int = 0, romio_safe: bool = False) -> st.SearchStrategy[Case]:
    """Hypothesis strategy for one case (shrinks to small types and counts)."""
    return st.composite(lambda draw: draw_case(HypothesisDraw(draw), case_id, world, romio_safe))()


def write_spec(cases: Sequence[Case], path: Path) -> None:
    path.write_text("".join(c.spec() for c in cases))


def type_strategy(unit: int = 1) -> st.SearchStrategy[Type]:
    """Hypothesis strategy for datatypes (monotone or memory ones)."""
    def _draw(draw) -> Type:
        d = HypothesisDraw(draw)
        depth = d.int(0, 3)
        return mono_type(d, unit, depth) if d.chance(50) else memory_type(d, unit, depth)
    return st.composite(_draw)()


def draw_types(seed: int, n: int) -> list[Type]:
    """n datatypes from a seeded random.Random, for checking the model against MPI."""
    d = RandomDraw(seed)
    out = []
    for _ in range(n):
        unit = 4 if d.chance(20) else 1
        depth = d.int(0, 3)
        out.append(mono_type(d, unit, depth) if d.chance(50) else memory_type(d, unit, depth))
    return out
