"""Learners: what the workers compute per row for one kind of ensemble.

The engine is generic: it keeps a per-partition *row state* (margins for
gradient boosting; observation weights for AdaBoost; nothing for forests),
and asks a learner, on the workers, to

* ``initial_state(shard, base, packed_trees)``: the row state before training,
* ``update(shard, state, packed_trees)``: the row state after adding trees,
* ``row_stats(shard, state, round_index)``: fixed-point statistics of shape
  (n_trees, n_rows, n_stats) and initial node positions (n_trees, n_rows),
  -1 for rows left out of a tree,
* ``metric_sums(shard, state)``: exact (sum of w * loss, sum of w).

Learner objects are small and picklable; a new one is made each round on the
driver (it carries that round's fixed-point scales).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _exact
from ._common import STAT_DTYPE
from ._fixed_point import gradient_stats
from ._random import row_uniforms
from .tree import predict_binned


def add_trees(shard, margin, packed_trees):
    """margin + the trees' outputs, as a new array.

    The result goes into one of two arrays the shard lends, the one not
    holding ``margin``: a round's margins replace the last round's, and the
    round before that is no longer read.
    """
    if packed_trees is None:
        return margin
    names = ("margin-a", "margin-b")
    name = names[1] if shard.buffers.get(names[0], margin.shape, margin.dtype) is margin else names[0]
    out = shard.buffers.get(name, margin.shape, margin.dtype)
    np.copyto(out, margin)
    predict_binned(shard.X_binned, *packed_trees, out)
    return out


@dataclass
class GradientLearner:
    """Gradient boosting: row state = margins f(x) of shape (n_outputs, n_rows);
    stats = (g, h, 1), or (g, h) with ``n_stats=2``, at the current margins
    (seed 003; Chen & Guestrin eq. 2).

    Rows left out by ``subsample`` (uniforms drawn from (seed, round, global
    row id): Friedman 2002) or with zero weight get position -1.

    With ``first_order`` (line-search leaves, ESL Algorithm 10.3) the stats
    are (g, w, 1): the tree fits the negative gradient by weighted least
    squares and the loss's line search sets the leaf values afterwards.
    """

    loss: object
    scales: tuple = (1.0, 1.0)
    seed: int = 0
    subsample: float = 1.0
    first_order: bool = False
    n_stats: int = 3  # 2: (g, h) without the row count (``GradientCriterion(counts=False)``)

    def initial_state(self, shard, base_score, packed_trees):
        margin = np.repeat(np.asarray(base_score, np.float64)[:, None], shard.n_rows, axis=1)
        return add_trees(shard, margin, packed_trees)

    def update(self, shard, margin, packed_trees):
        return add_trees(shard, margin, packed_trees)

    def row_stats(self, shard, margin, round_index):
        n_trees, n = margin.shape
        out = shard.buffers.get("stats", (n_trees, n, self.n_stats), STAT_DTYPE)
        if self.first_order:
            g, _ = self.loss.gradients(shard.y, margin, shard.w)
            stats = gradient_stats(g, np.broadcast_to(shard.w, g.shape), self.scales, out)
        else:
            stats = self.loss.fixed_point_stats(shard.y, margin, shard.w, self.scales, out)
        return stats, self._positions(shard, n_trees, round_index)

    def _positions(self, shard, n_trees, round_index):
        """0 (the root) for rows in this round's sample with positive weight, else -1."""
        positions = shard.buffers.get("positions", (n_trees, shard.n_rows), np.int32)
        active = np.greater(shard.w, 0, out=shard.buffers.get("active", shard.w.shape, bool))
        if self.subsample < 1.0:
            active &= row_uniforms(self.seed, round_index, shard.first_row, shard.n_rows) < self.subsample
        np.subtract(active, np.int32(1), out=positions, dtype=np.int32)  # 0 or -1, no temporary
        return positions

    def metric_sums(self, shard, margin):
        losses = self.loss.metric_pointwise(shard.y, margin)
        return _exact.exact_sum(shard.w * losses), _exact.exact_sum(shard.w)

    def finish_metric(self, mean: float) -> float:
        return self.loss.finish_metric(mean)
