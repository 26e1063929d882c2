"""docs/tune.md's example runs as written: the command of its first example, typed into a shell
where pario is installed, tunes the kernel, prints the output the page shows (the same lines
in the same order), and the job-script lines it prints run as they are."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from text_helpers import joined

pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parent.parent / "docs" / "tune.md"


def example() -> tuple[str, list[str]]:
    """The first ``$ pario tune`` block of the page: the command (continuation lines joined, as
    a shell reads them) and the output lines shown below it."""
    blocks = re.findall(r"^```console\n(.*?)^```$", DOC.read_text(), re.S | re.M)
    block = next(b for b in blocks if b.startswith("$ pario tune"))
    lines = block.splitlines()
    end = next(i for i, line in enumerate(lines) if not line.endswith("\\"))
    command = " ".join(line.rstrip("\\").strip() for line in lines[:end + 1]).removeprefix("$ ")
    return command, [line for line in lines[end + 1:] if line != "..."]


def labels(lines: list[str]) -> list[str]:
    """What the output says, without its numbers and paths: the text before the first colon of
    each line that starts a statement (indented lines continue one, or are commands); notes
    aside (what an ablation left out depends on the run's measurements)."""
    return [line.split(":", 1)[0] for line in lines if not line.startswith((" ", "note: "))]


def clean_env(mpi_env: dict[str, str]) -> dict[str, str]:
    """A shell where pario is installed: its bin directory first on PATH, none of the variables the
    Makefile sets (but, as root, the two Open MPI needs to run at all, as the page says)."""
    made = ("PARIO_", "OMPI_")
    env = {k: v for k, v in mpi_env.items() if not k.startswith(made)}
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_space_file_example_applies_as_written(tmp_path: Path, mpi_env: dict[str, str]) -> None:
    """The page's TOML space file, on the block kernel: every dimension it keeps or adds is in the
    space --show-space prints, with the values it gives, and the one it drops is not."""
    (toml,) = re.findall(r"```toml\n(.*?)```", DOC.read_text(), re.S)
    spec = tmp_path / "space.toml"
    spec.write_text(toml)
    proc = subprocess.run(["bash", "-c", f"pario tune --show-space --space {spec} -- mpirun --oversubscribe "
                           "-np 4 $(pario path pario-kernel-block)"], cwd=tmp_path, env=clean_env(mpi_env),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    dims = {line.split(" [")[0]: line.split(": ", 1)[1] for line in proc.stdout.splitlines()
            if " [" in line and not line.startswith(" ")}
    assert dims == {
        "mca.io": dims["mca.io"], "romio_cb_write": dims["romio_cb_write"],
        "cb_nodes": "default, 1, 2, 4",
        "romio_no_indep_rw": "default, true, false",
        "mca.io_ompio_grouping_option": "default, 1, 2, 3",
        "hdf5.transfer": "default, collective",
        "nc_var_align_size": "default, 64K, 8M",
    }, proc.stdout


def test_the_tune_example_runs_as_written(tmp_path: Path, mpi_env: dict[str, str]) -> None:
    command, shown = example()
    assert command.startswith("pario tune --budget 6 --seed 1 --study s1 -- mpirun --oversubscribe -np 4 ")
    env = clean_env(mpi_env)
    proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout.splitlines()
    assert out[0].startswith("study s1: 6 trial(s) in the budget, 0 failed"), proc.stdout
    # the page shows the statements the command prints, in their order (values aside), for a
    # best better than the default; on a loaded machine the samples may overlap, and then the
    # output says so where the page has the speed-up, and offers no hints file
    engine = "(the best uses pario's collective-write engine"
    if "better than the default" in " ".join(" ".join(out).split()):
        if any(line.startswith(engine) for line in out):
            # the winner runs under pario's engine: the page's last statement (what the MPI
            # library reads itself) gives way to one that says why there is none
            cut = labels(shown).index("or, without pario in the job (what the MPI library itself reads)")
            assert labels(out)[:cut] == labels(shown)[:cut] and labels(out)[cut].startswith(engine), out
        else:
            assert labels(shown) == labels(out), (shown, out)
    else:
        verdict = labels(shown).index("speed-up over the default") + 1
        assert labels(out)[:verdict] == labels(shown)[:verdict] and "hints file" not in labels(out), out
        assert "not distinguishable from the default" in " ".join(" ".join(out).split()), out
        return
    # ... and every printed line fits 80 columns, but for one word that cannot be broken (a path,
    # an export of one)
    assert all(len(line) <= 80 or len(line.removesuffix(" \\").removeprefix("  export ").split()) == 1
               for line in out), out
    # the job-script lines run as they are printed
    script = joined(out[out.index("use it in a job script:") + 1:])
    script = script[:next(i for i, line in enumerate(script) if not line.startswith("  "))]
    run = subprocess.run(["bash", "-ec", "\n".join(script)], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "pario: log written to " in run.stderr and "4 ranks" in run.stderr, run.stderr
