"""Voting ensembles: hard and soft votes by hand, weighted averaging, lazy
prediction on Dask collections, scikit-learn members, model files."""

import numpy as np
import pandas as pd
import pytest

from distboost import (
    AdaBoostClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    VotingClassifier,
    VotingRegressor,
    load_model,
)

dd = pytest.importorskip("dask.dataframe")


def data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] * X[:, 2], [-0.5, 0.5])
    return pd.DataFrame(X, columns=list("abcd")), y


@pytest.fixture(scope="module")
def fitted():
    X, y = data()
    members = [
        ("forest", RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(X, y)),
        ("ada", AdaBoostClassifier(n_estimators=10, max_depth=2).fit(X, y)),
        ("stumps", AdaBoostClassifier(n_estimators=3).fit(X, y)),
    ]
    return X, y, members


def test_hard_vote_is_the_weighted_majority(fitted):
    X, _, members = fitted
    weights = [1.0, 2.0, 0.5]
    vote = VotingClassifier(members, weights=weights, prefit=True).fit()
    labels = np.stack([m.predict(X) for _, m in members])
    counts = np.stack([((labels == k) * np.array(weights)[:, None]).sum(axis=0) for k in range(3)])
    np.testing.assert_array_equal(vote.predict(X), counts.argmax(axis=0))
    with pytest.raises(AttributeError):
        vote.predict_proba(X)


def test_soft_vote_averages_probabilities(fitted):
    X, y, members = fitted
    vote = VotingClassifier(members, voting="soft", weights=[3, 1, 1], prefit=True).fit()
    expected = sum(w * m.predict_proba(X) for w, (_, m) in zip([3, 1, 1], members)) / 5
    np.testing.assert_allclose(vote.predict_proba(X), expected)
    np.testing.assert_array_equal(vote.predict(X), expected.argmax(axis=1))
    assert vote.score(X, y) > 0.6


def test_fit_trains_copies_and_mixes_with_scikit_learn():
    linear = pytest.importorskip("sklearn.linear_model")
    X, y = data(seed=1)
    forest = RandomForestClassifier(n_estimators=5, random_state=0)
    vote = VotingClassifier([("rf", forest), ("lr", linear.LogisticRegression())], voting="soft")
    vote.fit(X, y)
    assert not hasattr(forest, "trees_")  # the given estimator stays unfitted
    assert hasattr(vote.named_estimators_["rf"], "trees_")
    assert vote.predict_proba(X).shape == (len(y), 3)
    ddf = dd.from_pandas(X, npartitions=2)
    with pytest.raises(TypeError, match="not a distboost estimator"):
        vote.fit(ddf, dd.from_pandas(pd.Series(y), npartitions=2))


def test_prediction_on_dask_is_lazy_and_equal(fitted):
    X, _, members = fitted
    ddf = dd.from_pandas(X, npartitions=3)
    for voting in ("hard", "soft"):
        vote = VotingClassifier(members, voting=voting, prefit=True).fit()
        lazy = vote.predict(ddf)
        assert hasattr(lazy, "dask")
        np.testing.assert_array_equal(lazy.compute(scheduler="sync"), vote.predict(X))


def test_voting_regressor_is_the_weighted_mean(tmp_path):
    X, _ = data(seed=2)
    y = X["a"].to_numpy() * 2 + X["b"].to_numpy() ** 2
    a = RandomForestRegressor(n_estimators=8, random_state=0).fit(X, y)
    b = GradientBoostingRegressor(n_estimators=20, max_depth=3).fit(X, y)
    vote = VotingRegressor([("rf", a), ("gb", b)], weights=[1, 3], prefit=True).fit()
    np.testing.assert_allclose(vote.predict(X), (a.predict(X) + 3 * b.predict(X)) / 4)
    lazy = vote.predict(dd.from_pandas(X, npartitions=2))
    np.testing.assert_allclose(lazy.compute(scheduler="sync"), vote.predict(X))
    vote.save_model(tmp_path / "vote.json")
    loaded = load_model(tmp_path / "vote.json")
    np.testing.assert_array_equal(loaded.predict(X), vote.predict(X))


def test_model_file_round_trip_and_errors(fitted, tmp_path):
    X, y, members = fitted
    vote = VotingClassifier(members, voting="soft", weights=[1, 2, 1], prefit=True).fit()
    vote.save_model(tmp_path / "vote.json")
    loaded = load_model(tmp_path / "vote.json")
    assert list(loaded.named_estimators_) == ["forest", "ada", "stumps"]
    np.testing.assert_array_equal(loaded.predict_proba(X), vote.predict_proba(X))
    with pytest.raises(ValueError, match="not fitted"):
        VotingClassifier([("rf", RandomForestClassifier())], prefit=True).fit()
    other = RandomForestClassifier(n_estimators=2).fit(X, y % 2)
    with pytest.raises(ValueError, match="same labels"):
        VotingClassifier(members + [("other", other)], prefit=True).fit()


def test_scikit_learn_model_selection_sees_classifiers_and_regressors():
    model_selection = pytest.importorskip("sklearn.model_selection")
    from sklearn.base import is_classifier, is_regressor

    X, y = data(seed=3)
    vote = VotingClassifier([("ada", AdaBoostClassifier(n_estimators=5)),
                             ("rf", RandomForestClassifier(n_estimators=5, max_depth=4))])
    assert is_classifier(vote) and is_classifier(vote.estimators[0][1])
    assert is_regressor(VotingRegressor([("rf", RandomForestRegressor())]))
    scores = model_selection.cross_val_score(vote, X, y, cv=3)
    assert scores.mean() > 0.5
