import numpy as np
import pytest

from distboost.kernels.common import MISSING_BIN
from distboost.kernels.splitting import (
    GradientCriterion,
    SplitParams,
    find_best_splits,
    leaf_value,
    left_stats,
)


def _hist(bins, g, h, n_bins=256):
    """(1 node, 1 feature) histogram from per-row bins, g and h."""
    hist = np.zeros((1, 1, n_bins, 3), np.int64)
    for b, gi, hi in zip(bins, g, h):
        hist[0, 0, b] += (gi, hi, 1)
    return hist


def _best(hist, lam=0.0, gamma=0.0, mcw=0.0, min_count=1, is_cat=False, n_bins=None):
    totals = hist[:, 0].sum(axis=1)
    n_bins = np.array([n_bins or 4]) if n_bins is None or isinstance(n_bins, int) else n_bins
    return find_best_splits(hist, totals, np.ones((1, 1), bool), n_bins, np.array([is_cat]),
                            1.0, 1.0, lam, gamma, mcw, min_count)


def test_seed_003_root_split():
    # D = {(10,-10),(20,7),(25,8),(35,-7)}, f0 = 0.5, squared error (y-f)^2:
    # g = 2(f - y), h = 2; bins 0..3 for x = 10, 20, 25, 35
    y = np.array([-10, 7, 8, -7.0])
    g = (2 * (0.5 - y)).astype(np.int64)
    hist = _hist([0, 1, 2, 3], g, [2, 2, 2, 2])
    gain, _feature, split_bin, _ = _best(hist, n_bins=4)
    assert split_bin[0] == 0  # x <= 15
    assert gain[0] == pytest.approx(120.3333333333, rel=1e-9)
    # the alternatives of seed 003: x < 22.5 has gain 4, x < 30 has 56.33
    for b, expected in ((1, 4.0), (2, 56.3333333333)):
        left = hist[0, 0, : b + 1].sum(axis=0)
        right = hist[0, 0].sum(axis=0) - left
        score = lambda s: s[0] ** 2 / s[1]
        got = 0.5 * (score(left) + score(right) - score(left + right))
        assert got == pytest.approx(expected)


def test_leaf_value_is_newton_step():
    assert leaf_value(21.0, 2.0, 0.0) == -10.5
    assert leaf_value(21.0, 2.0, 1.0) == -7.0
    assert leaf_value(0.0, 0.0, 0.0) == 0.0


def test_regularization_gamma_and_min_child_weight_block_splits():
    hist = _hist([0, 1], [-4, 4], [1, 1])
    gain, *_ = _best(hist, lam=0.0)
    assert gain[0] == pytest.approx(16.0)  # 0.5 * (16 + 16 - 0)
    gain, *_ = _best(hist, lam=1.0)
    assert gain[0] == pytest.approx(8.0)  # 0.5 * (8 + 8)
    gain, *_ = _best(hist, gamma=16.0)
    assert gain[0] == pytest.approx(0.0)
    gain, *_ = _best(hist, mcw=1.5)
    assert gain[0] == -np.inf


def test_missing_values_learn_their_direction():
    # rows in bins 0 (g=-1) and 1 (g=+1); the missing rows look like bin 1
    hist = _hist([0, 0, 1, 1, MISSING_BIN, MISSING_BIN], [-1, -1, 1, 1, 1, 1], [1] * 6)
    _gain, _feature, split_bin, missing_left = _best(hist, n_bins=2)
    assert split_bin[0] == 0 and not missing_left[0]
    hist = _hist([0, 0, 1, 1, MISSING_BIN, MISSING_BIN], [-1, -1, 1, 1, -1, -1], [1] * 6)
    _, _, split_bin, missing_left = _best(hist, n_bins=2)
    assert split_bin[0] == 0 and missing_left[0]
    left, goes_left = left_stats(hist[0, 0], False, 0, True, 1.0, 1.0, 0.0)
    np.testing.assert_array_equal(left, [-4, 4, 4])
    assert goes_left[0] and goes_left[MISSING_BIN] and not goes_left[1]


def test_no_missing_values_send_missing_to_the_larger_child():
    hist = _hist([0, 1, 1, 1], [-3, 1, 1, 1], [1] * 4)
    _, _, split_bin, missing_left = _best(hist, n_bins=2)
    assert split_bin[0] == 0 and not missing_left[0]


