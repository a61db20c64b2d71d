"""The TreeSHAP kernels (distboost.kernels.treeshap): hand-checked trees, exact Shapley
values by enumeration of subsets, the shap package's TreeExplainer, and the
pattern tables equal to the row-by-row computation."""

import itertools
import math

import numpy as np
import pytest

from distboost.kernels import treeshap
from distboost.kernels.common import NODE_DTYPE
from distboost.kernels.tree import bitset_from_mask, pack_trees
from distboost.trees.tree import Tree


def make_tree(rows, bitsets=None):
    """A tree from (feature, threshold, cover, left, right, value, missing_left,
    categorical, cat_index) per node; feature -1 marks a leaf."""
    nodes = np.zeros(len(rows), NODE_DTYPE)
    for k, (f, t, cover, left, right, value, ml, cat, ci) in enumerate(rows):
        nodes[k]["feature"], nodes[k]["threshold"], nodes[k]["cover"] = f, t, cover
        nodes[k]["left"], nodes[k]["right"], nodes[k]["value"] = left, right, value
        nodes[k]["missing_left"], nodes[k]["is_categorical"], nodes[k]["cat_index"] = ml, cat, ci
        nodes[k]["is_leaf"] = f < 0
        nodes[k]["count"] = int(cover)
    return Tree(nodes, bitsets)


def depth_two_tree():
    """x0 <= .5 ? (x1 <= .5 ? 1 : 2) : (x1 <= .5 ? 3 : 4), covers 10 = 6 (2 + 4) + 4 (1 + 3)."""
    leaf = (-1, 0.0)
    return make_tree([
        (0, 0.5, 10, 1, 2, 0.0, 0, 0, -1),
        (1, 0.5, 6, 3, 4, 0.0, 1, 0, -1),
        (1, 0.5, 4, 5, 6, 0.0, 0, 0, -1),
        (*leaf, 2, -1, -1, 1.0, 0, 0, -1), (*leaf, 4, -1, -1, 2.0, 0, 0, -1),
        (*leaf, 1, -1, -1, 3.0, 0, 0, -1), (*leaf, 3, -1, -1, 4.0, 0, 0, -1),
    ])


def explain(trees, X, interactions=False):
    """SHAP values (or interaction values) of the sum of ``trees``, bias last."""
    packed = pack_trees(trees)
    paths = treeshap.tree_paths(packed.nodes, packed.roots)
    values = np.concatenate([t.nodes["value"] for t in trees])[:, None]
    args = (np.ascontiguousarray(X, np.float64), packed, paths, values, np.ones(len(trees)),
            np.zeros(len(trees), np.int64), 1)
    bias = treeshap.expected_values(paths, values).sum()
    if interactions:
        out = treeshap.interaction_values(*args)[:, 0]
        out[:, -1, -1] = bias
    else:
        out = treeshap.shap_values(*args)[:, 0]
        out[:, -1] = bias
    return out


def test_depth_two_tree_by_hand():
    # E f = .6 (2/6 * 1 + 4/6 * 2) + .4 (1/4 * 3 + 3/4 * 4) = 1 + 1.5 = 2.5.
    # x = (0, 0), f = 1: v({0}) = 5/3, v({1}) = .6 * 1 + .4 * 3 = 1.8, so
    # phi_0 = ((5/3 - 2.5) + (1 - 1.8)) / 2 = -49/60, phi_1 = ((1.8 - 2.5) + (1 - 5/3)) / 2 = -41/60.
    # x = (1, 0), f = 3: v({0}) = 3.75: phi_0 = (1.25 + 1.2) / 2, phi_1 = (-.7 - .75) / 2.
    # x = (NaN, NaN): node 0 sends missing right, node 1 left, node 2 right: f = 4,
    # v({0}) = 3.75, v({1}) = .6 * 1 + .4 * 4 = 2.2: phi_0 = (1.25 + 1.8) / 2,
    # phi_1 = (-.3 + .25) / 2.
    X = np.array([[0.0, 0.0], [1.0, 0.0], [np.nan, np.nan]])
    expected = [[-49 / 60, -41 / 60, 2.5], [1.225, -0.725, 2.5], [1.525, -0.025, 2.5]]
    np.testing.assert_allclose(explain([depth_two_tree()], X), expected, rtol=0, atol=1e-15)


def test_depth_two_tree_interactions_by_hand():
    # phi_01 = (v({0, 1}) - v({0}) - v({1}) + v({})) / 2 = (1 - 5/3 - 1.8 + 2.5) / 2 = 1/60;
    # the diagonal holds the rest of each SHAP value.
    out = explain([depth_two_tree()], np.array([[0.0, 0.0]]), interactions=True)[0]
    expected = [[-50 / 60, 1 / 60, 0], [1 / 60, -42 / 60, 0], [0, 0, 2.5]]
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-15)


