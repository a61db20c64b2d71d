import json

import numpy as np
import pandas as pd
import pytest

import distboost as db


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({
        "x": rng.normal(size=800),
        "c": pd.Categorical(rng.choice(["u", "v", "w"], 800)),
        "z": np.where(rng.random(800) < 0.1, np.nan, rng.normal(size=800)),
    })
    y = (df["x"] + (df["c"] == "v") * 2 + rng.logistic(size=800) > 0.5)
    return df, np.where(y, "spam", "ham")


def test_round_trip_predicts_exactly_the_same(data, tmp_path):
    df, y = data
    clf = db.GradientBoostingClassifier(n_estimators=12, learning_rate=0.3).fit(df, y)
    path = tmp_path / "model.json"
    clf.save_model(path)
    loaded = db.load_model(path)
    assert type(loaded) is db.GradientBoostingClassifier
    np.testing.assert_array_equal(loaded.predict_proba(df), clf.predict_proba(df))
    np.testing.assert_array_equal(loaded.predict(df), clf.predict(df))
    assert list(loaded.classes_) == ["ham", "spam"]
    assert loaded.feature_names_in_.tolist() == ["x", "c", "z"]
    assert loaded.get_params() == {**clf.get_params(), "client": None}
    assert all(a[0] == b[0] for a, b in zip(loaded.trees_, clf.trees_))


def test_file_is_versioned_json(data, tmp_path):
    df, _y = data
    reg = db.GradientBoostingRegressor(n_estimators=2).fit(df, df["x"].to_numpy())
    path = tmp_path / "m.json"
    reg.save_model(path)
    doc = json.loads(path.read_text())
    assert doc["format"] == "distboost-model" and doc["version"] == 1
    assert doc["estimator"] == "GradientBoostingRegressor"
    assert set(doc) >= {"bin_mapper", "trees", "feature_names", "base_score", "categories"}
    doc["version"] = 99
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="version 99"):
        db.load_model(path)
    path.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ValueError, match="not a distboost model"):
        db.load_model(path)


def test_saving_never_leaves_a_partial_file(data, tmp_path):
    _df, _y = data
    path = tmp_path / "keep.json"
    path.write_text("previous model")
    with pytest.raises(db.NotFittedError, match="not fitted"):
        db.GradientBoostingRegressor().save_model(path)
    assert path.read_text() == "previous model"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.json"]


def test_multiclass_round_trip_without_a_cluster(tmp_path):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    clf = db.GradientBoostingClassifier(n_estimators=5).fit(X, y)
    clf.save_model(tmp_path / "iris.json")
    loaded = db.load_model(tmp_path / "iris.json")
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert loaded.classes_.dtype == clf.classes_.dtype


def test_a_model_file_may_name_every_exported_estimator_and_nothing_else():
    from distboost.inputs.model_schema import estimator_classes

    exported = {n for n in db.__all__ if n.endswith(("Classifier", "Regressor", "Ranker"))}
    assert set(estimator_classes()) == exported
    assert all(estimator_classes()[n] is getattr(db, n) for n in exported)


def test_constraints_and_functions_in_a_model_file(tmp_path):
    """Interaction sets are written as sorted lists, monotone dicts as they are, a
    function as "custom"; the loaded model predicts what the saved one did."""
    from distboost.metrics import make_metric

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    y = np.exp(0.3 * X.a) + rng.gamma(2.0, 0.5, 200)
    hits = make_metric(lambda t, f: (np.abs(t - np.exp(f)) < 1).astype(float), name="hits")
    model = db.GradientBoostingRegressor(
        loss="gamma", n_estimators=4, monotonic_cst={"a": 1}, interaction_cst=[{"c", 1}],
        eval_metric=["gamma_deviance", hits]).fit(X, y, eval_set=[(X, y)])
    model.save_model(tmp_path / "m.json")
    params = json.loads((tmp_path / "m.json").read_text())["params"]
    assert params["monotonic_cst"] == {"a": 1} and params["interaction_cst"] == [[1, "c"]]
    assert params["eval_metric"] == ["gamma_deviance", "custom"] and params["loss"] == "gamma"
    loaded = db.load_model(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.evals_result_ == model.evals_result_
    with pytest.raises(db.InvalidParameterError, match="eval_metric holds 'custom'"):
        loaded.fit(X, y)


def test_a_write_that_fails_leaves_nothing_behind(tmp_path):
    """The atomic write all model files share (distboost, XGBoost's format, voting)."""
    from distboost.model_file import write_json

    target = tmp_path / "model.json"
    target.mkdir()  # the rename over it fails
    with pytest.raises(OSError):
        write_json(target, {"a": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"] and target.is_dir()
    with pytest.raises(ValueError, match="not JSON compliant"):
        write_json(tmp_path / "nan.json", {"a": float("nan")})
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"]
    write_json(tmp_path / "ok.json", {"a": 1})
    assert json.loads((tmp_path / "ok.json").read_text()) == {"a": 1}


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)],
                         ids=["umask 022", "umask 077"])
def test_files_are_made_as_the_umask_says(data, tmp_path, umask, mode):
    """Models, XGBoost exports, checkpoints and whatever else ``write_atomic`` writes
    get 0666 less the umask, as ``open`` would give them (not mkstemp's 0600)."""
    import os
    import stat

    from distboost.callbacks import TrainingCheckPoint
    from distboost.model_file import write_atomic

    df, _y = data
    reg = db.GradientBoostingRegressor(n_estimators=2).fit(df, df["x"].to_numpy())
    (tmp_path / "replaced.json").write_text("an old file, 0644")
    old = os.umask(umask)
    try:
        reg.save_model(tmp_path / "model.json")
        reg.save_model(tmp_path / "xgb.json", format="xgboost")
        reg.save_model(tmp_path / "replaced.json")
        TrainingCheckPoint(tmp_path / "checkpoints", interval=1).save(reg, 2)
        write_atomic(tmp_path / "report.html", "<html></html>")
    finally:
        os.umask(old)
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert [p.name for p in files] == ["model-00002.json", "model.json", "replaced.json",
                                       "report.html", "xgb.json"]  # no temporary left
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in files} == {p.name: mode for p in files}
    assert db.load_model(tmp_path / "replaced.json").n_estimators_ == 2
