"""save_model(path, format="xgboost") (distboost.xgboost_format): the real
xgboost package loads the file and predicts the same margins, on data with
missing values and categories, for every supported model; thresholds route
every float32 value as distboost does; what XGBoost cannot express is refused."""

import json

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.inputs.frames import Schema
from distboost.inspection import shap_interaction_values, shap_values
from distboost.xgboost_format import (
    XGBoostFormatError,
    XGBoostFormatWarning,
    _right_categories,
    category_container,
    split_condition,
)

xgb = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    n = 500
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n).astype(np.float32),
                      "c": pd.Categorical(rng.choice(list("pqrst"), n))})
    X.loc[::9, "a"] = np.nan
    X.loc[::13, "c"] = np.nan
    y = X["a"].fillna(0) + (X["c"] == "q") + X["b"] * X["a"].fillna(1) + rng.normal(size=n) / 10
    return X, y.to_numpy(), (y > 0.3).astype(int).to_numpy(), np.digitize(y, [0, 1])


def codes(X):
    """X as XGBoost sees distboost's inputs: numbers, categories as their codes."""
    out = X.copy()
    out["c"] = X["c"].cat.codes.astype(np.float64).where(X["c"].notna())
    return out.to_numpy(np.float64)


def booster(model, tmp_path):
    path = tmp_path / "model.xgb.json"
    model.save_model(path, format="xgboost")
    return xgb.Booster(model_file=str(path))


MODELS = [
    ("squared error", lambda: db.GradientBoostingRegressor(n_estimators=10, max_depth=4), 1),
    ("absolute error", lambda: db.GradientBoostingRegressor(loss="absolute_error",
                                                            n_estimators=8), 1),
    ("huber", lambda: db.GradientBoostingRegressor(loss="huber", n_estimators=8), 1),
    ("quantile", lambda: db.GradientBoostingRegressor(loss="quantile", alpha=0.3,
                                                      n_estimators=8), 1),
    ("log loss, two classes", lambda: db.GradientBoostingClassifier(n_estimators=10), 2),
    ("log loss, three classes", lambda: db.GradientBoostingClassifier(n_estimators=5,
                                                                      max_depth=3), 3),
    ("random forest regression", lambda: db.RandomForestRegressor(n_estimators=6,
                                                                  max_depth=8), 1),
    ("random forest, three classes", lambda: db.RandomForestClassifier(n_estimators=6,
                                                                       max_depth=8), 3),
    ("bagging, two classes", lambda: db.BaggingClassifier(n_estimators=4, max_depth=6), 2),
]


@pytest.mark.parametrize("make, n_classes", [m[1:] for m in MODELS], ids=[m[0] for m in MODELS])
def test_xgboost_predicts_the_same_margins(make, n_classes, data, tmp_path):
    X = data[0]
    model = make().fit(X, data[n_classes])
    b = booster(model, tmp_path)
    margins = b.predict(xgb.DMatrix(X, enable_categorical=True), output_margin=True)
    raw = model.decision_function(X) if hasattr(model, "decision_function") else (
        model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X))
    np.testing.assert_allclose(margins, raw, rtol=0, atol=1e-5)
    # the same from the category codes as plain numbers
    plain = b.predict(xgb.DMatrix(codes(X)), output_margin=True, validate_features=False)
    np.testing.assert_allclose(plain, raw, rtol=0, atol=1e-5)
    if hasattr(model, "predict_proba") and n_classes > 2 and hasattr(model, "loss"):
        np.testing.assert_allclose(b.predict(xgb.DMatrix(codes(X)), validate_features=False),
                                   model.predict_proba(X), rtol=0, atol=1e-5)


def test_exponential_loss_becomes_logistic_with_the_log_odds(data, tmp_path):
    X, y = data[0], data[2]
    model = db.GradientBoostingClassifier(loss="exponential", n_estimators=10).fit(X, y)
    b = booster(model, tmp_path)
    dm = xgb.DMatrix(X, enable_categorical=True)
    np.testing.assert_allclose(b.predict(dm, output_margin=True),
                               2 * model.decision_function(X), rtol=0, atol=1e-5)
    np.testing.assert_allclose(b.predict(dm), model.predict_proba(X)[:, 1], rtol=0, atol=1e-6)


