"""Property-based check of the collective-write engine: batches of random cases
(tests/coll_cases.py: nested datatypes, interleaved and disjoint views, darray and subarray
decompositions, empty contributions, writes over existing data, split collectives, a second call
at the individual file pointer) run by tests/programs/coll_cases.c, one mpirun per batch.

References:
- the Python model of coll_cases.py (type maps checked against the MPI library's own MPI_Pack by
  test_model_type_maps_match_mpi);
- Open MPI's ROMIO (``--mca io romio321``, no pario) on the ROMIO-safe batch, which must equal the
  model (test_romio_matches_the_model); ROMIO 3.2.1 writes wrong bytes, crashes or hangs on some legal
  types (see coll_cases.romio_safe_memory and romio_safe_file), so the general batch, which has them,
  is checked against the model only.

Each algorithm x shuffle runs both batches under libpario with PARIO_COLL=ALGO:SHUFFLE; every file
must equal ROMIO's (ROMIO-safe cases) or the model's (the others) on every byte MPI defines, every
rank's count and file position too, and the log must say the engine served every call of every file
(engine_writes, no fallback) and count every rank's calls (coll_writes + split_writes).

The batches are drawn from a seeded random.Random through the strategies (reproducible); another
seed: PARIO_COLL_CASES_SEED=N. A failing engine run writes the smallest failing case's spec beside
the test's files and names it with the command that reproduces it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coll_cases as cc
from pario.log import read_log

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("PARIO_COLL_CASES_SEED", "7"))
# world size: (ROMIO-safe cases, general cases)
BATCHES = {4: (300, 200), 9: (120, 80)}
ALGOS = ("none", "comm", "write", "write-comm", "write-comm-2", "auto")
SHUFFLES = ("p2p", "rma-fence", "rma-lock")
TIMEOUT = 240


def _mpirun(world: int, io: str, extra: list[str] | None = None) -> list[str]:
    return ["mpirun", "--oversubscribe", "-np", str(world), "--mca", "io", io, *(extra or [])]


def _results(out: Path) -> dict[tuple[int, int], dict]:
    res: dict[tuple[int, int], dict] = {}
    for f in out.glob("results.*.jsonl"):
        for line in f.read_text().splitlines():
            j = json.loads(line)
            res[(j["case"], j["rank"])] = {k: v for k, v in j.items() if k != "world"}
    return res


class Batch:
    """The cases of one world size: ROMIO-safe ones, then general ones, and their specs."""

    def __init__(self, world: int, where: Path) -> None:
        n_safe, n_general = BATCHES[world]
        self.world = world
        self.safe = cc.draw_batch(SEED * 1000 + world, n_safe, world, romio_safe=True)
        self.general = cc.draw_batch(SEED * 1000 + 500 + world, n_general, world, first_id=n_safe)
        self.cases = self.safe + self.general
        self.expected = {c.id: cc.expected(c) for c in self.cases}
        self.safe_spec, self.all_spec = where / "safe.spec", where / "all.spec"
        cc.write_spec(self.safe, self.safe_spec)
        cc.write_spec(self.cases, self.all_spec)


def _romio_comparable(case: cc.Case, rank: int, line: dict | None) -> dict | None:
    """A JSON line without what ROMIO 3.2.1 gets wrong: the status of a split collective's _end
    after a _begin of count 0 is the previous split collective's (ROMIO does not update it)."""
    if line is None:
        return None
    calls = [dict(c, count=None) if case.ranks[rank].calls[i].count == 0 and
             case.ranks[rank].calls[i].kind.endswith("_begin") else c for i, c in enumerate(line["calls"])]
    return {**line, "calls": calls}


def _check_against_model(case: cc.Case, exp: cc.Expected, out: Path, res: dict,
                         romio: bool = False) -> str | None:
    path = out / f"c{case.id}.dat"
    if not path.exists():
        return "no file"
    bad = exp.mismatches(path.read_bytes())
    if bad:
        return bad
    for r, want in exp.results.items():
        got, want = res.get((case.id, r)), {"case": case.id, **want}
        if romio:
            got, want = _romio_comparable(case, r, got), _romio_comparable(case, r, want)
        if got != want:
            return f"rank {r} printed {got}, the model says {want}"
    return None


@pytest.fixture(scope="module")
def batches(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Batch]:
    return {w: Batch(w, tmp_path_factory.mktemp(f"cases{w}")) for w in BATCHES}


@pytest.fixture(scope="module")
def exe(compile_program) -> Path:
    return compile_program("coll_cases.c", extra=("-Wextra", "-Werror"))


