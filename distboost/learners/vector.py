"""Gradient boosting's learner for vector-leaf trees (``trees.vector_leaves``).

Row state: the margins of the k outputs, (k, n_rows), as ``GradientLearner``;
statistics: one tree's, (1, n_rows, 2k + 1): every output's (g_j, h_j) and a
row count (Chen & Guestrin 2016, eq. 2, per output).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..kernels.common import STAT_DTYPE
from ..trees.vector_leaves import row_stats
from .gradient import GradientLearner


@dataclass
class VectorLearner(GradientLearner):
    """``GradientLearner`` whose round grows one tree on the k outputs'
    statistics side by side. A round's update is k scalar trees of one
    structure, added to the margins by a walk from the root (no
    ``routed_places``: the levels routed one tree, the update holds k)."""

    def row_stats(self, shard, margin, round_index):
        k, n = margin.shape
        scratch = shard.buffers.get("stats-k", (k, n, 2), STAT_DTYPE)
        out = shard.buffers.get("stats", (1, n, 2 * k + 1), STAT_DTYPE)
        stats = row_stats(self.loss, shard.target, margin, shard.w, self.scales, scratch, out)
        return stats, self._positions(shard, 1, round_index)

    def routed_places(self, update, split_history):
        return None
