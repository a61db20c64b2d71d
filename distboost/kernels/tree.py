"""Fast traversal of fitted trees (``trees.tree.Tree``: one flat node array each).

Node records follow ``common.NODE_DTYPE``. Trees of a model are packed into
one array (``pack_trees``) so that a single numba call sums every tree's
output for every row.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from .common import MISSING_BIN, N_BITSET_WORDS, NODE_DTYPE
from .node_records import put_bitset
from .sparse_codes import (
    is_sparse_codes,
    n_code_rows,
    row_code,
)


def bitset_from_mask(goes_left: np.ndarray) -> np.ndarray:
    """Pack a 256-entry bool array into four uint64 words (``put_bitset``)."""
    bits = np.zeros((1, N_BITSET_WORDS), np.uint64)
    put_bitset(bits, 0, np.asarray(goes_left, np.bool_))
    return bits[0]


def feature_totals(nodes: np.ndarray, n_features: int, kind: str = "gain") -> np.ndarray:
    """Per-feature totals over the split nodes of ``nodes`` (one tree's, or
    several trees' concatenated, added in node order).

    ``kind="gain"``: the splits' loss reductions (ESL eq. 10.42's squared
    improvements for squared error); ``"split"``: the number of splits;
    ``"cover"``: the hessian sums of the nodes split.
    """
    split = nodes[nodes["is_leaf"] == 0]
    weights = {"gain": split["gain"], "split": np.ones(len(split)), "cover": split["cover"]}[kind]
    return np.bincount(split["feature"], weights=weights, minlength=n_features)


class PackedTrees(NamedTuple):
    """Trees concatenated for the traversal kernels (``pack_trees``); unpacks
    as their arguments: ``predict_binned(X, *packed, out)``."""

    nodes: np.ndarray  # NODE_DTYPE, child ids and ``cat_index`` made global
    roots: np.ndarray  # (n_trees,) int64, each tree's root in ``nodes``
    bitsets: np.ndarray  # (n_total_cat_splits, 4) uint64


def pack_trees(trees: list) -> PackedTrees:
    """Concatenate trees for the traversal kernels.

    Returns
    -------
    PackedTrees (nodes, roots, bitsets)
    """
    if len(trees) == 1:  # ids and bitset rows stay as they are (a boosting round's one tree)
        return PackedTrees(trees[0].nodes.copy(), np.zeros(1, np.int64),
                           trees[0].cat_bitsets.copy())
    nodes, roots, bitsets = [], [], []
    n_nodes = n_bits = 0
    for tree in trees:
        t = tree.nodes.copy()
        internal = t["is_leaf"] == 0
        t["left"][internal] += n_nodes
        t["right"][internal] += n_nodes
        cat = t["is_categorical"] == 1
        t["cat_index"][cat] += n_bits
        roots.append(n_nodes)
        nodes.append(t)
        bitsets.append(tree.cat_bitsets)
        n_nodes += len(t)
        n_bits += len(tree.cat_bitsets)
    if not trees:
        return PackedTrees(np.zeros(0, NODE_DTYPE), np.zeros(0, np.int64),
                           np.zeros((0, N_BITSET_WORDS), np.uint64))
    return PackedTrees(np.concatenate(nodes), np.array(roots, np.int64), np.concatenate(bitsets))


@numba.njit(cache=True, inline="always")
def _bit_is_set(bitsets, row, code):
    return (bitsets[row, code >> 6] >> np.uint64(code & 63)) & np.uint64(1)


BLOCK_ROWS = 16
"""Rows that walk a tree together in binned traversals."""

CHUNK_BLOCKS = 256
"""Blocks of rows per parallel work item of a binned traversal."""


@numba.njit(cache=True)
def _walk_table(nodes, roots):
    """Per packed node: (feature, bin threshold, left, right, flags), with every
    leaf pointing to itself so that a walk can take a fixed number of steps;
    flags bit 0 = categorical, bit 1 = missing goes left. Also the raw
    thresholds and each tree's depth."""
    n = len(nodes)
    table = np.zeros((n, 5), np.int64)
    thresholds = np.full(n, np.inf)
    for k in range(n):
        node = nodes[k]
        if node["is_leaf"]:
            table[k, 2] = table[k, 3] = k
            table[k, 1] = 255
        else:
            thresholds[k] = node["threshold"]
            table[k, 0], table[k, 1] = node["feature"], node["bin_threshold"]
            table[k, 2], table[k, 3] = node["left"], node["right"]
            table[k, 4] = (node["is_categorical"] != 0) | ((node["missing_left"] != 0) << 1)
    depths = np.zeros(len(roots), np.int64)
    stack = np.empty((n + 1, 2), np.int64)  # (node, depth): depth from the links, not stored fields
    for t in range(len(roots)):
        stack[0, 0], stack[0, 1], top = roots[t], 0, 1
        while top > 0:
            top -= 1
            k, d = stack[top, 0], stack[top, 1]
            depths[t] = max(depths[t], d)
            if not nodes[k]["is_leaf"]:
                stack[top, 0], stack[top, 1] = nodes[k]["left"], d + 1
                stack[top + 1, 0], stack[top + 1, 1] = nodes[k]["right"], d + 1
                top += 2
    return table, thresholds, depths


