"""AdaBoost.M1 (ESL Algorithm 10.1) and SAMME / SAMME.R (Zhu, Zou, Rosset &
Hastie 2009, Algorithms 2 and 4) on the distributed tree engine.

SAMME, for K classes with observation weights w_i = 1/N:

    for m = 1..M:
      (a) fit a classification tree T_m to the training data with weights w_i
      (b) err_m = sum_i w_i I(c_i != T_m(x_i)) / sum_i w_i
      (c) alpha_m = log((1 - err_m) / err_m) + log(K - 1)
      (d) w_i <- w_i exp(alpha_m I(c_i != T_m(x_i))), then renormalize
    C(x) = argmax_k sum_m alpha_m I(T_m(x) = k)

For K = 2 the log(K - 1) term vanishes and this is AdaBoost.M1. The weights
live on the workers (the learner's row state); step (a) grows the tree from
class-weight histograms, step (b) sums exactly on the workers and only two
numbers per partition travel, step (d) runs on the workers fused with the
next round's histograms. ``learning_rate`` nu multiplies alpha_m (shrinkage).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..engine.spill import OUT_OF_CORE_PARAMETER
from ..inputs.checks import POSITIVE_INT, TREE_ENSEMBLE, Interval, Options
from ..kernels import libm
from ..kernels.additive import AdditiveTrees
from ..kernels.criteria import CRITERIA
from ..training.adaboost import PROBA_FLOOR, AdaBoostSpec, train_adaboost
from ..trees.params import GrowthParams
from ._base import TreeEnsembleBase, fit_events
from ._predict import predict_any


def samme_r_leaf_values(proba: np.ndarray) -> np.ndarray:
    """h_k = (K - 1)(log p_k - mean_j log p_j), SAMME.R's per-leaf output (Alg. 4, 2(b))."""
    log_p = libm.log(np.clip(proba, PROBA_FLOOR, None))
    k = proba.shape[1]
    return (k - 1) * (log_p - log_p.mean(axis=1, keepdims=True))


def samme_codes(classes: np.ndarray, n_classes: int) -> np.ndarray:
    """The coding of class c: 1 in position c, -1/(K - 1) elsewhere (paper eq. 2)."""
    codes = np.full((len(classes), n_classes), -1.0 / (n_classes - 1))
    codes[np.arange(len(classes)), classes.astype(np.int64)] = 1.0
    return codes


