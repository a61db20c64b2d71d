"""Line-search leaves (ESL Algorithm 10.3): exact weighted order statistics
across partitions, exact leaf minimizers, and what the robust losses buy."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from distboost import GradientBoostingClassifier, GradientBoostingRegressor
from distboost.engine import Engine, InputPlan, LocalExecutor
from distboost.inputs.frames import infer_schema
from distboost.kernels.tree import leaf_indices_binned, pack_trees
from distboost.training import select
from distboost.training.line_search import TargetValues, grouped_exact_sums

# ----------------------------------------------------------------- helpers


def _bounds(n, n_parts):
    return np.linspace(0, n, n_parts + 1).astype(int)


def _engine(X, y, w, n_parts):
    b = _bounds(len(y), n_parts)
    parts = [(X[i:j], y[i:j], w[i:j]) for i, j in itertools.pairwise(b)]
    engine = Engine(LocalExecutor())
    engine.prepare(InputPlan(engine.ex, parts, [], infer_schema(X)), True, 256)
    return engine


def lower_quantile(values, weights, alpha):
    """Reference: the smallest v with W(<= v) >= alpha W (integer weights, exact)."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(np.asarray(weights, np.int64)[order])
    target = Fraction(alpha) * int(cum[-1])
    k = next(i for i, c in enumerate(cum) if c >= target)
    return values[order][k]


def is_pinball_minimizer(r, w, alpha, gamma) -> bool:
    """Subgradient condition: W(r < gamma) <= alpha W <= W(r <= gamma)."""
    w = np.asarray(w, np.int64)
    total = Fraction(alpha) * int(w.sum())
    return int(w[r < gamma].sum()) <= total <= int(w[r <= gamma].sum())


def leaf_of_rows(model, X, round_index):
    tree = model.trees_[round_index][0]
    nodes, roots, bits = pack_trees([tree])
    out = np.empty((1, len(X)), np.int32)
    leaf_indices_binned(model.bin_mapper_.transform(X), nodes, roots, bits, out)
    return tree, out[0]


