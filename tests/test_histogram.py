import numpy as np

from distboost._common import MISSING_BIN
from distboost.histogram import apply_splits, build_histograms


def _stats(g, h):
    s = np.empty((1, len(g), 3), np.int64)
    s[0, :, 0], s[0, :, 1], s[0, :, 2] = g, h, 1
    return s


def test_hand_checked_histogram():
    # 10 rows, 2 features
    X = np.array([[0, 1, 1, 2, 0, 3, 3, 1, 0, MISSING_BIN],
                  [5, 5, 5, 5, 5, 6, 6, 6, 6, 6]], np.uint8)
    g = np.arange(10)
    h = np.ones(10, np.int64) * 2
    pos = np.zeros((1, 10), np.int32)
    hist = build_histograms(X, _stats(g, h), pos, np.array([[0]], np.int32), 1, np.array([0, 1]))
    assert hist.shape == (1, 2, 256, 3)
    # feature 0, bin 0 holds rows 0, 4, 8
    np.testing.assert_array_equal(hist[0, 0, 0], [0 + 4 + 8, 6, 3])
    np.testing.assert_array_equal(hist[0, 0, 1], [1 + 2 + 7, 6, 3])
    np.testing.assert_array_equal(hist[0, 0, MISSING_BIN], [9, 2, 1])
    np.testing.assert_array_equal(hist[0, 1, 5], [10, 10, 5])
    np.testing.assert_array_equal(hist[0, 1, 6], [35, 10, 5])
    # every feature sums to the node totals
    np.testing.assert_array_equal(hist[0].sum(axis=1), [[45, 20, 10]] * 2)


def test_unselected_features_and_rows_stay_zero():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 10, size=(3, 50)).astype(np.uint8)
    pos = np.zeros((1, 50), np.int32)
    pos[0, :20] = -1  # rows not in the tree (subsampled)
    st = _stats(rng.integers(-5, 5, 50), np.ones(50))
    hist = build_histograms(X, st, pos, np.array([[0]], np.int32), 1, np.array([1]))
    assert not hist[0, 0].any() and not hist[0, 2].any()
    assert hist[0, 1, :, 2].sum() == 30


def test_subtraction_equals_recomputing():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 30, size=(4, 200)).astype(np.uint8)
    st = _stats(rng.integers(-1000, 1000, 200), rng.integers(1, 50, 200))
    pos = np.zeros((1, 200), np.int32)
    root = build_histograms(X, st, pos, np.array([[0]], np.int32), 1, np.arange(4))[0]
    goes_left = np.zeros((1, 256), bool)
    goes_left[0, :12] = True
    child_pos = apply_splits(X, pos, np.array([[0]], np.int32), np.array([2], np.int32), goes_left,
                             np.array([1], np.int32), np.array([2], np.int32))
    slots = np.array([[-1, 0, 1]], np.int32)
    both = build_histograms(X, st, child_pos, slots, 2, np.arange(4))
    np.testing.assert_array_equal(root - both[0], both[1])


def test_children_partition_their_parent():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 256, size=(2, 500)).astype(np.uint8)
    pos = np.zeros((2, 500), np.int32)  # two trees in one batch
    pos[1, ::3] = -1
    before = pos.copy()
    goes_left = np.zeros((2, 256), bool)
    goes_left[0, :100] = True
    goes_left[1, 50:] = True
    split_of_node = np.array([[0], [1]], np.int32)
    new = apply_splits(X, pos, split_of_node, np.array([0, 1], np.int32), goes_left,
                       np.array([1, 1], np.int32), np.array([2, 2], np.int32))
    np.testing.assert_array_equal(new[0] == 1, X[0] < 100)
    np.testing.assert_array_equal(new[0] == 2, X[0] >= 100)
    assert (new[1, ::3] == -1).all()
    kept = np.ones(500, bool)
    kept[::3] = False
    np.testing.assert_array_equal(new[1, kept] == 1, X[1, kept] >= 50)
    np.testing.assert_array_equal(pos, before)  # inputs are never modified


def test_batch_of_trees_with_their_own_statistics():
    X = np.array([[0, 1, 0, 1]], np.uint8)
    stats = np.zeros((2, 4, 3), np.int64)
    stats[0, :, 0] = [1, 2, 3, 4]
    stats[1, :, 0] = [10, 20, 30, 40]
    stats[:, :, 2] = 1
    pos = np.zeros((2, 4), np.int32)
    hist = build_histograms(X, stats, pos, np.array([[0], [1]], np.int32), 2, np.array([0]))
    np.testing.assert_array_equal(hist[0, 0, :2, 0], [4, 6])
    np.testing.assert_array_equal(hist[1, 0, :2, 0], [40, 60])


def test_fused_split_and_build_equals_the_two_steps():
    from distboost.histogram import split_and_build

    rng = np.random.default_rng(3)
    X = rng.integers(0, 40, size=(3, 300)).astype(np.uint8)
    stats = rng.integers(-100, 100, size=(2, 300, 3)).astype(np.int64)
    pos = rng.integers(0, 2, size=(2, 300)).astype(np.int32)  # nodes 0 and 1
    pos[:, ::7] = -1
    goes_left = np.zeros((2, 256), bool)
    goes_left[0, :20] = True
    goes_left[1, 10:] = True
    split_arrays = (np.array([[0, -1], [-1, 1]], np.int32), np.array([1, 2], np.int32), goes_left,
                    np.array([2, 2], np.int32), np.array([3, 3], np.int32))
    slots = np.full((2, 4), -1, np.int32)
    slots[0, 3], slots[1, 2], slots[1, 0] = 0, 1, 2
    fused_pos, fused = split_and_build(X, stats, pos, split_arrays, slots, 3, np.arange(3))
    two_pos = apply_splits(X, pos, *split_arrays)
    two = build_histograms(X, stats, two_pos, slots, 3, np.arange(3))
    np.testing.assert_array_equal(fused_pos, two_pos)
    np.testing.assert_array_equal(fused, two)
    assert fused[0].sum() != 0 and fused[2].sum() != 0


def test_root_kernel_equals_the_general_one():
    from distboost.histogram import root_histograms

    rng = np.random.default_rng(4)
    X = rng.integers(0, 256, size=(5, 400)).astype(np.uint8)
    for n_stats in (3, 4):
        stats = rng.integers(-1000, 1000, size=(2, 400, n_stats)).astype(np.int64)
        pos = np.where(rng.random((2, 400)) < 0.7, 0, -1).astype(np.int32)
        roots = np.array([[0], [1]], np.int32)
        features = np.array([0, 2, 4])
        expected = build_histograms(X, stats, pos, roots, 2, features)
        np.testing.assert_array_equal(root_histograms(X, stats, pos, features), expected)
