"""What ``pario tune`` prints and writes at the end: the verdict, the files and the lines to use them."""

from __future__ import annotations

from pathlib import Path

from pario import units
from pario.tune import config as cfg
from pario.tune.objective import MAXIMISE
from pario.tune.results import Sampled, Summary
from pario.tune.space import Space


def show_value(objective: str, value: float | None) -> str:
    if value is None:
        return "-"
    return units.rate(value) if objective in MAXIMISE else units.seconds(value)


def _sampled(objective: str, s: Sampled) -> str:
    return (f"{show_value(objective, s.median)} median of {len(s.samples)} run(s), spread "
            f"{100 * s.spread:.0f}%")


def best_files(summary: Summary, space: Space, directory: Path, files: str | None) -> dict[str, Path]:
    """Write the best configuration's hints files into ``directory``; their paths by kind."""
    directory.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    if summary.best is None:
        return out
    a = cfg.applied(space, summary.best.config)
    hints = directory / "best.hints"
    hints.write_text(cfg.hints_text(a.hints, files))
    out["hints"] = hints
    romio = directory / "best.romio-hints"
    romio.write_text(cfg.romio_hints_text(a.hints))
    out["romio_hints"] = romio
    return out


def _first_and_last(error: str) -> str:
    """A failure in one line: its first line (the status) and the last of its stderr tail."""
    texts = [t.strip() for t in error.splitlines() if t.strip()]
    return "; ".join(dict.fromkeys(texts[:1] + texts[-1:]))


VERDICTS = {
    "better": "better than the default (one-sided Mann-Whitney U, p = {p:.3f})",
    "within-noise": "not distinguishable from the default: the difference is inside the noise{p_text}",
    "default-best": "the default configuration was the best measured",
    "no-result": "no configuration ran successfully",
}


def lines(summary: Summary, space: Space, written: dict[str, Path], command: list[str]) -> list[str]:
    """The end-of-study text."""
    obj = summary.objective
    out = [f"study {summary.study}: {summary.budget_used} trial(s) in the budget, {summary.failed} failed, "
           f"{len(summary.trials)} in all (strategy {summary.strategy}, objective {obj})"]
    if summary.default:
        out.append(f"default: {_sampled(obj, summary.default)}")
    if summary.best:
        out.append(f"best:    {_sampled(obj, summary.best)}")
        out.append(f"         {cfg.describe(space, summary.best.config)}")
    p_text = f" (p = {summary.p_value:.3f})" if summary.p_value is not None else ""
    verdict = VERDICTS[summary.verdict].format(p=summary.p_value or 0.0, p_text=p_text)
    if summary.speedup is not None and summary.verdict in ("better", "within-noise"):
        out.append(f"speed-up over the default: {summary.speedup:.2f}x, {verdict}")
    else:
        failure = next((r for r in summary.trials if r.state == "fail" and r.error), None)
        why = f" (trial {failure.number}: {_first_and_last(failure.error)})" if (
            summary.verdict == "no-result" and failure is not None) else ""
        out.append(verdict[0].upper() + verdict[1:] + why)
    if summary.prediction_mdape is not None:
        out.append(f"prediction error of the model on the trials it chose (MdAPE): "
                   f"{100 * summary.prediction_mdape:.1f}%")
    out += [f"note: {n}" for n in summary.notes]
    if summary.best and summary.verdict == "better" and written:
        a = cfg.applied(space, summary.best.config)
        out.append(f"hints file: {written['hints']}")
        out.append("use it in a job script:")
        out += [f"  {line}" for line in cfg.job_script_lines(a, written["hints"], command,
                                                           Path(space.detected.directory))]
        plain = cfg.without_pario_lines(a, written["romio_hints"])
        if plain:
            out.append("or, without pario in the job (what the MPI library itself reads):")
            out += [f"  {line}" for line in plain]
    return out