def test_categorical_split_groups_categories_by_gradient_ratio():
    # categories 0 and 2 have negative gradients, 1 and 3 positive: the best
    # split puts {0, 2} on one side, which no ordinal split of codes can do
    bins = [0, 0, 1, 1, 2, 2, 3, 3]
    g = [-2, -2, 3, 3, -2, -2, 3, 3]
    hist = _hist(bins, g, [1] * 8)
    gain, _, prefix, _ = _best(hist, is_cat=True, n_bins=4)
    assert prefix[0] == 2
    assert gain[0] == pytest.approx(0.5 * (8**2 / 4 + 12**2 / 4 - 4**2 / 8))
    left, goes_left = left_stats(hist[0, 0], True, 2, False, 1.0, 1.0, 0.0)
    assert set(np.flatnonzero(goes_left[:MISSING_BIN])) == {0, 2}
    np.testing.assert_array_equal(left, [-8, 4, 4])


def test_criterion_object_matches_kernels():
    crit = GradientCriterion(SplitParams(reg_lambda=1.0, min_child_weight=1.0), (2.0, 4.0))
    totals = np.array([-8, 16, 5])
    assert crit.node_value(totals) == pytest.approx(-(-8 / 2) / (16 / 4 + 1))
    assert crit.cover(totals) == 4.0 and crit.count(totals) == 5
    assert crit.splittable(totals)
    assert not crit.splittable(np.array([0, 4, 5]))  # hessian 1 < 2 * min_child_weight


def test_fixed_point_scales_must_be_powers_of_two():
    """The scan multiplies by the scales' inverses, exact only for powers of two."""
    GradientCriterion(SplitParams(), (2.0**-3, 2.0**40))
    with pytest.raises(ValueError, match="powers of two"):
        GradientCriterion(SplitParams(), (3.0, 1.0))


def _constrained(hist, cst, lower=-np.inf, upper=np.inf, lam=0.0):
    totals = hist[:, 0].sum(axis=1)
    gain, _, split_bin, _ = find_best_splits(
        hist, totals, np.ones((1, 1), bool), np.array([4]), np.array([False]), 1.0, 1.0, lam,
        0.0, 0.0, 1, monotonic=np.array([cst], np.int8), lower=[lower], upper=[upper])
    return gain[0], split_bin[0]


def test_a_split_against_its_monotone_constraint_is_refused():
    """Rows in bins 0 and 1 with g = -2 and +2, h = 1, lambda = 0: leaf values +2
    and -2, a decreasing step. Free or decreasing: gain (4 + 4 - 0) / 2 = 4;
    increasing: refused (XGBoost's CalcSplitGain returns -inf)."""
    hist = _hist([0, 1], [-2, 2], [1, 1])
    assert _constrained(hist, 0) == (4.0, 0)
    assert _constrained(hist, -1) == (4.0, 0)
    assert _constrained(hist, 1)[0] == -np.inf


def test_bounds_clip_the_children_values_and_their_gain():
    """The same rows, decreasing, bounds [-1, 1]: values clipped to 1 and -1; the
    gain of value w is -(2 G w + (H + lambda) w^2): 3 on each side, 0 for the
    parent (G = 0), so (3 + 3 - 0) / 2 = 3."""
    hist = _hist([0, 1], [-2, 2], [1, 1])
    assert _constrained(hist, -1, -1.0, 1.0) == (3.0, 0)


def test_a_clipped_parent_value_enters_the_gain():
    """g = -3 and -1, h = 1: parent G = -4, H = 2, value 2, clipped to [0, 1]:
    parent term -(2 (-4) 1 + 2) = 6; children values 3 -> 1 and 1: terms 5 and 1;
    gain (5 + 1 - 6) / 2 = 0, where unconstrained it is (9 + 1 - 8) / 2 = 1."""
    hist = _hist([0, 1], [-3, -1], [1, 1])
    assert _constrained(hist, 0, 0.0, 1.0)[0] == 0.0
    assert _constrained(hist, 0)[0] == 1.0
    assert _best(hist)[0][0] == 1.0


def test_node_values_are_clipped_to_their_bounds():
    crit = GradientCriterion(SplitParams(reg_lambda=1.0), (1.0, 1.0))
    totals = np.array([-9, 2, 2])  # -G / (H + 1) = 3
    assert crit.node_value(totals) == 3.0 == crit.bound_value(totals)
    assert crit.node_value(totals, -1.0, 2.5) == 2.5
    assert crit.node_value(totals, 3.5, np.inf) == 3.5


def _reference_scan(hist_f, n_bins, lam, mcw, min_count):
    """The scan written out: every "bin <= b" (b < n_bins - 1; an empty bin
    b > 0 skipped), missing right then left, the first of the largest gains
    (Chen & Guestrin 2016, eq. 7, in the kernel's operation order)."""
    total, miss = hist_f.sum(axis=0), hist_f[MISSING_BIN]
    score = lambda g, h: g * g / (h + lam)
    parent = score(float(total[0]), float(total[1]))
    best = (-np.inf, -1, False)
    for b in range(n_bins - 1):
        if b > 0 and hist_f[b, 2] == 0:
            continue
        for missing_left in (False, True) if miss[2] else (False,):
            left = hist_f[: b + 1].sum(axis=0) + (miss if missing_left else 0)
            right = total - left
            if min(left[2], right[2]) < min_count or min(left[1], right[1]) < mcw:
                continue
            gain = 0.5 * (score(float(left[0]), float(left[1]))
                          + score(float(right[0]), float(right[1])) - parent)
            if gain > best[0]:
                larger_left = left[2] >= right[2]
                best = (gain, b, missing_left if miss[2] else larger_left)
    return best


