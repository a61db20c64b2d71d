"""Leaf indices: ``apply(X)`` on every tree ensemble (scikit-learn's shapes) and
``predict(X, pred_leaf=True)`` for gradient boosting (XGBoost's layout).

The ids are checked by hand on small trees, against each tree's own walk
(the leaves' values add up to ``predict``'s scores to the bit), against
XGBoost's ``pred_leaf`` on the exported model, and on Dask against the
in-process result."""

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.kernels.common import NODE_DTYPE
from distboost.kernels.tree import bitset_from_mask, leaf_indices, pack_trees
from distboost.trees.tree import Tree


# ------------------------------------------------------------------ by hand
def _hand_tree(categorical: bool) -> Tree:
    """Node 0 splits feature 0 at 0.5 (missing right) into leaf 1 and node 2;
    node 2 splits feature 1 (at 1.0, missing left; or as a category: codes 0
    and 2 left, missing right) into leaves 3 and 4. Nodes are numbered as
    best-first growth numbers them: siblings adjacent, not breadth first."""
    nodes = np.zeros(5, NODE_DTYPE)
    nodes["is_leaf"] = [0, 1, 0, 1, 1]
    nodes["feature"] = [0, -1, 1, -1, -1]
    nodes["threshold"][[0, 2]] = [0.5, 1.0]
    nodes["left"], nodes["right"] = [1, -1, 3, -1, -1], [2, -1, 4, -1, -1]
    nodes["missing_left"][2] = not categorical
    nodes["value"] = [0, 10, 0, 30, 40]
    bits = np.zeros((0, 4), np.uint64)
    if categorical:
        nodes["is_categorical"][2], nodes["cat_index"] = 1, [-1, -1, 0, -1, -1]
        goes_left = np.zeros(256, bool)
        goes_left[[0, 2]] = True
        bits = bitset_from_mask(goes_left)[None, :]
    return Tree(nodes, bits)


def _leaves(trees, X):
    out = np.zeros((len(trees), len(X)), np.int64)
    leaf_indices(np.asarray(X, np.float64), *pack_trees(trees), out)
    return out


def test_hand_tree_leaves_numeric_and_missing():
    X = [[0.2, 9.0], [0.5, 9.0], [0.7, 0.3], [0.7, 1.0], [0.7, 1.5], [np.nan, 0.0],
         [0.9, np.nan]]
    # ties go left; NaN at node 0 goes right, at node 2 left
    np.testing.assert_array_equal(_leaves([_hand_tree(False)], X), [[1, 1, 3, 3, 4, 3, 3]])


def test_hand_tree_leaves_categorical_and_ids_within_each_tree():
    X = [[0.9, 0], [0.9, 1], [0.9, 2], [0.9, 3], [0.9, np.nan], [0.9, 300], [0.1, 2]]
    trees = [_hand_tree(True), _hand_tree(False)]  # the second's ids start at 0 too
    np.testing.assert_array_equal(_leaves(trees, X), [[3, 4, 3, 4, 4, 4, 1],
                                                      [3, 3, 4, 4, 3, 4, 1]])


def test_stump_fitted_by_hand():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    model = db.GradientBoostingRegressor(n_estimators=1, max_depth=1, learning_rate=1.0,
                                         reg_lambda=0.0).fit(X, [0.0, 0.0, 1.0, 1.0])
    leaves = model.apply(np.array([[0.0], [1.0], [2.0], [9.0], [-9.0], [np.nan]]))
    # the split between 1 and 2; missing goes to the larger child, left on a tie
    np.testing.assert_array_equal(leaves[:, :, 0], [[1], [1], [2], [2], [1], [1]])
    assert leaves.shape == (6, 1, 1) and leaves.dtype == np.float64


