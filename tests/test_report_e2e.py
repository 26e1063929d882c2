"""`pario report` on real runs under the profiler (needs mpicc, mpirun and the installed runtime).

The programs (tests/programs/report_*.c) state exactly what I/O they do, so
bytes, request counts and histograms are asserted exactly; the verdicts
(I/O-bound, compute-bound) and the 1/P load balance follow from their design.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from pario import cli
from pario.diagnosis import analyze
from pario.log import read_log

NP = 4
REQ = 4096

@pytest.fixture(scope="module")
def runtime(pario_cmd: list[str], mpi_env: dict[str, str]) -> list[str]:
    """The `pario` command, once `pario run` is known to find its runtime."""
    probe = subprocess.run([*pario_cmd, "path", "libpario"], capture_output=True, text=True, env=mpi_env,
                           timeout=60)
    assert probe.returncode == 0, f"the pario runtime is not installed: {probe.stderr.strip()}"
    return pario_cmd


def run_under(runtime: list[str], env: dict[str, str], log: Path, np: int, program: Path, *args: str) -> Path:
    proc = subprocess.run(
        [*runtime, "run", "--log", str(log), "--", "mpirun", "--oversubscribe", "-np", str(np), str(program),
         *args],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert log.exists()
    return log


def report_json(capsys: pytest.CaptureFixture[str], tmp_path: Path, *logs: Path,
                extra: tuple[str, ...] = ()) -> tuple[dict, str]:
    out_json = tmp_path / "report.json"
    code = cli.main(["report", *map(str, logs), "--json", str(out_json), *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out_json.read_text()), out


@pytest.fixture(scope="module")
def io_bound_log(tmp_path_factory: pytest.TempPathFactory, runtime: list[str], mpi_env: dict[str, str],
                 compile_program: Callable[..., Path]) -> Path:
    out = tmp_path_factory.mktemp("io-bound")
    return run_under(runtime, mpi_env, out / "io.pario", NP, compile_program("report_io_bound.c"), str(out),
                     "1000000")


@pytest.mark.slow
def test_io_bound_run_is_called_io_bound(io_bound_log: Path, capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path) -> None:
    data, text = report_json(capsys, tmp_path, io_bound_log)
    run = data["runs"][0]
    assert run["time_shares"]["bound"] == "I/O", run["time_shares"]
    assert "This run is I/O-bound" in text
    overall = run["io"]["overall"]
    # every rank: 500000 pwrites and 500000 preads of 4096 bytes
    assert overall["write"]["bytes"]["value"] == NP * 500_000 * REQ
    assert overall["read"]["bytes"]["value"] == NP * 500_000 * REQ
    assert overall["write"]["ops"]["value"] == NP * 500_000
    assert overall["read"]["mean_request"]["value"] == REQ
    posix = next(lay for lay in run["io"]["layers"] if lay["layer"] == "posix")
    bucket = run["io"]["size_buckets"].index("1K_10K")
    assert posix["histogram_write"][bucket] == NP * 500_000
    assert sum(posix["histogram_read"]) == NP * 500_000
    assert posix["files"] == NP


@pytest.mark.slow
def test_pop_decompositions_agree_on_a_real_run(io_bound_log: Path) -> None:
    pop = analyze(read_log(io_bound_log)).pop
    pe = pop.parallel_efficiency.value
    assert pe is not None and 0 < pe < 1
    assert pop.load_balance.value * pop.communication_efficiency.value == pytest.approx(pe)
    product = pop.io_efficiency.value * pop.load_balance_io.value * pop.communication_efficiency_io.value
    assert product == pytest.approx(pe)
    losses = pop.loss_io.value + pop.loss_imbalance.value + pop.loss_communication.value
    assert losses == pytest.approx(1 - pe)
    assert pop.loss_io.value > 0.3


@pytest.mark.slow
def test_only_rank0_writes_gives_io_balance_one_over_p(tmp_path: Path, runtime: list[str],
                                                       mpi_env: dict[str, str],
                                                       compile_program: Callable[..., Path],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    log = run_under(runtime, mpi_env, tmp_path / "r0.pario", NP, compile_program("report_rank0_writes.c"),
                    str(tmp_path), "16")
    data, _ = report_json(capsys, tmp_path, log)
    overall = data["runs"][0]["io"]["overall"]
    assert overall["write"]["load_balance"]["value"] == pytest.approx(1 / NP, abs=0.01)
    assert overall["total"]["load_balance"]["value"] == pytest.approx(1 / NP, abs=0.02)
    assert overall["write"]["bytes"]["value"] == 16 << 20
    assert overall["write"]["ops"]["value"] == 16
    posix = next(lay for lay in data["runs"][0]["io"]["layers"] if lay["layer"] == "posix")
    # Darshan's buckets (and pario's) are inclusive at the top: 1 MiB counts as 100K-1M
    assert posix["histogram_write"][data["runs"][0]["io"]["size_buckets"].index("100K_1M")] == 16
    assert posix["write"]["load_balance"]["value"] == pytest.approx(1 / NP, abs=0.01)
    ranks = data["runs"][0]["ranks"]
    assert ranks["write"][1:] == [0.0] * (NP - 1) and ranks["write"][0] > 0
    assert ranks["bytes_written"] == [16 << 20, 0, 0, 0]


@pytest.mark.slow
def test_compute_bound_run_is_called_compute_bound(tmp_path: Path, runtime: list[str],
                                                   mpi_env: dict[str, str],
                                                   compile_program: Callable[..., Path],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    log = run_under(runtime, mpi_env, tmp_path / "cpu.pario", 2, compile_program("report_compute_bound.c"),
                    str(tmp_path), "1.5")
    data, text = report_json(capsys, tmp_path, log)
    run = data["runs"][0]
    assert run["time_shares"]["bound"] == "compute", run["time_shares"]
    assert run["io"]["overall"]["write"]["bytes"]["value"] == 2 * 64
    assert run["memory"]["peak_per_process"]["value"] > 0
    assert run["mpi"]["available"] is True


@pytest.mark.slow
def test_scaling_table_from_real_runs(tmp_path: Path, runtime: list[str], mpi_env: dict[str, str],
                                      compile_program: Callable[..., Path],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    program = compile_program("report_io_bound.c")
    strong = [run_under(runtime, mpi_env, tmp_path / f"strong{n}.pario", n, program, str(tmp_path), "200000",
                        "total") for n in (1, 2, 4)]
    data, text = report_json(capsys, tmp_path, *strong, extra=("--html", str(tmp_path / "s.html")))
    scaling = data["scaling"]
    assert scaling["mode"] == "strong" and "inferred" in scaling["mode_reason"]
    assert [r["nprocs"] for r in scaling["rows"]] == [1, 2, 4]
    for row in scaling["rows"]:
        assert row["io_bytes"]["value"] == 200_000 * REQ
        assert row["speedup"]["value"] > 0
        assert row["computation_scalability"]["value"] is not None
        assert row["io_bandwidth"]["value"] > 0
    assert "Scaling: strong" in text
    assert "Speedup (strong scaling)" in (tmp_path / "s.html").read_text()

    weak = [run_under(runtime, mpi_env, tmp_path / f"weak{n}.pario", n, program, str(tmp_path), "50000")
            for n in (1, 2)]
    data, _ = report_json(capsys, tmp_path, *weak)
    assert data["scaling"]["mode"] == "weak"
    assert [r["io_bytes"]["value"] for r in data["scaling"]["rows"]] == [50_000 * REQ, 2 * 50_000 * REQ]
