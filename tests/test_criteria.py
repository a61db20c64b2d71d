"""Impurity criteria on class-weight histograms: hand-checked splits."""

import numpy as np
import pytest

from distboost.binning import BinMapper
from distboost.kernels.common import MAX_BINS, MISSING_BIN
from distboost.kernels.criteria import ImpurityCriterion, VarianceCriterion

# six points on one feature, one per bin; weights as after some boosting
BINS = np.arange(6)
Y = np.array([0, 0, 1, 0, 1, 1])
W = np.array([3.0, 1, 1, 1, 1, 1])


def class_histogram(bins, y, w, n_classes=2, n_features=1):
    """hist[node=0, feature, bin, (w·onehot, count)] and the node totals."""
    hist = np.zeros((1, n_features, MAX_BINS, n_classes + 1), np.int64)
    for f in range(n_features):
        b = bins if bins.ndim == 1 else bins[f]
        np.add.at(hist[0, f, :, :n_classes], (b, y), w.astype(np.int64))
        np.add.at(hist[0, f, :, n_classes], b, 1)
    return hist, hist[:, 0].sum(axis=1)


def mapper(n_features=1, n_bins=6, categorical=()):
    m = BinMapper(256)
    m.is_categorical_ = np.array([f in categorical for f in range(n_features)])
    m.n_bins_non_missing_ = np.full(n_features, n_bins)
    return m


def best(criterion, hist, totals, m):
    gain, feature, split_bin, missing_left = criterion.best_splits(
        hist, totals, np.ones((1, hist.shape[1]), bool), m)
    return gain[0], feature[0], split_bin[0], missing_left[0]


def test_weighted_gini_stump_on_six_points():
    # parent: c = (5, 3), W = 8, W·Gini = 8 - (25 + 9)/8 = 3.75
    # split after bin 1: left (4, 0) pure; right (1, 3): 4 - 10/4 = 1.5 -> gain 2.25
    # (after bin 3: 6 - 26/6 = 1.667 and 0 -> 2.083; after bin 0: 0 and 2.4 -> 1.35)
    hist, totals = class_histogram(BINS, Y, W)
    crit = ImpurityCriterion(2, "gini")
    gain, feature, split_bin, _ = best(crit, hist, totals, mapper())
    assert (feature, split_bin) == (0, 1)
    assert gain == pytest.approx(2.25)
    left, goes_left = crit.left_stats(hist[0, 0], False, split_bin, False)
    assert left.tolist() == [4, 0, 2]
    assert goes_left[:6].tolist() == [True, True, False, False, False, False]
    assert crit.node_value(totals[0]) == 0.0
    np.testing.assert_allclose(crit.node_vector(totals[0]), [5 / 8, 3 / 8])
    assert crit.cover(totals[0]) == 8.0 and crit.count(totals[0]) == 6


def test_entropy_and_misclassification_gains():
    hist, totals = class_histogram(BINS, Y, W)

    def w_entropy(*c):
        c = np.array([x for x in c if x > 0], float)
        return c.sum() * np.log(c.sum()) - (c * np.log(c)).sum()

    gain, _, split_bin, _ = best(ImpurityCriterion(2, "entropy"), hist, totals, mapper())
    assert split_bin == 1
    assert gain == pytest.approx(w_entropy(5, 3) - w_entropy(4) - w_entropy(1, 3))
    # misclassification: 8 - 5 = 3 at the parent; after bin 1: 0 + (4 - 3) -> gain 2
    gain, _, split_bin, _ = best(ImpurityCriterion(2, "misclassification"), hist, totals, mapper())
    assert (split_bin, gain) == (1, pytest.approx(2.0))


def test_missing_values_go_to_the_better_side():
    bins = np.array([0, 1, 2, MISSING_BIN, MISSING_BIN, 3])
    y = np.array([0, 0, 1, 1, 1, 1])
    hist, totals = class_histogram(bins, y, np.ones(6))
    gain, _, split_bin, missing_left = best(ImpurityCriterion(2, "gini"), hist, totals,
                                             mapper(n_bins=4))
    assert (split_bin, missing_left) == (1, False)  # {0, 1} | {2, 3, missing}: both pure
    assert gain == pytest.approx(6 - (4 + 16) / 6)
    crit = ImpurityCriterion(2, "gini")
    assert crit.has_missing(hist[0, 0]) and crit.count(totals[0]) == 6
    no_missing, _ = class_histogram(bins[[0, 1, 2, 5]], y[[0, 1, 2, 5]], np.ones(4))
    assert not crit.has_missing(no_missing[0, 0])