# ---------------------------------------------- agreement with the trees' walks
def _data(n=400, seed=0):
    """Features that are float32 numbers (XGBoost routes float32), missing
    values, and a categorical column."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n).astype(np.float32).astype(np.float64),
                      "b": rng.normal(size=n).astype(np.float32).astype(np.float64),
                      "c": pd.Categorical(rng.choice(list("pqrs"), n))})
    X.loc[::7, "a"] = np.nan
    X.loc[::11, "c"] = np.nan
    y = X["a"].fillna(0) + (X["c"] == "q") - X["b"] + rng.normal(size=n) / 5
    return X, y.to_numpy(), np.digitize(y, [-0.5, 0.5])


GROWTH = {"depth-wise": {"max_depth": 3}, "best-first": {"max_leaf_nodes": 6, "max_depth": None}}


@pytest.mark.parametrize("growth", GROWTH.values(), ids=GROWTH.keys())
def test_regressor_leaf_values_add_up_to_predict_to_the_bit(growth):
    X, y, _ = _data()
    model = db.GradientBoostingRegressor(n_estimators=6, **growth).fit(X, y)
    leaves = model.apply(X)
    assert leaves.shape == (len(X), 6, 1)
    raw = np.full(len(X), model.base_score_[0])
    for m, (tree,) in enumerate(model.trees_):
        ids = leaves[:, m, 0].astype(np.int64)
        assert tree.nodes["is_leaf"][ids].all()
        raw += tree.nodes["value"][ids]
    np.testing.assert_array_equal(raw, model.predict(X))
    pred_leaf = model.predict(X, pred_leaf=True)
    assert pred_leaf.shape == (len(X), 6) and pred_leaf.dtype == np.float32
    np.testing.assert_array_equal(pred_leaf, leaves[:, :, 0])


def test_a_loaded_model_gives_the_same_leaves(tmp_path):
    X, y, _ = _data(seed=9)
    model = db.GradientBoostingRegressor(n_estimators=3, max_leaf_nodes=5,
                                         max_depth=None).fit(X, y)
    model.save_model(tmp_path / "model.json")
    loaded = db.load_model(tmp_path / "model.json")
    np.testing.assert_array_equal(loaded.apply(X), model.apply(X))
    np.testing.assert_array_equal(loaded.predict(X, pred_leaf=True),
                                  model.predict(X, pred_leaf=True))


def test_multiclass_leaves_per_class_and_xgboost_layout():
    X, _, y = _data(seed=1)
    model = db.GradientBoostingClassifier(n_estimators=4, max_depth=3).fit(X, y)
    leaves = model.apply(X)
    assert leaves.shape == (len(X), 4, 3)
    raw = np.repeat(model.base_score_[None, :], len(X), axis=0)
    for m, round_trees in enumerate(model.trees_):
        for k, tree in enumerate(round_trees):
            raw[:, k] += tree.nodes["value"][leaves[:, m, k].astype(np.int64)]
    np.testing.assert_array_equal(raw, model.decision_function(X))
    # XGBoost's layout: round by round, class by class within a round
    np.testing.assert_array_equal(model.predict(X, pred_leaf=True), leaves.reshape(len(X), 12))


def test_binary_classifier_shapes():
    X, y, _ = _data(seed=2)
    model = db.GradientBoostingClassifier(n_estimators=3, max_depth=2).fit(X, y > 0)
    assert model.apply(X).shape == (len(X), 3, 1)
    assert model.predict(X, pred_leaf=True).shape == (len(X), 3)
    assert model.predict(X).shape == (len(X),)  # predict itself is unchanged
    empty = db.GradientBoostingRegressor(n_estimators=0).fit(X, y)
    assert empty.apply(X).shape == (len(X), 0, 1)
    assert empty.predict(X, pred_leaf=True).shape == (len(X), 0)


def test_early_stopping_keeps_the_leaves_of_the_kept_rounds():
    X, y, _ = _data(seed=3)
    model = db.GradientBoostingRegressor(n_estimators=60, learning_rate=0.5, max_depth=4,
                                         early_stopping_rounds=2)
    model.fit(X[:300], y[:300], eval_set=[(X[300:], y[300:])])
    kept = len(model.trees_)
    assert model.best_iteration_ is not None and kept < 60
    assert model.predict(X, pred_leaf=True).shape == (len(X), kept)
    assert model.apply(X).shape == (len(X), kept, 1)


def test_forests_bagging_and_adaboost_follow_their_trees():
    X, y, yc = _data(seed=4)
    forest = db.RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(X, y)
    leaves = forest.apply(X)
    assert leaves.shape == (len(X), 5) and leaves.dtype == np.int64
    total = np.zeros(len(X))
    for m, tree in enumerate(forest.estimators_):
        total += tree.nodes["value"][leaves[:, m]]
    np.testing.assert_array_equal(total / 5, forest.predict(X))
    clf = db.RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0).fit(X, yc)
    leaves = clf.apply(X)
    proba = np.zeros((len(X), 3))
    for m, tree in enumerate(clf.estimators_):
        proba += 0.25 * tree.leaf_values[leaves[:, m]]
    np.testing.assert_array_equal(proba, clf.predict_proba(X))
    for model in (db.BaggingClassifier(n_estimators=3, max_depth=3, random_state=0),
                  db.BaggingRegressor(n_estimators=3, max_depth=3, random_state=0),
                  db.AdaBoostClassifier(n_estimators=3, max_depth=2)):
        model.fit(X, yc)
        leaves = model.apply(X)
        assert leaves.shape == (len(X), 3)
        matrix = model._matrix(X)
        for m, tree in enumerate(model.estimators_):
            assert tree.nodes["is_leaf"][leaves[:, m]].all()
            np.testing.assert_array_equal(tree.nodes["value"][leaves[:, m]], tree.predict(matrix))


# -------------------------------------------------------------- XGBoost
def test_export_keeps_node_ids_where_siblings_are_pairs():
    from distboost.xgboost_format import node_order

    nodes = _hand_tree(False).nodes  # 0 -> (1, 2), 2 -> (3, 4): not breadth first
    np.testing.assert_array_equal(node_order(nodes), np.arange(5))
    swapped = nodes.copy()  # node 0's children 2 (left) and 1 (right): not a pair
    swapped["left"][0], swapped["right"][0] = 2, 1
    np.testing.assert_array_equal(node_order(swapped), [0, 2, 1, 3, 4])


def _xgboost_leaves(model, X, tmp_path):
    """XGBoost's ``pred_leaf`` on the exported model, whose margins are checked
    too (trees in distboost's node order route as before)."""
    xgb = pytest.importorskip("xgboost")
    path = tmp_path / "model.xgb.json"
    model.save_model(path, format="xgboost")
    booster = xgb.Booster(model_file=str(path))
    data = xgb.DMatrix(X, enable_categorical=True)
    raw = model.decision_function(X) if hasattr(model, "decision_function") else (
        model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X))
    np.testing.assert_allclose(booster.predict(data, output_margin=True), raw, rtol=0, atol=1e-5)
    return booster.predict(data, pred_leaf=True)


