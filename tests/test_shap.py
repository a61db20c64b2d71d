"""distboost.inspection.shap_values / shap_interaction_values on fitted
estimators (distboost.estimators.shap): additivity on every kind of ensemble with
missing values and categories, the shap package's TreeExplainer, and Dask
collections explained on a real cluster equal to in process."""

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from dask.utils import key_split

import distboost as db
from distboost.inspection import shap_interaction_values, shap_values


@pytest.fixture(scope="module")
def data():
    """300 rows: two numeric inputs (one with missing values), a categorical one
    (with missing values), a regression target and two- and three-class labels."""
    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "c": pd.Categorical(rng.choice(list("pqrs"), n))})
    X.loc[::9, "a"] = np.nan
    X.loc[::13, "c"] = np.nan
    y = X["a"].fillna(0) + (X["c"] == "q") + X["b"] * X["a"].fillna(1) + rng.normal(size=n) / 10
    return X, y.to_numpy(), (y > 0.3).astype(int).to_numpy(), np.digitize(y, [0, 1])


def raw_output(model, X):
    """What shap_values explains: decision_function, predict_proba of forests
    and bagging, predict of regressors."""
    if hasattr(model, "decision_function"):
        return model.decision_function(X)
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)
    return model.predict(X)


MODELS = [
    ("squared error", lambda: db.GradientBoostingRegressor(n_estimators=8, max_depth=4), 1),
    ("absolute error", lambda: db.GradientBoostingRegressor(loss="absolute_error",
                                                            n_estimators=5, max_depth=3), 1),
    ("huber", lambda: db.GradientBoostingRegressor(loss="huber", n_estimators=5,
                                                   max_depth=3), 1),
    ("quantile", lambda: db.GradientBoostingRegressor(loss="quantile", alpha=0.2,
                                                      n_estimators=5, max_depth=3), 1),
    ("log loss, two classes", lambda: db.GradientBoostingClassifier(
        n_estimators=6, max_depth=3, subsample=0.7), 2),
    ("log loss, three classes", lambda: db.GradientBoostingClassifier(
        n_estimators=4, max_depth=3), 3),
    ("exponential", lambda: db.GradientBoostingClassifier(loss="exponential", n_estimators=5,
                                                          max_depth=3), 2),
    ("random forest regression", lambda: db.RandomForestRegressor(n_estimators=6), 1),
    ("random forest, two classes", lambda: db.RandomForestClassifier(n_estimators=6), 2),
    ("random forest, three classes", lambda: db.RandomForestClassifier(
        n_estimators=5, max_depth=6), 3),
    ("bagging regression", lambda: db.BaggingRegressor(n_estimators=4, max_features=0.7), 1),
    ("bagging classification", lambda: db.BaggingClassifier(n_estimators=4, max_depth=5), 3),
    ("AdaBoost SAMME, two classes", lambda: db.AdaBoostClassifier(n_estimators=6,
                                                                  max_depth=2), 2),
    ("AdaBoost SAMME, three classes", lambda: db.AdaBoostClassifier(n_estimators=6,
                                                                    max_depth=2), 3),
    ("AdaBoost SAMME.R", lambda: db.AdaBoostClassifier(n_estimators=4, algorithm="SAMME.R",
                                                       max_depth=2), 3),
]


def _fit(make, n_classes, data):
    X, y, y2, y3 = data
    return make().fit(X, {1: y, 2: y2, 3: y3}[n_classes])


@pytest.mark.parametrize("make, n_classes", [m[1:] for m in MODELS], ids=[m[0] for m in MODELS])
def test_rows_add_up_to_the_raw_output(make, n_classes, data):
    X = data[0]
    model = _fit(make, n_classes, data)
    values = shap_values(model, X)
    raw = raw_output(model, X)
    expected_shape = (len(X),) + raw.shape[1:] + (4,)
    assert values.shape == expected_shape and values.dtype == np.float64
    np.testing.assert_allclose(values.sum(axis=-1), raw, rtol=0, atol=1e-9)
    bias = values[..., -1]
    assert np.ptp(bias, axis=0).max() == 0  # the expected value, the same on every row
    assert (values[X["a"].isna().to_numpy(), ..., 0] != 0).any()  # missing values count too


@pytest.mark.parametrize("make, n_classes", [m[1:] for m in MODELS[::3]],
                         ids=[m[0] for m in MODELS[::3]])
def test_interaction_matrices_add_up(make, n_classes, data):
    X = data[0].iloc[:40]
    model = _fit(make, n_classes, data)
    inter = shap_interaction_values(model, X)
    values = shap_values(model, X)
    assert inter.shape == values.shape + (4,)
    np.testing.assert_allclose(inter.sum(axis=-1), values, rtol=0, atol=1e-9)
    np.testing.assert_allclose(inter.sum(axis=(-1, -2)), raw_output(model, X), rtol=0,
                               atol=1e-9)
    np.testing.assert_allclose(inter, np.swapaxes(inter, -1, -2), rtol=0, atol=1e-12)


