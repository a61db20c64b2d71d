"""Histograms of per-row statistics, one pass per partition and tree level.

A histogram ``hist[slot, feature, bin, stat]`` sums the fixed-point statistics
of the rows that sit in the node assigned to ``slot`` and whose ``feature``
falls in ``bin``. One call serves every node being built at a level, of every
tree in a batch (K trees of a multinomial round, or many trees of a forest),
so a level costs one pass over the partition.
"""

import numba
import numpy as np

from ._common import MAX_BINS, STAT_DTYPE


@numba.njit(parallel=True, cache=True)
def _accumulate3(X_binned, gathered, features, row_index, row_slot, hist):
    """Three statistics (g, h, count): the gradient boosting hot loop.

    Each feature's codes of the selected rows are first copied into a
    contiguous buffer, so the accumulation loop streams.
    """
    m = len(row_index)
    for k in numba.prange(len(features)):
        f = features[k]
        codes = X_binned[f]
        compact = np.empty(m, np.uint8)
        for r in range(m):
            compact[r] = codes[row_index[r]]
        h = hist[:, f]
        for r in range(m):
            b = compact[r]
            s = row_slot[r]
            h[s, b, 0] += gathered[r, 0]
            h[s, b, 1] += gathered[r, 1]
            h[s, b, 2] += gathered[r, 2]


@numba.njit(parallel=True, cache=True)
def _accumulate(X_binned, gathered, features, row_index, row_slot, hist):
    """Any number of statistics (class weights, counts)."""
    n_stats = gathered.shape[1]
    for k in numba.prange(len(features)):
        f = features[k]
        codes = X_binned[f]
        h = hist[:, f]
        for r in range(len(row_index)):
            b = codes[row_index[r]]
            s = row_slot[r]
            for j in range(n_stats):
                h[s, b, j] += gathered[r, j]


@numba.njit(parallel=True, cache=True)
def _root3(X_binned, stats, positions, features, hist):
    """Root histograms of every tree: rows stream in order, no index lists."""
    n_trees, n_rows = positions.shape
    for k in numba.prange(len(features)):
        f = features[k]
        codes = X_binned[f]
        for t in range(n_trees):
            h = hist[t, f]
            st = stats[t]
            pos = positions[t]
            for i in range(n_rows):
                if pos[i] >= 0:
                    b = codes[i]
                    h[b, 0] += st[i, 0]
                    h[b, 1] += st[i, 1]
                    h[b, 2] += st[i, 2]


@numba.njit(parallel=True, cache=True)
def _root_any(X_binned, stats, positions, features, hist):
    n_trees, n_rows = positions.shape
    n_stats = stats.shape[2]
    for k in numba.prange(len(features)):
        f = features[k]
        codes = X_binned[f]
        for t in range(n_trees):
            h = hist[t, f]
            st = stats[t]
            pos = positions[t]
            for i in range(n_rows):
                if pos[i] >= 0:
                    b = codes[i]
                    for j in range(n_stats):
                        h[b, j] += st[i, j]


def root_histograms(X_binned, stats, positions, features):
    """Histograms of the root of every tree (node 0 = slot t for tree t).

    Same result as ``build_histograms`` with every tree's root as its slot,
    but rows stream in order: the level that visits every row is the fastest.
    """
    n_trees = positions.shape[0]
    hist = np.zeros((n_trees, X_binned.shape[0], MAX_BINS, stats.shape[2]), dtype=STAT_DTYPE)
    kernel = _root3 if stats.shape[2] == 3 else _root_any
    kernel(X_binned, stats, positions, np.asarray(features, np.int64), hist)
    return hist


