"""Multi-output gradient boosting: a ``y`` of k > 1 columns.

scikit-learn's contract for multi-output estimators: ``fit`` takes y of shape
(n, k) and ``predict`` returns (n, k) (as ``DecisionTreeRegressor``,
``KNeighborsRegressor``); a classifier given a 0/1 indicator matrix is a
multi-label classifier (scikit-learn's "multilabel-indicator" target,
``MLPClassifier``; XGBoost's ``XGBClassifier`` with a 2-D y). So no new
estimator: ``GradientBoostingRegressor`` and ``GradientBoostingClassifier``
take the 2-D y, and XGBoost's ``multi_strategy`` parameter names how the
trees grow. ``"one_output_per_tree"``: each round grows one tree per target
on that target's (g_j, h_j) (``trees.multi_output.MultiOutputLoss``), as the
multinomial deviance grows K trees per round. ``"multi_output_tree"``: one
tree per round shared by the targets, its splits chosen on the sum of the
targets' gains and its leaves -G_j/(H_j+lambda) per target
(``trees.vector_leaves``; numeric features only, no DART). The regressor's loss is
squared error summed over the targets; the classifier's the binomial deviance
of each label (k independent logistic outputs; ``predict_proba`` gives
P(label j = 1), shape (n, k), as ``MLPClassifier`` and XGBoost do).

This module holds the estimators' multi-output logic: the checks at the
start of ``fit``, f_0, predictions and scores.
"""

from __future__ import annotations

import numpy as np

from ..inputs.checks import InvalidParameterError, check_sample_weight
from ..inputs.targets import n_targets, to_targets
from ..trees.multi_output import make_multi_output_loss


def begin_fit(est, y, init_model=None) -> None:
    """Record whether this fit's y has k > 1 columns (``_multi_output``: None,
    "targets" or "labels"; ``n_targets_``; a DataFrame's column names as
    ``target_names_``, as ``feature_names_in_``) and refuse what multi-output
    training does not support, naming the parameter and what to do."""
    k = n_targets(y)
    if est.warm_start and hasattr(est, "trees_"):  # continues itself: before n_targets_ changes
        check_continued(est, est, k)
    est._multi_output = None
    if k is None:
        est.__dict__.pop("n_targets_", None)
        est.__dict__.pop("target_names_", None)
        return
    owner = type(est).__name__
    if callable(est.loss):
        raise InvalidParameterError(f"{owner}: a custom objective takes one target; y has {k} "
                                    f"columns: fit one model per target")
    make_multi_output_loss(est.loss, est._is_classifier, k)  # refuses other losses
    refused = {
        "leaf_estimation='line_search'": est.leaf_estimation == "line_search",
        "monotonic_cst": est.monotonic_cst is not None,
        "eval_metric (the loss's own metric, averaged over the targets, is recorded)":
            est.eval_metric is not None,
        "early_stopping (scikit-learn's; use eval_set with early_stopping_rounds)":
            est.early_stopping not in (False, "auto"),
        "booster='dart' with multi_strategy='multi_output_tree'":
            est.multi_strategy == "multi_output_tree" and est.booster == "dart",
    }
    bad = [name for name, on in refused.items() if on]
    if bad:
        raise InvalidParameterError(
            f"{owner}: a multi-output target ({k} columns) does not support {bad[0]}; leave it "
            f"at its default or fit one model per target")
    est._multi_output = "labels" if est._is_classifier else "targets"
    est.n_targets_ = k
    names = getattr(y, "columns", None)  # a DataFrame's column names, as feature_names_in_
    if names is not None:
        est.target_names_ = np.array([str(c) for c in names], dtype=object)
    else:
        est.__dict__.pop("target_names_", None)


def _targets_phrase(k) -> str:
    return "one target" if k is None else f"{k} target columns"


def check_continued(est, init_model, k) -> None:
    """Refuse to continue a model whose outputs differ from this fit's: a y of
    ``k`` columns (None: one) continues a model of as many targets, grown by the
    same ``multi_strategy`` (its trees hold one output each, or k leaf values)."""
    theirs = getattr(init_model, "n_targets_", None)
    source = "this model (warm_start)" if init_model is est else "init_model"
    if theirs != k:
        raise ValueError(f"{source} was trained on {_targets_phrase(theirs)} and y has "
                         f"{_targets_phrase(k)}; continue with a y of the same columns, or "
                         f"train a new model")
    if k is not None and init_model.multi_strategy != est.multi_strategy:
        raise ValueError(f"{source} grew its trees with multi_strategy="
                         f"{init_model.multi_strategy!r} and this fit has multi_strategy="
                         f"{est.multi_strategy!r}; continue with the same strategy")


def vector_leaves(est) -> bool:
    """Whether the fit grows one vector-leaf tree per round for its k outputs
    (``multi_strategy="multi_output_tree"``, ``trees.vector_leaves``)."""
    return is_multi(est) and est.multi_strategy == "multi_output_tree"


def tags(tags):
    """scikit-learn's tags of an estimator that takes a y of k columns:
    multi-output, and for a classifier multi-label."""
    tags.target_tags.multi_output = True
    if tags.classifier_tags is not None:
        tags.classifier_tags.multi_label = True
    return tags


def loss_of(est):
    """The ``MultiOutputLoss`` of a fitted (or fitting) multi-output estimator."""
    return make_multi_output_loss(est.loss, est._is_classifier, est.n_targets_)


def is_multi(est) -> bool:
    return getattr(est, "n_targets_", None) is not None


def base_score(engine, loss) -> np.ndarray:
    """f_0 per target from exact sums (ESL Algorithm 10.3, step 1; a label column
    of one value only is refused by ``MultiOutputLoss.init_score``)."""
    return engine.init_score(loss)


def label_classes(k: int) -> np.ndarray:
    """A multi-label classifier's ``classes_``: the label columns 0..k-1 (as
    scikit-learn's ``MLPClassifier`` on an indicator matrix)."""
    return np.arange(k)


def labels_from_proba(proba) -> np.ndarray:
    """0/1 labels: P(label j = 1) > 0.5 (XGBoost's rule), shape (n, k), int64."""
    return (np.asarray(proba) > 0.5).astype(np.int64)


def score(est, X, y, sample_weight=None) -> float:
    """The regressor's R^2 averaged over the targets (scikit-learn's
    ``r2_score(multioutput="uniform_average")``), the classifier's subset
    accuracy (every label right; scikit-learn's ``accuracy_score``)."""
    pred = np.asarray(est.predict(X), np.float64)
    y = to_targets(y)
    if y.shape != pred.shape:
        raise ValueError(f"y has shape {y.shape} but the predictions have {pred.shape}; pass "
                         f"one row of {est.n_targets_} targets per row of X")
    w = check_sample_weight(sample_weight, len(pred))
    w = np.ones(len(pred)) if w is None else w
    if est._is_classifier:
        return float(np.sum(w * np.all(pred == y, axis=1)) / np.sum(w))
    mean = np.average(y, axis=0, weights=w)
    r2 = 1.0 - (w[:, None] * (y - pred) ** 2).sum(0) / (w[:, None] * (y - mean) ** 2).sum(0)
    return float(np.mean(r2))