def test_numpy_and_pandas_give_the_same_values(data):
    X, y = data[0][["a", "b"]], data[1]
    model = db.GradientBoostingRegressor(n_estimators=5, max_depth=3).fit(X.to_numpy(), y)
    np.testing.assert_array_equal(shap_values(model, X), shap_values(model, X.to_numpy()))
    float32 = X.to_numpy(np.float32)
    np.testing.assert_allclose(shap_values(model, float32).sum(axis=1), model.predict(float32),
                               rtol=0, atol=1e-9)


def shap_ensemble(model, n_classes):
    """The model's trees in the shap package's dict format, one output per class."""
    trees = []
    for round_trees in model.trees_:
        for k, tree in enumerate(round_trees):
            n = tree.nodes
            leaf = n["is_leaf"] == 1
            left, right = np.where(leaf, -1, n["left"]), np.where(leaf, -1, n["right"])
            values = np.zeros((len(n), n_classes))
            values[:, k] = n["value"]
            trees.append({"children_left": left, "children_right": right,
                          "children_default": np.where(n["missing_left"] == 1, left, right),
                          "features": np.where(leaf, -2, n["feature"]),
                          "thresholds": n["threshold"], "values": values,
                          "node_sample_weight": n["cover"]})
    return {"trees": trees, "base_offset": model.base_score_}


@pytest.mark.parametrize("n_classes", [1, 3])
def test_equal_to_the_shap_package(n_classes, data):
    shap = pytest.importorskip("shap")
    X, y, _, y3 = data
    X = X[["a", "b"]].to_numpy()
    model = (db.GradientBoostingRegressor(n_estimators=6, max_depth=4).fit(X, y)
             if n_classes == 1 else
             db.GradientBoostingClassifier(n_estimators=3, max_depth=3).fit(X, y3))
    explainer = shap.TreeExplainer(shap_ensemble(model, n_classes))
    theirs = np.asarray(explainer.shap_values(X)).reshape(len(X), 2, n_classes)
    ours = shap_values(model, X).reshape(len(X), n_classes, 3)
    np.testing.assert_allclose(ours[..., :2], np.swapaxes(theirs, 1, 2), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours[0, :, 2], np.ravel(explainer.expected_value), atol=1e-12)
    if n_classes == 1:
        inter = explainer.shap_interaction_values(X[:30])
        np.testing.assert_allclose(shap_interaction_values(model, X[:30])[:, :2, :2], inter,
                                   rtol=0, atol=1e-12)


# ---------------------------------------------------------------------- Dask
@pytest.fixture(scope="module")
def parquet_data(data, tmp_path_factory):
    """The data as three Parquet files, and a three-class model fitted in process."""
    folder = tmp_path_factory.mktemp("shap-parquet")
    X, _, _, y3 = data
    for part, rows in enumerate(np.array_split(np.arange(len(X)), 3)):
        X.iloc[rows].to_parquet(folder / f"part-{part}.parquet")
    model = db.GradientBoostingClassifier(n_estimators=4, max_depth=3).fit(X, y3)
    return folder, model


def test_dask_dataframe_is_explained_on_the_workers(parquet_data, data, dask_client):
    folder, model = parquet_data
    ddf = dd.read_parquet(folder)
    values = shap_values(model, ddf)
    assert isinstance(values, da.Array) and values.shape[1:] == (3, 4)
    # one task per partition (Dask fuses it with the read: "read_parquet-distboost-...")
    keys = [k for k in dict(values.__dask_graph__()) if "distboost" in key_split(k)]
    assert len({k[1] for k in keys}) == 3
    local = shap_values(model, data[0])
    np.testing.assert_array_equal(dask_client.compute(values).result(), local)
    inter = dask_client.compute(shap_interaction_values(model, ddf)).result()
    np.testing.assert_array_equal(inter, shap_interaction_values(model, data[0]))


def test_dask_array_is_explained_on_the_workers(data, dask_client):
    X, y = data[0][["a", "b"]].to_numpy(), data[1]
    model = db.GradientBoostingRegressor(n_estimators=5, max_depth=3).fit(X, y)
    darr = da.from_array(X, chunks=(70, 1))
    values = shap_values(model, darr)
    assert values.chunks[0] == darr.chunks[0] and values.shape == (len(X), 3)
    assert any(key_split(k) == "distboost-shap" for k in dict(values.__dask_graph__()))
    np.testing.assert_array_equal(dask_client.compute(values).result(), shap_values(model, X))
    inter = shap_interaction_values(model, darr)
    assert inter.shape == (len(X), 3, 3)
    np.testing.assert_array_equal(dask_client.compute(inter).result(),
                                  shap_interaction_values(model, X))


# ---------------------------------------------------------------- bad input
def test_bad_input_is_refused_with_what_to_do(data):
    X, y = data[0], data[1]
    with pytest.raises(db.NotFittedError):
        shap_values(db.GradientBoostingRegressor(), X)
    model = db.GradientBoostingRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="missing feature column"):
        shap_values(model, X[["a", "b"]])
    voting = db.VotingRegressor([("g", model)], prefit=True).fit(X, y)
    with pytest.raises(TypeError, match="explain each of its members"):
        shap_values(voting, X)