def test_categorical_stump_follows_its_bitset():
    # codes 0 and 2 go left (-1, cover 4), the rest right (+1, cover 6): E f = .2;
    # NaN and codes outside [0, 255) take the missing side (left here), 7 is a code whose
    # bit is clear (right).
    mask = np.zeros(256, bool)
    mask[[0, 2]] = True
    tree = make_tree([(0, 0.0, 10, 1, 2, 0.0, 1, 1, 0), (-1, 0, 4, -1, -1, -1.0, 0, 0, -1),
                      (-1, 0, 6, -1, -1, 1.0, 0, 0, -1)], bitset_from_mask(mask)[None, :])
    X = np.array([[2.0], [1.0], [7.0], [np.nan], [300.0], [-1.0]])
    out = explain([tree], X)
    np.testing.assert_allclose(out[:, 0], [-1.2, 0.8, 0.8, -1.2, -1.2, -1.2], atol=1e-15)
    np.testing.assert_allclose(out[:, 0] + out[:, 1], tree.predict(X), atol=1e-15)


def test_zero_cover_splits_count_as_halves():
    tree = depth_two_tree()
    tree.nodes["cover"][[2, 5, 6]] = 0.0
    frac = treeshap.zero_fractions(tree.nodes)
    np.testing.assert_allclose(frac, [1, 0.6, 0.0, 2 / 6, 4 / 6, 0.5, 0.5])
    out = explain([tree], np.array([[1.0, 0.0], [0.0, 1.0]]))
    np.testing.assert_allclose(out.sum(axis=1), tree.predict(np.array([[1.0, 0], [0, 1.0]])))


# ------------------------------------------------------------- exact Shapley
def random_tree(rng, n_features, depth, categorical=(), max_codes=6):
    """A random full tree: covers add up, some splits categorical, missing sides random."""
    rows, bitsets = [], []

    def grow(d, cover):
        k = len(rows)
        rows.append(None)
        if d == depth:
            rows[k] = (-1, 0.0, cover, -1, -1, float(rng.normal()), 0, 0, -1)
            return k
        f = int(rng.integers(n_features))
        share = rng.uniform(0.1, 0.9)
        cat = f in categorical
        ci = -1
        if cat:
            ci = len(bitsets)
            bitsets.append(bitset_from_mask(np.r_[rng.random(max_codes) < 0.5,
                                                  np.zeros(256 - max_codes, bool)]))
        left = grow(d + 1, cover * share)
        right = grow(d + 1, cover * (1 - share))
        rows[k] = (f, float(rng.normal()), cover, left, right, 0.0, int(rng.integers(2)),
                   int(cat), ci)
        return k

    grow(0, 100.0)
    bits = np.array(bitsets, np.uint64).reshape(-1, 4)
    return make_tree(rows, bits)


