"""Per-leaf line search: ESL Algorithm 10.3 step 2(c), Friedman's TreeBoost.

With ``leaf_estimation="line_search"`` a round's tree is grown on the
negative gradient by least squares (statistics (w g, w, 1)), then every
leaf gets the loss's own minimizer over its rows,

    gamma_j = argmin_gamma sum_{x_i in R_j} w_i L(y_i, f(x_i) + gamma),

computed where the rows live and exactly across partitions:

* ``"quantile"`` rule (absolute error, quantile loss): the weighted
  alpha-quantile of the leaf's residuals y - f, by distributed selection
  (``training.select``);
* ``"huber"`` rule: the weighted median r~ of the residuals, then
  r~ + sum w clip(r - r~, -delta, delta) / sum w (Friedman 2001, M_TreeBoost);
* ``"sums"`` rule: a ratio of exact per-leaf sums (``loss.leaf_sums`` /
  ``loss.leaf_value``): the mean residual for squared error, one Newton step
  for deviance, 1/2 log(S+/S-) for exponential loss.

Only in-bag rows (positions >= 0: sampled, positive weight) take part, as in
Friedman (2002). Each row's leaf is found on its worker from the tree
(``tree.leaf_indices_binned``); nothing but per-leaf summaries travels.
"""

from __future__ import annotations

from fractions import Fraction

import numba
import numpy as np

from ..engine.group import each_shard
from ..kernels import exact
from ..kernels.bounds import propagate_bounds
from ..kernels.tree import leaf_indices_binned, predict_binned
from ..trees.tree import Tree
from .select import plain_state, weighted_quantiles

_UNIT = 1 << 1200  # _exact's sums are integers in units of 2**-1200


def round_leaves(shard, positions, packed):
    """Leaf of each row in each tree of a round; -1 for rows left out (positions -1).

    Returns
    -------
    ndarray of shape (n_trees, n_rows), int32
    """
    nodes, roots, bits, _ = packed
    leaves = np.empty((len(roots), shard.n_rows), np.int32)
    leaf_indices_binned(shard.X_binned, nodes, roots, bits, leaves)
    if positions is not None:
        leaves[positions < 0] = -1
    return leaves


# ------------------------------------------------------- selection sources
class TargetValues:
    """Rows' targets y (one query): f_0 of the robust losses."""

    def __call__(self, shard, rows, positions):
        return np.zeros(shard.n_rows, np.int64), shard.y, shard.w


class AbsoluteResiduals:
    """|y - f| at the margins plus the pending trees (one query): Huber's delta."""

    def __init__(self, packed_pending):
        self.packed = packed_pending

    def __call__(self, shard, rows, positions):
        margin = rows
        if self.packed is not None:
            margin = rows.copy()
            predict_binned(shard.X_binned, *self.packed, margin)
        return np.zeros(shard.n_rows, np.int64), np.abs(shard.y - margin[0]), shard.w


class LeafResiduals:
    """Residuals y - f of the in-bag rows; query = rank of the row's leaf in tree 0
    (one output), so that the queries are the leaves only."""

    def __init__(self, packed, rank_of_node):
        self.packed, self.rank = packed, rank_of_node

    def __call__(self, shard, rows, positions):
        leaves = round_leaves(shard, positions, self.packed)[0]
        query = np.where(leaves >= 0, self.rank[np.maximum(leaves, 0)], -1)
        return query, shard.y - rows[0], shard.w


# ----------------------------------------------------- exact per-leaf sums
@numba.njit(cache=True)
def _grouped_mantissas(mantissas, exponents, groups, e_lo, hi, lo):
    """Add each 53-bit mantissa, split in two halves, to its (group, exponent) cell."""
    for i in range(len(mantissas)):
        g = groups[i]
        if mantissas[i] == 0 or g < 0:
            continue
        j = exponents[i] - e_lo
        hi[g, j] += mantissas[i] >> 26
        lo[g, j] += mantissas[i] & ((1 << 26) - 1)


