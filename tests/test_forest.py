"""Random forests: out-of-bag estimates, trees independent of batching and
partitioning, per-node feature sampling, regression, model files."""

import numpy as np
import pandas as pd
import pytest

from distboost import (
    BaggingClassifier,
    BaggingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    load_model,
)

dd = pytest.importorskip("dask.dataframe")


def classification_data(n, seed=0, d=8):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    logit = 2 * X[:, 0] - X[:, 1] + X[:, 2] * X[:, 3]
    y = (logit + rng.standard_normal(n) > 0).astype(int)
    return X, y


def regression_data(n, seed=0, d=6):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.3 * rng.standard_normal(n)


def test_oob_error_is_close_to_held_out_error():
    X, y = classification_data(1600)
    model = RandomForestClassifier(n_estimators=40, oob_score=True, random_state=0)
    model.fit(X[:800], y[:800])
    held_out = model.score(X[800:], y[800:])
    assert abs(model.oob_score_ - held_out) < 0.05
    assert held_out > 0.75
    oob = model.oob_decision_function_
    assert oob.shape == (800, 2)
    seen = ~np.isnan(oob[:, 0])
    assert seen.mean() > 0.99  # P(in every one of 40 samples) = (1 - e^-1)^40
    np.testing.assert_allclose(oob[seen].sum(axis=1), 1.0)
    acc = np.mean(oob[seen].argmax(axis=1) == y[:800][seen])
    assert acc == pytest.approx(model.oob_score_)


def test_accuracy_is_comparable_to_scikit_learn():
    ensemble = pytest.importorskip("sklearn.ensemble")
    X, y = classification_data(1600, seed=1)
    ours = RandomForestClassifier(n_estimators=30, random_state=0).fit(X[:800], y[:800])
    ref = ensemble.RandomForestClassifier(n_estimators=30, random_state=0).fit(X[:800], y[:800])
    assert ours.score(X[800:], y[800:]) > ref.score(X[800:], y[800:]) - 0.03


def test_trees_do_not_depend_on_trees_per_pass():
    X, y = classification_data(300, seed=2)
    one = RandomForestClassifier(n_estimators=6, max_depth=4, trees_per_pass=1, random_state=3)
    four = RandomForestClassifier(n_estimators=6, max_depth=4, trees_per_pass=4, random_state=3)
    assert one.fit(X, y).estimators_ == four.fit(X, y).estimators_
    other_seed = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=4).fit(X, y)
    assert other_seed.estimators_ != one.estimators_


def test_node_feature_sampling_and_tree_size_limits():
    X, y = classification_data(400, seed=3, d=9)
    model = RandomForestClassifier(n_estimators=10, max_features=1, max_depth=3, random_state=0)
    model.fit(X, y)
    roots = {int(t.nodes["feature"][0]) for t in model.estimators_}
    assert len(roots) > 2  # one random feature per node: roots vary
    assert max(t.max_depth for t in model.estimators_) <= 3
    leaves = RandomForestClassifier(n_estimators=4, max_leaf_nodes=6, random_state=0).fit(X, y)
    assert max(t.n_leaves for t in leaves.estimators_) == 6
    full = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    # fully grown: every leaf is pure on its bootstrap sample, or cannot be split
    for tree in full.estimators_:
        leaf_p = tree.leaf_values[tree.nodes["is_leaf"] == 1]
        assert np.mean(leaf_p.max(axis=1) == 1.0) > 0.9


def test_regression_forest_and_oob_r2():
    X, y = regression_data(1200)
    model = RandomForestRegressor(n_estimators=30, min_samples_leaf=3, oob_score=True,
                                  random_state=0).fit(X[:600], y[:600])
    held_out = model.score(X[600:], y[600:])
    assert held_out > 0.6
    assert abs(model.oob_score_ - held_out) < 0.08
    assert model.oob_prediction_.shape == (600,)
    mean_of_trees = np.mean([t.predict(X[600:]) for t in model.estimators_], axis=0)
    np.testing.assert_allclose(model.predict(X[600:]), mean_of_trees)
    imp = model.feature_importances_
    assert imp[:2].sum() > 0.8


def test_sample_weight_and_model_file(tmp_path):
    X, y = classification_data(300, seed=5)
    labels = np.array(["a", "b"])[y]
    w = np.where(y == 1, 3.0, 1.0)
    model = RandomForestClassifier(n_estimators=5, max_depth=5, oob_score=True, random_state=0)
    model.fit(X, labels, sample_weight=w)
    unweighted = RandomForestClassifier(n_estimators=5, max_depth=5, random_state=0).fit(X, labels)
    assert np.mean(model.predict(X) == "b") > np.mean(unweighted.predict(X) == "b")
    model.save_model(tmp_path / "rf.json")
    loaded = load_model(tmp_path / "rf.json")
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert loaded.oob_score_ == model.oob_score_
    assert loaded.estimators_ == model.estimators_


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    client = Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


def _dask(X, y, n_parts, w=None):
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    parts = (dd.from_pandas(df, npartitions=n_parts),
             dd.from_pandas(pd.Series(y, name="y"), npartitions=n_parts))
    return df, parts, None if w is None else dd.from_pandas(pd.Series(w), npartitions=n_parts)


def test_distributed_forest_equals_in_process(client):
    X, y = classification_data(500, seed=6)
    w = np.random.default_rng(0).uniform(0.5, 2, len(y))
    params = {"n_estimators": 8, "max_depth": 5, "oob_score": True, "random_state": 1}
    df, (dX, dy), dw = _dask(X, y, 4, w)
    local = RandomForestClassifier(**params).fit(df, y, sample_weight=w)
    dist = RandomForestClassifier(client=client, trees_per_pass=3, **params)
    dist.fit(dX, dy, sample_weight=dw)
    assert dist.estimators_ == local.estimators_
    assert dist.oob_score_ == local.oob_score_
    np.testing.assert_array_equal(dist.oob_decision_function_, local.oob_decision_function_)
    lazy = dist.predict_proba(dX)
    np.testing.assert_array_equal(client.compute(lazy).result(), local.predict_proba(df))


def test_distributed_regression_and_bagging_equal_in_process(client):
    X, y = regression_data(400, seed=7)
    df, (dX, dy), _ = _dask(X, y, 3)
    for cls, params in [
        (RandomForestRegressor, {"n_estimators": 5, "max_leaf_nodes": 8, "oob_score": True}),
        (BaggingRegressor, {"n_estimators": 5, "max_features": 0.5, "max_depth": 4,
                            "oob_score": True}),
    ]:
        local = cls(random_state=2, **params).fit(df, y)
        dist = cls(random_state=2, client=client, **params).fit(dX, dy)
        assert dist.estimators_ == local.estimators_
        assert dist.oob_score_ == local.oob_score_
        np.testing.assert_array_equal(dist.oob_prediction_, local.oob_prediction_)
    Xc, yc = classification_data(400, seed=8)
    df, (dX, dy), _ = _dask(Xc, yc, 5)
    params = {"n_estimators": 4, "bootstrap": False, "max_samples": 0.6, "random_state": 0}
    local = BaggingClassifier(**params).fit(df, yc)
    dist = BaggingClassifier(client=client, **params).fit(dX, dy)
    assert dist.estimators_ == local.estimators_
