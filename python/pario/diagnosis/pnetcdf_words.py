"""The words of the PnetCDF rules (pnetcdf.py): statement, evidence and recommendations of each hit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pario.diagnosis._fmt as fmt
from pario.diagnosis.commands import autotune
from pario.diagnosis.config import RuleConfig
from pario.diagnosis.findings import Metric, Recommendation, Subject, file_subject, hex_id
from pario.diagnosis.hits import Words

if TYPE_CHECKING:
    from pario.diagnosis.facts import Facts
    from pario.diagnosis.pnetcdf import Alignment, SmallPuts


def small_puts(hit: SmallPuts, facts: Facts, cfg: RuleConfig) -> Words:
    subjects = [
        Subject(
            "variable",
            v.name,
            (
                Metric("calls", f"blocking {v.kind}s", v.calls, "count"),
                Metric("mean", f"mean {v.kind}", v.mean, "B"),
                Metric("time", f"{v.kind} time (summed over ranks)", v.time, "s"),
            ),
            hex_id(v.vid),
        )
        for v in hit.variables
    ]
    nvars = len({v.name for v in hit.variables})
    statement = (
        f"{fmt.count(hit.calls)} blocking PnetCDF puts/gets of at most "
        f"{fmt.nbytes(cfg.pnetcdf_small_put_bytes)} on average go one by one to MPI-IO "
        f"({nvars} variable{'s' if nvars > 1 else ''}, e.g. {hit.variables[0].name}); "
        "posted as nonblocking requests and completed together, PnetCDF would merge them into one "
        "MPI-IO call per wait."
    )
    recs = [
        Recommendation(
            "code",
            "Post the puts as nonblocking requests and complete them together:",
            "int req[NVARS], st[NVARS];\n"
            "for (int i = 0; i < NVARS; i++)\n"
            "    ncmpi_iput_vara_double(ncid, varid[i], start, count, buf[i], &req[i]);\n"
            "ncmpi_wait_all(ncid, NVARS, req, st);  /* one collective MPI-IO write */",
        )
    ]
    return Words(
        statement,
        [Metric("calls", "small blocking puts/gets", hit.calls, "count")],
        recs,
        time_basis="upper bound: the mean per-rank time of these calls",
        subjects=subjects,
    )


def alignment(hit: Alignment, facts: Facts, cfg: RuleConfig) -> Words:
    files, stripe_size = hit.files, hit.stripe_size
    subjects = [
        file_subject(
            f.name,
            f.fid,
            Metric("var_align", "nc_var_align_size", f.var_align, "B"),
            Metric("stripe_size", "stripe size", f.stripe_size, "B"),
        )
        for f in files
    ]
    statement = (
        f"{len(files)} PnetCDF file{'s' if len(files) > 1 else ''} on Lustre (e.g. "
        f"{files[0].name}) align their variables to {fmt.nbytes(files[0].var_align or 0)}, "
        f"not a multiple of the {fmt.nbytes(stripe_size)} stripe: every variable's first and last "
        "stripe is shared with its neighbours, so aggregators of different variables contend for it."
    )
    recs = [
        Recommendation(
            "hint",
            "Set PnetCDF's alignment hints to the stripe size (PARIO_HINTS passes them to "
            "ncmpi_create/ncmpi_open with the MPI-IO hints):",
            f"nc_var_align_size {stripe_size}\nnc_header_align_size {stripe_size}",
        ),
        autotune(facts, "PnetCDF's alignment with the MPI-IO hints", [f.name for f in files]),
    ]
    return Words(
        statement,
        [Metric("files", "files with misaligned variables", len(files), "count")],
        recs,
        time_basis="not estimated: what the change saves depends on the file system",
        subjects=subjects,
    )
