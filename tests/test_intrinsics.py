"""The numba intrinsics of the histogram kernels."""

import numba
import numpy as np

from distboost.kernels.intrinsics import add_2, add_4, add_8, add_pair, prefetch


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


@numba.njit
def _add_runs(out, src, at, frm):
    for k in range(len(at)):
        add_8(out, at[k], src, frm[k])
        add_4(out, at[k] + 8, src, frm[k] + 8)
        add_2(out, at[k] + 12, src, frm[k] + 12)


def test_runs_of_8_4_and_2_add_exactly_where_they_are_told():
    """``dst[i:i + w] += src[j:j + w]``: int64 sums (wrapping as int64 does),
    the 14 neighbours of each index and nothing else."""
    rng = np.random.default_rng(1)
    src = rng.integers(-(2**62), 2**62, 200)
    at, frm = rng.integers(0, 87, 500), rng.integers(0, 186, 500)
    got, want = np.arange(100, dtype=np.int64), np.arange(100, dtype=np.int64)
    _add_runs(got, src, at, frm)
    with np.errstate(over="ignore"):
        for i, j in zip(at, frm):
            want[i:i + 14] += src[j:j + 14]
    np.testing.assert_array_equal(got, want)
