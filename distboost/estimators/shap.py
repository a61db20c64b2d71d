"""SHAP values and SHAP interaction values of fitted tree ensembles
(``distboost.inspection.shap_values`` / ``shap_interaction_values``).

The model's raw output is a weighted sum of trees (``kernels.additive``); the
kernels (``kernels.treeshap``: exact path-dependent TreeSHAP, Lundberg et al. 2020,
Algorithm 2) explain it row by row. On a Dask collection every partition is
explained where it lives (``map_partitions`` / ``map_blocks``): the trees and
their paths travel in the graph once, the rows never leave the workers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine.input_plan import is_dask
from ..inputs.frames import to_matrix
from ..kernels import treeshap
from ..kernels.additive import AdditiveTrees
from ..kernels.threads import numba_threads
from ._predict import _PartitionFunction, map_frame


@dataclass
class _Explainer:
    """Everything a partition needs: the packed trees, their paths, the
    per-node leaf values and the bias (expected value) of each output."""

    schema: object
    packed: tuple
    paths: treeshap.TreePaths
    leaf_values: np.ndarray
    tree_weight: np.ndarray
    tree_output: np.ndarray
    bias: np.ndarray  # (n_outputs,)
    one_dimensional: bool
    n_jobs: int | None

    @classmethod
    def of(cls, model) -> _Explainer:
        terms = _additive_trees(model)
        packed, leaf_values = terms.packed()
        paths = treeshap.tree_paths(packed.nodes, packed.roots)
        bias = np.asarray(terms.base_score, np.float64).copy()
        if terms.trees:
            expected = treeshap.expected_values(paths, leaf_values)  # (n_trees, K)
            for t, (w, first) in enumerate(zip(terms.tree_weight, terms.tree_output)):
                bias[first: first + expected.shape[1]] += w * expected[t]
        return cls(model._schema, packed, paths, leaf_values,
                   np.asarray(terms.tree_weight, np.float64),
                   np.asarray(terms.tree_output, np.int64), bias, terms.one_dimensional,
                   getattr(model, "n_jobs", None))

    @property
    def n_outputs(self) -> int:
        return len(self.bias)

    def _matrix(self, part) -> np.ndarray:
        return np.ascontiguousarray(to_matrix(part, self.schema))

    def values(self, part) -> np.ndarray:
        """SHAP values of one in-memory partition, bias last."""
        X = self._matrix(part)
        with numba_threads(self.n_jobs):
            out = treeshap.shap_values(X, self.packed, self.paths, self.leaf_values,
                                        self.tree_weight, self.tree_output, self.n_outputs)
        out[:, :, -1] = self.bias
        return out[:, 0] if self.one_dimensional else out

    def interactions(self, part) -> np.ndarray:
        """SHAP interaction values of one in-memory partition, bias last."""
        X = self._matrix(part)
        with numba_threads(self.n_jobs):
            out = treeshap.interaction_values(X, self.packed, self.paths, self.leaf_values,
                                               self.tree_weight, self.tree_output,
                                               self.n_outputs)
        out[:, :, -1, -1] = self.bias
        return out[:, 0] if self.one_dimensional else out


def _additive_trees(model) -> AdditiveTrees:
    """The model as a weighted sum of trees, or a TypeError saying what is explained."""
    if not hasattr(model, "_additive_trees"):
        raise TypeError(
            f"SHAP values explain distboost tree ensembles (gradient boosting, AdaBoost, "
            f"random forests, bagging); got {type(model).__name__}. For a voting ensemble "
            f"explain each of its members (estimators_)"
        )
    return model._additive_trees()


def _map_rows(fn, X, trailing: tuple):
    """``fn(X)`` for in-memory X; for Dask X a lazy array of ``fn`` applied to
    every partition (``trailing``: the shape of one row's result)."""
    if not is_dask(X):
        return fn(X)
    import dask.array as da

    fn = _PartitionFunction(fn)
    if isinstance(X, da.Array):
        if X.numblocks[1] != 1:
            X = X.rechunk({1: -1})
        chunks = (X.chunks[0],) + tuple((n,) for n in trailing)
        extra = list(range(2, 1 + len(trailing)))
        return X.map_blocks(fn, chunks=chunks, new_axis=extra or None, dtype=np.float64,
                            name="distboost-shap")
    return map_frame(fn, X, trailing, np.float64, "distboost-shap")


def shap_values(model, X):
    """SHAP values of the model's raw output for every row of ``X``.

    Exact path-dependent TreeSHAP (Lundberg et al. 2020, Algorithm 2): the
    Shapley values of the set function v(S) = E[f(x) | x_S], the expectation
    taken by following, at every split on a feature outside S, both
    children weighted by their share of the node's *cover* (the sum of the
    hessians of the training rows that reached it: XGBoost's
    ``pred_contribs``; for forests, bagging and AdaBoost the weighted row
    counts). Missing values follow each split's learned direction and
    categorical splits their category sets, as in prediction.

    What is explained is the raw output: ``decision_function`` of gradient
    boosting (log-odds, or one score per class) and AdaBoost; ``predict``
    of regressors; for classification forests and bagging, the averaged
    class frequencies of the leaves (``predict_proba``), one output per class.

    Parameters
    ----------
    model : fitted distboost tree ensemble
    X : array-like, pandas DataFrame, scipy sparse matrix (entries not stored are missing),
        or Dask DataFrame/Array of shape (n_rows, n_features)

    Returns
    -------
    ndarray, or a lazy Dask array for Dask X (computed partition by partition on the workers)
        Shape (n_rows, n_features + 1) for one output, (n_rows, n_outputs,
        n_features + 1) for several; the last column is the bias (the
        expected value), and each row sums to the raw output (XGBoost's
        layout).
    """
    explainer = _Explainer.of(model)
    X = model._checked(X)
    d1 = model.n_features_in_ + 1
    trailing = (d1,) if explainer.one_dimensional else (explainer.n_outputs, d1)
    return _map_rows(explainer.values, X, trailing)


def shap_interaction_values(model, X):
    """SHAP interaction values (Lundberg et al. 2020, section 2.7) of the raw output.

    phi_ij (i != j) is half the difference between feature j's SHAP value
    with feature i's splits conditioned on and off, as XGBoost's
    ``pred_interactions``; phi_ii is feature i's SHAP value less the other
    entries of its row. Each row's matrix sums to the raw output, and row i
    sums to feature i's SHAP value. The cost is a factor of the path length
    above ``shap_values``'s.

    Parameters
    ----------
    model : fitted distboost tree ensemble
    X : array-like, pandas DataFrame, scipy sparse matrix (entries not stored are missing),
        or Dask DataFrame/Array of shape (n_rows, n_features)

    Returns
    -------
    ndarray, or a lazy Dask array for Dask X
        Shape (n_rows, n_features + 1, n_features + 1) for one output,
        (n_rows, n_outputs, n_features + 1, n_features + 1) for several; the
        bias is the last diagonal entry.
    """
    explainer = _Explainer.of(model)
    X = model._checked(X)
    d1 = model.n_features_in_ + 1
    trailing = (d1, d1) if explainer.one_dimensional else (explainer.n_outputs, d1, d1)
    return _map_rows(explainer.interactions, X, trailing)
