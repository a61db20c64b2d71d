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
from ..engine.spill import OUT_OF_CORE_PARAMETER
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
from ..trees.params import GrowthParams
from . import _dart, _holdout, _objectives
from ._base import TreeEnsembleBase, fit_events
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
        self.booster, self.rate_drop, self.skip_drop = booster, rate_drop, skip_drop
        self.normalize_type, self.sample_type, self.one_drop = normalize_type, sample_type, one_drop

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None, eval_set=None, early_stopping_rounds=None,
            sample_weight_eval_set=None, init_model=None, callbacks=None, bin_mapper=None):
        """Fit the model: ``n_estimators`` boosting rounds (fewer with early stopping).

        Parameters
        ----------
        X : array-like, pandas DataFrame, or Dask DataFrame/Array of shape (n, d)
            Dask input trains on the Dask client (``client`` or the default).
        y : array-like or Dask Series/Array of shape (n,)
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
        # the functions the workers unpickle
        remote = _objectives.functions_of(self.loss, self.eval_metric) if is_dask(X) else []
        with (explained_import_errors(remote, type(self).__name__),
              self._prepared(X, y, sample_weight, bin_mapper=bin_mapper, eval_set=eval_set,
                             sample_weight_eval_set=sample_weight_eval_set,
                             init_model=init_model) as engine):
            self._fit_engine(engine, init_model, n_rounds, early_stopping_rounds, callbacks,
                             no_change)
        return self

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


_PRED_LEAF = """pred_leaf : bool, default False
            Return instead the leaf each row reaches in every tree, in
            XGBoost's layout (``Booster.predict(pred_leaf=True)``): shape
            (n, n_estimators_) for one output, (n, n_estimators_ * K) for K,
            round by round and within a round class by class; float32 as
            XGBoost's. The ids are those of ``apply`` (the model file's and
            the XGBoost export's; the export of a model with K > 2 classes
            starts with a round of K one-leaf trees holding f_0, which
            XGBoost's ``pred_leaf`` lists first, as leaf 0). As ``predict``,
            the rounds the model keeps (up to ``best_iteration_``), which
            XGBoost's scikit-learn ``apply`` also uses by default."""
"""``predict``'s ``pred_leaf`` parameter, the regressor's and the classifier's."""


def _documents_pred_leaf(fn):
    """``fn``, ``{pred_leaf}`` in its docstring written out (``_PRED_LEAF``)."""
    if fn.__doc__:  # None under python -OO
        fn.__doc__ = fn.__doc__.replace("{pred_leaf}", _PRED_LEAF)
    return fn