@pytest.fixture(scope="module")
def romio(batches, exe, mpi_env, tmp_path_factory):
    """world -> (output directory, results) of the ROMIO-safe batch under ROMIO without pario."""
    out = {}
    for world, batch in batches.items():
        where = tmp_path_factory.mktemp(f"romio{world}")
        env = {k: v for k, v in mpi_env.items() if not k.startswith("PARIO")}
        env.pop("LD_PRELOAD", None)
        proc = subprocess.run([*_mpirun(world, "romio321"), str(exe), str(batch.safe_spec), str(where)],
                              env=env, capture_output=True, text=True, timeout=TIMEOUT)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out[world] = (where, _results(where))
    return out


def test_model_type_maps_match_mpi(exe, mpi_env, tmp_path):
    """The model's size, bounds and type map (order included) of 1500 random datatypes equal what
    the MPI library says (MPI_Type_get_extent/true_extent, MPI_Pack of a patterned buffer)."""
    types = cc.draw_types(SEED, 1500)
    spec = tmp_path / "types.spec"
    spec.write_text("".join(f"type {i} {t.expr}\n" for i, t in enumerate(types)))
    proc = subprocess.run(["mpirun", "-np", "1", str(exe), "--types", str(spec), str(tmp_path)], env=mpi_env,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(x) for x in (tmp_path / "types.jsonl").read_text().splitlines()]
    assert len(lines) == len(types)
    kinds = {t.expr.split()[0] for t in types}
    assert kinds >= {"contig", "vector", "hvector", "indexed", "hindexed", "iblock", "hiblock", "struct",
                     "subarray", "darray", "resized", "dup", "byte"}
    for j in lines:
        t = types[j["type"]]
        assert j["desc"] == t.describe(), t.expr
        assert j["packed"] == cc.pat(j["type"], 0, 0, t.off).tobytes().hex(), t.expr


def _assert_legal(case: cc.Case) -> None:
    """What MPI asks of the views for a defined result, and what the generator promises."""
    es = cc.ESIZE[case.ranks[0].etype]
    owner: dict[int, int] = {}
    for r, rs in enumerate(case.ranks):
        ft, mt = rs.filetype, rs.memtype
        assert ft.monotone() and ft.true_lb >= 0 and rs.disp >= 0, ft.expr
        assert ft.size % es == 0 and mt.size % es == 0 and mt.extent > 0, (ft.expr, mt.expr)
        assert ft.exact and mt.exact, (ft.expr, mt.expr)
        for start, nbytes in cc.call_ranges(rs):
            for off in cc.view_offsets(rs, start, nbytes).tolist():
                assert owner.setdefault(off, r) == r, f"byte {off} written by ranks {owner[off]} and {r}"
    # every rank makes the same collective calls
    assert len({tuple(c.kind for c in rs.calls) for rs in case.ranks}) == 1
    assert len(case.members) == len(set(case.members)) == len(case.ranks)