def test_objectives_and_layout(data, tmp_path):
    X, y = data[0], data[1]
    model = db.GradientBoostingRegressor(loss="quantile", alpha=0.3, n_estimators=3).fit(X, y)
    model.save_model(tmp_path / "m.json", format="xgboost")
    learner = json.loads((tmp_path / "m.json").read_text())["learner"]
    assert learner["objective"] == {"name": "reg:quantileerror",
                                    "quantile_loss_param": {"quantile_alpha": "[0.3]"}}
    assert learner["feature_names"] == ["a", "b", "c"]
    assert learner["feature_types"] == ["float", "float", "c"]
    # the shortest text of the float32 value: XGBoost < 3.1 keeps its default 0.5 for longer ones
    text = learner["learner_model_param"]["base_score"]
    assert np.float32(text) == np.float32(model.base_score_[0]) and len(text) <= 16
    forest = db.RandomForestClassifier(n_estimators=4, max_depth=3).fit(X, data[3])
    forest.save_model(tmp_path / "f.json", format="xgboost")
    learner = json.loads((tmp_path / "f.json").read_text())["learner"]
    gbtree = learner["gradient_booster"]["model"]
    assert gbtree["gbtree_model_param"] == {"num_parallel_tree": "4", "num_trees": "12"}
    assert gbtree["iteration_indptr"] == [0, 12] and gbtree["tree_info"] == [0] * 4 + [1] * 4 + [2] * 4
    assert learner["learner_model_param"]["num_target"] == "3"
    assert xgb.Booster(model_file=str(tmp_path / "f.json")).num_boosted_rounds() == 1


def test_xgboost_shap_equals_ours(data, tmp_path):
    """XGBoost's TreeSHAP on the exported trees (covers as sum_hessian) agrees."""
    X, y = data[0], data[1]
    model = db.GradientBoostingRegressor(n_estimators=10, max_depth=4).fit(X, y)
    dm = xgb.DMatrix(X, enable_categorical=True)
    b = booster(model, tmp_path)
    np.testing.assert_allclose(b.predict(dm, pred_contribs=True), shap_values(model, X),
                               rtol=0, atol=1e-5)
    np.testing.assert_allclose(b.predict(dm, pred_interactions=True),
                               shap_interaction_values(model, X), rtol=0, atol=1e-5)


# ------------------------------------------------------------------ routing
def test_split_condition_is_the_smallest_float32_above_the_threshold():
    assert split_condition(0.5) == np.nextafter(np.float32(0.5), np.float32(1))
    assert split_condition(0.1) == np.float32(0.1)  # float32(0.1) is above 0.1
    assert split_condition(0.7) == np.nextafter(np.float32(0.7), np.float32(1))  # below it
    assert split_condition(1e39) == np.inf and split_condition(-1e39) == -np.finfo(np.float32).max
    for t in np.random.default_rng(2).normal(size=200) * 10.0 ** np.arange(-5, 5).repeat(20):
        s = split_condition(t)
        below = np.nextafter(s, np.float32(-np.inf))
        assert float(below) <= t < float(s)


def test_every_float32_value_near_a_threshold_routes_as_in_distboost(tmp_path):
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 40, 2000) / 4.0,  # thresholds exactly float32
                         rng.normal(size=2000).astype(np.float32)])  # thresholds between
    y = np.sin(X[:, 0]) + X[:, 1] + rng.normal(size=2000) / 10
    model = db.GradientBoostingRegressor(n_estimators=20, max_depth=5).fit(X, y)
    thresholds = np.concatenate([t.nodes["threshold"][t.nodes["is_leaf"] == 0]
                                 for r in model.trees_ for t in r])
    features = np.concatenate([t.nodes["feature"][t.nodes["is_leaf"] == 0]
                               for r in model.trees_ for t in r])
    rows = []
    for f, t in zip(features, thresholds):  # the float32 values around each threshold
        s = split_condition(t)
        for v in (np.nextafter(s, np.float32(-np.inf)), s, np.float32(t)):
            row = X[len(rows) % len(X)].copy()
            row[f] = v
            rows.append(row)
    edge = np.asarray(rows, np.float32)
    b = booster(model, tmp_path)
    margins = b.predict(xgb.DMatrix(edge), output_margin=True)
    np.testing.assert_allclose(margins, model.predict(edge), rtol=0, atol=1e-5)
    np.testing.assert_allclose(b.predict(xgb.DMatrix(edge.astype(np.float64)), output_margin=True),
                               model.predict(edge.astype(np.float64)), rtol=0, atol=1e-5)


def test_categories_going_right_are_listed():
    bits = np.zeros(4, np.uint64)
    bits[0] = np.uint64(0b101)  # codes 0 and 2 go left
    assert _right_categories(bits, True, 4)[:3] == [1, 3, 4]
    assert len(_right_categories(bits, True, 4)) == 253
    # missing values going right: so do the codes distboost counts as missing (255 and up)
    right = _right_categories(bits, False, 300)
    assert len(right) == 253 + 45 and right[-45:] == list(range(255, 300))
    assert _right_categories(bits, False, 5)[-1] == 255