_SHARED_PARAMETERS = """\
    n_estimators : int >= 0, default 100
        Boosting rounds M (fewer with early stopping).
    learning_rate : float > 0, default 0.1
        Shrinkage nu of every tree (ESL 10.12.1).
    max_depth : int >= 1 or None, default 6
        Depth of the trees (depth-wise growth); None with ``max_leaf_nodes``.
    max_leaf_nodes : int >= 2 or None, default None
        Leaves per tree, grown best-first (the J of ESL 10.11).
    max_bins : int in [3, 256], default 256
        Histogram bins per feature, one of them for missing values.
    min_child_weight : float >= 0, default 1.0
        Smallest hessian sum (weight sum for line search) of a child.
    min_samples_leaf : int >= 1, default 1
        Smallest number of training rows in a leaf. With 1 and a positive
        ``min_child_weight`` (the defaults) the histograms hold (g, h) only,
        without a row count, which trains faster (same trees).
    reg_lambda : float >= 0, default 1.0
        L2 penalty lambda on leaf values (XGBoost).
    gamma : float >= 0, default 0.0
        Smallest loss reduction for a split (XGBoost).
    subsample : float in (0, 1], default 1.0
        Fraction of rows drawn per round, without replacement (stochastic
        gradient boosting, ESL 10.12, Friedman 2002).
    colsample_bytree, colsample_bylevel, colsample_bynode : float in (0, 1], default 1.0
        Fractions of the features drawn per tree, per depth and per node
        (nested), as functions of (random_state, round, node).
    monotonic_cst : array-like of int of shape (n_features,), dict or None, default None
        scikit-learn's monotone constraints: -1 / 0 / +1 per feature (or a dict
        by column name) for a model non-increasing / free / non-decreasing in
        that feature (in f: the log-odds of ``classes_[1]`` for two classes;
        refused for more). Enforced exactly (``distboost.inputs.constraints``):
        splits breaking the order are refused, node values are bounded and
        leaves clipped, line-search leaves included.
    interaction_cst : {"pairwise", "no_interactions"}, sequence of sets or None, default None
        scikit-learn's interaction constraints: feature sets (indices or
        names); every root-to-leaf path uses features of one set only;
        features no set lists form one more set. Combines with column
        subsampling (a node draws its features, then keeps the allowed ones).
    base_score : float or None, default None
        The initial score f_0; None: the loss's optimal constant.
    warm_start : bool, default False
        Fit adds rounds to the fitted model up to ``n_estimators``.
    random_state : int, RandomState or None, default None
        Seed of every random draw (each a function of seed, round and row id,
        so the model does not depend on the partitioning).
    n_jobs : int >= 1 or None, default None
        Threads of the in-process kernels (None: numba's default); on Dask,
        of this process's split finding (None: 1, the workers do the rest).
    client : dask.distributed.Client or None, default None
        The client Dask input trains on (None: the current default client).
        The library never starts a cluster.
{out_of_core}    eval_metric : str, callable, list of them or None, default None
        Metrics recorded every round on the evaluation sets (and the training
        rows, see ``train_metric``) in ``evals_result_``: "logloss",
        "mlogloss", "error" and (two classes) "auc" for classifiers; "rmse"
        and "mae" for regressors (of the prediction, e^f for a log link);
        "poisson_deviance" and "gamma_deviance" for the log-link losses; or
        the loss's own metric, which None means; or a function
        ``fn(y_true, raw_score) -> per-row values`` (weighted mean; see
        ``distboost.metrics.make_metric`` for its name and direction). Early
        stopping watches the last one. Computed exactly on the workers
        ("auc" carries each row's score to the driver).
    train_metric : bool or "auto", default "auto"
        Record the metrics on the training rows too (``evals_result_
        ["training"]``, one more pass per round); "auto": when ``verbose``.
    early_stopping_rounds : int >= 1 or None, default None
        XGBoost's early stopping: stop when the last metric of ``eval_metric``
        on the last evaluation set has not improved for this many rounds; the
        model keeps the rounds up to the best (``best_iteration_``). Needs an
        evaluation set: ``fit``'s ``eval_set``, or the rows ``early_stopping``
        holds out. ``fit(early_stopping_rounds=...)`` overrides it.
    early_stopping : "auto" or bool, default False
        scikit-learn's early stopping (``HistGradientBoosting*``): stop when
        none of the last ``n_iter_no_change`` rounds improved the score (the
        last metric of ``eval_metric``, by default the loss's own) by more than
        ``tol`` over the round before them; every round run stays in the model.
        It scores the last set of ``fit``'s ``eval_set`` if one is given (as
        scikit-learn's ``X_val``), else ``validation_fraction`` of the training
        rows held out, else (``validation_fraction=None``) the training rows.
        "auto": on when the training data have more than 10 000 rows, as in
        scikit-learn (a Dask collection's rows are counted first). The default
        is False, unlike scikit-learn's "auto", so that a fit that sets nothing
        trains the same model as before this parameter existed. As in
        scikit-learn the scores start with f_0's (``validation_score_``).
    validation_fraction : float in (0, 1) or None, default 0.1
        The share of the training rows ``early_stopping`` holds out and
        scores. Each row is held out with this probability by a hash of its
        feature values and ``random_state`` (None: seed 0), so the same rows
        are held out in this process and on Dask, whatever the partitioning
        (scikit-learn holds out an exact, for classifiers stratified, share).
    n_iter_no_change : int >= 1, default 10
        Rounds without an improvement of more than ``tol`` before
        ``early_stopping`` stops.
    tol : float >= 0, default 1e-7
        The improvement of the score that counts, in the metric's own units.
    verbose : bool or int, default False
        Print the recorded metrics every round.
{dart}""".replace("{out_of_core}", OUT_OF_CORE_PARAMETER).replace("{dart}", _dart.PARAMETERS)
"""The parameters both gradient boosting estimators take, for their docstrings."""


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
    """.replace("{shared}", _SHARED_PARAMETERS)

    @_documents_pred_leaf
    def predict(self, X, pred_leaf=False):
        """Predicted values, shape (n,); lazy for Dask input: f(x), or the mean
        e^f(x) for the log-link losses. A custom objective's model (also once
        loaded, ``loss="custom"``) predicts its raw scores f(x).

        Parameters
        ----------
        X : array-like, pandas DataFrame, or Dask DataFrame/Array of shape (n, d)
        {pred_leaf}
        """
        if pred_leaf:
            return self._pred_leaf(X)
        raw = self._decision(X)
        return libm.exp(raw) if self.loss in LOG_LINK_LOSSES else raw

    def staged_predict(self, X):
        for raw in self._staged_raw(X):
            yield libm.exp(raw[:, 0]) if self.loss in LOG_LINK_LOSSES else raw[:, 0]

    def score(self, X, y, sample_weight=None) -> float:
        """R^2 of the predictions (weighted by ``sample_weight``)."""
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
    """.replace("{shared}", _SHARED_PARAMETERS)

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
                 booster="gbtree", rate_drop=0.0, skip_drop=0.0, normalize_type="tree",
                 sample_type="uniform", one_drop=False):
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
            n_iter_no_change=n_iter_no_change, tol=tol, verbose=verbose, booster=booster,
            rate_drop=rate_drop, skip_drop=skip_drop, normalize_type=normalize_type,
            sample_type=sample_type, one_drop=one_drop,
        )

    def _proba_from_raw(self, raw):
        return self._loss_object().predict_proba(raw.T)

    def _loss_object(self):
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

    @_documents_pred_leaf
    def predict(self, X, pred_leaf=False):
        """Most probable class labels; lazy for Dask input.

        Parameters
        ----------
        X : array-like, pandas DataFrame, or Dask DataFrame/Array of shape (n, d)
        {pred_leaf}
        """
        if pred_leaf:
            return self._pred_leaf(X)
        X = self._checked(X)

        return self._predict_labels(
            lambda part: self._labels(self._proba_from_raw(self._raw(part))), X)

    def staged_predict_proba(self, X):
        for raw in self._staged_raw(X):
            yield self._proba_from_raw(raw)

    def staged_predict(self, X):
        for proba in self.staged_predict_proba(X):
            yield self.classes_[np.argmax(proba, axis=1)]

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy (weighted by ``sample_weight``)."""
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

