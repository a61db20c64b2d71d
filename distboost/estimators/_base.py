"""What every tree-ensemble estimator of this package shares: turning input
into a prepared engine, the fitted data attributes, prediction plumbing,
feature importances and model files. Each estimator adds its training loop
(``_fit_engine``) and its predictions."""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict

import numpy as np

from ..engine import Engine
from ..engine.input_plan import Continued, is_dask, plan
from ..engine.lost_scheduler import watching_scheduler
from ..inputs import checks
from ..inputs.frames import to_matrix
from ..inputs.params import ParamsMixin
from ..kernels.threads import numba_threads
from ..kernels.tree import (
    feature_totals,
    pack_leaf_values,
    pack_trees,
    predict_leaf_vectors,
    predict_raw,
)
from ..training.events import FitEvents, scalar_params
from ._continue import check_init_model
from ._predict import leaf_ids, map_collection, row_matrices, rows_any


class TreeEnsembleBase(ParamsMixin):
    """Shared plumbing; subclasses implement ``_fit_engine(engine, ...)``, their
    training on the prepared engine (``_prepared``)."""

    _is_classifier = False
    fit_arguments = frozenset({"bin_mapper"})

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None, bin_mapper=None):
        """Fit on numpy/pandas data (in this process) or Dask collections (on the cluster).

        Parameters
        ----------
        X : array-like, pandas DataFrame, scipy sparse matrix, or Dask DataFrame/Array
            of shape (n, d). Sparse (also Dask chunks): entries not stored are missing
            values, stored zeros are zeros (XGBoost's convention).
        y : array-like or Dask Series/Array of shape (n,)
        sample_weight : array-like or Dask Series/Array of shape (n,), optional
        bin_mapper : distboost.binning.BinMapper, optional
            Bins to use instead of sampling X for quantile edges (e.g.
            ``BinMapper.from_edges`` of precomputed edges, matched to X's
            columns by name); ``max_bins`` then does not apply.
        """
        self._validate_params()
        with self._prepared(X, y, sample_weight, bin_mapper=bin_mapper) as engine:
            self._fit_engine(engine)
        return self

    @contextlib.contextmanager
    def _prepared(self, X, y, sample_weight, *, bin_mapper=None, eval_set=None,
                  sample_weight_eval_set=None, init_model=None, qid=None, eval_qid=None,
                  upper=None, eval_upper=None):
        """The fit's prepared ``Engine``: the inputs planned (``engine.input_plan``),
        checked and binned on the workers; the estimator trains on it
        (``_fit_engine``) inside the block, and the holders are released after it.

        ``init_model`` (a fitted estimator of the same kind) lends its schema,
        bins and classes; ``qid``, ``eval_qid``: a ranker's query ids; ``upper``,
        ``eval_upper``: an AFT model's upper bounds (y the lower).
        """
        self.fit_timings_ = defaultdict(float)
        t_start = time.perf_counter()
        continued = None
        if init_model is not None:
            check_init_model(self, init_model)
            continued = Continued(init_model._schema, init_model.bin_mapper_,
                                  getattr(init_model, "classes_", None))
        multi = getattr(self, "_multi_output", None)  # a k-column y: "targets" or "labels"
        given = plan(X, y, sample_weight, eval_set, sample_weight_eval_set, self.client,
                     self.n_jobs, self._is_classifier and multi is None, bin_mapper=bin_mapper,
                     continued=continued, qid=qid, eval_qid=eval_qid, multi_output=multi,
                     upper=upper, eval_upper=eval_upper)
        self._check_columns(given.schema)
        with (watching_scheduler(given.executor),  # a lost scheduler named as such
              Engine(given.executor, self.fit_timings_, self.out_of_core) as engine,
              numba_threads(self.n_jobs, given.on_dask),
              given.naming_sources()):
            engine.prepare(given, not self._is_classifier or multi is not None, self.max_bins)
            checks.check_weight_total(engine.w_max)
            self._set_data_attributes(engine, given.schema)
            yield engine
        self.bin_mapper_ = engine.mapper
        self.fit_timings_["fit"] = time.perf_counter() - t_start
        self.fit_timings_ = dict(self.fit_timings_)

    def _check_columns(self, schema) -> None:
        """Parameters that name or count features, checked against the columns
        (known from the data's metadata, before any Dask work): a hook."""

    def _set_data_attributes(self, engine, schema) -> None:
        """``n_features_in_``, ``feature_names_in_`` (named columns only), and for
        classifiers ``classes_`` / ``n_classes_`` (at least two classes); and
        ``data_placement_``: per worker, training rows kept in memory and on disk."""
        self._schema = schema
        self.data_placement_ = list(engine.placement)
        self.n_features_in_ = schema.n_features
        if not all(n == f"f{j}" for j, n in enumerate(schema.feature_names)):
            self.feature_names_in_ = np.array(schema.feature_names, dtype=object)
        if self._is_classifier and getattr(self, "_multi_output", None):  # multi-label
            self.classes_ = np.arange(self.n_targets_)  # the label columns
            self.n_classes_ = self.n_targets_
        elif self._is_classifier:
            self.classes_ = np.asarray(engine.classes)
            self.n_classes_ = len(self.classes_)
            if self.n_classes_ < 2:
                raise ValueError(
                    f"the target has a single class, 1 class ({self.classes_.tolist()}) among "
                    f"the rows with a positive weight; a classifier needs at least two"
                )

    # ------------------------------------------------------------ predict
    @property
    def estimators_(self) -> list:
        """The fitted trees (``distboost.Tree``), in order."""
        self._check_fitted()
        return [round_trees[0] for round_trees in self.trees_]

    def apply(self, X):
        """The leaf each row reaches in every tree, as scikit-learn's forests'
        ``apply``.

        Rows walk each tree as ``predict`` walks it (missing values and
        unknown categories take the split's learned side), so tree m's
        contribution to a prediction is read at ``estimators_[m].nodes
        [leaf]``: its ``value`` (a regression tree's mean) or its
        ``leaf_values`` row (a classification tree's class frequencies). The
        ids are the nodes' indices in each tree, as the model file
        (``save_model``) and the XGBoost export write them.

        Parameters
        ----------
        X : array-like, pandas DataFrame, scipy sparse matrix, or Dask DataFrame/Array
            of shape (n, d). Sparse (also Dask chunks): entries not stored are missing
            values, stored zeros are zeros (XGBoost's convention).
            Checked as ``predict`` checks it.

        Returns
        -------
        X_leaves : ndarray of shape (n, n_estimators), int64
            Lazy for Dask input, computed partition by partition.
        """
        X = self._checked(X)
        trees = self.estimators_
        return rows_any(lambda part: leaf_ids(self._schema, trees, part, self.n_jobs), X,
                        (len(trees),), np.int64)

    def _matrix(self, X) -> np.ndarray:
        return np.ascontiguousarray(to_matrix(X, self._schema))

    def _by_rows(self, fn, X) -> np.ndarray:
        """``fn(float matrix) -> one result per row`` of in-memory X; a sparse X's
        rows made dense a block at a time (``_predict.row_matrices``)."""
        results = [fn(np.ascontiguousarray(m)) for m in row_matrices(X, self._schema)]
        return results[0] if len(results) == 1 else np.concatenate(results)

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
        return map_collection(fn, X, None) if is_dask(X) else fn(X)

    def _weighted_score(self, pred, y, sample_weight) -> float:
        return checks.weighted_score(pred, y, sample_weight, self._is_classifier)

    # -------------------------------------------------------- importances
    @property
    def feature_importances_(self) -> np.ndarray:
        """Impurity-based importance of each feature, summing to 1 (0 if no split).

        Each tree's split gains per feature (``tree.feature_totals``), combined
        as the estimator says (``_combine_importances``): normalized per tree
        and averaged for forests and bagging (ESL 15.3.2), averaged with the
        weights alpha_m for AdaBoost, summed over every tree for gradient
        boosting (XGBoost's total gain).
        """
        self._check_fitted()
        trees = [t for round_trees in self.trees_ for t in round_trees]
        return _normalized(self._combine_importances(trees))

    def _combine_importances(self, trees) -> np.ndarray:
        """The mean of each tree's normalized gains, weighted by ``_tree_weights``."""
        per_tree = [_normalized(feature_totals(t.nodes, self.n_features_in_)) for t in trees]
        return np.average(per_tree, axis=0, weights=self._tree_weights())

    def _tree_weights(self):
        """Weights of the trees in ``feature_importances_`` (None: equal)."""
        return

    # ------------------------------------------------------------- models
    def _set_model_attributes(self, trees, n_outputs):
        """Attributes the JSON model file expects of a fitted estimator."""
        self.trees_ = [[t] for t in trees]
        self.base_score_ = np.zeros(n_outputs)
        self.best_iteration_ = None
        self.evals_result_ = {}

    def save_model(self, path, format: str = "distboost", *,
                   xgboost_categories: bool = True) -> None:
        """Write the model to ``path``, atomically.

        Parameters
        ----------
        path : str or path-like
        format : {"distboost", "xgboost"}, default "distboost"
            distboost's versioned JSON model file (``distboost.model_file``,
            read by ``distboost.load_model``), or XGBoost's JSON model format,
            which ``xgboost.Booster(model_file=path)`` loads and predicts with
            the same margins (``distboost.xgboost_format``; not every model
            can be written so).
        xgboost_categories : bool, default True
            ``format="xgboost"`` only: carry the training categories, so that
            XGBoost >= 3.1 re-codes a pandas categorical column by name. False
            writes category codes only (XGBoost's 2.1 layout), for readers that
            refuse XGBoost's category container (treelite 4.8).
        """
        from ..model_file import save_model

        save_model(self, path, format, xgboost_categories=xgboost_categories)


def _normalized(v: np.ndarray) -> np.ndarray:
    """``v`` scaled to sum to 1, or as it is if it sums to 0."""
    s = v.sum()
    return v / s if s > 0 else v


def fit_events(est, engine) -> FitEvents:
    """The events of ``est``'s fit on ``engine``: its class name and scalar parameters."""
    return FitEvents(engine, type(est).__name__, scalar_params(est.get_params(deep=False)))
