"""Early stopping as constructor parameters: XGBoost's ``early_stopping_rounds``
and scikit-learn's ``early_stopping`` / ``validation_fraction`` /
``n_iter_no_change`` / ``tol`` (``distboost.metrics.should_stop``,
``distboost.estimators._holdout``)."""

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.estimators import _holdout
from distboost.metrics import EarlyStopping, NoChangeStopping, should_stop


# ------------------------------------------------------------ the rules, by hand
@pytest.mark.parametrize(("scores", "n", "tol", "stop"), [
    ([], 1, 0.0, False),
    ([-1.0], 1, 0.0, False),                    # fewer than n + 1 scores
    ([-1.0, -1.0], 1, 0.0, True),               # no improvement over the reference
    ([-1.0, -0.9], 1, 0.0, False),              # improved
    ([-1.0, -0.9], 1, 0.1, True),               # improved by exactly tol: not more than tol
    ([-1.0, -0.89], 1, 0.1, False),
    ([-5.0, -4.0, -4.0, -4.0], 2, 0.0, True),   # reference -4.0 at position -3
    ([-5.0, -4.0, -4.0, -3.0], 2, 0.0, False),
    ([-5.0, -4.0, -3.0, -4.0, -4.0], 2, 0.0, True),   # later worse scores do not improve
    ([-5.0, -4.0, -3.0, -4.0, -2.9], 2, 0.0, False),  # ... one better than -3.0 does
])
def test_should_stop_is_scikit_learns_rule(scores, n, tol, stop):
    assert should_stop(scores, n, tol) is stop


def test_should_stop_matches_scikit_learn():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.ensemble import HistGradientBoostingClassifier

    est = HistGradientBoostingClassifier(n_iter_no_change=3, tol=0.05)
    rng = np.random.default_rng(1)
    for _ in range(200):
        scores = list(np.round(rng.normal(size=rng.integers(0, 9)), 1))
        assert should_stop(scores, 3, 0.05) == est._should_stop(scores), (scores, sklearn)


def test_no_change_rule_negates_a_loss_and_watches_the_last_validation_set():
    rule = NoChangeStopping("logloss", False, n_iter_no_change=2, tol=0.0)
    losses = [0.5, 0.4, 0.45, 0.41]  # best 0.4 at round 1, then two rounds no better
    stops = [rule.update(r, {"training": {"logloss": 0.0}, "validation_0": {"logloss": 9.0},
                             "validation_1": {"logloss": v}}) for r, v in enumerate(losses)]
    assert stops == [False, False, False, True]
    assert rule.scores == [-0.5, -0.4, -0.45, -0.41]


def test_no_change_rule_on_training_rows_and_higher_is_better():
    rule = NoChangeStopping("auc", True, n_iter_no_change=1, tol=0.01, watched="training")
    history = {"training": {"auc": [0.70, 0.75, 0.755]}}
    assert rule.replay(history, 2).exhausted() is False
    assert rule.update(2, {"training": {"auc": 0.755}, "validation_0": {"auc": 0.0}}) is True


def test_patience_rule_by_hand():
    rule = EarlyStopping("rmse", False, patience=2)
    stops = [rule.update(r, {"validation_0": {"rmse": v}})
             for r, v in enumerate([3.0, 2.0, 2.0, 2.5])]
    assert stops == [False, False, False, True]
    assert rule.best_round == 1  # the first of equal values


# ------------------------------------------------------------ the estimators
@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(1200, 4)), columns=list("abcd"))
    X["d"] = pd.Categorical(rng.integers(0, 4, 1200))
    y = ((X["a"] + rng.normal(size=1200)) > 0).astype(int)
    return X, y


def test_early_stopping_holds_out_and_stops_by_the_rule(data):
    X, y = data
    est = db.GradientBoostingClassifier(n_estimators=200, learning_rate=0.5, max_depth=3,
                                        early_stopping=True, n_iter_no_change=3,
                                        random_state=2).fit(X, y)
    values = est.evals_result_["validation_0"]["logloss"]
    scores = est.validation_score_
    assert len(values) < 200 and len(scores) == len(values) + 1  # f_0's score first
    assert list(scores[1:]) == [-v for v in values]
    stops = [should_stop(list(scores[:k + 1]), 3, 1e-7) for k in range(len(scores))]
    assert stops.index(True) == len(scores) - 1  # stopped at the first chance
    assert est.n_estimators_ == len(values)  # scikit-learn keeps every round it ran
    assert est.best_iteration_ is None and len(est.train_score_) == 0
    held = _holdout.held_out(X, 2, 0.1)
    assert 60 < held.sum() < 180  # about a tenth of 1200 rows
    p = 1.0 / (1.0 + np.exp(-est.base_score_[0]))  # f_0: the training rows' log-odds
    yv = y[held].to_numpy()
    f0_loss = -np.mean(yv * np.log(p) + (1 - yv) * np.log(1 - p))
    assert -scores[0] == pytest.approx(f0_loss, rel=1e-12)


def test_early_stopping_on_the_training_rows(data):
    X, y = data
    est = db.GradientBoostingRegressor(n_estimators=50, learning_rate=0.5, max_depth=2,
                                       early_stopping=True, validation_fraction=None,
                                       n_iter_no_change=2, tol=0.05).fit(X, y)
    values = est.evals_result_["training"]["rmse"]
    assert list(est.train_score_[1:]) == [-v for v in values]
    assert -est.train_score_[0] == pytest.approx(np.std(y), rel=1e-12)  # f_0: the mean
    assert len(values) < 50 and len(est.validation_score_) == 0


