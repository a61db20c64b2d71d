"""What every estimator shares (``ensemble/_base.py``): the arguments ``fit``
declares, and feature importances computed one way and combined as each
estimator says."""

import inspect

import numpy as np
import pytest

import distboost as db
from distboost.inputs.model_schema import estimator_classes
from distboost.kernels.common import NODE_DTYPE
from distboost.kernels.tree import feature_totals


def test_estimators_declare_the_arguments_their_fit_takes():
    for name, cls in estimator_classes().items():
        taken = set(inspect.signature(cls.fit).parameters) - {"self", "X", "y", "sample_weight"}
        assert cls.fit_arguments == taken, name


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X, y


def _normalized(v):
    return v / v.sum()


def test_importances_combine_the_trees_gains_as_each_estimator_says(data):
    X, y = data
    ada = db.AdaBoostClassifier(n_estimators=5, max_depth=2).fit(X, y)
    per_tree = [_normalized(feature_totals(t.nodes, 4)) for t in ada.estimators_]
    expected = np.average(per_tree, axis=0, weights=ada.estimator_weights_)
    np.testing.assert_allclose(ada.feature_importances_, _normalized(expected), rtol=1e-12)

    forest = db.RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    per_tree = [_normalized(feature_totals(t.nodes, 4)) for t in forest.estimators_]
    np.testing.assert_allclose(forest.feature_importances_, _normalized(np.mean(per_tree, 0)),
                               rtol=1e-12)

    gb = db.GradientBoostingClassifier(n_estimators=4, max_depth=2).fit(X, y)
    total = sum(feature_totals(t.nodes, 4) for (t,) in gb.trees_)
    np.testing.assert_allclose(gb.feature_importances_, _normalized(total), rtol=1e-12)
    for est in (ada, forest, gb):
        assert est.feature_importances_.sum() == pytest.approx(1.0)
        assert np.argmax(est.feature_importances_) == 0


def test_feature_totals_by_hand():
    nodes = np.zeros(5, NODE_DTYPE)
    nodes["is_leaf"] = [0, 0, 1, 1, 1]
    nodes["feature"] = [2, 0, 0, 0, 0]
    nodes["gain"] = [3.0, 1.5, 9.0, 9.0, 9.0]  # leaves' gains do not count
    nodes["cover"] = [10.0, 4.0, 1.0, 1.0, 1.0]
    assert feature_totals(nodes, 3).tolist() == [1.5, 0.0, 3.0]
    assert feature_totals(nodes, 3, "split").tolist() == [1.0, 0.0, 1.0]
    assert feature_totals(nodes, 3, "cover").tolist() == [4.0, 0.0, 10.0]
