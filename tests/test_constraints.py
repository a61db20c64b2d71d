"""Monotone and interaction constraints: their resolution against the columns,
the bounds rule checked by hand, and on fitted models: monotone predictions
along every constrained feature from every row of a grid, leaves within their
bounds, interaction sets on every path; the same models on Dask."""

import itertools

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.inputs.constraints import interaction_constraints, monotonic_constraints
from distboost.kernels.bounds import child_bounds, propagate_bounds
from distboost.kernels.common import NODE_DTYPE

NAMES = ["a", "b", "c", "d"]
NUMERIC = np.zeros(4, bool)


# ------------------------------------------------------------- resolution
def test_monotonic_cst_as_array_or_dict_by_name():
    np.testing.assert_array_equal(
        monotonic_constraints([1, 0, -1, 0], NAMES, True, NUMERIC, "E"), [1, 0, -1, 0])
    np.testing.assert_array_equal(
        monotonic_constraints({"c": -1, "a": 1}, NAMES, True, NUMERIC, "E"), [1, 0, -1, 0])
    assert monotonic_constraints([0, 0, 0, 0], NAMES, True, NUMERIC, "E") is None
    assert monotonic_constraints(None, NAMES, True, NUMERIC, "E") is None
    assert monotonic_constraints(np.array([1.0, 0, 0, 0]), NAMES, False, NUMERIC, "E")[0] == 1


@pytest.mark.parametrize("value, named, categorical, pattern", [
    ([1, 0, 0], True, NUMERIC, r"E: monotonic_cst has 3 value\(s\) but X has 4 feature\(s\)"),
    ([1, 2, 0, 0], True, NUMERIC, r"monotonic_cst\[1\] must be -1 .* or 1 .*; got 2"),
    ({"e": 1}, True, NUMERIC, r"monotonic_cst names unknown feature\(s\) \['e'\]"),
    ({"aa": 1}, True, NUMERIC, r"\['aa'\] \(did you mean 'a'\?\)"),
    ({"a": 1}, False, NUMERIC, r"dict by column name, but X has no column names"),
    ({0: 1}, True, NUMERIC, r"maps column names to -1/0/1; got the key 0 \(int\)"),
    ("increasing", True, NUMERIC, r"must be None, an array of -1/0/1"),
    ([1, 0, 0, 0], True, np.array([True, False, False, False]),
     r"constrains categorical feature\(s\) \['a'\]"),
])
def test_monotonic_cst_refusals(value, named, categorical, pattern):
    with pytest.raises(db.InvalidParameterError, match=pattern):
        monotonic_constraints(value, NAMES, named, categorical, "E")


def test_interaction_sets_unlisted_features_form_one_more_set():
    sets = interaction_constraints([[0, "b"]], NAMES, True, "E")
    np.testing.assert_array_equal(sets, [[1, 1, 0, 0], [0, 0, 1, 1]])
    sets = interaction_constraints([{0, 1}, (1, 2)], NAMES, True, "E")  # overlapping: allowed
    np.testing.assert_array_equal(sets, [[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]])
    np.testing.assert_array_equal(interaction_constraints("no_interactions", NAMES, True, "E"),
                                  np.eye(4, dtype=bool))
    assert interaction_constraints("pairwise", NAMES, True, "E").shape == (6, 4)
    assert interaction_constraints(None, NAMES, True, "E") is None


@pytest.mark.parametrize("value, named, pattern", [
    ([[0, 7]], True, r"interaction_cst\[0\] holds feature index 7, outside \[0, 3\]"),
    ([["a", "e"]], True, r"interaction_cst\[0\] names unknown feature\(s\) \['e'\]"),
    ([["a"]], False, r"names feature 'a', but X has no column names"),
    ([[0, "a"]], True, r"interaction_cst\[0\] lists feature\(s\) \['a'\] more than once"),
    ([[0], []], True, r"interaction_cst\[1\] is empty"),
    ([0, 1], True, r"a sequence of feature sets"),
    ("all", True, r"must be None, 'pairwise', 'no_interactions' or a sequence"),
    ([[1.5]], True, r"holds 1.5 \(float\); use column indices or names"),
])
def test_interaction_cst_refusals(value, named, pattern):
    with pytest.raises(db.InvalidParameterError, match=pattern):
        interaction_constraints(value, NAMES, named, "E")


