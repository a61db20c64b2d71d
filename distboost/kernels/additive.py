"""A fitted ensemble's raw output as a weighted sum of trees.

Every estimator of this package computes its raw output (the decision
function of gradient boosting and AdaBoost, the averaged leaf values of
forests and bagging) as

    f_q(x) = base_score[q] + sum_t tree_weight[t] * leaf_values_t[leaf_t(x), q - tree_output[t]]

for the K consecutive outputs ``tree_output[t] .. tree_output[t] + K - 1``
tree t writes to. Each estimator says how (``_additive_trees``); TreeSHAP
(``distboost.estimators.shap``) and the XGBoost export (``distboost.xgboost_format``)
read it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .tree import PackedTrees, pack_leaf_values, pack_trees


class AdditiveTrees(NamedTuple):
    """A model's raw output as a weighted sum of trees (see the module).

    Attributes
    ----------
    trees : list of Tree
    leaf_values : list of ndarray of shape (n_nodes_t, K), float64
        Per tree, the K values each node adds (read at leaves).
    tree_weight : ndarray of shape (n_trees,), float64
    tree_output : ndarray of shape (n_trees,), int64
        First output each tree adds to.
    base_score : ndarray of shape (n_outputs,), float64
    one_dimensional : bool
        The raw output has shape (n_rows,) (one output), not (n_rows, n_outputs).
    """

    trees: list
    leaf_values: list
    tree_weight: np.ndarray
    tree_output: np.ndarray
    base_score: np.ndarray
    one_dimensional: bool

    @property
    def n_outputs(self) -> int:
        return len(self.base_score)

    def packed(self) -> tuple[PackedTrees, np.ndarray]:
        """``pack_trees(trees)`` and the leaf values of the packed nodes, (n_nodes, K)."""
        if not self.trees:
            return pack_trees([]), np.zeros((0, 1))
        return pack_trees(self.trees), pack_leaf_values(self.trees, self.leaf_values)


def scalar_leaves(trees) -> list:
    """Each tree's node ``value`` as an (n_nodes, 1) column."""
    return [t.nodes["value"].astype(np.float64)[:, None] for t in trees]
