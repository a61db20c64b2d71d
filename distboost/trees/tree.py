"""A fitted tree: one flat array of node records (``kernels.common.NODE_DTYPE``).

A tree is what the growers make (``trees.grower``, ``kernels.local_grower``),
what models keep and save, and what the traversal kernels walk
(``kernels.tree``), packed with the model's other trees. Like scikit-learn's
``TreePredictor``, it is one structured numpy array: cheap to pickle and to
send to the workers.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from ..kernels.common import N_BITSET_WORDS, NODE_DTYPE
from ..kernels.node_records import Grown, NodeTable, node_records, table_records
from ..kernels.tree import bitset_from_mask, pack_trees, predict_raw


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

    Attributes
    ----------
    bounds : ndarray of shape (n_nodes, 2), float64, or None
        With monotone constraints, the bounds [lower, upper] of each node's
        value before the learning rate (``grower``, ``line_search``); not
        saved in model files, where the values already respect them.
    """

    def __init__(self, nodes: np.ndarray, cat_bitsets: np.ndarray | None = None,
                 leaf_values: np.ndarray | None = None):
        self.nodes = nodes
        if cat_bitsets is None:
            cat_bitsets = np.zeros((0, N_BITSET_WORDS), np.uint64)
        self.cat_bitsets = cat_bitsets
        self.leaf_values = leaf_values
        self.bounds = None

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


def tree_from_table(table: NodeTable, criterion, mapper, learning_rate: float) -> Tree:
    """The ``Tree`` of a node table: values (times the learning rate), covers,
    and vectors from the criterion; thresholds from the bins. Fields a node
    has no use for are zero (or -1 for its feature, children and categories)."""
    bounds = (table.lower, table.upper)
    rec = np.empty(len(table.split), NODE_DTYPE)
    node_records(rec, learning_rate * criterion.node_values(table.totals, *bounds),
                 criterion.covers(table.totals), table.count, table.depth, table.split,
                 table.gain, table.missing_left, table.feature, table.left, table.right,
                 table.split_bin, mapper.is_categorical_, mapper.threshold_table)
    is_cat = np.flatnonzero(rec["is_categorical"])
    bits = np.array([bitset_from_mask(table.directions[table.categories[k]]) for k in is_cat],
                    np.uint64).reshape(-1, N_BITSET_WORDS)
    vectors = criterion.node_vectors(table.totals, *bounds) \
        if hasattr(criterion, "node_vectors") else None
    tree = Tree(rec, bits, vectors)
    if table.lower is not None:  # for the line search, which sets the leaves again within bounds
        tree.bounds = np.column_stack([table.lower, table.upper])
    return tree


def trees_from_grown(grown: Grown, criterion, mapper, learning_rate: float) -> list[Tree]:
    """``tree_from_table`` of each of the compiled grower's trees (no bounds:
    it grows no monotone constraints), the records of all of them made in one
    compiled pass (``table_records``) from their values and covers, which the
    criterion gives node by node."""
    rec = np.empty(len(grown.ni), NODE_DTYPE)
    bits, where = table_records(grown.ni, grown.gains, grown.cat, grown.bounds,
                                learning_rate * criterion.node_values(grown.tot),
                                criterion.covers(grown.tot), mapper.is_categorical_,
                                mapper.threshold_table, rec)
    vectors = criterion.node_vectors(grown.tot) if hasattr(criterion, "node_vectors") else None
    return [Tree(rec[a:b], bits[c:d], None if vectors is None else vectors[a:b])
            for (a, b), (c, d) in zip(pairwise(grown.bounds.tolist()), pairwise(where.tolist()))]
