"""Creating or resuming a study and running it: what ``pario tune`` does (the CLI calls this)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from pario.errors import ParioError
from pario.tune.choices import STRATEGIES
from pario.tune.results import Summary, summarise
from pario.tune.space import Space, apply_space_file, build_space, detect
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


def make_space(settings: Settings, space_file: Path | None, directory: Path | None = None,
               engine: bool = True) -> Space:
    det = detect(settings.command, directory or settings.workdir)
    if not engine:
        from dataclasses import replace

        det = replace(det, engine=False)
    space = build_space(det, settings.objective)
    return apply_space_file(space, space_file) if space_file else space


def default_study_name(command: list[str], objective: str) -> str:
    from pario.launch import _guess_program

    program = re.sub(r"[^A-Za-z0-9_.-]", "_", _guess_program(command)) or "job"
    return f"{program}-{objective}-{time.strftime('%Y%m%d-%H%M%S')}"


def proposer_for(settings: Settings) -> Callable:
    if settings.strategy == "grid":
        return grid_proposer(settings.seed)
    if settings.strategy == "pract":
        from pario.tune.pract import pract_proposer

        return pract_proposer(settings.seed)
    return sampler_proposer


def tune(settings: Settings, space: Space, study_name: str, storage_url: str | None,
         progress: Callable[[Progress], None] | None = None) -> tuple[Study, Summary]:
    """Create or resume a study, run it to its budget, and summarise it."""
    if settings.strategy not in STRATEGIES:
        raise ParioError(f"unknown strategy {settings.strategy!r}: one of {', '.join(STRATEGIES)}")
    if settings.strategy == "grid":
        from pario.tune.space import enumerate_configs

        enumerate_configs(space)  # a space too large for a grid is refused before anything runs
    storage = open_storage(storage_url)
    study = open_study(storage, study_name, settings, space)
    runner = Runner(study.s, study.space, study.dir)
    try:
        study.run(proposer_for(study.s), runner, progress)
    finally:
        runner.restore()
    return study, summarise(study.study)
