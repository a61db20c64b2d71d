"""Continuing training: warm_start with a larger n_estimators, and init_model
(a fitted estimator or a saved model file). Continuing from k rounds gives
the model that training n rounds at once gives, random draws included."""

import numpy as np
import pytest

from distboost import GradientBoostingClassifier, GradientBoostingRegressor, load_model

rng = np.random.default_rng(0)
X = rng.normal(size=(700, 5))
Y = X[:, 0] + np.sin(2 * X[:, 1]) + rng.standard_t(3, 700)
LABELS = (Y > 0.3).astype(int)

CASES = [
    (GradientBoostingRegressor, {"loss": "squared_error", "subsample": 0.7, "colsample_bynode": 0.6}, Y),
    (GradientBoostingRegressor, {"loss": "huber", "subsample": 0.8}, Y),
    (GradientBoostingRegressor, {"loss": "quantile", "alpha": 0.3, "colsample_bylevel": 0.6}, Y),
    (GradientBoostingClassifier, {"loss": "exponential", "subsample": 0.8}, LABELS),
]
IDS = ["squared", "huber", "quantile", "exponential"]


def same_model(a, b):
    assert np.array_equal(a.base_score_, b.base_score_)
    assert len(a.trees_) == len(b.trees_)
    assert all(ta == tb for ra, rb in zip(a.trees_, b.trees_) for ta, tb in zip(ra, rb))


@pytest.mark.parametrize("cls,kw,y", CASES, ids=IDS)
def test_warm_start_adds_rounds_and_equals_training_at_once(cls, kw, y):
    common = dict(max_depth=3, random_state=4, **kw)
    once = cls(n_estimators=6, **common).fit(X, y)
    warm = cls(n_estimators=2, warm_start=True, **common).fit(X, y)
    assert warm.n_estimators_ == 2
    first_trees = list(warm.trees_)
    warm.set_params(n_estimators=6).fit(X, y)
    assert warm.n_estimators_ == 6
    assert all(a == b for ra, rb in zip(first_trees, warm.trees_[:2]) for a, b in zip(ra, rb))
    same_model(once, warm)
    np.testing.assert_array_equal(once.predict(X), warm.predict(X))


def test_warm_start_with_the_same_n_estimators_adds_nothing():
    m = GradientBoostingRegressor(n_estimators=3, max_depth=2, warm_start=True).fit(X, Y)
    trees = list(m.trees_)
    m.fit(X, Y)
    assert m.trees_ == trees


def test_warm_start_cannot_shrink():
    m = GradientBoostingRegressor(n_estimators=3, max_depth=2, warm_start=True).fit(X, Y)
    with pytest.raises(ValueError, match="below the 3 rounds"):
        m.set_params(n_estimators=2).fit(X, Y)


def test_without_warm_start_fit_starts_over():
    m = GradientBoostingRegressor(n_estimators=3, max_depth=2).fit(X, Y)
    m.set_params(n_estimators=4).fit(X, Y)
    assert m.n_estimators_ == 4
    same_model(m, GradientBoostingRegressor(n_estimators=4, max_depth=2).fit(X, Y))


@pytest.mark.parametrize("cls,kw,y", [CASES[1], CASES[3]], ids=["huber", "exponential"])
def test_init_model_from_a_saved_file_continues_training(tmp_path, cls, kw, y):
    common = dict(max_depth=3, random_state=9, **kw)
    once = cls(n_estimators=5, **common).fit(X, y)
    first = cls(n_estimators=2, **common).fit(X, y)
    path = tmp_path / "first.json"
    first.save_model(path)
    more = cls(n_estimators=3, **common).fit(X, y, init_model=str(path))
    assert more.n_estimators_ == 5
    same_model(once, more)
    again = cls(n_estimators=3, **common).fit(X, y, init_model=load_model(path))
    same_model(once, again)


def test_init_model_keeps_its_bins_and_classes():
    first = GradientBoostingClassifier(n_estimators=2, max_depth=2).fit(X, LABELS)
    more = GradientBoostingClassifier(n_estimators=2, max_depth=2).fit(X[:300], LABELS[:300],
                                                                     init_model=first)
    assert more.bin_mapper_ is first.bin_mapper_
    assert np.array_equal(more.classes_, first.classes_)
    assert more.trees_[:2] == first.trees_
