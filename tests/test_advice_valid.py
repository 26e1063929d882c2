"""Every command and hint pario prints is valid as printed, and one file gets one layout.

The validators (tests/advice_check.py) check ``lfs setstripe`` lines as lfs
does, MPI-IO hint lines against the known hints and their value types, and ``pario ...`` lines
with pario's own argument parser.  They run here over every recommendation of every log the
tests hold (the real Darshan logs, the built ones, and a pario log of a real run), as
``pario diagnose`` prints them.  The Lustre layout of a file comes from one function
(python/pario/diagnosis/layout.py): every finding about a file prints the same command,
and applying it does not make pario advise another.  Advice that does not fit the run: re-reads
of one byte are not random access, and runs without MPI-IO get no MPI-IO advice.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections import defaultdict
from pathlib import Path

import pytest

from advice_check import (
    finding_errors,
    hint_lines_errors,
    lfs_setstripe_errors,
    pario_line_errors,
    recommendation_errors,
    striping_commands,
)
from darshan_logs import ALL_LOGS
from darshan_recipes import BUILT_DIR, E3SM_OUT_ID, E3SM_REQUEST, REREAD_READS
from pario.diagnosis import Finding, Recommendation, diagnose
from pario.diagnosis.layout import (
    MAX_STRIPE_SIZE,
    aggregators_for,
    fits,
    lfs_stripe_size,
    stripe_size_for,
)
from pario.log import read_log
from pario.model import Profile
from pario.report.hints_files import name_suggested_hints
from test_diagnosis_synthetic import GiB, MiB, profile

KiB = 1 << 10
LOGS = [*ALL_LOGS, *sorted(BUILT_DIR.glob("*.darshan"))]
E3SM = BUILT_DIR / "e3sm-pnetcdf-no-counters.darshan"
REREAD = BUILT_DIR / "posix-reread-byte0.darshan"
IOR_POSIX = BUILT_DIR / "ior-posix-shared.darshan"


def printed(p: Profile) -> list[Finding]:
    """The findings as `pario diagnose` prints them (the trial commands name their hints file)."""
    return name_suggested_hints(diagnose(p), p)


def by_id(findings: list[Finding]) -> dict[str, Finding]:
    return {f.id: f for f in findings}


def snippets(f: Finding, kind: str) -> list[str]:
    return [r.snippet for r in f.recommendations if r.kind == kind]


# --- the validators -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("lfs setstripe -c 32 -S 1048576 /lustre/scratch/e3sm", None),
        ("lfs setstripe -c -1 -S 1m /d", None),
        ("lfs setstripe --stripe-count=8 --stripe-size=4194240k -i 3 /d", None),  # 4 GiB - 64 KiB
        ("lfs setstripe -S 505595 <directory>", "multiple of 64 KiB"),
        ("lfs setstripe -c 8 -S 786433 /d", "multiple of 64 KiB"),
        ("lfs setstripe -S 32768 /d", "at least 64 KiB"),
        ("lfs setstripe -S 4g /d", "4 GiB or more"),
        ("lfs setstripe -c 0 /d", "-1 (every OST) or 1 to 2000"),
        ("lfs setstripe -c 2001 /d", "-1 (every OST) or 1 to 2000"),
        ("lfs setstripe -i 65533 /d", "0 to 65532"),
        ("lfs setstripe -c four /d", "not a number"),
        ("lfs setstripe -c 4", "no directory"),
        ("lfs setstripe -E 1G -c 4 /d", "not one pario prints"),
        ("lfs getstripe /d", "not an lfs setstripe"),
    ],
)
def test_lfs_setstripe_validator(line: str, problem: str | None) -> None:
    errors = lfs_setstripe_errors(line)
    if problem is None:
        assert errors == []
    else:
        assert len(errors) == 1 and problem in errors[0], errors


def test_lfs_stripe_count_is_checked_against_the_osts_known() -> None:
    assert lfs_setstripe_errors("lfs setstripe -c 8 /d", osts=8) == []
    (error,) = lfs_setstripe_errors("lfs setstripe -c 9 -i 8 /d", osts=8)[:1]
    assert "more than the 8 OSTs known" in error
    assert any("0 to 7" in e for e in lfs_setstripe_errors("lfs setstripe -i 8 /d", osts=8))


@pytest.mark.parametrize(
    ("snippet", "problem"),
    [
        ("cb_nodes 16\ncb_config_list *:8", None),
        ("striping_factor 32\nstriping_unit 1048576", None),
        ("romio_cb_write enable", None),
        ("romio_ds_read automatic", None),
        ("hdf5.transfer collective", None),
        ("# a comment\nnc_var_align_size 1048576", None),
        ("cb_nodes 0", "a positive integer"),
        ("cb_buffer_size 16M", "a positive integer"),
        ("striping_unit 505595", "multiple of 64 KiB"),
        ("striping_unit 786432", None),
        ("striping_factor 2001", "1 to 2000"),
        ("romio_cb_write yes", "one of automatic, disable, enable"),
        ("romio_no_indep_rw maybe", "one of false, true"),
        ("cb_config_list *:x", "host[:count]"),
        ("cb_nodes 4\ncb_nodes 8", "given twice"),
        ("romio_frobnicate 1", "not a known MPI-IO hint"),
        ("mpirun --mca fcoll dynamic ...", "'key value'"),
    ],
)
def test_hint_validator(snippet: str, problem: str | None) -> None:
    errors = hint_lines_errors(snippet)
    if problem is None:
        assert errors == []
    else:
        assert errors and problem in errors[0], errors


@pytest.mark.parametrize(
    ("line", "valid"),
    [
        ("pario run --hints run.TIME-IO-BOUND.hints -- mpirun -np 4 ./sim -i in.nml", True),
        ("pario run --collective write-comm -- mpirun -np 4 ./sim", True),
        ("pario tune --budget 20 --objective io-time --files out.nc -- mpirun -np 512 ./sim", True),
        ("pario tune --budget 20 --objective speed -- mpirun -np 4 ./sim", False),
        ("pario tune --budget many -- ./sim", False),
        ("pario run --hints -- ./sim", False),
        ("pario frobnicate", False),
        ("mpirun -np 4 ./sim", False),
    ],
)
def test_pario_line_validator(line: str, valid: bool) -> None:
    assert (pario_line_errors(line) == []) == valid


@pytest.mark.parametrize(
    ("snippet", "kind", "valid"),
    [
        ("lfs setstripe -c 1 <output directory>", "striping", False),
        ("lfs setstripe -c 1 .", "striping", True),
        ("pario tune --budget 20 -- mpirun -np 4 <your program and its arguments>", "autotune", False),
        ("pario tune --budget 20 -- mpirun -np 4 ${APP:?set APP to your program and its arguments}",
         "autotune", True),
        ("pario run --hints 'a<b.hints' -- ./sim", "tune", True),  # quoted: not a redirection
    ],
)
def test_a_placeholder_a_shell_would_redirect_is_refused(snippet: str, kind: str, valid: bool) -> None:
    assert (recommendation_errors(Recommendation(kind, "", snippet)) == []) == valid


# --- the rounding rule --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "current", "expected"),
    [
        (E3SM_REQUEST, MiB, MiB),  # 800,964 B fits no legal stripe: keep the larger 1 MiB one
        (E3SM_REQUEST, 512 * KiB, 832 * KiB),  # ... but never below one request: round it up
        (3 * MiB // 2, MiB, 3 * MiB // 2),  # a multiple of 64 KiB: one request per stripe
        (768 * KiB + 3000, 4 * MiB, 768 * KiB),  # within 1% of a multiple of 64 KiB
        (2 * MiB, MiB, MiB),  # fits already
        (5 * GiB, MiB, MiB),  # fits already (5120 stripes a request)
        (5 * GiB + 7, 3 * MiB, MAX_STRIPE_SIZE),  # over lfs's limit: the largest it takes
    ],
)
def test_stripe_size_rounding_rule(size: int, current: int, expected: int) -> None:
    got = stripe_size_for(size, current)
    assert got == expected
    assert lfs_setstripe_errors(f"lfs setstripe -S {got} /d") == []


def test_lfs_stripe_size_rounds_up_to_64_kib() -> None:
    assert lfs_stripe_size(505_595) == 512 * KiB
    assert lfs_stripe_size(1) == 64 * KiB
    assert lfs_stripe_size(8 * GiB) == MAX_STRIPE_SIZE
    assert fits(3 * MiB // 2, 3 * MiB) and fits(E3SM_REQUEST, 768 * KiB) and not fits(E3SM_REQUEST, MiB)


def test_aggregators_are_a_multiple_of_the_stripes() -> None:
    assert aggregators_for(32, 512, 2.0) == 64  # 2 per OST at most
    assert aggregators_for(16, 1, 2.0) == 16  # one per OST
    assert aggregators_for(4, None, 2.0) == 4


# --- every log: every command valid, one layout per directory -----------------------------------


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_every_command_and_hint_is_valid_as_printed(path: Path) -> None:
    findings = printed(read_log(path))
    errors = [e for f in findings for e in finding_errors(f)]
    assert errors == []


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_one_layout_per_directory_and_file(path: Path) -> None:
    findings = printed(read_log(path))
    commands = striping_commands(findings)
    assert all(len(lines) == 1 for lines in commands.values()), commands
    # the striping hints and cb_nodes about one file agree across findings
    values: dict[tuple[str, str], set[str]] = defaultdict(set)
    for f in findings:
        if not f.subjects or f.subjects[0].kind != "file":
            continue
        for snippet in snippets(f, "hint"):
            for line in snippet.splitlines():
                key, _, value = line.partition(" ")
                if key in ("striping_factor", "striping_unit", "cb_nodes"):
                    values[(f.subjects[0].name, key)].add(value)
    assert all(len(v) == 1 for v in values.values()), dict(values)


@pytest.mark.slow
def test_a_pario_log_of_a_real_run_prints_valid_commands(known_run) -> None:
    p, _, _ = known_run
    assert [e for f in printed(p) for e in finding_errors(f)] == []


# --- the E3SM-IO log: one Lustre command -------------------------------------------------------


def test_e3sm_prints_one_lustre_layout() -> None:
    findings = printed(read_log(E3SM))
    fs = by_id(findings)
    command = "lfs setstripe -c 32 -S 1048576 /lustre/scratch/e3sm"
    assert striping_commands(findings) == {"/lustre/scratch/e3sm": {command}}
    assert snippets(fs["LUSTRE-STRIPE-COUNT"], "striping") == [command]
    assert "striping_factor 32\nstriping_unit 1048576" in snippets(fs["LUSTRE-STRIPE-COUNT"], "hint")
    # the same aggregators wherever they are advised: 2 per OST of the 32 (512 in use)
    assert "cb_nodes 64" in snippets(fs["LUSTRE-STRIPE-COUNT"], "hint")
    assert snippets(fs["MPIIO-AGGREGATORS-STRIPES"], "hint") == ["cb_nodes 64"]
    # 800,964-byte requests fit no stripe size lfs takes: keep 1 MiB, align the requests
    size = fs["LUSTRE-STRIPE-SIZE"]
    assert not snippets(size, "striping") and not snippets(size, "hint")
    ev = {m.name: m.value for m in size.evidence}
    assert ev["request_size"] == E3SM_REQUEST and ev["suggested_stripe_size"] == MiB
    (code,) = [r.text for r in size.recommendations if r.kind == "code"]
    assert "800,964 bytes" in code and "keep 1 MiB stripes" in code
    # IO-MISALIGNED judges the Lustre file by its stripe, not by the 4 KiB block
    mis = fs["IO-MISALIGNED"]
    assert {m.name: m.value for m in mis.evidence}["stripe_size"] == MiB
    assert "1 MiB stripe is the unit that matters" in mis.statement
    assert snippets(mis, "code") == ["off = ((off + 1048576 - 1) / 1048576) * 1048576;"]
    assert not snippets(mis, "striping")


def test_e3sm_advice_applied_gives_no_other_layout() -> None:
    """Striping the file as advised, pario advises no other layout for it."""
    p = read_log(E3SM)
    (line,) = striping_commands(printed(p))["/lustre/scratch/e3sm"]
    argv = shlex.split(line)
    count, size = int(argv[argv.index("-c") + 1]), int(argv[argv.index("-S") + 1])
    striping = dict(p.job.metadata["lustre_striping"])
    striping[E3SM_OUT_ID] = {"stripe_size": size, "stripe_count": count}
    job = dataclasses.replace(p.job, metadata={**p.job.metadata, "lustre_striping": striping})
    after = printed(dataclasses.replace(p, job=job))
    assert "LUSTRE-STRIPE-COUNT" not in by_id(after)
    assert striping_commands(after) == {}


def test_stripe_size_advice_applied_silences_the_rule() -> None:
    """1.5 MiB requests on 1 MiB stripes: the advised 1.5 MiB stripe is one the rule accepts."""
    writes = [
        {"id": 7, "rank": r, "name": "/lus/scratch/run/out.dat", "writes": 10, "bytes_written": 15 * MiB,
         "write_time": 2.0, "max_byte_written": 8 * 15 * MiB - 1, "file_alignment": MiB}
        for r in range(8)
    ]
    before = by_id(printed(profile(8, 20.0, io={"posix_write": [2.0] * 8}, posix=writes,
                                   striping={7: (MiB, 4)})))
    command = "lfs setstripe -c 4 -S 1572864 /lus/scratch/run"
    assert snippets(before["LUSTRE-STRIPE-SIZE"], "striping") == [command]
    assert snippets(before["LUSTRE-STRIPE-SIZE"], "hint") == ["striping_factor 4\nstriping_unit 1572864"]
    after = printed(profile(8, 20.0, io={"posix_write": [2.0] * 8}, posix=writes,
                            striping={7: (3 * MiB // 2, 4)}))
    assert "LUSTRE-STRIPE-SIZE" not in by_id(after)


# --- advice that fits the run ------------------------------------------------------------------


def test_rereading_byte_zero_is_a_reread_not_random_access() -> None:
    findings = printed(read_log(REREAD))
    fs = by_id(findings)
    assert "IO-RANDOM-ACCESS" not in fs
    again = fs["IO-REDUNDANT-READS"]
    ev = {m.name: m.value for m in again.evidence}
    assert ev["repeated_bytes"] == REREAD_READS - 1
    assert {m.name: m.value for m in again.subjects[0].metrics}["factor"] == REREAD_READS
    # a program without MPI-IO gets no MPI-IO advice, and no trial with a hints file
    text = " ".join(r.text + r.snippet for f in findings for r in f.recommendations)
    assert "MPI_File" not in text and "romio" not in text and "--hints" not in text
    io_bound = fs["TIME-IO-BOUND"]
    assert {r.kind for r in io_bound.recommendations} == {"investigate", "code"}
    assert "(IO-LATENCY-BOUND, IO-SMALL-READS, IO-REDUNDANT-READS)" in io_bound.recommendations[0].text
    assert "fewer ranks" not in io_bound.recommendations[1].text  # one rank


def test_posix_ior_gets_posix_advice_and_no_pointer_to_missing_findings() -> None:
    fs = by_id(printed(read_log(IOR_POSIX)))
    assert set(fs) == {"TIME-IO-BOUND"}
    recs = fs["TIME-IO-BOUND"].recommendations
    assert [r.kind for r in recs] == ["investigate", "investigate", "code"]
    assert "No other rule finds a cause" in recs[0].text and "other findings" not in recs[0].text
    assert "without MPI-IO" in recs[1].text and "stripe layout" in recs[1].text
    assert "MPI_File" not in recs[2].text and "aio_write" in recs[2].text


def _posix_shared(n: int, nbytes: int, fid: int = 9) -> dict:
    """One POSIX record of a file ``n`` ranks share (Darshan's reduced form), 1 MiB requests."""
    return {"id": fid, "rank": -1, "name": "/lus/scratch/run/field.dat", "nranks": n,
            "writes": nbytes // MiB, "bytes_written": nbytes, "max_byte_written": nbytes - 1,
            "seq_writes": nbytes // MiB - n, "access1_access": MiB, "write_time": 50.0 * n,
            "slowest_rank": 0, "slowest_rank_time": 50.0, "fastest_rank": 1, "fastest_rank_time": 50.0}


def test_posix_run_on_lustre_gets_the_files_one_layout() -> None:
    """TIME-IO-BOUND of a run without MPI-IO prints the layout LUSTRE-STRIPE-COUNT prints."""
    p = profile(16, 100.0, source="darshan", io={"posix_write": [50.0] * 16},
                posix=[_posix_shared(16, 64 * GiB)], striping={9: (MiB, 1)})
    fs = by_id(printed(p))
    command = "lfs setstripe -c 16 -S 1048576 /lus/scratch/run"
    assert snippets(fs["LUSTRE-STRIPE-COUNT"], "striping") == [command]
    assert snippets(fs["TIME-IO-BOUND"], "striping") == [command]
    assert not snippets(fs["TIME-IO-BOUND"], "tune") and not snippets(fs["TIME-IO-BOUND"], "autotune")


def _random_records(kind: str, nprocs: int) -> list[dict]:
    """Each rank: 1000 requests of 4 KiB in a shuffled order over its own 4 MiB (half go back)."""
    count, verb = 1000, "written" if kind == "write" else "read"
    return [{"id": 5, "rank": r, "name": "/scratch/run/data.bin", f"{kind}s": count,
             f"bytes_{verb}": count * 4 * KiB, f"seq_{kind}s": count // 2,
             f"max_byte_{verb}": nprocs * 4 * MiB - 1, f"{kind}_time": 5.0}
            for r in range(nprocs)]


@pytest.mark.parametrize("kind", ["read", "write"])
def test_rewriting_one_spot_is_not_random_access(kind: str) -> None:
    verb = "written" if kind == "write" else "read"
    recs = [{"id": 5, "rank": 0, "name": "/scratch/run/flag", f"{kind}s": 10_000, f"bytes_{verb}": 80_000,
             f"seq_{kind}s": 0, f"max_byte_{verb}": 7, f"{kind}_time": 5.0}]
    p = profile(1, 20.0, io={f"posix_{kind}": [5.0]}, posix=recs)
    assert "IO-RANDOM-ACCESS" not in by_id(printed(p))
    # the same counts over a file larger than one request are random access
    recs[0][f"max_byte_{verb}"] = 10 * MiB - 1
    assert "IO-RANDOM-ACCESS" in by_id(printed(profile(1, 20.0, io={f"posix_{kind}": [5.0]}, posix=recs)))


@pytest.mark.parametrize(
    ("nprocs", "mpiio", "call"),
    [(1, False, None), (4, False, None), (1, True, "MPI_File_{kind}("), (4, True, "MPI_File_{kind}_all(")],
)
@pytest.mark.parametrize("view", [False, True])
@pytest.mark.parametrize("kind", ["read", "write"])
def test_random_access_mpiio_advice_only_with_mpiio(kind: str, view: bool, nprocs: int, mpiio: bool,
                                                    call: str | None) -> None:
    """MPI-IO advice only where the file is accessed through MPI-IO, and ROMIO's data sieving only
    where a non-contiguous file view was set: with the default view each call is contiguous in the
    file, and data sieving never runs."""
    verb = "written" if kind == "write" else "read"
    m = [{"id": 5, "rank": r, "name": "/scratch/run/data.bin", f"indep_{kind}s": 1000,
          f"bytes_{verb}": 1000 * 4 * KiB, "views": int(view), "noncontig_view": int(view)}
         for r in range(nprocs)] if mpiio else []
    p = profile(nprocs, 20.0, io={f"posix_{kind}": [5.0] * nprocs}, posix=_random_records(kind, nprocs),
                mpiio=m)
    f = by_id(printed(p))["IO-RANDOM-ACCESS"]
    code = " ".join(snippets(f, "code"))
    if call is None:
        assert "MPI_File" not in code and not snippets(f, "hint")
        return
    assert call.format(kind=kind) in code
    if view:
        assert snippets(f, "hint") == [f"romio_ds_{kind} enable"]
    else:
        assert not snippets(f, "hint")
        assert (f"Not advised here: the hint romio_ds_{kind} enable (data sieving runs only for accesses "
                "that are not contiguous in the file, and /scratch/run/data.bin kept the default file view "
                "(no MPI_File_set_view)).") in f.notes
