"""Evaluation metrics: exact small cases, partition independence, agreement
with scikit-learn, and ``eval_metric`` / ``train_metric`` on the estimators
(in process and on a LocalCluster)."""

import itertools

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss, mean_absolute_error, roc_auc_score

import distboost as db
from distboost.metrics import AUC, make_metrics
from distboost.trees.losses import BinomialDeviance, MultinomialDeviance, SquaredError


def _value(metric, y, raw, w, cuts=()):
    """The metric's value with the rows cut into partitions at ``cuts``."""
    bounds = [0, *cuts, len(y)]
    partials = [metric.partial(y[a:b], raw[:, a:b], w[a:b]) for a, b in itertools.pairwise(bounds)]
    return metric.value(metric.merge(partials))


def test_auc_by_hand_with_a_tie_and_weights():
    # scores 0.1 (neg, w=1), 0.4 (pos, w=2), 0.4 (neg, w=1), 0.8 (pos, w=1), 0.9 (neg, w=0)
    y = np.array([0.0, 1.0, 0.0, 1.0, 0.0])
    raw = np.array([[0.1, 0.4, 0.4, 0.8, 0.9]])
    w = np.array([1.0, 2.0, 1.0, 1.0, 0.0])
    # pairs: pos 0.4 (w 2) beats neg 0.1 (1) and ties neg 0.4 (1): 2 * (1 + 0.5) = 3;
    # pos 0.8 (w 1) beats both negatives: 1 * 2 = 2. W+ W- = 3 * 2 = 6.
    assert _value(AUC(), y, raw, w) == 5 / 6
    assert _value(AUC(), y, raw, w, cuts=(2,)) == 5 / 6
    assert np.isnan(_value(AUC(), np.ones(3), np.zeros((1, 3)), np.ones(3)))  # one class


def test_mean_metrics_by_hand():
    loss = SquaredError()
    rmse, mae = make_metrics(["rmse", "mae"], loss, None)
    y, raw, w = np.array([1.0, 2.0, 4.0]), np.array([[1.0, 1.0, 1.0]]), np.array([1.0, 1.0, 2.0])
    assert _value(rmse, y, raw, w) == np.sqrt((0 + 1 + 2 * 9) / 4)
    assert _value(mae, y, raw, w) == (0 + 1 + 2 * 3) / 4
    binomial = BinomialDeviance()
    (error,) = make_metrics("error", binomial, 2)
    # log-odds 1, -1, 0.5 -> classes 1, 0, 1 against 1, 1, 0: two wrong of weight 1 and 2
    assert _value(error, np.array([1.0, 1.0, 0.0]), np.array([[1.0, -1.0, 0.5]]), w) == 3 / 4


@pytest.mark.parametrize("cuts", [(), (1,), (250, 251, 600)])
def test_values_do_not_depend_on_the_partitioning_and_agree_with_sklearn(cuts):
    rng = np.random.default_rng(0)
    n = 1000
    y = (rng.random(n) < 0.4).astype(float)
    raw = np.round(rng.normal(size=(1, n)), 1)  # many tied scores
    w = rng.uniform(0.5, 2.0, n)
    loss = BinomialDeviance()
    logloss, error, auc = make_metrics(["logloss", "error", "auc"], loss, 2)
    p = loss.predict_proba(raw)[:, 1]
    whole = [_value(m, y, raw, w) for m in (logloss, error, auc)]
    assert [_value(m, y, raw, w, cuts) for m in (logloss, error, auc)] == whole  # to the bit
    assert whole[0] == pytest.approx(log_loss(y, p, sample_weight=w), rel=1e-12)
    assert whole[1] == pytest.approx(np.average((p > 0.5) != y, weights=w), rel=1e-12)
    assert whole[2] == pytest.approx(roc_auc_score(y, p, sample_weight=w), rel=1e-12)
    # the loss's own metric is the default, and "logloss" through the link agrees with it
    (own,) = make_metrics(None, loss, 2)
    assert own.name == "logloss" and _value(own, y, raw, w) == pytest.approx(whole[0], rel=1e-12)


def test_multiclass_logloss_through_the_softmax():
    rng = np.random.default_rng(1)
    y, raw, w = rng.integers(0, 3, 200).astype(float), rng.normal(size=(3, 200)), np.ones(200)
    (mlogloss,) = make_metrics("mlogloss", MultinomialDeviance(3), 3)
    assert mlogloss.name == "mlogloss"
    assert _value(mlogloss, y, raw, w) == pytest.approx(
        log_loss(y, MultinomialDeviance(3).predict_proba(raw), labels=[0, 1, 2]), rel=1e-12)