@numba.njit(cache=True, inline="always")
def _step(X, i, raw, k, table, thresholds, bitsets, cat_index, has_categorical):
    """The packed node row ``i`` goes to from packed node ``k`` (a leaf: ``k``).

    ``X`` holds raw values (``raw``: compared with the thresholds, NaN missing)
    or bin codes (compared with the bin thresholds, the last bin missing). A
    numeric direction is computed without branches (a missing value compares
    false, then the flag decides); a categorical split tests the category's
    bit, and codes outside the known categories are missing too.
    """
    x = row_code(X, i, table[k, 0])
    flags = table[k, 4]
    if raw:
        left = np.int64(x <= thresholds[k])
        missing = np.isnan(x)
    else:
        left = np.int64(np.int64(x) <= table[k, 1])
        missing = np.int64(x) == MISSING_BIN
    if has_categorical and flags & 1 and not missing:
        code = np.int64(x)
        missing = code < 0 or code >= MISSING_BIN
        if not missing:
            left = np.int64(_bit_is_set(bitsets, cat_index[k], code) != 0)
    left |= np.int64(missing) & (flags >> 1)
    if has_categorical and missing:
        left = (flags >> 1) & 1
    return table[k, 3] + left * (table[k, 2] - table[k, 3])


@numba.njit(cache=True, inline="always")
def _leaves(X, raw, lo, n, table, thresholds, root, depth, bitsets, cat_index, has_categorical,
            ks):
    """ks[j] = packed index of the leaf row lo + j reaches, for j < n (``_step``).

    The rows walk the tree level by level together: their paths are
    independent, so the CPU overlaps them instead of waiting on one row's
    chain of dependent loads at a time.
    """
    for j in range(n):
        ks[j] = root
    for _ in range(depth):
        for j in range(n):
            ks[j] = _step(X, lo + j, raw, ks[j], table, thresholds, bitsets, cat_index,
                          has_categorical)


@numba.njit(cache=True, inline="always")
def _at_leaf(nodes, kind, t, k, root, i, tree_output, leaf_values, tree_weight, out):
    """What a traversal does when row ``i`` reaches packed leaf ``k`` of tree ``t``."""
    if kind == 0:
        out[tree_output[t], i] += nodes[k]["value"]
    elif kind == 1:
        for q in range(leaf_values.shape[1]):
            out[i, q] += tree_weight[t] * leaf_values[k, q]
    elif kind == 2:
        out[t, i] = k
    else:
        out[t, i] = k - root


