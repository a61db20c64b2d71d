"""A fitted tree as one flat node array, and fast traversal.

Node records follow ``_common.NODE_DTYPE``. Trees of a model are packed into
one array (``pack_trees``) so that a single numba call sums every tree's
output for every row.
"""

from __future__ import annotations

import numba
import numpy as np

from ._common import MISSING_BIN, N_BITSET_WORDS, NODE_DTYPE


class Tree:
    """A binary tree stored as a structured array.

    Parameters
    ----------
    nodes : ndarray of NODE_DTYPE
    cat_bitsets : ndarray of shape (n_categorical_splits, 4), uint64
        Bit c of row ``cat_index`` set: category code c goes left.
    leaf_values : ndarray of shape (n_nodes, K), float64, optional
        A vector per node (e.g. class frequencies of a classification tree),
        read by ``predict_leaf_vectors``; the scalar ``value`` path ignores it.
    """

    def __init__(self, nodes: np.ndarray, cat_bitsets: np.ndarray | None = None,
                 leaf_values: np.ndarray | None = None):
        self.nodes = nodes
        if cat_bitsets is None:
            cat_bitsets = np.zeros((0, N_BITSET_WORDS), np.uint64)
        self.cat_bitsets = cat_bitsets
        self.leaf_values = leaf_values

    @property
    def n_leaves(self) -> int:
        return int(self.nodes["is_leaf"].sum())

    @property
    def max_depth(self) -> int:
        return int(self.nodes["depth"].max())

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Leaf value of each row of a raw float64 matrix (categoricals as codes)."""
        packed = pack_trees([self])
        out = np.zeros((1, X.shape[0]))
        predict_raw(np.ascontiguousarray(X, np.float64), *packed, np.zeros(1, np.int64), out)
        return out[0]

    def to_dict(self) -> dict:
        out = {
            "nodes": {name: self.nodes[name].tolist() for name in NODE_DTYPE.names},
            "cat_bitsets": [[str(int(w)) for w in row] for row in self.cat_bitsets],
        }
        if self.leaf_values is not None:
            out["leaf_values"] = self.leaf_values.tolist()
        return out

    @classmethod
    def from_dict(cls, d: dict) -> Tree:
        fields = d["nodes"]
        nodes = np.zeros(len(fields["value"]), NODE_DTYPE)
        for name in NODE_DTYPE.names:
            nodes[name] = fields[name]
        bits = np.array([[int(w) for w in row] for row in d["cat_bitsets"]], np.uint64)
        values = d.get("leaf_values")
        values = None if values is None else np.asarray(values, np.float64).reshape(len(nodes), -1)
        return cls(nodes, bits.reshape(-1, N_BITSET_WORDS), values)

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, Tree)
            and np.array_equal(self.nodes, other.nodes)
            and np.array_equal(self.cat_bitsets, other.cat_bitsets)
            and (self.leaf_values is None) == (other.leaf_values is None)
            and (self.leaf_values is None or np.array_equal(self.leaf_values, other.leaf_values))
        )

    def __repr__(self) -> str:
        return f"Tree(n_nodes={len(self.nodes)}, n_leaves={self.n_leaves})"


def bitset_from_mask(goes_left: np.ndarray) -> np.ndarray:
    """Pack a 256-entry bool array into four uint64 words."""
    bits = np.zeros(N_BITSET_WORDS, np.uint64)
    for code in np.flatnonzero(goes_left[:MISSING_BIN]):
        bits[code // 64] |= np.uint64(1) << np.uint64(code % 64)
    return bits


def pack_trees(trees: list[Tree]):
    """Concatenate trees for the traversal kernels.

    Returns
    -------
    nodes : ndarray of NODE_DTYPE, all trees' nodes with child ids and
        ``cat_index`` made global
    roots : ndarray of shape (n_trees,), int64
    bitsets : ndarray of shape (n_total_cat_splits, 4), uint64
    """
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
        return np.zeros(0, NODE_DTYPE), np.zeros(0, np.int64), np.zeros((0, N_BITSET_WORDS), np.uint64)
    return np.concatenate(nodes), np.array(roots, np.int64), np.concatenate(bitsets)


@numba.njit(cache=True, inline="always")
def _bit_is_set(bitsets, row, code):
    return (bitsets[row, code >> 6] >> np.uint64(code & 63)) & np.uint64(1)


@numba.njit(cache=True, inline="always")
def _leaf_raw(X, i, nodes, k, bitsets):
    """Packed index of the leaf row i of raw X reaches from node k."""
    while not nodes[k]["is_leaf"]:
        node = nodes[k]
        x = X[i, node["feature"]]
        if np.isnan(x):
            left = node["missing_left"]
        elif node["is_categorical"]:
            code = int(x)
            if code < 0 or code >= MISSING_BIN:
                left = node["missing_left"]
            else:
                left = _bit_is_set(bitsets, node["cat_index"], code)
        else:
            left = x <= node["threshold"]
        k = node["left"] if left else node["right"]
    return k


@numba.njit(cache=True, inline="always")
def _leaf_binned(X_binned, i, nodes, k, bitsets):
    """Packed index of the leaf row i of binned X reaches from node k."""
    while not nodes[k]["is_leaf"]:
        node = nodes[k]
        b = X_binned[node["feature"], i]
        if b == MISSING_BIN:
            left = node["missing_left"]
        elif node["is_categorical"]:
            left = _bit_is_set(bitsets, node["cat_index"], b)
        else:
            left = b <= node["bin_threshold"]
        k = node["left"] if left else node["right"]
    return k


@numba.njit(parallel=True, cache=True)
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
    n = X.shape[0]
    for i in numba.prange(n):
        for t in range(len(roots)):
            out[tree_output[t], i] += nodes[_leaf_raw(X, i, nodes, roots[t], bitsets)]["value"]


@numba.njit(parallel=True, cache=True)
def predict_binned(X_binned, nodes, roots, bitsets, tree_output, out):
    """``predict_raw`` on binned data of shape (n_features, n_rows), uint8."""
    n = X_binned.shape[1]
    for i in numba.prange(n):
        for t in range(len(roots)):
            k = _leaf_binned(X_binned, i, nodes, roots[t], bitsets)
            out[tree_output[t], i] += nodes[k]["value"]


def pack_leaf_values(trees: list[Tree], values=None) -> np.ndarray:
    """Vector leaf values of ``pack_trees(trees)``'s nodes, shape (n_total_nodes, K).

    ``values`` (one (n_nodes, K) array per tree) replaces the trees' own
    ``leaf_values``, e.g. with a re-coding of each leaf's class.
    """
    values = [t.leaf_values for t in trees] if values is None else values
    if not trees:
        return np.zeros((0, 1))
    return np.ascontiguousarray(np.concatenate(values), np.float64)


@numba.njit(parallel=True, cache=True)
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
    n, n_out = X.shape[0], leaf_values.shape[1]
    for i in numba.prange(n):
        for t in range(len(roots)):
            k = _leaf_raw(X, i, nodes, roots[t], bitsets)
            for j in range(n_out):
                out[i, j] += tree_weight[t] * leaf_values[k, j]


@numba.njit(parallel=True, cache=True)
def predict_leaf_vectors_binned(X_binned, nodes, roots, bitsets, leaf_values, tree_weight, out):
    """``predict_leaf_vectors`` on binned data of shape (n_features, n_rows), uint8."""
    n, n_out = X_binned.shape[1], leaf_values.shape[1]
    for i in numba.prange(n):
        for t in range(len(roots)):
            k = _leaf_binned(X_binned, i, nodes, roots[t], bitsets)
            for j in range(n_out):
                out[i, j] += tree_weight[t] * leaf_values[k, j]


@numba.njit(parallel=True, cache=True)
def leaf_ids_binned(X_binned, nodes, roots, bitsets, out):
    """Packed index of the leaf each row reaches in each tree.

    Parameters
    ----------
    X_binned : ndarray of shape (n_features, n_rows), uint8
    nodes, roots, bitsets : from ``pack_trees``
    out : ndarray of shape (n_trees, n_rows), int64, filled in place
    """
    n = X_binned.shape[1]
    for i in numba.prange(n):
        for t in range(len(roots)):
            out[t, i] = _leaf_binned(X_binned, i, nodes, roots[t], bitsets)


@numba.njit(parallel=True, cache=True)
def leaf_indices_binned(X_binned, nodes, roots, bitsets, out):
    """Leaf reached by every row in every tree, on binned data.

    Parameters
    ----------
    X_binned : ndarray of shape (n_features, n_rows), uint8
    nodes, roots, bitsets : from ``pack_trees``
    out : ndarray of shape (n_trees, n_rows), int32, written
        Node id of the leaf within its own tree (``k - roots[t]``).
    """
    n = X_binned.shape[1]
    for i in numba.prange(n):
        for t in range(len(roots)):
            out[t, i] = _leaf_binned(X_binned, i, nodes, roots[t], bitsets) - roots[t]