def _goes_left(node, x, bitsets):
    if np.isnan(x):
        return bool(node["missing_left"])
    if node["is_categorical"]:
        code = int(x)
        if not 0 <= code < 255:
            return bool(node["missing_left"])
        return bool((int(bitsets[node["cat_index"], code // 64]) >> (code % 64)) & 1)
    return x <= node["threshold"]


def _expectation(tree, x, known, k=0):
    """E[f(x) | x_S]: Algorithm 1's cover-weighted recursion (v(S) of path-dependent SHAP)."""
    node = tree.nodes[k]
    if node["is_leaf"]:
        return float(node["value"])
    left, right = int(node["left"]), int(node["right"])
    if int(node["feature"]) in known:
        side = left if _goes_left(node, x[node["feature"]], tree.cat_bitsets) else right
        return _expectation(tree, x, known, side)
    c = tree.nodes["cover"]
    return (c[left] * _expectation(tree, x, known, left)
            + c[right] * _expectation(tree, x, known, right)) / c[k]


def exact_shapley(trees, x):
    """phi_i = sum_S |S|! (M - |S| - 1)! / M! (v(S + i) - v(S)), by enumerating subsets."""
    m = len(x)

    def v(known):
        return sum(_expectation(t, x, set(known)) for t in trees)

    phi = np.zeros(m + 1)
    for i in range(m):
        others = [j for j in range(m) if j != i]
        for size in range(m):
            weight = math.factorial(size) * math.factorial(m - size - 1) / math.factorial(m)
            for subset in itertools.combinations(others, size):
                phi[i] += weight * (v(subset + (i,)) - v(subset))
    phi[m] = v(())
    return phi


def test_random_trees_equal_exact_shapley_values():
    rng = np.random.default_rng(3)
    trees = [random_tree(rng, 4, depth, categorical=(3,)) for depth in (1, 3, 4, 5)]
    X = rng.normal(size=(12, 4))
    X[:, 3] = rng.integers(0, 8, 12)
    X[::4, 0] = np.nan
    X[1::5, 3] = np.nan
    ours = explain(trees, X)
    for row, x in zip(ours, X):
        np.testing.assert_allclose(row, exact_shapley(trees, x), rtol=0, atol=1e-12)


def test_tables_equal_the_row_by_row_computation(monkeypatch):
    rng = np.random.default_rng(4)
    trees = [random_tree(rng, 6, 6, categorical=(5,)) for _ in range(5)]
    X = rng.normal(size=(300, 6))
    X[:, 5] = rng.integers(0, 8, 300)
    X[::7, 1] = np.nan
    tabulated = explain(trees, X)
    paths = treeshap.tree_paths(*pack_trees(trees)[:2])
    monkeypatch.setattr(treeshap, "TABLE_BYTES", 8 * 6000)  # one tree's tables at a time
    groups = treeshap.tree_groups(paths, 300)
    assert [g[:2] for g in groups] == [(t, t + 1) for t in range(5)]
    assert all((g[2] >= 0).any() for g in groups)
    np.testing.assert_allclose(explain(trees, X), tabulated, rtol=0, atol=1e-13)
    monkeypatch.setattr(treeshap, "TABLE_BYTES", 8 * 100)  # no tree's tables fit: none
    assert all((g[2] < 0).all() for g in treeshap.tree_groups(paths, 300))
    np.testing.assert_allclose(explain(trees, X), tabulated, rtol=0, atol=1e-13)
    monkeypatch.setattr(treeshap, "TABLE_BYTES", 16 * 2**20)
    monkeypatch.setattr(treeshap, "TABLE_MAX_ELEMENTS", 0)
    assert all((g[2] < 0).all() for g in treeshap.tree_groups(paths, 300))
    np.testing.assert_allclose(explain(trees, X), tabulated, rtol=0, atol=1e-13)


# ------------------------------------------------------------------- shap
def shap_dict(tree):
    """The tree in the shap package's dict format (its rule: left if x <= t)."""
    n = tree.nodes
    leaf = n["is_leaf"] == 1
    left, right = np.where(leaf, -1, n["left"]), np.where(leaf, -1, n["right"])
    return {"children_left": left, "children_right": right,
            "children_default": np.where(n["missing_left"] == 1, left, right),
            "features": np.where(leaf, -2, n["feature"]), "thresholds": n["threshold"],
            "values": n["value"][:, None], "node_sample_weight": n["cover"]}


def test_equal_to_the_shap_package_on_deep_and_missing_value_trees():
    shap = pytest.importorskip("shap")
    rng = np.random.default_rng(5)
    # a chain of 70 splits on 70 features, paths longer than the pattern bits (62): split j
    # (node 2j) sends x_j <= 0 to a leaf (node 2j + 1, 30 % of its cover) and the rest on
    rows, cover = [], 100.0
    for j in range(70):
        rows.append((j, 0.0, cover, 2 * j + 1, 2 * j + 2, 0.0, j % 2, 0, -1))
        rows.append((-1, 0.0, 0.3 * cover, -1, -1, float(j), 0, 0, -1))
        cover *= 0.7
    rows.append((-1, 0.0, cover, -1, -1, -5.0, 0, 0, -1))
    deep = make_tree(rows)
    trees = [deep] + [random_tree(rng, 70, 5) for _ in range(3)]
    X = rng.normal(size=(20, 70)) + 0.4
    X[rng.random(X.shape) < 0.1] = np.nan
    assert np.diff(treeshap.tree_paths(*pack_trees(trees)[:2]).elem_start).max() == 70
    explainer = shap.TreeExplainer({"trees": [shap_dict(t) for t in trees]})
    ours = explain(trees, X)
    # 70 EXTENDs and UNWINDs in different orders round differently by a few 1e-12
    np.testing.assert_allclose(ours[:, :-1], explainer.shap_values(X), rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours[:, -1], explainer.expected_value[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.sum(axis=1), sum(t.predict(X) for t in trees), atol=1e-10)


def test_interactions_equal_the_shap_package():
    shap = pytest.importorskip("shap")
    rng = np.random.default_rng(6)
    trees = [random_tree(rng, 5, 4) for _ in range(4)]
    X = rng.normal(size=(15, 5))
    X[::3, 2] = np.nan
    theirs = shap.TreeExplainer({"trees": [shap_dict(t) for t in trees]}).shap_interaction_values(X)
    ours = explain(trees, X, interactions=True)
    np.testing.assert_allclose(ours[:, :-1, :-1], theirs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.sum(axis=2)[:, :-1], explain(trees, X)[:, :-1], atol=1e-12)
