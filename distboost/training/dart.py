"""DART: dropouts meet multiple additive regression trees (Rashmi &
Gilad-Bachrach 2015), as XGBoost's ``dart`` booster defines it
(https://xgboost.readthedocs.io/en/stable/tutorials/dart.html).

Every tree i of the model has a weight w_i; the model is
f(x) = f_0 + sum_i w_i T_i(x), the leaves of T_i already shrunk by the
learning rate eta. Round m:

1. drop: with probability ``skip_drop`` nothing; else each tree i
   independently with probability ``rate_drop`` (``sample_type="uniform"``) or
   ``rate_drop * n * w_i / sum_j w_j`` (``"weighted"``); with ``one_drop`` and
   none drawn, one tree (uniformly, or in proportion to w_i). The K trees
   of a multiclass round are separate trees here, as in XGBoost.
2. the round's K trees are grown on the gradients at f - sum_{i in D} w_i T_i
   (``learners.dart.DartLearner``);
3. normalize, with k = |D| and lr = eta / K (XGBoost's ``NormalizeTrees``):
   k = 0: the new trees weigh 1; ``normalize_type="tree"``: the dropped
   trees are scaled by k / (k + lr) and the new trees weigh 1 / (k + lr);
   ``"forest"``: the dropped trees are scaled by 1 / (1 + lr) and the new
   trees weigh 1 / (1 + lr).

Every draw is a function of (random_state, round, tree index) only
(``kernels.rng``, counter-based), so the dropped trees are the same in
process and on Dask, whatever the partitioning. Weights are float64 (XGBoost
keeps them in float32).

Nothing dropped in any round (``rate_drop=0`` without ``one_drop``, or
``skip_drop=1``) is gradient boosting exactly: every weight 1, the same trees.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.rng import row_uniforms
from ..learners.dart import scaled_rounds
from ..learners.gradient import RoundTrees

NORMALIZE_TYPES = ("tree", "forest")
SAMPLE_TYPES = ("uniform", "weighted")
_STREAM = 0xDA27 << 40  # DART's random streams, apart from the rows' (the round index)


@dataclass(frozen=True)
class DartParams:
    """XGBoost's DART parameters (``dart_train_param``)."""

    rate_drop: float = 0.0
    skip_drop: float = 0.0
    normalize_type: str = "tree"
    sample_type: str = "uniform"
    one_drop: bool = False


def _uniforms(seed: int, round_index: int, purpose: int, n: int) -> np.ndarray:
    """n Uniform(0, 1) draws of round ``round_index`` for ``purpose`` (0: skip,
    1: one per tree, 2: one_drop's pick), draw i a function of (seed, round, i)."""
    return row_uniforms(int(seed), _STREAM + 4 * int(round_index) + purpose, 0, n)


def dropped_trees(params: DartParams, weights: np.ndarray, seed: int,
                  round_index: int) -> np.ndarray:
    """The trees round ``round_index`` drops (indices into ``weights``, the
    weights of every tree so far), ascending (step 1 of the module)."""
    n = len(weights)
    none = np.zeros(0, np.int64)
    if n == 0:
        return none
    if params.skip_drop > 0 and _uniforms(seed, round_index, 0, 1)[0] < params.skip_drop:
        return none
    if params.sample_type == "weighted":
        chance = params.rate_drop * n * weights / weights.sum()
    else:
        chance = np.full(n, params.rate_drop)
    drop = np.flatnonzero(_uniforms(seed, round_index, 1, n) < chance).astype(np.int64)
    if params.one_drop and not len(drop):
        u = _uniforms(seed, round_index, 2, 1)[0]
        if params.sample_type == "weighted":
            cumulative = np.cumsum(weights) / weights.sum()
            i = int(np.searchsorted(cumulative, u, side="right"))
        else:
            i = int(u * n)
        drop = np.array([min(i, n - 1)], np.int64)
    return drop