def test_validation_rows_score_as_an_eval_set_would(data):
    X, y = data
    params = {"n_estimators": 8, "max_depth": 2, "random_state": 5}
    auto = db.GradientBoostingClassifier(**params, early_stopping=True, n_iter_no_change=50)
    auto.fit(X, y)
    held = _holdout.held_out(X, 5, 0.1)
    by_hand = db.GradientBoostingClassifier(**params).fit(
        X[~held], y[~held], eval_set=[(X[held], y[held])])
    assert auto.evals_result_ == by_hand.evals_result_
    assert np.array_equal(auto.predict_proba(X), by_hand.predict_proba(X))


def test_early_stopping_rounds_in_the_constructor_equals_the_fit_argument(data):
    X, y = data
    params = {"n_estimators": 60, "learning_rate": 0.8, "max_depth": 4, "random_state": 0}
    Xt, yt, Xv, yv = X[:900], y[:900], X[900:], y[900:]
    a = db.GradientBoostingClassifier(**params, early_stopping_rounds=3)
    a.fit(Xt, yt, eval_set=[(Xv, yv)])
    b = db.GradientBoostingClassifier(**params).fit(Xt, yt, eval_set=[(Xv, yv)],
                                                    early_stopping_rounds=3)
    values = a.evals_result_["validation_0"]["logloss"]
    assert a.best_iteration_ == int(np.argmin(values)) and len(values) == a.best_iteration_ + 4
    assert a.n_estimators_ == a.best_iteration_ + 1
    assert a.evals_result_ == b.evals_result_
    with pytest.raises(ValueError, match="early_stopping=True"):
        db.GradientBoostingClassifier(**params, early_stopping_rounds=3).fit(Xt, yt)


def test_defaults_leave_fits_as_they_were(data):
    X, y = data
    est = db.GradientBoostingRegressor(n_estimators=5)
    assert est.get_params()["early_stopping"] is False
    assert est.get_params()["early_stopping_rounds"] is None
    est.fit(X, y)
    assert est.evals_result_ == {}  # nothing held out, nothing measured
    assert len(est.train_score_) == len(est.validation_score_) == 0


def test_auto_follows_scikit_learns_row_count():
    est = db.GradientBoostingRegressor(early_stopping="auto")
    assert not _holdout.early_stopping_on(est, np.zeros((10_000, 2)))
    assert _holdout.early_stopping_on(est, np.zeros((10_001, 2)))


def test_bad_values_are_refused(data):
    X, y = data
    for bad in ({"validation_fraction": 1.0}, {"n_iter_no_change": 0}, {"tol": -1.0},
                {"early_stopping": "yes"}, {"early_stopping_rounds": 0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            db.GradientBoostingRegressor(**bad).fit(X, y)


def test_clone_and_grid_search_tune_the_stopping_parameters(data):
    pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV

    X, y = data
    est = db.GradientBoostingClassifier(n_estimators=30, max_depth=2, early_stopping=True,
                                        early_stopping_rounds=4, validation_fraction=0.2,
                                        n_iter_no_change=5, tol=1e-3)
    assert clone(est).get_params() == est.get_params()
    grid = GridSearchCV(est, {"n_iter_no_change": [2, 5], "early_stopping_rounds": [None, 3]},
                        cv=2).fit(X, y)
    assert len(grid.cv_results_["params"]) == 4
    assert grid.best_estimator_.n_estimators_ <= 30


# ------------------------------------------------------------ partition-independent
def test_held_out_rows_do_not_depend_on_the_partitioning(data):
    dd = pytest.importorskip("dask.dataframe")
    X, _ = data
    whole = _holdout.held_out(X, 7, 0.25)
    for n in (1, 3, 7):
        parts = dd.from_pandas(X, npartitions=n).map_partitions(
            _holdout.held_out, 7, 0.25, meta=(None, bool)).compute(scheduler="sync")
        assert np.array_equal(np.asarray(parts), whole)
    assert not np.array_equal(_holdout.held_out(X, 8, 0.25), whole)  # the seed matters


def test_dask_equals_in_process(data, dask_client):
    dd = pytest.importorskip("dask.dataframe")
    X, y = data
    frame = X.assign(y=y)
    params = {"n_estimators": 40, "learning_rate": 0.6, "max_depth": 3, "early_stopping": True,
              "n_iter_no_change": 2, "validation_fraction": 0.2, "random_state": 3}
    local = db.GradientBoostingClassifier(**params).fit(X, y)
    ddf = dd.from_pandas(frame, npartitions=3)
    remote = db.GradientBoostingClassifier(**params, client=dask_client)
    remote.fit(ddf[list("abcd")], ddf["y"])
    assert remote.evals_result_ == local.evals_result_
    assert remote.n_estimators_ == local.n_estimators_ < 40
    assert np.array_equal(remote.predict_proba(X), local.predict_proba(X))


def test_dask_arrays_hold_out_the_same_rows(data, dask_client):
    da = pytest.importorskip("dask.array")
    X, y = data
    Xn, yn = X[list("abc")].to_numpy(), y.to_numpy()
    params = {"n_estimators": 6, "max_depth": 2, "early_stopping": True, "random_state": 4}
    local = db.GradientBoostingClassifier(**params).fit(Xn, yn)
    remote = db.GradientBoostingClassifier(**params, client=dask_client)
    remote.fit(da.from_array(Xn, chunks=(500, 3)), da.from_array(yn, chunks=500))
    assert len(local.evals_result_["validation_0"]["logloss"]) == 6
    assert remote.evals_result_ == local.evals_result_
