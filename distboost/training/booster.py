"""Forward stagewise additive modelling on the engine (ESL Algorithm 10.3).

Each round: gradients at the current margins (computed where the data live),
one tree per output grown from histograms of (g, h), leaf values
-G/(H+lambda) shrunk by the learning rate. The margin update of round r is
fused with the start of round r+1, so a round of depth-D trees costs D waves
of tasks. Random draws (row and column subsampling) are functions of
(random_state, round) and of the global row id, never of the partitioning.

With ``leaf_estimation="line_search"`` (ESL Algorithm 10.3) the trees are grown
on (g, w) instead and each leaf value is then re-estimated by the loss's line
search (``line_search``: a few more waves per round, exact across
partitions). Huber's delta is the alpha-quantile of |y - f| at the start of
each round (Friedman 2001), found exactly before the round's gradients.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..engine import TRAIN, eval_key
from ..kernels.fixed_point import fixed_point_scales
from ..kernels.sampling import NodeFeatures, feature_masks
from ..kernels.splitting import GradientCriterion, SplitParams
from ..learners.gradient import GradientLearner, pack_rounds
from ..metrics import EarlyStopping, NoChangeStopping
from ..trees.params import GrowthParams
from . import line_search, objective
from .loop import RoundSpec, train


@dataclass
class BoostParams:
    n_rounds: int
    growth: GrowthParams
    split: SplitParams
    seed: int = 0
    subsample: float = 1.0
    colsample_bytree: float = 1.0
    colsample_bylevel: float = 1.0
    colsample_bynode: float = 1.0
    leaf_estimation: str = "newton"  # or "line_search"
    early_stopping_rounds: int | None = None
    train_metric: bool = False
    metrics: tuple = ()  # ``metrics.make_metrics``; the last one decides early stopping
    n_iter_no_change: int | None = None  # scikit-learn's rule (``metrics.NoChangeStopping``)
    tol: float = 0.0
    no_change_set: str | None = None  # its watched set: None, the last validation set


@dataclass
class BoostResult:
    trees: list = field(default_factory=list)  # per round of this fit: list of K trees
    history: dict = field(default_factory=dict)  # ``evals_result_``: set -> metric -> per round
    best_iteration: int | None = None  # global round index (early stopping)
    keep: int | None = None  # rounds the model keeps, prior rounds included (early stopping)
    stopped_by: str | None = None  # "early_stopping_rounds" or "n_iter_no_change", if one stopped
    scores: list | None = None  # scikit-learn's early stopping: its scores, f_0's first


def round_metrics(names, train_values, eval_values) -> dict[str, dict[str, float]]:
    """``{"training": {name: value}, "validation_k": {name: value}}``: one round's
    metrics, named as in ``evals_result_`` (``train_values`` None: not measured)."""
    out = {} if train_values is None else {"training": dict(zip(names, train_values))}
    for k, values in enumerate(eval_values):
        out[f"validation_{k}"] = dict(zip(names, values))
    return out


class _Tracker:
    """Metrics per round, the early-stopping rule (``metrics.EarlyStopping``)
    and the round events.

    ``result.history`` may start with the rounds of the model being continued
    (``first`` of them); the rule replays them, so it decides across both.
    """

    def __init__(self, metrics, patience, on_round, events=None, first=0, result=None,
                 no_change=None):
        self.result = BoostResult() if result is None else result
        self.names = [m.name for m in metrics]
        last = metrics[-1] if metrics else None
        name, higher = getattr(last, "name", None), bool(getattr(last, "higher_is_better", False))
        self.rule = EarlyStopping(name, higher, patience)
        self.rule.replay(self.result.history, first)
        self.no_change = None
        if no_change is not None and no_change[0]:
            self.no_change = NoChangeStopping(name, higher, *no_change)
            self.no_change.replay(self.result.history, first)
        self.on_round = on_round
        self.events, self.first = events, first

    def record(self, r, train_values, eval_values) -> bool:
        """Record round r's metrics; True if training should stop."""
        res = self.result
        metrics = round_metrics(self.names, train_values, eval_values)
        for set_name, values in metrics.items():
            for name, value in values.items():
                res.history.setdefault(set_name, {}).setdefault(name, []).append(value)
        if self.events is not None:
            self.events.round(r, metrics, res.trees[r - self.first])
        stop = bool(self.on_round(r, metrics)) if self.on_round else False
        if self.rule.patience and self.rule.update(r, metrics):
            res.stopped_by, stop = "early_stopping_rounds", True
        if self.no_change is not None and self.no_change.update(r, metrics):
            res.stopped_by = res.stopped_by or "n_iter_no_change"
            stop = True
        return stop

    def exhausted(self) -> bool:
        """Whether a rule had already stopped the run in the replayed rounds."""
        return self.rule.exhausted() or (self.no_change is not None
                                         and self.no_change.exhausted())


