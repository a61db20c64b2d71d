"""Evaluation metrics of gradient boosting (``eval_metric``), computed where the rows are.

A metric turns one partition's rows into a *partial*; partials merge
(on a worker over its partitions, on the driver over the workers) and the
merged partial gives the value. Means are exact integer sums (``kernels.exact``)
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
``ndcg@k``     mean over queries of DCG@k / ideal DCG@k     ranking
``map@k``      mean over queries of average precision@k     ranking (binary)
``mrr``        mean over queries of 1 / rank of the first   ranking
               relevant document (``mrr@k``: within k)
=============  ===========================================  =====================

The ranking metrics (``QueryMetric``) are per query: a query's rows are in one
partition, so each partition's per-query values are final and their exact
sums merge. DCG@k = sum_{r <= k} (2^rel_r - 1) / log2(r + 1) over the
documents ranked by score (Jarvelin & Kekalainen 2002), ties in row order;
a query without gain scores 1, as one without a relevant document does for
``map`` (XGBoost's conventions); without k, the whole list.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .inputs.checks import InvalidParameterError
from .kernels import exact, libm
from .kernels.ranking import query_metrics, query_starts
from .trees.losses import LOG_LINK_LOSSES, GammaLoss, PoissonLoss
from .trees.ranking import QueryTarget, is_ranking
from .trees.survival import ConcordanceIndex, CoxNLogLik, IntervalTarget

__all__ = [
    "AUC", "CLASSIFICATION_METRICS", "DEVIANCE_METRICS", "RANKING_METRICS", "REGRESSION_METRICS",
    "SURVIVAL_METRICS",
    "EarlyStopping", "NoChangeStopping", "QueryMetric", "QueryTarget", "higher_is_better",
    "make_metric",
    "make_metrics", "query_metric", "should_stop", "survival_score", "watched_set"
]

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
        return exact.exact_sum(w * self.rowwise(y, raw)), exact.exact_sum(w)

    def merge(self, partials):
        return sum(p[0] for p in partials), sum(p[1] for p in partials)

    def value(self, partial) -> float:
        return self.finish(exact.to_float(partial[0]) / exact.to_float(partial[1]))


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
        return -libm.log(p[np.arange(len(y)), y.astype(np.int64)])


@dataclass(frozen=True)
class ClassificationError(MeanMetric):
    """1(the most probable class != y): the complement of ``predict``'s accuracy."""

    def rowwise(self, y, raw):
        predicted = np.argmax(self.loss.predict_proba(raw), axis=1)
        return (predicted != y.astype(np.int64)).astype(np.float64)


@dataclass(frozen=True)
class SquaredErrorMetric(MeanMetric):
    """Root mean squared error of the prediction (the raw score, or e^f for a log link)."""

    def rowwise(self, y, raw):
        return (y - self.loss.prediction(raw)) ** 2

    def finish(self, mean):
        return float(np.sqrt(mean))


@dataclass(frozen=True)
class AbsoluteErrorMetric(MeanMetric):
    """Mean absolute error of the prediction (the raw score, or e^f for a log link)."""

    def rowwise(self, y, raw):
        return np.abs(y - self.loss.prediction(raw))


@dataclass(frozen=True)
class DevianceMetric(MeanMetric):
    """Mean deviance of a log-link model's prediction mu = e^f: Poisson, Gamma or
    the model's Tweedie power (scikit-learn's ``mean_*_deviance``)."""

    def rowwise(self, y, raw):
        mu = self.loss.prediction(raw)
        if self.name == "tweedie_deviance":
            return self.loss.deviance(y, mu)
        deviance = PoissonLoss.deviance if self.name == "poisson_deviance" else GammaLoss.deviance
        return deviance(y, mu)


@dataclass(frozen=True, eq=False)
class CustomMetric(MeanMetric):
    """A user's per-row metric ``fn(y_true, raw_score)``, averaged with the sample
    weights (exact sums, like every mean here); made by ``make_metric``."""

    fn: object = None
    greater_is_better: bool = False

    @property
    def higher_is_better(self) -> bool:
        return self.greater_is_better

    def rowwise(self, y, raw):
        values = np.asarray(self.fn(y, raw[0]), dtype=np.float64)
        if values.shape != y.shape or not np.isfinite(values).all():
            bad = "its shape is " + str(values.shape) if values.shape != y.shape else \
                f"{int((~np.isfinite(values)).sum())} value(s) are not finite"
            raise ValueError(f"eval_metric {self.name!r} must return one finite value per row "
                             f"({y.shape[0]} rows); {bad}")
        return values


