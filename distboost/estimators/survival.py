"""Gradient boosting for censored survival times: XGBoost's ``survival:cox``
(Cox proportional hazards, Breslow's ties) and ``survival:aft`` (accelerated
failure time, Barnwal, Cho & Hocking 2022) in one estimator,
``GradientBoostingSurvivalRegressor``.

Training is gradient boosting's own (``training.booster.train_boosting``);
what makes it survival is its loss (``trees.survival``), its labels (Cox:
XGBoost's signed times or a time with an event; AFT: lower and upper bounds,
the upper carried beside y on the shards as a ranker's query ids are) and its
metrics (``cox-nloglik``, ``aft-nloglik``, ``cindex``). Cox's risk sets span
partitions: ``training.survival`` says how their sums stay exact.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..engine.group import each_shard
from ..engine.input_plan import is_dask
from ..inputs import checks
from ..inputs import survival as labels
from ..inputs.checks import NONE, Interval, InvalidParameterError, Options
from ..training import survival as risk_sets
from ..trees import survival_curves as curves
from ..trees.survival import DISTRIBUTIONS, OBJECTIVES, AFTLoss, CoxLoss, IntervalTarget
from . import _objectives
from .gradient_boosting import _ObjectiveBoosting

_NOT_SURVIVAL = ("loss", "alpha", "tweedie_variance_power", "leaf_estimation", "early_stopping",
                 "validation_fraction", "n_iter_no_change", "tol")
AFT_DEFAULT_BASE_SCORE = 0.5
"""XGBoost's base_score for ``survival:aft``: f_0 = log(0.5)."""