def boost(engine, loss, n_outputs: int, params: BoostParams, base_score, prior_trees=(),
          on_round=None, events=None, result=None) -> BoostResult:
    """Run rounds ``len(prior_trees) .. len(prior_trees) + n_rounds - 1``.

    ``on_round(round_index, metrics)`` is called after each round with its
    metrics (``round_metrics``); returning True stops training. ``events``
    (``_events.FitEvents``) posts each round with its own metrics. ``result``,
    if given, is the ``BoostResult`` filled in round by round (and returned),
    so that ``on_round`` can read the trees and metrics so far; its
    ``history`` may hold the prior rounds' metrics, which early stopping
    then watches too (a model whose patience ran out adds no round).
    """
    first = len(prior_trees)
    no_change = (params.n_iter_no_change, params.tol, params.no_change_set)
    tracker = _Tracker(params.metrics, params.early_stopping_rounds, on_round, events, first,
                       result, no_change)
    if tracker.no_change is not None and first == 0:  # scikit-learn scores f_0 too
        tracker.no_change.start(_initial_value(engine, loss, params))
    n_rounds = 0 if tracker.exhausted() else params.n_rounds
    boosting = _Boosting(engine, loss, n_outputs, params, base_score, prior_trees, tracker)
    train(engine, boosting, range(first, first + n_rounds))
    res = tracker.result
    if tracker.rule.best_round is not None and params.early_stopping_rounds:
        res.best_iteration = tracker.rule.best_round
        res.keep = res.best_iteration + 1
    if tracker.no_change is not None:
        res.scores = list(tracker.no_change.scores)
    if events is not None:
        events.end(first + len(res.trees) if res.keep is None else res.keep)
    return res


class _Boosting:
    """ESL Algorithm 10.3 as a ``training.Ensemble``: each round fits K trees to
    the gradients at the current margins; its trees are the next update."""

    def __init__(self, engine, loss, n_outputs, params: BoostParams, base_score, prior_trees,
                 tracker: _Tracker):
        self.engine, self.loss, self.n_outputs, self.params = engine, loss, n_outputs, params
        self.growth, self.tracker = params.growth, tracker
        self.margin_bound = float(np.max(np.abs(base_score)))
        for round_trees in prior_trees:  # the same float sum as when those rounds were trained
            self.margin_bound += _max_leaf([round_trees])
        self.line = params.leaf_estimation == "line_search"
        self.counts = GradientCriterion.counts_needed(params.split)  # else (g, h): one add fewer
        self.loss_r = loss

    def begin(self, r, update) -> RoundSpec:
        """Gradients at the margins after ``update``: this round's loss (Huber's
        delta), fixed-point scales, column subsamples."""
        p = self.params
        self.loss_r = _round_loss(self.engine, self.loss, update)
        scales = _scales(self.engine, self.loss_r, self.margin_bound, self.line, update, r)
        criterion = GradientCriterion(p.split, scales, self.counts)
        learner = GradientLearner(self.loss_r, scales, p.seed, p.subsample, self.line,
                                  criterion.n_stats, p.metrics)
        masks = feature_masks(self.n_outputs, self.engine.schema.n_features, p.colsample_bytree,
                              p.seed, r)
        return RoundSpec(learner, criterion, np.flatnonzero(masks.any(axis=0)), masks,
                         _node_features(p, masks, r), measure=p.train_metric,
                         defer_counts=self._may_defer_counts(criterion))

    def _may_defer_counts(self, criterion) -> bool:
        """Whether the last level's counts may come with the next round start
        (``TreeGrower``'s ``defer_counts``): Newton leaves, statistics without
        counts, every row in every round (weights > 0, no row sampling), and
        no evaluation rows, whose trees must be final when they are added."""
        return (not self.line and criterion.n_stats == 2 and self.params.subsample >= 1.0
                and self.engine.w_min > 0 and not self.engine.eval_groups)

    def measured(self, r, train_metric, eval_metrics) -> bool:
        return self.tracker.record(r, train_metric, eval_metrics)

    def grown(self, r, trees):
        """Line-search leaves if asked (ESL Algorithm 10.3, 2(c)); the trees are the update."""
        if self.line:
            trees = _line_search(self.engine, self.loss_r, trees, self.n_outputs, self.growth)
        self.tracker.result.trees.append(trees)
        self.margin_bound += _max_leaf([trees])
        return pack_rounds([trees], self.n_outputs)

    def completed(self, r, trees):
        """Round ``r``'s trees with their last level's counts (``defer_counts``)."""
        self.tracker.result.trees[r - self.tracker.first] = trees

    def end(self, update) -> None:
        """The last round's metrics: one more wave adds its trees where they are measured."""
        if update is None:
            return
        last = self.tracker.first + len(self.tracker.result.trees) - 1
        if self.params.train_metric or self.engine.eval_groups:
            learner = GradientLearner(self.loss, metrics=self.params.metrics)
            tm, evals = self.engine.finish(learner, update, self.params.train_metric)
            self.tracker.record(last, tm, evals)
        elif self.tracker.on_round is not None or self.tracker.events is not None:
            self.tracker.record(last, None, [])