def sorted_by_target(n, seed=0):
    """Rows sorted by y, so contiguous partitions have different target ranges."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.exp(X[:, 0]) + rng.standard_t(2, n)  # skewed: partition medians don't average out
    order = np.argsort(y)
    return X[order], y[order], rng.integers(1, 4, n).astype(float)[order]


# ------------------------------------------------------ distributed selection
class ByBin:
    """Five queries by the bin of feature 0."""

    def __call__(self, shard, rows, positions):
        return shard.X_binned[:, 0].astype(np.int64) % 5, shard.y, shard.w


@pytest.mark.parametrize(("ship", "ship_total"), [(2048, 1 << 16), (3, 1 << 16), (400, 500)])
def test_selection_is_exact_for_any_partitioning(monkeypatch, ship, ship_total):
    """Ties, weights, heavy tails and signed zeros; with few rows shipped per query
    (or per pass) the bucket passes do the work."""
    monkeypatch.setattr(select, "MAX_SHIP", ship)
    monkeypatch.setattr(select, "MAX_SHIP_TOTAL", ship_total)
    monkeypatch.setattr(select, "MAX_BUCKETS", 64)
    rng = np.random.default_rng(1)
    n = 3000
    X = rng.normal(size=(n, 2))
    y = np.concatenate([rng.standard_cauchy(n - 1000) * 1e3, np.round(rng.normal(size=1000), 1)])
    y[:5] = [1e300, -1e300, 5e-324, -0.0, 0.0]
    w = rng.integers(1, 5, n).astype(float)
    for alpha in (0.5, 0.1, 0.9, 1e-4):
        results = []
        for n_parts in (1, 7):
            engine = _engine(X, y, w, n_parts)
            results.append(select.weighted_quantiles(engine, ByBin(), alpha, 5))
            results.append(select.weighted_quantiles(engine, TargetValues(), alpha, 1))
        q = engine.mapper.transform(X)[:, 0].astype(int) % 5
        expected = [lower_quantile(y[q == k], w[q == k], alpha) for k in range(5)]
        np.testing.assert_array_equal(results[0], expected)
        np.testing.assert_array_equal(results[2], expected)
        assert results[1][0] == results[3][0] == lower_quantile(y, w, alpha)


def test_selection_takes_two_passes_on_typical_data():
    rng = np.random.default_rng(2)
    X, y, w = rng.normal(size=(50_000, 2)), rng.normal(size=50_000), np.ones(50_000)
    engine = _engine(X, y, w, 3)
    calls, apply = [], engine.apply
    engine.apply = lambda fn, name, *a: calls.append(name) or apply(fn, name, *a)
    result = select.weighted_quantiles(engine, TargetValues(), 0.9, 1)
    assert result[0] == lower_quantile(y, w, 0.9)
    assert calls == ["select-range", "select-refine"]


def test_selection_leaves_no_cached_rows(monkeypatch):
    monkeypatch.setattr(select, "MAX_SHIP", 3)
    X, y, w = sorted_by_target(500)
    engine = _engine(X, y, w, 3)
    select.weighted_quantiles(engine, TargetValues(), 0.5, 1)
    assert all(type(g.holder.states["train"]) is select.GroupState for g in engine.groups)


def test_grouped_exact_sums_are_exact():
    values = np.array([1e16, 1.0, -1e16, 3.5, 2.0**-60, 0.0])
    groups = np.array([0, 0, 0, 1, 1, -1])
    sums = grouped_exact_sums(values, groups, 2)
    assert Fraction(sums[0], 1 << 1200) == 1
    assert Fraction(sums[1], 1 << 1200) == Fraction(3.5) + Fraction(2.0**-60)


# ------------------------------------------------------------ leaf values
@pytest.mark.parametrize("loss,alpha", [("absolute_error", 0.5), ("quantile", 0.2),
                                        ("quantile", 0.9)])
def test_leaves_are_exact_minimizers_for_1_and_7_partitions(partitioned, loss, alpha):
    X, y, w = sorted_by_target(1500)
    models = []
    for n_parts in (1, 7):
        partitioned(n_parts)
        models.append(GradientBoostingRegressor(
            loss=loss, alpha=alpha, n_estimators=3, max_depth=3, learning_rate=0.5,
        ).fit(X, y, sample_weight=w))
    one, seven = models
    assert one.base_score_[0] == seven.base_score_[0] == lower_quantile(y, w, alpha)
    b = _bounds(len(y), 7)  # what averaging per-partition quantiles would have given:
    naive = np.mean([lower_quantile(y[i:j], w[i:j], alpha) for i, j in itertools.pairwise(b)])
    assert abs(naive - one.base_score_[0]) > 0.3
    for r in range(3):
        assert one.trees_[r][0] == seven.trees_[r][0]
    staged = [np.full(len(y), one.base_score_[0])] + [p for p in one.staged_predict(X)]
    for r in range(3):
        tree, leaf = leaf_of_rows(one, X, r)
        resid = y - staged[r]
        for j in np.flatnonzero(tree.nodes["is_leaf"]):
            gamma = tree.nodes["value"][j] / 0.5
            rows = leaf == j
            assert gamma == pytest.approx(lower_quantile(resid[rows], w[rows], alpha), abs=1e-12)
            assert is_pinball_minimizer(resid[rows], w[rows], alpha, lower_quantile(
                resid[rows], w[rows], alpha))


def test_huber_leaf_is_median_plus_mean_clipped_deviation(partitioned):
    X, y, w = sorted_by_target(1200, seed=3)
    partitioned(5)
    m = GradientBoostingRegressor(loss="huber", alpha=0.8, n_estimators=1, max_depth=2,
                                  learning_rate=1.0).fit(X, y, sample_weight=w)
    r = y - m.base_score_[0]
    delta = lower_quantile(np.abs(r), w, 0.8)
    tree, leaf = leaf_of_rows(m, X, 0)
    for j in np.flatnonzero(tree.nodes["is_leaf"]):
        rr, ww = r[leaf == j], w[leaf == j]
        med = lower_quantile(rr, ww, 0.5)
        expected = med + np.sum(ww * np.clip(rr - med, -delta, delta)) / ww.sum()
        assert tree.nodes["value"][j] == pytest.approx(expected, rel=1e-12)


def test_weights_count_as_repeated_rows():
    X, y, w = sorted_by_target(400, seed=5)
    rep = w.astype(int)
    Xr, yr = np.repeat(X, rep, axis=0), np.repeat(y, rep)
    for loss in ("absolute_error", "quantile", "huber"):
        kw = {"loss": loss, "alpha": 0.3 if loss == "quantile" else 0.9, "n_estimators": 5,
                  "max_depth": 2, "min_child_weight": 0}
        a = GradientBoostingRegressor(**kw).fit(X, y, sample_weight=w)
        b = GradientBoostingRegressor(**kw).fit(Xr, yr)
        assert a.base_score_[0] == b.base_score_[0]
        np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-9, atol=1e-9)


def test_newton_and_line_search_agree_for_squared_error():
    X, y, w = sorted_by_target(600, seed=7)
    kw = {"n_estimators": 5, "max_depth": 3, "reg_lambda": 0.0, "min_child_weight": 0}
    newton = GradientBoostingRegressor(leaf_estimation="newton", **kw).fit(X, y, sample_weight=w)
    line = GradientBoostingRegressor(leaf_estimation="line_search", **kw).fit(X, y, sample_weight=w)
    for a, b in zip(newton.trees_, line.trees_):
        leaves = a[0].nodes["is_leaf"] == 1
        np.testing.assert_array_equal(a[0].nodes["feature"], b[0].nodes["feature"])
        np.testing.assert_allclose(a[0].nodes["value"][leaves], b[0].nodes["value"][leaves],
                                   rtol=1e-12)


def test_line_search_for_deviance_and_exponential_runs_in_partitions(partitioned):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 3))
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=600), [-0.5, 0.5])
    out = []
    for n_parts in (1, 4):
        partitioned(n_parts)
        out.append(GradientBoostingClassifier(leaf_estimation="line_search", n_estimators=4,
                                              max_depth=2).fit(X, y))
    assert all(a == b for ra, rb in zip(out[0].trees_, out[1].trees_) for a, b in zip(ra, rb))
    assert out[0].score(X, y) > 0.7


# ------------------------------------------------------ what robustness buys
def friedman1(n, rng):
    X = rng.uniform(size=(n, 10))
    f = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    return X, f


def test_robust_losses_beat_squared_error_under_heavy_tailed_outliers():
    rng = np.random.default_rng(0)
    X, f = friedman1(2000, rng)
    y = f + rng.normal(size=2000)
    outliers = rng.random(2000) < 0.1
    y[outliers] += 30 * rng.standard_cauchy(outliers.sum())
    Xt, ft = friedman1(2000, rng)
    kw = {"n_estimators": 60, "max_depth": 3, "learning_rate": 0.2}
    rmse = {}
    for loss in ("squared_error", "absolute_error", "huber"):
        m = GradientBoostingRegressor(loss=loss, **kw).fit(X, y)
        rmse[loss] = float(np.sqrt(np.mean((m.predict(Xt) - ft) ** 2)))
    assert rmse["absolute_error"] < 0.6 * rmse["squared_error"], rmse
    assert rmse["huber"] < 0.6 * rmse["squared_error"], rmse


def test_quantile_predictions_cover_held_out_data():
    rng = np.random.default_rng(4)
    n = 4000
    X = rng.uniform(-1, 1, size=(n + 10000, 3))
    y = 2 * X[:, 0] + (0.5 + np.abs(X[:, 1])) * rng.normal(size=len(X))
    for alpha in (0.1, 0.9):
        m = GradientBoostingRegressor(loss="quantile", alpha=alpha, n_estimators=100, max_depth=2,
                                      learning_rate=0.1).fit(X[:n], y[:n])
        coverage = np.mean(y[n:] <= m.predict(X[n:]))
        assert abs(coverage - alpha) <= 0.02, (alpha, coverage)


def test_exponential_loss_on_esl_example_10_2():
    """ESL 10.1 / Figure 10.2: boosting stumps on 10 Gaussian features."""
    from sklearn.datasets import make_hastie_10_2

    X, y = make_hastie_10_2(n_samples=12000, random_state=1)
    Xtr, ytr, Xte, yte = X[:2000], y[:2000], X[2000:], y[2000:]
    m = GradientBoostingClassifier(loss="exponential", n_estimators=200, max_depth=1,
                                   learning_rate=0.5).fit(Xtr, ytr)
    errors = [np.mean(p != yte) for p in m.staged_predict(Xte)]
    assert errors[0] > 0.4
    assert errors[0] > errors[19] > errors[99] > errors[199]
    assert errors[199] < 0.15


def test_best_first_trees_and_categories_get_exact_leaves_too(partitioned):
    import pandas as pd

    X, y, w = sorted_by_target(900, seed=8)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    frame["d"] = pd.Categorical(np.digitize(X[:, 3], [-1, 0, 1]))
    models = []
    for n_parts in (1, 7):
        partitioned(n_parts)
        models.append(GradientBoostingRegressor(
            loss="quantile", alpha=0.7, n_estimators=2, max_depth=None, max_leaf_nodes=5,
            learning_rate=1.0).fit(frame, y, sample_weight=w))
    assert all(a[0] == b[0] for a, b in zip(models[0].trees_, models[1].trees_, strict=True))
    tree = models[0].trees_[0][0]
    assert tree.n_leaves == 5
    pred = models[0].trees_[0][0].predict(frame.to_numpy(np.float64))
    resid = y - models[0].base_score_[0]
    for value in np.unique(pred):
        rows = pred == value
        assert value == lower_quantile(resid[rows], w[rows], 0.7)


def test_early_stopping_on_the_mean_absolute_error():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(800, 3))
    y = X[:, 0] + rng.standard_t(2, 800)
    m = GradientBoostingRegressor(loss="huber", n_estimators=200, max_depth=2, learning_rate=0.3)
    m.fit(X[:600], y[:600], eval_set=[(X[600:], y[600:])], early_stopping_rounds=5)
    curve = m.evals_result_["validation_0"]["mae"]
    assert m.best_iteration_ is not None and len(m.trees_) == m.best_iteration_ + 1 < 200
    assert curve[m.best_iteration_] == min(curve)
    mae = np.mean(np.abs(y[600:] - m.predict(X[600:])))
    assert mae == pytest.approx(curve[m.best_iteration_])


@pytest.mark.parametrize("loss, alpha", [("absolute_error", 0.5), ("quantile", 0.8)])
def test_monotone_leaves_are_the_exact_minimizers_clipped_to_bounds(partitioned, loss, alpha):
    """y falls in x0, the model must rise in x0. Every node's value is the exact
    weighted alpha-quantile of its rows' residuals (computed here by sorting);
    bounds follow from those values by the midpoint rule from the root down
    (``kernels.bounds.propagate_bounds``), and every leaf is its quantile clipped
    to them, the same with 1 and 7 partitions."""
    from distboost.kernels.bounds import propagate_bounds
    from distboost.training.line_search import node_paths

    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(700, 2))
    y = -2 * X[:, 0] + X[:, 1] + rng.standard_t(3, 700)
    params = {"loss": loss, "alpha": alpha, "n_estimators": 1, "max_depth": 3,
              "learning_rate": 1.0, "monotonic_cst": [1, 0]}
    partitioned(1)
    one = GradientBoostingRegressor(**params).fit(X, y)
    partitioned(7)
    seven = GradientBoostingRegressor(**params).fit(X, y)
    assert one.trees_[0][0] == seven.trees_[0][0]
    tree, leaves = leaf_of_rows(one, X, 0)
    paths = node_paths(tree.nodes)
    residuals = y - one.base_score_[0]
    values = np.full(len(tree.nodes), np.nan)
    for node in range(len(tree.nodes)):
        rows = (paths[leaves] == node).any(axis=1)
        if rows.any():
            values[node] = lower_quantile(residuals[rows], np.ones(rows.sum()), alpha)
    bounds = propagate_bounds(tree.nodes, values, np.array([1, 0], np.int8))
    np.testing.assert_array_equal(tree.bounds, bounds)
    leaf = np.flatnonzero(tree.nodes["is_leaf"] == 1)
    np.testing.assert_array_equal(tree.nodes["value"][leaf],
                                  np.clip(values[leaf], bounds[leaf, 0], bounds[leaf, 1]))
    grid = np.column_stack([np.linspace(-1, 1, 50), np.zeros(50)])
    assert np.all(np.diff(one.predict(grid)) >= 0)


def test_a_monotone_stump_whose_medians_break_the_order_by_hand():
    """base_score 0, x0 in {0, 1}: at x0 = 0, 30 rows at -1 and 70 at 5 (mean sign
    0.4, median 5); at x0 = 1, 10 at -1 and 90 at 1 (mean sign 0.8, median 1).
    The tree, grown on the signs, splits on x0 (0.4 < 0.8: increasing, allowed);
    the medians 5 > 1 break the order, so both leaves meet at the midpoint 3."""
    x = np.r_[np.zeros(100), np.ones(100)][:, None]
    y = np.r_[np.full(30, -1.0), np.full(70, 5.0), np.full(10, -1.0), np.full(90, 1.0)]
    params = {"loss": "absolute_error", "n_estimators": 1, "max_depth": 1, "learning_rate": 1.0,
              "base_score": 0.0}
    free = GradientBoostingRegressor(**params).fit(x, y)
    assert free.predict(np.array([[0.0], [1.0]])).tolist() == [5.0, 1.0]
    model = GradientBoostingRegressor(monotonic_cst=[1], **params).fit(x, y)
    assert model.predict(np.array([[0.0], [1.0]])).tolist() == [3.0, 3.0]
    np.testing.assert_array_equal(model.trees_[0][0].bounds[1:], [[-np.inf, 3.0], [3.0, np.inf]])
