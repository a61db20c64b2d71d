"""``distboost predict --pred-leaf``: each row's leaf in every tree, from the
command line, equal to the model's ``apply`` in XGBoost's ``pred_leaf`` layout."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import numpy as np
import pandas as pd
import pytest

import distboost as db
from flows.predict import check_predict


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("leaves")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.standard_normal((150, 3)), columns=["a", "b", "c"])
    X.loc[::7, "b"] = np.nan
    y3 = np.digitize(X["a"], [-0.5, 0.5])  # three classes
    data = folder / "data.csv"
    X.assign(row_id=np.arange(150)).to_csv(data, index=False)
    three = db.GradientBoostingClassifier(n_estimators=3, max_depth=2).fit(X, y3)
    forest = db.RandomForestRegressor(n_estimators=4, max_depth=3, random_state=0).fit(
        X.fillna(0), X["c"])
    paths = {}
    for name, est in {"three": three, "forest": forest}.items():
        paths[name] = folder / f"{name}.json"
        est.save_model(paths[name])
    return X, data, paths


def test_pred_leaf_from_the_command_line(models, tmp_path):
    X, data, paths = models
    out = tmp_path / "leaves.csv"
    result = fx.run_cli(["predict", str(paths["three"]), str(data), "--pred-leaf", "--keep",
                         "row_id", "--out", str(out)])
    assert result.returncode == 0, result.stderr
    est = db.load_model(paths["three"])
    leaves = pd.read_csv(out)
    # XGBoost's layout: round by round, class by class within a round
    assert list(leaves.columns) == ["row_id"] + [f"leaf_{r}_{c}" for r in range(3)
                                                 for c in range(3)]
    np.testing.assert_array_equal(leaves["row_id"], np.arange(150))
    np.testing.assert_array_equal(leaves.iloc[:, 1:].to_numpy(), est.predict(X, pred_leaf=True))
    # the leaves' values add up to the raw scores
    values = [t.nodes["value"] for r in est.trees_ for t in r]
    raw = est.base_score_ + np.stack([values[j][leaves.iloc[:, 1 + j]] for j in range(9)],
                                     axis=1).reshape(150, 3, 3).sum(axis=1)
    np.testing.assert_allclose(raw, est.decision_function(X), rtol=1e-12)


def test_pred_leaf_of_a_forest_and_refusals(models, tmp_path):
    X, data, paths = models
    out = tmp_path / "forest"
    result = fx.run_cli(["predict", str(paths["forest"]), str(data), "--pred-leaf", "--out",
                         str(out)])
    assert result.returncode == 0, result.stderr
    leaves = pd.concat([pd.read_parquet(p) for p in sorted(out.glob("part-*.parquet"))])
    assert list(leaves.columns) == [f"leaf_{t}" for t in range(4)]
    assert leaves.dtypes.unique().tolist() == [np.dtype(np.int32)]
    np.testing.assert_array_equal(leaves.to_numpy(), db.load_model(paths["forest"]).apply(X))
    with pytest.raises(ValueError, match="--pred-leaf writes the leaves alone"):
        check_predict(str(paths["three"]), str(data), str(tmp_path / "x.csv"), proba=True,
                      pred_leaf=True)
    with pytest.raises(ValueError, match=r"--keep column\(s\) \['leaf_0'\] would share a name"):
        renamed = tmp_path / "renamed.csv"
        pd.read_csv(data).rename(columns={"row_id": "leaf_0"}).to_csv(renamed, index=False)
        check_predict(str(paths["forest"]), str(renamed), str(tmp_path / "y.csv"),
                      keep=["leaf_0"], pred_leaf=True)
