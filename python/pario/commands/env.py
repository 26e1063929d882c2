"""``pario env``: the shell lines that switch the runtime on inside an existing job script."""

from __future__ import annotations

import argparse
import textwrap

_EPILOG = """\
example, in a Slurm batch script:
  #!/bin/bash
  #SBATCH -N 2 -n 64
  eval "$(pario env --log $SLURM_SUBMIT_DIR/logs/)"
  srun ./prepare input.nml   # one log per job step:
  srun ./solver              #   <program>-job<id>.<step>-<date>.pario
  pario report $SLURM_SUBMIT_DIR/logs/solver-*.pario

With --log FILE.pario the jobs' logs are FILE.step1.pario, FILE.step2.pario,
... in the order they start.  Only MPI ranks write logs; the shell and the
commands it runs stay silent."""


def register(sub: argparse._SubParsersAction) -> None:
    from pario.collective import help_text

    parser = sub.add_parser(
        "env",
        help="print the shell lines that profile the MPI jobs of a job script (eval \"$(pario env)\")",
        description=textwrap.fill(
            "Print shell `export` lines that switch pario's runtime on for every MPI job started after "
            "them (srun, mpirun, mpiexec), without pario run: LD_PRELOAD, PARIO_LOG, PARIO_STEPS, "
            "PARIO_PARENT_PID, and OMPI_MCA_mca_base_env_list so that Open MPI's mpirun forwards them (and "
            "the PARIO_* settings already set) "
            "to every node (srun and MPICH's mpiexec pass the environment on by themselves).", 79),
        epilog=_EPILOG + "\n\n" + help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--log", metavar="PATH", help="directory for the logs (default: the current "
                        "directory), or a file name FILE.pario for FILE.step<N>.pario")
    parser.add_argument("--hints", metavar="FILE", help="MPI-IO hints to inject at every MPI_File_open")
    parser.add_argument("--collective", metavar="ALGO[:SHUFFLE]",
                        help="serve the collective writes by pario's two-phase engine (exports PARIO_COLL; "
                        "ALGO and SHUFFLE below)")
    parser.add_argument("--trace", action="store_true",
                        help="also record an event trace of every rank (exports PARIO_TRACE=1; "
                        "docs/trace.md)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from pario.collective import check_setting
    from pario.launch import run as launch
    from pario.launch.hints import checked_file

    # a bad value or file is refused (one line; a file's error names file:line) before the job uses it
    collective = check_setting(args.collective) if args.collective is not None else None
    hints = checked_file(args.hints) if args.hints else None
    for line in launch.env_exports(args.log, hints, collective, trace=args.trace):
        print(line)
    return 0
