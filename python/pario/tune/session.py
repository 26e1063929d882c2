"""Creating or resuming a study and running it: what ``pario tune`` does (the CLI calls this)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from pario.errors import ParioError
from pario.tune.choices import STRATEGIES
from pario.tune.results import Summary, summarise
from pario.tune.space import Space, apply_space_file, build_space, detect, enumerate_configs
from pario.tune.storage import open_storage
from pario.tune.study import (
    Progress,
    Runner,
    Settings,
    Study,
    grid_proposer,
    open_study,
    sampler_proposer,
)


def make_space(settings: Settings, space_file: Path | None) -> Space:
    space = build_space(detect(settings.command, settings.workdir), settings.objective)
    return apply_space_file(space, space_file) if space_file else space


def default_study_name(command: list[str], objective: str) -> str:
    from pario.launch.run import _guess_program

    program = re.sub(r"[^A-Za-z0-9_.-]", "_", _guess_program(command)) or "job"
    return f"{program}-{objective}-{time.strftime('%Y%m%d-%H%M%S')}"


def proposer_for(settings: Settings) -> Callable:
    if settings.strategy == "grid":
        return grid_proposer(settings.seed)
    if settings.strategy == "pract":
        from pario.tune.pract import pract_proposer

        return pract_proposer(settings.seed)
    return sampler_proposer


def start(settings: Settings, space: Space, study_name: str, storage_url: str | None) -> tuple[Study, Runner]:
    """Create or resume the study and its runner; every error here comes before any trial."""
    if settings.strategy not in STRATEGIES:
        raise ParioError(f"unknown strategy {settings.strategy!r}: one of {', '.join(STRATEGIES)}")
    if settings.strategy == "grid":
        enumerate_configs(space)  # a space too large for a grid is refused before anything runs
    study = open_study(open_storage(storage_url), study_name, settings, space)
    return study, Runner(study.settings, study.space, study.dir)


def run(study: Study, runner: Runner, progress: Callable[[Progress], None] | None = None) -> Summary:
    """Run the study to its budget (the output directory's striping given back after), and summarise it."""
    try:
        study.run(proposer_for(study.settings), runner, progress)
    finally:
        runner.restore()
    return summarise(study.study)