def grouped_exact_sums(values, groups, n_groups) -> list[int]:
    """Exact sum of ``values`` per group, as ``kernels.exact`` integers (units 2**-1200).

    Parameters
    ----------
    values : ndarray of shape (n,), float64, finite
    groups : ndarray of shape (n,), int; -1 rows are skipped
    n_groups : int
    """
    m, e = np.frexp(np.asarray(values, np.float64))
    mantissas = (m * 2.0**53).astype(np.int64)  # exact
    exponents = e.astype(np.int64)
    used = mantissas != 0
    if not used.any():
        return [0] * n_groups
    e_lo, e_hi = int(exponents[used].min()), int(exponents[used].max())
    hi = np.zeros((n_groups, e_hi - e_lo + 1), np.int64)
    lo = np.zeros_like(hi)
    _grouped_mantissas(mantissas, exponents, np.asarray(groups, np.int64), e_lo, hi, lo)
    out = []
    for g in range(n_groups):
        total = 0
        for j in np.flatnonzero(hi[g] | lo[g]):
            shift = e_lo + int(j) - 53 + exact._OFFSET
            total += ((int(hi[g, j]) << 26) + int(lo[g, j])) << shift
        out.append(total)
    return out


class LossSums:
    """Per-row arrays of ``loss.leaf_sums`` (the "sums" rule)."""

    def __init__(self, loss):
        self.loss = loss

    def __call__(self, shard, rows, leaves):
        return self.loss.leaf_sums(shard.y, rows, shard.w)


class ClippedDeviations:
    """w clip(r - median_leaf, -delta, delta) and w (Huber's leaf step, one output)."""

    def __init__(self, medians, delta):
        self.medians, self.delta = medians, delta

    def __call__(self, shard, rows, leaves):
        med = self.medians[np.maximum(leaves[0], 0)]
        d = np.clip(shard.y - rows[0] - med, -self.delta, self.delta)
        return [(shard.w * d)[None, :], shard.w[None, :]]


def _leaf_sums(state, packed, row_arrays, max_nodes):
    """Per (tree, leaf): exact sums of each array of ``row_arrays``."""
    n_trees = len(packed[1])
    totals = None
    for shard, rows, positions in each_shard(state.shards, state.rows, state.positions):
        leaves = round_leaves(shard, positions, packed)
        groups = np.where(leaves >= 0, leaves + max_nodes * np.arange(n_trees)[:, None], -1)
        arrays = row_arrays(shard, rows, leaves)
        sums = [grouped_exact_sums(a.ravel(), groups.ravel(), n_trees * max_nodes) for a in arrays]
        totals = sums if totals is None else [
            [x + y for x, y in zip(t, s)] for t, s in zip(totals, sums)
        ]
    return plain_state(state), totals


def leaf_sums(engine, packed, row_arrays, max_nodes, name):
    """Exact per-(tree, leaf) sums over all partitions, as Fractions.

    Returns
    -------
    list (one per array of ``row_arrays``) of lists of Fraction, indexed by
    t * max_nodes + leaf
    """
    per_group = engine.apply(_leaf_sums, name, packed, row_arrays, max_nodes)
    out = []
    for a in range(len(per_group[0])):
        n = len(per_group[0][a])
        out.append([Fraction(sum(g[a][k] for g in per_group), _UNIT) for k in range(n)])
    return out


# --------------------------------------------------------------- the rules
def _with_leaf_values(trees, gammas, max_nodes, learning_rate):
    out = []
    for t, tree in enumerate(trees):
        nodes = tree.nodes.copy()
        leaves = np.flatnonzero(nodes["is_leaf"] == 1)
        gamma = gammas[t * max_nodes + leaves]
        nodes["value"][leaves] = learning_rate * np.where(np.isnan(gamma), 0.0, gamma)
        out.append(Tree(nodes, tree.cat_bitsets))
    return out


