"""Every shell example of README.md and docs/*.md runs as written, as a user reading the page would
run it: the page's ``sh`` and ``console`` blocks in page order, in one shell session (what one block
exports, the next has) in an empty temporary directory, in an environment without the variables the
Makefile sets (``OMPI_*``, ``PARIO_*``): where Open MPI needs one (as root; more ranks than cores),
the page itself exports it, in a block this test runs like the others.

The comment line just before a block says what the block needs:

* ``<!-- example: given ./app -->``: the example runs a user's program or files; the test provides
  them (``GIVEN`` below: a pario kernel stands in for a program) in the directory first;
* ``<!-- example: not run: REASON -->``: it cannot run here; every such block is in ``NOT_RUN``, so
  none is skipped silently;
* ``<!-- example: run by tests/test_X.py -->``: another test runs it as written (and checks more).

A block that starts with ``#!`` and has ``#SBATCH`` lines is a batch script: it is written to a file
and submitted with ``sbatch --wait`` to a one-node Slurm cluster of the test's own
(tests/slurm_cluster.py).  A ``console`` block shows commands (``$ ``) and what they print: the
printed statements must come out in that order, numbers aside.

Every other block is tagged with what it holds (``text`` for synopses, file contents, diagrams and
sample output; ``toml``, ``json``, ``python``), and a ``text`` block must not hide a complete pario
command.  docs/performance.md is the record of measurements: its blocks are the benchmark commands
that produced them (minutes to hours each); their options are checked against the benchmarks'
own ``--help``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import PROGRAMS, ROOT
from test_docs_commands import command_lines

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RECORDS = "performance.md"  # the page of measurements (see the module's docstring)
SHELL = ("sh", "console")
FENCE = re.compile(r"^```(\S*)\n(.*?)^```$", re.S | re.M)
MARKER = re.compile(r"<!-- example: ([^\n]*?) -->\n\Z")
TIMEOUT = 300  # seconds for one block

#: the blocks that do not run here, (page, first line) -> why; the page says the same beside each
NOT_RUN = {
    ("README.md", "make demo"):
        "`make test` is the run this test is part of; `make demo` builds a virtual environment of its "
        "own and installs packages",
    ("performance.md", "python3 -m venv /tmp/drishti-venv && /tmp/drishti-venv/bin/pip install drishti-io"):
        "it installs Drishti from PyPI and runs 24 diagnoses; tests/test_bench_scripts.py runs the "
        "script's --help",
}

#: what a page's example may be given, and how the test provides it in the example's directory
GIVEN = {
    "./app": "a program: pario-kernel-block (1 MiB per rank to ./pario-block.dat)",
    "./prepare": "a program: pario-kernel-block",
    "./solver": "a program: pario-kernel-block",
    "./app_built_with_mpich": "a program built with MPICH's mpicc: tests/programs/mpi_comm.c",
    "darshan-logs/": "a site's archive: the Darshan logs of tests/data/darshan-logs in 2026/11/27/",
    "logs.txt": "a manifest: three logs of darshan-logs/ (given before it), one per line",
    "tests/data/darshan-logs": "the repository's folder",
    "the source tree": "the repository's files (links to them)",
}


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    text: str
    marker: str

    @property
    def where(self) -> str:
        return f"{self.page.name}:{self.line}"

    @property
    def first(self) -> str:
        """The block's first line without its comment."""
        return self.text.split("\n", 1)[0].split("#")[0].strip()

    @property
    def given(self) -> list[str]:
        if not self.marker.startswith("given "):
            return []
        return [g.strip() for g in self.marker.removeprefix("given ").split(",")]


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    out = []
    for m in FENCE.finditer(text):
        before = MARKER.search(text, 0, m.start())
        out.append(Block(page, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2),
                         before.group(1) if before else ""))
    return out


ALL = [b for page in PAGES for b in blocks(page)]


