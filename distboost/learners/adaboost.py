"""AdaBoost's worker-side learner (ESL Algorithm 10.1; SAMME and SAMME.R,
Zhu et al. 2009, Algorithms 2 and 4).

The row state is the observation weights w_i, the statistics
``(w_i·onehot(c_i), 1)``; after each round the weights are multiplied by
exp(alpha·I(c_i != T(x_i))) (SAMME) or by SAMME.R's factor and renormalized,
on the workers. Nothing here moves a row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels import exact, libm
from ..kernels.common import STAT_DTYPE
from ..kernels.fixed_point import quantize
from ..kernels.tree import leaf_ids_binned, predict_binned

ADABOOST_SCALE = 2.0**60
"""Fixed-point scale of AdaBoost's weights, which are kept summing to one."""


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
    """Row state: the observation weights w_i (normalized to sum to one;
    w_i = 1/N at the start)."""

    n_classes: int
    scale: float = ADABOOST_SCALE

    def initial_state(self, shard, total_weight, update: AdaBoostUpdate | None = None):
        """w_i = sample weight / total (ESL Algorithm 10.1, step 1). AdaBoost
        always starts from scratch: ``update`` must be None."""
        if update is not None:
            raise ValueError("AdaBoost weights start from the sample weights, not from trees")
        return shard.w / total_weight

    def update(self, shard, w, update: AdaBoostUpdate):
        """Step 2(d): w_i·exp(alpha·I(c_i != T(x_i))) / z (SAMME), or SAMME.R's
        factor, from the round's tree: the update alone gives the new weights."""
        if update.kind == "SAMME":
            miss = tree_classes(shard, update.packed) != shard.y
            return w * libm.exp(update.alpha * miss) / update.z
        return w * libm.exp(samme_r_exponent(shard, update)) / update.z

    def row_stats(self, shard, w, round_index):
        n, k = shard.n_rows, self.n_classes
        stats = np.zeros((1, n, k + 1), STAT_DTYPE)
        stats[0, np.arange(n), shard.y.astype(np.int64)] = quantize(w, self.scale)
        stats[0, :, k] = 1
        positions = np.where(w > 0, 0, -1).astype(np.int32)[None, :]
        return stats, positions


def round_sums(shard, w, packed, update: AdaBoostUpdate | None):
    """``engine.each_partition`` function: exact sums for err_m (Algorithm 10.1, step 2b).

    Returns the partition's ``[sum w·I(c != T(x)), sum w, sum w·u]`` as exact
    integers, where u is SAMME.R's unnormalized update factor (for the next
    normalization; 0 for SAMME). ``w``: the partition's row weights.
    """
    miss = tree_classes(shard, packed) != shard.y
    u = np.zeros(1) if update is None else w * libm.exp(samme_r_exponent(shard, update))
    return exact.exact_sums([w * miss, w, u])
