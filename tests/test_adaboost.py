"""AdaBoost.M1 / SAMME / SAMME.R: hand-checked rounds (ESL Algorithm 10.1),
the log(K - 1) term on nested spheres (Zhu et al. 2009), distributed runs."""

import math

import numpy as np
import pandas as pd
import pytest

from distboost import AdaBoostClassifier, load_model
from distboost.training import adaboost as adaboost_rounds

dd = pytest.importorskip("dask.dataframe")


def two_class_data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    # values on a grid of 0.1: fewer distinct values than bins, so bins are exact
    X = np.round(rng.standard_normal((n, 4)), 1)
    y = (X[:, 0] + 0.7 * X[:, 1] ** 2 - 0.5 * X[:, 2] + 0.5 * rng.standard_normal(n) > 0.4)
    return X, y.astype(int)


def nested_spheres(n, seed):
    """10 standard Gaussian features; classes cut at the chi2_10 1/3 and 2/3 quantiles."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 10))
    cuts = [8.1803, 11.0306]  # scipy.stats.chi2.ppf([1/3, 2/3], 10)
    return X, np.searchsorted(cuts, (X**2).sum(axis=1))


def test_weighted_stump_on_six_points():
    # x = 0..5, classes 0 0 1 0 1 1, weights 3 1 1 1 1 1 (tests/test_criteria.py):
    # the Gini stump splits x <= 1.5; only the class-0 point at x = 3 is wrong
    x = np.arange(6.0)[:, None]
    y = np.array([0, 0, 1, 0, 1, 1])
    w = np.array([3.0, 1, 1, 1, 1, 1])
    model = AdaBoostClassifier(n_estimators=1).fit(x, y, sample_weight=w)
    stump = model.estimators_[0]
    assert stump.nodes["threshold"][0] == 1.5
    assert model.estimator_errors_[0] == pytest.approx(1 / 8)
    assert model.estimator_weights_[0] == pytest.approx(math.log(7))
    np.testing.assert_array_equal(model.predict(x), [0, 0, 1, 1, 1, 1])


def test_first_two_rounds_follow_algorithm_10_1():
    X, y = two_class_data()
    model = AdaBoostClassifier(n_estimators=2).fit(X, y)
    g1, g2 = (t.predict(X) for t in model.estimators_)  # leaf value = the class G_m(x)
    w = np.full(len(y), 1 / len(y))  # 1. w_i = 1/N
    err1 = np.sum(w * (y != g1)) / np.sum(w)  # 2(b)
    alpha1 = math.log((1 - err1) / err1)  # 2(c)
    w2 = w * np.exp(alpha1 * (y != g1))  # 2(d)
    err2 = np.sum(w2 * (y != g2)) / np.sum(w2)
    np.testing.assert_allclose(model.estimator_errors_, [err1, err2], rtol=1e-12)
    np.testing.assert_allclose(model.estimator_weights_,
                               [alpha1, math.log((1 - err2) / err2)], rtol=1e-12)
    # the second stump is the best stump for the updated weights w2
    refit = AdaBoostClassifier(n_estimators=1).fit(X, y, sample_weight=w2)
    assert refit.estimators_[0].nodes["feature"][0] == model.estimators_[1].nodes["feature"][0]
    assert refit.estimators_[0].nodes["threshold"][0] == model.estimators_[1].nodes["threshold"][0]
    # 3. G(x) = sign(sum alpha_m G_m(x)), G_m in {-1, +1}
    vote = alpha1 * (2 * g1 - 1) + model.estimator_weights_[1] * (2 * g2 - 1)
    np.testing.assert_array_equal(model.predict(X), (vote > 0).astype(int))


def test_matches_scikit_learn_samme():
    sklearn = pytest.importorskip("sklearn.ensemble")
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(3)
    X = np.round(rng.standard_normal((300, 5)), 1)
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.standard_normal(300), [-0.5, 0.5])
    ours = AdaBoostClassifier(n_estimators=20, max_depth=2).fit(X, y)
    ref = sklearn.AdaBoostClassifier(DecisionTreeClassifier(max_depth=2), n_estimators=20).fit(X, y)
    np.testing.assert_allclose(ours.estimator_errors_, ref.estimator_errors_, rtol=1e-9)
    np.testing.assert_allclose(ours.estimator_weights_, ref.estimator_weights_, rtol=1e-9)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-9)


def test_samme_keeps_improving_where_m1_stalls(monkeypatch):
    X, y = nested_spheres(1000, 0)
    Xt, yt = nested_spheres(2000, 1)
    params = {"n_estimators": 150, "max_leaf_nodes": 4}
    samme = 1 - np.array(list(AdaBoostClassifier(**params).fit(X, y).staged_score(Xt, yt)))
    with monkeypatch.context() as m:  # AdaBoost.M1's alpha for K = 3
        m.setattr(adaboost_rounds, "estimator_weight",
                  lambda spec, err, previous: math.log((1 - err) / err))
        m1 = 1 - np.array(list(AdaBoostClassifier(**params).fit(X, y).staged_score(Xt, yt)))
    assert samme[-1] < samme[0] - 0.15 and samme[-1] < samme[9] - 0.03
    assert samme[-1] < 0.4
    assert m1[-1] > 0.5 and abs(m1[-1] - m1[9]) < 0.02  # stuck near its first tree's error


def test_perfect_weak_learner_stops_with_a_deciding_weight():
    X = np.linspace(-1, 1, 50)[:, None]
    y = (X[:, 0] > 0).astype(int)
    model = AdaBoostClassifier(n_estimators=10).fit(X, y)
    assert len(model.estimators_) == 1
    assert model.estimator_errors_.tolist() == [0.0]
    assert model.estimator_weights_[0] > 0
    np.testing.assert_array_equal(model.predict(X), y)


def test_no_better_than_guessing_is_refused():
    X = np.zeros((6, 2))  # nothing to split on: err = 1/2 = 1 - 1/K
    with pytest.raises(ValueError, match="no better than"):
        AdaBoostClassifier().fit(X, np.array([0, 1, 0, 1, 0, 1]))


def test_a_later_round_no_better_than_guessing_stops_and_is_discarded(monkeypatch):
    X, y = nested_spheres(300, 5)
    rounds_seen, round_error = [], adaboost_rounds.round_error

    def guessing_from_round_3(engine, spec, tree):
        err, w, wu = round_error(engine, spec, tree)
        rounds_seen.append(err)
        return (0.7 if len(rounds_seen) == 3 else err), w, wu

    monkeypatch.setattr(adaboost_rounds, "round_error", guessing_from_round_3)
    model = AdaBoostClassifier(n_estimators=10).fit(X, y)
    assert len(model.estimators_) == len(model.estimator_errors_) == 2
    assert len(rounds_seen) == 3


def test_samme_r_and_larger_trees():
    X, y = nested_spheres(600, 2)
    model = AdaBoostClassifier(n_estimators=30, algorithm="SAMME.R", max_depth=3).fit(X, y)
    assert (model.estimator_weights_ == 1).all()
    assert model.score(X, y) > 0.8
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], model.predict(X))
    best_first = AdaBoostClassifier(n_estimators=5, max_leaf_nodes=5).fit(X, y)
    assert max(t.n_leaves for t in best_first.estimators_) == 5
    assert max(t.max_depth for t in best_first.estimators_) >= 2


def test_staged_decision_and_importances():
    X, y = two_class_data(seed=4)
    model = AdaBoostClassifier(n_estimators=15, criterion="entropy").fit(X, y)
    staged = list(model.staged_decision_function(X))
    assert len(staged) == len(model.estimators_)
    np.testing.assert_allclose(staged[-1], model.decision_function(X))
    np.testing.assert_array_equal(list(model.staged_predict(X))[-1], model.predict(X))
    imp = model.feature_importances_
    assert imp.sum() == pytest.approx(1.0) and imp[3] < imp[0]


def test_string_labels_sample_weight_and_model_file(tmp_path):
    X, y = two_class_data(seed=5)
    labels = np.array(["no", "yes"])[y]
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    model = AdaBoostClassifier(n_estimators=8, algorithm="SAMME.R", max_depth=2)
    model.fit(X, labels, sample_weight=w)
    assert set(model.predict(X)) <= {"no", "yes"}
    model.save_model(tmp_path / "ada.json")
    loaded = load_model(tmp_path / "ada.json")
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(loaded.estimator_weights_, model.estimator_weights_)
    assert loaded.estimators_ == model.estimators_


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    client = Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


@pytest.mark.parametrize("algorithm", ["SAMME", "SAMME.R"])
def test_distributed_equals_in_process(client, algorithm):
    X, y = nested_spheres(600, 3)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(10)])
    params = {"n_estimators": 6, "max_depth": 2, "algorithm": algorithm}
    local = AdaBoostClassifier(**params).fit(df, y, sample_weight=w)
    for n_parts in (3, 5):
        ddf = dd.from_pandas(df, npartitions=n_parts)
        dy = dd.from_pandas(pd.Series(y), npartitions=n_parts)
        dw = dd.from_pandas(pd.Series(w), npartitions=n_parts)
        dist = AdaBoostClassifier(client=client, **params).fit(ddf, dy, sample_weight=dw)
        assert dist.estimators_ == local.estimators_
        np.testing.assert_array_equal(dist.estimator_errors_, local.estimator_errors_)
        lazy = dist.predict_proba(ddf)
        assert hasattr(lazy, "dask")
        np.testing.assert_array_equal(client.compute(lazy).result(), local.predict_proba(df))