@pytest.mark.parametrize("growth", GROWTH.values(), ids=GROWTH.keys())
def test_xgboost_pred_leaf_on_the_export_equals_ours(growth, tmp_path):
    X, y, yc = _data(seed=5)
    reg = db.GradientBoostingRegressor(n_estimators=5, **growth).fit(X, y)
    np.testing.assert_array_equal(_xgboost_leaves(reg, X, tmp_path), reg.predict(X, pred_leaf=True))
    clf = db.GradientBoostingClassifier(n_estimators=3, **growth).fit(X, yc)
    theirs = _xgboost_leaves(clf, X, tmp_path)
    # the export's first round: the priors f_0k as K one-leaf trees
    np.testing.assert_array_equal(theirs[:, :3], 0)
    np.testing.assert_array_equal(theirs[:, 3:], clf.predict(X, pred_leaf=True))


def test_xgboost_pred_leaf_of_exported_forests(tmp_path):
    X, y, yc = _data(seed=6)
    forest = db.RandomForestRegressor(n_estimators=4, max_leaf_nodes=9, random_state=0).fit(X, y)
    np.testing.assert_array_equal(_xgboost_leaves(forest, X, tmp_path), forest.apply(X))
    clf = db.RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0).fit(X, yc)
    # one parallel tree per class and tree, class by class
    np.testing.assert_array_equal(_xgboost_leaves(clf, X, tmp_path), np.tile(clf.apply(X), 3))


# ------------------------------------------------------------------ Dask
def test_dask_leaves_are_lazy_and_equal_in_process(dask_client):
    import dask.array as da
    import dask.dataframe as dd

    X, y, yc = _data(seed=7)
    clf = db.GradientBoostingClassifier(n_estimators=3, max_depth=3).fit(X, yc)
    forest = db.RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    frame = dd.from_pandas(X, npartitions=3)
    for lazy, local in ((clf.apply(frame), clf.apply(X)),
                        (clf.predict(frame, pred_leaf=True), clf.predict(X, pred_leaf=True)),
                        (forest.apply(frame), forest.apply(X))):
        assert isinstance(lazy, da.Array) and lazy.dtype == local.dtype
        np.testing.assert_array_equal(dask_client.compute(lazy).result(), local)
    numeric = X[["a", "b"]].to_numpy()
    reg = db.GradientBoostingRegressor(n_estimators=3, max_depth=3).fit(numeric, y)
    array = da.from_array(numeric, chunks=(150, 1))
    for lazy, local in ((reg.apply(array), reg.apply(numeric)),
                        (reg.predict(array, pred_leaf=True), reg.predict(numeric, pred_leaf=True))):
        assert isinstance(lazy, da.Array) and lazy.shape == local.shape
        np.testing.assert_array_equal(dask_client.compute(lazy).result(), local)


def test_parquet_leaves_are_read_in_their_own_tasks(dask_client, tmp_path):
    """A frame read from Parquet: each file read where its leaves are found."""
    import dask.dataframe as dd

    X, _, yc = _data(seed=10)
    X = X[["a", "b"]]
    for i, rows in enumerate((slice(0, 150), slice(150, 400))):
        X[rows].to_parquet(tmp_path / f"part-{i}.parquet")
    clf = db.GradientBoostingClassifier(n_estimators=2, max_depth=2).fit(X, yc)
    frame = dd.read_parquet(str(tmp_path / "*.parquet"))
    lazy = clf.apply(frame)
    np.testing.assert_array_equal(dask_client.compute(lazy).result(), clf.apply(X))


# --------------------------------------------------------------- bad input
def test_bad_input_is_refused_as_predict_refuses_it():
    X, y, _ = _data(seed=8)
    with pytest.raises(db.NotFittedError, match="is not fitted yet"):
        db.RandomForestRegressor().apply(X)
    reg = db.GradientBoostingRegressor(n_estimators=2, max_depth=2).fit(X, y)
    forest = db.RandomForestRegressor(n_estimators=2, max_depth=2).fit(X, y)
    calls = ((reg.apply, reg), (lambda Z: reg.predict(Z, pred_leaf=True), reg),
             (forest.apply, forest))
    for call, model in calls:
        with pytest.raises(ValueError, match=r"missing feature column\(s\) \['c'\]"):
            call(X[["a", "b"]])
        numbers = np.zeros((3, 2))
        with pytest.raises(ValueError, match="X has 2 features") as refused:
            call(numbers)
        with pytest.raises(ValueError) as predicted:
            model.predict(numbers)
        assert str(refused.value) == str(predicted.value)