def normalized(params: DartParams, weights: np.ndarray, drop: np.ndarray, n_new: int,
               learning_rate: float) -> np.ndarray:
    """The weights after a round that dropped ``drop`` and grew ``n_new``
    trees: the old trees' (the dropped ones scaled) then the new trees'
    (step 3 of the module; XGBoost's ``NormalizeTrees``)."""
    lr = learning_rate / n_new
    k = len(drop)
    out = np.append(np.asarray(weights, np.float64), np.ones(n_new))
    if k == 0:
        return out
    if params.normalize_type == "forest":
        factor = new = 1.0 / (1.0 + lr)
    else:
        factor, new = k / (k + lr), 1.0 / (k + lr)
    out[drop] *= factor
    out[len(weights):] = new
    return out


def joined(first: RoundTrees | None, second: RoundTrees | None) -> RoundTrees | None:
    """The trees of ``first`` then those of ``second`` as one ``RoundTrees``
    (either may be None)."""
    if first is None or second is None:
        return first if second is None else second
    nodes = second.nodes.copy()
    internal = nodes["is_leaf"] == 0
    nodes["left"][internal] += len(first.nodes)
    nodes["right"][internal] += len(first.nodes)
    nodes["cat_index"][nodes["is_categorical"] == 1] += len(first.bitsets)
    return RoundTrees(np.concatenate([first.nodes, nodes]),
                      np.concatenate([first.roots, second.roots + len(first.nodes)]),
                      np.concatenate([first.bitsets, second.bitsets]),
                      np.concatenate([first.outputs, second.outputs]))


def widened(lo: float, hi: float, trees: RoundTrees | None) -> tuple[float, float]:
    """A range of margins widened by what ``trees`` (values as they add: the
    round's update, the dropped trees' -w_i T_i) can add to one row, several
    trees of an output included: each tree's smallest and largest leaf, summed."""
    if trees is None:
        return lo, hi
    for t, root in enumerate(trees.roots):
        end = trees.roots[t + 1] if t + 1 < len(trees.roots) else len(trees.nodes)
        nodes = trees.nodes[root:end]
        leaves = nodes["value"][nodes["is_leaf"] == 1]
        lo, hi = lo + min(float(leaves.min()), 0.0), hi + max(float(leaves.max()), 0.0)
    return lo, hi


class Dropout:
    """The driver's side of DART in one fit: every tree's weight, the trees
    each round drops, and the updates that bring the margins to the new weights.

    Parameters
    ----------
    params : DartParams
    seed : int
        ``random_state``'s seed.
    n_outputs : int
        Trees per round (K).
    learning_rate : float
    weights : ndarray of float64
        The weights of the trees already in the model (a continued model's;
        1 each for a gradient boosting model's), round by round.
    """

    def __init__(self, params: DartParams, seed: int, n_outputs: int, learning_rate: float,
                 weights: np.ndarray):
        self.params, self.seed, self.n_outputs = params, seed, n_outputs
        self.learning_rate = learning_rate
        self.weights = np.asarray(weights, np.float64).copy()
        self.dropped = np.zeros(0, np.int64)

    def choose(self, round_index: int, rounds: list) -> RoundTrees | None:
        """Draw round ``round_index``'s dropped trees (``rounds``: the model's
        rounds so far); their outputs times -w_i, packed, or None."""
        self.dropped = dropped_trees(self.params, self.weights, self.seed, round_index)
        if not len(self.dropped):
            return None
        flat = [t for round_trees in rounds for t in round_trees]
        return scaled_rounds([flat[i] for i in self.dropped], -self.weights[self.dropped],
                             self.dropped % self.n_outputs)

    def update(self, rounds: list) -> RoundTrees:
        """Normalize after the round (``rounds``: the model's rounds, the new
        one last); the margins' change: the new trees times their weight,
        then each dropped tree times (new weight - old weight)."""
        old, drop = self.weights, self.dropped
        self.weights = normalized(self.params, old, drop, self.n_outputs, self.learning_rate)
        flat = [t for round_trees in rounds for t in round_trees]
        new = list(rounds[-1])
        factors = np.concatenate([self.weights[len(old):], self.weights[drop] - old[drop]])
        outputs = np.concatenate([np.arange(len(new)), drop % self.n_outputs])
        self.dropped = np.zeros(0, np.int64)
        return scaled_rounds(new + [flat[i] for i in drop], factors, outputs)
