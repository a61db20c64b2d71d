"""Evaluation metrics of gradient boosting (``eval_metric``), computed where the rows are.

A metric turns one partition's rows into a *partial*; partials merge
(on a worker over its partitions, on the driver over the workers) and the
merged partial gives the value. Means are exact integer sums (``_exact``)
and AUC sorts every row's score, so every value is the same whatever the
partitioning.

=============  ===========================================  =====================
name           value                                        for
=============  ===========================================  =====================
``logloss``    -sum w log p(y|x) / sum w  (p clipped 1e-15)  classification
``mlogloss``   the same (XGBoost's name for K classes)      classification
``error``      sum w 1(predicted class != y) / sum w        classification
``auc``        area under the ROC curve, ties counting 1/2  two classes
``rmse``       sqrt(sum w (y - f)^2 / sum w)                 regression
``mae``        sum w |y - f| / sum w                        regression
the loss's     ``Loss.metric_pointwise`` averaged, then     its loss (the default)
own name       ``Loss.finish_metric``
=============  ===========================================  =====================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _exact
from ._validation import InvalidParameterError

PROBA_EPS = 1e-15
"""Probabilities are clipped to [eps, 1 - eps] before the log (as scikit-learn and XGBoost)."""


@dataclass(frozen=True)
class MeanMetric:
    """A weighted mean of a per-row value, then ``finish`` (e.g. a square root).

    Partial: (exact sum of w·value, exact sum of w), Python ints. ``loss``
    gives the metrics that need it its link or its own pointwise metric.
    """

    name: str
    loss: object = None
    higher_is_better = False

    def rowwise(self, y: np.ndarray, raw: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def finish(self, mean: float) -> float:
        return mean

    def partial(self, y, raw, w):
        return _exact.exact_sum(w * self.rowwise(y, raw)), _exact.exact_sum(w)

    def merge(self, partials):
        return sum(p[0] for p in partials), sum(p[1] for p in partials)

    def value(self, partial) -> float:
        return self.finish(_exact.to_float(partial[0]) / _exact.to_float(partial[1]))


@dataclass(frozen=True)
class LossMetric(MeanMetric):
    """The loss's own metric (``metric_name``): its ``metric_pointwise`` and ``finish_metric``."""

    def rowwise(self, y, raw):
        return self.loss.metric_pointwise(y, raw)

    def finish(self, mean):
        return self.loss.finish_metric(mean)


@dataclass(frozen=True)
class LogLoss(MeanMetric):
    """-log p(y | x), with p the loss's probabilities (its link)."""

    def rowwise(self, y, raw):
        p = np.clip(self.loss.predict_proba(raw), PROBA_EPS, 1.0 - PROBA_EPS)
        return -np.log(p[np.arange(len(y)), y.astype(np.int64)])


@dataclass(frozen=True)
class ClassificationError(MeanMetric):
    """1(the most probable class != y): the complement of ``predict``'s accuracy."""

    def rowwise(self, y, raw):
        predicted = np.argmax(self.loss.predict_proba(raw), axis=1)
        return (predicted != y.astype(np.int64)).astype(np.float64)


@dataclass(frozen=True)
class SquaredErrorMetric(MeanMetric):
    """Root mean squared error of the raw score."""

    def rowwise(self, y, raw):
        return (y - raw[0]) ** 2

    def finish(self, mean):
        return float(np.sqrt(mean))


@dataclass(frozen=True)
class AbsoluteErrorMetric(MeanMetric):
    """Mean absolute error of the raw score."""

    def rowwise(self, y, raw):
        return np.abs(y - raw[0])


@dataclass(frozen=True)
class AUC:
    """Area under the ROC curve of the score f(x) for class 1 (Mann-Whitney U):
    sum over positive-negative pairs of w+ w- (1 if the positive scores higher,
    1/2 on a tie), divided by W+ W-.

    Partial: the (score, y, w) of every row with positive weight, sorted by
    (score, y, w); merged by concatenating and sorting again, so the value
    depends on the rows only. It carries every row to the driver: 24 bytes
    per row per evaluation, meant for evaluation sets (on a training set of
    many millions of rows it is a transfer per round).
    """

    name: str = "auc"
    higher_is_better = True

    def partial(self, y, raw, w):
        keep = w > 0
        return _sorted(raw[0][keep], y[keep], w[keep])

    def merge(self, partials):
        return _sorted(*(np.concatenate([p[i] for p in partials]) for i in range(3)))

    def value(self, partial) -> float:
        score, y, w = partial
        pos, neg = w * (y == 1), w * (y == 0)
        total_pos, total_neg = pos.sum(), neg.sum()
        if total_pos <= 0 or total_neg <= 0:
            return float("nan")  # one class only: no pair to rank
        starts = np.flatnonzero(np.r_[True, score[1:] != score[:-1]])
        tie_pos, tie_neg = np.add.reduceat(pos, starts), np.add.reduceat(neg, starts)
        below = np.cumsum(tie_neg) - tie_neg  # negative weight scored lower than each tie group
        return float(np.sum(tie_pos * (below + 0.5 * tie_neg)) / (total_pos * total_neg))


def _sorted(score, y, w):
    order = np.lexsort((w, y, score))
    return score[order], y[order], w[order]


def higher_is_better(name: str) -> bool:
    """Whether a larger value of the metric named ``name`` is better (AUC) or a
    smaller one (every other metric here)."""
    return name == AUC.name


def make_metrics(names, loss, n_classes: int | None) -> tuple:
    """The metric objects of ``eval_metric`` (None: the loss's own metric).

    Raises ``InvalidParameterError`` naming the metric and what the task allows.
    """
    if names is None:
        return (LossMetric(loss.metric_name, loss),)
    names = [names] if isinstance(names, str) else list(names)
    return tuple(_make_metric(name, loss, n_classes) for name in names)


_MEANS = {"logloss": LogLoss, "mlogloss": LogLoss, "error": ClassificationError,
          "rmse": SquaredErrorMetric, "mae": AbsoluteErrorMetric}
CLASSIFICATION_METRICS = ("logloss", "mlogloss", "error", "auc")
REGRESSION_METRICS = ("rmse", "mae")


def _make_metric(name: str, loss, n_classes: int | None):
    if name == loss.metric_name:
        return LossMetric(name, loss)
    allowed = CLASSIFICATION_METRICS if n_classes is not None else REGRESSION_METRICS
    if name not in allowed:
        task = "a classifier" if n_classes is not None else "a regressor"
        raise InvalidParameterError(
            f"eval_metric {name!r} is not a metric of {task} with loss={loss.name!r}; choose "
            f"from {', '.join(repr(m) for m in (*allowed, loss.metric_name))}"
        )
    if name == "auc" and n_classes != 2:
        raise InvalidParameterError(f"eval_metric 'auc' ranks two classes, but the target has "
                                    f"{n_classes}; use 'mlogloss' or 'error'")
    return AUC() if name == AUC.name else _MEANS[name](name, loss)
