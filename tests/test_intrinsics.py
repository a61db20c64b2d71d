"""The numba intrinsics of the histogram kernels."""

import numba
import numpy as np

from distboost.kernels.intrinsics import add_pair, prefetch


@numba.njit
def _add_pairs(out, index, a, b):
    for k in range(len(index)):
        prefetch(out, index[k])
        add_pair(out, index[k], a[k], b[k])


def test_add_pair_adds_two_neighbours_exactly():
    out = np.array([1, 2, 3, 4, 5, 6], np.int64)
    _add_pairs(out, np.array([0, 4, 0, 3]), np.array([10, -7, 2**62, 1]),
               np.array([-20, 2**40, -(2**62), 100]))
    assert out.tolist() == [1 + 10 + 2**62, 2 - 20 - 2**62, 3, 4 + 1, 5 - 7 + 100, 6 + 2**40]


def test_add_pair_equals_scalar_adds_on_random_pairs():
    rng = np.random.default_rng(0)
    index = rng.integers(0, 999, 10_000)
    a, b = (rng.integers(-(2**50), 2**50, 10_000) for _ in range(2))
    got, want = np.zeros(1000, np.int64), np.zeros(1000, np.int64)
    _add_pairs(got, index, a, b)
    np.add.at(want, index, a)
    np.add.at(want, index + 1, b)
    np.testing.assert_array_equal(got, want)
