"""Exact path-dependent TreeSHAP (Lundberg et al. 2020, "From local
explanations to global understanding with explainable AI for trees",
Algorithm 2), compiled with numba and threaded over rows.

The recursion of Algorithm 2 is run here one root-to-leaf path at a time, as
GPUTreeShap does (Mitchell, Frank, Wang & Holmes 2022): the *elements* of a
path are the distinct features split on along it, each with

* a zero fraction z (the product, over the path's splits on that feature, of
  the node weights ``cover[child] / cover[parent]``: the share of the
  training hessian that followed the path), and
* a one fraction o, for a given row 1 if the row takes the path's way at every
  one of those splits and 0 otherwise.

Algorithm 2's EXTEND of the path by each element and UNWOUND_SUM per element
give that leaf's part of the SHAP values,

    phi_i += v (o_i - z_i) sum_{S subset of P minus i} |S|! (d - 1 - |S|)! / d!
             prod_{k in S} o_k prod_{k not in S, k != i} z_k,

and summed over the leaves they are exactly what the recursion gives (its
UNWIND of a feature met again along the path is the merging of that
feature's splits into one element). As every o is 0 or 1, a path of d
elements has only 2^d patterns: for short paths the contributions of every
pattern are tabulated once per tree (Fast TreeSHAP v2, Yang 2021), and a row
then costs one pass over the tree's splits (which elements it leaves each
path at) and, per leaf, d additions.

Routing follows ``tree.predict_raw`` exactly: a numeric split sends ``x <=
threshold`` left and a missing value (NaN) to its learned side; a
categorical split sends code c left if bit c of its bitset is set, and
missing values and codes outside [0, 255) to the missing side.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from .common import MISSING_BIN

TABLE_MAX_ELEMENTS = 8
"""Paths with at most this many distinct features use pattern tables."""
TABLE_BYTES = 16 * 2**20
"""Pattern tables of at most this many bytes are held at a time (trees are
explained in groups whose tables fit)."""
CHUNK_ROWS = 32
"""Rows explained together, tree by tree (a tree's tables stay in cache)."""


class TreePaths(NamedTuple):
    """The root-to-leaf paths of packed trees (``tree.pack_trees``), CSR-style.

    Path p belongs to tree ``path_tree[p]`` and ends at packed node
    ``path_leaf[p]``; its elements are ``elem_start[p]:elem_start[p + 1]``
    (feature, zero fraction), numbered in the order the path first meets
    them, so that a split node's feature has the same element number
    ``node_elem[node]`` on every path through it. ``tree_paths[t]:tree_paths[t
    + 1]`` are tree t's paths, and ``split_order[tree_splits[t]:tree_splits[t +
    1]]`` its split nodes, each after its parent.
    """

    path_tree: np.ndarray  # (n_paths,) int64
    path_leaf: np.ndarray  # (n_paths,) int64
    elem_start: np.ndarray  # (n_paths + 1,) int64
    elem_feature: np.ndarray  # (n_elems,) int64
    elem_zero: np.ndarray  # (n_elems,) float64
    tree_paths: np.ndarray  # (n_trees + 1,) int64
    node_elem: np.ndarray  # (n_nodes,) int64, -1 at leaves
    parent: np.ndarray  # (n_nodes,) int64, -1 at roots
    split_order: np.ndarray  # (n_splits,) int64
    tree_splits: np.ndarray  # (n_trees + 1,) int64


def zero_fractions(nodes: np.ndarray) -> np.ndarray:
    """Per packed node, ``cover[node] / cover[parent]`` (1 at roots).

    Node weights are the covers (hessian sums of the training rows, as
    XGBoost's ``pred_contribs``); the two children of a split whose cover is
    zero get 1/2 each.

    Parameters
    ----------
    nodes : ndarray of NODE_DTYPE (packed: child ids global)

    Returns
    -------
    ndarray of shape (n_nodes,), float64
    """
    frac = np.ones(len(nodes))
    internal = np.flatnonzero(nodes["is_leaf"] == 0)
    cover = nodes["cover"].astype(np.float64)
    parent = cover[internal]
    for side in ("left", "right"):
        child = nodes[side][internal].astype(np.int64)
        safe = np.where(parent > 0, parent, 1.0)
        frac[child] = np.where(parent > 0, cover[child] / safe, 0.5)
    return frac


@numba.njit(cache=True)
def _count_paths(nodes, roots):
    """(number of leaves, total of their depths) over every tree."""
    n_paths = n_conds = 0
    stack = np.empty((len(nodes) + 1, 2), np.int64)
    for t in range(len(roots)):
        stack[0, 0], stack[0, 1], top = roots[t], 0, 1
        while top > 0:
            top -= 1
            k, depth = stack[top, 0], stack[top, 1]
            if nodes[k]["is_leaf"]:
                n_paths += 1
                n_conds += depth
            else:
                stack[top, 0], stack[top, 1] = nodes[k]["right"], depth + 1
                stack[top + 1, 0], stack[top + 1, 1] = nodes[k]["left"], depth + 1
                top += 2
    return n_paths, n_conds


@numba.njit(cache=True)
def _add_path(nodes, frac, ancestors, depth, first, elem_feature, elem_zero, node_elem):
    """Write the elements of the path ``ancestors[0..depth]`` from ``first`` on;
    returns the end of its elements."""
    end = first
    for j in range(depth):
        parent, child = ancestors[j], ancestors[j + 1]
        feature = nodes[parent]["feature"]
        e = 0
        while e < end - first and elem_feature[first + e] != feature:
            e += 1
        if e == end - first:  # a feature new to this path
            elem_feature[end], elem_zero[end] = feature, 1.0
            end += 1
        elem_zero[first + e] *= frac[child]
        node_elem[parent] = e
    return end


@numba.njit(cache=True)
def _fill_paths(nodes, roots, frac, path_tree, path_leaf, elem_start, elem_feature, elem_zero,
                tree_paths, node_elem, parent, split_order, tree_splits):
    """Walk every tree depth first (left before right) and write its paths and
    its split nodes in that (parents first) order; returns the number of
    elements written."""
    stack = np.empty((len(nodes) + 1, 2), np.int64)
    ancestors = np.empty(len(nodes) + 1, np.int64)
    p = n_elems = n_splits = 0
    for t in range(len(roots)):
        tree_paths[t], tree_splits[t] = p, n_splits
        stack[0, 0], stack[0, 1], top = roots[t], 0, 1
        parent[roots[t]] = -1
        while top > 0:
            top -= 1
            k, depth = stack[top, 0], stack[top, 1]
            ancestors[depth] = k
            if not nodes[k]["is_leaf"]:
                split_order[n_splits] = k
                n_splits += 1
                parent[nodes[k]["left"]] = parent[nodes[k]["right"]] = k
                stack[top, 0], stack[top, 1] = nodes[k]["right"], depth + 1
                stack[top + 1, 0], stack[top + 1, 1] = nodes[k]["left"], depth + 1
                top += 2
                continue
            path_tree[p], path_leaf[p], elem_start[p] = t, k, n_elems
            n_elems = _add_path(nodes, frac, ancestors, depth, n_elems, elem_feature, elem_zero,
                                node_elem)
            p += 1
    elem_start[p], tree_paths[len(roots)], tree_splits[len(roots)] = n_elems, p, n_splits
    return n_elems


def tree_paths(nodes: np.ndarray, roots: np.ndarray) -> TreePaths:
    """Cut packed trees into their root-to-leaf paths (see ``TreePaths``).

    Parameters
    ----------
    nodes, roots : from ``tree.pack_trees``
    """
    n_paths, n_conds = _count_paths(nodes, roots)
    n_nodes, n_trees = len(nodes), len(roots)
    int64 = np.int64
    paths = TreePaths(
        np.empty(n_paths, int64), np.empty(n_paths, int64), np.empty(n_paths + 1, int64),
        np.empty(n_conds, int64), np.empty(n_conds), np.empty(n_trees + 1, int64),
        np.full(n_nodes, -1, int64), np.full(n_nodes, -1, int64),
        np.empty(n_nodes - n_paths, int64), np.empty(n_trees + 1, int64),
    )
    n_elems = _fill_paths(nodes, roots, zero_fractions(nodes), *paths)
    return paths._replace(elem_feature=paths.elem_feature[:n_elems].copy(),
                          elem_zero=paths.elem_zero[:n_elems].copy())


def expected_values(paths: TreePaths, leaf_values: np.ndarray) -> np.ndarray:
    """Each tree's expected output under the node weights, shape (n_trees, K):
    sum over its leaves of the leaf value times the product of the zero
    fractions along the path (the cover-weighted mean of the leaves).

    Parameters
    ----------
    paths : TreePaths
    leaf_values : ndarray of shape (n_nodes, K), float64
    """
    owner = np.repeat(np.arange(len(paths.path_leaf)), np.diff(paths.elem_start))
    reach = np.ones(len(paths.path_leaf))
    np.multiply.at(reach, owner, paths.elem_zero)
    per_path = reach[:, None] * leaf_values[paths.path_leaf]
    out = np.zeros((len(paths.tree_paths) - 1, leaf_values.shape[1]))
    np.add.at(out, paths.path_tree, per_path)
    return out


# ----------------------------------------------------------------- Algorithm 2
@numba.njit(cache=True, inline="always")
def _extend_all(zero, one, d, skip, weights):
    """EXTEND (Algorithm 2) of the path by its elements except ``skip`` (-1:
    none), after the empty element (z = o = 1) the recursion starts with.

    ``weights[0:m + 1]`` receives the permutation weights of the m elements
    extended; returns m.
    """
    weights[0] = 1.0
    m = 0
    for e in range(d):
        if e == skip:
            continue
        m += 1
        z, o = zero[e], one[e]
        weights[m] = 0.0
        for i in range(m - 1, -1, -1):
            weights[i + 1] += o * weights[i] * (i + 1) / (m + 1)
            weights[i] = z * weights[i] * (m - i) / (m + 1)
    return m


@numba.njit(cache=True, inline="always")
def _unwound_sum(weights, m, z, o):
    """UNWOUND_SUM (Algorithm 2) of an element with fractions (z, o) of a
    path of m extended elements: the total weight of the subsets without it."""
    total = 0.0
    next_one = weights[m]
    for j in range(m - 1, -1, -1):
        if o != 0.0:
            tmp = next_one * (m + 1) / ((j + 1) * o)
            total += tmp
            next_one = weights[j] - tmp * z * (m - j) / (m + 1)
        else:
            total += weights[j] / z * (m + 1) / (m - j)
    return total


@numba.njit(cache=True, inline="always")
def _element_value(weights, m, z, o):
    """(o - z) * UNWOUND_SUM: an element's SHAP value per unit of leaf value. An
    element with z = o = 0 (a row leaving the path where no training weight
    went) zeroes every subset of the path, so it has none."""
    if o == 0.0 and z == 0.0:
        return 0.0
    return (o - z) * _unwound_sum(weights, m, z, o)


@numba.njit(cache=True, inline="always")
def _path_shap(zero, one, d, weights, phi):
    """phi[e] = (o_e - z_e) * UNWOUND_SUM(e) for the d elements of a path: the
    path's SHAP values per unit of leaf value."""
    m = _extend_all(zero, one, d, -1, weights)
    for e in range(d):
        phi[e] = _element_value(weights, m, zero[e], one[e])


# ----------------------------------------------------------- pattern tables
@numba.njit(parallel=True, cache=True)
def _fill_tables(paths_lo, paths_hi, elem_start, elem_zero, table_start, tables):
    """For every tabulated path of ``paths_lo:paths_hi``: ``tables[start +
    pattern * d + e]`` = element e's value per unit of leaf value when bit k
    of ``pattern`` is element k's one fraction."""
    for p in numba.prange(paths_lo, paths_hi):
        start = table_start[p]
        if start < 0:
            continue
        e0 = elem_start[p]
        d = elem_start[p + 1] - e0
        zero = elem_zero[e0: e0 + d]
        one = np.empty(d)
        weights = np.empty(d + 2)
        phi = np.empty(d)
        for pattern in range(1 << d):
            for e in range(d):
                one[e] = (pattern >> e) & 1
            _path_shap(zero, one, d, weights, phi)
            for e in range(d):
                tables[start + pattern * d + e] = phi[e]


def tree_groups(paths: TreePaths, n_rows: int) -> list[tuple[int, int, np.ndarray, int]]:
    """Trees in consecutive groups whose pattern tables fit ``TABLE_BYTES``.

    A path is tabulated when it has at most ``TABLE_MAX_ELEMENTS`` elements
    and no more patterns than rows to explain (otherwise tabulating costs more
    than it saves), unless its tree's tables alone would exceed the budget.

    Returns
    -------
    list of (first tree, end tree, table_start, table size): ``table_start``
    is per path (-1: computed row by row), offsets into that group's table.
    """
    n_elems = np.diff(paths.elem_start)
    tabulated = (n_elems <= TABLE_MAX_ELEMENTS) & ((1 << np.minimum(n_elems, 62)) <= n_rows)
    budget = TABLE_BYTES // 8
    size = np.where(tabulated, n_elems << np.minimum(n_elems, 62), 0)
    per_tree = np.add.reduceat(size, paths.tree_paths[:-1])  # every tree has a leaf
    too_large = np.repeat(per_tree > budget, np.diff(paths.tree_paths))
    tabulated &= ~too_large
    size[too_large] = 0
    per_tree[per_tree > budget] = 0
    groups, lo, n_trees = [], 0, len(paths.tree_paths) - 1
    while lo < n_trees:
        hi, total = lo + 1, per_tree[lo]
        while hi < n_trees and total + per_tree[hi] <= budget:
            total += per_tree[hi]
            hi += 1
        p_lo, p_hi = paths.tree_paths[lo], paths.tree_paths[hi]
        sizes = size[p_lo:p_hi]
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        table_start = np.full(len(size), -1, np.int64)
        table_start[p_lo:p_hi] = np.where(tabulated[p_lo:p_hi], offsets, -1)
        groups.append((lo, hi, table_start, int(sizes.sum())))
        lo = hi
    return groups


def build_tables(paths: TreePaths, group) -> np.ndarray:
    """The pattern tables of one group of ``tree_groups``."""
    lo, hi, table_start, size = group
    tables = np.empty(size)
    _fill_tables(paths.tree_paths[lo], paths.tree_paths[hi], paths.elem_start, paths.elem_zero,
                 table_start, tables)
    return tables


# ------------------------------------------------------------------- routing
class Routing(NamedTuple):
    """Per packed node, what a row needs to find its way (``routing``)."""

    feature: np.ndarray  # int64
    threshold: np.ndarray  # float64
    flags: np.ndarray  # int64: bit 0 categorical, bit 1 missing values go left
    cat_index: np.ndarray  # int64
    left: np.ndarray  # int64
    right: np.ndarray  # int64


def routing(nodes: np.ndarray) -> Routing:
    """The node records of ``tree.pack_trees`` as contiguous columns."""
    flags = (nodes["is_categorical"] != 0).astype(np.int64)
    flags |= (nodes["missing_left"] != 0).astype(np.int64) << 1
    return Routing(nodes["feature"].astype(np.int64), nodes["threshold"].astype(np.float64),
                   flags, nodes["cat_index"].astype(np.int64), nodes["left"].astype(np.int64),
                   nodes["right"].astype(np.int64))


@numba.njit(cache=True, inline="always")
def _goes_left(x, k, route, bitsets):
    """1 if a row with value ``x`` goes left at packed node k, as
    ``tree.predict_raw``: x <= threshold, or the category's bit; missing values
    (and codes outside [0, 255)) to the learned side."""
    _, threshold, flags, cat_index, _, _ = route
    if np.isnan(x):
        return (flags[k] >> 1) & 1
    if flags[k] & 1:
        code = np.int64(x)
        if code < 0 or code >= MISSING_BIN:
            return (flags[k] >> 1) & 1
        word = bitsets[cat_index[k], code >> 6] >> np.uint64(code & 63)
        return np.int64(word & np.uint64(1))
    return np.int64(x <= threshold[k])


@numba.njit(cache=True, inline="always")
def _route(X, i, route, bitsets, node_elem, split_order, s_lo, s_hi, lo, failed, went):
    """Row i through one tree (its split nodes ``split_order[s_lo:s_hi]``, parents
    first): went[k - lo] = 1 if it goes left at node k, and failed[k - lo] =
    the bits of the elements whose splits it leaves the path to node k at
    (elements past bit 62 share bit 62; ``_one_fractions`` walks such paths)."""
    feature, _, _, _, left, right = route
    failed[0] = 0
    for s in range(s_lo, s_hi):
        k = split_order[s]
        go = _goes_left(X[i, feature[k]], k, route, bitsets)
        went[k - lo] = go
        bit = np.int64(1) << min(node_elem[k], 62)
        f = failed[k - lo]
        failed[left[k] - lo] = f | (bit * (1 - go))
        failed[right[k] - lo] = f | (bit * go)


@numba.njit(cache=True, inline="always")
def _one_fractions(d, leaf, lo, failed, went, parent, left, node_elem, one):
    """one[e] for the d elements of the path to ``leaf``."""
    if d <= 62:
        pattern = ~failed[leaf - lo]
        for e in range(d):
            one[e] = (pattern >> e) & 1
        return
    one[:d] = 1.0
    child = leaf
    while parent[child] >= 0:
        a = parent[child]
        if went[a - lo] != np.int64(child == left[a]):
            one[node_elem[a]] = 0.0
        child = a


# -------------------------------------------------------------- SHAP values
@numba.njit(parallel=True, cache=True)
def _shap_rows(X, route, bitsets, roots, trees_lo, trees_hi, paths, table_start, tables,
               path_values, tree_output, out):
    """Add trees ``trees_lo:trees_hi``'s SHAP values of every row to ``out``
    (shape (n_rows, n_outputs * (n_features + 1)); the bias columns untouched).
    ``path_values[p]``: the K values path p's leaf adds, tree weight included."""
    (_path_tree, path_leaf, elem_start, elem_feature, elem_zero, tree_paths, node_elem, parent,
     split_order, tree_splits) = paths
    n, k_values, width = X.shape[0], path_values.shape[1], X.shape[1] + 1
    ends = np.append(roots[1:], len(parent))
    max_nodes = np.max(ends[trees_lo:trees_hi] - roots[trees_lo:trees_hi])
    max_d = np.max(np.diff(elem_start))
    for c in numba.prange((n + CHUNK_ROWS - 1) // CHUNK_ROWS):
        failed, went = np.empty(max_nodes, np.int64), np.empty(max_nodes, np.int64)
        one, phi, weights = np.empty(max_d + 1), np.empty(max_d + 1), np.empty(max_d + 2)
        for t in range(trees_lo, trees_hi):
            lo, column = roots[t], tree_output[t] * width
            for i in range(c * CHUNK_ROWS, min(n, (c + 1) * CHUNK_ROWS)):
                _route(X, i, route, bitsets, node_elem, split_order, tree_splits[t],
                       tree_splits[t + 1], lo, failed, went)
                row = out[i, column:]
                for p in range(tree_paths[t], tree_paths[t + 1]):
                    e0, leaf = elem_start[p], path_leaf[p]
                    d = elem_start[p + 1] - e0
                    if table_start[p] >= 0:
                        pattern = ((np.int64(1) << d) - 1) & ~failed[leaf - lo]
                        base = table_start[p] + pattern * d
                        if k_values == 1:  # the common case, without the copy to phi
                            v = path_values[p, 0]
                            for e in range(d):
                                row[elem_feature[e0 + e]] += v * tables[base + e]
                            continue
                        for e in range(d):
                            phi[e] = tables[base + e]
                    else:
                        _one_fractions(d, leaf, lo, failed, went, parent, route[4], node_elem,
                                       one)
                        _path_shap(elem_zero[e0: e0 + d], one, d, weights, phi)
                    for q in range(k_values):
                        v = path_values[p, q]
                        for e in range(d):
                            row[q * width + elem_feature[e0 + e]] += v * phi[e]


# -------------------------------------------------------- interaction values
@numba.njit(cache=True, inline="always")
def _path_interactions(zero, one, d, weights, phi, pairs):
    """The path's SHAP values (``phi``, per unit of leaf value) and
    ``pairs[a, b]``, a != b: half the difference of element b's SHAP values
    with element a's fraction conditioned on (o_a) and off (z_a), i.e.
    (o_a - z_a) (o_b - z_b) UNWOUND_SUM(b) / 2 on the path without a (as
    XGBoost's ``CalculateContributionsInteractions``)."""
    _path_shap(zero, one, d, weights, phi)
    for a in range(d):
        m = _extend_all(zero, one, d, a, weights)
        scale = 0.5 * (one[a] - zero[a])
        for b in range(d):
            if b != a:
                pairs[a, b] = scale * _element_value(weights, m, zero[b], one[b])


@numba.njit(parallel=True, cache=True)
def _interaction_rows(X, route, bitsets, roots, paths, leaf_values, tree_weight, tree_output,
                      out):
    """Add every tree's SHAP interaction values of every row to ``out`` (shape
    (n_rows, n_outputs, n_features + 1, n_features + 1); the bias untouched).
    The diagonal takes phi_i less the row's off-diagonal interactions."""
    (_path_tree, path_leaf, elem_start, elem_feature, elem_zero, tree_paths, node_elem, parent,
     split_order, tree_splits) = paths
    n, k_values = X.shape[0], leaf_values.shape[1]
    max_nodes = np.max(np.append(roots[1:], len(parent)) - roots)
    max_d = np.max(np.diff(elem_start))
    for i in numba.prange(n):
        failed, went = np.empty(max_nodes, np.int64), np.empty(max_nodes, np.int64)
        one, phi, weights = np.empty(max_d + 1), np.empty(max_d + 1), np.empty(max_d + 2)
        pairs = np.empty((max_d + 1, max_d + 1))
        for t in range(len(roots)):
            lo = roots[t]
            _route(X, i, route, bitsets, node_elem, split_order, tree_splits[t],
                   tree_splits[t + 1], lo, failed, went)
            for p in range(tree_paths[t], tree_paths[t + 1]):
                e0, leaf = elem_start[p], path_leaf[p]
                d = elem_start[p + 1] - e0
                _one_fractions(d, leaf, lo, failed, went, parent, route[4], node_elem, one)
                _path_interactions(elem_zero[e0: e0 + d], one, d, weights, phi, pairs)
                for q in range(k_values):
                    v = tree_weight[t] * leaf_values[leaf, q]
                    block = out[i, tree_output[t] + q]
                    for a in range(d):
                        fa = elem_feature[e0 + a]
                        block[fa, fa] += v * phi[a]
                        for b in range(d):
                            if b != a:
                                fb = elem_feature[e0 + b]
                                block[fa, fb] += v * pairs[a, b]
                                block[fa, fa] -= v * pairs[a, b]


# ------------------------------------------------------------------ drivers
def shap_values(X, packed, paths: TreePaths, leaf_values, tree_weight, tree_output,
                n_outputs) -> np.ndarray:
    """SHAP values of every row for a weighted sum of trees, bias excluded.

    The model explained is ``f_q(x) = sum_t tree_weight[t] * leaf_values[leaf_t(x),
    q - tree_output[t]]`` for the outputs ``q`` each tree writes to.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float32 or float64, C-contiguous
        Raw values (categorical features as codes), NaN = missing.
    packed : tree.PackedTrees (nodes, roots, bitsets)
    paths : TreePaths
        ``tree_paths(nodes, roots)``.
    leaf_values : ndarray of shape (n_nodes, K), float64
        Per packed node, the K values tree t adds to outputs
        ``tree_output[t] .. tree_output[t] + K - 1`` at a leaf.
    tree_weight : ndarray of shape (n_trees,), float64
    tree_output : ndarray of shape (n_trees,), int64
    n_outputs : int

    Returns
    -------
    ndarray of shape (n_rows, n_outputs, n_features + 1), float64
        The last column (the bias) is zero; see ``expected_values``.
    """
    nodes, roots, bitsets = packed
    out = np.zeros((X.shape[0], n_outputs, X.shape[1] + 1))
    if len(roots) == 0 or X.shape[0] == 0:
        return out
    route = routing(nodes)
    path_values = tree_weight[paths.path_tree, None] * leaf_values[paths.path_leaf]
    flat = out.reshape(X.shape[0], -1)
    for group in tree_groups(paths, X.shape[0]):
        tables = build_tables(paths, group)
        _shap_rows(X, route, bitsets, roots, group[0], group[1], tuple(paths), group[2], tables,
                   path_values, tree_output, flat)
    return out


def interaction_values(X, packed, paths: TreePaths, leaf_values, tree_weight, tree_output,
                       n_outputs) -> np.ndarray:
    """SHAP interaction values, shape (n_rows, n_outputs, n_features + 1,
    n_features + 1), bias excluded; arguments as ``shap_values``."""
    nodes, roots, bitsets = packed
    d1 = X.shape[1] + 1
    out = np.zeros((X.shape[0], n_outputs, d1, d1))
    if len(roots) == 0 or X.shape[0] == 0:
        return out
    _interaction_rows(X, routing(nodes), bitsets, roots, tuple(paths), leaf_values, tree_weight,
                      tree_output, out)
    return out
