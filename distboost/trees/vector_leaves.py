"""Vector-leaf trees: one tree per round shared by the k outputs.

XGBoost's ``multi_strategy="multi_output_tree"``: each round grows one tree
whose splits maximise the sum over the outputs of Chen & Guestrin (2016)'s
split gain (eq. 7, per output) and whose leaf j-th value is output j's
Newton step -G_j/(H_j + lambda) (eq. 5), times the learning rate.

The histograms carry k (g, h) statistics per row, and a row count where the
parameters need one (``kernels.vector_splits``), in the fixed point every
other tree uses, so
their sums over partitions are exact and Dask grows the in-process tree to
the bit. The growers are the generic ones: level by level
(``trees.grower``), and in process the compiled one (``kernels.local_grower``,
which knows this criterion as ``node_search``'s ``VECTOR`` kind); only the
criterion differs.

A model keeps a grown vector tree as k scalar trees of the same structure,
tree j holding output j's leaf values (``split_outputs``): the model layout
of ``one_output_per_tree`` (k trees per round, output = position), so that
prediction, model files, TreeSHAP per output and the XGBoost export read
it unchanged. Their ``cover`` is the hessian summed over the outputs (the
weight of the shared node).
"""

from __future__ import annotations

import math

import numpy as np

from ..kernels.common import MAX_BINS, MISSING_BIN
from ..kernels.splitting import GradientCriterion, SplitParams
from ..kernels.vector_splits import best_vector_splits
from .tree import Tree


class VectorCriterion:
    """Summed-gain splits and vector Newton leaves on (g_j, h_j)_j statistics
    and, with ``counts``, a row count; a ``trees.params.Criterion`` (see the
    module).

    Without counts (``GradientCriterion``'s ``counts=False``, for the same
    parameters: ``min_samples_leaf == 1`` and ``min_child_weight > 0``) output
    0's hessian tells that rows are present (each row's is at least 1 in
    fixed point), and the grower counts rows from the row partitions: a
    tenth fewer additions per row and feature at five outputs.

    Parameters
    ----------
    params : SplitParams
    scales : (float, float)
        Fixed-point scales of g and h, powers of two, shared by the outputs.
    n_outputs : int
    counts : bool
    """

    def __init__(self, params: SplitParams, scales, n_outputs: int, counts: bool = True):
        if not counts and GradientCriterion.counts_needed(params):
            raise ValueError("(g, h) statistics need min_samples_leaf == 1 and "
                             "min_child_weight > 0; use counts=True")
        if any(math.frexp(s)[0] != 0.5 for s in scales):
            raise ValueError(f"fixed-point scales must be powers of two, got {tuple(scales)}")
        self.params, self.k = params, int(n_outputs)
        self.scale_g, self.scale_h = scales
        self.counts = bool(counts)
        self.n_stats = 2 * self.k + self.counts
        self.P = 2 * self.k if counts else 1  # the statistic telling that rows are present

    def best_splits(self, hist, totals, masks, mapper, constraints=None):
        if constraints is not None:
            raise ValueError("vector-leaf trees take no monotone constraints")
        p = self.params
        return best_vector_splits(hist, totals, masks, mapper.n_bins_non_missing_,
                                  float(self.scale_g), float(self.scale_h), float(p.reg_lambda),
                                  float(p.gamma), float(p.min_child_weight),
                                  int(p.min_samples_leaf), self.P)

    def left_stats(self, hist_f, is_cat, split_bin, missing_left):
        """The left child's totals and the bins that go left (numeric splits)."""
        goes_left = np.zeros(MAX_BINS, dtype=bool)
        goes_left[: split_bin + 1] = True
        goes_left[MISSING_BIN] = missing_left
        return hist_f[goes_left].sum(axis=0), goes_left

    def has_missing(self, hist_f) -> bool:
        return bool(hist_f[MISSING_BIN, self.P] > 0)

    def splittable(self, totals) -> bool:
        """At least 2·min_samples_leaf rows and 2·min_child_weight of every output's hessian."""
        p = self.params
        h = totals[1:2 * self.k:2] / self.scale_h
        return bool(totals[self.P] >= 2 * p.min_samples_leaf and np.all(h >= 2 * p.min_child_weight))

    def node_vectors(self, totals, lower=None, upper=None) -> np.ndarray:
        """-G_j/(H_j+lambda) of every node and output, (n_nodes, k), before the
        learning rate; the same float operations as ``GradientCriterion.node_values``."""
        g = totals[:, 0:2 * self.k:2] / self.scale_g
        h = totals[:, 1:2 * self.k:2] / self.scale_h
        denom = h + self.params.reg_lambda
        positive = denom > 0
        return np.where(positive, -g / np.where(positive, denom, 1.0), 0.0)

    def node_values(self, totals, lower=None, upper=None) -> np.ndarray:
        """Output 0's values (a vector tree's scalar field; ``split_outputs`` sets each output's)."""
        return self.node_vectors(totals)[:, 0]

    def covers(self, totals) -> np.ndarray:
        """The hessian summed over the outputs."""
        return (totals[:, 1:2 * self.k:2] / self.scale_h).sum(axis=1)

    def bound_value(self, totals) -> float:
        raise ValueError("vector-leaf trees take no monotone constraints")

    def size(self, totals):
        """What decides the smaller child: rows, or without counts output 0's hessian."""
        return totals[self.P]

    def count(self, totals) -> int | None:
        """Rows in the node; None without counts (the grower gets them from the rows)."""
        return int(totals[2 * self.k]) if self.counts else None

    def cover(self, totals) -> float:
        return float(self.covers(totals[None])[0])


def split_outputs(tree: Tree, learning_rate: float) -> list[Tree]:
    """The k scalar trees of a vector tree: tree j's values are the learning
    rate times output j's leaf values (the float product a scalar tree's
    ``tree_from_table`` makes)."""
    trees = []
    for j in range(tree.leaf_values.shape[1]):
        nodes = tree.nodes.copy()
        nodes["value"] = learning_rate * tree.leaf_values[:, j]
        trees.append(Tree(nodes, tree.cat_bitsets.copy()))
    return trees


def row_stats(loss, y, margin, w, scales, out):
    """Each output's fixed-point (g_j, h_j) side by side in ``out[0]``, (1, n, 2k)
    or, with a row count of 1, (1, n, 2k + 1): ``loss.fixed_point_stats``
    writes output j's pairs straight into columns 2j and 2j + 1 (a view of
    ``out`` shaped (k, n, 2))."""
    k, n, row = margin.shape[0], out.shape[1], out.strides[1]
    pairs = np.lib.stride_tricks.as_strided(out[0], shape=(k, n, 2),
                                            strides=(2 * out.itemsize, row, out.itemsize))
    loss.fixed_point_stats(y, margin, w, scales, pairs)
    if out.shape[2] > 2 * k:
        out[0, :, 2 * k] = 1
    return out
