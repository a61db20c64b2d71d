"""The training loop (``distboost.training.loop.train``) on a real in-process engine:
the order of its calls, what a stop skips, and the waves it sends."""

import dask
import numpy as np

from distboost.engine import Engine, plan
from distboost.kernels.fixed_point import fixed_point_scales
from distboost.kernels.splitting import GradientCriterion, SplitParams
from distboost.learners import GradientLearner
from distboost.learners.gradient import pack_rounds
from distboost.metrics import make_metrics
from distboost.training.loop import STOP, RoundSpec, train
from distboost.trees.losses import SquaredError
from distboost.trees.params import GrowthParams


class Stumps:
    """Least-squares boosting with stumps, recording what ``train`` asks."""

    def __init__(self, engine, stop_after=None, stop_when_measured=None):
        self.engine, self.growth = engine, GrowthParams(max_depth=1, learning_rate=1.0)
        self.loss = SquaredError()
        self.metrics = make_metrics("rmse", self.loss, None)
        self.calls, self.trees = [], []
        self.stop_after, self.stop_when_measured = stop_after, stop_when_measured

    def begin(self, r, update):
        self.calls.append(("begin", r, None if update is None else len(update.roots)))
        scales = fixed_point_scales(self.loss.gradient_bounds(self.engine.y_absmax,
                                                              self.engine.w_max, 10.0),
                                    self.engine.n_rows)
        criterion = GradientCriterion(SplitParams(0.0, 0.0, 0.0, 1), scales)
        learner = GradientLearner(self.loss, scales, n_stats=criterion.n_stats,
                                  metrics=self.metrics)
        features = np.arange(self.engine.schema.n_features)
        return RoundSpec(learner, criterion, features, np.ones((1, len(features)), bool),
                         measure=True)

    def measured(self, r, train_metric, eval_metrics):
        self.calls.append(("measured", r, round(train_metric[0], 6)))
        return r == self.stop_when_measured

    def grown(self, r, trees):
        self.calls.append(("grown", r, trees[0].n_leaves))
        self.trees.append(trees)
        return STOP if r == self.stop_after else pack_rounds([trees], 1)

    def end(self, update):
        self.calls.append(("end", None, len(update.roots)))


def _engine():
    X = np.repeat(np.arange(4.0), 2)[:, None]  # x = 0 0 1 1 2 2 3 3
    y = np.array([0.0, 0.0, 0.0, 0.0, 4.0, 4.0, 4.0, 4.0])
    given = plan(X, y)
    engine = Engine(given.executor)
    engine.prepare(given, True, 16)
    engine.set_rows(GradientLearner(SquaredError()), np.zeros(1), None)
    return engine


def test_rounds_in_order_and_metrics_of_the_model_so_far():
    with _engine() as engine:
        ens = Stumps(engine)
        log = train(engine, ens, range(3))
    # round 0: the stump x <= 1 fits y exactly (leaves 0 and 4): rmse 2 before it, 0 after
    assert ens.calls == [
        ("begin", 0, None), ("grown", 0, 2),
        ("begin", 1, 1), ("measured", 0, 0.0), ("grown", 1, 1),
        ("begin", 2, 1), ("measured", 1, 0.0), ("grown", 2, 1),
        ("end", None, 1),
    ]
    assert [t[0].nodes["value"][1:].tolist() for t in ens.trees[:1]] == [[0.0, 4.0]]
    # a stump's leaves come from its root histogram (the statistics hold the row
    # counts), so no level wave; the later stumps do not split
    assert (log.n_rounds, log.n_levels, log.stopped) == (3, 0, False)


def test_a_stop_from_the_metrics_skips_the_round_and_the_end():
    with _engine() as engine:
        ens = Stumps(engine, stop_when_measured=0)
        log = train(engine, ens, range(5))
    assert ens.calls[-1] == ("measured", 0, 0.0) and len(ens.trees) == 1
    assert log.stopped and log.n_rounds == 1


def test_a_stop_from_the_trees_ends_after_that_round_without_the_end():
    with _engine() as engine:
        ens = Stumps(engine, stop_after=1)
        log = train(engine, ens, range(5))
    assert ens.calls[-1] == ("grown", 1, 1) and log.n_rounds == 2 and not log.stopped


class DeferredStumps(Stumps):
    """Stumps on (g, h) statistics, whose one level routes only to count its
    children: ``defer_counts`` leaves it to the next round start."""

    def begin(self, r, update):
        spec = super().begin(r, update)
        criterion = GradientCriterion(SplitParams(0.0, 0.0, 1e-9, 1), spec.learner.scales,
                                      counts=False)
        learner = GradientLearner(self.loss, spec.learner.scales, n_stats=2, metrics=self.metrics)
        return RoundSpec(learner, criterion, spec.features, spec.masks, measure=True,
                         defer_counts=True)

    def grown(self, r, trees):
        self.calls.append(("grown", r, trees[0].nodes["count"].tolist()))
        self.trees.append(trees)
        return STOP if r == self.stop_after else pack_rounds([trees], 1)

    def completed(self, r, trees):
        self.calls.append(("completed", r, trees[0].nodes["count"].tolist()))
        self.trees[r] = trees


def test_a_count_only_last_level_rides_with_the_next_round_start():
    """The first stump (x <= 1) needs its children's rows from the workers;
    it comes -1 from the grower, and final (4 and 4 rows) from the next round
    start, before the round's metrics; the last round's come from a level
    wave of its own, before the end. The later stumps do not split. (In
    process too, the trees grow wave by wave here, as on Dask.)"""
    with dask.config.set({"distboost.local-grower": False}), _engine() as engine:
        ens = DeferredStumps(engine)
        log = train(engine, ens, range(3))
    assert ens.calls == [
        ("begin", 0, None), ("grown", 0, [8, -1, -1]),
        ("begin", 1, 1), ("completed", 0, [8, 4, 4]), ("measured", 0, 0.0), ("grown", 1, [8]),
        ("begin", 2, 1), ("measured", 1, 0.0), ("grown", 2, [8]),
        ("end", None, 1),
    ]
    assert log.n_levels == 0
    with dask.config.set({"distboost.local-grower": False}), _engine() as engine:
        ens = DeferredStumps(engine, stop_after=0)
        log = train(engine, ens, range(3))
    assert ens.calls == [("begin", 0, None), ("grown", 0, [8, -1, -1]),
                         ("completed", 0, [8, 4, 4])]
    assert log.n_levels == 1  # the deferred level, sent on its own after the stop
    with dask.config.set({"distboost.local-grower": False}), _engine() as engine:
        ens = DeferredStumps(engine)
        log = train(engine, ens, range(1))
    assert ens.calls == [("begin", 0, None), ("grown", 0, [8, -1, -1]),
                         ("completed", 0, [8, 4, 4]), ("end", None, 1)]
    assert log.n_levels == 1
