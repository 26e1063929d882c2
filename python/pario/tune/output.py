"""What ``pario tune`` prints and writes at the end: the verdict, the files and the lines to use them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pario.textfit import wrap_words
from pario.tune import config as tune_config
from pario.tune.objective import show_value
from pario.tune.results import Sampled, Summary
from pario.tune.space import Space, config_key
from pario.tune.study import MESSAGES_IN


def _sampled(objective: str, s: Sampled) -> str:
    return (f"{show_value(objective, s.median)} median of {len(s.samples)} run(s), spread "
            f"{100 * s.spread:.0f}%")


def untested_hints(summary: Summary) -> dict[str, tuple[str, str | None]]:
    """Hints of the best configuration that the MPI library ignored in every successful trial of it
    (key -> (asked, in effect or None)): they were not tested, so they are not handed back."""
    if summary.best is None:
        return {}
    key = config_key(summary.best.config)
    trials = [r for r in summary.trials if r.state == "complete" and config_key(r.config) == key]
    if not trials:
        return {}
    seen = [{h[1]: (h[2], h[3]) for h in r.ignored_hints} for r in trials]
    common = set(seen[0]).intersection(*seen[1:])
    return {k: seen[0][k] for k in sorted(common)}


def best_applied(summary: Summary, space: Space) -> tune_config.Applied:
    """What the best configuration sets, without the settings that cannot matter given the others
    (Space.relevant) and the hints the MPI library ignored."""
    assert summary.best is not None
    a = tune_config.applied(space, space.relevant(summary.best.config))
    drop = untested_hints(summary)
    return replace(a, hints={k: v for k, v in a.hints.items() if k not in drop})


#: The files a study writes for its best configuration.
BEST_FILES = {"hints": "best.hints", "romio_hints": "best.romio-hints"}


def best_files(summary: Summary, space: Space, directory: Path, files: str | None) -> dict[str, Path]:
    """Write the best configuration's hints files into ``directory`` when it is better than the
    default (a significant win); their paths by kind.  Otherwise none, and the files an earlier
    run of the study wrote there are removed, so that none outlives the verdict."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {kind: directory / name for kind, name in BEST_FILES.items()}
    if summary.best is None or summary.verdict != "better":
        hints = paths["hints"]
        if hints.is_file() and hints.read_text(errors="replace").startswith(tune_config.WRITTEN_BY):
            for path in paths.values():
                path.unlink(missing_ok=True)
        return {}
    a = best_applied(summary, space)
    paths["hints"].write_text(tune_config.hints_text(a.hints, files, tuned_environment(a)))
    paths["romio_hints"].write_text(tune_config.romio_hints_text(a.hints))
    return paths


def tuned_environment(a: tune_config.Applied) -> dict[str, str]:
    """What the hints need beside them to be the configuration measured: the MPI library's
    settings and pario's collective-write engine (``pario run --hints`` applies both)."""
    return {**a.env(), **({"PARIO_COLL": a.collective} if a.collective else {})}


def _first_and_last(error: str) -> str:
    """A failure in one line: its first line (the status), the command's own last message, pario
    run's last line, and where all the messages are (the error keeps only their tail)."""
    texts = [t.strip() for t in error.splitlines() if t.strip()]
    where = [t for t in texts if t.startswith(MESSAGES_IN)]
    texts = [t for t in texts if not t.startswith(MESSAGES_IN)]
    own = [t for t in texts[1:] if not t.startswith("pario") and any(c.isalnum() for c in t)]
    pario = [t for t in texts[1:] if t.startswith("pario")]
    return "; ".join(dict.fromkeys(texts[:1] + own[-1:] + pario[-1:] + where[-1:]))


VERDICTS = {
    "better": "better than the default (one-sided Mann-Whitney U, p = {p:.3f})",
    "within-noise": "not distinguishable from the default: the difference is inside the noise{p_text}",
    "default-best": "the default configuration was the best measured",
    "no-result": "no configuration ran successfully",
}


#: Why no hints file is written, by verdict (a file only for a significant win)
NO_FILE = {
    "within-noise": ("the best may be the default's noise; measure more runs of each (a larger "
                     "--repeat, or --budget) to tell"),
    "default-best": "the default is as good as anything measured: keep it",
}