def _initial_value(engine, loss, params: BoostParams) -> float:
    """The watched metric at f_0, before any tree: on the training rows or the
    last evaluation set (``params.no_change_set``)."""
    learner = GradientLearner(loss, metrics=params.metrics)
    key = TRAIN if params.no_change_set == "training" else eval_key(engine.n_eval_sets - 1)
    return engine.measure(learner, key)[-1]


def _round_loss(engine, loss, pending_packed):
    """The loss of this round: Huber's delta from the residuals at its start."""
    if not hasattr(loss, "with_delta"):
        return loss
    t0 = time.perf_counter()
    delta = line_search.huber_delta(engine, loss.alpha, pending_packed)
    engine.timings["line_search"] += time.perf_counter() - t0
    return loss.with_delta(delta)


def _scales(engine, loss, margin_bound, first_order, pending=None, round_index=0):
    """Fixed-point scales of g and h (h = w for line-search trees).

    From driver-side bounds (``loss.gradient_bounds``: the margins can move
    at most ``margin_bound``), or from one exact pass over the rows: the
    margins' range for the log-link losses, the gradients' range for a
    user's objective (``objective``).
    """
    t0 = time.perf_counter()
    if getattr(loss, "gradient_range_pass", False):
        g_bound, h_bound = objective.gradient_range(engine, loss, pending, round_index)
    elif loss.margin_range_bounds:
        f_lo, f_hi = objective.margin_range(engine, pending)
        g_bound, h_bound = loss.gradient_bounds_in(engine.y_absmax, engine.w_max, f_lo, f_hi)
    else:
        g_bound, h_bound = loss.gradient_bounds(engine.y_absmax, engine.w_max, margin_bound)
    engine.timings["gradient_range"] += time.perf_counter() - t0
    return fixed_point_scales((g_bound, engine.w_max if first_order else h_bound), engine.n_rows)


def _node_features(params: BoostParams, masks, round_index):
    if params.colsample_bylevel >= 1.0 and params.colsample_bynode >= 1.0:
        return None
    return NodeFeatures(masks, params.colsample_bylevel, params.colsample_bynode, params.seed,
                        round_index)


def _line_search(engine, loss, trees, n_outputs, growth: GrowthParams):
    """Leaf values by the loss's line search (ESL Algorithm 10.3, step 2(c))."""
    t0 = time.perf_counter()
    trees = line_search.leaf_values(engine, loss, trees, pack_rounds([trees], n_outputs),
                                    growth.learning_rate, growth.monotonic_cst)
    engine.timings["line_search"] += time.perf_counter() - t0
    return trees


def _max_leaf(rounds) -> float:
    """Largest |leaf value| a round can add to a margin, summed over rounds."""
    return float(sum(
        max((np.abs(t.nodes["value"][t.nodes["is_leaf"] == 1]).max() for t in rt), default=0.0)
        for rt in rounds
    ))
