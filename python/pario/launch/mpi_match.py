"""Is the runtime built for the MPI library the job will use?

``libpario.so`` is linked against one MPI library.  Preloaded into a program
built with another one (an MPICH program under the Open MPI runtime, say) it
makes the program abort with errors such as "Invalid communicator", and no
log is written.  This module tells the two families apart before launch, from
the ELF ``DT_NEEDED`` entries of the runtime and of the program, and from the
launcher (Open MPI's mpirun or MPICH's Hydra).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pario.errors import ParioError

#: The names MPI libraries give their launchers (Open MPI's and MPICH's, and Debian's alternatives).
MPIRUN_NAMES = ("mpirun", "mpiexec", "orterun", "prterun", "mpiexec.hydra", "mpiexec.openmpi",
                "mpirun.openmpi", "mpirun.mpich", "mpiexec.mpich")

#: MPI family -> the name users know it by.
FAMILY_NAMES = {"openmpi": "Open MPI", "mpich": "MPICH"}

#: How to build the runtime for a family, from pario's source tree.
BUILD_LINES = {
    "mpich": "cmake -S <pario source> -B build-mpich -G Ninja -DMPI_C_COMPILER=mpicc.mpich && "
             "cmake --build build-mpich --target pario",
    "openmpi": "cmake -S <pario source> -B build-openmpi -G Ninja -DMPI_C_COMPILER=mpicc.openmpi && "
               "cmake --build build-openmpi --target pario",
}


def needed_libraries(path: Path) -> list[str] | None:
    """The shared libraries an ELF file asks for, or None if it is not a dynamic ELF file."""
    # imported here: pyelftools costs ~15 ms, which the report and diagnosis do not need
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    try:
        with open(path, "rb") as fh:
            elf = ELFFile(fh)
            for section in elf.iter_sections():
                if isinstance(section, DynamicSection):
                    # pyelftools sets ``needed`` on DT_NEEDED tags only, which its types do not say
                    return [tag.needed for tag in section.iter_tags()  # type: ignore[attr-defined]  # set on DT_NEEDED tags only
                            if tag.entry.d_tag == "DT_NEEDED"]
    except (OSError, ELFError, ValueError):
        return None
    return None


def mpi_family(libraries: list[str]) -> str | None:
    """'openmpi', 'mpich' or None from a list of DT_NEEDED names.

    libmpi.so.40 (Open MPI 3 to 5) and .20 are Open MPI; libmpich.so is
    MPICH.  libmpi.so.12 is ambiguous (MPICH's ABI in Intel MPI and MVAPICH,
    but also Open MPI 1.10), so it decides nothing.
    """
    for name in libraries:
        if name.startswith("libmpich.so"):
            return "mpich"
        if name in ("libmpi.so.40", "libmpi.so.20"):
            return "openmpi"
    return None


def program_in(command: list[str], launcher_known: bool) -> Path | None:
    """The executable a launch command runs: after the launcher's options, or the command itself."""
    candidates = command[1:] if launcher_known else command[:1]
    for arg in candidates:
        if arg.startswith("-"):
            continue
        found = shutil.which(arg) if "/" not in arg else (arg if Path(arg).is_file() else None)
        if found:
            return Path(found)
    return None


def check(runtime: Path, launcher: str, launcher_flavour: str | None, program: Path | None) -> None:
    """Raise ParioError when the runtime's MPI family differs from the launcher's or the program's.

    ``launcher_flavour`` is 'openmpi' or 'hydra' for mpirun/mpiexec, None for
    srun or a plain program; ``program`` the executable the command runs.
    """
    runtime_family = mpi_family(needed_libraries(runtime) or [])
    if runtime_family is None:
        return
    other = "mpich" if runtime_family == "openmpi" else "openmpi"
    built_for = FAMILY_NAMES[runtime_family]
    fix = (f"build the runtime for {FAMILY_NAMES[other]} ({BUILD_LINES[other]}) "
           f"and set PARIO_RUNTIME=<build dir>/libpario.so")
    launcher_family = {"hydra": "mpich", "openmpi": "openmpi"}.get(launcher_flavour or "")
    if launcher_family and launcher_family != runtime_family:
        kind = "MPICH's launcher (Hydra)" if launcher_family == "mpich" else "Open MPI's launcher"
        raise ParioError(f"{launcher} is {kind} but the runtime {runtime} was built for {built_for}: {fix}")
    program_family = mpi_family(needed_libraries(program) or []) if program else None
    if program and program_family and program_family != runtime_family:
        raise ParioError(f"{program.name} is linked with {FAMILY_NAMES[program_family]} but the runtime "
                         f"{runtime} was built for {built_for}: {fix}")
