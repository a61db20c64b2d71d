"""scikit-learn's estimator checks (``check_estimator``) for every estimator.

Small ensembles keep the ~60 checks per estimator fast. The one expected
failure is scikit-learn's "sample_weight equals repeated rows" check where
equality cannot hold exactly (scikit-learn marks the same check as an expected
failure for its own forests, bagging and histogram gradient boosting):

* bootstrap samples: a row of weight 3 draws one multiplicity; three repeated
  rows draw three, so the trees differ by design. The same estimators with
  ``bootstrap=False`` are checked too, and pass every check.
* gradient boosting classifiers: on this data several features split the
  weighted rows identically, so their gains tie exactly. Histograms hold
  fixed-point integers: a row of weight 3 is rounded once, its three copies
  three times (and the scale depends on the largest weight), so the tied
  gains differ in their last bits and the tie goes to another feature.
"""

import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import parametrize_with_checks

import distboost as db

SAMPLE_WEIGHT_CHECK = "check_sample_weight_equivalence_on_dense_data"
SPARSE_WEIGHT_CHECK = "check_sample_weight_equivalence_on_sparse_data"  # the same, sparse X
BOOTSTRAP = "a bootstrap draw of a weighted row is not the draws of its repeated copies"
TIES = ("exactly tied splits go to the feature whose fixed-point gain rounds higher; a weighted "
        "row is rounded once, its repeated copies once each")

ESTIMATORS = [
    db.GradientBoostingClassifier(n_estimators=5),
    db.GradientBoostingRegressor(n_estimators=5),
    db.AdaBoostClassifier(n_estimators=5),
    db.RandomForestClassifier(n_estimators=5),
    db.RandomForestClassifier(n_estimators=5, bootstrap=False, max_features=None),
    db.RandomForestRegressor(n_estimators=5),
    db.RandomForestRegressor(n_estimators=5, bootstrap=False),
    db.BaggingClassifier(n_estimators=5),
    db.BaggingClassifier(n_estimators=5, bootstrap=False),
    db.BaggingRegressor(n_estimators=5),
    db.BaggingRegressor(n_estimators=5, bootstrap=False),
    db.VotingClassifier([
        ("ada", db.AdaBoostClassifier(n_estimators=3)),
        ("forest", db.RandomForestClassifier(n_estimators=3, bootstrap=False, max_features=None)),
    ]),
    db.VotingClassifier([
        ("ada", db.AdaBoostClassifier(n_estimators=3)),
        ("forest", db.RandomForestClassifier(n_estimators=3, bootstrap=False, max_features=None)),
    ], voting="soft"),
    db.VotingRegressor([
        ("gb", db.GradientBoostingRegressor(n_estimators=3)),
        ("forest", db.RandomForestRegressor(n_estimators=3, bootstrap=False)),
    ]),
]


def expected_failures(est) -> dict:
    """The sample-weight equivalence check where it cannot hold (see the module doc)."""
    if getattr(est, "bootstrap", False):
        return {SAMPLE_WEIGHT_CHECK: BOOTSTRAP, SPARSE_WEIGHT_CHECK: BOOTSTRAP}
    if isinstance(est, db.GradientBoostingClassifier):
        return {SAMPLE_WEIGHT_CHECK: TIES, SPARSE_WEIGHT_CHECK: TIES}
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


NOT_SKLEARN_TARGETS = {"GradientBoostingSurvivalRegressor"}
"""Estimators whose labels scikit-learn's checks cannot make: survival times are
positive (Cox's signed y is never 0, AFT's bounds are > 0), and the checks draw
targets of any sign. tests/test_survival.py checks them instead (as the ranker's
queries are checked in tests/test_ranking.py)."""


def test_every_public_estimator_is_checked():
    checked = {type(e).__name__ for e in ESTIMATORS}
    public = {n for n in db.__all__ if n.endswith(("Classifier", "Regressor"))}
    assert checked == public - NOT_SKLEARN_TARGETS
    assert NOT_SKLEARN_TARGETS <= public


@pytest.mark.parametrize("name", sorted(NOT_SKLEARN_TARGETS))
def test_estimators_outside_the_checks_clone_and_set_params(name):
    from sklearn.base import clone

    est = getattr(db, name)(n_estimators=3)
    copy = clone(est)
    assert copy.get_params() == est.get_params() and copy is not est
    assert copy.set_params(max_depth=2).max_depth == 2


@pytest.mark.parametrize("cls", sorted({type(e) for e in ESTIMATORS}, key=lambda c: c.__name__),
                         ids=lambda c: c.__name__)
def test_explicit_signature_and_every_parameter_documented(cls):
    import inspect
    import re

    params = inspect.signature(cls.__init__).parameters.values()
    assert all(p.kind != p.VAR_KEYWORD for p in params)  # help(), IDEs, get_params see them
    section = cls.__doc__.split("Parameters\n    ----------")[1].split("Attributes")[0]
    documented = set()
    for line in section.splitlines():
        if m := re.match(r"^    ([\w, ]+) :", line):
            documented |= {n.strip() for n in m.group(1).split(",")}
    assert {p.name for p in params if p.name != "self"} <= documented