# ------------------------------------------------------------------ bounds
def test_child_bounds_by_hand():
    # values 3 and 1 clipped to [0, 2] -> 2 and 1, midpoint 1.5
    assert child_bounds(0.0, 2.0, 1, 3.0, 1.0) == ((0.0, 1.5), (1.5, 2.0))
    assert child_bounds(0.0, 2.0, -1, 3.0, 1.0) == ((1.5, 2.0), (0.0, 1.5))
    assert child_bounds(0.0, 2.0, 0, 3.0, 1.0) == ((0.0, 2.0), (0.0, 2.0))


def test_propagate_bounds_by_hand():
    """Root splits on feature 0 (+1): children values 4 and 2 -> midpoint 3;
    node 2 splits on feature 1 (free) and passes [3, inf) on; its right child
    has no rows (NaN) and takes its sibling's value."""
    nodes = np.zeros(5, NODE_DTYPE)
    nodes["is_leaf"] = [0, 1, 0, 1, 1]
    nodes["feature"] = [0, -1, 1, -1, -1]
    nodes["left"] = [1, -1, 3, -1, -1]
    nodes["right"] = [2, -1, 4, -1, -1]
    bounds = propagate_bounds(nodes, np.array([0.0, 4.0, 2.0, 5.0, np.nan]),
                              np.array([1, 0], np.int8))
    np.testing.assert_array_equal(bounds, [[-np.inf, np.inf], [-np.inf, 3.0], [3.0, np.inf],
                                           [3.0, np.inf], [3.0, np.inf]])