@numba.njit(parallel=True, cache=True)
def _walk_links(X, raw, nodes, roots, bitsets, kind, tree_output, leaf_values, tree_weight, out):
    """Every traversal in one kernel, of raw values (``raw``) or bin codes,
    following the nodes' child links (any tree: deep ones, categorical
    splits); ``kind`` says what to do at a leaf (``_at_leaf``): 0 add
    ``value`` to out[tree_output[t], i]; 1 add tree_weight[t] *
    leaf_values[leaf] to out[i]; 2 store the packed leaf index in out[t, i];
    3 store the leaf's index within its tree."""
    n = n_code_rows(X)
    table, thresholds, depths = _walk_table(nodes, roots)
    cat_index = nodes["cat_index"].astype(np.int64)
    has_categorical = (nodes["is_categorical"] != 0).any()
    chunk = BLOCK_ROWS * CHUNK_BLOCKS
    for c in numba.prange((n + chunk - 1) // chunk):
        ks = np.empty(BLOCK_ROWS, np.int64)
        for lo in range(c * chunk, min(n, (c + 1) * chunk), BLOCK_ROWS):
            m = min(BLOCK_ROWS, n - lo)
            for t in range(len(roots)):
                _leaves(X, raw, lo, m, table, thresholds, roots[t], depths[t], bitsets, cat_index,
                        has_categorical, ks)
                for j in range(m):
                    _at_leaf(nodes, kind, t, ks[j], roots[t], lo + j, tree_output, leaf_values,
                             tree_weight, out)


HEAP_MAX_DEPTH = 10
"""Trees no deeper than this (and without categorical splits) are walked in
heap order (``_heap_tables``): 2**depth - 1 split slots per tree."""

HEAP_BLOCK_ROWS = 64
"""Rows that walk a tree together in heap order."""


@numba.njit(cache=True)
def _heap_tables(nodes, roots, depth):
    """Every tree as a complete binary tree of ``depth`` levels in heap order
    (XGBoost's array tree layout): slot s's children are 2s+1 (left) and
    2s+2, so a walk computes the next slot instead of loading it. A leaf above
    the last level becomes a chain of splits every row goes left at (feature
    0, threshold +inf, bin 255, missing left), ending in the leaf.

    Returns
    -------
    feature : ndarray (n_trees, 2**depth - 1), int64
    threshold : ndarray (n_trees, 2**depth - 1), float64
    bin_threshold : ndarray (n_trees, 2**depth - 1), uint64
    missing_left : ndarray (n_trees, 2**depth - 1), bool
    leaf : ndarray (n_trees, 2**depth), int64: packed node of each bottom slot
    """
    n_trees, n_split = len(roots), (1 << depth) - 1
    feature = np.zeros((n_trees, n_split), np.int64)
    threshold = np.full((n_trees, n_split), np.inf)
    bin_threshold = np.full((n_trees, n_split), MISSING_BIN, np.uint64)
    missing_left = np.ones((n_trees, n_split), np.bool_)
    leaf = np.zeros((n_trees, n_split + 1), np.int64)
    stack = np.empty((2 * depth + 2, 2), np.int64)  # (packed node, slot), depth first
    for t in range(n_trees):
        stack[0, 0], stack[0, 1], top = roots[t], 0, 1
        while top > 0:
            top -= 1
            k, slot = stack[top, 0], stack[top, 1]
            if slot >= n_split:
                leaf[t, slot - n_split] = k
                continue
            left, right = k, k
            if not nodes[k]["is_leaf"]:
                feature[t, slot], threshold[t, slot] = nodes[k]["feature"], nodes[k]["threshold"]
                bin_threshold[t, slot] = nodes[k]["bin_threshold"]
                missing_left[t, slot] = nodes[k]["missing_left"] != 0
                left, right = nodes[k]["left"], nodes[k]["right"]
            # a leaf's right side is never taken; its slots are filled all the same
            stack[top, 0], stack[top, 1] = right, 2 * slot + 2
            stack[top + 1, 0], stack[top + 1, 1] = left, 2 * slot + 1
            top += 2
    return feature, threshold, bin_threshold, missing_left, leaf


@numba.njit(cache=True, inline="always")
def _heap_tree_values(X, lo, m, t, feature, threshold, missing_left, depth, slots):
    """Rows lo .. lo+m-1 of raw values walk tree ``t`` in heap order: each
    step one feature load, one comparison (NaN: the learned direction) and the
    next slot computed (``2s + 2 - left``), no branch. Every row starts at
    the root, whose split is loaded once for the block (column-major rows:
    435 -> 373 ms for 1M rows and 100 trees; row-major ones as before)."""
    two, one, zero = np.uint64(2), np.uint64(1), np.uint64(0)
    root_feature, root_threshold, root_missing = feature[t, zero], threshold[t, zero], \
        missing_left[t, zero]
    for jj in range(m):  # the root: one split for every row, loaded once
        j = np.uint64(jj)
        x = X[lo + j, root_feature]
        left = (x <= root_threshold) | (np.isnan(x) & root_missing)
        slots[j] = two - (one if left else zero)
    for _ in range(depth - 1):
        for jj in range(m):
            j = np.uint64(jj)
            s = slots[j]
            x = X[lo + j, feature[t, s]]
            left = (x <= threshold[t, s]) | (np.isnan(x) & missing_left[t, s])
            slots[j] = two * s + two - (one if left else zero)


@numba.njit(cache=True, inline="always")
def _heap_tree_codes(X, lo, m, t, feature, bin_threshold, missing_left, depth, slots):
    """``_heap_tree_values`` for bin codes: a split's bin threshold is below
    the missing bin (a chain slot's is the missing bin: every code goes left)."""
    two, one, zero, missing_bin = np.uint64(2), np.uint64(1), np.uint64(0), np.uint64(MISSING_BIN)
    root_feature, root_threshold, root_missing = feature[t, zero], bin_threshold[t, zero], \
        missing_left[t, zero]
    for jj in range(m):  # the root: one split for every row, loaded once
        j = np.uint64(jj)
        code = np.uint64(X[lo + j, root_feature])
        left = (code <= root_threshold) | ((code == missing_bin) & root_missing)
        slots[j] = two - (one if left else zero)
    for _ in range(depth - 1):
        for jj in range(m):
            j = np.uint64(jj)
            s = slots[j]
            code = np.uint64(X[lo + j, feature[t, s]])
            left = (code <= bin_threshold[t, s]) | ((code == missing_bin) & missing_left[t, s])
            slots[j] = two * s + two - (one if left else zero)


@numba.njit(cache=True)
def _heap_leaf_values(nodes, leaf, kind):
    """The leaf value at each bottom slot of ``_heap_tables`` (``kind`` 0:
    raw scores; other traversals read the packed leaves, an empty table)."""
    values = np.empty(leaf.shape if kind == 0 else (0, 0))
    for t in range(values.shape[0]):
        for s in range(values.shape[1]):
            values[t, s] = nodes[leaf[t, s]]["value"]
    return values


@numba.njit(cache=True, inline="always")
def _block_sums(kind, sums, out, lo, m, store):
    """Raw scores (``kind`` 0): a block's rows' running sums, loaded from
    ``out`` before its trees and stored back after them (``store``), so that
    the trees add in the same order as into ``out`` itself."""
    if kind != 0:
        return
    if store:
        out[:, lo:lo + m] = sums[:, :m]
    else:
        sums[:, :m] = out[:, lo:lo + m]


@numba.njit(cache=True, inline="always")
def _block_leaves(nodes, kind, t, lo, m, slots, n_split, leaf, values, sums, roots, tree_output,
                  leaf_values, tree_weight, out):
    """A block's rows reached the bottom ``slots`` of tree ``t``: raw scores
    add the slots' leaf values to the block's sums; other traversals go
    through ``_at_leaf``."""
    ut = np.uint64(t)
    if kind == 0:
        o = tree_output[t]
        for j in range(m):
            sums[o, j] += values[ut, slots[np.uint64(j)] - n_split]
        return
    for j in range(m):
        _at_leaf(nodes, kind, t, leaf[ut, slots[np.uint64(j)] - n_split], roots[t], lo + j,
                 tree_output, leaf_values, tree_weight, out)


@numba.njit(parallel=True, cache=True)
def _walk_heap_values(X, nodes, roots, depth, kind, tree_output, leaf_values, tree_weight, out):
    """``_walk_links`` over raw values for trees of at most ``HEAP_MAX_DEPTH``
    levels without categorical splits, in heap order (``_heap_tables``): a
    block of rows walks each tree level by level together.

    Indices are unsigned: numba then drops its negative-index wraparound
    code, a third of the instructions of a step (and they are not mixed with
    signed values, which numba would compare as float64).
    """
    feature, threshold, _, missing_left, leaf = _heap_tables(nodes, roots, depth)
    feature = feature.astype(np.uint64)
    values = _heap_leaf_values(nodes, leaf, kind)
    n, n_split = X.shape[0], np.uint64(feature.shape[1])
    chunk = HEAP_BLOCK_ROWS * CHUNK_BLOCKS
    for c in numba.prange((n + chunk - 1) // chunk):
        slots = np.empty(HEAP_BLOCK_ROWS, np.uint64)
        sums = np.empty((out.shape[0] if kind == 0 else 1, HEAP_BLOCK_ROWS))
        for lo in range(c * chunk, min(n, (c + 1) * chunk), HEAP_BLOCK_ROWS):
            m = min(HEAP_BLOCK_ROWS, n - lo)
            _block_sums(kind, sums, out, lo, m, False)
            for t in range(len(roots)):
                ut = np.uint64(t)
                _heap_tree_values(X, np.uint64(lo), m, ut, feature, threshold, missing_left,
                                  depth, slots)
                _block_leaves(nodes, kind, t, lo, m, slots, n_split, leaf, values, sums, roots,
                              tree_output, leaf_values, tree_weight, out)
            _block_sums(kind, sums, out, lo, m, True)


@numba.njit(parallel=True, cache=True)
def _walk_heap_codes(X, nodes, roots, depth, kind, tree_output, leaf_values, tree_weight, out):
    """``_walk_heap_values`` over bin codes."""
    feature, _, bin_threshold, missing_left, leaf = _heap_tables(nodes, roots, depth)
    feature = feature.astype(np.uint64)
    values = _heap_leaf_values(nodes, leaf, kind)
    n, n_split = X.shape[0], np.uint64(feature.shape[1])
    chunk = HEAP_BLOCK_ROWS * CHUNK_BLOCKS
    for c in numba.prange((n + chunk - 1) // chunk):
        slots = np.empty(HEAP_BLOCK_ROWS, np.uint64)
        sums = np.empty((out.shape[0] if kind == 0 else 1, HEAP_BLOCK_ROWS))
        for lo in range(c * chunk, min(n, (c + 1) * chunk), HEAP_BLOCK_ROWS):
            m = min(HEAP_BLOCK_ROWS, n - lo)
            _block_sums(kind, sums, out, lo, m, False)
            for t in range(len(roots)):
                ut = np.uint64(t)
                _heap_tree_codes(X, np.uint64(lo), m, ut, feature, bin_threshold, missing_left,
                                 depth, slots)
                _block_leaves(nodes, kind, t, lo, m, slots, n_split, leaf, values, sums, roots,
                              tree_output, leaf_values, tree_weight, out)
            _block_sums(kind, sums, out, lo, m, True)


def _walk_heap(X, raw, nodes, roots, depth, kind, tree_output, leaf_values, tree_weight, out):
    """Heap-order traversal of raw values (``raw``) or bin codes."""
    walk = _walk_heap_values if raw else _walk_heap_codes
    walk(X, nodes, roots, depth, kind, tree_output, leaf_values, tree_weight, out)


def _walk(X, raw, nodes, roots, bitsets, kind, tree_output, leaf_values, tree_weight, out):
    """Every traversal: in heap order where the trees allow it (and the codes
    are dense), else by links."""
    if len(roots) and not (nodes["is_categorical"] != 0).any() and not is_sparse_codes(X):
        depth = _max_depth(nodes, roots)
        if depth <= HEAP_MAX_DEPTH:
            _walk_heap(X, raw, nodes, roots, max(depth, 1), kind, tree_output, leaf_values,
                       tree_weight, out)
            return
    _walk_links(X, raw, nodes, roots, bitsets, kind, tree_output, leaf_values, tree_weight, out)


def _max_depth(nodes, roots) -> int:
    """The deepest tree's depth, from the child links (not the stored depths)."""
    return int(_walk_table(nodes, roots)[2].max(initial=0))


def predict_raw(X, nodes, roots, bitsets, tree_output, out):
    """Add every tree's leaf value to ``out[tree_output[t], i]``.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64; NaN = missing,
        categorical features as codes
    nodes, roots, bitsets : from ``pack_trees``
    tree_output : ndarray of shape (n_trees,), int64
        Output (class) each tree adds to.
    out : ndarray of shape (n_outputs, n_rows), float64, updated in place
    """
    _walk(X, True, nodes, roots, bitsets, 0, tree_output, np.zeros((0, 1)), np.zeros(0), out)


def predict_binned(X_binned, nodes, roots, bitsets, tree_output, out):
    """``predict_raw`` on binned data of shape (n_rows, n_features), uint8."""
    _walk(X_binned, False, nodes, roots, bitsets, 0, tree_output, np.zeros((0, 1)),
                 np.zeros(0), out)


def pack_leaf_values(trees: list, values=None) -> np.ndarray:
    """Vector leaf values of ``pack_trees(trees)``'s nodes, shape (n_total_nodes, K).

    ``values`` (one (n_nodes, K) array per tree) replaces the trees' own
    ``leaf_values``, e.g. with a re-coding of each leaf's class.
    """
    values = [t.leaf_values for t in trees] if values is None else values
    if not trees:
        return np.zeros((0, 1))
    return np.ascontiguousarray(np.concatenate(values), np.float64)


def predict_leaf_vectors(X, nodes, roots, bitsets, leaf_values, tree_weight, out):
    """Add ``tree_weight[t] * leaf_values[leaf]`` of every tree to ``out[i]``.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64; NaN = missing
    nodes, roots, bitsets : from ``pack_trees``
    leaf_values : ndarray of shape (n_total_nodes, K), float64
        From ``pack_leaf_values``.
    tree_weight : ndarray of shape (n_trees,), float64
    out : ndarray of shape (n_rows, K), float64, updated in place
    """
    _walk(X, True, nodes, roots, bitsets, 1, np.zeros(0, np.int64), leaf_values,
              np.asarray(tree_weight, np.float64), out)


def predict_leaf_vectors_binned(X_binned, nodes, roots, bitsets, leaf_values, tree_weight, out):
    """``predict_leaf_vectors`` on binned data of shape (n_rows, n_features), uint8."""
    _walk(X_binned, False, nodes, roots, bitsets, 1, np.zeros(0, np.int64), leaf_values,
                 np.asarray(tree_weight, np.float64), out)


def leaf_ids_binned(X_binned, nodes, roots, bitsets, out):
    """Packed index of the leaf each row reaches in each tree.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8
    nodes, roots, bitsets : from ``pack_trees``
    out : ndarray of shape (n_trees, n_rows), int64, filled in place
    """
    _walk(X_binned, False, nodes, roots, bitsets, 2, np.zeros(0, np.int64), np.zeros((0, 1)),
                 np.zeros(0), out)


def leaf_indices_binned(X_binned, nodes, roots, bitsets, out):
    """Leaf reached by every row in every tree, on binned data.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8
    nodes, roots, bitsets : from ``pack_trees``
    out : ndarray of shape (n_trees, n_rows), int32, written
        Node id of the leaf within its own tree (``k - roots[t]``).
    """
    _walk(X_binned, False, nodes, roots, bitsets, 3, np.zeros(0, np.int64), np.zeros((0, 1)),
                 np.zeros(0), out)


def leaf_indices(X, nodes, roots, bitsets, out):
    """Leaf reached by every row in every tree, on raw values (``predict_raw``'s
    walk: NaN and unknown categories take the split's missing direction).

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64; NaN = missing,
        categorical features as codes
    nodes, roots, bitsets : from ``pack_trees``
    out : ndarray of shape (n_trees, n_rows), int64, written
        Node id of the leaf within its own tree (``k - roots[t]``): its index
        in the tree's ``nodes``.
    """
    _walk(X, True, nodes, roots, bitsets, 3, np.zeros(0, np.int64), np.zeros((0, 1)),
          np.zeros(0), out)


@numba.njit(cache=True)
def largest_leaf(nodes) -> float:
    """The largest |value| of a tree's leaves (``NODE_DTYPE`` records)."""
    best = 0.0
    for i in range(len(nodes)):
        if nodes[i]["is_leaf"]:
            best = max(best, abs(nodes[i]["value"]))
    return best


COPY_PARALLEL_MIN = 1 << 18
"""Margins (outputs x rows) from which ``copy_margins`` copies on the threads;
below, one copy on this thread costs less than waking them (spam's 3,065
margins: 10 us on the threads)."""


def copy_margins(src, dst):
    """dst[...] = src for (n_outputs, n_rows) arrays (the margins a round's
    trees are then added to), rows in parallel from ``COPY_PARALLEL_MIN``."""
    if src.size < COPY_PARALLEL_MIN:
        np.copyto(dst, src)
    else:
        _copy_margins(src, dst)


@numba.njit(parallel=True, cache=True)
def _copy_margins(src, dst):
    for i in numba.prange(src.shape[1]):
        for o in range(src.shape[0]):
            dst[o, i] = src[o, i]
