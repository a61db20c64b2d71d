"""Tests of distboost.inspection on hand-built trees with exact numbers, and on
the real estimators when the core library imports."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from distboost.inspection import (
    ice_curves,
    importance_frame,
    partial_dependence,
    relative_importance,
    tree_partial_dependence,
)
from distboost.kernels.common import NODE_DTYPE


def node(**fields):
    return fields


def make_tree(rows, bitsets=None):
    """rows: dicts with the node fields that matter; leaves have no 'feature'."""
    nodes = np.zeros(len(rows), dtype=NODE_DTYPE)
    for i, row in enumerate(rows):
        nodes[i]["feature"], nodes[i]["left"], nodes[i]["right"] = -1, -1, -1
        nodes[i]["is_leaf"] = "feature" not in row
        for key, value in row.items():
            nodes[i][key] = value
    if bitsets is None:
        bitsets = np.zeros((0, 4), dtype=np.uint64)
    return SimpleNamespace(nodes=nodes, cat_bitsets=bitsets)


def predict_tree(tree, X):
    out = np.empty(len(X))
    for r, x in enumerate(X):
        i = 0
        while not tree.nodes[i]["is_leaf"]:
            node = tree.nodes[i]
            v = x[node["feature"]]
            if np.isnan(v):
                left = bool(node["missing_left"])
            elif node["is_categorical"]:
                c = int(v)
                left = bool((int(tree.cat_bitsets[node["cat_index"], c // 64]) >> (c % 64)) & 1)
            else:
                left = v <= node["threshold"]
            i = node["left"] if left else node["right"]
        out[r] = tree.nodes[i]["value"]
    return out


class FakeEnsemble:
    """The fitted attributes of a distboost boosted ensemble, nothing more."""

    def __init__(self, trees, base_score, n_features, names=None, categories=None):
        self.trees_ = trees
        self.base_score_ = np.asarray(base_score, dtype=np.float64)
        self.n_features_in_ = n_features
        self.feature_names_in_ = names
        is_cat = np.zeros(n_features, dtype=bool)
        for j in categories or {}:
            is_cat[j] = True
        self.bin_mapper_ = SimpleNamespace(is_categorical_=is_cat, categories_=categories or {})

    def decision_function(self, X):
        if isinstance(X, pd.DataFrame):
            X = np.column_stack(
                [
                    X[c].cat.codes.where(X[c].notna(), np.nan).to_numpy(np.float64)
                    if isinstance(X[c].dtype, pd.CategoricalDtype)
                    else X[c].to_numpy(np.float64)
                    for c in X.columns
                ]
            )
        raw = np.tile(self.base_score_, (len(X), 1))
        for group in self.trees_:
            for k, tree in enumerate(group):
                raw[:, k] += predict_tree(tree, np.asarray(X, dtype=np.float64))
        return raw[:, 0] if raw.shape[1] == 1 else raw


def three_leaf_tree():
    """x0 <= 0.5 ? 1.0 : (x1 <= 2 ? 2.0 : 3.0); 10 rows: 4 left, 3 + 3 right."""
    return make_tree(
        [
            node(feature=0, threshold=0.5, left=1, right=2, count=10, cover=10, gain=4.0),
            node(value=1.0, count=4, cover=4),
            node(feature=1, threshold=2.0, left=3, right=4, count=6, cover=6, gain=1.0),
            node(value=2.0, count=3, cover=3),
            node(value=3.0, count=3, cover=3),
        ]
    )


def test_recursion_hand_built_tree_exact():
    tree = three_leaf_tree()
    # On x0 the x1 split is averaged 3:3; on x1 the root is averaged 4:6.
    np.testing.assert_array_equal(
        tree_partial_dependence(tree, [0], np.array([[0.0], [1.0]])), [1.0, 2.5]
    )
    np.testing.assert_allclose(
        tree_partial_dependence(tree, [1], np.array([[1.0], [3.0]])), [1.6, 2.2]
    )
    np.testing.assert_array_equal(
        tree_partial_dependence(tree, [0, 1], np.array([[0.0, 9.0], [1.0, 1.0], [1.0, 3.0]])),
        [1.0, 2.0, 3.0],
    )


def test_partial_dependence_adds_base_score_and_uses_grid():
    est = FakeEnsemble([[three_leaf_tree()]], [0.5], 2, names=["a", "b"])
    X = np.array([[0.0, 1.0], [1.0, 3.0]])
    pd_ = partial_dependence(est, X, "b", grid=[[1.0, 3.0]], method="recursion")
    assert pd_.features == (1,) and pd_.feature_names == ["b"]
    np.testing.assert_allclose(pd_.average, [[2.1, 2.7]])


def test_missing_values_follow_default_direction():
    tree = make_tree(
        [
            node(feature=0, threshold=0.0, missing_left=0, left=1, right=2, count=2, gain=1),
            node(value=-1.0, count=1),
            node(value=1.0, count=1),
        ]
    )
    out = tree_partial_dependence(tree, [0], np.array([[np.nan], [-5.0]]))
    np.testing.assert_array_equal(out, [1.0, -1.0])


def test_categorical_split_by_bitset():
    bitsets = np.zeros((1, 4), dtype=np.uint64)
    bitsets[0, 0] = (1 << 0) | (1 << 2)  # codes 0 and 2 go left
    tree = make_tree(
        [
            node(feature=0, is_categorical=1, cat_index=0, left=1, right=2, count=4, gain=2),
            node(value=10.0, count=3),
            node(value=20.0, count=1),
        ],
        bitsets,
    )
    est = FakeEnsemble([[tree]], [0.0], 1, names=["colour"], categories={0: ["r", "g", "b"]})
    X = pd.DataFrame({"colour": pd.Categorical(["r", "g", "b", "b"], categories=["r", "g", "b"])})
    rec = partial_dependence(est, X, "colour", method="recursion")
    brute = partial_dependence(est, X, "colour", method="brute")
    assert list(rec.grid_values[0]) == ["r", "g", "b"] and rec.categorical == [True]
    np.testing.assert_array_equal(rec.average, [[10.0, 20.0, 10.0]])
    np.testing.assert_array_equal(brute.average, rec.average)


def test_importance_eq_10_43_average_and_scale():
    second = make_tree(
        [
            node(feature=1, threshold=0.0, left=1, right=2, count=10, cover=5, gain=6.0),
            node(value=0.0, count=5, cover=2),
            node(value=1.0, count=5, cover=3),
        ]
    )
    est = FakeEnsemble([[three_leaf_tree()], [second]], [0.0], 3)
    # gain: x0 = (4 + 0) / 2, x1 = (1 + 6) / 2 -> scaled to x1 = 100; x2 never split.
    np.testing.assert_allclose(relative_importance(est), [200 / 3.5, 100.0, 0.0])
    np.testing.assert_allclose(relative_importance(est, "split"), [50.0, 100.0, 0.0])
    np.testing.assert_allclose(
        relative_importance(est, "cover"), np.array([100.0, 110.0, 0.0]) / 1.1
    )
    frame = importance_frame(est)
    assert list(frame.index) == ["x1", "x0", "x2"]
    assert frame.loc["x1", "n_splits"] == 2


def test_importance_multiclass_averages_over_classes():
    stump = lambda f, g: make_tree(
        [
            node(feature=f, threshold=0.0, left=1, right=2, count=2, cover=2, gain=g),
            node(value=0.0, count=1),
            node(value=1.0, count=1),
        ]
    )
    est = FakeEnsemble([[stump(0, 2.0), stump(1, 8.0)]], [0.0, 0.0], 2)
    # class 0: x0 = 2; class 1: x1 = 8; averaged over K = 2: (1, 4) -> (25, 100)
    np.testing.assert_allclose(relative_importance(est), [25.0, 100.0])
    with pytest.raises(ValueError, match="kind"):
        relative_importance(est, "weight")


def stump_ensemble(X, n_trees, seed):
    """Random stumps whose node counts are those of X: an additive model."""
    rng = np.random.default_rng(seed)
    trees = []
    for _ in range(n_trees):
        f = int(rng.integers(X.shape[1]))
        t = float(np.quantile(X[:, f], rng.uniform(0.1, 0.9)))
        n_left = int((X[:, f] <= t).sum())
        trees.append(
            [
                make_tree(
                    [
                        node(feature=f, threshold=t, left=1, right=2, count=len(X), gain=1.0),
                        node(value=rng.normal(), count=n_left),
                        node(value=rng.normal(), count=len(X) - n_left),
                    ]
                )
            ]
        )
    return FakeEnsemble(trees, [0.3], X.shape[1])


def test_recursion_equals_brute_for_stumps():
    X = np.random.default_rng(0).normal(size=(200, 3))
    est = stump_ensemble(X, 30, seed=1)
    for features in (0, 2, (0, 1)):
        rec = partial_dependence(est, X, features, grid_resolution=7, method="recursion")
        brute = partial_dependence(est, X, features, grid_resolution=7, method="brute")
        np.testing.assert_allclose(rec.average, brute.average, rtol=0, atol=1e-12)
        assert rec.average.shape == (1,) + tuple(len(g) for g in rec.grid_values)


def test_brute_on_dask_dataframe_sums_partitions():
    dd = pytest.importorskip("dask.dataframe")
    X = np.random.default_rng(2).normal(size=(120, 3))
    est = stump_ensemble(X, 10, seed=3)
    frame = pd.DataFrame(X, columns=["x0", "x1", "x2"])
    ddf = dd.from_pandas(frame, npartitions=4)
    grid = [np.linspace(-1, 1, 5)]
    local = partial_dependence(est, frame, 1, grid=grid, method="brute")
    dist = partial_dependence(est, ddf, 1, grid=grid, method="brute")
    np.testing.assert_allclose(dist.average, local.average, rtol=0, atol=1e-12)


def test_ice_curves_average_is_brute_partial_dependence():
    X = np.random.default_rng(4).normal(size=(50, 2))
    est = stump_ensemble(X, 8, seed=5)
    ice = ice_curves(est, X, 0, grid_resolution=6, n_samples=50)
    brute = partial_dependence(est, X, 0, grid=[ice.grid_values], method="brute")
    assert ice.curves.shape == (1, 50, len(ice.grid_values))
    np.testing.assert_allclose(ice.average, brute.average, atol=1e-12)
    centered = ice_curves(est, X, 0, grid_resolution=6, n_samples=50, centered=True)
    np.testing.assert_array_equal(centered.curves[:, :, 0], 0.0)


def _library():
    db = pytest.importorskip("distboost")
    if not hasattr(db, "GradientBoostingRegressor"):
        pytest.skip("distboost estimators not importable yet")
    return db


def test_library_stumps_recursion_equals_brute():
    db = _library()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=300)
    reg = db.GradientBoostingRegressor(n_estimators=20, max_depth=1, learning_rate=0.3)
    reg.fit(X, y)
    for features in (0, (1, 2)):
        rec = partial_dependence(reg, X, features, grid_resolution=5, method="recursion")
        brute = partial_dependence(reg, X, features, grid_resolution=5, method="brute")
        np.testing.assert_allclose(rec.average, brute.average, rtol=0, atol=1e-9)
    imp = relative_importance(reg)
    assert imp.max() == 100.0 and imp[2] < imp[1]


def test_library_classifier_recursion_shape():
    db = _library()
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes
    clf = db.GradientBoostingClassifier(n_estimators=5, max_depth=2).fit(X, y)
    pd_ = partial_dependence(clf, X, 0, grid_resolution=4)
    assert pd_.average.shape == (3, 4)
    assert np.argmax(pd_.average[:, 0]) == 0 and np.argmax(pd_.average[:, -1]) == 2


def test_non_additive_models_get_brute_force():
    db = _library()
    if not hasattr(db, "RandomForestClassifier") or not hasattr(db, "AdaBoostClassifier"):
        pytest.skip("forests / AdaBoost not in this version")
    from distboost.inspection import supports_recursion

    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    boosted = db.GradientBoostingClassifier(n_estimators=3, max_depth=2).fit(X, y)
    assert supports_recursion(boosted, X)
    for est in (
        db.RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y),
        db.AdaBoostClassifier(n_estimators=3, random_state=0).fit(X, y),
    ):
        assert not supports_recursion(est, X)
        auto = partial_dependence(est, X, 0, grid_resolution=3)
        assert auto.method == "brute"
        with pytest.raises(ValueError, match="use method='brute'"):
            partial_dependence(est, X, 0, method="recursion")