@pytest.mark.parametrize("names, n_classes, message", [
    ("rmse", 2, "'rmse' is not a metric of a classifier"),
    ("auc", None, "'auc' is not a metric of a regressor"),
    ("auc", 3, "'auc' ranks two classes, but the target has 3"),
    (["logloss", "accuracy"], 2, "'accuracy' is not a metric"),
])
def test_unknown_metrics_are_refused_with_the_choices(names, n_classes, message):
    loss = SquaredError() if n_classes is None else BinomialDeviance()
    with pytest.raises(db.InvalidParameterError, match=message):
        make_metrics(names, loss, n_classes)


def test_estimators_check_metric_names_before_reading_data():
    with pytest.raises(db.InvalidParameterError, match="'auc' is not a metric of a regressor"):
        db.GradientBoostingRegressor(eval_metric="auc").fit(np.zeros((4, 1)), np.zeros(4))
    with pytest.raises(db.InvalidParameterError, match="eval_metric"):
        db.GradientBoostingRegressor(eval_metric=[]).fit(np.zeros((4, 1)), np.zeros(4))
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 2)), rng.integers(0, 3, 60)
    with pytest.raises(db.InvalidParameterError, match="'auc' ranks two classes"):
        db.GradientBoostingClassifier(eval_metric="auc", n_estimators=1).fit(X, y)


def _binary(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = ((X[:, 0] + X[:, 1] ** 2 + rng.normal(0, 1, n)) > 1).astype(int)
    return X, y


def test_eval_metrics_are_those_of_the_model_after_each_round():
    X, y = _binary()
    Xt, yt, Xv, yv = X[:2000], y[:2000], X[2000:], y[2000:]
    clf = db.GradientBoostingClassifier(n_estimators=6, max_depth=3,
                                        eval_metric=["logloss", "error", "auc"])
    clf.fit(Xt, yt, eval_set=[(Xv, yv)])
    assert list(clf.evals_result_) == ["validation_0"]  # no training metric unless asked
    history = clf.evals_result_["validation_0"]
    assert list(history) == ["logloss", "error", "auc"]
    for r, p in enumerate(clf.staged_predict_proba(Xv)):
        assert history["logloss"][r] == pytest.approx(log_loss(yv, p[:, 1]), rel=1e-12)
        assert history["error"][r] == pytest.approx(np.mean(clf.classes_[p.argmax(1)] != yv))
        assert history["auc"][r] == pytest.approx(roc_auc_score(yv, p[:, 1]), rel=1e-12)


def test_train_metric_is_separate_from_verbose(capsys):
    X, y = _binary(800)
    reg = db.GradientBoostingRegressor(n_estimators=3, max_depth=2, eval_metric="mae",
                                       train_metric=True).fit(X, y.astype(float))
    assert capsys.readouterr().out == ""  # recorded, not printed
    (mae,) = reg.evals_result_["training"]["mae"][-1:]
    assert mae == pytest.approx(mean_absolute_error(y, reg.predict(X)), rel=1e-12)
    quiet = db.GradientBoostingRegressor(n_estimators=3, max_depth=2, verbose=True,
                                         train_metric=False).fit(X, y.astype(float))
    assert "training" not in quiet.evals_result_
    assert capsys.readouterr().out.count("\n") == 3  # a line per round, with nothing to show
    with pytest.raises(db.InvalidParameterError, match="train_metric"):
        db.GradientBoostingRegressor(train_metric="yes").fit(X, y)


def test_early_stopping_on_auc_keeps_the_highest():
    X, y = _binary(4000, seed=2)
    clf = db.GradientBoostingClassifier(n_estimators=300, learning_rate=0.5, max_depth=4,
                                        eval_metric=["logloss", "auc"])
    clf.fit(X[:2000], y[:2000], eval_set=[(X[2000:], y[2000:])], early_stopping_rounds=5)
    auc = clf.evals_result_["validation_0"]["auc"]
    assert clf.best_iteration_ == int(np.argmax(auc)) < 299
    assert len(auc) == clf.best_iteration_ + 6


def test_dask_metrics_equal_in_process_metrics(dask_client):
    X, y = _binary(3000, seed=4)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)]).assign(y=y)
    params = {"n_estimators": 4, "max_depth": 3, "eval_metric": ["error", "auc", "logloss"],
              "train_metric": True}
    local = db.GradientBoostingClassifier(**params).fit(
        frame.iloc[:2000, :6], frame.y[:2000], eval_set=[(frame.iloc[2000:, :6], frame.y[2000:])])
    train, valid = (dd.from_pandas(f, npartitions=3) for f in (frame.iloc[:2000], frame.iloc[2000:]))
    remote = db.GradientBoostingClassifier(**params, client=dask_client).fit(
        train.iloc[:, :6], train.y, eval_set=[(valid.iloc[:, :6], valid.y)])
    assert remote.evals_result_ == local.evals_result_  # to the bit


