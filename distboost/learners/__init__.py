"""Learners: what the workers compute per row for one kind of ensemble.

The engine is generic: it keeps a per-partition *row state* and asks a
``Learner``, on the workers, for the state before training, the state after
an update, and the per-row statistics its histograms sum. Each learner names
its own state and update types:

=====================  ===========================  ======================
learner                row state                    update
=====================  ===========================  ======================
``GradientLearner``    margins (n_outputs, n_rows)  ``gradient.RoundTrees``
``AdaBoostLearner``    weights (n_rows,)            ``AdaBoostUpdate``
``BaggedTreesLearner`` out-of-bag sums, or None     ``OutOfBagBatch``
=====================  ===========================  ======================

Learner objects are small and picklable; the drivers make a new one each
round when it carries that round's fixed-point scales.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

from .adaboost import AdaBoostLearner, AdaBoostUpdate
from .bagged import BaggedTreesLearner, OutOfBagBatch
from .gradient import GradientLearner

State = TypeVar("State")
Update = TypeVar("Update")


@runtime_checkable
class Learner(Protocol, Generic[State, Update]):
    """What the engine asks of a learner, per partition (``shard``), on the workers."""

    def initial_state(self, shard, base: Any, update: Update | None) -> State:
        """The row state before training (``base``: the learner's starting
        point, e.g. the base score), plus ``update`` if training continues."""

    def update(self, shard, state: State, update: Update) -> State:
        """The row state after ``update`` (the trees of a round)."""

    def row_stats(self, shard, state: State, round_index: int) -> tuple[np.ndarray, np.ndarray]:
        """Fixed-point statistics (n_trees, n_rows, n_stats) and the rows'
        initial node positions (n_trees, n_rows): 0 (the root), or -1 for rows
        left out of a tree."""


@runtime_checkable
class RoutedLearner(Learner[State, Update], Protocol):
    """A learner that can add a round's trees to the rows that round routed,
    without walking them from the root (the engine asks when it can)."""

    def routed_places(self, update: Update, split_history):
        """Once per round and holder: where the rows that the levels
        ``split_history`` (the round's ``LevelSplits``) routed stand in
        ``update``'s trees; None when they are not the trees those levels grew."""

    def update_routed(self, shard, state: State, update: Update, partition, places) -> State:
        """``update(shard, state, update)``, the same to the bit, where the
        rows of ``update``'s trees are partitioned by node (``partition``, a
        ``kernels.histogram.RowPartition``) after the round's levels, and
        ``places`` is ``routed_places``'s answer."""


@runtime_checkable
class MetricLearner(Learner[State, Update], Protocol):
    """A learner that also scores its rows (training and evaluation metrics)."""

    metrics: tuple
    """Metric objects (``distboost.metrics``): ``partial``, ``merge``, ``value``."""

    def metric_partials(self, shard, state: State) -> list:
        """Each metric's partial over the shard's rows (merged by the engine)."""


__all__ = ["AdaBoostLearner", "AdaBoostUpdate", "BaggedTreesLearner", "GradientLearner", "Learner",
           "MetricLearner", "OutOfBagBatch", "RoutedLearner"]