@settings(derandomize=True, max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_drawn_cases_are_legal(data):
    """Hypothesis drives the same generator: legal views, no file byte from two ranks."""
    world = data.draw(st.sampled_from((1, 4, 9)))
    case = data.draw(cc.case_strategy(world, romio_safe=data.draw(st.booleans())))
    _assert_legal(case)


def test_batches_cover_the_space(batches):
    """The drawn batches hold what the test is for (else a generator change made it weaker)."""
    for batch in batches.values():
        cases = batch.cases
        ranks = [rs for c in cases for rs in c.ranks]
        assert {c.layout for c in cases} == {"interleave", "interleave-type", "blocks", "darray", "subarray"}
        assert {c.kind for rs in ranks for c in rs.calls} == set(cc.CALL_KINDS)
        assert any(len(c.members) < batch.world for c in cases)
        assert any(c.members != sorted(c.members) for c in cases)
        assert sum(c.prefill > 0 for c in cases) > len(cases) // 4
        assert any(any(call.count == 0 for rs in c.ranks for call in rs.calls) and
                   any(call.count > 0 for rs in c.ranks for call in rs.calls) for c in cases)
        assert any(len(rs.calls) == 2 and rs.calls[1].offset is None for rs in ranks)
        assert any(rs.etype == "int" for rs in ranks)
        assert any(c.wronly for c in cases) and any("cb_buffer_size" in c.hints for c in cases)
        assert any(rs.memtype.true_lb < 0 for c in batch.general for rs in c.ranks)
        assert any(rs.filetype.empty_block for c in batch.general for rs in c.ranks)
        depth = max(rs.filetype.expr.count(" ") for rs in ranks)
        assert depth > 15
        for c in cases:
            _assert_legal(c)
        for c in batch.safe:
            assert all(cc.romio_safe_memory(rs.memtype) for rs in c.ranks)


def test_romio_matches_the_model(batches, romio):
    """Harness check: ROMIO's files, counts and file positions equal the model's on every case of
    the ROMIO-safe batches (but the count of a split collective of count 0: _romio_comparable)."""
    for world, batch in batches.items():
        out, res = romio[world]
        bad = {c.id: why for c in batch.safe
               if (why := _check_against_model(c, batch.expected[c.id], out, res, romio=True))}
        assert not bad, f"world {world}: {bad}"


COMBOS = [(w, a, s) for w in BATCHES for a in ALGOS for s in SHUFFLES]


@pytest.mark.parametrize("world,algo,shuffle", COMBOS, ids=[f"np{w}-{a}:{s}" for w, a, s in COMBOS])
def test_engine_writes_what_romio_and_the_model_write(batches, romio, exe, libpario, mpi_env, tmp_path,
                                                      world, algo, shuffle):
    batch = batches[world]
    ref_dir, ref_res = romio[world]
    log = tmp_path / "run.pario"
    # the engine over either I/O component (it still opens, sets views and closes); under romio321
    # the ROMIO-safe cases only, as ROMIO's MPI_File_set_view crashes on some general filetypes
    romio_under = (ALGOS.index(algo) + SHUFFLES.index(shuffle)) % 2 == 0
    cases = batch.safe if romio_under else batch.cases
    preload = ["-x", f"LD_PRELOAD={libpario}", "-x", f"PARIO_LOG={log}", "-x", f"PARIO_COLL={algo}:{shuffle}"]
    cmd = [*_mpirun(world, "romio321" if romio_under else "ompio", preload),
           str(exe), str(batch.safe_spec if romio_under else batch.all_spec), str(tmp_path)]
    proc = subprocess.run(cmd, env=mpi_env, capture_output=True, text=True, timeout=TIMEOUT)
    where = ("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
             f"OMPI_MCA_btl_vader_single_copy_mechanism=none {' '.join(cmd)}")
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-3000:]}\n{where}"
    res = _results(tmp_path)

    bad: dict[int, str] = {}
    safe_ids = {c.id for c in batch.safe}
    for c in cases:
        exp = batch.expected[c.id]
        why = _check_against_model(c, exp, tmp_path, res)
        if why is None and c.id in safe_ids:  # and ROMIO's bytes, where MPI defines them
            got = np.frombuffer((tmp_path / f"c{c.id}.dat").read_bytes(), dtype=np.uint8)
            ref = np.frombuffer((ref_dir / f"c{c.id}.dat").read_bytes(), dtype=np.uint8)
            if len(got) != len(ref) or np.any((got != ref) & exp.defined):
                why = "differs from ROMIO's file"
            elif any(_romio_comparable(c, r, res.get((c.id, r)))
                     != _romio_comparable(c, r, ref_res.get((c.id, r))) for r in range(len(c.ranks))):
                why = "counts or positions differ from ROMIO's"
        if why:
            bad[c.id] = why

    records = read_log(log).layer("mpiio")
    served: dict[int, str] = {}
    for c in cases:
        rows = records[records["name"] == str(tmp_path / f"c{c.id}.dat")]
        calls = len(c.ranks[0].calls)
        if len(rows) == 0:
            served[c.id] = "no MPI-IO record of the file"
            continue
        writes, fallbacks = int(rows["engine_writes"].max()), int(rows["engine_fallbacks"].sum())
        counted = int(rows["coll_writes"].sum() + rows["split_writes"].sum())
        if writes != calls or fallbacks:
            served[c.id] = f"engine_writes {writes} for {calls} calls, engine_fallbacks {fallbacks}"
        elif counted != calls * len(c.ranks):
            served[c.id] = f"coll_writes + split_writes {counted} for {calls} calls of {len(c.ranks)} ranks"

    if bad or served:
        failing = sorted(set(bad) | set(served), key=lambda i: batch.cases[i].weight())
        smallest = batch.cases[failing[0]]
        spec = tmp_path / f"coll_fail_{world}_{algo}_{shuffle}.spec"
        spec.write_text(smallest.spec())
        pytest.fail(f"{len(bad)} cases with wrong results, {len(served)} not served by the engine: "
                    f"{ {i: bad.get(i) or served.get(i) for i in failing[:8]} }\n"
                    f"smallest failing case ({spec}):\n{smallest.spec()}\n{where}")
