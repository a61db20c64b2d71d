"""Column subsampling by tree, by level and by node (Friedman 2002; XGBoost's
colsample_bytree / bylevel / bynode; the random-forest feature subsets of ESL
15.2).

The sets nest: a tree draws from all features, each depth of the tree draws
from the tree's set, each node draws from its depth's set. Every draw is a
function of (random_state, round, tree, depth, node id) only, so it does
not depend on the partitioning or on the order in which nodes are grown.
"""

from __future__ import annotations

import numpy as np

from ._random import splitmix64

_MASK63 = (1 << 63) - 1


def _key(*parts: int) -> int:
    """Mix integers into one 63-bit seed (SplitMix64 chained)."""
    z = np.uint64(0x243F6A8885A308D3)
    for p in parts:
        z = splitmix64(np.uint64((int(z) ^ (int(p) & _MASK63)) & _MASK63))
    return int(z) & _MASK63


def _draw(available: np.ndarray, fraction: float, key: int) -> np.ndarray:
    """A mask keeping max(1, round(fraction * k)) of the k available features."""
    idx = np.flatnonzero(available)
    if fraction >= 1.0 or len(idx) <= 1:
        return available.copy()
    k = max(1, round(fraction * len(idx)))
    chosen = np.random.default_rng(key).choice(idx, size=k, replace=False)
    mask = np.zeros_like(available)
    mask[chosen] = True
    return mask


class NodeFeatures:
    """Features a node may split on: its tree's set, sampled by depth, then by node.

    Parameters
    ----------
    tree_masks : ndarray of shape (n_trees, n_features), bool
    bylevel, bynode : float in (0, 1]
    seed, round_index : int
    """

    def __init__(self, tree_masks, bylevel, bynode, seed, round_index):
        self.tree_masks = tree_masks
        self.bylevel, self.bynode = bylevel, bynode
        self.seed, self.round = seed, round_index
        self._levels = {}

    def level_mask(self, tree: int, depth: int) -> np.ndarray:
        if (tree, depth) not in self._levels:
            key = _key(self.seed, self.round, tree, 2, depth)
            self._levels[tree, depth] = _draw(self.tree_masks[tree], self.bylevel, key)
        return self._levels[tree, depth]

    def __call__(self, tree: int, depth: int, node_id: int) -> np.ndarray:
        mask = self.level_mask(tree, depth)
        if self.bynode >= 1.0:
            return mask
        return _draw(mask, self.bynode, _key(self.seed, self.round, tree, 3, depth, node_id))
