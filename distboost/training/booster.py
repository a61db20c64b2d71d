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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine import TRAIN, eval_key
from ..kernels.fixed_point import fixed_point_scales
from ..kernels.sampling import NodeFeatures, feature_masks
from ..kernels.splitting import GradientCriterion, SplitParams
from ..kernels.tree import largest_leaf
from ..learners.dart import DartLearner, scaled_rounds
from ..learners.gradient import GradientLearner, pack_rounds
from ..metrics import EarlyStopping, NoChangeStopping
from ..trees.params import GrowthParams
from . import dart, line_search, objective, survival, vector_leaves
from .events import eval_set_names
from .loop import RoundSpec, train


@dataclass(frozen=True)
class BoostSpec:
    """One gradient boosting fit: the objective, f_0, the rounds and how their
    trees grow, the metrics and the stopping rules."""

    loss: Any  # a ``trees.losses`` loss or an ``objective.CustomObjective``
    n_outputs: int  # trees per round (K for K > 2 classes)
    base_score: np.ndarray | None  # f_0; None: the loss's optimal constant, from the data
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
    prior_trees: tuple = ()  # the rounds of the model continued (``init_model``)
    prior_evals: dict | None = None  # that model's ``evals_result_``
    dart: Any = None  # ``dart.DartParams``: DART's dropout; None: gradient boosting (gbtree)
    prior_weights: np.ndarray | None = None  # DART: the prior trees' weights (None: 1 each)
    vector_leaves: bool = False  # one vector-leaf tree per round for the n_outputs (``vector_leaves``)


@dataclass(frozen=True)
class BoostHooks:
    """What a fit calls after each round, besides training: ``on_round(r, metrics)``
    (True stops); ``callbacks``' ``after_iteration(model, r, evals_log)`` with
    ``snapshot(result)``, the model of the rounds so far; and the ``events``."""

    on_round: Callable[[int, dict], bool] | None = None
    callbacks: tuple = ()  # ``callbacks.TrainingCallback`` objects
    snapshot: Callable[[BoostResult], Any] | None = None
    events: Any = None  # ``events.FitEvents``


@dataclass
class BoostResult:
    """The model a fit trained: ``prior_trees`` (a continued model's) and then
    this fit's rounds, filled round by round (callbacks see the model so far)."""

    loss: Any = None
    base_score: np.ndarray | None = None  # f_0
    prior_trees: list = field(default_factory=list)
    trees: list = field(default_factory=list)  # per round of this fit: list of K trees
    history: dict = field(default_factory=dict)  # ``evals_result_``: set -> metric -> per round
    eval_sets: list = field(default_factory=list)  # the validation sets' names
    metric_names: list = field(default_factory=list)
    best_iteration: int | None = None  # global round index (early stopping)
    keep: int | None = None  # rounds the model keeps, prior rounds included (early stopping)
    stopped_by: str | None = None  # "early_stopping_rounds" or "n_iter_no_change", if one stopped
    scores: list | None = None  # scikit-learn's early stopping: its scores, f_0's first
    tree_weights: np.ndarray | None = None  # DART: every tree's weight now, round by round
    best_weights: np.ndarray | None = None  # DART: the weights after the best round

    def model_trees(self) -> list:
        """Every round the model keeps: the prior ones, then this fit's, up to ``keep``."""
        return (self.prior_trees + self.trees)[:self.keep]

    def model_weights(self) -> np.ndarray | None:
        """DART: the weights of the trees the model keeps, shape (rounds, K), as
        they were after its last round (early stopping: after the best round,
        the model that scored best); None for gradient boosting."""
        if self.tree_weights is None:
            return None
        k = len(self.base_score)
        weights = self.tree_weights
        if self.keep is not None and self.best_weights is not None:
            weights = self.best_weights
        return weights[:len(self.model_trees()) * k].reshape(-1, k)

    def evals_result(self) -> dict:
        """``evals_result_``: set -> metric -> value per round."""
        history = self.history
        return {
            name: {m: list(history.get(name, {}).get(m, [])) for m in self.metric_names}
            for name in self.eval_sets + (["training"] if "training" in history else [])
        }


def round_metrics(names, train_values, eval_values) -> dict[str, dict[str, float]]:
    """``{"training": {name: value}, "validation_k": {name: value}}``: one round's
    metrics, named as in ``evals_result_`` (``train_values`` None: not measured)."""
    out = {} if train_values is None else {"training": dict(zip(names, train_values))}
    for name, values in zip(eval_set_names(len(eval_values)), eval_values):
        out[name] = dict(zip(names, values))
    return out


def initial_score(engine, loss) -> np.ndarray:
    """f_0 (ESL Algorithm 10.3, step 1): exact sums, or an exact weighted quantile of y."""
    if loss.init_quantile is not None:
        return np.array([line_search.init_quantile(engine, loss.init_quantile)])
    return engine.init_score(loss)


