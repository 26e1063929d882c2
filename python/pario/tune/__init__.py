"""``pario tune``: execution-based and prediction-based I/O autotuning (docs/tune.md).

Stages, one module each: :mod:`~pario.tune.space` (what can be set, from what is detected),
:mod:`~pario.tune.config` (applying a configuration without recompiling),
:mod:`~pario.tune.runner` (one run, locally or as a Slurm job),
:mod:`~pario.tune.objective` (the value, from the run's pario log),
:mod:`~pario.tune.study` (the search loop over Optuna's storage),
:mod:`~pario.tune.pract` (the XGBoost prediction model),
:mod:`~pario.tune.results` and :mod:`~pario.tune.output` (the verdict and what to use).
"""
