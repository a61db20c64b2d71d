"""User-defined objectives: a function's squared error gives the built-in
model; the model does not depend on the partitioning (in process and on a
LocalCluster); bad results are refused naming the round, partition and row;
functions the workers cannot receive are refused clearly; saved models record
"custom" and predict raw scores."""

import sys
import threading

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.training.objective import ObjectiveError

rng = np.random.default_rng(3)
X = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"])
Y = (2 * X.a - X.b ** 2 + rng.normal(scale=0.3, size=60)).to_numpy()
W = rng.uniform(0.5, 2.0, 60)


def squared_error(y, f):
    """L = (y - f)^2, the built-in's convention: g = 2 (f - y), h = 2."""
    return 2.0 * (f - y), np.full_like(f, 2.0)


def asymmetric(y, f):
    """Under-prediction costs 3 times more: L = 3 (y - f)^2 if y > f else (y - f)^2."""
    k = np.where(y > f, 3.0, 1.0)
    return 2.0 * k * (f - y), 2.0 * k


def _same_trees(a, b, rtol):
    """Same structure; leaf values equal up to ``rtol`` (the fixed-point scales differ)."""
    for ta, tb in zip(a.trees_, b.trees_):
        na, nb = ta[0].nodes, tb[0].nodes
        for name in ("feature", "bin_threshold", "left", "right", "count", "is_leaf"):
            np.testing.assert_array_equal(na[name], nb[name])
        np.testing.assert_allclose(na["value"], nb["value"], rtol=rtol, atol=0)


def test_a_function_squared_error_gives_the_built_in_model():
    params = {"n_estimators": 10, "max_depth": 3, "learning_rate": 0.3}
    custom = db.GradientBoostingRegressor(loss=squared_error, **params).fit(X, Y, W)
    built_in = db.GradientBoostingRegressor(base_score=0.0, **params).fit(X, Y, W)
    assert custom.base_score_.tolist() == [0.0]  # XGBoost's default for a custom objective
    assert len(custom.trees_) == 10
    _same_trees(custom, built_in, rtol=1e-9)
    np.testing.assert_allclose(custom.predict(X), built_in.predict(X), rtol=1e-9, atol=1e-12)


def test_a_custom_objective_does_what_it_says():
    """Without an input to split on, boosting with Newton steps converges to the
    constant minimizing the objective: for ``asymmetric`` the 3/4-expectile e of
    y, where 3 sum_{y > e} (y - e) = sum_{y < e} (e - y). For y = 0 1 2 3 10 that
    is e = 36/7 (y > e: 10 alone, 3 (10 - e) = 4e - 6)."""
    y = np.array([0.0, 1, 2, 3, 10])
    model = db.GradientBoostingRegressor(loss=asymmetric, n_estimators=20, learning_rate=1.0,
                                         reg_lambda=0.0, max_depth=1).fit(np.zeros((5, 1)), y)
    np.testing.assert_allclose(model.predict(np.zeros((1, 1))), [36 / 7], rtol=1e-12)
    plain = db.GradientBoostingRegressor(loss=squared_error, n_estimators=20, learning_rate=1.0,
                                         reg_lambda=0.0, max_depth=1).fit(np.zeros((5, 1)), y)
    np.testing.assert_allclose(plain.predict(np.zeros((1, 1))), [y.mean()], rtol=1e-12)


def test_the_model_does_not_depend_on_the_partitioning(partitioned, dask_client):
    import dask.dataframe as dd

    params = {"loss": asymmetric, "n_estimators": 6, "max_depth": 3, "subsample": 0.8,
              "random_state": 2}
    partitioned(1)
    one = db.GradientBoostingRegressor(**params).fit(X, Y, W)
    partitioned(4)
    four = db.GradientBoostingRegressor(**params).fit(X, Y, W)
    remote = db.GradientBoostingRegressor(client=dask_client, **params).fit(
        dd.from_pandas(X, npartitions=3), dd.from_pandas(pd.Series(Y), npartitions=3),
        dd.from_pandas(pd.Series(W), npartitions=3))
    for other in (four, remote):
        assert all(t[0] == u[0] for t, u in zip(one.trees_, other.trees_))


def _nan_at_row_24(y, f):
    g, h = squared_error(y, f)
    return np.where(y == Y[24], np.nan, g), h


def _nan_once_moved(y, f):
    g, h = squared_error(y, f)
    return g, np.where(f == 0.0, h, np.nan)


