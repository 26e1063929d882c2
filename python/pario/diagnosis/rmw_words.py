"""The words of MPIIO-COLLECTIVE-RMW (rmw.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, file_subject
from pario.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.diagnosis.facts import Facts
    from pario.diagnosis.rmw import CollectiveRmw, RmwFile


def _fix(top: RmwFile) -> list[Recommendation]:
    recs = []
    if top.component == "romio" and top.fs == "lustre":
        recs.append(Recommendation(
            "hint", "ROMIO's Lustre driver can write the pieces of each buffer without reading the gaps "
                    "first:", "romio_lustre_ds_in_coll disable"))
    elif top.component == "romio":
        recs.append(Recommendation(
            "hint", (f"Write the pieces independently, without collective buffering and so without gaps to "
                     f"fill (pays where each rank's pieces are large; here {fmt.nbytes(top.mean_piece)} per "
                     "call, and pario verify measures it):"), "romio_cb_write disable"))
    recs.append(Recommendation(
        "code", ("Give each collective call whole regions of the file: one call per step whose file view "
                 "covers all of the step's pieces, rather than one call per small piece, so that the "
                 "aggregators' buffers hold no gaps.")))
    return recs


def collective_rmw(hit: CollectiveRmw, facts: Facts, cfg: RuleConfig) -> Words:
    top = hit.files[0]
    ratio = top.written / top.asked
    statement = (
        f"The collective writes of {top.name} read the file before writing it: the aggregators made "
        f"{fmt.count(top.reads)} reads ({fmt.nbytes(top.read_bytes)}, {fmt.seconds(top.read_time)} over all "
        f"ranks) the program never asked for, and wrote {fmt.nbytes(top.written)} where MPI-IO was given "
        f"{fmt.nbytes(top.asked)} ({ratio:.1f}x): the gaps between the ranks' pieces in each collective "
        "buffer are read, filled and written back (read-modify-write)."
    )
    evidence = [
        Metric("collective_writes", "collective write calls", int(top.collective_writes), "count"),
        Metric("asked", "bytes MPI-IO was given to write", top.asked, "B"),
        Metric("written", "bytes written beneath (POSIX)", top.written, "B"),
        Metric("amplification", "written / given", ratio, ""),
        Metric("reads", "reads beneath (MPI-IO read nothing of the file)", int(top.reads), "count"),
        Metric("read_time", "their time (all ranks)", top.read_time, "s"),
        Metric("component", "MPI-IO component", top.component or "unknown", "text"),
        Metric("time_at_stake", "slowest rank's time in those reads and extra writes", hit.time_lost, "s",
               approximate=True),
    ]
    subjects = [file_subject(f.name, f.fid,
                             Metric("amplification", "written / given", f.written / f.asked, ""),
                             Metric("reads", "reads beneath", int(f.reads), "count"))
                for f in hit.files]
    return Words(statement, evidence, _fix(top), subjects=subjects, subjects_total=len(hit.files),
                 time_basis=("estimate: the slowest rank's POSIX read time on the file and the share of its "
                             "write time beyond the bytes MPI-IO was given"))