def user_env() -> dict[str, str]:
    """A shell where pario is installed (its bin directory first on PATH), without what the Makefile
    or a test session sets, and the output width its own default (80 columns off a terminal)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OMPI_", "PARIO_", "SLURM_", "PYTEST_")) and k != "COLUMNS"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def provide(name: str, where: Path, env: dict[str, str]) -> None:
    """Put the given ``name`` (a key of GIVEN) into the directory ``where``."""
    if name.startswith("./app_built_with"):
        source = PROGRAMS / "mpi_comm.c"
        subprocess.run(["mpicc.mpich", "-std=c11", "-O1", "-o", str(where / name), str(source)], check=True,
                       capture_output=True, timeout=120)
    elif name.startswith("./"):
        kernel = subprocess.run(["pario", "path", "pario-kernel-block"], env=env, capture_output=True,
                                text=True, check=True).stdout.strip()
        (where / name).symlink_to(kernel)
    elif name == "darshan-logs/":
        day = where / "darshan-logs" / "2026" / "11" / "27"
        day.mkdir(parents=True)
        for log in sorted((ROOT / "tests" / "data" / "darshan-logs").glob("*.darshan")):
            shutil.copy(log, day)
    elif name == "logs.txt":
        logs = sorted(where.glob("darshan-logs/*/*/*/*.darshan"))[:3]
        assert logs, "logs.txt lists logs of darshan-logs/, given before it"
        (where / name).write_text("".join(f"{log.relative_to(where)}\n" for log in logs))
    elif name == "tests/data/darshan-logs":
        (where / "tests" / "data").mkdir(parents=True)
        (where / name).symlink_to(ROOT / name)
    elif name == "the source tree":
        for entry in ROOT.iterdir():
            if entry.name not in {".git", ".venv", "build"} and not entry.name.startswith("build-"):
                (where / entry.name).symlink_to(entry)
    else:
        raise AssertionError(f"nothing is given as {name!r}: GIVEN lists {sorted(GIVEN)}")


def commands_and_output(block: Block) -> tuple[str, list[str]]:
    """The script a block runs and, for a console block, the lines it shows printed."""
    if block.lang != "console":
        return block.text, []
    script, shown, continued = [], [], False
    for line in block.text.splitlines():
        if line.startswith("$ ") or continued:
            script.append(line.removeprefix("$ "))
            continued = line.endswith("\\")
        elif line != "...":
            shown.append(line)
    return "\n".join(script), shown


def statements(lines: list[str]) -> list[str]:
    """Printed lines as statements: an indented line continues the one above (wrapped to the width);
    blanks collapsed and every number a ``#``, so that what is compared is what the output says."""
    out: list[str] = []
    for line in lines:
        if line.startswith(" ") and out:
            out[-1] += " " + line.strip()
        elif line.strip():
            out.append(line.strip())
    return [re.sub(r"\d+(\.\d+)?", "#", " ".join(s.split())) for s in out]


def in_order(shown: list[str], printed: list[str]) -> bool:
    it = iter(printed)
    return all(any(s == p for p in it) for s in shown)


def run_block(block: Block, cwd: Path, env: dict[str, str], slurm: dict[str, str] | None) -> dict[str, str]:
    """Run one block in the session; return the environment it leaves for the next (a batch
    script runs in Slurm's job, and leaves the shell as it was)."""
    script, shown = commands_and_output(block)
    state = cwd / ".example-env"
    if "#SBATCH" in script:
        assert script.startswith("#!") and slurm is not None, block.where
        job = cwd / f"job{block.line}.sh"
        job.write_text(script)
        script = f"sbatch --wait -o {job.stem}.out {job.name}"
        proc = subprocess.run(["bash", "-c", script], cwd=cwd, env={**env, **slurm}, capture_output=True,
                              text=True, timeout=TIMEOUT)
        after = env
    else:
        proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", f"{script}\nenv -0 > {state}"], cwd=cwd,
                              env=env, capture_output=True, text=True, timeout=TIMEOUT)
        after = dict(item.split("=", 1) for item in state.read_text().split("\0") if "=" in item) \
            if state.exists() else env
    jobs = "".join(p.read_text() for p in cwd.glob("job*.out"))
    said = f"{proc.stdout}\n{proc.stderr}\n{jobs}"
    assert proc.returncode == 0, f"{block.where} exits {proc.returncode}:\n{said}"
    printed = statements(proc.stdout.splitlines()) + statements(proc.stderr.splitlines())
    assert in_order(statements(shown), printed), f"{block.where} shows\n{shown}\nbut printed\n{printed}"
    state.unlink(missing_ok=True)
    return {k: v for k, v in after.items() if k not in {"_", "SHLVL", "PWD", "OLDPWD"}}


