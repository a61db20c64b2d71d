"""Random feature subsets: by tree, by level and by node.

Gradient boosting's column subsampling (Friedman 2002; XGBoost's
colsample_bytree / bylevel / bynode: ``feature_masks``, ``NodeFeatures``),
bagging's random subspaces (``tree_feature_masks``) and the random forests'
per-node subsets (ESL 15.2, Algorithm 15.1 step 1(b)i: ``NodeFeatureSampler``). For boosting
the sets nest: a tree draws from all features, each depth of the tree from
the tree's set, each node from its depth's set. Every draw is a function of
(random_state, round or tree, depth, node id) only, so it depends neither on
the partitioning nor on the order in which nodes are grown.
"""

from __future__ import annotations

import numba
import numpy as np

from .rng import splitmix64

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

    def __call__(self, masks, hist, nodes) -> np.ndarray:
        """The grower's ``node_features`` hook: each (tree, depth, node_id)'s mask."""
        return np.stack([self.node_mask(t, depth, node_id) for t, depth, node_id in nodes])

    def node_mask(self, tree: int, depth: int, node_id: int) -> np.ndarray:
        mask = self.level_mask(tree, depth)
        if self.bynode >= 1.0:
            return mask
        return _draw(mask, self.bynode, _key(self.seed, self.round, tree, 3, depth, node_id))


def feature_masks(n_trees, n_features, fraction, seed, round_index) -> np.ndarray:
    """Features each tree of a round may use (column subsampling by tree)."""
    masks = np.ones((n_trees, n_features), bool)
    if fraction >= 1.0:
        return masks
    k = max(1, round(fraction * n_features))
    for t in range(n_trees):
        key = int(splitmix64(np.uint64((seed * 1_000_003 + round_index * 131 + t) & (2**63 - 1))))
        chosen = np.random.default_rng(key).choice(n_features, size=k, replace=False)
        masks[t] = False
        masks[t, chosen] = True
    return masks


def tree_feature_masks(n_trees, n_features, k, seed, bootstrap_features=False) -> np.ndarray:
    """Features of each tree (random subspaces), a function of (seed, tree) only."""
    masks = np.ones((n_trees, n_features), bool)
    if k >= n_features and not bootstrap_features:
        return masks
    for t in range(n_trees):
        key = int(splitmix64(np.uint64((seed * 0x9E3779B1 + t * 0x7F4A7C15 + 0x51) % 2**64)))
        chosen = np.random.default_rng(key).choice(n_features, size=k, replace=bootstrap_features)
        masks[t] = False
        masks[t, chosen] = True
    return masks


@numba.njit(cache=True, inline="always")
def node_key(seed, tree, node):
    """The uint64 key of (global tree index, node id): its random stream for features."""
    mixed = (np.uint64(seed) * np.uint64(0x9E3779B1) + np.uint64(tree) * np.uint64(0x85EBCA77)
             + np.uint64(node) * np.uint64(0xC2B2AE3D) + np.uint64(0x27D4EB2F))
    return splitmix64(mixed)


@numba.njit(cache=True)
def _node_keys(seed, trees, nodes):
    keys = np.empty(len(trees), np.uint64)
    for k in range(len(trees)):
        keys[k] = node_key(seed, trees[k], nodes[k])
    return keys


def node_keys(seed: int, nodes) -> np.ndarray:
    """One uint64 key per (tree, node) pair: its random stream for features."""
    pairs = np.asarray(nodes, np.int64).reshape(-1, 2)
    return _node_keys(seed, pairs[:, 0].copy(), pairs[:, 1].copy())


@numba.njit(cache=True, inline="always")
def node_permutation(key, perm):
    """``perm`` (length n_features) becomes the node's random permutation of
    the features, a function of its key only (Fisher-Yates on SplitMix64)."""
    z = key
    for j in range(len(perm)):
        perm[j] = j
    for j in range(len(perm) - 1, 0, -1):
        z = splitmix64(z + np.uint64(0x9E3779B97F4A7C15))
        r = np.int64(z % np.uint64(j + 1))
        perm[j], perm[r] = perm[r], perm[j]


@numba.njit(cache=True)
def draw_node_features(keys, allowed, non_constant, max_features):
    """Random feature subsets of the nodes of a forest (ESL Algorithm 15.1, step 1(b)i).

    Each node walks its own random permutation of the features
    (``node_permutation``) and keeps the first ``max_features`` that are
    allowed and not constant in the node; constant features do not count, as
    in scikit-learn, so a node with an informative feature is never left
    without one to split on.

    Parameters
    ----------
    keys : ndarray of shape (n_nodes,), uint64
    allowed, non_constant : ndarray of shape (n_nodes, n_features), bool
    max_features : int

    Returns
    -------
    masks : ndarray of shape (n_nodes, n_features), bool
    """
    n_nodes, n_features = allowed.shape
    masks = np.zeros((n_nodes, n_features), np.bool_)
    perm = np.empty(n_features, np.int64)
    for node in range(n_nodes):
        node_permutation(keys[node], perm)
        taken = 0
        for j in range(n_features):
            f = perm[j]
            if taken >= max_features:
                break
            if allowed[node, f] and non_constant[node, f]:
                masks[node, f] = True
                taken += 1
    return masks


class NodeFeatureSampler:
    """Per-node random feature subsets for the grower's ``node_features`` hook.

    Parameters
    ----------
    max_features : int or None
        Features tried per node; None: all.
    seed : int
    first_tree : int
        Global index of the batch's first tree: draws depend on (seed, global
        tree index, node id) only, not on how trees are batched.
    count_stat : int
        Position of the row count in the stats vector (to find constant features).
    """

    def __init__(self, max_features, seed, first_tree, count_stat):
        self.max_features, self.seed = max_features, seed
        self.first_tree, self.count_stat = first_tree, count_stat

    def __call__(self, masks, hist, nodes):
        """The grower's ``node_features`` hook: ``masks`` (n_nodes, n_features)
        narrowed to ``max_features`` non-constant features per (tree, depth, node_id)."""
        if self.max_features is None or self.max_features >= masks.shape[1]:
            return masks
        non_constant = (hist[..., self.count_stat] > 0).sum(axis=2) > 1
        keys = node_keys(self.seed, [(self.first_tree + t, n) for t, _, n in nodes])
        return draw_node_features(keys, masks, non_constant, self.max_features)