# ------------------------------------------ log-link deviances, user's metrics
@pytest.mark.parametrize("cuts", [(), (3, 500)])
def test_deviances_agree_with_sklearn_and_not_with_the_partitioning(cuts):
    from sklearn.metrics import mean_gamma_deviance, mean_poisson_deviance, mean_tweedie_deviance

    from distboost.trees.losses import TweedieLoss

    rng = np.random.default_rng(5)
    n = 1000
    raw = rng.normal(scale=0.4, size=(1, n))
    y, w, mu = rng.poisson(np.exp(raw[0])).astype(float), rng.uniform(0.5, 2, n), np.exp(raw[0])
    tweedie = TweedieLoss(1.4)
    names = ["poisson_deviance", "tweedie_deviance", "rmse", "mae"]
    metrics = make_metrics(names, tweedie, None)
    values = [_value(m, y, raw, w, cuts) for m in metrics]
    assert values == [_value(m, y, raw, w) for m in metrics]  # to the bit
    expected = [mean_poisson_deviance(y, mu, sample_weight=w),
                mean_tweedie_deviance(y, mu, sample_weight=w, power=1.4),
                np.sqrt(np.average((y - mu) ** 2, weights=w)),  # of the mean, not of log mu
                mean_absolute_error(y, mu, sample_weight=w)]
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    y_pos = y + 0.5
    (gamma,) = make_metrics("gamma_deviance", tweedie, None)
    assert _value(gamma, y_pos, raw, w) == pytest.approx(
        mean_gamma_deviance(y_pos, mu, sample_weight=w), rel=1e-12)
    with pytest.raises(db.InvalidParameterError, match="'poisson_deviance' is not a metric"):
        make_metrics("poisson_deviance", SquaredError(), None)


def test_a_user_metric_is_a_weighted_mean_exact_across_partitions():
    from distboost.metrics import make_metric

    def cubed(y, f):
        return np.abs(y - f) ** 3

    y, raw, w = np.array([1.0, 2.0, 4.0]), np.array([[1.0, 1.0, 1.0]]), np.array([1.0, 1.0, 2.0])
    (metric,) = make_metrics(cubed, SquaredError(), None)  # a function: make_metric(fn)
    assert metric.name == "cubed" and not metric.higher_is_better
    assert _value(metric, y, raw, w) == (0 + 1 + 2 * 27) / 4 == _value(metric, y, raw, w, (1, 2))
    named = make_metric(cubed, name="c3", greater_is_better=True)
    assert make_metrics(["rmse", named], SquaredError(), None)[1] is named
    assert named.higher_is_better
    with pytest.raises(db.InvalidParameterError, match="give the metric a name"):
        make_metric(lambda y, f: y)
    with pytest.raises(db.InvalidParameterError, match=r"names \['cubed'\] more than once"):
        make_metrics([cubed, cubed], SquaredError(), None)
    bad = make_metric(lambda y, f: np.where(y > 3, np.nan, y), name="bad")
    with pytest.raises(ValueError, match=r"eval_metric 'bad' must return one finite value per "
                                         r"row \(3 rows\); 1 value\(s\) are not finite"):
        _value(bad, y, raw, w)


def _accuracy_of_sign(y, f):
    """1 where f has y's sign: higher is better."""
    return (np.sign(f) == np.sign(y)).astype(float)


def test_early_stopping_watches_a_user_metric_in_its_direction(dask_client):
    from distboost.metrics import make_metric

    rng = np.random.default_rng(6)
    X = rng.normal(size=(1200, 4))
    y = X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + rng.normal(size=1200)
    hits = make_metric(_accuracy_of_sign, name="sign_hits", greater_is_better=True)
    params = {"n_estimators": 200, "learning_rate": 0.5, "max_depth": 3,
              "eval_metric": ["rmse", hits]}
    reg = db.GradientBoostingRegressor(**params).fit(X[:600], y[:600],
                                                     eval_set=[(X[600:], y[600:])],
                                                     early_stopping_rounds=8)
    history = reg.evals_result_["validation_0"]["sign_hits"]
    assert reg.best_iteration_ == int(np.argmax(history)) and len(history) < 200
    for r, pred in enumerate(reg.staged_predict(X[600:])):
        if r < len(history):
            assert history[r] == pytest.approx(np.mean(np.sign(pred) == np.sign(y[600:])))
    frame = pd.DataFrame(X, columns=list("abcd")).assign(y=y)
    train, valid = (dd.from_pandas(f, npartitions=2) for f in (frame[:600], frame[600:]))
    remote = db.GradientBoostingRegressor(client=dask_client, **params).fit(
        train[list("abcd")], train.y, eval_set=[(valid[list("abcd")], valid.y)],
        early_stopping_rounds=8)
    assert remote.evals_result_ == reg.evals_result_
    assert remote.best_iteration_ == reg.best_iteration_
