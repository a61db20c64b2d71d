"""The worker-side learner of bagged trees: random forests, bagging, pasting
(Breiman 1996, 1999, 2001; ESL 8.7 and ch. 15).

The statistics are ``(n_ti·w_i·onehot(c_i), n_ti)`` (classification) or
``(-n_ti·w_i·y_i, n_ti·w_i, n_ti)`` (regression), where n_ti is row i's
multiplicity in tree t's sample, drawn from (seed, t, global row id):
Poisson(lambda) for bootstrap samples (the Poisson bootstrap, the large-n
limit of a multinomial resample: P(n = 0) = e^-1 as for the classic
bootstrap), Bernoulli(lambda) for pasting. The row state holds out-of-bag
sums when asked for. Nothing here moves a row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from ..kernels import exact
from ..kernels.common import STAT_DTYPE
from ..kernels.fixed_point import quantize
from ..kernels.rng import row_uniforms
from ..kernels.tree import leaf_ids_binned

MAX_MULTIPLICITY = 32
"""Bootstrap counts are capped here (P(Poisson(1) > 32) < 1e-35), which bounds
the fixed-point statistics."""

_SAMPLE_STREAM = 0x5EED_0000
"""Offset of the bootstrap streams, apart from other uses of ``row_uniforms``."""


@numba.njit(cache=True)
def sample_counts(seed, tree, first_row, n_rows, rate, bootstrap):
    """Multiplicity of each row in tree ``tree``'s sample.

    Poisson(rate) by inversion of its CDF (bootstrap) or Bernoulli(rate)
    (pasting), from uniforms of (seed, tree, global row id).

    Returns
    -------
    counts : ndarray of shape (n_rows,), int64
    """
    u = row_uniforms(seed, _SAMPLE_STREAM + tree, first_row, n_rows)
    out = np.zeros(n_rows, np.int64)
    if not bootstrap:
        for i in range(n_rows):
            out[i] = 1 if u[i] < rate else 0
        return out
    p0 = np.exp(-rate)
    for i in range(n_rows):
        k, p = 0, p0
        cdf = p
        while u[i] > cdf and k < MAX_MULTIPLICITY:
            k += 1
            p *= rate / k
            cdf += p
        out[i] = k
    return out


@dataclass
class BaggedTreesLearner:
    """Trees ``first_tree .. first_tree + n_trees - 1`` of a forest.

    Row state: out-of-bag sums ``(sum of predictions (n_rows, n_out), number
    of out-of-bag trees (n_rows,))``, or None without out-of-bag estimates.
    """

    n_classes: int | None  # None: regression
    seed: int
    rate: float
    bootstrap: bool
    scales: tuple = (1.0, 1.0)
    first_tree: int = 0
    n_trees: int = 1
    oob: bool = False

    def counts(self, shard, tree):
        return sample_counts(self.seed, tree, shard.first_row, shard.n_rows, self.rate,
                             self.bootstrap)

    def initial_state(self, shard, base, update: OutOfBagBatch | None):
        if not self.oob:
            return None
        n_out = 1 if self.n_classes is None else self.n_classes
        return np.zeros((shard.n_rows, n_out)), np.zeros(shard.n_rows, np.int64)

    def update(self, shard, state, update: OutOfBagBatch):
        """Add a grown batch's predictions to the rows it left out."""
        if state is None:
            return None
        nodes, roots, bitsets = update.packed
        ids = np.empty((len(roots), shard.n_rows), np.int64)
        leaf_ids_binned(shard.X_binned, nodes, roots, bitsets, ids)
        counts = np.stack([self.counts(shard, update.first_tree + t) for t in range(len(roots))])
        total, n_oob = state[0].copy(), state[1].copy()
        _add_out_of_bag(ids, counts, update.values, total, n_oob)
        return total, n_oob

    def row_stats(self, shard, state, round_index):
        n, w = shard.n_rows, shard.w
        n_stats = 3 if self.n_classes is None else self.n_classes + 1
        stats = np.zeros((self.n_trees, n, n_stats), STAT_DTYPE)
        positions = np.empty((self.n_trees, n), np.int32)
        codes = None if self.n_classes is None else shard.y.astype(np.int64)
        for t in range(self.n_trees):
            c = self.counts(shard, self.first_tree + t)
            positions[t] = np.where((c > 0) & (w > 0), 0, -1)
            if codes is None:
                stats[t, :, 0] = quantize(-c * w * shard.y, self.scales[0])
                stats[t, :, 1] = quantize(c * w, self.scales[1])
                stats[t, :, 2] = c
            else:
                stats[t, np.arange(n), codes] = quantize(c * w, self.scales[0])
                stats[t, :, self.n_classes] = c
        return stats, positions


@dataclass
class OutOfBagBatch:
    """A grown batch for the out-of-bag update: packed trees and node values."""

    packed: tuple
    values: np.ndarray  # (n_total_nodes, n_out): class frequencies or the mean
    first_tree: int


@numba.njit(cache=True)
def _add_out_of_bag(leaf_ids, counts, values, total, n_oob):
    n_trees, n_rows = leaf_ids.shape
    for t in range(n_trees):
        for i in range(n_rows):
            if counts[t, i] == 0:
                n_oob[i] += 1
                for j in range(values.shape[1]):
                    total[i, j] += values[leaf_ids[t, i], j]


def out_of_bag_result(shard, row, regression: bool):
    """``engine.each_partition`` function: the partition's out-of-bag
    predictions and sums.

    ``row``: the partition's ``(total, n_oob)``. Returns ``(first_row,
    prediction (n_rows, n_out) with NaN for rows never out of bag, exact
    sums)``: for classification ``[sum w·correct, sum w]``; for regression
    ``[sum w·(y - pred)^2, sum w, sum w·y, sum w·y^2]``, over rows with at
    least one out-of-bag tree.
    """
    total, n_oob = row
    seen = n_oob > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        pred = total / n_oob[:, None]
    pred[~seen] = np.nan
    w = np.where(seen, shard.w, 0.0)
    if regression:
        p = np.where(seen, pred[:, 0], 0.0)
        sums = exact.exact_sums([w * (shard.y - p) ** 2, w, w * shard.y, w * shard.y**2])
    else:
        correct = np.argmax(np.where(seen[:, None], pred, 0.0), axis=1) == shard.y
        sums = exact.exact_sums([w * correct, w])
    return shard.first_row, pred, sums