def prior_history(old: dict, n_rounds: int, sets: list, metric_names: list,
                  train_metric: bool) -> dict:
    """The metrics ``old`` (a continued model's ``evals_result_``) holds for its
    ``n_rounds`` rounds, where they were measured as this fit measures: the same
    evaluation sets (and ``training`` when it is measured) and metrics, every
    round. A continued fit's ``evals_result_`` and early stopping then span both
    fits; otherwise (other sets or metrics) they start with this fit's rounds."""
    wanted = sets + (["training"] if train_metric else [])
    if not wanted:
        return {}
    usable = all(
        list(old.get(s, {})) == metric_names
        and all(len(old[s][m]) >= n_rounds for m in metric_names)
        for s in wanted
    )
    if not usable:
        return {}
    return {s: {m: [float(v) for v in old[s][m][:n_rounds]] for m in metric_names}
            for s in wanted}


class _Tracker:
    """Metrics per round, the early-stopping rules (``metrics.EarlyStopping``,
    ``metrics.NoChangeStopping``), the hooks and the round events.

    ``result.history`` may start with the rounds of the model being continued
    (``first`` of them); the rules replay them, so they decide across both.
    """

    def __init__(self, spec: BoostSpec, hooks: BoostHooks, result: BoostResult):
        self.result, self.hooks = result, hooks
        self.first = len(result.prior_trees)
        self.names = result.metric_names
        last = spec.metrics[-1] if spec.metrics else None
        name, higher = getattr(last, "name", None), bool(getattr(last, "higher_is_better", False))
        self.rule = EarlyStopping(name, higher, spec.early_stopping_rounds)
        self.rule.replay(result.history, self.first)
        self.no_change = None
        if spec.n_iter_no_change:
            self.no_change = NoChangeStopping(name, higher, spec.n_iter_no_change, spec.tol,
                                              spec.no_change_set)
            self.no_change.replay(result.history, self.first)

    def record(self, r, train_values, eval_values) -> bool:
        """Record round r's metrics; True if training should stop."""
        res, hooks = self.result, self.hooks
        metrics = round_metrics(self.names, train_values, eval_values)
        for set_name, values in metrics.items():
            for name, value in values.items():
                res.history.setdefault(set_name, {}).setdefault(name, []).append(value)
        if hooks.events is not None:
            hooks.events.round(r, metrics, res.trees[r - self.first])
        stop = self._call_hooks(r, metrics)
        if self.rule.patience and self.rule.update(r, metrics):
            res.stopped_by, stop = "early_stopping_rounds", True
        if self.no_change is not None and self.no_change.update(r, metrics):
            res.stopped_by = res.stopped_by or "n_iter_no_change"
            stop = True
        return stop

    def _call_hooks(self, r, metrics) -> bool:
        """``on_round``, then the callbacks with the model of the rounds so far."""
        hooks = self.hooks
        stop = bool(hooks.on_round(r, metrics)) if hooks.on_round else False
        if hooks.callbacks:
            model = hooks.snapshot(self.result)
            stops = [bool(cb.after_iteration(model, r, model.evals_result_))
                     for cb in hooks.callbacks]
            stop = stop or any(stops)
        return stop

    def listens(self) -> bool:
        """Whether anything hears of a round that measured nothing."""
        hooks = self.hooks
        return bool(hooks.on_round or hooks.callbacks or hooks.events is not None)

    def exhausted(self) -> bool:
        """Whether a rule had already stopped the run in the replayed rounds."""
        return self.rule.exhausted() or (self.no_change is not None
                                         and self.no_change.exhausted())


def train_boosting(engine, spec: BoostSpec, hooks: BoostHooks) -> BoostResult:
    """ESL Algorithm 10.3 on the prepared engine: f_0 (unless given), the rows'
    margins from f_0 and the prior rounds, then rounds ``len(prior_trees) ..
    len(prior_trees) + n_rounds - 1``.

    After each round ``hooks`` hear of its metrics (``round_metrics``); early
    stopping watches the prior rounds' metrics too (a model whose patience ran
    out adds no round).
    """
    base = initial_score(engine, spec.loss) if spec.base_score is None else spec.base_score
    prior = list(spec.prior_trees)
    packed = pack_rounds(prior, spec.n_outputs) if prior else None
    if prior and spec.prior_weights is not None:  # a DART model's trees, with their weights
        packed = scaled_rounds([t for r in prior for t in r], np.ravel(spec.prior_weights),
                               packed.outputs)
    engine.set_rows(GradientLearner(spec.loss), base, packed)
    result = _empty_result(engine, spec, base)
    if hooks.events is not None:
        last = spec.metrics[-1]
        hooks.events.start(spec.n_rounds, len(prior), last.name, len(engine.eval_groups),
                           last.higher_is_better, result.history)
    return _boost(engine, spec, hooks, result)


