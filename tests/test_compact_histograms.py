"""Histograms on the wire as their non-empty bins (``kernels.compact_histograms``):
exact positions by hand, the dense form back to the bit, sums and siblings of
compact and dense parts equal to the dense ones, memory left zeroed."""

import numpy as np
import pytest

from distboost.kernels import histogram
from distboost.kernels.compact_histograms import (
    CompactHistograms,
    add_into,
    compact,
    is_compact,
    summed,
)


def _hand():
    """2 nodes x 3 features x 4 bins x 2 statistics, 3 bins filled."""
    h = np.zeros((2, 3, 4, 2), np.int64)
    h[0, 1, 2] = (5, 1)  # node 0, feature 1, bin 2: position 1 * 4 + 2 = 6
    h[0, 2, 0] = (0, -3)  # one statistic non-zero fills the bin
    h[1, 0, 3] = (-7, 2)  # node 1, position 3
    return h


def test_positions_and_statistics_by_hand():
    c = compact(_hand())
    assert c.starts.tolist() == [0, 2, 3]
    assert c.keys.tolist() == [6, 8, 3]
    assert c.values.tolist() == [[5, 1], [0, -3], [-7, 2]]
    assert c.shape == (2, 3, 4, 2) and c.dtype == np.int64
    assert c.nbytes == 3 * 8 + 3 * 4 + 3 * 16
    np.testing.assert_array_equal(c.to_dense(), _hand())


def test_over_half_full_stays_dense_and_clear_then_leaves_it_alone():
    h = np.ones((1, 2, 4, 2), np.int64)
    h[0, 0, :2] = 0  # 6 of 8 bins filled
    assert compact(h, clear=True) is h and h.sum() == 12
    assert is_compact(compact(h, max_filled=0.75))
    floats = h.astype(np.float64)
    assert compact(floats, max_filled=1.0) is floats  # not fixed point: as it is


def test_clear_leaves_zeros_behind():
    h = _hand()
    c = compact(h, clear=True)
    assert not h.any()
    np.testing.assert_array_equal(c.to_dense(), _hand())
    with pytest.raises(ValueError, match="C-contiguous"):
        compact(np.asfortranarray(_hand()), clear=True)


def test_sums_and_siblings_of_mixed_parts_equal_the_dense_ones():
    rng = np.random.default_rng(0)
    sparse = np.zeros((3, 4, 256, 3), np.int64)
    filled = rng.random(sparse.shape[:3]) < 0.05
    sparse[filled] = rng.integers(-9, 9, (filled.sum(), 3))
    dense = rng.integers(-9, 9, sparse.shape)
    c = compact(sparse)
    assert isinstance(c, CompactHistograms)
    out = np.empty_like(dense)
    np.testing.assert_array_equal(summed([c, dense, c], out), 2 * sparse + dense)
    np.testing.assert_array_equal(summed([c, c], out), 2 * sparse)
    added = dense.copy()
    add_into(added, c)
    np.testing.assert_array_equal(added, dense + sparse)
    parent = rng.integers(-99, 99, sparse.shape[1:])
    for parts in [(c,), (c, dense), (dense, c, c)]:
        built, other = np.empty_like(parent), np.empty_like(parent)
        histogram.siblings(parts, 2, parent, built, other)
        want = sum(p.to_dense() if is_compact(p) else p for p in parts)[2]
        np.testing.assert_array_equal(built, want)
        np.testing.assert_array_equal(other, parent - want)