def test_pure_and_tiny_nodes_are_not_splittable():
    crit = ImpurityCriterion(3, "gini", min_samples_leaf=2)
    assert not crit.splittable(np.array([5, 0, 0, 10]))  # one class
    assert not crit.splittable(np.array([5, 5, 0, 3]))  # fewer than 2 * min_samples_leaf rows
    assert crit.splittable(np.array([5, 5, 0, 4]))


def test_categorical_split_separates_classes_for_two_classes():
    # categories 0..3 with class-1 frequencies 1, 0, 1, 0: best set split {1, 3} | {0, 2}
    bins = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    y = np.array([1, 1, 0, 0, 1, 1, 0, 0])
    hist, totals = class_histogram(bins, y, np.ones(8))
    crit = ImpurityCriterion(2, "gini")
    gain, _, prefix, missing_left = best(crit, hist, totals, mapper(n_bins=4, categorical=(0,)))
    assert gain == pytest.approx(8 - 32 / 8)
    _, goes_left = crit.left_stats(hist[0, 0], True, prefix, missing_left)
    assert sorted(np.flatnonzero(goes_left[:4])) in ([0, 2], [1, 3])


def test_gain_without_improvement_is_rejected():
    # both children keep the parent's proportions: zero gain, not a split
    bins = np.array([0, 0, 1, 1])
    y = np.array([0, 1, 0, 1])
    hist, totals = class_histogram(bins, y, np.ones(4))
    gain, *_ = best(ImpurityCriterion(2, "gini"), hist, totals, mapper(n_bins=2))
    assert gain == -np.inf


def test_variance_criterion_is_squared_error_reduction():
    y = np.array([1.0, 2.0, 3.0, 10.0, 11.0, 12.0])
    bins = np.arange(6)
    hist = np.zeros((1, 1, MAX_BINS, 3), np.int64)
    hist[0, 0, bins, 0] = -y.astype(np.int64)
    hist[0, 0, bins, 1] = 1
    hist[0, 0, bins, 2] = 1
    totals = hist[:, 0].sum(axis=1)
    crit = VarianceCriterion((1.0, 1.0))
    gain, _, split_bin, _ = best(crit, hist, totals, mapper())
    sse = ((y - y.mean()) ** 2).sum() - ((y[:3] - 2) ** 2).sum() - ((y[3:] - 11) ** 2).sum()
    assert split_bin == 2
    assert 2 * gain == pytest.approx(sse)  # the gradient gain carries a factor 1/2
    assert crit.node_value(totals[0]) == pytest.approx(y.mean())


def test_monotone_constraint_on_the_class_1_frequency():
    """Two classes, one numeric feature: bin 0 holds 3 rows of class 1, bin 1
    three of class 0, so the class-1 frequency falls from 1 to 0 along the
    feature. Free or decreasing, the split is found; increasing, it is refused;
    bounds clip the frequencies before the order is compared (both 0.5: no order
    broken)."""
    from distboost.kernels.criteria import find_best_impurity_splits

    hist = np.zeros((1, 1, 256, 3), np.int64)
    hist[0, 0, 0] = (0, 3, 3)
    hist[0, 0, 1] = (3, 0, 3)
    totals = hist[:, 0].sum(axis=1)

    def gain(cst, lower=-np.inf, upper=np.inf):
        return find_best_impurity_splits(hist, totals, np.ones((1, 1), bool), np.array([2]),
                                         np.array([False]), 0, 1, 1e-12, np.array([cst], np.int8),
                                         np.array([lower]), np.array([upper]))[0][0]

    assert gain(0) == gain(-1) == pytest.approx(3.0)  # Gini W·I: 6 - (9 + 9)/6 = 3 -> 0 + 0
    assert gain(1) == -np.inf
    assert gain(1, 0.5, 0.5) == gain(0)
    crit = ImpurityCriterion(2)
    np.testing.assert_allclose(crit.node_vector(np.array([1, 3, 4]), 0.0, 0.6), [0.4, 0.6])
    assert crit.node_value(np.array([1, 3, 4]), 0.0, 0.4) == 0.0