def _empty_result(engine, spec: BoostSpec, base) -> BoostResult:
    """The result before any round: the prior rounds and, where they were
    measured as this fit measures, their metrics (``prior_history``)."""
    sets = eval_set_names(len(engine.eval_groups))
    names = [m.name for m in spec.metrics]
    prior = list(spec.prior_trees)
    history = {} if spec.prior_evals is None else prior_history(
        spec.prior_evals, len(prior), sets, names, spec.train_metric)
    return BoostResult(spec.loss, base, prior, history=history, eval_sets=sets,
                       metric_names=names)


def _boost(engine, spec: BoostSpec, hooks: BoostHooks, result: BoostResult) -> BoostResult:
    """The rounds, the early-stopping decision and the end event."""
    tracker = _Tracker(spec, hooks, result)
    first = tracker.first
    if tracker.no_change is not None and first == 0:  # scikit-learn scores f_0 too
        tracker.no_change.start(_initial_value(engine, spec.loss, spec))
    n_rounds = 0 if tracker.exhausted() else spec.n_rounds
    boosting = _Boosting(engine, spec, result.base_score, tracker)
    train(engine, boosting, range(first, first + n_rounds))
    if tracker.rule.best_round is not None and spec.early_stopping_rounds:
        result.best_iteration = tracker.rule.best_round
        result.keep = result.best_iteration + 1
    if tracker.no_change is not None:
        result.scores = list(tracker.no_change.scores)
    if hooks.events is not None:
        hooks.events.end(first + len(result.trees) if result.keep is None else result.keep)
    return result


class _Boosting:
    """ESL Algorithm 10.3 as a ``training.Ensemble``: each round fits K trees to
    the gradients at the current margins; its trees are the next update."""

    def __init__(self, engine, spec: BoostSpec, base_score, tracker: _Tracker):
        self.engine, self.loss, self.n_outputs = engine, spec.loss, spec.n_outputs
        self.params = spec
        self.growth, self.tracker = spec.growth, tracker
        self.margin_bound = float(np.max(np.abs(base_score)))
        for round_trees in spec.prior_trees:  # the same float sum as when those rounds were trained
            self.margin_bound += _max_leaf([round_trees])
        self.line = spec.leaf_estimation == "line_search"
        self.counts = GradientCriterion.counts_needed(spec.split)  # else (g, h): one add fewer
        self.loss_r = spec.loss
        self.dropout = None
        if spec.dart is not None:
            n_prior = len(spec.prior_trees) * spec.n_outputs
            weights = np.ones(n_prior) if spec.prior_weights is None else spec.prior_weights
            self.dropout = dart.Dropout(spec.dart, spec.seed, spec.n_outputs,
                                        spec.growth.learning_rate, np.ravel(weights))
            tracker.result.tree_weights = self.dropout.weights
            if tracker.rule.best_round is not None:  # a continued model's best: its weights
                tracker.result.best_weights = self.dropout.weights

    def begin(self, r, update) -> RoundSpec:
        """Gradients at the margins after ``update``: this round's loss (Huber's
        delta), fixed-point scales, column subsamples."""
        p = self.params
        self.loss_r = _round_loss(self.engine, self.loss, update)
        drop = None if self.dropout is None else self.dropout.choose(r, self._rounds())
        scales = _scales(self.engine, self.loss_r, self.margin_bound, self.line, update, r, drop,
                         self.dropout is not None)
        if p.vector_leaves:
            criterion, learner = vector_leaves.round_parts(self.engine, self.loss_r, p, scales)
        else:
            criterion = GradientCriterion(p.split, scales, self.counts)
            learner = self._learner(self.loss_r, scales, criterion.n_stats, p.metrics, drop)
        masks = feature_masks(1 if p.vector_leaves else self.n_outputs,
                              self.engine.schema.n_features, p.colsample_bytree, p.seed, r)
        return RoundSpec(learner, criterion, np.flatnonzero(masks.any(axis=0)), masks,
                         _node_features(p, masks, r), measure=p.train_metric,
                         defer_counts=self._may_defer_counts(criterion))

    def _may_defer_counts(self, criterion) -> bool:
        """Whether the last level's counts may come with the next round start
        (``TreeGrower``'s ``defer_counts``): Newton leaves, statistics without
        counts, every row in every round (weights > 0, no row sampling), and
        no evaluation rows, whose trees must be final when they are added."""
        return (not self.line and isinstance(criterion, GradientCriterion)
                and criterion.n_stats == 2 and self.params.subsample >= 1.0
                and self.engine.w_min > 0 and not self.engine.eval_groups)

    def _learner(self, loss, scales, n_stats, metrics, drop):
        """The round's row statistics: ``GradientLearner``'s, or DART's at the
        margins without the dropped trees (``drop``)."""
        p = self.params
        if self.dropout is None:
            return GradientLearner(loss, scales, p.seed, p.subsample, self.line, n_stats, metrics)
        return DartLearner(loss, scales, p.seed, p.subsample, self.line, n_stats, metrics,
                           drop, self.n_outputs)

    def _rounds(self) -> list:
        return self.tracker.result.prior_trees + self.tracker.result.trees

    def measured(self, r, train_metric, eval_metrics) -> bool:
        stop = self.tracker.record(r, train_metric, eval_metrics)
        self._note_best(r)
        return stop

    def _note_best(self, r) -> None:
        """DART: the weights of the model measured at round ``r`` when it is the best
        so far (early stopping keeps that model: its trees with those weights)."""
        if self.dropout is not None and self.tracker.rule.best_round == r:
            self.tracker.result.best_weights = self.dropout.weights

    def grown(self, r, trees):
        """Line-search leaves if asked (ESL Algorithm 10.3, 2(c)); the trees are the update."""
        if self.line:
            trees = _line_search(self.engine, self.loss_r, trees, self.n_outputs, self.growth)
        if self.params.vector_leaves:
            trees = vector_leaves.split_outputs(trees[0], self.growth.learning_rate)
        self.tracker.result.trees.append(trees)
        self.margin_bound += _max_leaf([trees])  # DART's weights are <= 1: still a bound
        if self.dropout is not None:
            update = self.dropout.update(self._rounds())
            self.tracker.result.tree_weights = self.dropout.weights
            return update
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
            learner = (GradientLearner(self.loss, metrics=self.params.metrics)
                       if self.dropout is None else
                       DartLearner(self.loss, metrics=self.params.metrics, n_grown=self.n_outputs))
            tm, evals = self.engine.finish(learner, update, self.params.train_metric)
            self.tracker.record(last, tm, evals)
            self._note_best(last)
        elif self.tracker.listens():
            self.tracker.record(last, None, [])


