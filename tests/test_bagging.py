"""Bagging and pasting: bootstrap counts equal resampled rows, pasting,
random subspaces, out-of-bag rules."""

import numpy as np
import pytest

from distboost import BaggingClassifier, BaggingRegressor, NotFittedError, load_model
from distboost.learners.bagged import sample_counts


def grid_data(n=400, seed=0):
    """Integer features with few values, each present many times: binning is
    the same on the data and on any large resample of it."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 8, size=(n, 4)).astype(float)
    y = ((X[:, 0] + X[:, 1] * (X[:, 2] > 3) + rng.integers(0, 4, n)) > 6).astype(int)
    return X, y


def test_bootstrap_counts_equal_training_on_resampled_rows():
    X, y = grid_data()
    seed = 11
    bagged = BaggingClassifier(n_estimators=1, max_depth=6, random_state=seed).fit(X, y)
    counts = sample_counts(seed, 0, 0, len(y), 1.0, True)
    assert 0.3 < np.mean(counts == 0) < 0.45  # about e^-1 of the rows are out of bag
    rows = np.repeat(np.arange(len(y)), counts)
    for j in range(X.shape[1]):
        assert set(X[rows, j]) == set(X[:, j])
    resampled = BaggingClassifier(n_estimators=1, max_depth=6, bootstrap=False)
    resampled.fit(X[rows], y[rows])
    a, b = bagged.estimators_[0], resampled.estimators_[0]
    for field in ("feature", "threshold", "is_leaf", "count", "value"):
        np.testing.assert_array_equal(a.nodes[field], b.nodes[field])
    np.testing.assert_allclose(a.nodes["gain"], b.nodes["gain"], rtol=1e-12)
    np.testing.assert_allclose(a.leaf_values, b.leaf_values, rtol=1e-12)


def test_integer_sample_weights_equal_repeated_rows_without_sampling():
    X, y = grid_data(seed=1)
    reps = np.random.default_rng(0).integers(1, 4, len(y))
    params = {"n_estimators": 1, "bootstrap": False, "max_depth": 5}
    weighted = BaggingClassifier(**params).fit(X, y, sample_weight=reps.astype(float))
    repeated = BaggingClassifier(**params).fit(np.repeat(X, reps, axis=0), np.repeat(y, reps))
    np.testing.assert_array_equal(weighted.predict_proba(X), repeated.predict_proba(X))


def test_pasting_draws_without_replacement():
    counts = sample_counts(5, 3, 0, 10_000, 0.3, False)
    assert set(np.unique(counts)) == {0, 1}
    assert abs(counts.mean() - 0.3) < 0.02
    X, y = grid_data(seed=2)
    model = BaggingClassifier(n_estimators=3, bootstrap=False, max_samples=0.5, random_state=0)
    model.fit(X, y)
    assert all(abs(t.nodes["count"][0] - 200) < 40 for t in model.estimators_)
    with pytest.raises(ValueError, match="bootstrap=True"):
        BaggingClassifier(bootstrap=False, oob_score=True).fit(X, y)


def test_max_samples_as_a_count_and_random_subspaces():
    X, y = grid_data(seed=3)
    model = BaggingClassifier(n_estimators=6, max_samples=100, max_features=0.5, random_state=0)
    model.fit(X, y)
    assert all(len(f) == 2 for f in model.estimators_features_)
    for tree, feats in zip(model.estimators_, model.estimators_features_):
        used = tree.nodes["feature"][tree.nodes["is_leaf"] == 0]
        assert set(used) <= set(feats)
        assert abs(tree.nodes["count"][0] - 100) < 35
    assert len({tuple(f) for f in model.estimators_features_}) > 1


def test_bagged_regressor_oob_and_model_file(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((600, 3))
    y = X[:, 0] * 2 + np.abs(X[:, 1]) + 0.2 * rng.standard_normal(600)
    model = BaggingRegressor(n_estimators=20, oob_score=True, min_samples_leaf=2,
                             random_state=0).fit(X[:300], y[:300])
    assert abs(model.oob_score_ - model.score(X[300:], y[300:])) < 0.1
    model.save_model(tmp_path / "bag.json")
    loaded = load_model(tmp_path / "bag.json")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert [f.tolist() for f in loaded.estimators_features_] == [
        f.tolist() for f in model.estimators_features_]


def test_parameter_errors_are_clear():
    X, y = grid_data()
    with pytest.raises(ValueError, match="max_features"):
        BaggingClassifier(max_features=7).fit(X, y)
    with pytest.raises(ValueError, match="max_samples"):
        BaggingClassifier(max_samples=1.5).fit(X, y)
    with pytest.raises(NotFittedError, match="not fitted"):
        BaggingClassifier().predict(X)
