"""The gradient boosting estimators' losses, constraints and metrics as given by
the user, checked and resolved: a loss name or a function (``objective``), the
monotone and interaction constraints against the columns (``constraints``),
metrics given as functions. Everything that can be checked before any Dask
work is checked then: the parameters in ``check_params`` (start of ``fit``),
the columns' names in ``resolve_constraints`` (once the columns are known from
the data's metadata), a target in memory in ``check_data``; targets on Dask
are checked in one pass over the binned rows before the first round.
"""

from __future__ import annotations

import numpy as np

from ..engine.input_plan import is_dask
from ..inputs import constraints
from ..inputs.checks import InvalidParameterError
from ..metrics import CustomMetric
from ..training import objective
from ..trees.losses import LOG_LINK_LOSSES, make_loss

CUSTOM = "custom"
"""What a model file records as the loss of a model trained with a function."""


def is_custom(loss) -> bool:
    return callable(loss) or loss == CUSTOM


def make_objective(loss, n_classes: int | None, alpha: float, power: float, owner: str):
    """The loss object training uses: a loss name's (``trees.losses.make_loss``,
    with the quantile ``alpha`` and the Tweedie ``power``), or a function's
    (``objective.CustomObjective``); ``owner`` names the estimator in refusals."""
    if callable(loss):
        return objective.CustomObjective(loss)
    if loss == CUSTOM:
        raise InvalidParameterError(
            f"{owner}: loss='custom' is what a saved model records for an objective "
            f"given as a Python function; the function itself is not saved. To train, pass it: "
            f"loss=my_objective")
    return make_loss(loss, n_classes, alpha, power)


def estimator_objective(est, n_classes: int | None):
    """``make_objective`` of ``est``'s parameters."""
    return make_objective(est.loss, n_classes, est.alpha,
                          getattr(est, "tweedie_variance_power", 1.5), type(est).__name__)


def check_params(est) -> None:
    """The checks of the new parameters that need no data (start of ``fit``)."""
    owner = type(est).__name__
    if is_custom(est.loss):
        if est._is_classifier:
            raise InvalidParameterError(
                f"{owner}: a custom objective predicts raw scores, so it belongs to "
                f"GradientBoostingRegressor; fit one there (e.g. on 0/1 labels) and apply your "
                f"link to its predictions")
        if est.leaf_estimation == "line_search":
            raise InvalidParameterError(
                f"{owner}: a custom objective gives gradients and hessians only, so its leaves "
                f"are Newton steps: use leaf_estimation='newton' (or 'auto')")
    constraints.check_monotonic_cst(est.monotonic_cst, owner)
    constraints.check_interaction_cst(est.interaction_cst, owner)


def check_trainable(est) -> None:
    """A model loaded from a file records a user's functions as "custom"; to train,
    the functions themselves are needed."""
    estimator_objective(est, 2 if est._is_classifier else None)
    metrics = est.eval_metric if isinstance(est.eval_metric, (list, tuple)) else [est.eval_metric]
    if CUSTOM in metrics:
        raise InvalidParameterError(
            f"{type(est).__name__}: eval_metric holds 'custom', what a saved model records for a "
            f"metric given as a Python function; to train, pass the function (or "
            f"distboost.metrics.make_metric(fn, ...)) itself")


def functions_of(loss, eval_metric) -> list:
    """The user's functions the workers run: a custom objective, custom metrics."""
    found = [loss] if callable(loss) else []
    metrics = eval_metric if isinstance(eval_metric, (list, tuple)) else [eval_metric]
    for m in metrics:
        if isinstance(m, CustomMetric):
            found.append(m.fn)
        elif callable(m):
            found.append(m)
    return found


def check_data(est, X, y) -> None:
    """Before any work on the data: functions that must travel to Dask workers
    pickle; a target in memory suits a log-link loss."""
    owner = type(est).__name__
    if is_dask(X):
        for fn in functions_of(est.loss, est.eval_metric):
            objective.check_picklable(fn, "loss" if fn is est.loss else "eval_metric", owner)
    elif not est._is_classifier and est.loss in LOG_LINK_LOSSES and y is not None:
        objective.check_local_targets(estimator_objective(est, None), np.asarray(y))


def resolve_constraints(monotonic_cst, interaction_cst, schema, owner: str) -> tuple:
    """(monotonic, interactions) for these columns (``constraints``), as the
    trees' ``GrowthParams`` take them; each None when it constrains nothing."""
    named = not all(n == f"f{j}" for j, n in enumerate(schema.feature_names))
    monotonic = constraints.monotonic_constraints(
        monotonic_cst, schema.feature_names, named, schema.is_categorical, owner)
    interactions = constraints.interaction_constraints(
        interaction_cst, schema.feature_names, named, owner)
    return monotonic, interactions


def check_classes(est, n_classes: int) -> None:
    """Monotone constraints need one output ordered by the features: two classes."""
    if getattr(est, "_monotonic", None) is not None and n_classes > 2:
        raise InvalidParameterError(
            f"{type(est).__name__}: monotonic constraints are not supported for multiclass "
            f"classification (the target has {n_classes} classes); they constrain the "
            f"probability of classes_[1] of two classes")
