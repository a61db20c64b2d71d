"""Stochastic gradient boosting (ESL 10.12, Friedman 2002): row subsampling
and column subsampling by tree, level and node, as functions of
(random_state, round, row id) only, so models do not depend on partitioning."""


import numpy as np
import pytest

from distboost import GradientBoostingClassifier, GradientBoostingRegressor


def data(n=1200, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] - 2 * X[:, 1] * X[:, 2] + rng.standard_t(3, n)
    return X, y, rng.integers(1, 3, n).astype(float)


STOCHASTIC = {"subsample": 0.6, "colsample_bytree": 0.8, "colsample_bylevel": 0.8,
                  "colsample_bynode": 0.7, "random_state": 11, "n_estimators": 6, "max_depth": 3}


def same_model(a, b):
    assert np.array_equal(a.base_score_, b.base_score_)
    assert len(a.trees_) == len(b.trees_)
    assert all(ta == tb for ra, rb in zip(a.trees_, b.trees_) for ta, tb in zip(ra, rb))


@pytest.mark.parametrize("loss", ["squared_error", "absolute_error", "huber", "quantile"])
def test_subsampled_models_are_identical_across_partitionings(partitioned, loss):
    X, y, w = data()
    models = []
    for n_parts in (1, 7):
        partitioned(n_parts)
        models.append(GradientBoostingRegressor(loss=loss, **STOCHASTIC).fit(X, y, sample_weight=w))
    same_model(*models)


def test_subsample_draws_a_fraction_of_rows_each_round():
    X, y, _ = data(n=4000)
    m = GradientBoostingRegressor(subsample=0.3, n_estimators=5, max_depth=1, random_state=3).fit(X, y)
    counts = [int(r[0].nodes["count"][0]) for r in m.trees_]
    assert all(abs(c - 1200) < 4 * np.sqrt(4000 * 0.3 * 0.7) for c in counts)
    assert len(set(counts)) > 1  # a new sample every round
    other = GradientBoostingRegressor(subsample=0.3, n_estimators=5, max_depth=1,
                                      random_state=4).fit(X, y)
    assert [int(r[0].nodes["count"][0]) for r in other.trees_] != counts
    again = GradientBoostingRegressor(subsample=0.3, n_estimators=5, max_depth=1,
                                      random_state=3).fit(X, y)
    same_model(m, again)


def test_leaf_line_search_uses_in_bag_rows_only():
    X, y, _ = data(n=2000)
    m = GradientBoostingRegressor(loss="absolute_error", subsample=0.5, n_estimators=1,
                                  max_depth=1, learning_rate=1.0, random_state=5).fit(X, y)
    full = GradientBoostingRegressor(loss="absolute_error", n_estimators=1, max_depth=1,
                                     learning_rate=1.0).fit(X, y)
    assert m.trees_[0][0].nodes["count"][0] < 1100
    assert not np.array_equal(m.trees_[0][0].nodes["value"], full.trees_[0][0].nodes["value"])


def test_colsample_bylevel_limits_the_features_of_each_depth():
    X, y, _ = data(n=1500, d=8)
    m = GradientBoostingRegressor(colsample_bylevel=0.25, n_estimators=8, max_depth=3,
                                  random_state=2).fit(X, y)
    used_at = []
    for (tree,) in m.trees_:
        nodes = tree.nodes[tree.nodes["is_leaf"] == 0]
        for depth in np.unique(nodes["depth"]):
            features = set(nodes["feature"][nodes["depth"] == depth].tolist())
            assert len(features) <= 2
            used_at.append(frozenset(features))
    assert len(set(used_at)) > 2


def test_colsample_bynode_one_feature_per_node():
    X, y, _ = data(n=1500, d=8)
    m = GradientBoostingRegressor(colsample_bynode=1 / 8, n_estimators=5, max_depth=3,
                                  random_state=2).fit(X, y)
    features = {int(f) for (t,) in m.trees_ for f in t.nodes["feature"][t.nodes["is_leaf"] == 0]}
    assert len(features) >= 4  # a single node may only split on its one drawn feature


# ----------------------------------------------------------------- on Dask
@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.mark.parametrize("loss", ["huber", "quantile"])
def test_dask_model_equals_in_process_model(client, loss):
    import dask.dataframe as dd
    import pandas as pd

    X, y, w = data(n=1400)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    local = GradientBoostingRegressor(loss=loss, **STOCHASTIC).fit(frame, y, sample_weight=w)
    ddf = dd.from_pandas(frame.assign(y=y, w=w), npartitions=7)
    dist = GradientBoostingRegressor(loss=loss, client=client, **STOCHASTIC).fit(
        ddf.drop(columns=["y", "w"]), ddf["y"], sample_weight=ddf["w"])
    same_model(local, dist)


def test_dask_exponential_line_search_equals_in_process(client):
    import dask.array as da

    X, y, _ = data(n=900)
    labels = (y > 0).astype(int)
    kw = {"loss": "exponential", "leaf_estimation": "line_search", "subsample": 0.7,
              "n_estimators": 4, "max_depth": 2, "random_state": 1}
    local = GradientBoostingClassifier(**kw).fit(X, labels)
    dist = GradientBoostingClassifier(client=client, **kw).fit(
        da.from_array(X, chunks=(200, 8)), da.from_array(labels, chunks=200))
    same_model(local, dist)
