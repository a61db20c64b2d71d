"""AdaBoost's worker-side learner (ESL Algorithm 10.1; SAMME and SAMME.R,
Zhu et al. 2009, Algorithms 2 and 4).

The row state is the observation weights w_i, the statistics
``(w_i·onehot(c_i), 1)``; after each round the weights are multiplied by
exp(alpha·I(c_i != T(x_i))) (SAMME) or by SAMME.R's factor and renormalized,
on the workers. Nothing here moves a row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..engine.group import each_shard
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
    """Row state: ``(w, last)``, the observation weights (normalized to sum to
    one; w_i = 1/N at the start) and what the last error pass found per row
    (I(c_i != T_m(x_i)) for SAMME, the update's exponent for SAMME.R), so the
    update does not traverse the tree again."""

    n_classes: int
    scale: float = ADABOOST_SCALE

    def initial_state(self, shard, total_weight, update: AdaBoostUpdate | None = None):
        """w_i = sample weight / total (ESL Algorithm 10.1, step 1). AdaBoost
        always starts from scratch: ``update`` must be None."""
        if update is not None:
            raise ValueError("AdaBoost weights start from the sample weights, not from trees")
        return shard.w / total_weight, None

    def update(self, shard, row, update: AdaBoostUpdate):
        w, last = row
        if update.kind == "SAMME":
            return w * libm.exp(update.alpha * last) / update.z, None
        return w * libm.exp(last) / update.z, None

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
            out.append(exact.exact_sums([w * miss, w, np.zeros(1)]))
            rows.append(shard.buffers.keep("rows", (w, miss)))
        else:
            exponent = samme_r_exponent(shard, update)
            out.append(exact.exact_sums([w * miss, w, w * libm.exp(exponent)]))
            rows.append(shard.buffers.keep("rows", (w, exponent)))
    return replace(state, rows=tuple(rows)), out
