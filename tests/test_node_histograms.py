"""The compiled grower's node histograms (``kernels.node_histograms``): the
subtraction over the bins that hold rows. That the grower's trees do not
depend on what the other bins hold is ``test_local_grower``'s (its memory
comes filled with junk)."""

import numpy as np
import pytest

from distboost.kernels.common import MISSING_BIN
from distboost.kernels.node_histograms import PARALLEL_MIN_WORK, subtract_pairs, used_bins


@pytest.mark.parametrize("n_pairs", [1, 40])
def test_subtraction_covers_each_features_own_bins_and_the_missing_bin(n_pairs):
    """pool[into] = pool[parent] - pool[built] on a numeric feature's first
    n_bins bins and bin 255, on every bin below 255 of a categorical one; the
    rest of ``into`` as it was, parents and built ones untouched. One pair on
    this thread, 40 pairs of 10 features x 3 statistics (312k entries) on the threads."""
    rng = np.random.default_rng(0)
    pool = rng.integers(-2**40, 2**40, size=(3 * n_pairs, 10, 260, 3))
    before = pool.copy()
    sub = np.arange(3 * n_pairs).reshape(n_pairs, 3)
    n_bins = np.array([255, 1, 2, 17, 254, 100, 3, 9, 200, 40])
    is_cat = np.zeros(10, bool)
    is_cat[[2, 7]] = True
    assert (n_pairs * pool[0].size >= PARALLEL_MIN_WORK) == (n_pairs == 40)
    subtract_pairs(pool, sub, n_pairs == 40, n_bins, is_cat)
    for f in range(10):
        used = used_bins(n_bins, is_cat, f)
        assert used == (MISSING_BIN if is_cat[f] else n_bins[f])
        held = np.union1d(np.arange(used), [MISSING_BIN])
        rest = np.setdiff1d(np.arange(260), held)
        want = before[sub[:, 1], f] - before[sub[:, 2], f]
        np.testing.assert_array_equal(pool[sub[:, 0], f][:, held], want[:, held])
        np.testing.assert_array_equal(pool[sub[:, 0], f][:, rest], before[sub[:, 0], f][:, rest])
    np.testing.assert_array_equal(pool[sub[:, 1:]], before[sub[:, 1:]])
