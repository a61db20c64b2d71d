"""Gradient boosting's learner for vector-leaf trees (``trees.vector_leaves``).

Row state: the margins of the k outputs, (k, n_rows), as ``GradientLearner``;
statistics: one tree's, (1, n_rows, 2k) or (1, n_rows, 2k + 1): every
output's (g_j, h_j) (Chen & Guestrin 2016, eq. 2, per output) and, where
the criterion counts rows, a row count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.common import STAT_DTYPE
from ..kernels.histogram import RowPartition
from ..kernels.routed import routed_places
from ..trees.vector_leaves import row_stats
from .gradient import GradientLearner, add_trees


@dataclass
class VectorLearner(GradientLearner):
    """``GradientLearner`` whose round grows one tree on the k outputs'
    statistics side by side. A round's update is k scalar trees of one
    structure. When the round grew its tree in one compiled call, each leaf
    holds its rows, and they are the rows of that leaf in each of the k
    trees: the margins are added from there (``routed_places``), the same
    bits as a walk from the root. Grown level by level (on Dask), the walk."""

    def row_stats(self, shard, margin, round_index):
        out = shard.buffers.get("stats", (1, margin.shape[1], self.n_stats), STAT_DTYPE)
        stats = row_stats(self.loss, shard.target, margin, shard.w, self.scales, out)
        return stats, self._positions(shard, 1, round_index)

    def routed_places(self, update, split_history):
        if len(split_history) != 1 or not split_history[0].whole_trees:
            return None
        return routed_places(update.nodes, update.roots, split_history)

    def update_routed(self, shard, margin, update, partition, places):
        """The one grown tree's rows by leaf, lent to each of the k trees."""
        k = len(update.roots)
        shared = RowPartition(*(np.repeat(a[:1], k, axis=0) for a in
                                (partition.order, partition.start, partition.stop)), None)
        return add_trees(shard, margin, update, (shared, places))