#: The end-of-study text fits the terminal (`pario tune` gives its width; 80 columns by default):
#: prose wraps with a hanging indent, commands continue with a backslash (config.shell_lines)
#: within COMMAND_WIDTH columns, so that every line pastes as it is.
WIDTH = 80
COMMAND_WIDTH = 76


def _wrapped(lines: list[str], width: int) -> list[str]:
    """Prose lines wrapped at ``width``; indented lines (commands, code, wrapped settings) as
    they are."""
    return [w for line in lines for w in ([line] if line.startswith(" ") else wrap_words(line, width, 4))]


def lines(summary: Summary, space: Space, written: dict[str, Path], command: list[str],
          width: int = WIDTH) -> list[str]:
    """The end-of-study text, ``width`` columns wide (but for a word longer than a line)."""
    obj = summary.objective
    out = [f"study {summary.study}: {summary.budget_used} trial(s) in the budget, {summary.failed} failed, "
           f"{len(summary.trials)} in all (strategy {summary.strategy}, objective {obj})"]
    if summary.default:
        out.append(f"default: {_sampled(obj, summary.default)}")
    if summary.best:
        out.append(f"best:    {_sampled(obj, summary.best)}")
        settings = tune_config.describe(space, space.relevant(summary.best.config))
        out += wrap_words(f"         {settings}", width, 9)
    p_text = f" (p = {summary.p_value:.3f})" if summary.p_value is not None else ""
    verdict = VERDICTS[summary.verdict].format(p=summary.p_value or 0.0, p_text=p_text)
    if summary.speedup is not None and summary.verdict in ("better", "within-noise"):
        out.append(f"speed-up over the default: {summary.speedup:.2f}x, {verdict}")
    else:
        failure = next((r for r in summary.trials if r.state == "fail" and r.error), None)
        why = f" (trial {failure.number}: {_first_and_last(failure.error)})" if (
            summary.verdict == "no-result" and failure is not None) else ""
        out.append(verdict[0].upper() + verdict[1:] + why)
        if any(r.role == "default" and r.state == "fail" for r in summary.trials) and summary.default is None:
            out.append("The default configuration failed, so no other was tried: make the command run "
                       "under pario run first.")
    if summary.prediction_mdape is not None:
        out.append(f"prediction error of the model on the trials it chose (MdAPE): "
                   f"{100 * summary.prediction_mdape:.1f}%")
    out += [f"note: {n}" for n in summary.notes]
    if summary.best and summary.verdict in NO_FILE:
        out.append(f"no hints file written: {NO_FILE[summary.verdict]}")
    if summary.best and summary.verdict == "better" and written:
        a = best_applied(summary, space)
        for k, (asked, got) in untested_hints(summary).items():
            out.append(f"left out of the hints file: {k}={asked}, which the MPI library ignored "
                       f"({'in effect: ' + got if got is not None else 'not reported'})")
        out.append(f"hints file: {written['hints']}")
        out.append("use it in a job script:")
        out += [f"  {line}" for line in tune_config.job_script_lines(a, written["hints"], command,
                                                           Path(space.detected.directory),
                                                           min(COMMAND_WIDTH, width - 2))]
        out += without_pario(a, written)
    return _wrapped(out, width)


def without_pario(a: tune_config.Applied, written: dict[str, Path]) -> list[str]:
    """How to use the best configuration without pario in the job: the environment the MPI library
    and PnetCDF read, and the HDF5 calls to add to the program (HDF5 reads no environment variable)."""
    plain = tune_config.without_pario_lines(a, written["romio_hints"])
    code = tune_config.hdf5_code_lines(a.hints)
    if (plain or code) and a.collective:
        return [f"(the best uses pario's collective-write engine, --collective {a.collective}: "
                "without pario in the job it is not the configuration measured)"]
    out = []
    if plain:
        pnetcdf = tune_config.pnetcdf_hints_value(a.hints)
        readers = ("what the MPI library and PnetCDF read themselves" if pnetcdf
                   else "what the MPI library itself reads")
        out.append(f"or, without pario in the job ({readers}):")
        out += [f"  {line}" for line in plain]
    if code:
        out.append("HDF5 reads its properties from no environment variable: without pario, set them in the "
                   "program, on the file access list (fapl) given to H5Fcreate/H5Fopen:")
        out += [f"  {line}" for line in code]
    return out
