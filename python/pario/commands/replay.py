"""``pario replay LOG``: replay a traced run on ideal machines (docs/trace.md, "Replay")."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "replay",
        help="replay a traced run with an ideal network and/or ideal I/O: serialisation and transfer "
        "efficiency",
        description="Replay the event trace of a run recorded with 'pario run --trace' four times: with the "
        "network and the I/O as measured (which must reproduce the measured run time: its error is shown), "
        "with an ideal network (zero latency, infinite bandwidth), with ideal I/O (every I/O call "
        "instantaneous), and with both ideal. From them the POP factors a profile cannot give: "
        "serialisation efficiency (SerE) and transfer efficiency (TE), with I/O counted as work "
        "(SerE', TE'), and the I/O transfer efficiency (docs/trace.md, docs/metrics.md). Exit status 2 "
        "for a log without a trace or a trace that cannot be replayed.",
    )
    parser.add_argument("log", metavar="LOG", help="pario log of a run recorded with pario run --trace")
    parser.add_argument("--json", metavar="FILE",
                        help="write the replays and factors as JSON to FILE ('-': standard output)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from pario.errors import ParioError
    from pario.log import read_log
    from pario.trace.metrics import metrics_of
    from pario.trace.replay import prepare, replays
    from pario.units import nranks

    profile = read_log(args.log)
    trace = profile.trace
    if trace is None:
        raise ParioError(f"{args.log}: the log has no event trace; record one with pario run --trace")
    if not trace.has_mpi:
        from pario.trace.metrics import NO_MPI_EVENTS

        raise ParioError(f"{args.log}: no replay: {NO_MPI_EVENTS}")
    p = prepare(trace)  # ReplayError (a ParioError): one line
    m = metrics_of(p, replays(p))
    if args.json:
        from pario.report.json_out import write_replay_json

        write_replay_json(args.log, m, args.json)
        if args.json == "-":
            return 0
    from rich.console import Console

    from pario.report.terminal import replay_report

    title = (f"{args.log}: {nranks(trace.nprocs)}, {trace.nevents:,} events, "
             f"{p.deps.ncalls:,} calls")
    Console(highlight=False).print(replay_report(title, m))
    return 0