def make_metric(fn, name: str | None = None, greater_is_better: bool = False) -> CustomMetric:
    """An ``eval_metric`` from a function ``fn(y_true, raw_score) -> per-row values``.

    The value of the metric is the weighted mean of ``fn``'s values over the
    rows (exact, the same for any partitioning), under ``name`` (default: the
    function's name) in ``evals_result_``; early stopping watching it keeps
    the round with the largest value if ``greater_is_better``, else the
    smallest. A plain function given as ``eval_metric`` is ``make_metric(fn)``.
    ``raw_score`` is the model's raw output (log mu for a log link).
    """
    if not callable(fn):
        raise InvalidParameterError(f"make_metric needs a function fn(y_true, raw_score) -> "
                                    f"per-row values; got {fn!r}")
    name = name or getattr(fn, "__name__", None) or type(fn).__name__
    if not isinstance(name, str) or not name or name == "<lambda>":
        raise InvalidParameterError(
            f"give the metric a name: make_metric(fn, name='...') (got {name!r})")
    return CustomMetric(name, None, fn, bool(greater_is_better))


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


@dataclass(frozen=True)
class QueryMetric:
    """``ndcg``, ``map`` or ``mrr`` (optionally ``@k``), the mean over queries,
    each query weighted by its first row's weight.

    Partial: (exact sum of weight x value, exact sum of weights) over the
    partition's queries.
    """

    name: str
    kind: int  # 0 NDCG, 1 AP, 2 reciprocal rank (``kernels.ranking.query_metrics``)
    k: int | None = None
    exp_gain: bool = True
    higher_is_better = True

    def per_query(self, y: QueryTarget, raw) -> tuple[np.ndarray, np.ndarray]:
        """(values, starts): each query's value and where its rows start."""
        qid = np.ascontiguousarray(y.qid, np.int64)
        starts = query_starts(qid)
        out = np.empty(len(starts) - 1)
        k = np.iinfo(np.int64).max if self.k is None else self.k
        query_metrics(self.kind, np.ascontiguousarray(y.relevance, np.float64),
                      np.ascontiguousarray(raw[0], np.float64), starts, k, self.exp_gain, out)
        return out, starts

    def partial(self, y, raw, w):
        values, starts = self.per_query(y, raw)
        weights = np.asarray(w, np.float64)[starts[:-1]]
        return exact.exact_sum(weights * values), exact.exact_sum(weights)

    def merge(self, partials):
        return sum(p[0] for p in partials), sum(p[1] for p in partials)

    def value(self, partial) -> float:
        return exact.to_float(partial[0]) / exact.to_float(partial[1])


RANKING_METRICS = ("ndcg", "map", "mrr")
"""With ``@k`` or without: ``ndcg@10``, ``map@5``, ``mrr``."""


def query_metric(name: str, exp_gain: bool = True) -> QueryMetric | None:
    """The ``QueryMetric`` a name such as ``"ndcg@10"`` stands for, or None."""
    base, _, k = name.partition("@")
    if base not in RANKING_METRICS or (k and not (k.isdigit() and int(k) >= 1)):
        return None
    return QueryMetric(name, RANKING_METRICS.index(base), int(k) if k else None, exp_gain)


def _sorted(score, y, w):
    order = np.lexsort((w, y, score))
    return score[order], y[order], w[order]


def higher_is_better(name: str) -> bool:
    """Whether a larger value of the built-in metric named ``name`` is better (AUC,
    the ranking metrics) or a smaller one (every other built-in metric; a
    ``make_metric`` says its own)."""
    return name in (AUC.name, "cindex") or query_metric(name) is not None


def make_metrics(names, loss, n_classes: int | None) -> tuple:
    """The metric objects of ``eval_metric`` (None: the loss's own metric): names,
    ``make_metric`` objects, or functions (``make_metric(fn)``), alone or in a list.

    Raises ``InvalidParameterError`` naming the metric and what the task allows.
    """
    if names is None and is_ranking(getattr(loss, "name", "")):
        return (_ranking_metric(loss.metric_name, loss),)
    if names is None and getattr(loss, "name", "").startswith("survival:"):
        return (_survival_metric(loss.metric_name, loss),)
    if names is None:
        return (LossMetric(loss.metric_name, loss),)
    names = [names] if isinstance(names, str) or not _is_sequence(names) else list(names)
    metrics = tuple(_make_metric(name, loss, n_classes) for name in names)
    seen = [m.name for m in metrics if m.name != "custom"]  # a saved model's placeholders
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise InvalidParameterError(f"eval_metric names {twice} more than once; each metric "
                                    f"needs its own name (make_metric(fn, name=...))")
    return metrics


def _is_sequence(value) -> bool:
    return isinstance(value, (list, tuple))


