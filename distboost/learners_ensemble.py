"""Worker-side learners of AdaBoost and of bagged trees (forests, bagging).

They follow the engine's learner interface (``learner.py``): a row state per
partition, per-row statistics for the histograms, and updates applied where
the data live. Nothing here moves a row.

* AdaBoost (ESL Algorithm 10.1; SAMME, Zhu et al. 2009, Algorithm 2): the row
  state is the observation weights w_i, the statistics ``(w_i·onehot(c_i), 1)``;
  after each round the weights are multiplied by exp(alpha·I(c_i != T(x_i)))
  and renormalized, on the workers.
* Bagged trees (seed 001): the statistics are ``(n_ti·w_i·onehot(c_i), n_ti)``
  (classification) or ``(-n_ti·w_i·y_i, n_ti·w_i, n_ti)`` (regression), where
  n_ti is row i's multiplicity in tree t's sample, drawn from (seed, t, global
  row id): Poisson(lambda) for bootstrap samples (the Poisson bootstrap, the
  large-n limit of a multinomial resample: P(n = 0) = e^-1 as for the classic
  bootstrap), Bernoulli(lambda) for pasting. The row state holds out-of-bag
  sums when asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numba
import numpy as np

from . import _exact
from ._common import STAT_DTYPE
from ._fixed_point import quantize
from ._random import row_uniforms
from .engine.group import each_shard
from .tree import leaf_ids_binned, predict_binned

MAX_MULTIPLICITY = 32
"""Bootstrap counts are capped here (P(Poisson(1) > 32) < 1e-35), which bounds
the fixed-point statistics."""

ADABOOST_SCALE = 2.0**60
"""Fixed-point scale of AdaBoost's weights, which are kept summing to one."""

_SAMPLE_STREAM = 0x5EED_0000
"""Offset of the bootstrap streams, apart from other uses of ``row_uniforms``."""


# ---------------------------------------------------------------- AdaBoost
@dataclass
class AdaBoostUpdate:
    """What the workers need to reweight rows after round m.

    ``kind`` "SAMME": w <- w·exp(alpha·I(c != T(x))) / z. "SAMME.R" (Zhu et al.
    2009, Algorithm 4): w <- w·exp(-nu·(K-1)/K · y^T log p(x)) / z, with the
    coding y_k = 1 if c = k else -1/(K-1). ``log_proba`` holds log p per node.
    """

    packed: tuple  # (nodes, roots, bitsets) of the round's tree
    kind: str
    alpha: float
    z: float
    log_proba: np.ndarray | None = None  # (n_nodes, K), SAMME.R
    learning_rate: float = 1.0


def tree_classes(shard, packed) -> np.ndarray:
    """Class code T(x_i) of every row of a shard (the leaves' ``value``)."""
    out = np.zeros((1, shard.n_rows))
    predict_binned(shard.X_binned, *packed, np.zeros(1, np.int64), out)
    return out[0]


def samme_r_exponent(shard, update: AdaBoostUpdate) -> np.ndarray:
    """-nu·(K-1)/K · y_i^T log p(x_i) for every row (SAMME.R's weight update)."""
    ids = np.empty((1, shard.n_rows), np.int64)
    leaf_ids_binned(shard.X_binned, *update.packed, ids)
    log_p = update.log_proba[ids[0]]
    k = log_p.shape[1]
    codes = shard.y.astype(np.int64)
    own = log_p[np.arange(shard.n_rows), codes]
    y_dot = own - (log_p.sum(axis=1) - own) / (k - 1)
    return -update.learning_rate * (k - 1) / k * y_dot


