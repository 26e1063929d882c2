"""``pario kernel NAME [kernel options] [--np N] [--launcher L] [-- launcher args]``: run an I/O kernel."""

from __future__ import annotations

import argparse
import shlex
import sys
import textwrap

from pario.errors import ParioError

_EPILOG = """\
examples:
  pario kernel --list
  pario kernel block --np 4 --path /scratch/ior.dat --block-size 4m \\
      --transfer-size 1m --verify
  pario kernel bt --np 9 --class A --steps 4 -- --mca io romio321
  pario kernel vpic --np 4 --hdf5 --particles 64k --chunk 64 --verify  (HDF5)
  pario kernel s3d --np 4 --pnetcdf --nonblocking --verify     (PnetCDF)
  pario kernel s3d --help            (the kernel's own options)

Everything after NAME that is not --np/--launcher/--dry-run is passed to the
kernel; everything after '--' is passed to the launcher (mpirun -np N
<launcher args> kernel ...). MPI-IO hints: PARIO_KERNEL_HINTS="key=value,..."
or the kernel's --hints (docs/kernels.md). The exit code is the kernel's:
0 ok, 1 I/O error or verification failure, 2 bad parameters."""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "kernel",
        help="run an I/O kernel (block, s3d, bt, vpic, tile) under MPI",
        description=textwrap.fill("Run one of pario's I/O kernels (models of the IOR, S3D-IO, BT-IO, "
                                  "VPIC-IO and mpi-tile-io access patterns) under mpirun or srun. The "
                                  "kernel prints one JSON line.", 79),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--list", action="store_true", help="list the kernels with a one-line description")
    parser.add_argument("--np", metavar="N", help="number of MPI processes (default 1)")
    parser.add_argument("--launcher", metavar="L", help="mpirun (default), mpiexec, srun, or none")
    parser.add_argument("--dry-run", action="store_true", help="print the command instead of running it")
    parser.add_argument("name", nargs="?", help="the kernel")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="kernel options, then -- and "
                        "launcher arguments")
    parser.set_defaults(func=_run)


#: What the first '--' after the kernel's name becomes before argparse sees it:
#: argparse drops a '--' that directly follows a positional, which would hand
#: the launcher's arguments to the kernel.
LAUNCHER_SEPARATOR = "--pario-launcher-args--"


def protect_separator(argv: list[str]) -> list[str]:
    """``pario kernel NAME ... -- ARGS``: keep the '--' that starts the launcher's arguments."""
    if not argv or argv[0] != "kernel" or "--" not in argv:
        return argv
    cut = argv.index("--")
    return [*argv[:cut], LAUNCHER_SEPARATOR, *argv[cut + 1:]]


def split_args(rest: list[str]) -> tuple[list[str], dict[str, str], list[str]]:
    """Split what follows NAME into kernel arguments, pario's own options, launcher arguments."""
    kernel_args: list[str] = []
    own: dict[str, str] = {}
    launcher_args: list[str] = []
    i = 0
    while i < len(rest):
        a = rest[i]
        if a in ("--", LAUNCHER_SEPARATOR):
            launcher_args = rest[i + 1:]
            break
        key, eq, val = a.partition("=")
        if key in ("--np", "--launcher"):
            if not eq:
                if i + 1 >= len(rest):
                    raise ParioError(f"{key} needs a value")
                i += 1
                val = rest[i]
            own[key[2:]] = val
        elif a == "--dry-run":
            own["dry-run"] = "1"
        else:
            kernel_args.append(a)
        i += 1
    return kernel_args, own, launcher_args


def _run(args: argparse.Namespace) -> int:
    from pario import kernels

    if args.list:
        from pario.textfit import terminal_width, wrap_words

        # one kernel a paragraph: its name, then its description wrapped under the descriptions
        width = max(len(k.name) for k in kernels.KERNELS)
        for k in kernels.KERNELS:
            print("\n".join(wrap_words(f"{k.name:<{width}}  {k.description}", terminal_width(), width + 2)))
        return 0
    if not args.name:
        raise ParioError("name a kernel (pario kernel --list shows them)")
    kernel_args, own, launcher_args = split_args(list(args.args))
    np_text = own.get("np", args.np) or "1"
    try:
        np = int(np_text)
    except ValueError:
        raise ParioError(f"--np must be a positive integer (got {np_text!r})") from None
    launcher = own.get("launcher", args.launcher) or "mpirun"
    dry = args.dry_run or "dry-run" in own
    kernels.get(args.name)  # unknown name: one-line error before anything else
    if "--help" in kernel_args or "-h" in kernel_args:
        # The kernel's own options: no launcher, one process, nothing written.
        return kernels.run(args.name, ["--help"], launcher="none").returncode
    if dry:
        cmd = kernels.build_command(
            args.name, kernel_args, np=np, launcher=launcher, launcher_args=launcher_args
        )
        print(shlex.join(cmd))
        return 0
    # the kernel's options checked by the kernel itself, in one process without MPI: a mistake is
    # one line before the launcher starts (and prints its banner)
    check = kernels.run(args.name, ["--check-options", *kernel_args], launcher="none", capture=True)
    if check.returncode != 0:
        lines = (check.stderr or "").strip().splitlines()
        why = lines[-1].split(": error: ", 1)[-1] if lines else "its options are refused"
        raise ParioError(f"kernel {args.name}: {why}")
    sys.stdout.flush()
    res = kernels.run(args.name, kernel_args, np=np, launcher=launcher, launcher_args=launcher_args)
    if res.returncode != 0:
        refused = _too_many_ranks(launcher, np, launcher_args)
        if refused:
            again = ["pario", "kernel", args.name, *kernel_args, "--np", str(np), "--", "--oversubscribe",
                     *launcher_args]
            print(f"pario: {refused}: {shlex.join(again)}", file=sys.stderr)
    return res.returncode


def _too_many_ranks(launcher: str, np: int, launcher_args: list[str]) -> str:
    """Why Open MPI's mpirun refused the job, where it refuses it for sure: more ranks than cores
    without --oversubscribe ("" otherwise)."""
    import os

    from pario.launch.run import MPIRUN_NAMES, mpirun_flavour

    cores = os.cpu_count() or 1
    if (os.path.basename(launcher) not in MPIRUN_NAMES or np <= cores or "--oversubscribe" in launcher_args
            or os.environ.get("OMPI_MCA_rmaps_base_oversubscribe") in ("1", "true")
            or mpirun_flavour(launcher) != "openmpi"):
        return ""
    return f"Open MPI's mpirun refuses {np} ranks on {cores} cores unless --oversubscribe is given"