_MEANS = {"logloss": LogLoss, "mlogloss": LogLoss, "error": ClassificationError,
          "rmse": SquaredErrorMetric, "mae": AbsoluteErrorMetric}
CLASSIFICATION_METRICS = ("logloss", "mlogloss", "error", "auc")
REGRESSION_METRICS = ("rmse", "mae")
DEVIANCE_METRICS = ("poisson_deviance", "gamma_deviance")
"""Means of any log-link model's deviances; "tweedie_deviance" is the Tweedie loss's own."""


def _make_metric(name, loss, n_classes: int | None):
    if isinstance(name, CustomMetric):
        return name
    if name == "custom":  # a saved model's function (``model_file``): loads, cannot measure
        return CustomMetric("custom")
    if callable(name):
        return make_metric(name)
    if not isinstance(name, str):
        raise InvalidParameterError(f"eval_metric entries are metric names, make_metric(...) "
                                    f"objects or functions fn(y_true, raw_score); got {name!r}")
    if is_ranking(getattr(loss, "name", "")):
        return _ranking_metric(name, loss)
    if getattr(loss, "name", "").startswith("survival:"):
        return _survival_metric(name, loss)
    if name == loss.metric_name:
        return LossMetric(name, loss)
    if name in DEVIANCE_METRICS and loss.name in LOG_LINK_LOSSES:
        return DevianceMetric(name, loss)
    allowed = CLASSIFICATION_METRICS if n_classes is not None else REGRESSION_METRICS
    if loss.name in LOG_LINK_LOSSES:
        allowed = allowed + DEVIANCE_METRICS
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


def _ranking_metric(name, loss) -> QueryMetric:
    """A ranker's metric: only the per-query ones measure a ranking."""
    metric = query_metric(name, getattr(loss, "exp_gain", True))
    if metric is None:
        raise InvalidParameterError(
            f"eval_metric {name!r} is not a metric of a ranker; choose one of 'ndcg', 'map', "
            f"'mrr', each optionally cut at k (e.g. 'ndcg@10', 'map@5', 'mrr@3')")
    return metric


SURVIVAL_METRICS = ("aft-nloglik", "cox-nloglik", "cindex")


def _survival_metric(name, loss):
    """A survival model's metric: its loss's own negative log-likelihood, or
    Harrell's C-index of its risk (f for Cox, -f for AFT)."""
    own = loss.metric_name
    if name == own == "aft-nloglik":
        return LossMetric(name, loss)
    if name == own == "cox-nloglik":
        return CoxNLogLik()
    if name == "cindex":
        return ConcordanceIndex(risk_sign=1.0 if loss.name == "survival:cox" else -1.0)
    raise InvalidParameterError(
        f"eval_metric {name!r} is not a metric of objective={loss.name!r}; choose "
        f"{own!r} or 'cindex'")


def survival_score(est, margin, y=None, *, event=None, y_lower=None, y_upper=None,
                   metric: str = "cindex") -> float:
    """A fitted ``GradientBoostingSurvivalRegressor``'s ``metric`` of margins f(x)
    computed already (``est.predict(X, output_margin=True)``, e.g. on Dask
    workers) against the rows' labels, as its ``evals_result_`` measures it:
    "cindex" (Harrell's C, as ``est.score``) or the objective's negative
    log-likelihood ("cox-nloglik", "aft-nloglik"). Labels as ``fit`` takes them
    (Cox: y, signed or with ``event``; AFT: ``y_lower`` and ``y_upper``)."""
    y, upper = est._labels(None, y, event, y_lower, y_upper, "")
    target = y if upper is None else IntervalTarget(np.asarray(y, np.float64), upper)
    found = make_metrics(metric, est._make_loss(), None)[0]
    raw = np.asarray(margin, np.float64).reshape(1, -1)
    if raw.shape[1] != len(np.asarray(y)):
        raise ValueError(f"margin has {raw.shape[1]} rows but the labels have "
                         f"{len(np.asarray(y))}; give one label per row")
    return float(found.value(found.partial(target, raw, np.ones(raw.shape[1]))))


# ------------------------------------------------------------------ early stopping
def watched_set(set_names) -> str | None:
    """The evaluation set early stopping watches: the last ``validation_k`` (as
    XGBoost: the last of ``eval_set``), or None without one."""
    sets = [s for s in set_names if s.startswith("validation_")]
    return max(sets, key=lambda s: int(s.rsplit("_", 1)[1])) if sets else None


