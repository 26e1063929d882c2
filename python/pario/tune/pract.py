"""Prediction-based tuning (after PrAct): an XGBoost model of the objective, searched instead of run.

The model is trained on every finished trial of every study in the storage that has the same
objective (earlier studies of other programs teach it too), with two kinds of features:

* the configuration: a numeric dimension (counts, byte sizes) as log2 of its value, a word
  (``enable``, ``romio321``) one-hot, ``default`` as missing (XGBoost learns where missing
  values go);
* the workload, from the trial's log (:func:`pario.tune.objective.workload_features`): ranks,
  bytes, mean request size, share of collective calls, access pattern, file count.

The target is log(value), so that the model's error is relative.  Each step predicts every
configuration not yet run (a random sample of them when the space is too large) and runs the
best ``k`` for real; the prediction made before a trial ran is stored with it, so the model's
error on trials it had not seen (MdAPE) is measured, not assumed.  Until the study has
:func:`startup` trials of its own, configurations are drawn at random.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pario.errors import ParioError
from pario.tune.objective import MAXIMISE
from pario.tune.space import DEFAULT, Space, config_key, enumerate_configs, random_config
from pario.tune.study import Study

CANDIDATES = 20_000  # configurations scored per step when the space is larger
TOP_K = 1  # run per model step (then refit)
XGB_PARAMS = {"objective": "reg:squarederror", "max_depth": 4, "eta": 0.15, "subsample": 0.9,
              "min_child_weight": 1.0, "lambda": 1.0, "nthread": 1, "verbosity": 0}
XGB_ROUNDS = 150


def startup(budget: int) -> int:
    """Random trials before the model is trusted (the default not counted)."""
    return max(4, min(10, budget // 4))


def config_features(config: Mapping[str, str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, value in config.items():
        if value == DEFAULT:
            out[f"{name}"] = math.nan
            continue
        if value.isdigit():
            out[name] = math.log2(max(int(value), 1))
        else:
            out[name] = math.nan
            out[f"{name}={value}"] = 1.0
    return out


def row(config: Mapping[str, str], workload: Mapping[str, float] | None) -> dict[str, float]:
    return {**config_features(config), **(workload or {})}


@dataclass(frozen=True)
class Features:
    """The model's input: one row per configuration, one named float column per feature
    (NaN: missing, which XGBoost learns where to send)."""

    names: list[str]
    values: np.ndarray  # shape (rows, len(names))

    def rows(self, which: Any) -> Features:
        """The rows ``which`` selects (positions or a boolean mask)."""
        return Features(self.names, self.values[which])


def features_of(rows: Sequence[Mapping[str, float]], columns: Sequence[str] | None = None) -> Features:
    """The features of ``rows``: the columns given, or every feature in order of first
    appearance; a one-hot column (``name=value``) absent from a row is 0 ("not this value")."""
    names = list(columns) if columns is not None else list(dict.fromkeys(k for r in rows for k in r))
    where = {name: j for j, name in enumerate(names)}
    values = np.full((len(rows), len(names)), np.nan)
    for i, r in enumerate(rows):
        for name, value in r.items():
            if name in where:
                values[i, where[name]] = value
    onehot = [j for j, name in enumerate(names) if "=" in name]
    values[:, onehot] = np.nan_to_num(values[:, onehot], nan=0.0)
    return Features(names, values)


def _matrix(x: Features, label: np.ndarray | None = None):
    """XGBoost's DMatrix of the features (names without the characters XGBoost refuses)."""
    import xgboost

    names = [c.replace("[", "(").replace("]", ")").replace("<", "lt") for c in x.names]
    return xgboost.DMatrix(x.values, label=label, missing=np.nan, feature_names=names)


def fit(x: Features, y: np.ndarray, seed: int = 0):
    import xgboost

    return xgboost.train({**XGB_PARAMS, "seed": seed}, _matrix(x, y), num_boost_round=XGB_ROUNDS)


def predict(model, x: Features) -> np.ndarray:
    return np.asarray(model.predict(_matrix(x)), dtype=np.float64)