# ------------------------------------------------------- fitted models
def _data(n=500, seed=0):
    """y increases in a, decreases in c, is free in b and d (with interactions)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(-2, 2, size=(n, 4)), columns=NAMES)
    y = (X.a + 0.5 * np.sin(3 * X.a) - X.c + X.b * X.d + 0.5 * X.a * X.b
         + rng.normal(scale=0.5, size=n))
    return X, y.to_numpy()


GRID = np.linspace(-2.5, 2.5, 7)


def _grid_rows():
    return pd.DataFrame(list(itertools.product(GRID, repeat=4)), columns=NAMES)


def _assert_monotone(predict, constraints):
    """Along each constrained feature, from every row of a 7^4 grid (and beyond
    the data's range), the prediction moves the constrained way only."""
    rows = _grid_rows()
    for name, sign in constraints.items():
        others = [n for n in NAMES if n != name]
        starts = rows.drop_duplicates(others).reset_index(drop=True)
        lines = starts.loc[starts.index.repeat(len(GRID))].reset_index(drop=True)
        lines[name] = np.tile(GRID, len(starts))
        curve = np.asarray(predict(lines)).reshape(len(starts), len(GRID))
        steps = sign * np.diff(curve, axis=1)
        assert steps.min() >= 0.0, (name, steps.min())
        assert (np.abs(np.diff(curve, axis=1)).max(axis=1) > 0).any()  # not flat


def _assert_leaves_within_bounds(trees, learning_rate, monotonic):
    """Every leaf value lies in its bounds (times the learning rate); the two
    children of a constrained split are separated at a common midpoint."""
    for tree in trees:
        nodes, bounds = tree.nodes, tree.bounds
        leaf = nodes["is_leaf"] == 1
        lo, hi = learning_rate * bounds[:, 0], learning_rate * bounds[:, 1]
        assert np.all(nodes["value"][leaf] >= lo[leaf]) and np.all(nodes["value"][leaf] <= hi[leaf])
        for i in np.flatnonzero(~leaf):
            left, right, c = nodes["left"][i], nodes["right"][i], monotonic[nodes["feature"][i]]
            assert bounds[left, 0] >= bounds[i, 0] and bounds[right, 1] <= bounds[i, 1]
            if c > 0:
                assert bounds[left, 1] == bounds[right, 0]
            elif c < 0:
                assert bounds[left, 0] == bounds[right, 1]


MONOTONE = {"a": 1, "c": -1}


@pytest.mark.parametrize("params", [
    {"loss": "squared_error"},
    {"loss": "squared_error", "max_depth": None, "max_leaf_nodes": 12},
    {"loss": "squared_error", "colsample_bynode": 0.5, "subsample": 0.7},
    {"loss": "absolute_error"},
    {"loss": "huber"},
    {"loss": "quantile", "alpha": 0.8},
    {"loss": "squared_error", "leaf_estimation": "line_search"},
    {"loss": "poisson"},
    {"loss": "gamma"},
    {"loss": "tweedie", "tweedie_variance_power": 1.3},
], ids=lambda p: "-".join(f"{v}" for v in p.values()))
def test_gradient_boosting_regressor_is_monotone(params):
    X, y = _data()
    if params["loss"] in ("poisson", "gamma", "tweedie"):
        y = np.exp(y / 3)
    model = db.GradientBoostingRegressor(n_estimators=12, max_depth=params.pop("max_depth", 3),
                                         learning_rate=0.3, monotonic_cst=MONOTONE, **params)
    model.fit(X, y)
    _assert_monotone(model.predict, MONOTONE)
    _assert_leaves_within_bounds([t[0] for t in model.trees_], 0.3, np.array([1, 0, -1, 0]))
    free = db.GradientBoostingRegressor(n_estimators=12, max_depth=model.max_depth,
                                        learning_rate=0.3, **params).fit(X, y)
    assert not any(t[0] == u[0] for t, u in zip(model.trees_, free.trees_))  # it did something


@pytest.mark.parametrize("loss, leaves", [("log_loss", "newton"), ("exponential", "newton"),
                                          ("log_loss", "line_search"),
                                          ("exponential", "line_search")])
def test_gradient_boosting_classifier_is_monotone_in_probability(loss, leaves):
    X, y = _data()
    model = db.GradientBoostingClassifier(loss=loss, n_estimators=12, max_depth=3,
                                          leaf_estimation=leaves,
                                          monotonic_cst=[1, 0, -1, 0]).fit(X, y > 0)
    _assert_monotone(lambda Z: model.predict_proba(Z)[:, 1], MONOTONE)
    _assert_monotone(model.decision_function, MONOTONE)


@pytest.mark.parametrize("cls", [db.RandomForestRegressor, db.RandomForestClassifier])
def test_random_forests_are_monotone(cls):
    X, y = _data()
    regression = cls is db.RandomForestRegressor
    model = cls(n_estimators=8, max_depth=6, monotonic_cst=MONOTONE, random_state=0)
    model.fit(X, y if regression else (y > 0).astype(int))
    _assert_monotone(model.predict if regression else (lambda Z: model.predict_proba(Z)[:, 1]),
                     MONOTONE)
    if regression:
        _assert_leaves_within_bounds(model.estimators_, 1.0, np.array([1, 0, -1, 0]))


def test_all_zero_constraints_change_nothing_to_the_bit():
    X, y = _data()
    plain = db.GradientBoostingRegressor(n_estimators=5, max_depth=3).fit(X, y)
    zeros = db.GradientBoostingRegressor(n_estimators=5, max_depth=3,
                                         monotonic_cst=[0, 0, 0, 0]).fit(X, y)
    assert all(t[0] == u[0] for t, u in zip(plain.trees_, zeros.trees_))


def _paths(tree):
    """The sets of features used on each root-to-leaf path."""
    nodes, out, stack = tree.nodes, [], [(0, frozenset())]
    while stack:
        i, used = stack.pop()
        if nodes["is_leaf"][i]:
            out.append(used)
            continue
        used = used | {int(nodes["feature"][i])}
        stack += [(nodes["left"][i], used), (nodes["right"][i], used)]
    return out


@pytest.mark.parametrize("params", [
    {},
    {"colsample_bynode": 0.6, "colsample_bylevel": 0.8},
    {"max_depth": None, "max_leaf_nodes": 16},
    {"max_depth": None, "max_leaf_nodes": 16, "colsample_bynode": 0.6},
    {"loss": "absolute_error"},
], ids=["depth-wise", "bynode", "best-first", "best-first-bynode", "line-search"])
def test_every_path_stays_within_one_interaction_set(params):
    X, y = _data()
    X["e"] = X.a * X.c  # unlisted: a set of its own
    sets = [{0, 1}, {"c", "d"}]
    model = db.GradientBoostingRegressor(n_estimators=10, max_depth=params.pop("max_depth", 4),
                                         interaction_cst=sets, **params).fit(X, y)
    allowed = [{0, 1}, {2, 3}, {4}]
    paths = [p for t in model.trees_ for p in _paths(t[0])]
    assert all(any(p <= s for s in allowed) for p in paths)
    assert any(len(p) > 1 for p in paths)  # interactions within a set are used
    assert {f for p in paths for f in p} >= {0, 2}  # both sets are used


def test_overlapping_sets_keep_0_and_2_apart():
    X, y = _data()
    model = db.GradientBoostingRegressor(n_estimators=10, max_depth=4,
                                         interaction_cst=[[0, 1], [1, 2]]).fit(X, y)
    paths = [p for t in model.trees_ for p in _paths(t[0])]
    assert not any({0, 2} <= p for p in paths) and not any(3 in p and len(p) > 1 for p in paths)
    assert any({0, 1} <= p for p in paths) and any({1, 2} <= p for p in paths)


def test_monotone_and_interaction_constraints_together():
    X, y = _data()
    model = db.GradientBoostingRegressor(n_estimators=10, max_depth=4, monotonic_cst=MONOTONE,
                                         interaction_cst="no_interactions").fit(X, y)
    assert all(len(p) <= 1 for t in model.trees_ for p in _paths(t[0]))
    _assert_monotone(model.predict, MONOTONE)


@pytest.mark.parametrize("params", [
    {"monotonic_cst": MONOTONE},
    {"monotonic_cst": MONOTONE, "loss": "absolute_error", "subsample": 0.8},
    {"monotonic_cst": MONOTONE, "loss": "huber"},
    {"interaction_cst": [["a", "b"]], "colsample_bynode": 0.5},
], ids=["newton", "line-search-quantile", "line-search-huber", "interactions"])
def test_dask_gives_the_in_process_model(params, dask_client, partitioned):
    import dask.dataframe as dd

    X, y = _data(400)
    est = dict(n_estimators=6, max_depth=3, random_state=1, **params)
    local = db.GradientBoostingRegressor(**est).fit(X, y)
    Xd = dd.from_pandas(X, npartitions=3)
    yd = dd.from_pandas(pd.Series(y), npartitions=3)
    remote = db.GradientBoostingRegressor(client=dask_client, **est).fit(Xd, yd)
    partitioned(4)
    parts = db.GradientBoostingRegressor(**est).fit(X, y)
    for other in (remote, parts):
        assert all(t[0] == u[0] for t, u in zip(local.trees_, other.trees_))


def test_forest_on_dask_gives_the_in_process_forest(dask_client):
    import dask.dataframe as dd

    X, y = _data(400)
    est = {"n_estimators": 4, "max_depth": 5, "random_state": 0, "monotonic_cst": MONOTONE}
    local = db.RandomForestClassifier(**est).fit(X, (y > 0).astype(int))
    remote = db.RandomForestClassifier(client=dask_client, **est).fit(
        dd.from_pandas(X, npartitions=2), dd.from_pandas(pd.Series((y > 0).astype(int)),
                                                         npartitions=2))
    assert all(t == u for t, u in zip(local.estimators_, remote.estimators_))
