"""The training loop every ensemble runs on the engine.

Gradient boosting (ESL Algorithm 10.3), AdaBoost (ESL Algorithm 10.1; SAMME)
and bagged trees (forests, bagging, pasting) are all rounds of

1. one wave: the row states take the previous round's update (margins plus
   the last trees; reweighted rows; out-of-bag sums), and the root
   histograms of this round's learner are built (``Engine.start_round``);
   metrics of the model so far come back with it;
2. the round's trees grow level by level from the histograms
   (``trees.grower.TreeGrower``, one wave per level); or, with every row in this
   process, in one compiled call where the rows are (``Engine.grow_here``,
   ``kernels.local_grower``: the same trees);
3. the ensemble turns the trees into the next update.

An ``Ensemble`` says what changes: each round's learner, criterion and
features (``begin``), what the metrics decide (``measured``), and the update
(``grown``). ``train`` runs the rounds; the ensemble keeps its own trees.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..trees.evaluation import SplitFinder
from ..trees.grower import LevelBlocks, TreeGrower
from ..trees.params import Criterion, GrowthParams


@dataclass
class RoundSpec:
    """What round ``r`` grows.

    Parameters
    ----------
    learner : learners.Learner
        The row statistics of the round (and its metrics, if measured).
    criterion : trees.params.Criterion
    features : ndarray of int
        Features of the root histograms (those any tree of the round may use).
    masks : ndarray of shape (n_trees, n_features), bool
        Features each tree may split on.
    node_features : callable, optional
        The grower's per-node feature hook (``sampling``).
    round_index : int, optional
        The round number the engine gives the waves and the learner (by
        default the loop's; forests number a batch by its first tree).
    measure : bool
        Whether the training rows' metrics of the model so far come back.
    defer_counts : bool
        Whether the trees' last level, when only its row counts are wanted,
        may ride with the next round start instead of a wave of its own
        (``trees.deferred``, with its conditions); the ensemble then gets
        the final trees through ``completed``.
    """

    learner: Any
    criterion: Criterion
    features: np.ndarray
    masks: np.ndarray
    node_features: Any = None
    round_index: int | None = None
    measure: bool = False
    defer_counts: bool = False


class Stop:
    """``Ensemble.grown``'s answer to end training after this round."""


STOP = Stop()


class Ensemble(Protocol):
    """What ``train`` asks of an ensemble, round by round."""

    growth: GrowthParams

    def begin(self, r: int, update) -> RoundSpec:
        """Round ``r``'s learner, criterion and features; ``update`` is the
        previous round's (not applied yet: the round-start wave applies it)."""

    def measured(self, r: int, train_metric, eval_metrics) -> bool:
        """Round ``r``'s metrics (measured at the next round's start); True stops."""

    def grown(self, r: int, trees: list):
        """The update the round's ``trees`` make (``STOP``: end training here).
        With ``defer_counts``, the trees may still miss their last level's
        counts (``completed`` follows, before any metric of the round)."""

    def completed(self, r: int, trees: list) -> None:
        """Round ``r``'s final trees, when ``grown`` had them before their
        last level's counts (only asked of ensembles that set ``defer_counts``)."""

    def end(self, update) -> None:
        """After the last round (not after a stop decided by ``measured``)."""


@dataclass
class TrainLog:
    """What ``train`` did: rounds grown, level waves, whether a metric stopped it."""

    n_rounds: int = 0
    n_levels: int = 0
    stopped: bool = False


def train(engine, ensemble: Ensemble, rounds: range) -> TrainLog:
    """Run ``rounds`` of ``ensemble`` on ``engine`` (see the module docstring).

    A round whose last level only counts rows may leave it to the next
    round start (``RoundSpec.defer_counts``, ``trees.deferred``): one wave
    fewer per round. The counts come back with that wave, or with a level
    wave of their own after the last round, and the ensemble gets the final
    trees (``completed``) before anything measures or reports the round.
    """
    log, update, levels_before = TrainLog(), None, engine.n_level_waves
    blocks = LevelBlocks()  # the levels' histograms, in memory reused round after round
    pending = None  # (round, PendingCounts): a last level whose counts are still to come
    for r in rounds:
        t0 = time.perf_counter()
        spec = ensemble.begin(r, update)
        index = r if spec.round_index is None else spec.round_index
        measured = spec.measure and r > rounds.start
        here = engine.grows_here(spec.criterion, ensemble.growth, spec.node_features)
        start = engine.start_round(spec.learner, update, measured, index, spec.features,
                                   None if pending is None else pending[1].splits,
                                   histograms=not here)
        if pending is not None:
            ensemble.completed(pending[0], pending[1].complete(start.pending_counts))
            pending = None
        if r > rounds.start and ensemble.measured(r - 1, start.train_metric, start.eval_metrics):
            log.stopped = True
            break
        if here:
            trees = engine.grow_here(spec, ensemble.growth)
        else:
            t1, waves = time.perf_counter(), engine.timings["histograms"]
            finder = SplitFinder(spec.criterion, engine.mapper, ensemble.growth, spec.masks,
                                 spec.node_features)
            grower = TreeGrower(start.hist, finder=finder, build_level=engine.level,
                                root_counts=start.root_counts, blocks=blocks,
                                defer_counts=spec.defer_counts)
            trees = grower.grow()
            engine.timings["split_finding"] += (time.perf_counter() - t1
                                                - (engine.timings["histograms"] - waves))
            if grower.pending is not None:
                pending = (r, grower.pending)
        update = ensemble.grown(r, trees)
        log.n_rounds += 1
        engine.timings["train"] += time.perf_counter() - t0
        if update is STOP:
            _complete(engine, ensemble, pending)
            break
    else:
        t0 = time.perf_counter()
        _complete(engine, ensemble, pending)
        ensemble.end(update)
        engine.timings["train"] += time.perf_counter() - t0
    log.n_levels = engine.n_level_waves - levels_before
    return log


def _complete(engine, ensemble: Ensemble, pending) -> None:
    """The last round's deferred level, counted by a level wave of its own."""
    if pending is not None:
        r, level = pending
        _, counts = engine.level(level.splits, 0)
        ensemble.completed(r, level.complete(counts))
