"""Voting ensembles of fitted models (hard and soft voting, as in Kuncheva 2004,
ch. 4, and scikit-learn's VotingClassifier).

* hard voting: each model predicts a class; the class with the largest
  (weighted) number of votes wins;
* soft voting: the (weighted) mean of the models' class probabilities, and
  the most probable class;
* regression: the (weighted) mean of the models' predictions.

Members are distboost estimators (trained on Dask collections or in memory)
or scikit-learn estimators (in-memory data). On a Dask collection prediction
stays lazy: one task per partition runs every member on that partition.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..engine.input_plan import is_dask
from ..inputs import checks
from ..inputs.params import ParamsMixin
from ._predict import map_collection, predict_any


def _clone(est):
    """An unfitted copy with the same parameters (scikit-learn's ``clone`` contract)."""
    try:
        from sklearn.base import clone

        return clone(est)
    except ImportError:
        return type(est)(**est.get_params(deep=False))


def _is_distboost(est) -> bool:
    return type(est).__module__.startswith("distboost.")


def _is_weights(v) -> bool:
    try:
        w = np.asarray(v, np.float64)
    except (TypeError, ValueError):
        return False
    return w.ndim == 1 and bool(np.all(np.isfinite(w))) and bool(np.all(w >= 0))


def _is_fitted(est) -> bool:
    return any(k.endswith("_") and not k.startswith("__") for k in vars(est))


class _Voting(ParamsMixin):
    _model_layout = "voting"  # what its model file holds (inputs.model_layouts)
    _parameter_constraints: ClassVar[dict] = {
        "estimators": [checks._Kind(lambda v: isinstance(v, (list, tuple)),
                                         "a list of (name, estimator) pairs")],
        "weights": [checks._Kind(lambda v: v is None or _is_weights(v),
                                      "None or a list of finite numbers >= 0")],
        "prefit": [checks.BOOL],
    }

    def __init__(self, estimators, *, weights=None, prefit=False):
        self.estimators = estimators
        self.weights = weights
        self.prefit = prefit

    # ------------------------------------------------------------------ fit
    def fit(self, X=None, y=None, sample_weight=None):
        """Fit every member on (X, y), or with ``prefit=True`` take them as fitted.

        scikit-learn members need in-memory data; distboost members accept Dask
        collections.
        """
        self._validate_params()
        names = [name for name, _ in self.estimators]
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"estimators must be a non-empty list of (unique name, estimator), "
                             f"got names {names}")
        if self.weights is not None and len(self.weights) != len(names):
            raise ValueError(f"{len(self.weights)} weights for {len(names)} estimators")
        if self.prefit:
            members = [est for _, est in self.estimators]
            unfitted = [n for n, e in self.estimators if not _is_fitted(e)]
            if unfitted:
                raise ValueError(f"prefit=True but estimator(s) {unfitted} are not fitted")
        else:
            if X is None:
                raise ValueError("fit needs X and y (or prefit=True with fitted estimators)")
            if y is None:
                raise ValueError(f"{type(self).__name__} requires y to be passed, but the target "
                                 f"y is None; pass fit(X, y), or prefit=True with fitted members")
            self._check_members_take(X)
            members = [self._fit_member(est, X, y, sample_weight) for _, est in self.estimators]
        self._set_fitted(members)
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(members[0], attr):
                setattr(self, attr, getattr(members[0], attr))
        self.estimators_ = members
        self.named_estimators_ = dict(zip(names, members))
        return self

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "estimators_")

    def _check_members_take(self, X):
        """Before training anything: every member must accept this kind of data."""
        if not is_dask(X):
            return
        for name, est in self.estimators:
            if not _is_distboost(est):
                raise TypeError(
                    f"estimator {name!r} ({type(est).__name__}) is not a distboost estimator and "
                    f"cannot train on a Dask collection; compute X and y first, or fit it "
                    f"yourself and pass prefit=True"
                )

    @staticmethod
    def _fit_member(est, X, y, sample_weight):
        est = _clone(est)
        if sample_weight is None:
            return est.fit(X, y)
        return est.fit(X, y, sample_weight=sample_weight)

    def _set_fitted(self, members):
        pass

    def _weights(self) -> np.ndarray:
        n = len(self.estimators_)
        return np.ones(n) if self.weights is None else np.asarray(self.weights, np.float64)

    # ------------------------------------------------------------- models
    def save_model(self, path, format: str = "distboost") -> None:
        """Write every member (all distboost estimators) into one JSON model file.

        ``format="xgboost"`` is refused: XGBoost has no voting of models.
        """
        from ..model_file import check_format, model_to_dict, write_json

        check_format(format)
        if format == "xgboost":
            from ..xgboost_format import xgboost_objective

            xgboost_objective(self)  # raises, saying why
        self._check_fitted()
        foreign = [n for n, e in self.named_estimators_.items() if not _is_distboost(e)]
        if foreign:
            raise TypeError(f"member(s) {foreign} are not distboost estimators and cannot be "
                            f"saved in the JSON model format; pickle the ensemble instead")
        members = [[name, model_to_dict(est)] for name, est in self.named_estimators_.items()]
        d = dict(members[0][1])  # schema, bins and classes, which the loader expects
        d.update(estimator=type(self).__name__, trees=[], base_score=[], best_iteration=None,
                 evals_result={}, state={"members": members},
                 params={"estimators": [], "weights": self.weights, "prefit": True,
                         **self._extra_params()})
        write_json(path, d)

    def _extra_params(self) -> dict:
        return {}

    def _load_model_state(self, d: dict) -> None:
        from ..model_file import model_from_dict

        self.estimators = [(name, model_from_dict(md)) for name, md in d["members"]]
        self.fit()