def training_rows(storage, objective: str) -> tuple[list[dict[str, float]], np.ndarray]:
    """Every finished trial with a value of every pario study of this objective in the storage."""
    import optuna
    from optuna.trial import TrialState

    rows: list[dict[str, float]] = []
    values: list[float] = []
    for summary in optuna.get_all_study_summaries(storage, include_best_trial=False):
        info = summary.user_attrs.get("pario") if summary.user_attrs else None
        if not info or info.get("objective") != objective:
            continue
        study = optuna.load_study(study_name=summary.study_name, storage=storage)
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
            vals = [v for v in t.user_attrs.get("values", []) if v and v > 0]
            if not vals:
                continue
            rows.append(row(t.user_attrs.get("config", {}), t.user_attrs.get("workload")))
            values.append(float(statistics.median(vals)))
    return rows, np.asarray(values, dtype=np.float64)


def candidates(space: Space, tried: set[str], rng: random.Random) -> list[dict[str, str]]:
    """Configurations not yet run: all of them, or a random sample when there are too many."""
    try:
        pool = enumerate_configs(space, limit=CANDIDATES)
    except ParioError:  # too many: sample instead
        pool = [random_config(space, rng) for _ in range(CANDIDATES)]
    seen: set[str] = set()
    out = []
    for c in pool:
        key = config_key(c)
        if key not in tried and key not in seen:
            seen.add(key)
            out.append(c)
    return out


def mdape(predicted: Sequence[float], actual: Sequence[float]) -> float | None:
    """Median absolute percentage error, None without pairs."""
    pairs = [(p, a) for p, a in zip(predicted, actual, strict=True) if a and a > 0 and p is not None]
    if not pairs:
        return None
    return float(statistics.median(abs(p - a) / a for p, a in pairs))


def cross_validated_mdape(rows: Sequence[Mapping[str, float]], values: np.ndarray, folds: int = 5,
                          seed: int = 0) -> float | None:
    """MdAPE of the model on held-out trials (k-fold), None with fewer than 2 folds' worth of trials."""
    n = len(rows)
    if n < 2 * folds:
        return None
    x = features_of(rows)
    order = np.random.default_rng(seed).permutation(n)
    predicted = np.empty(n)
    for k in range(folds):
        test = order[k::folds]
        train = np.setdiff1d(order, test)
        model = fit(x.rows(train), np.log(values[train]), seed)
        predicted[test] = np.exp(predict(model, x.rows(test)))
    return mdape(list(predicted), list(values))


def pract_proposer(seed: int | None) -> Callable[[Study, int], list]:
    """The proposer of ``--strategy pract``: random until :func:`startup` trials, then the model's top-k."""
    rng = random.Random(seed)

    def propose(study: Study, n: int) -> list:
        tried = study.asked()
        own = len(study.samples())
        pool = candidates(study.space, tried, rng)
        if not pool:
            return []
        if own < 1 + startup(study.settings.budget):
            return [(c, None) for c in rng.sample(pool, min(n, len(pool)))]
        rows, values = training_rows(study.study._storage, study.settings.objective)
        if len(rows) < 3:
            return [(c, None) for c in rng.sample(pool, min(n, len(pool)))]
        x = features_of(rows)
        model = fit(x, np.log(values), seed or 0)
        workload = _workload_of(study)
        scored = predict(model, features_of([row(c, workload) for c in pool], columns=x.names))
        order = np.argsort(-scored if study.settings.objective in MAXIMISE else scored)
        picks = [int(i) for i in order[: max(n, TOP_K)]]
        return [(pool[i], float(math.exp(scored[i]))) for i in picks][:n]

    return propose


def _workload_of(study: Study) -> dict[str, float] | None:
    """The workload features of this study (from its default run, else any run)."""
    trials = study.outcomes()
    for t in sorted(trials, key=lambda t: t.user_attrs.get("role") != "default"):
        if t.user_attrs.get("workload"):
            return dict(t.user_attrs["workload"])
    return None


def held_out_error(study) -> float | None:
    """MdAPE of the predictions stored with trials, against what they then measured."""
    from optuna.trial import TrialState

    pairs = [(t.user_attrs["predicted"], float(statistics.median(t.user_attrs["values"])))
             for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
             if t.user_attrs.get("predicted") is not None and t.user_attrs.get("values")]
    return mdape([p for p, _ in pairs], [a for _, a in pairs])
