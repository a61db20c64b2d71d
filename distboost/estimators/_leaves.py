"""Leaf indices of gradient boosting: ``apply`` as scikit-learn's
``GradientBoostingClassifier.apply`` and ``predict(X, pred_leaf=True)`` as
XGBoost's ``Booster.predict(pred_leaf=True)``.

A leaf id is the leaf's index in its tree's ``nodes``: the node ids of the
model file and of the XGBoost export (``distboost.xgboost_format.node_order``).
Rows walk the trees as ``predict`` walks them (``kernels.tree.leaf_indices``),
so the leaves' values add up to the raw score f(x) = f_0 + sum_m T_m(x)
(ESL eq. 10.2).
"""

from __future__ import annotations

import numpy as np

from ._predict import leaf_ids, rows_any


class BoostingLeaves:
    """``apply`` and ``predict``'s ``pred_leaf`` for the gradient boosting
    estimators (``trees_``: K trees per round; ``base_score_``: K values)."""

    def apply(self, X):
        """The leaf each row reaches in every tree, as scikit-learn's
        ``GradientBoostingClassifier.apply``.

        Rows walk each tree as ``predict`` walks it (missing values and
        unknown categories take the split's learned side), so the raw score
        is f_0 plus the leaves' values (already shrunk by the learning rate):
        f_k(x) = ``base_score_[k]`` + sum_m ``estimators_[m, k].nodes["value"]
        [leaves[i, m, k]]`` (ESL eq. 10.2; DART: each value times
        ``tree_weights_[m, k]``). The ids are the nodes' indices
        in each tree, as the model file (``save_model``) and the XGBoost
        export write them. The trees are the rounds the model keeps (with
        early stopping, those up to ``best_iteration_``), as ``predict``'s.

        Parameters
        ----------
        X : array-like, pandas DataFrame, scipy sparse matrix, or Dask DataFrame/Array
            of shape (n, d). Sparse (also Dask chunks): entries not stored are missing
            values, stored zeros are zeros (XGBoost's convention).
            Checked as ``predict`` checks it.

        Returns
        -------
        X_leaves : ndarray of shape (n, n_estimators_, K), float64
            K trees per round (one per class for more than two classes, else
            K = 1); float64 as scikit-learn's. Lazy for Dask input, computed
            partition by partition.
        """
        X = self._checked(X)
        m, k = len(self.trees_), len(self.base_score_)

        def fn(part):
            ids = self._leaf_ids(part)
            return ids.reshape(len(ids), m, k).astype(np.float64)

        return rows_any(fn, X, (m, k), np.float64)

    def _pred_leaf(self, X):
        """``predict(X, pred_leaf=True)``: XGBoost's layout, shape (n, n_estimators_ * K),
        float32, round by round and within a round output by output."""
        X = self._checked(X)
        n_trees = len(self.trees_) * len(self.base_score_)
        return rows_any(lambda part: self._leaf_ids(part).astype(np.float32), X, (n_trees,),
                        np.float32)

    def _leaf_ids(self, X) -> np.ndarray:
        """Leaf ids of in-memory X, shape (n, n_estimators_ * K), rounds first."""
        trees = [t for round_trees in self.trees_ for t in round_trees]
        return leaf_ids(self._schema, trees, X, self.n_jobs)
