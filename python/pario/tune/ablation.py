"""The best configuration whole and minimal: every setting it hands back is one the win needs.

After the verify phase, when the best beats the default (one-sided Mann-Whitney U, p <= ALPHA),
each of its settings in turn is set back to its default and the configuration without it is
measured as often as the best (VERIFY_SAMPLES samples).  A setting stays when the configuration
with it is better than without it (the same test, p <= ALPHA); otherwise the win does not need
it: it goes, and the next setting is tried on what is left.  What goes, and why, is kept in the
study (``pario_minimal``) and said at the end; the hints file carries only what stays, and every
setting the win needs, the collective engine's included.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pario.tune.results import mann_whitney_p
from pario.tune.space import DEFAULT, Space
from pario.tune.study import ALPHA

#: study user attribute holding the result (:func:`as_json`)
ATTR = "pario_minimal"


@dataclass(frozen=True)
class Dropped:
    """A setting of the best that the win did not need."""

    name: str
    value: str
    p: float  # one-sided p of 'with it is better than without it'
    median_with: float
    median_without: float


@dataclass(frozen=True)
class Minimal:
    config: dict[str, str]
    dropped: tuple[Dropped, ...]


def minimal(space: Space, best: dict[str, str], objective: str,
            samples_of: Callable[[dict[str, str]], Sequence[float]]) -> Minimal:
    """The best without the settings its win does not need, trying them in the space's order.

    ``samples_of(config)`` measures a configuration (or gives the samples it has); a setting
    whose configuration without it cannot be measured (its runs fail) stays.
    """
    current = space.relevant(best)
    dropped: list[Dropped] = []
    for d in space.dimensions:
        value = current.get(d.name, DEFAULT)
        if value == DEFAULT:
            continue
        without = space.relevant({**current, d.name: DEFAULT})
        if without == current:
            continue
        with_it, without_it = list(samples_of(current)), list(samples_of(without))
        if not with_it or not without_it:
            continue
        p = mann_whitney_p(objective, with_it, without_it)
        if p > ALPHA:
            dropped.append(Dropped(d.name, value, p, statistics.median(with_it),
                                   statistics.median(without_it)))
            current = without
    return Minimal(current, tuple(dropped))


def as_json(m: Minimal) -> dict:
    return {"config": m.config, "dropped": [d.__dict__ for d in m.dropped]}


def from_json(data: dict) -> Minimal:
    return Minimal(dict(data["config"]), tuple(Dropped(**d) for d in data.get("dropped", [])))
