"""What every tree-ensemble estimator of this package shares: turning input
into a prepared engine, the fitted data attributes, prediction plumbing and
model files. Concrete learners (AdaBoost, forests, bagging) add the loop."""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np

from .. import _validation
from .._input import to_matrix
from .._params import ParamsMixin
from ..engine import Engine, inputs
from ..tree import pack_leaf_values, pack_trees, predict_leaf_vectors, predict_raw
from ._bins import given_bins
from ._fitted import set_data_attributes
from ._threads import numba_threads


class TreeEnsembleBase(ParamsMixin):
    """Shared plumbing; subclasses implement ``_fit_engine(engine)``."""

    _is_classifier = False

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None, bin_mapper=None):
        """Fit on numpy/pandas data (in this process) or Dask collections (on the cluster).

        Parameters
        ----------
        X : array-like, pandas DataFrame, or Dask DataFrame/Array of shape (n, d)
        y : array-like or Dask Series/Array of shape (n,)
        sample_weight : array-like or Dask Series/Array of shape (n,), optional
        bin_mapper : distboost.binning.BinMapper, optional
            Bins to use instead of sampling X for quantile edges (e.g.
            ``BinMapper.from_edges`` of precomputed edges, matched to X's
            columns by name); ``max_bins`` then does not apply.
        """
        self._validate_params()
        self.fit_timings_ = defaultdict(float)
        t0 = time.perf_counter()
        executor, parts, _, schema = inputs.plan(X, y, sample_weight, None, None, self.client,
                                                self.n_jobs, self._is_classifier)
        bins = given_bins(bin_mapper, schema, X)
        if bins is not None:
            schema.categories = dict(bins.categories_)
        with (Engine(executor, self.fit_timings_, self.out_of_core) as engine,
              numba_threads(self.n_jobs, inputs.is_dask(X)),
              inputs.naming_sources(X, y, sample_weight)):
            engine.prepare(parts, [], schema, not self._is_classifier, self.max_bins, bins)
            _validation.check_weight_total(engine.w_max)
            self._set_data_attributes(engine, schema)
            self._fit_engine(engine)
        self.bin_mapper_ = engine.mapper
        self.fit_timings_["fit"] = time.perf_counter() - t0
        self.fit_timings_ = dict(self.fit_timings_)
        return self

    def _set_data_attributes(self, engine, schema):
        set_data_attributes(self, engine, schema)

    # ------------------------------------------------------------ predict
    @property
    def estimators_(self) -> list:
        """The fitted trees (``distboost.Tree``), in order."""
        self._check_fitted()
        return [round_trees[0] for round_trees in self.trees_]

    def _matrix(self, X) -> np.ndarray:
        return np.ascontiguousarray(to_matrix(X, self._schema))

    def _vector_sum(self, matrix, trees, weights, leaf_values=None) -> np.ndarray:
        """sum_t weights[t] * leaf vector of tree t, shape (n_rows, K)."""
        k = (leaf_values[0] if leaf_values is not None else trees[0].leaf_values).shape[1]
        out = np.zeros((len(matrix), k))
        nodes, roots, bits = pack_trees(trees)
        values = pack_leaf_values(trees, leaf_values)
        predict_leaf_vectors(matrix, nodes, roots, bits, values, np.asarray(weights, float), out)
        return out

    def _scalar_sum(self, matrix, trees) -> np.ndarray:
        """sum_t of tree t's scalar value, shape (n_rows,)."""
        out = np.zeros((1, len(matrix)))
        nodes, roots, bits = pack_trees(trees)
        predict_raw(matrix, nodes, roots, bits, np.zeros(len(trees), np.int64), out)
        return out[0]

    def _labels(self, proba_or_decision) -> np.ndarray:
        return self.classes_[np.argmax(proba_or_decision, axis=1)]

    def _predict_labels(self, fn, X):
        """Class labels from ``fn(in-memory X) -> labels``; lazy for Dask X."""
        if inputs.is_dask(X):
            from ._predict import map_collection

            return map_collection(fn, X, None)
        return fn(X)

    def _weighted_score(self, pred, y, sample_weight) -> float:
        return _validation.weighted_score(pred, y, sample_weight, self._is_classifier)

    # ------------------------------------------------------------- models
    def _tree_importances(self, tree) -> np.ndarray:
        """Impurity decrease per feature of one tree, normalized to sum to 1."""
        total = np.zeros(self.n_features_in_)
        internal = tree.nodes["is_leaf"] == 0
        np.add.at(total, tree.nodes["feature"][internal], tree.nodes["gain"][internal])
        s = total.sum()
        return total / s if s > 0 else total

    def _set_model_attributes(self, trees, n_outputs):
        """Attributes the JSON model file expects of a fitted estimator."""
        self.trees_ = [[t] for t in trees]
        self.base_score_ = np.zeros(n_outputs)
        self.best_iteration_ = None
        self.evals_result_ = {}

    def save_model(self, path) -> None:
        """Write the model as versioned JSON (see ``distboost.model_file``)."""
        from ..model_file import save_model

        save_model(self, path)
