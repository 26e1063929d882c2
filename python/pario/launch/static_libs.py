"""I/O libraries linked statically into the program, where no preloaded profiler sees their calls.

A program linked with ``libhdf5.a`` (``h5pcc``/``h5pfc`` do so by default) calls HDF5 inside its
own executable: ``LD_PRELOAD`` cannot put pario's wrappers between them, so the HDF5 layer stays
empty while the MPI-IO and POSIX calls beneath are still recorded.  ``pario run`` says so before
launch.  A library counts as linked in when the program's symbol names hold one of its entry
points while no shared build of it is among the program's ``DT_NEEDED`` entries.
"""

from __future__ import annotations

import mmap
from pathlib import Path

from pario.launch import mpi_match

#: library -> (an entry point every program using it links, its shared libraries' name prefixes,
#: how to link it shared)
LIBRARIES: dict[str, tuple[bytes, tuple[str, ...], str]] = {
    "HDF5": (b"H5Dwrite", ("libhdf5",), "h5pcc/h5pfc -shlib, or -lhdf5 against libhdf5.so"),
    "PnetCDF": (b"ncmpi_create", ("libpnetcdf",), "-lpnetcdf against libpnetcdf.so"),
}


def linked_in(program: Path) -> list[str]:
    """The LIBRARIES linked into ``program`` itself (none for a script or a non-ELF file)."""
    needed = mpi_match.needed_libraries(program)
    if needed is None:
        return []
    try:
        with open(program, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return [name for name, (symbol, shared, _) in LIBRARIES.items()
                    if data.find(b"\0" + symbol + b"\0") >= 0
                    and not any(lib.startswith(shared) for lib in needed)]
    except (OSError, ValueError):
        return []


def warnings(program: Path | None) -> list[str]:
    """One line per library linked into the program."""
    if program is None:
        return []
    return [f"{program.name} has {name} linked in statically: its {name} calls cannot be seen "
            f"(its MPI-IO and POSIX I/O are recorded); to profile them, link {name} as a shared "
            f"library ({LIBRARIES[name][2]})" for name in linked_in(program)]