@pytest.mark.parametrize("fn, pattern", [
    (_nan_at_row_24, (r"_nan_at_row_24 returned 1 gradient\(s\) that are not finite in round 0, "
                      r"partition 1, the first at row 4: nan")),
    (_nan_once_moved, (r"returned \d+ hessian\(s\) that are not finite and >= 0 in round 1, "
                       r"partition 0, the first at row \d+: nan")),
    (lambda y, f: (f - y, -np.ones_like(f)), r"hessian\(s\) that are not finite and >= 0"),
    (lambda y, f: (f - y, np.ones(3)), r"returned a hessian of shape \(3,\) for 20 rows"),
    (lambda y, f: f - y, r"must return \(gradient, hessian\); it returned ndarray"),
    (lambda y, f: 1 / 0, r"raised in round 0, partition 0: ZeroDivisionError"),
], ids=["nan-gradient", "nan-hessian-round-1", "negative-hessian", "shape", "one-array", "raises"])
def test_bad_results_name_the_round_partition_and_row(fn, pattern, partitioned):
    partitioned(3)  # 20 rows each: global row 24 is partition 1, row 4
    with pytest.raises(ObjectiveError, match=pattern):
        db.GradientBoostingRegressor(loss=fn, n_estimators=3, max_depth=2).fit(X, Y)


class _Locked:
    """A callable holding a lock: neither pickle nor cloudpickle can send it."""

    def __init__(self):
        self.lock = threading.Lock()

    def __call__(self, y, f):
        return squared_error(y, f)


def test_a_function_that_cannot_travel_is_refused_before_any_dask_work(dask_client):
    import dask.dataframe as dd

    est = db.GradientBoostingRegressor(loss=_Locked(), n_estimators=2, client=dask_client)
    Xd, yd = dd.from_pandas(X, npartitions=2), dd.from_pandas(pd.Series(Y), npartitions=2)
    with pytest.raises(db.InvalidParameterError, match=r"loss=.* cannot be sent to the Dask "
                                                       r"workers \(TypeError: cannot pickle"):
        est.fit(Xd, yd)
    assert db.GradientBoostingRegressor(loss=_Locked(), n_estimators=2).fit(X, Y).n_estimators_


def test_a_module_the_workers_cannot_import_is_explained(dask_client, tmp_path, monkeypatch):
    """A function of a module the driver imports from a folder the workers do not
    have travels by reference and fails on the workers: the error says why."""
    import dask.dataframe as dd

    (tmp_path / "only_here_objective.py").write_text(
        "import numpy as np\n\n\ndef objective(y, f):\n    return f - y, np.ones_like(f)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import only_here_objective

    est = db.GradientBoostingRegressor(loss=only_here_objective.objective, n_estimators=2,
                                       client=dask_client)
    Xd, yd = dd.from_pandas(X, npartitions=2), dd.from_pandas(pd.Series(Y), npartitions=2)
    try:
        with pytest.raises(ImportError, match=r"a Dask worker could not import "
                                              r"only_here_objective .*installed \(or on the "
                                              r"path\) on every worker"):
            est.fit(Xd, yd)
    finally:
        sys.modules.pop("only_here_objective", None)


def test_a_saved_model_records_custom_and_predicts_raw_scores(tmp_path):
    model = db.GradientBoostingRegressor(loss=asymmetric, n_estimators=5).fit(X, Y)
    model.save_model(tmp_path / "m.json")
    loaded = db.load_model(tmp_path / "m.json")
    assert loaded.loss == "custom"
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    with pytest.raises(db.InvalidParameterError, match=r"loss='custom' is what a saved model "
                                                       r"records.*pass it: loss=my_objective"):
        loaded.fit(X, Y)
    more = db.GradientBoostingRegressor(loss=asymmetric, n_estimators=3).fit(
        X, Y, init_model=tmp_path / "m.json")
    whole = db.GradientBoostingRegressor(loss=asymmetric, n_estimators=8).fit(X, Y)
    np.testing.assert_allclose(more.predict(X), whole.predict(X), rtol=1e-12)


@pytest.mark.parametrize("est, pattern", [
    (db.GradientBoostingClassifier(loss=squared_error), r"belongs to GradientBoostingRegressor"),
    (db.GradientBoostingRegressor(loss=squared_error, leaf_estimation="line_search"),
     r"its leaves are Newton steps: use leaf_estimation='newton'"),
    (db.GradientBoostingRegressor(loss="custom"), r"loss='custom' is what a saved model records"),
])
def test_what_a_custom_objective_cannot_do(est, pattern):
    with pytest.raises(db.InvalidParameterError, match=pattern):
        est.fit(X, Y > 0 if est._is_classifier else Y)