# --------------------------------------------------------------- categories
def test_reordered_categories_predict_as_distboost(data, tmp_path):
    """XGBoost re-codes a serving DataFrame's categories by name from the
    categories the export carries, as distboost does: reversed, or a subset."""
    X, y = data[0], data[2]
    model = db.GradientBoostingClassifier(n_estimators=10, max_depth=3).fit(X, y)
    b = booster(model, tmp_path)
    reordered = X.assign(c=X["c"].cat.reorder_categories(["t", "s", "r", "q", "p"]))
    subset = X[X["c"] != "p"].assign(c=lambda d: d["c"].cat.remove_categories(["p"]))
    for frame in (reordered, subset):
        got = b.predict(xgb.DMatrix(frame, enable_categorical=True))
        np.testing.assert_allclose(got, model.predict_proba(frame)[:, 1], rtol=0, atol=1e-6)
    # without the categories (for treelite), XGBoost reads the reordered column's codes: far off
    model.save_model(tmp_path / "codes.json", format="xgboost", xgboost_categories=False)
    stored = json.loads((tmp_path / "codes.json").read_text())
    assert "cats" not in stored["learner"]["gradient_booster"]["model"]
    assert stored["version"] == [2, 1, 0]
    by_codes = xgb.Booster(model_file=str(tmp_path / "codes.json"))
    wrong = by_codes.predict(xgb.DMatrix(reordered, enable_categorical=True))
    assert np.abs(wrong - model.predict_proba(reordered)[:, 1]).max() > 0.1


def test_integer_categories_are_recoded_by_value(tmp_path):
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"x": rng.normal(size=300),
                      "k": pd.Categorical(rng.choice([30, 10, 20], 300), categories=[30, 10, 20])})
    y = X["x"] + 2 * (X["k"] == 10) - (X["k"] == 20)
    model = db.GradientBoostingRegressor(n_estimators=5, max_depth=3).fit(X, y)
    b = booster(model, tmp_path)
    served = X.assign(k=X["k"].cat.reorder_categories([10, 20, 30]))
    np.testing.assert_allclose(b.predict(xgb.DMatrix(served, enable_categorical=True)),
                               model.predict(served), rtol=0, atol=1e-5)


def test_category_container_layout():
    schema = Schema(["x", "s", "k"], np.array([False, True, True]),
                    {1: ["b", "ab", "a"], 2: [30, 10.0, 20]})
    assert category_container(schema) == {
        "enc": [{"offsets": [], "values": []},
                {"offsets": [0, 1, 3, 4], "values": [98, 97, 98, 97]},
                {"type": 15, "values": [30, 10, 20]}],  # XGBoost's int64 array kind
        "feature_segments": [0, 0, 3, 6],
        "sorted_idx": [2, 1, 0, 1, 2, 0]}  # per feature, the categories sorted by value
    assert category_container(Schema(["x"], np.array([False]))) is None


def test_what_the_category_container_cannot_say_is_warned(data, tmp_path, monkeypatch):
    with pytest.warns(XGBoostFormatWarning, match="feature 'k' has categories that are neither "
                      "all text nor all integers"):
        assert category_container(Schema(["k"], np.array([True]), {0: [0.5, 1.5]})) is None
    with pytest.warns(XGBoostFormatWarning,
                      match=r"feature 's' has non-ASCII categories \(\['é'\]\)"):
        assert category_container(Schema(["s"], np.array([True]), {0: ["e", "é"]})) is not None
    X, y = data[0], data[1]
    model = db.GradientBoostingRegressor(n_estimators=2).fit(X, y)
    monkeypatch.setattr(xgb, "__version__", "3.0.5")
    with pytest.warns(XGBoostFormatWarning, match=r"xgboost installed here \(3.0.5\) is older "
                      "than 3.1: it ignores the training categories"):
        model.save_model(tmp_path / "m.json", format="xgboost")
    assert json.loads((tmp_path / "m.json").read_text())["version"] == [3, 1, 0]
    numeric = db.GradientBoostingRegressor(n_estimators=2).fit(X[["a", "b"]], y)
    numeric.save_model(tmp_path / "n.json", format="xgboost")  # no categories: no warning
    assert json.loads((tmp_path / "n.json").read_text())["version"] == [2, 1, 0]


# ---------------------------------------------------------------- refusals
def test_what_xgboost_cannot_express_is_refused(data, tmp_path):
    X, y2 = data[0], data[2]
    ada = db.AdaBoostClassifier(n_estimators=3).fit(X, y2)
    with pytest.raises(XGBoostFormatError, match="AdaBoostClassifier cannot be written in "
                       "XGBoost's model format: XGBoost has no AdaBoost"):
        ada.save_model(tmp_path / "a.json", format="xgboost")
    voting = db.VotingClassifier([("a", ada)], prefit=True).fit(X, y2)
    with pytest.raises(XGBoostFormatError, match="no voting of models; export each member"):
        voting.save_model(tmp_path / "v.json", format="xgboost")
    with pytest.raises(ValueError, match="format must be one of 'distboost', 'xgboost'; got 'onnx'"):
        ada.save_model(tmp_path / "a.json", format="onnx")
    with pytest.raises(db.NotFittedError):
        db.GradientBoostingRegressor().save_model(tmp_path / "n.json", format="xgboost")
    assert not list(tmp_path.iterdir())