@dataclass
class AdaBoostLearner:
    """Row state: ``(w, last)``, the observation weights (normalized to sum to
    one; w_i = 1/N at the start) and what the last error pass found per row
    (I(c_i != T_m(x_i)) for SAMME, the update's exponent for SAMME.R), so the
    update does not traverse the tree again."""

    n_classes: int
    scale: float = ADABOOST_SCALE

    def initial_state(self, shard, total_weight, packed_trees=None):
        """w_i = sample weight / total (ESL Algorithm 10.1, step 1). AdaBoost
        always starts from scratch: ``packed_trees`` must be None."""
        if packed_trees is not None:
            raise ValueError("AdaBoost weights start from the sample weights, not from trees")
        return shard.w / total_weight, None

    def update(self, shard, row, update: AdaBoostUpdate):
        w, last = row
        if update.kind == "SAMME":
            return w * np.exp(update.alpha * last) / update.z, None
        return w * np.exp(last) / update.z, None

    def row_stats(self, shard, row, round_index):
        w = row[0]
        n, k = shard.n_rows, self.n_classes
        stats = np.zeros((1, n, k + 1), STAT_DTYPE)
        stats[0, np.arange(n), shard.y.astype(np.int64)] = quantize(w, self.scale)
        stats[0, :, k] = 1
        positions = np.where(w > 0, 0, -1).astype(np.int32)[None, :]
        return stats, positions


def round_sums(state, packed, update: AdaBoostUpdate | None):
    """``engine.apply`` function: exact sums for err_m (Algorithm 10.1, step 2b).

    Returns per partition ``[sum w·I(c != T(x)), sum w, sum w·u]`` as exact
    integers, where u is SAMME.R's unnormalized update factor (for the next
    normalization; 0 for SAMME). The rows keep I(c != T(x)) (SAMME) or log u
    (SAMME.R) for the update.
    """
    out, rows = [], []
    for shard, (w, _) in each_shard(state.shards, state.rows):
        miss = tree_classes(shard, packed) != shard.y
        if update is None:
            out.append(_exact.exact_sums([w * miss, w, np.zeros(1)]))
            rows.append(shard.buffers.keep("rows", (w, miss)))
        else:
            exponent = samme_r_exponent(shard, update)
            out.append(_exact.exact_sums([w * miss, w, w * np.exp(exponent)]))
            rows.append(shard.buffers.keep("rows", (w, exponent)))
    return replace(state, rows=tuple(rows)), out


# ------------------------------------------------------------ bagged trees
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

    def initial_state(self, shard, base, packed_trees):
        if not self.oob:
            return None
        n_out = 1 if self.n_classes is None else self.n_classes
        return np.zeros((shard.n_rows, n_out)), np.zeros(shard.n_rows, np.int64)

    def update(self, shard, state, batch):
        """Add a grown batch's predictions to the rows it left out."""
        if state is None:
            return None
        nodes, roots, bitsets = batch.packed
        ids = np.empty((len(roots), shard.n_rows), np.int64)
        leaf_ids_binned(shard.X_binned, nodes, roots, bitsets, ids)
        counts = np.stack([self.counts(shard, batch.first_tree + t) for t in range(len(roots))])
        total, n_oob = state[0].copy(), state[1].copy()
        _add_out_of_bag(ids, counts, batch.values, total, n_oob)
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


def out_of_bag_results(state, regression: bool):
    """``engine.apply`` function: per partition, out-of-bag predictions and sums.

    Returns per partition ``(first_row, prediction (n_rows, n_out) with NaN
    for rows never out of bag, exact sums)``: for classification
    ``[sum w·correct, sum w]``; for regression ``[sum w·(y - pred)^2, sum w,
    sum w·y, sum w·y^2]``, over rows with at least one out-of-bag tree.
    """
    out = []
    for shard, (total, n_oob) in each_shard(state.shards, state.rows):
        seen = n_oob > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            pred = total / n_oob[:, None]
        pred[~seen] = np.nan
        w = np.where(seen, shard.w, 0.0)
        if regression:
            p = np.where(seen, pred[:, 0], 0.0)
            sums = _exact.exact_sums([w * (shard.y - p) ** 2, w, w * shard.y, w * shard.y**2])
        else:
            correct = np.argmax(np.where(seen[:, None], pred, 0.0), axis=1) == shard.y
            sums = _exact.exact_sums([w * correct, w])
        out.append((shard.first_row, pred, sums))
    return state, out