def leaf_values(engine, loss, trees, packed, learning_rate, monotonic=None) -> list[Tree]:
    """The round's trees with every leaf value re-estimated by the loss's line search.

    Parameters
    ----------
    engine : Engine (margins f_{m-1} and in-bag positions of this round on the workers)
    loss : Loss (with this round's delta for Huber)
    trees : list of Tree, one per output, grown on the negative gradient
    packed : ``learners.gradient.pack_rounds([trees], n_outputs)``
    learning_rate : float (shrinkage nu, ESL 10.12.1)
    monotonic : ndarray of shape (n_features,), int8, optional
        Monotone constraints (one output): the leaves are clipped to bounds
        found from every node's line-search value (``monotone_leaf_values``).
    """
    if monotonic is not None:
        return monotone_leaf_values(engine, loss, trees, packed, learning_rate, monotonic)
    max_nodes = max(len(t.nodes) for t in trees)
    n_queries = max_nodes * len(trees)
    if loss.leaf_rule == "sums":
        sums = leaf_sums(engine, packed, LossSums(loss), max_nodes, "leaf-sums")
        gammas = np.array([loss.leaf_value([s[k] for s in sums]) for k in range(n_queries)])
    elif loss.leaf_rule == "quantile":
        gammas = _leaf_quantiles(engine, trees[0], packed, loss.alpha, "leaf-quantile")
    elif loss.leaf_rule == "huber":
        medians = _leaf_quantiles(engine, trees[0], packed, 0.5, "leaf-median")
        medians = np.where(np.isnan(medians), 0.0, medians)
        num, den = leaf_sums(engine, packed, ClippedDeviations(medians, loss.delta), max_nodes,
                             "leaf-huber")
        gammas = medians + np.array([float(n / d) if d else 0.0 for n, d in zip(num, den)])
    else:
        raise ValueError(f"unknown leaf rule {loss.leaf_rule!r}")
    return _with_leaf_values(trees, gammas, max_nodes, learning_rate)


def _leaf_quantiles(engine, tree, packed, alpha, name) -> np.ndarray:
    """Weighted alpha-quantile of the residuals of each leaf, indexed by node id."""
    leaf_nodes = np.flatnonzero(tree.nodes["is_leaf"] == 1)
    rank = np.full(len(tree.nodes), -1, np.int64)
    rank[leaf_nodes] = np.arange(len(leaf_nodes))
    per_leaf = weighted_quantiles(engine, LeafResiduals(packed, rank), alpha, len(leaf_nodes), name)
    out = np.full(len(tree.nodes), np.nan)
    out[leaf_nodes] = per_leaf
    return out


def init_quantile(engine, alpha) -> float:
    """f_0 = the weighted alpha-quantile of y over all rows (exact)."""
    return float(weighted_quantiles(engine, TargetValues(), alpha, 1, "init-quantile")[0])


def huber_delta(engine, alpha, packed_pending) -> float:
    """delta = the weighted alpha-quantile of |y - f| at the current margins
    plus the pending trees (Friedman 2001, M_TreeBoost)."""
    return float(weighted_quantiles(engine, AbsoluteResiduals(packed_pending), alpha, 1,
                                    "huber-delta")[0])


# ------------------------------------------------------ monotone constraints
def monotone_leaf_values(engine, loss, trees, packed, learning_rate, monotonic) -> list[Tree]:
    """Line-search leaves of a tree under monotone constraints (one output).

    The bounds the grower propagated are in the units of the tree it grew (the
    mean negative gradient), not of the line search's values (a median
    residual, say), so the bounds are found again in the values' own units:
    the line-search value of every node (the minimizer over its in-bag rows,
    exactly across partitions, as for a leaf) goes through the same rule,
    children bounded at the midpoint of their clipped values from the root down
    (``kernels.bounds.propagate_bounds``); every leaf is then clipped to its
    bounds, the exact constrained minimizer of its convex loss. The tree is
    then monotone in every constrained feature, whatever the values.
    """
    tree = trees[0]
    values = _node_values(engine, loss, tree, packed)
    bounds = propagate_bounds(tree.nodes, values, monotonic)
    nodes = tree.nodes.copy()
    leaves = np.flatnonzero(nodes["is_leaf"] == 1)
    gamma = np.where(np.isnan(values[leaves]), 0.0, values[leaves])
    nodes["value"][leaves] = learning_rate * np.clip(gamma, bounds[leaves, 0], bounds[leaves, 1])
    out = Tree(nodes, tree.cat_bitsets)
    out.bounds = bounds
    return [out]