class AdaBoostClassifier(TreeEnsembleBase):
    __doc__ = """Discrete AdaBoost (SAMME; AdaBoost.M1 for two classes) or SAMME.R with
    weighted classification trees as weak learners.

    Parameters
    ----------
    n_estimators : int >= 1, default 50
        Rounds M (fewer if a tree is perfect or no better than guessing).
    max_depth : int >= 1 or None, default None
        Depth of the trees: a stump (depth 1) unless this or
        ``max_leaf_nodes`` is given.
    max_leaf_nodes : int >= 2 or None, default None
        Alone, grows best-first to that many leaves (the J of ESL 10.11).
    learning_rate : float > 0, default 1.0
        Shrinks alpha_m (SAMME) or the weight update (SAMME.R).
    algorithm : {"SAMME", "SAMME.R"}, default "SAMME"
        Discrete votes weighted by alpha_m, or real-valued class scores.
    criterion : {"gini", "entropy", "misclassification"}, default "gini"
        Split criterion of the weak learners on the weighted class histograms.
    max_bins : int in [3, 256], default 256
        Histogram bins per feature, one of them for missing values.
    random_state : int, RandomState or None, default None
        Ignored (AdaBoost draws nothing); kept for the scikit-learn contract.
    n_jobs : int >= 1 or None, default None
        Threads of the in-process kernels (None: numba's default); on Dask,
        of this process's split finding (None: 1, the workers do the rest).
    client : dask.distributed.Client or None, default None
        The client Dask input trains on (None: the current default client).
{out_of_core}
    Attributes
    ----------
    estimators_ : list of Tree
    estimator_weights_ : ndarray of shape (M,), the alpha_m (1 for SAMME.R)
    estimator_errors_ : ndarray of shape (M,), the err_m
    classes_, n_classes_, feature_importances_
    """.replace("{out_of_core}", OUT_OF_CORE_PARAMETER)

    _is_classifier = True
    _estimator_type = "classifier"
    _model_layout = "adaboost"  # what its model file holds (inputs.model_layouts)
    _parameter_constraints: ClassVar[dict] = {
        **TREE_ENSEMBLE,
        "n_estimators": [POSITIVE_INT],
        "learning_rate": [Interval("real", 0, None, "neither")],
        "algorithm": [Options(("SAMME", "SAMME.R"))],
        "criterion": [Options(tuple(sorted(CRITERIA)))],
    }

    def __init__(self, *, n_estimators=50, max_depth=None, max_leaf_nodes=None,
                 learning_rate=1.0, algorithm="SAMME", criterion="gini", max_bins=256,
                 random_state=None, n_jobs=None, client=None, out_of_core="auto"):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.learning_rate = learning_rate
        self.algorithm = algorithm
        self.criterion = criterion
        self.max_bins = max_bins
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.client = client
        self.out_of_core = out_of_core

    # ------------------------------------------------------------------ fit
    def _fit_engine(self, engine, init_model=None):
        """ESL Algorithm 10.1 / SAMME on the prepared engine (``training.adaboost``);
        AdaBoost always trains from scratch (``init_model`` is None)."""
        result = train_adaboost(engine, self._spec(), fit_events(self, engine))
        self._set_model_attributes(result.trees, self.n_classes_)
        self.estimator_weights_ = np.asarray(result.alphas)
        self.estimator_errors_ = np.asarray(result.errors)

    def _spec(self) -> AdaBoostSpec:
        """The fit's ``AdaBoostSpec``: a stump unless ``max_depth`` or ``max_leaf_nodes``."""
        depth = self.max_depth
        if depth is None and self.max_leaf_nodes is None:
            depth = 1  # a stump
        growth = GrowthParams(max_depth=depth, max_leaf_nodes=self.max_leaf_nodes)
        return AdaBoostSpec(self.n_estimators, self.n_classes_, self.algorithm, self.criterion,
                            self.learning_rate, growth)

    # ------------------------------------------------------------- predict
    def _leaf_vectors(self, tree) -> np.ndarray:
        """Per node: alpha-free vote of the tree (SAMME coding, or SAMME.R's h)."""
        if self.algorithm == "SAMME.R":
            return samme_r_leaf_values(tree.leaf_values)
        return samme_codes(tree.nodes["value"], self.n_classes_)

    def _decision_sum(self, matrix, upto=None):
        trees = self.estimators_[:upto]
        weights = self.estimator_weights_[: len(trees)]
        vectors = [self._leaf_vectors(t) for t in trees]
        return self._vector_sum(matrix, trees, weights, vectors) / weights.sum()

    def _staged_decision_sums(self, X):
        matrix = self._matrix(self._checked(X))
        total, weight = np.zeros((len(matrix), self.n_classes_)), 0.0
        for tree, alpha in zip(self.estimators_, self.estimator_weights_):
            total += self._vector_sum(matrix, [tree], [alpha], [self._leaf_vectors(tree)])
            weight += alpha
            yield total / weight

    def _format_decision(self, pred: np.ndarray) -> np.ndarray:
        """(n, K) class scores; for two classes the single score of class 1."""
        return pred[:, 1] - pred[:, 0] if self.n_classes_ == 2 else pred

    def _proba(self, pred: np.ndarray) -> np.ndarray:
        """softmax(f(x) / (K - 1)) of the normalized class scores (the multi-class
        exponential loss's population minimizer, paper eq. 9)."""
        z = pred / (self.n_classes_ - 1)
        z = z - z.max(axis=1, keepdims=True)
        e = libm.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def decision_function(self, X):
        """sum_m alpha_m g_m(x) / sum_m alpha_m; shape (n,) for two classes, else (n, K)."""
        X = self._checked(X)
        k = self.n_classes_
        return predict_any(lambda p: self._format_decision(self._by_rows(self._decision_sum, p)),
                           X, None if k == 2 else k)

    def predict_proba(self, X):
        """Class probabilities, shape (n, K); lazy on Dask input."""
        X = self._checked(X)
        return predict_any(lambda p: self._proba(self._by_rows(self._decision_sum, p)), X,
                           self.n_classes_)

    def predict(self, X):
        """C(x) = argmax_k sum_m alpha_m I(T_m(x) = k); lazy on Dask input."""
        X = self._checked(X)
        return self._predict_labels(lambda p: self._labels(self._by_rows(self._decision_sum, p)),
                                    X)

    def staged_decision_function(self, X):
        for pred in self._staged_decision_sums(X):
            yield self._format_decision(pred)

    def staged_predict_proba(self, X):
        for pred in self._staged_decision_sums(X):
            yield self._proba(pred)

    def staged_predict(self, X):
        """Predictions after each round (in-memory X)."""
        for pred in self._staged_decision_sums(X):
            yield self._labels(pred)

    def staged_score(self, X, y, sample_weight=None):
        """Accuracy after each round (in-memory X)."""
        for pred in self.staged_predict(X):
            yield self._weighted_score(pred, y, sample_weight)

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy (weighted by ``sample_weight``)."""
        return self._weighted_score(np.asarray(self.predict(X)), y, sample_weight)

    def _additive_trees(self) -> AdditiveTrees:
        """``decision_function``: sum_m alpha_m g_m(x) / sum_m alpha_m, tree m's leaf
        vector g_m (SAMME's class coding or SAMME.R's h) weighted alpha_m / sum alpha;
        for two classes one output, the score of class 1 less that of class 0."""
        self._check_fitted()
        trees = self.estimators_
        weights = np.asarray(self.estimator_weights_[: len(trees)], np.float64)
        vectors = [self._leaf_vectors(t) for t in trees]
        k = self.n_classes_
        if k == 2:
            vectors = [(v[:, 1] - v[:, 0])[:, None] for v in vectors]
        return AdditiveTrees(trees, vectors, weights / weights.sum(),
                             np.zeros(len(trees), np.int64), np.zeros(1 if k == 2 else k),
                             k == 2)

    def _tree_weights(self):
        """``feature_importances_`` averages the trees with their weights alpha_m."""
        return self.estimator_weights_

    # ------------------------------------------------------------- models
    def _model_state(self) -> dict:
        return {"estimator_weights": self.estimator_weights_.tolist(),
                "estimator_errors": self.estimator_errors_.tolist()}

    def _load_model_state(self, d: dict) -> None:
        self.estimator_weights_ = np.asarray(d["estimator_weights"], np.float64)
        self.estimator_errors_ = np.asarray(d["estimator_errors"], np.float64)
        self.n_classes_ = len(self.classes_)