class GradientBoostingSurvivalRegressor(_ObjectiveBoosting):
    """Gradient boosted trees for censored survival times.

    ``objective="survival:cox"``: the negative log partial likelihood of Cox's
    proportional hazards model (Cox 1972), Breslow's approximation for tied
    times (Breslow 1974); f(x) is the log hazard ratio. ``"survival:aft"``:
    the accelerated failure time model log T = f(x) + sigma Z (Barnwal, Cho &
    Hocking 2022), with interval-censored labels. Both with Newton leaves
    -G / (H + lambda) (Chen & Guestrin 2016, eq. 5), as XGBoost's objectives
    of the same names. ``predict`` returns exp(f): the hazard ratio (Cox) or
    the predicted time (AFT), as XGBoost's ``predict``.

    A dedicated estimator rather than ``GradientBoostingRegressor(loss=...)``:
    its labels are not one y (a time with an event; lower and upper bounds),
    its ``predict`` is on the time scale and its ``score`` is Harrell's
    concordance (as scikit-survival's estimators).

    Parameters
    ----------
    objective : {"survival:cox", "survival:aft"}, default "survival:cox"
    aft_loss_distribution : {"normal", "logistic", "extreme"}, default "normal"
        Z's distribution (AFT only).
    aft_loss_distribution_scale : float > 0, default 1.0
        sigma (AFT only).
    base_score : float > 0, optional
        As XGBoost's: on the time scale, f_0 = log(base_score); None: 1 for Cox
        (f_0 = 0, which the partial likelihood ignores), 0.5 for AFT.
    eval_metric : str or list, optional
        "cox-nloglik" (Cox), "aft-nloglik" (AFT), "cindex" (Harrell's C, higher
        is better); None: the objective's negative log-likelihood.

    The other parameters are ``GradientBoostingRegressor``'s (trees, rounds,
    regularization, sampling, Dask). Sample weights multiply each row's
    gradient and hessian (for Cox, rows count once in the risk sets, as in
    XGBoost). ``out_of_core`` must stay off for AFT (its bounds are kept in
    memory beside y).
    """

    _estimator_type = "regressor"
    _model_layout = "survival"  # what its model file holds (inputs.model_layouts)
    fit_arguments = _ObjectiveBoosting.fit_arguments | {"event", "y_lower", "y_upper",
                                                        "label_lower_bound", "label_upper_bound"}
    _parameter_constraints: ClassVar[dict] = {
        **{k: v for k, v in _ObjectiveBoosting._parameter_constraints.items()
           if k not in _NOT_SURVIVAL},
        "objective": [Options(OBJECTIVES)],
        "aft_loss_distribution": [Options(tuple(DISTRIBUTIONS))],
        "aft_loss_distribution_scale": [Interval("real", 0, None, "neither")],
        "base_score": [Interval("real", 0, None, "neither"), NONE],
    }

    def __init__(self, *, objective="survival:cox", aft_loss_distribution="normal",
                 aft_loss_distribution_scale=1.0, n_estimators=100, learning_rate=0.1,
                 max_depth=6, max_leaf_nodes=None, max_bins=256, min_child_weight=1.0,
                 min_samples_leaf=1, reg_lambda=1.0, gamma=0.0, subsample=1.0,
                 colsample_bytree=1.0, colsample_bylevel=1.0, colsample_bynode=1.0,
                 monotonic_cst=None, interaction_cst=None, base_score=None, warm_start=False,
                 random_state=None, n_jobs=None, client=None, out_of_core=False,
                 eval_metric=None, train_metric="auto", early_stopping_rounds=None,
                 verbose=False):
        super().__init__(
            loss=objective, n_estimators=n_estimators, learning_rate=learning_rate,
            max_depth=max_depth, max_leaf_nodes=max_leaf_nodes, max_bins=max_bins,
            min_child_weight=min_child_weight, min_samples_leaf=min_samples_leaf,
            reg_lambda=reg_lambda, gamma=gamma, subsample=subsample,
            colsample_bytree=colsample_bytree, colsample_bylevel=colsample_bylevel,
            colsample_bynode=colsample_bynode, monotonic_cst=monotonic_cst,
            interaction_cst=interaction_cst, base_score=base_score, warm_start=warm_start,
            random_state=random_state, n_jobs=n_jobs, client=client, out_of_core=out_of_core,
            eval_metric=eval_metric, train_metric=train_metric,
            early_stopping_rounds=early_stopping_rounds, early_stopping=False, verbose=verbose)
        self.aft_loss_distribution = aft_loss_distribution
        self.aft_loss_distribution_scale = aft_loss_distribution_scale

    @property
    def _aft(self) -> bool:
        return self.objective == "survival:aft"

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None, *, event=None, y_lower=None, y_upper=None, sample_weight=None,
            eval_set=None, early_stopping_rounds=None, sample_weight_eval_set=None,
            init_model=None, callbacks=None, bin_mapper=None, label_lower_bound=None,
            label_upper_bound=None):
        """Fit the model: ``n_estimators`` rounds (fewer with early stopping).

        Parameters
        ----------
        X : array-like, pandas DataFrame, or Dask DataFrame/Array of shape (n, d)
        y : array-like or Dask Series/Array of shape (n,), Cox
            The time; with ``event`` omitted, XGBoost's signed form: y > 0 an
            event at y, y < 0 censored at -y.
        event : array-like of shape (n,), optional (Cox, in memory)
            1 where the event happened at y, 0 where y is a censoring time.
        y_lower, y_upper : array-like or Dask Series/Array of shape (n,), AFT
            Bounds of each time (XGBoost's ``label_lower_bound`` /
            ``label_upper_bound``): equal (uncensored), y_upper = inf
            (right-censored), y_lower = 0 (left-censored), or an interval.
        label_lower_bound, label_upper_bound : array-like, optional
            XGBoost's names for ``y_lower`` and ``y_upper`` (give one pair).
        eval_set : list, optional
            Cox: (X, y) with signed y, or (X, y, event); AFT: (X, y_lower,
            y_upper). Evaluated after each round (``evals_result_``).
        sample_weight, early_stopping_rounds, sample_weight_eval_set, init_model,
        callbacks, bin_mapper :
            As ``GradientBoostingRegressor.fit``.
        """
        self._validate_params()
        if early_stopping_rounds is None:
            early_stopping_rounds = self.early_stopping_rounds
        y_lower = _either(y_lower, label_lower_bound, "y_lower", "label_lower_bound")
        y_upper = _either(y_upper, label_upper_bound, "y_upper", "label_upper_bound")
        y, upper = self._labels(X, y, event, y_lower, y_upper, "")
        sets, uppers = [], []
        for k, entry in enumerate(eval_set or []):
            Xe, ye, ue = self._eval_labels(entry, k)
            sets.append((Xe, ye))
            uppers.append(ue)
        checks.check_fit_arguments(sets, early_stopping_rounds, callbacks)
        _objectives.check_data(self, X, y)
        init_model, n_rounds = self._resolve_init_model(init_model)
        with self._prepared(X, y, sample_weight, bin_mapper=bin_mapper, eval_set=sets,
                            sample_weight_eval_set=sample_weight_eval_set,
                            init_model=init_model, upper=upper,
                            eval_upper=uppers if self._aft else None) as engine:
            if is_dask(X) and not self._aft:
                _check_cox_on(engine)
            self._events = risk_sets.event_times(engine) if not self._aft else None
            try:
                self._fit_engine(engine, init_model, n_rounds, early_stopping_rounds, callbacks)
                if not self._aft:
                    self.unique_times_ = self._events[0]
                    self._breslow = risk_sets.breslow_baseline(
                        engine, self._make_loss(), self.base_score_, self.trees_)
            finally:
                del self._events
        return self

    def _labels(self, X, y, event, y_lower, y_upper, where: str):
        """(y, upper) as the engine takes them: Cox's signed time and None, or
        AFT's lower bound and upper bound; refusing what does not fit the objective."""
        name = type(self).__name__
        if self._aft:
            if y is not None or event is not None:
                raise ValueError(f"{name}(objective='survival:aft') takes its labels as "
                                 f"y_lower and y_upper{where}, not y or event")
            if y_lower is None or y_upper is None:
                raise ValueError(f"{name}(objective='survival:aft') needs y_lower and "
                                 f"y_upper{where} (XGBoost's label_lower_bound / "
                                 f"label_upper_bound; y_upper = inf: right-censored)")
            if not is_dask(y_lower):
                y_upper = labels.check_bounds(y_lower, y_upper, where)
                y_lower = np.asarray(y_lower, np.float64)
            return y_lower, y_upper
        if y_lower is not None or y_upper is not None:
            raise ValueError(f"{name}(objective='survival:cox') takes y (and event){where}; "
                             f"y_lower and y_upper are for objective='survival:aft'")
        if y is None:
            raise ValueError(f"{name}(objective='survival:cox') needs y{where}: the time, "
                             f"negative where censored (or with event=...)")
        if event is not None:
            if is_dask(y) or is_dask(event):
                return labels.cox_signed_time_dask(y, event, where), None
            return labels.cox_signed_time(y, event, where), None
        return (y if is_dask(y) else labels.check_cox_target(y, where)), None

    def _eval_labels(self, entry, k: int):
        where = f" of eval_set[{k}]"
        if not isinstance(entry, (tuple, list)) or len(entry) not in (2, 3):
            raise ValueError(f"eval_set[{k}] must be (X, y), (X, y, event) for Cox or (X, "
                             f"y_lower, y_upper) for AFT")
        if self._aft:
            if len(entry) != 3:
                raise ValueError(f"eval_set[{k}] of an AFT model must be (X, y_lower, y_upper)")
            ye, ue = self._labels(entry[0], None, None, entry[1], entry[2], where)
            return entry[0], ye, ue
        ye, _ = self._labels(entry[0], entry[1], entry[2] if len(entry) == 3 else None,
                             None, None, where)
        return entry[0], ye, None

    def _validate_params(self):
        _objectives.check_params(self)
        checks.validate_params(self)
        if self.max_depth is None and self.max_leaf_nodes is None:
            raise InvalidParameterError(
                f"{type(self).__name__}: set max_depth or max_leaf_nodes (or both); with "
                f"neither the trees would grow without bound")
        if self._aft and self.out_of_core is True:
            raise InvalidParameterError(
                f"{type(self).__name__}: out_of_core=True is not supported with "
                f"objective='survival:aft' (its bounds are kept in memory beside y); leave "
                f"out_of_core=False")
        self._metrics(self._make_loss(), None)

    def _make_loss(self, n_classes=None):
        if self._aft:
            return AFTLoss(self.aft_loss_distribution, float(self.aft_loss_distribution_scale))
        return CoxLoss(*getattr(self, "_events", None) or (None, None))

    def _loss_object(self):
        return self._make_loss()

    def _base_score(self, engine, loss, init_model):
        """f_0 = log(base_score) (XGBoost's), the continued model's, or the default."""
        if init_model is not None:
            return np.asarray(init_model.base_score_, np.float64)
        default = AFT_DEFAULT_BASE_SCORE if self._aft else 1.0
        return np.array([math.log(default if self.base_score is None else self.base_score)])

    # ------------------------------------------------------------- predict
    def predict(self, X, output_margin: bool = False):
        """exp(f(x)): the hazard ratio (Cox) or the predicted time (AFT), shape (n,);
        ``output_margin``: f(x) itself. Lazy for Dask input."""
        raw = self._decision(X)
        return raw if output_margin else np.exp(raw)

    def staged_predict(self, X):
        """exp(f(x)) after each round."""
        for raw in self._staged_raw(X):
            yield np.exp(raw[:, 0])

    def predict_cumulative_hazard_function(self, X, times) -> np.ndarray:
        """H(t | x) at each of ``times`` for each row, shape (n, len(times)).

        Cox: Breslow's baseline cumulative hazard at the fitted model times the
        hazard ratio, H(t | x) = H_0(t) exp(f(x)) (Breslow 1974; a step function
        jumping at the training event times ``unique_times_``). AFT: -log S(t | x).
        Names as scikit-survival's; arrays rather than step functions. Dask input
        is computed.
        """
        if self._aft:
            with np.errstate(divide="ignore"):
                return -np.log(self.predict_survival_function(X, times))
        f_max, sums = self._baseline()
        f = np.asarray(self.predict(X, output_margin=True), np.float64)
        return curves.cox_cumulative_hazard(f, self.unique_times_, sums, f_max, times)

    def predict_survival_function(self, X, times) -> np.ndarray:
        """S(t | x) at each of ``times`` for each row, shape (n, len(times)).

        Cox: exp(-H(t | x)) (``predict_cumulative_hazard_function``). AFT:
        1 - F((log t - f(x)) / sigma), F the CDF of ``aft_loss_distribution``
        (Barnwal, Cho & Hocking 2022, eq. 2). Dask input is computed.
        """
        if not self._aft:
            return np.exp(-self.predict_cumulative_hazard_function(X, times))
        f = np.asarray(self.predict(X, output_margin=True), np.float64)
        return curves.aft_survival(DISTRIBUTIONS[self.aft_loss_distribution],
                                   self.aft_loss_distribution_scale, f, times)

    @property
    def cum_baseline_hazard_(self) -> np.ndarray:
        """Cox: Breslow's H_0 at each of ``unique_times_`` (the hazard of f(x) = 0)."""
        f_max, sums = self._baseline()
        return np.asarray(sums) * np.exp(-f_max)

    def _baseline(self) -> tuple[float, np.ndarray]:
        self._check_fitted()
        if getattr(self, "_breslow", None) is None:
            raise AttributeError(f"{type(self).__name__}: this Cox model has no baseline hazard "
                                 f"(it is computed at the end of fit); fit it to completion")
        return self._breslow

    def _model_state(self) -> dict:
        if self._aft or getattr(self, "_breslow", None) is None:
            return {}
        f_max, sums = self._breslow
        return {"unique_times": self.unique_times_.tolist(), "breslow_f_max": float(f_max),
                "breslow_sums": np.asarray(sums, np.float64).tolist()}

    def _load_model_state(self, d: dict) -> None:
        if not self._aft and d:
            self.unique_times_ = np.asarray(d["unique_times"], np.float64)
            sums = np.asarray(d["breslow_sums"], np.float64)
            if sums.shape != self.unique_times_.shape:
                raise ValueError("breslow_sums and unique_times differ in length")
            self._breslow = (float(d["breslow_f_max"]), sums)

    def score(self, X, y=None, sample_weight=None, *, event=None, y_lower=None,
              y_upper=None) -> float:
        """Harrell's concordance index of the predictions on (X, labels) (in memory):
        the share of comparable pairs whose order the model gets right."""
        from ..metrics import make_metrics

        y, upper = self._labels(X, y, event, y_lower, y_upper, "")
        target = y if upper is None else IntervalTarget(np.asarray(y, np.float64), upper)
        metric = make_metrics("cindex", self._make_loss(), None)[0]
        raw = np.asarray(self.predict(X, output_margin=True), np.float64)[None, :]
        w = np.ones(raw.shape[1]) if sample_weight is None else np.asarray(sample_weight, float)
        return metric.value(metric.partial(target, raw, w))


def _either(value, alias, name: str, alias_name: str):
    if value is not None and alias is not None:
        raise ValueError(f"give {name} or {alias_name} (XGBoost's name for it), not both")
    return alias if value is None else value


def _cox_zeros(state):
    """Per group, for each partition: (index, rows with y == 0, the first such row)."""
    found = []
    for (shard,) in each_shard(state.shards):
        zero = np.flatnonzero(shard.y == 0)
        found.append((shard.index, len(zero), int(zero[0]) if len(zero) else -1))
    return state, found


def _check_cox_on(engine) -> None:
    """On Dask, one pass over every set's binned rows: no time is 0."""
    for key, groups in engine.apply_sets(_cox_zeros, "check-survival-target").items():
        bad = sorted(f for group in groups for f in group if f[1])
        if bad:
            part, count, row = bad[0]
            what = "y" if key == "train" else f"y of eval_set[{key[4:]}]"
            raise ValueError(f"{what} in partition {part} has {count} value(s) equal to 0, the "
                             f"first at row {row}; a Cox time must be > 0 (its sign says event "
                             f"or censored)")
