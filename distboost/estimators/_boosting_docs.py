"""Docstring parts the gradient boosting estimators share: their parameters and ``pred_leaf``."""

from __future__ import annotations

from ..engine.spill import OUT_OF_CORE_PARAMETER
from . import _dart

PRED_LEAF = """pred_leaf : bool, default False
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


def documents_pred_leaf(fn):
    """``fn``, ``{pred_leaf}`` in its docstring written out (``PRED_LEAF``)."""
    if fn.__doc__:  # None under python -OO
        fn.__doc__ = fn.__doc__.replace("{pred_leaf}", PRED_LEAF)
    return fn


SHARED_PARAMETERS = """\
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
    multi_strategy : {"one_output_per_tree", "multi_output_tree"}, default "one_output_per_tree"
        XGBoost's name for how a target y of k > 1 columns is grown (the
        regressor: k targets, squared error; the classifier: a 0/1 indicator
        matrix, k independent logistic outputs, ``predict`` and
        ``predict_proba`` of shape (n, k)): one tree per target per round
        (``distboost.estimators.multi_output``), or ``"multi_output_tree"``:
        one tree per round shared by the targets, split on the sum of their
        gains, with a leaf value -G_j/(H_j+lambda) per target (XGBoost's
        vector leaves; numeric features only, no DART). Unused with one target.
{dart}""".replace("{out_of_core}", OUT_OF_CORE_PARAMETER).replace("{dart}", _dart.PARAMETERS)
"""The parameters both gradient boosting estimators take, for their docstrings."""