def _initial_value(engine, loss, params: BoostSpec) -> float:
    """The watched metric at f_0, before any tree: on the training rows or the
    last evaluation set (``params.no_change_set``)."""
    learner = GradientLearner(loss, metrics=params.metrics)
    key = TRAIN if params.no_change_set == "training" else eval_key(engine.n_eval_sets - 1)
    return engine.measure(learner, key)[-1]


def _round_loss(engine, loss, pending_packed):
    """The loss of this round: Huber's delta from the residuals at its start;
    Cox's risk-set tables (``survival.cox_round``)."""
    if getattr(loss, "risk_sets", False):
        return survival.cox_round(engine, loss, pending_packed)
    if not hasattr(loss, "with_delta"):
        return loss
    t0 = time.perf_counter()
    delta = line_search.huber_delta(engine, loss.alpha, pending_packed)
    engine.timings["line_search"] += time.perf_counter() - t0
    return loss.with_delta(delta)


def _scales(engine, loss, margin_bound, first_order, pending=None, round_index=0, drop=None,
            per_tree=False):
    """Fixed-point scales of g and h (h = w for line-search trees).

    From driver-side bounds (``loss.gradient_bounds``: the margins can move
    at most ``margin_bound``), or from one exact pass over the rows: the
    margins' range for the log-link losses, the gradients' range for a
    user's objective (``objective``); a ranker's from its largest query; with
    DART's dropped trees (``drop``) taken out of the margins as the round's
    statistics take them. ``per_tree``
    (DART): ``pending`` may add several trees to one output, so each tree's
    leaves widen the margins' range.
    """
    t0 = time.perf_counter()
    if getattr(loss, "query_bounds", False):
        g_bound, h_bound = loss.query_gradient_bounds(engine.w_max, engine.max_query_rows)
    elif getattr(loss, "gradient_range_pass", False):
        g_bound, h_bound = objective.gradient_range(engine, loss, dart.joined(pending, drop),
                                                    round_index)
    elif loss.margin_range_bounds:
        f_lo, f_hi = (dart.widened(*objective.margin_range(engine, None),
                                   dart.joined(pending, drop))
                      if per_tree else objective.margin_range(engine, pending))
        g_bound, h_bound = loss.gradient_bounds_in(engine.y_absmax, engine.w_max, f_lo, f_hi)
    else:
        g_bound, h_bound = loss.gradient_bounds(engine.y_absmax, engine.w_max, margin_bound)
    engine.timings["gradient_range"] += time.perf_counter() - t0
    return fixed_point_scales((g_bound, engine.w_max if first_order else h_bound), engine.n_rows)


def _node_features(params: BoostSpec, masks, round_index):
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
    return float(sum(max((largest_leaf(t.nodes) for t in rt), default=0.0) for rt in rounds))