@pytest.mark.parametrize("case", [
    # a tie: "bin <= 0" and "bin <= 1" both leave (-3, 1) alone on one side; the first wins
    {"bins": [0, 1, 2], "g": [-3, 3, -3], "h": [1, 1, 1], "n_bins": 3},
    # all gains equal: a flat node (g = 0), the first candidate
    {"bins": [0, 1, 2, 3], "g": [0, 0, 0, 0], "h": [1, 1, 1, 1], "n_bins": 4},
    # missing rows, tried on both sides; empty bins 1 and 3 skipped
    {"bins": [0, 2, 2, 4, MISSING_BIN, MISSING_BIN], "g": [-5, 2, 1, 4, -3, -1],
         "h": [1, 2, 1, 1, 1, 1], "n_bins": 5},
    # missing left and right giving the same gain: right (tried first) wins
    {"bins": [0, 1, MISSING_BIN], "g": [-2, 2, 0], "h": [1, 1, 1], "n_bins": 2},
    # min_child_weight refuses the outer candidates, min_count the first
    {"bins": [0, 1, 2, 3, 4, 5], "g": [-9, -1, 2, 3, -4, 9], "h": [1, 2, 1, 3, 1, 1], "n_bins": 6,
         "mcw": 3, "min_count": 2},
    # nothing passes min_child_weight: -inf, no split
    {"bins": [0, 1, MISSING_BIN], "g": [-1, 1, 5], "h": [1, 1, 1], "n_bins": 2, "mcw": 2},
])
@pytest.mark.parametrize("lam", [0.0, 1.0, 0.3])
def test_the_scan_is_the_candidate_by_candidate_evaluation(case, lam):
    hist = _hist(case["bins"], case["g"], case["h"])
    mcw, min_count = case.get("mcw", 0.0), case.get("min_count", 1)
    gain, _, split_bin, missing_left = _best(hist, lam=lam, mcw=mcw, min_count=min_count,
                                             n_bins=case["n_bins"])
    want = _reference_scan(hist[0, 0], case["n_bins"], lam, mcw, min_count)
    assert (gain[0], split_bin[0], missing_left[0]) == want  # the same gain, to the bit


def test_the_scan_matches_the_written_out_one_on_random_histograms():
    rng = np.random.default_rng(39)
    for _ in range(200):
        n = int(rng.integers(2, 40))
        bins = rng.choice([0, 1, 2, 3, 5, 8, 9, MISSING_BIN], n)
        g, h = rng.integers(-50, 50, n), rng.integers(1, 4, n)
        hist = _hist(bins, g, h)
        lam, mcw, min_count = rng.choice([0.0, 1.0, 0.7]), rng.choice([0.0, 2.0, 5.0]), 1
        gain, _, split_bin, missing_left = _best(hist, lam=lam, mcw=mcw, min_count=min_count,
                                                 n_bins=10)
        want = _reference_scan(hist[0, 0], 10, lam, mcw, min_count)
        assert (gain[0], split_bin[0], missing_left[0]) == want


def test_the_vector_scan_of_wide_sparse_histograms_is_the_written_out_one():
    """Nodes without missing values take the three-pass scan (left sums,
    every gain on vector registers, the first largest): 256-bin features,
    mostly empty, across vector widths; a bin whose rows count 0 but whose G
    does not (a hand-made one) is skipped as an empty bin is."""
    rng = np.random.default_rng(3939)
    for _ in range(100):
        n_bins = int(rng.integers(2, 256))
        n = int(rng.integers(1, 60))
        bins = rng.integers(0, n_bins, n)
        hist = _hist(bins, rng.integers(-50, 50, n), rng.integers(1, 4, n))
        hist[0, 0, int(rng.integers(1, n_bins)), 0] += 7 * (hist[0, 0, :, 2].sum() > 0)
        lam, mcw = rng.choice([0.0, 1.0, 0.7]), rng.choice([0.0, 2.0])
        min_count = int(rng.integers(1, 3))
        gain, _, split_bin, missing_left = _best(hist, lam=lam, mcw=mcw, min_count=min_count,
                                                 n_bins=n_bins)
        want = _reference_scan(hist[0, 0], n_bins, lam, mcw, min_count)
        assert (gain[0], split_bin[0], missing_left[0]) == want
