"""Bagged trees: the estimator side of random forests, bagging and pasting.

Breiman 1996 (bagging), 1999 (pasting), 2001 (random forests); ESL 8.7 and
Algorithm 15.1: draw a sample of the training rows for each of M trees (with
replacement: bagging; without: pasting), grow a tree on it (a random forest
also draws k of the d features at every node), and average: class
frequencies for classification (soft voting), means for regression. The rows
a tree did not see estimate its error (out of bag). Samples are per-row
multiplicities drawn on the workers (``learners.bagged``), so no row moves.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..engine.spill import OUT_OF_CORE_PARAMETER
from ..inputs.checks import (
    BOOL,
    FRACTION,
    NONE,
    POSITIVE_INT,
    TREE_ENSEMBLE,
    InvalidParameterError,
    Options,
)
from ..kernels.additive import AdditiveTrees, scalar_leaves
from ..kernels.criteria import CRITERIA
from ..kernels.rng import random_seed
from ..kernels.sampling import tree_feature_masks
from ..training.tree_batch import ForestSpec, grow_forest
from ..trees.params import GrowthParams
from ._base import TreeEnsembleBase, fit_events
from ._predict import predict_any

TREE_PARAMETERS = """\
    max_depth : int >= 1 or None, default None
        Depth of the trees (None: until leaves are pure or ``min_samples_leaf``
        stops them; on large data set this or ``max_leaf_nodes``).
    max_leaf_nodes : int >= 2 or None, default None
        Leaves per tree, grown best-first.
    min_samples_leaf : int >= 1, default 1
        Smallest number of training rows in a leaf.
    max_bins : int in [3, 256], default 256
        Histogram bins per feature, one of them for missing values.
    random_state : int, RandomState or None, default None
        Seed of every draw (each a function of seed, tree and row id, so the
        forest does not depend on the partitioning).
    n_jobs : int >= 1 or None, default None
        Threads of the in-process kernels (None: numba's default); on Dask,
        of this process's split finding (None: 1, the workers do the rest).
    client : dask.distributed.Client or None, default None
        The client Dask input trains on (None: the current default client).
{out_of_core}    trees_per_pass : int >= 1 or None, default None
        Trees grown together per pass over the data (None: as many as the
        memory budgets allow).
""".replace("{out_of_core}", OUT_OF_CORE_PARAMETER)
"""Parameters of the trees of forests and bagging, for their docstrings."""


def resolve_max_features(max_features, n_features: int) -> int:
    """scikit-learn's ``max_features``: "sqrt", "log2", None, an int or a fraction."""
    if max_features is None:
        return n_features
    if max_features == "sqrt":
        return max(1, int(math.sqrt(n_features)))
    if max_features == "log2":
        return max(1, int(math.log2(n_features)))
    if isinstance(max_features, (int, np.integer)) and not isinstance(max_features, bool):
        if not 1 <= max_features <= n_features:
            raise ValueError(f"max_features={max_features} must be in [1, {n_features}]")
        return int(max_features)
    if isinstance(max_features, float) and 0.0 < max_features <= 1.0:
        return max(1, int(max_features * n_features))
    raise ValueError(
        f"max_features must be 'sqrt', 'log2', None, an int in [1, n_features] or a float in "
        f"(0, 1], got {max_features!r}"
    )


def sampling_rate(max_samples, n_rows: int, bootstrap: bool) -> float:
    """Expected multiplicity of a row: max_samples / n (a fraction as is)."""
    if max_samples is None:
        return 1.0
    if isinstance(max_samples, (int, np.integer)) and not isinstance(max_samples, bool):
        if not 1 <= max_samples <= n_rows:
            raise ValueError(f"max_samples={max_samples} must be in [1, n_rows={n_rows}]")
        return max_samples / n_rows
    if isinstance(max_samples, float) and 0.0 < max_samples <= 1.0:
        return float(max_samples)
    raise ValueError(f"max_samples must be an int in [1, n_rows] or a float in (0, 1], "
                     f"got {max_samples!r}")


class BaggedTreesBase(TreeEnsembleBase):
    """Shared fit / predict of forests and bagging; subclasses say how to sample."""

    _node_sampling = True  # random forests draw features per node, bagging per tree
    _model_layout = "bagged"  # what its model file holds (inputs.model_layouts)

    _parameter_constraints: ClassVar[dict] = {
        **TREE_ENSEMBLE,
        "n_estimators": [POSITIVE_INT],
        "criterion": [Options(tuple(sorted(CRITERIA)))],
        "min_samples_leaf": [POSITIVE_INT],
        "max_features": [Options(("sqrt", "log2")), POSITIVE_INT, FRACTION, NONE],
        "max_samples": [POSITIVE_INT, FRACTION, NONE],
        "bootstrap": [BOOL],
        "bootstrap_features": [BOOL],
        "oob_score": [BOOL],
        "trees_per_pass": [POSITIVE_INT, NONE],
    }

    def _validate_params(self):
        super()._validate_params()
        if self.oob_score and not self.bootstrap:
            raise InvalidParameterError(
                f"{type(self).__name__}: oob_score=True needs bootstrap=True (pasting leaves "
                f"no out-of-bag rows by design)")

    def _spec(self, engine) -> ForestSpec:
        n_features = engine.schema.n_features
        k = resolve_max_features(self.max_features, n_features)
        seed = random_seed(self.random_state)
        if self._node_sampling:
            masks = np.ones((self.n_estimators, n_features), bool)
            node_k = k if k < n_features else None
        else:
            masks = tree_feature_masks(self.n_estimators, n_features, k, seed,
                                       getattr(self, "bootstrap_features", False))
            node_k = None
        self.estimators_features_ = [np.flatnonzero(m) for m in masks]
        return ForestSpec(
            n_estimators=self.n_estimators,
            n_classes=self.n_classes_ if self._is_classifier else None,
            criterion=self.criterion if self._is_classifier else "squared_error",
            growth=GrowthParams(max_depth=self.max_depth, max_leaf_nodes=self.max_leaf_nodes,
                                monotonic_cst=getattr(self, "_monotonic", None)),
            min_samples_leaf=self.min_samples_leaf,
            node_max_features=node_k,
            tree_masks=masks,
            bootstrap=self.bootstrap,
            rate=sampling_rate(self.max_samples, engine.n_rows, self.bootstrap),
            seed=seed,
            oob=bool(self.oob_score),
            trees_per_pass=self.trees_per_pass,
        )

    def _fit_engine(self, engine, init_model=None):
        result = grow_forest(engine, self._spec(engine), fit_events(self, engine))
        oob = result.oob
        self.trees_per_pass_, self.n_passes_ = result.trees_per_pass, result.n_passes
        self._set_model_attributes(result.trees, self.n_classes_ if self._is_classifier else 1)
        if oob is not None:
            self.oob_score_ = oob.score
            if self._is_classifier:
                self.oob_decision_function_ = oob.prediction
            else:
                self.oob_prediction_ = oob.prediction[:, 0]

    def _model_state(self) -> dict:
        state = {"estimators_features": [f.tolist() for f in self.estimators_features_]}
        if hasattr(self, "oob_score_"):
            state["oob_score"] = self.oob_score_
        return state

    def _load_model_state(self, d: dict) -> None:
        self.estimators_features_ = [np.asarray(f, np.int64) for f in d["estimators_features"]]
        if "oob_score" in d:
            self.oob_score_ = d["oob_score"]
        if self._is_classifier:
            self.n_classes_ = len(self.classes_)


class BaggedClassifierMixin:
    """Soft voting over the trees: the mean of their class frequencies."""

    _is_classifier = True
    _estimator_type = "classifier"

    def predict_proba(self, X):
        """Mean class frequencies of the leaves, shape (n, n_classes); lazy on Dask."""
        X = self._checked(X)
        trees = self.estimators_
        weights = np.full(len(trees), 1.0 / len(trees))
        return predict_any(lambda part: self._by_rows(
            lambda m: self._vector_sum(m, trees, weights), part), X,
                           self.n_classes_)

    def _additive_trees(self) -> AdditiveTrees:
        """``predict_proba``: the mean of the trees' leaf class frequencies."""
        self._check_fitted()
        trees = self.estimators_
        return AdditiveTrees(trees, [t.leaf_values for t in trees],
                             np.full(len(trees), 1.0 / len(trees)),
                             np.zeros(len(trees), np.int64), np.zeros(self.n_classes_), False)

    def predict(self, X):
        """The class with the highest mean frequency; lazy on Dask."""
        X = self._checked(X)
        return self._predict_labels(lambda part: self._labels(self.predict_proba(part)), X)

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy (weighted by ``sample_weight``)."""
        return self._weighted_score(self.predict(X), y, sample_weight)


class BaggedRegressorMixin:
    """Averaging over the trees."""

    _estimator_type = "regressor"
    _parameter_constraints: ClassVar[dict] = {**BaggedTreesBase._parameter_constraints,
                              "criterion": [Options(("squared_error",))]}

    def predict(self, X):
        """Mean of the trees' leaf means; lazy on Dask."""
        X = self._checked(X)
        trees = self.estimators_
        return predict_any(lambda part: self._by_rows(
            lambda m: self._scalar_sum(m, trees) / len(trees), part), X, None)

    def _additive_trees(self) -> AdditiveTrees:
        """``predict``: the mean of the trees' leaf means."""
        self._check_fitted()
        trees = self.estimators_
        return AdditiveTrees(trees, scalar_leaves(trees), np.full(len(trees), 1.0 / len(trees)),
                             np.zeros(len(trees), np.int64), np.zeros(1), True)

    def score(self, X, y, sample_weight=None) -> float:
        """R^2 of the predictions."""
        return self._weighted_score(np.asarray(self.predict(X)), y, sample_weight)