class EarlyStopping:
    """The early-stopping rule (XGBoost's ``early_stopping_rounds``).

    It watches ``metric`` (the last of ``eval_metric``) on the last evaluation
    set (``watched_set``): lower is better unless ``higher_is_better`` (AUC, or
    a metric of the user's that says so); the best round is the first of equal
    values; training stops when ``patience`` rounds pass without a better one.
    A continued fit replays its model's history first (``replay``), so the rule
    decides across the whole run.

    Attributes
    ----------
    best_round : int or None
        Global index of the best round so far.
    """

    def __init__(self, metric: str | None, higher_is_better: bool = False,
                 patience: int | None = None):
        self.metric, self.patience = metric, patience
        self._sign = -1.0 if higher_is_better else 1.0
        self.best_round, self._best, self._last = None, np.inf, None

    def update(self, round_index: int, metrics: dict) -> bool:
        """Take round ``round_index``'s metrics (``{set: {metric: value}}``);
        True when ``patience`` rounds have passed without improving."""
        watched = watched_set(metrics)
        if watched is None or self.metric not in metrics[watched]:
            return False
        value = self._sign * metrics[watched][self.metric]
        if value < self._best:
            self._best, self.best_round = value, int(round_index)
        self._last = int(round_index)
        return self.exhausted()

    def exhausted(self) -> bool:
        """Whether ``patience`` rounds have passed since the best round."""
        return (bool(self.patience) and self.best_round is not None
                and self._last - self.best_round >= self.patience)

    def replay(self, history: dict, n_rounds: int) -> EarlyStopping:
        """Take the first ``n_rounds`` rounds of ``history`` (``evals_result_``:
        ``{set: {metric: [value per round]}}``)."""
        for r in range(n_rounds):
            self.update(r, {s: {m: v[r] for m, v in ms.items() if len(v) > r}
                            for s, ms in history.items()})
        return self


def should_stop(scores, n_iter_no_change: int, tol: float) -> bool:
    """scikit-learn's rule (``HistGradientBoosting*._should_stop``): True when none
    of the last ``n_iter_no_change`` scores beats the score before them by more
    than ``tol``.

    ``scores`` are higher-is-better (a loss enters negated), one per round,
    oldest first; with fewer than ``n_iter_no_change + 1`` of them, False.

    Examples
    --------
    >>> should_stop([-3.0, -2.0, -2.0, -2.0], 2, 0.0)
    True
    >>> should_stop([-3.0, -2.0, -2.0, -1.5], 2, 0.0)
    False
    >>> should_stop([-3.0, -2.0, -1.95, -1.92], 2, 0.1)
    True
    """
    reference_position = n_iter_no_change + 1
    if len(scores) < reference_position:
        return False
    reference_score = scores[-reference_position] + tol
    return not any(score > reference_score for score in scores[-reference_position + 1:])


class NoChangeStopping:
    """scikit-learn's early stopping (``early_stopping``, ``n_iter_no_change``,
    ``tol``) on the per-round values of ``metric``.

    It watches the last evaluation set (``watched_set``), or the training rows
    (``watched="training"``: scikit-learn's ``validation_fraction=None``). A
    lower-is-better metric is negated into a score; ``should_stop`` decides.
    The rounds stay in the model (scikit-learn keeps every iteration it ran).

    Attributes
    ----------
    scores : list of float
        The watched scores so far (higher is better), oldest first.
    """

    def __init__(self, metric: str | None, higher_is_better: bool, n_iter_no_change: int,
                 tol: float, watched: str | None = None):
        self.metric, self.watched = metric, watched
        self.n_iter_no_change, self.tol = n_iter_no_change, tol
        self._sign = 1.0 if higher_is_better else -1.0
        self.scores: list[float] = []

    def update(self, round_index: int, metrics: dict) -> bool:
        """Take round ``round_index``'s metrics (``{set: {metric: value}}``);
        True when training should stop."""
        watched = self.watched or watched_set(metrics)
        if watched is None or self.metric not in metrics.get(watched, {}):
            return False
        self.scores.append(self._sign * float(metrics[watched][self.metric]))
        return self.exhausted()

    def start(self, value: float) -> None:
        """Take the metric's value before the first round (scikit-learn scores f_0)."""
        self.scores.append(self._sign * float(value))

    def exhausted(self) -> bool:
        """Whether ``should_stop`` holds for the scores so far."""
        return should_stop(self.scores, self.n_iter_no_change, self.tol)

    def replay(self, history: dict, n_rounds: int) -> NoChangeStopping:
        """Take the first ``n_rounds`` rounds of ``history`` (``evals_result_``)."""
        for r in range(n_rounds):
            self.update(r, {s: {m: v[r] for m, v in ms.items() if len(v) > r}
                            for s, ms in history.items()})
        return self
