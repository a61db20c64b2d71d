"""Gradient boosting estimators (ESL 10.10, Algorithm 10.3; XGBoost's
second-order objective, Chen & Guestrin 2016) with the scikit-learn contract.

Losses: squared, absolute, Huber and quantile error for regression; binomial
and multinomial deviance and exponential loss for classification (ESL 10.6).
Leaves are set by a Newton step (XGBoost) or by the loss's own line search
(Friedman's TreeBoost), exact across partitions; rows and columns can be
subsampled (stochastic gradient boosting, ESL 10.12)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..callbacks import TrainingCallback
from ..engine.input_plan import is_dask
from ..inputs import checks
from ..inputs.checks import (
    BOOL,
    CALLABLE,
    FRACTION,
    METRIC_NAMES,
    NONE,
    NONNEG_REAL,
    POSITIVE_INT,
    TREE_ENSEMBLE,
    VERBOSE,
    Interval,
    Options,
)
from ..inputs.frames import to_matrix
from ..kernels import libm
from ..kernels.additive import AdditiveTrees, scalar_leaves
from ..kernels.common import NODE_DTYPE
from ..kernels.rng import random_seed
from ..kernels.splitting import SplitParams
from ..kernels.tree import feature_totals, pack_trees, predict_raw
from ..metrics import make_metrics
from ..training import objective
from ..training.booster import BoostHooks, BoostResult, BoostSpec, train_boosting
from ..training.objective import CustomObjective, explained_import_errors
from ..trees.losses import CLASSIFICATION_LOSSES, LOG_LINK_LOSSES, REGRESSION_LOSSES, make_loss
from ..trees.multi_output import MULTI_STRATEGIES
from ..trees.params import GrowthParams
from . import _dart, _holdout, _objectives, multi_output
from ._base import TreeEnsembleBase, fit_events
from ._boosting_docs import SHARED_PARAMETERS, documents_pred_leaf
from ._continue import check_class_weights
from ._leaves import BoostingLeaves
from ._predict import predict_any, raw_scores


class _GradientBoosting(BoostingLeaves, TreeEnsembleBase):
    _is_classifier = False
    fit_arguments = frozenset({"eval_set", "early_stopping_rounds", "sample_weight_eval_set",
                               "init_model", "callbacks", "bin_mapper"})
    _estimator_type = "regressor"
    _model_layout = "boosting"  # what its model file holds (inputs.model_layouts)
    _parameter_constraints: ClassVar[dict] = {
        **TREE_ENSEMBLE,
        "loss": [Options((*REGRESSION_LOSSES, _objectives.CUSTOM)), CALLABLE],
        "alpha": [Interval("real", 0, 1, "neither")],
        "tweedie_variance_power": [Interval("real", 1, 2, "neither")],
        "leaf_estimation": [Options(("auto", "newton", "line_search"))],
        "n_estimators": [Interval("int", 0, None)],
        "learning_rate": [Interval("real", 0, None, "neither")],
        "min_child_weight": [NONNEG_REAL],
        "min_samples_leaf": [POSITIVE_INT],
        "reg_lambda": [NONNEG_REAL],
        "gamma": [NONNEG_REAL],
        "subsample": [FRACTION],
        "colsample_bytree": [FRACTION],
        "colsample_bylevel": [FRACTION],
        "colsample_bynode": [FRACTION],
        "base_score": [Interval("real"), NONE],
        "warm_start": [BOOL],
        "eval_metric": [NONE, METRIC_NAMES],
        "train_metric": [BOOL, Options(("auto",))],
        "early_stopping_rounds": [NONE, POSITIVE_INT],
        "early_stopping": [BOOL, Options(("auto",))],
        "validation_fraction": [NONE, Interval("real", 0, 1, "neither")],
        "n_iter_no_change": [POSITIVE_INT],
        "tol": [NONNEG_REAL],
        "verbose": [VERBOSE],
        "multi_strategy": [Options(MULTI_STRATEGIES)],
        **_dart.CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        loss="squared_error",
        alpha=0.9,
        tweedie_variance_power=1.5,
        leaf_estimation="auto",
        n_estimators=100,
        learning_rate=0.1,
        max_depth=6,
        max_leaf_nodes=None,
        max_bins=256,
        min_child_weight=1.0,
        min_samples_leaf=1,
        reg_lambda=1.0,
        gamma=0.0,
        subsample=1.0,
        colsample_bytree=1.0,
        colsample_bylevel=1.0,
        colsample_bynode=1.0,
        monotonic_cst=None,
        interaction_cst=None,
        base_score=None,
        warm_start=False,
        random_state=None,
        n_jobs=None,
        client=None,
        out_of_core="auto",
        eval_metric=None,
        train_metric="auto",
        early_stopping_rounds=None,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-7,
        verbose=False,
        multi_strategy="one_output_per_tree",
        booster="gbtree",
        rate_drop=0.0,
        skip_drop=0.0,
        normalize_type="tree",
        sample_type="uniform",
        one_drop=False,
    ):
        self.loss = loss
        self.alpha = alpha
        self.tweedie_variance_power = tweedie_variance_power
        self.leaf_estimation = leaf_estimation
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.max_bins = max_bins
        self.min_child_weight = min_child_weight
        self.min_samples_leaf = min_samples_leaf
        self.reg_lambda = reg_lambda
        self.gamma = gamma
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.colsample_bylevel = colsample_bylevel
        self.colsample_bynode = colsample_bynode
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.base_score = base_score
        self.warm_start = warm_start
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.client = client
        self.out_of_core = out_of_core
        self.eval_metric = eval_metric
        self.train_metric = train_metric
        self.early_stopping_rounds = early_stopping_rounds
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose
        self.multi_strategy = multi_strategy
        self.booster, self.rate_drop, self.skip_drop = booster, rate_drop, skip_drop
        self.normalize_type, self.sample_type, self.one_drop = normalize_type, sample_type, one_drop

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None, eval_set=None, early_stopping_rounds=None,
            sample_weight_eval_set=None, init_model=None, callbacks=None, bin_mapper=None):
        """Fit the model: ``n_estimators`` boosting rounds (fewer with early stopping).

        Parameters
        ----------
        X : array-like, pandas DataFrame, scipy sparse matrix, or Dask DataFrame/Array
            of shape (n, d). Sparse (also Dask chunks): entries not stored are missing
            values, stored zeros are zeros (XGBoost's convention).
            Dask input trains on the Dask client (``client`` or the default).
        y : array-like or Dask Series/Array of shape (n,), or of shape (n, k)
            k > 1 columns: k targets, or k 0/1 labels for the classifier
            (multi-label); see ``multi_strategy``.
        sample_weight : array-like of shape (n,), optional
        eval_set : list of (X, y), optional
            Evaluated after each round (``evals_result_``).
        early_stopping_rounds : int, optional
            Stop when the last eval set's metric has not improved for this
            many rounds; the model keeps the rounds up to ``best_iteration_``.
            None: the constructor's ``early_stopping_rounds``.
        init_model : fitted estimator or path, optional
            Continue its training: same bins, its trees first, rounds numbered
            after its own.
        callbacks : list, optional
            Called after each round: ``distboost.callbacks.TrainingCallback``
            objects (``after_iteration(model, epoch, evals_log)``, with the
            model of the rounds so far, e.g. ``TrainingCheckPoint``) and
            functions ``cb(round_index, train_metric, eval_metrics)``. Either
            returns True to stop.
        bin_mapper : distboost.binning.BinMapper, optional
            Bins to use instead of sampling X for quantile edges (e.g.
            ``BinMapper.from_edges`` of precomputed edges, matched to X's
            columns by name); ``max_bins`` then does not apply. A continued
            model keeps its own bins.
        """
        self._validate_params()
        multi_output.begin_fit(self, y, init_model)  # a k-column y: multi-output
        if early_stopping_rounds is None:
            early_stopping_rounds = self.early_stopping_rounds
        _objectives.check_trainable(self)
        _objectives.check_data(self, X, y)
        no_change = _holdout.early_stopping_on(self, X)
        if no_change and not eval_set and self.validation_fraction is not None:
            (X, y, sample_weight), (Xv, yv, wv) = _holdout.split(
                X, y, sample_weight, self.validation_fraction, random_seed(self.random_state))
            eval_set, sample_weight_eval_set = [(Xv, yv)], None if wv is None else [wv]
        checks.check_fit_arguments(eval_set, early_stopping_rounds, callbacks)
        init_model, n_rounds = self._resolve_init_model(init_model)
        if init_model is not None:
            multi_output.check_continued(self, init_model, getattr(self, "n_targets_", None))
        # the functions the workers unpickle
        remote = _objectives.functions_of(self.loss, self.eval_metric) if is_dask(X) else []
        with (explained_import_errors(remote, type(self).__name__),
              self._prepared(X, y, sample_weight, bin_mapper=bin_mapper, eval_set=eval_set,
                             sample_weight_eval_set=sample_weight_eval_set,
                             init_model=init_model) as engine):
            self._fit_engine(engine, init_model, n_rounds, early_stopping_rounds, callbacks,
                             no_change)
        return self

    def __sklearn_tags__(self):
        """The base's tags, a y of k columns supported (``multi_output.tags``)."""
        return multi_output.tags(super().__sklearn_tags__())

    def _check_columns(self, schema) -> None:
        """``monotonic_cst`` and ``interaction_cst`` against the columns (``constraints``)."""
        self._monotonic, self._interactions = _objectives.resolve_constraints(
            self.monotonic_cst, self.interaction_cst, schema, type(self).__name__)

    def _fit_engine(self, engine, init_model, n_rounds, early_stopping_rounds, callbacks,
                    no_change=False):
        """ESL Algorithm 10.3 on the prepared engine (``training.booster.train_boosting``):
        f_0, then ``n_rounds`` rounds; ``no_change``: scikit-learn's early stopping is on."""
        loss = self._make_loss()
        if self._is_classifier:
            _objectives.check_classes(self, len(self.classes_))
        if loss.name in LOG_LINK_LOSSES:
            objective.check_targets(engine, loss)
        base = self._base_score(engine, loss, init_model)
        metrics = self._metrics(loss, len(self.classes_) if self._is_classifier else None)
        spec = self._spec(loss, base, init_model, n_rounds, early_stopping_rounds, metrics,
                          no_change, on_training=no_change and not engine.eval_groups)
        objects = tuple(cb for cb in callbacks or [] if isinstance(cb, TrainingCallback))
        functions = [cb for cb in callbacks or [] if not isinstance(cb, TrainingCallback)]
        hooks = BoostHooks(self._round_callback(metrics[-1].name, functions), objects,
                           lambda result: _model_so_far(self, result, engine.mapper),
                           fit_events(self, engine))
        _set_fitted(self, train_boosting(engine, spec, hooks), engine.mapper)

    def _base_score(self, engine, loss, init_model):
        """f_0: the continued model's, ``base_score``, or None: the loss's optimal
        constant, which training computes (ESL Algorithm 10.3, step 1)."""
        n_out = loss.n_outputs(len(getattr(self, "classes_", [])))
        if multi_output.is_multi(self) and self.base_score is None:
            return multi_output.base_score(engine, loss)
        if init_model is not None:
            return np.asarray(init_model.base_score_, np.float64)
        if self.base_score is None and isinstance(loss, CustomObjective):
            return np.zeros(n_out)  # XGBoost's base_score for a custom objective
        if self.base_score is None:
            if self._is_classifier:
                check_class_weights(engine, self.classes_)
            return None
        return np.full(n_out, float(self.base_score))

    def _metrics(self, loss, n_classes) -> tuple:
        """``eval_metric``'s metric objects (``distboost.metrics``)."""
        return make_metrics(self.eval_metric, loss, n_classes)

    def _records_training_metric(self) -> bool:
        """``train_metric``: "auto" measures the training rows when ``verbose`` prints."""
        return bool(self.verbose) if self.train_metric == "auto" else bool(self.train_metric)

    def _make_loss(self, n_classes=None):
        """The loss object (``n_classes``: of a classifier, by default ``classes_``'s)."""
        if multi_output.is_multi(self):
            return multi_output.loss_of(self)
        if not self._is_classifier:
            return _objectives.estimator_objective(self, None)
        return _objectives.estimator_objective(self, n_classes or len(self.classes_))

    def _leaf_estimation(self, loss) -> str:
        """The leaf rule: "newton" where the loss has a hessian, else "line_search"."""
        if self.leaf_estimation == "auto":
            return "newton" if loss.has_hessian else "line_search"
        return self.leaf_estimation

    def _spec(self, loss, base, init_model, n_rounds, early_stopping_rounds, metrics,
              no_change=False, on_training=False) -> BoostSpec:
        """The fit's ``BoostSpec``; ``no_change``: scikit-learn's early stopping,
        ``on_training``: scoring the training rows (``validation_fraction=None``,
        no eval set)."""
        growth = GrowthParams(
            max_depth=self.max_depth,
            max_leaf_nodes=self.max_leaf_nodes,
            learning_rate=self.learning_rate,
            monotonic_cst=getattr(self, "_monotonic", None),
            interaction_cst=getattr(self, "_interactions", None),
        )
        split = SplitParams(self.reg_lambda, self.gamma, self.min_child_weight,
                            self.min_samples_leaf)
        return BoostSpec(
            loss=loss, n_outputs=loss.n_outputs(len(getattr(self, "classes_", []))),
            base_score=base, n_rounds=n_rounds, growth=growth, split=split,
            seed=random_seed(self.random_state), subsample=self.subsample,
            colsample_bytree=self.colsample_bytree, colsample_bylevel=self.colsample_bylevel,
            colsample_bynode=self.colsample_bynode,
            leaf_estimation=self._leaf_estimation(loss),
            early_stopping_rounds=early_stopping_rounds,
            train_metric=self._records_training_metric() or on_training,
            metrics=tuple(metrics), n_iter_no_change=self.n_iter_no_change if no_change else None,
            tol=self.tol if no_change else 0.0, no_change_set="training" if on_training else None,
            prior_trees=() if init_model is None else tuple(init_model.trees_),
            prior_evals=None if init_model is None else (
                getattr(init_model, "evals_result_", None) or {}),
            dart=_dart.params(self), prior_weights=_dart.prior_weights(self, init_model),
            vector_leaves=multi_output.vector_leaves(self),
        )

    def _round_callback(self, primary, functions):
        """``on_round`` of ``train_boosting``: the verbose line, then the user's
        functions ``cb(round, train_metric, eval_metrics)`` with the ``primary``
        metric's values (``TrainingCallback`` objects are ``BoostHooks.callbacks``)."""

        def on_round(r, metrics):
            if self.verbose:
                parts = [f"[{r}]"] + [f"{s}-{name}:{v:.6f}" for s, values in metrics.items()
                                      for name, v in values.items()]
                print("\t".join(parts), flush=True)
            train_metric = metrics.get("training", {}).get(primary)
            evals = [values[primary] for s, values in metrics.items() if s != "training"]
            return any(bool(cb(r, train_metric, evals)) for cb in functions)
        return on_round

    def _resolve_init_model(self, init_model):
        """The model to continue (given, loaded from a path, or this one under
        ``warm_start``) and the number of rounds to add to it."""
        n_rounds = self.n_estimators
        if init_model is None and self.warm_start and hasattr(self, "trees_"):
            extra = self.n_estimators - self.n_estimators_
            if extra < 0:
                raise ValueError(
                    f"warm_start: n_estimators={self.n_estimators} is below the "
                    f"{self.n_estimators_} rounds already fitted"
                )
            init_model, n_rounds = _snapshot(self), extra
        if isinstance(init_model, str) or hasattr(init_model, "__fspath__"):
            from ..model_file import load_model

            init_model = load_model(init_model)
        return init_model, n_rounds

    def _validate_params(self):
        _objectives.check_params(self)  # first: says why a classifier takes no function
        super()._validate_params()
        if self.max_depth is None and self.max_leaf_nodes is None:
            raise checks.InvalidParameterError(
                f"{type(self).__name__}: set max_depth or max_leaf_nodes (or both); with "
                f"neither the trees would grow without bound"
            )
        n_classes = 2 if self._is_classifier else None  # the names; "auc" is checked at fit
        loss = CustomObjective(self.loss) if _objectives.is_custom(self.loss) else make_loss(
            self.loss, n_classes, self.alpha, self.tweedie_variance_power)
        self._metrics(loss, n_classes)
        _dart.check(self, self._leaf_estimation(loss))
        if (self.leaf_estimation == "newton" and not self._is_classifier
                and not loss.has_hessian):
            raise checks.InvalidParameterError(
                f"{type(self).__name__}: loss={self.loss!r} has a zero second derivative, so a "
                f"Newton leaf -G/(H+lambda) is undefined; use leaf_estimation='line_search' "
                f"(or 'auto')"
            )

    # ------------------------------------------------------------- predict
    def _raw(self, X, rounds=None):
        trees = _dart.weighted_trees(self)[:rounds]
        return raw_scores(self._schema, self.base_score_, trees, X, self.n_jobs)

    def _decision(self, X):
        """Raw scores f(x): shape (n,) for one output, (n, K) for K outputs."""
        X = self._checked(X)
        k = len(self.base_score_)

        def fn(part):
            raw = self._raw(part)
            return raw[:, 0] if k == 1 else raw

        return predict_any(fn, X, None if k == 1 else k)

    def _staged_raw(self, X):
        matrix = to_matrix(self._checked(X), self._schema)
        raw = np.repeat(np.asarray(self.base_score_)[:, None], len(matrix), axis=1)
        outputs = np.arange(len(self.base_score_), dtype=np.int64)
        for round_trees in _dart.weighted_trees(self):
            predict_raw(matrix, *pack_trees(round_trees), outputs, raw)
            yield raw.T.copy()

    @property
    def estimators_(self) -> np.ndarray:
        """The fitted trees, shape (n_estimators_, K): round m's tree of output k."""
        self._check_fitted()
        out = np.empty((len(self.trees_), len(self.base_score_)), dtype=object)
        for m, round_trees in enumerate(self.trees_):
            for k, tree in enumerate(round_trees):
                out[m, k] = tree
        return out

    def _additive_trees(self) -> AdditiveTrees:
        """The decision function f(x) = f_0 + sum_m T_m(x) (ESL eq. 10.2): round m's
        tree k adds its leaf value to output k."""
        self._check_fitted()
        trees = [t for round_trees in self.trees_ for t in round_trees]
        k = len(self.base_score_)
        return AdditiveTrees(trees, scalar_leaves(trees), _dart.flat_weights(self),
                             np.tile(np.arange(k, dtype=np.int64), len(self.trees_)),
                             np.asarray(self.base_score_, np.float64), k == 1)

    def _model_state(self) -> dict | None:
        return _dart.model_state(self)  # DART's weights; None: nothing beyond the trees

    def _load_model_state(self, state: dict) -> None:
        _dart.load_state(self, state)

    def _combine_importances(self, trees) -> np.ndarray:
        """``feature_importances_``: the split gains of every tree, summed (total gain)."""
        nodes = [t.nodes for t in trees]
        return feature_totals(np.concatenate(nodes) if nodes else np.zeros(0, NODE_DTYPE), self.n_features_in_)




class _ObjectiveBoosting(_GradientBoosting):
    """Gradient boosting named by XGBoost's ``objective`` (the ranker, survival):
    ``loss`` is the objective under the name the shared plumbing reads."""

    @property
    def loss(self) -> str:
        """The objective, under the name gradient boosting's plumbing reads."""
        return self.objective

    @loss.setter
    def loss(self, value) -> None:
        self.objective = value


class GradientBoostingRegressor(_GradientBoosting):
    __doc__ = """Gradient boosting for regression.

    Parameters are those of XGBoost's scikit-learn interface where
    scikit-learn has no word. Categorical features (pandas ``category``
    dtype) are split into two sets of categories, found by sorting the
    categories by G/(H+lambda).

    Parameters
    ----------
    loss : {"squared_error", "absolute_error", "huber", "quantile", "poisson", "gamma", \
"tweedie"} or callable, default "squared_error"
        ESL Table 10.2. Huber's delta is the ``alpha``-quantile of |y - f| at
        the start of each round (Friedman's M-regression); ``"quantile"``
        estimates the ``alpha``-quantile of y given x. ``"poisson"`` (y >= 0,
        not all 0), ``"gamma"`` (y > 0) and ``"tweedie"`` (y >= 0) have a log
        link: f = log E[y | x], ``predict`` returns e^f, f_0 is the log of the
        weighted mean, L the negative log-likelihood (half the deviance, as
        XGBoost and scikit-learn), the loss's own metric its mean deviance. A
        function ``fn(y_true, raw_score) -> (gradient, hessian)`` is a custom
        objective (``distboost.training.objective``): Newton leaves, f_0 =
        ``base_score`` (0 by default), ``predict`` returns the raw score; a
        saved model records ``"custom"``.
    alpha : float in (0, 1), default 0.9
        The quantile of ``"quantile"``; the residual quantile setting
        Huber's delta.
    tweedie_variance_power : float in (1, 2), default 1.5
        The power p of ``"tweedie"``: Var[y | x] proportional to mu^p.
    leaf_estimation : {"auto", "newton", "line_search"}, default "auto"
        "newton": -G/(H+lambda) (XGBoost); "line_search": the tree is fit to
        the negative gradient by least squares, then each leaf takes the
        loss's minimizer over its rows (ESL Algorithm 10.3): the weighted
        median / alpha-quantile of its residuals, Huber's M-estimate, computed
        exactly over all partitions. "auto": "newton" for squared error,
        "line_search" for the others. With "line_search", ``reg_lambda``,
        ``gamma`` and ``min_child_weight`` (a weight sum) act on the tree's
        splits only; the leaf values are the line search's.
{shared}

    Attributes
    ----------
    trees_ : list of lists of Tree
        The trees of every round.
    tree_weights_ : ndarray of shape (n_estimators_, 1) or None
        DART: each tree's weight (None for booster="gbtree": 1 each).
    base_score_ : ndarray of shape (1,)
    train_score_, validation_score_ : ndarray
        scikit-learn's: the scores of ``early_stopping`` (the watched metric,
        negated when lower is better), f_0's first; the one it watched, the
        other empty (both empty without ``early_stopping``).
    n_features_in_, feature_names_in_, best_iteration_, evals_result_,
    feature_importances_
    """.replace("{shared}", SHARED_PARAMETERS)

    @documents_pred_leaf
    def predict(self, X, pred_leaf=False):
        """Predicted values, shape (n,); lazy for Dask input: f(x), or the mean
        e^f(x) for the log-link losses. A custom objective's model (also once
        loaded, ``loss="custom"``) predicts its raw scores f(x).

        Parameters
        ----------
        X : array-like, pandas DataFrame, scipy sparse matrix, or Dask DataFrame/Array
            of shape (n, d). Sparse (also Dask chunks): entries not stored are missing
            values, stored zeros are zeros (XGBoost's convention).
        {pred_leaf}
        """
        if pred_leaf:
            return self._pred_leaf(X)
        raw = self._decision(X)
        return libm.exp(raw) if self.loss in LOG_LINK_LOSSES else raw

    def staged_predict(self, X):
        for raw in self._staged_raw(X):
            if multi_output.is_multi(self):
                yield raw
            else:
                yield libm.exp(raw[:, 0]) if self.loss in LOG_LINK_LOSSES else raw[:, 0]

    def score(self, X, y, sample_weight=None) -> float:
        """R^2 of the predictions (weighted by ``sample_weight``); with k targets
        their mean R^2 (``multi_output.score``)."""
        if multi_output.is_multi(self):
            return multi_output.score(self, X, y, sample_weight)
        return checks.weighted_score(self.predict(X), y, sample_weight, False)


class GradientBoostingClassifier(_GradientBoosting):
    __doc__ = """Gradient boosting for classification: binomial deviance for two classes,
    multinomial deviance (K trees per round, softmax) for more; with
    ``loss="exponential"`` (two classes) AdaBoost's loss as gradient boosting
    (ESL 10.4-10.5; f estimates half the log-odds).

    Labels may be of any type (ints, {-1, +1}, strings); predictions come
    back in the same type, ordered as ``classes_``.

    Parameters
    ----------
    loss : {"log_loss", "exponential"}, default "log_loss"
        Binomial / multinomial deviance, or exponential loss (two classes).
    alpha : float in (0, 1), default 0.9
        Unused by the classification losses; kept so that regressor and
        classifier share their parameters.
    leaf_estimation : {"auto", "newton", "line_search"}, default "auto"
        "newton" (the default for both losses): -G/(H+lambda);
        "line_search": one Newton step per leaf for deviance (ESL Algorithm
        10.4) and the exact minimizer for exponential loss.
{shared}

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
    trees_ : list of lists of Tree
        The trees of every round (K per round for K > 2 classes).
    tree_weights_ : ndarray of shape (n_estimators_, K) or None
        DART: each tree's weight (None for booster="gbtree": 1 each).
    train_score_, validation_score_ : ndarray
        scikit-learn's: the scores of ``early_stopping`` (the watched metric,
        negated when lower is better), f_0's first; the one it watched, the
        other empty (both empty without ``early_stopping``).
    n_features_in_, feature_names_in_, best_iteration_, evals_result_,
    feature_importances_
    """.replace("{shared}", SHARED_PARAMETERS)

    _is_classifier = True
    _estimator_type = "classifier"
    _parameter_constraints: ClassVar[dict] = {**_GradientBoosting._parameter_constraints,
                              "loss": [Options(CLASSIFICATION_LOSSES)]}

    def __init__(self, *, loss="log_loss", alpha=0.9, leaf_estimation="auto", n_estimators=100,
                 learning_rate=0.1, max_depth=6, max_leaf_nodes=None, max_bins=256,
                 min_child_weight=1.0, min_samples_leaf=1, reg_lambda=1.0, gamma=0.0,
                 subsample=1.0, colsample_bytree=1.0, colsample_bylevel=1.0,
                 colsample_bynode=1.0, monotonic_cst=None, interaction_cst=None,
                 base_score=None, warm_start=False, random_state=None,
                 n_jobs=None, client=None, out_of_core="auto", eval_metric=None,
                 train_metric="auto", early_stopping_rounds=None, early_stopping=False,
                 validation_fraction=0.1, n_iter_no_change=10, tol=1e-7, verbose=False,
                 multi_strategy="one_output_per_tree", booster="gbtree", rate_drop=0.0,
                 skip_drop=0.0, normalize_type="tree", sample_type="uniform", one_drop=False):
        super().__init__(
            loss=loss, alpha=alpha, leaf_estimation=leaf_estimation, n_estimators=n_estimators,
            learning_rate=learning_rate, max_depth=max_depth, max_leaf_nodes=max_leaf_nodes,
            max_bins=max_bins, min_child_weight=min_child_weight,
            min_samples_leaf=min_samples_leaf, reg_lambda=reg_lambda, gamma=gamma,
            subsample=subsample, colsample_bytree=colsample_bytree,
            colsample_bylevel=colsample_bylevel, colsample_bynode=colsample_bynode,
            monotonic_cst=monotonic_cst, interaction_cst=interaction_cst,
            base_score=base_score, warm_start=warm_start, random_state=random_state,
            n_jobs=n_jobs, client=client, out_of_core=out_of_core, eval_metric=eval_metric,
            train_metric=train_metric, early_stopping_rounds=early_stopping_rounds,
            early_stopping=early_stopping, validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change, tol=tol, verbose=verbose,
            multi_strategy=multi_strategy, booster=booster,
            rate_drop=rate_drop, skip_drop=skip_drop, normalize_type=normalize_type,
            sample_type=sample_type, one_drop=one_drop,
        )

    def _proba_from_raw(self, raw):
        return self._loss_object().predict_proba(raw.T)

    def _loss_object(self):
        if multi_output.is_multi(self):
            return multi_output.loss_of(self)
        if not hasattr(self, "_loss"):
            self._loss = make_loss(self.loss, len(self.classes_), self.alpha)
        return self._loss

    def decision_function(self, X):
        """Raw scores f(x): shape (n,) for two classes (the log-odds of
        ``classes_[1]``), (n, K) for K > 2 classes."""
        return self._decision(X)

    def predict_proba(self, X):
        """Class probabilities, shape (n, n_classes); lazy for Dask input."""
        X = self._checked(X)
        return predict_any(lambda part: self._proba_from_raw(self._raw(part)), X, len(self.classes_))

    @documents_pred_leaf
    def predict(self, X, pred_leaf=False):
        """Most probable class labels; lazy for Dask input.

        Parameters
        ----------
        X : array-like, pandas DataFrame, scipy sparse matrix, or Dask DataFrame/Array
            of shape (n, d). Sparse (also Dask chunks): entries not stored are missing
            values, stored zeros are zeros (XGBoost's convention).
        {pred_leaf}
        """
        if pred_leaf:
            return self._pred_leaf(X)
        X = self._checked(X)
        if multi_output.is_multi(self):  # labels j with P(label j = 1) > 0.5, shape (n, k)
            return predict_any(lambda part: multi_output.labels_from_proba(
                self._proba_from_raw(self._raw(part))), X, self.n_targets_)
        return self._predict_labels(
            lambda part: self._labels(self._proba_from_raw(self._raw(part))), X)

    def staged_predict_proba(self, X):
        for raw in self._staged_raw(X):
            yield self._proba_from_raw(raw)

    def staged_predict(self, X):
        for proba in self.staged_predict_proba(X):
            if multi_output.is_multi(self):
                yield multi_output.labels_from_proba(proba)
            else:
                yield self.classes_[np.argmax(proba, axis=1)]

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy (weighted by ``sample_weight``); with k labels the subset
        accuracy (``multi_output.score``)."""
        if multi_output.is_multi(self):
            return multi_output.score(self, X, y, sample_weight)
        return checks.weighted_score(self.predict(X), y, sample_weight, True)


def _set_fitted(est, result: BoostResult, bin_mapper) -> None:
    """Give ``est`` the fitted attributes of ``result``'s model, up to the kept round."""
    est._loss = result.loss
    est.base_score_ = result.base_score
    est.trees_ = result.model_trees()
    est.tree_weights_ = result.model_weights()
    est.n_estimators_ = len(est.trees_)
    est.best_iteration_ = result.best_iteration
    est.evals_result_ = result.evals_result()
    est.bin_mapper_ = bin_mapper
    scores = np.asarray(result.scores if result.scores is not None else [], np.float64)
    on_training = result.scores is not None and not result.eval_sets
    est.train_score_ = scores if on_training else np.zeros(0)
    est.validation_score_ = np.zeros(0) if on_training else scores


def _model_so_far(est, result: BoostResult, bin_mapper):
    """A copy of ``est`` with the model of the rounds in ``result`` so far (what
    ``TrainingCallback`` objects get after each round)."""
    model = _snapshot(est)
    _set_fitted(model, result, bin_mapper)
    return model


def _snapshot(est):
    """A shallow copy of a fitted estimator to continue from (warm start)."""
    clone = type(est)(**est.get_params(deep=False))
    clone.__dict__.update({k: v for k, v in est.__dict__.items() if k.endswith("_") or k.startswith("_")})
    return clone