def build_histograms(X_binned, stats, positions, slot_of_node, n_slots, features):
    """Histograms of the nodes being built, with rows where they are (no splits applied).

    Parameters
    ----------
    X_binned : ndarray of shape (n_features, n_rows), uint8
    stats : ndarray of shape (n_trees, n_rows, n_stats), int64
        Fixed-point per-row statistics, e.g. (g, h, 1) for gradient boosting.
    positions : ndarray of shape (n_trees, n_rows), int32
        Node of each row in each tree; -1 for rows outside the tree (not sampled).
    slot_of_node : ndarray of shape (n_trees, max_nodes), int32
        Output slot of each node, -1 for nodes not built in this pass.
    n_slots : int
    features : ndarray of int
        Features to histogram (others stay zero: column subsampling).

    Returns
    -------
    hist : ndarray of shape (n_slots, n_features, 256, n_stats), int64
    """
    n_trees = positions.shape[0]
    no_splits = (
        np.full((n_trees, 0), -1, np.int32), np.zeros(0, np.int32),
        np.zeros((0, MAX_BINS), np.bool_), np.zeros(0, np.int32), np.zeros(0, np.int32),
    )
    return split_and_build(X_binned, stats, positions, no_splits, slot_of_node, n_slots,
                           features)[1]


@numba.njit(cache=True)
def _route_and_collect(X_binned, positions, split_of_node, split_feature, goes_left, left_child,
                       right_child, slot_of_node, stats):
    """One pass: move rows to their children, and collect the rows (with their
    statistics) whose new node is being built."""
    n_trees, n_rows = positions.shape
    n_stats = stats.shape[2]
    out = positions.copy()
    row_index = np.empty(n_trees * n_rows, np.int32)
    row_slot = np.empty(n_trees * n_rows, np.int32)
    gathered = np.empty((n_trees * n_rows, n_stats), stats.dtype)
    k = 0
    max_nodes = split_of_node.shape[1]
    for t in range(n_trees):
        for i in range(n_rows):
            node = positions[t, i]
            if node < 0:
                continue
            if node < max_nodes:
                s = split_of_node[t, node]
                if s >= 0:
                    if goes_left[s, X_binned[split_feature[s], i]]:
                        node = left_child[s]
                    else:
                        node = right_child[s]
                    out[t, i] = node
            if node < slot_of_node.shape[1]:
                slot = slot_of_node[t, node]
                if slot >= 0:
                    row_index[k] = i
                    row_slot[k] = slot
                    for j in range(n_stats):
                        gathered[k, j] = stats[t, i, j]
                    k += 1
    return out, row_index[:k], row_slot[:k], gathered[:k]


def split_and_build(X_binned, stats, positions, split_arrays, slot_of_node, n_slots, features):
    """``apply_splits`` then ``build_histograms`` of the requested nodes, fused.

    Returns
    -------
    positions : ndarray (n_trees, n_rows), int32
    hist : ndarray (n_slots, n_features, 256, n_stats), int64
    """
    new_positions, row_index, row_slot, gathered = _route_and_collect(
        X_binned, positions, *split_arrays, slot_of_node, stats
    )
    hist = np.zeros((n_slots, X_binned.shape[0], MAX_BINS, stats.shape[2]), dtype=STAT_DTYPE)
    if n_slots:
        kernel = _accumulate3 if stats.shape[2] == 3 else _accumulate
        kernel(X_binned, gathered, np.asarray(features, np.int64), row_index, row_slot, hist)
    return new_positions, hist


@numba.njit(cache=True)
def apply_splits(X_binned, positions, split_of_node, split_feature, goes_left, left_child, right_child):
    """Move every row from a split node to its child.

    Parameters
    ----------
    X_binned : ndarray of shape (n_features, n_rows), uint8
    positions : ndarray of shape (n_trees, n_rows), int32
        Current nodes; not modified.
    split_of_node : ndarray of shape (n_trees, max_nodes), int32
        Index into the split arrays for nodes split in this step, else -1.
    split_feature : ndarray of shape (n_splits,), int32
    goes_left : ndarray of shape (n_splits, 256), bool
        Direction of each bin, the missing bin included (learned default).
    left_child, right_child : ndarray of shape (n_splits,), int32

    Returns
    -------
    new_positions : ndarray of shape (n_trees, n_rows), int32
    """
    n_trees, n_rows = positions.shape
    out = positions.copy()
    for t in range(n_trees):
        for i in range(n_rows):
            node = positions[t, i]
            if node < 0 or node >= split_of_node.shape[1]:
                continue
            s = split_of_node[t, node]
            if s >= 0:
                if goes_left[s, X_binned[split_feature[s], i]]:
                    out[t, i] = left_child[s]
                else:
                    out[t, i] = right_child[s]
    return out
