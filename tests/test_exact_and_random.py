import math

import numpy as np

from distboost.kernels.exact import exact_sum, to_float
from distboost.kernels.rng import random_seed, row_content_hashes, row_uniforms


def test_exact_sum_is_exact_and_order_free():
    rng = np.random.default_rng(0)
    x = rng.normal(size=10_000) * 10.0 ** rng.integers(-20, 20, 10_000)
    expected = math.fsum(x)
    assert to_float(exact_sum(x)) == expected
    parts = np.array_split(rng.permutation(x), 7)
    assert to_float(sum(exact_sum(p) for p in parts)) == expected
    assert to_float(exact_sum(np.array([1e16, 1.0, -1e16]))) == 1.0
    assert exact_sum(np.array([])) == 0


def test_exact_sum_of_many_blocks_is_their_sum():
    """Blocks of ``SUM_BLOCK`` values are added in parallel, each apart: the
    total is that of the blocks summed one by one."""
    from distboost.kernels.exact import SUM_BLOCK

    rng = np.random.default_rng(1)
    x = rng.normal(size=3 * SUM_BLOCK + 17) * 10.0 ** rng.integers(-8, 8, 3 * SUM_BLOCK + 17)
    by_block = sum(exact_sum(x[a:a + SUM_BLOCK]) for a in range(0, len(x), SUM_BLOCK))
    assert exact_sum(x) == by_block
    assert to_float(exact_sum(x)) == math.fsum(x)


def test_row_uniforms_depend_only_on_global_row_ids():
    whole = row_uniforms(7, 3, 0, 1000)
    pieces = np.concatenate([row_uniforms(7, 3, s, 250) for s in range(0, 1000, 250)])
    np.testing.assert_array_equal(whole, pieces)
    assert 0.0 <= whole.min() and whole.max() < 1.0
    assert abs(whole.mean() - 0.5) < 0.05
    assert not np.array_equal(whole, row_uniforms(7, 4, 0, 1000))
    assert not np.array_equal(whole, row_uniforms(8, 3, 0, 1000))


def test_content_hashes_follow_values():
    X = np.array([[1.0, 2.0], [1.0, 2.0], [2.0, 1.0]])
    h = row_content_hashes(X)
    assert h[0] == h[1] != h[2]


def test_content_hashes_mix_each_run_of_missing_values_once():
    from distboost.kernels.rng import ROW_HASH_SEED, gap_word, splitmix64

    def chain(*words):
        h = ROW_HASH_SEED
        for w in words:
            h = splitmix64(np.uint64(h) ^ np.uint64(w))
        return h

    def bits(x):
        return np.float64(x).view(np.uint64)

    nan = np.nan
    X = np.array([[1.0, 2.0, 3.0], [nan, nan, 1.0], [1.0, nan, nan], [nan, 1.0, nan],
                  [1.0, nan, 2.0], [nan, nan, nan]])
    assert row_content_hashes(X).tolist() == [
        chain(bits(1), bits(2), bits(3)), chain(gap_word(2), bits(1)),
        chain(bits(1), gap_word(2)), chain(gap_word(1), bits(1), gap_word(1)),
        chain(bits(1), gap_word(1), bits(2)), chain(gap_word(3))]
    assert len(set(row_content_hashes(X).tolist())) == len(X)


def test_content_hashes_in_blocks_are_each_rows_own():
    """Rows are hashed in parallel blocks of ``HASH_BLOCK``: every row's hash
    is still the hash of that row alone."""
    from distboost.kernels.rng import HASH_BLOCK

    rng = np.random.default_rng(2)
    X = rng.normal(size=(2 * HASH_BLOCK + 5, 4))
    X[rng.random(X.shape) < 0.3] = np.nan
    whole = row_content_hashes(X)
    alone = [row_content_hashes(X[i:i + 1])[0] for i in (0, HASH_BLOCK - 1, HASH_BLOCK,
                                                        2 * HASH_BLOCK + 4)]
    assert whole[[0, HASH_BLOCK - 1, HASH_BLOCK, 2 * HASH_BLOCK + 4]].tolist() == alone
    np.testing.assert_array_equal(row_content_hashes(X.astype(np.float32)),
                                  row_content_hashes(X.astype(np.float32).astype(np.float64)))


def test_random_seed():
    assert random_seed(None) == 0 and random_seed(5) == 5
    assert isinstance(random_seed(np.random.default_rng(1)), int)


def test_gradient_stats_with_and_without_the_count():
    """(g, h, 1) rounds to the nearest unit; (g, h) also lifts a hessian below
    one unit to 1, so that a positive hessian sum means rows are present."""
    from distboost.kernels.fixed_point import gradient_stats

    g = np.array([[0.26, -1.5, 0.0]])
    h = np.array([[0.74, 0.2, 0.0]])
    assert gradient_stats(g, h, (4.0, 4.0)).tolist() == [[[1, 3, 1], [-6, 1, 1], [0, 0, 1]]]
    two = np.empty((1, 3, 2), np.int64)
    assert gradient_stats(g, h, (4.0, 4.0), two).tolist() == [[[1, 3], [-6, 1], [0, 1]]]