class VotingClassifier(_Voting):
    """Hard or soft voting over classifiers.

    Parameters
    ----------
    estimators : list of (str, estimator)
        Named members: distboost or scikit-learn classifiers.
    voting : {"hard", "soft"}, default "hard"
        "hard": weighted majority of the predicted labels; "soft": argmax of
        the weighted mean of ``predict_proba``.
    weights : list of float or None, default None
        One weight per estimator (None: equal).
    prefit : bool, default False
        The estimators are already fitted: ``fit()`` only checks them.
    """

    _estimator_type = "classifier"
    _parameter_constraints: ClassVar[dict] = {**_Voting._parameter_constraints,
                              "voting": [checks.Options(("hard", "soft"))]}

    def __init__(self, estimators, *, voting="hard", weights=None, prefit=False):
        super().__init__(estimators, weights=weights, prefit=prefit)
        self.voting = voting

    def _extra_params(self) -> dict:
        return {"voting": self.voting}

    def _set_fitted(self, members):
        if self.voting not in ("hard", "soft"):
            raise ValueError(f"voting must be 'hard' or 'soft', got {self.voting!r}")
        classes = [np.asarray(m.classes_) for m in members]
        for (name, _), c in zip(self.estimators, classes):
            if not np.array_equal(c, classes[0]):
                raise ValueError(f"estimator {name!r} has classes {c.tolist()}, the first has "
                                 f"{classes[0].tolist()}; all must be trained on the same labels")
        self.classes_ = classes[0]

    def _votes(self, part) -> np.ndarray:
        """Weighted votes (hard) or weighted mean probabilities (soft), shape (n, K)."""
        w = self._weights()
        if self.voting == "soft":
            probas = [np.asarray(m.predict_proba(part)) for m in self.estimators_]
            return np.tensordot(w, np.stack(probas), axes=1) / w.sum()
        votes = None
        for weight, m in zip(w, self.estimators_):
            labels = np.asarray(m.predict(part))
            index = np.searchsorted(self.classes_, labels)
            onehot = np.zeros((len(labels), len(self.classes_)))
            onehot[np.arange(len(labels)), index] = weight
            votes = onehot if votes is None else votes + onehot
        return votes

    def predict(self, X):
        """The winning class of each row; lazy on Dask input."""
        self._check_fitted()

        def fn(part):
            return self.classes_[np.argmax(self._votes(part), axis=1)]

        return map_collection(fn, X, None) if is_dask(X) else fn(X)

    @property
    def predict_proba(self):
        """Weighted mean of the members' probabilities; only with ``voting="soft"``
        (hard voting has no probabilities, so the method is absent)."""
        if self.voting != "soft":
            raise AttributeError("predict_proba is only available with voting='soft'")
        return self._predict_proba

    def _predict_proba(self, X):
        self._check_fitted()
        return predict_any(self._votes, X, len(self.classes_))

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy (weighted by ``sample_weight``)."""
        return checks.weighted_score(self.predict(X), y, sample_weight, True)


class VotingRegressor(_Voting):
    """The weighted mean of regressors' predictions.

    Parameters
    ----------
    estimators : list of (str, estimator)
        Named members: distboost or scikit-learn regressors.
    weights : list of float or None, default None
        One weight per estimator (None: equal).
    prefit : bool, default False
        The estimators are already fitted: ``fit()`` only checks them.
    """

    _estimator_type = "regressor"

    def _mean(self, part) -> np.ndarray:
        w = self._weights()
        preds = np.stack([np.asarray(m.predict(part), np.float64) for m in self.estimators_])
        return np.tensordot(w, preds, axes=1) / w.sum()

    def predict(self, X):
        """sum_j w_j f_j(x) / sum_j w_j; lazy on Dask input."""
        self._check_fitted()
        return predict_any(self._mean, X, None)

    def score(self, X, y, sample_weight=None) -> float:
        """R^2 of the predictions."""
        return checks.weighted_score(self.predict(X), y, sample_weight, False)