def node_paths(nodes) -> np.ndarray:
    """(n_nodes, max_depth + 1) int64: the node ids from the root to each node, -1 beyond."""
    depth = nodes["depth"]
    paths = np.full((len(nodes), int(depth.max()) + 1), -1, np.int64)
    parent = np.full(len(nodes), -1, np.int64)
    internal = np.flatnonzero(nodes["is_leaf"] == 0)
    parent[nodes["left"][internal]] = internal
    parent[nodes["right"][internal]] = internal
    for i in range(len(nodes)):  # a parent's id is below its children's
        if parent[i] >= 0:
            paths[i] = paths[parent[i]]
        paths[i, depth[i]] = i
    return paths


def _row_paths(shard, positions, packed, paths) -> np.ndarray:
    """(n_rows, max_depth + 1): the nodes of each in-bag row's path in tree 0, -1 beyond."""
    leaves = round_leaves(shard, positions, packed)[0]
    return np.where(leaves[:, None] >= 0, paths[np.maximum(leaves, 0)], -1)


class PathResiduals:
    """Residuals y - f of the in-bag rows, once for every node of the row's path in
    tree 0 (query = node id): every node's quantile in one selection."""

    def __init__(self, packed, paths):
        self.packed, self.paths = packed, paths

    def __call__(self, shard, rows, positions):
        query = _row_paths(shard, positions, self.packed, self.paths)
        k = query.shape[1]
        return query.T.ravel(), np.tile(shard.y - rows[0], k), np.tile(shard.w, k)


def _path_huber_sums(state, packed, paths, medians, delta):
    """Per node: exact sums of w clip(r - median_node, -delta, delta) and of w over
    its in-bag rows (Huber's one step from each node's own median)."""
    totals = None
    for shard, rows, positions in each_shard(state.shards, state.rows, state.positions):
        groups = _row_paths(shard, positions, packed, paths)
        deviations = np.clip((shard.y - rows[0])[:, None] - medians[np.maximum(groups, 0)],
                             -delta, delta) * shard.w[:, None]
        weights = np.broadcast_to(shard.w[:, None], groups.shape)
        sums = [grouped_exact_sums(a.ravel(), groups.ravel(), len(paths))
                for a in (deviations, weights)]
        totals = sums if totals is None else [
            [x + y for x, y in zip(t, s)] for t, s in zip(totals, sums)]
    return plain_state(state), totals


def _node_values(engine, loss, tree, packed) -> np.ndarray:
    """The line-search value of every node of ``tree`` over its in-bag rows
    (NaN where it has none), exact across partitions."""
    n, paths = len(tree.nodes), node_paths(tree.nodes)
    if loss.leaf_rule == "quantile":
        return weighted_quantiles(engine, PathResiduals(packed, paths), loss.alpha, n,
                                  "node-quantile")
    if loss.leaf_rule == "huber":
        medians = weighted_quantiles(engine, PathResiduals(packed, paths), 0.5, n, "node-median")
        medians = np.where(np.isnan(medians), 0.0, medians)
        per_group = engine.apply(_path_huber_sums, "node-huber", packed, paths, medians,
                                 loss.delta)
        num, den = ([sum(g[a][k] for g in per_group) for k in range(n)] for a in (0, 1))
        return np.array([m + float(Fraction(a) / Fraction(b)) if b else np.nan
                         for m, a, b in zip(medians, num, den)])
    sums = leaf_sums(engine, packed, LossSums(loss), n, "leaf-sums")  # nonzero at leaves only
    node_sums = [[Fraction(0)] * n for _ in sums]
    for leaf in np.flatnonzero(tree.nodes["is_leaf"] == 1):
        for node in paths[leaf][paths[leaf] >= 0]:
            for a, s in enumerate(sums):
                node_sums[a][node] += s[leaf]
    return np.array([loss.leaf_value([s[k] for s in node_sums])
                     if any(s[k] for s in node_sums) else np.nan for k in range(n)])
