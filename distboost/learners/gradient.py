"""Gradient boosting's worker-side learner (ESL Algorithm 10.3; Chen & Guestrin 2016).

Row state: the margins f(x) of every output; update: the round's trees
(``RoundTrees``), added to the margins where the rows are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..kernels.common import STAT_DTYPE
from ..kernels.fixed_point import gradient_stats
from ..kernels.histogram import columns
from ..kernels.rng import sample_positions
from ..kernels.routed import add_routed, routed_places
from ..kernels.tree import copy_margins, pack_trees, predict_binned


class RoundTrees(NamedTuple):
    """Trees of one or more rounds, packed for the traversal kernels
    (``tree.PackedTrees``) with the output each tree adds to; unpacks as
    ``predict_binned``'s arguments."""

    nodes: np.ndarray
    roots: np.ndarray
    bitsets: np.ndarray
    outputs: np.ndarray  # (n_trees,) int64: tree t adds to margin row outputs[t]


def pack_rounds(rounds, n_outputs: int) -> RoundTrees:
    """Pack trees of several rounds (K per round, output k = position in round)."""
    flat = [t for round_trees in rounds for t in round_trees]
    outputs = np.arange(n_outputs * len(rounds), dtype=np.int64) % n_outputs
    return RoundTrees(*pack_trees(flat), outputs)


def add_trees(shard, margin, packed_trees: RoundTrees | None, routed=None):
    """margin + the trees' outputs, as a new array.

    The result goes into one of two arrays the shard lends, the one not
    holding ``margin``: a round's margins replace the last round's, and the
    round before that is no longer read.

    ``routed``: (partition, places) of the round that grew the trees, on these
    rows (``places``: ``GradientLearner.routed_places``). Each row then
    continues from the node its levels left it in (``routed.add_routed``:
    mostly one step, or none, instead of a walk from the root), with the same
    result to the bit.
    """
    if packed_trees is None:
        return margin
    names = ("margin-a", "margin-b")
    name = names[1] if shard.buffers.get(names[0], margin.shape, margin.dtype) is margin else names[0]
    out = shard.buffers.get(name, margin.shape, margin.dtype)
    copy_margins(margin, out)
    if routed is not None:
        partition, (held, place) = routed
        nodes, roots, bitsets, outputs = packed_trees
        if add_routed(columns(shard.X_binned, shard.buffers), nodes, roots, bitsets, outputs,
                      partition, held, place, out):
            return out
    predict_binned(shard.X_binned, *packed_trees, out)
    return out


@dataclass
class GradientLearner:
    """Gradient boosting: row state = margins f(x) of shape (n_outputs, n_rows);
    stats = (g, h, 1), or (g, h) with ``n_stats=2``, at the current margins
    (Chen & Guestrin 2016, eq. 2).

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
    metrics: tuple = ()  # ``metrics.make_metrics``: what ``metric_partials`` computes

    def initial_state(self, shard, base_score, update: RoundTrees | None):
        """f_0 = ``base_score`` (ESL Algorithm 10.3, step 1: the best constant), plus
        ``update``'s trees when training continues from a model."""
        margin = np.repeat(np.asarray(base_score, np.float64)[:, None], shard.n_rows, axis=1)
        return add_trees(shard, margin, update)

    def update(self, shard, margin, update: RoundTrees):
        """f_m = f_{m-1} + the round's trees (ESL Algorithm 10.3, step 2(d))."""
        return add_trees(shard, margin, update)

    def routed_places(self, update: RoundTrees, split_history):
        """Where the rows the round's levels routed are in its trees (``routed.routed_places``)."""
        return routed_places(update.nodes, update.roots, split_history)

    def update_routed(self, shard, margin, update: RoundTrees, partition, places):
        """``update`` from where the round's levels left the rows (``add_trees``)."""
        return add_trees(shard, margin, update, (partition, places))

    def row_stats(self, shard, margin, round_index):
        n_trees, n = margin.shape
        out = shard.buffers.get("stats", (n_trees, n, self.n_stats), STAT_DTYPE)
        if self.first_order:
            g, _ = self.loss.gradients(shard.target, margin, shard.w)
            stats = gradient_stats(g, np.broadcast_to(shard.w, g.shape), self.scales, out)
        else:
            stats = self.loss.fixed_point_stats(shard.target, margin, shard.w, self.scales, out)
        return stats, self._positions(shard, n_trees, round_index)

    def _positions(self, shard, n_trees, round_index):
        """0 (the root) for rows in this round's sample with positive weight, else -1."""
        positions = shard.buffers.get("positions", (n_trees, shard.n_rows), np.int32)
        sample_positions(shard.w, self.seed, round_index, shard.first_row,
                         float(self.subsample), positions)
        return positions

    def metric_partials(self, shard, margin) -> list:
        """Each of ``metrics``' partial over the shard's rows (``metrics`` module)."""
        return [m.partial(shard.target, margin, shard.w) for m in self.metrics]