def runnable(page: Path) -> list[Block]:
    """The page's shell examples that this test runs, in page order."""
    return [b for b in ALL if b.page == page and b.lang in SHELL
            and not b.marker.startswith(("not run:", "run by"))]


def _page_param(page: Path) -> object:
    """A page whose examples submit Slurm jobs is a service test (it starts a Slurm of its own)."""
    slurm = any("#SBATCH" in b.text for b in runnable(page))
    return pytest.param(page, marks=pytest.mark.service) if slurm else page


@pytest.mark.parametrize("page", [_page_param(p) for p in PAGES if runnable(p)], ids=lambda p: p.name)
@pytest.mark.slow
def test_the_page_examples_run_as_written(page: Path, tmp_path: Path) -> None:
    env = user_env()
    work = tmp_path / "work"
    work.mkdir()
    todo = runnable(page)
    for block in todo:
        for name in block.given:
            provide(name, work, env)
    if any("#SBATCH" in b.text for b in todo):
        from slurm_cluster import local_slurm

        # a node of 8 CPUs (what Slurm is told; the machine may have fewer) takes the page's jobs
        with local_slurm(tmp_path / "slurm", cpus=8) as cluster:
            slurm = {k: v for k, v in cluster.env.items() if k.startswith("SLURM_")}
            for block in todo:
                env = run_block(block, work, env, slurm)
    else:
        for block in todo:
            env = run_block(block, work, env, None)


def test_every_block_says_what_it_is() -> None:
    """A block is a shell example (``sh``, ``console``) or tagged with what else it holds; the only
    untagged ones are the measurement commands of docs/performance.md."""
    bare = [b.where for b in ALL if not b.lang and b.page.name != RECORDS]
    assert bare == []
    assert {b.lang for b in ALL} <= {"", *SHELL, "text", "toml", "json", "python"}


def test_text_blocks_hide_no_command() -> None:
    """A ``text`` block with a pario command that runs as it stands (no synopsis line beside it)
    should be an example that runs."""
    def synopsis(line: str) -> bool:  # options in brackets, alternatives, placeholders (<x>, LOG)
        return any(c in line for c in "[|<") or "..." in line or re.search(r"\b[A-Z]{3,}\b", line) is not None

    hidden = [b.where for b in ALL if b.lang == "text" and command_lines(f"```\n{b.text}```")
              and not any(synopsis(line) for line in b.text.splitlines())]
    assert hidden == []


def test_the_examples_not_run_are_listed() -> None:
    marked = {(b.page.name, b.first): b.marker.removeprefix("not run:").strip() for b in ALL
              if b.marker.startswith("not run:")}
    assert marked == NOT_RUN  # the same blocks, for the same reasons
    assert all(b.lang in SHELL for b in ALL if b.marker), "markers stand before shell examples"


def test_the_examples_run_elsewhere_are_run_there() -> None:
    elsewhere = [b for b in ALL if b.marker.startswith("run by ")]
    assert elsewhere, "docs/tune.md's example is run by tests/test_docs_tune.py"
    for b in elsewhere:
        test = ROOT / b.marker.removeprefix("run by ")
        assert test.is_file() and f'"{b.page.name}"' in test.read_text(), b.where


def test_what_the_pages_are_given_is_known() -> None:
    named = {g for b in ALL for g in b.given}
    assert named <= set(GIVEN), named - set(GIVEN)


@pytest.mark.slow
def test_the_measurement_commands_take_their_options() -> None:
    """docs/performance.md's benchmark commands: each bench/ script exists and takes every option
    the page gives it."""
    page = ROOT / "docs" / RECORDS
    checked = 0
    for b in blocks(page):
        joined_text = re.sub(r"\\\n\s*", " ", b.text)
        for line in joined_text.splitlines():
            m = re.search(r"(bench/\w+\.py)(.*)", line.split("#")[0])
            if not m:
                continue
            proc = subprocess.run([sys.executable, str(ROOT / m.group(1)), "--help"], capture_output=True,
                                  text=True, timeout=60, env=user_env())
            assert proc.returncode == 0, proc.stderr
            used = set(re.findall(r"(?<!\S)(--[\w-]+)", m.group(2)))
            assert used <= set(re.findall(r"--[\w-]+", proc.stdout)), (line, used)
            checked += 1
    assert checked >= 5
