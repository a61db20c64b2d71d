"""Codes without each feature's most frequent code (``kernels.mode_codes``):
the stored entries by hand, histograms equal to the dense codes' to the bit,
and the grower's trees unchanged when it builds histograms from them."""

import numba
import numpy as np
import pytest

from distboost.binning import BinMapper
from distboost.engine.buffers import Buffers
from distboost.kernels import local_grower
from distboost.kernels.histogram import RowPartition, columns, fill_histograms
from distboost.kernels.local_grower import PAD_BINS
from distboost.kernels.mode_codes import (
    COUNT_ROWS,
    MODE_CODES_MAX_FILL,
    ModeCodes,
    by_modes,
    mode_codes,
)
from distboost.kernels.sparse_codes import SparseCodes
from distboost.kernels.splitting import GradientCriterion, SplitParams
from distboost.trees.params import GrowthParams


def test_entries_by_hand():
    """Feature 0's mode is code 0, feature 1's code 7, feature 2's code 1 (five
    rows of six each). Stored: feature x 256 + code of every other entry, row
    by row: 3 of 18 entries."""
    X = np.array([[0, 7, 1], [0, 7, 1], [0, 7, 2], [3, 7, 1], [0, 5, 1], [0, 7, 1]], np.uint8)
    m = mode_codes(X)
    assert m.mode.tolist() == [0, 7, 1] and m.n_features == 3
    assert m.top.tolist() == [4, 8, 3]  # 1 + the largest code held (missing aside)
    assert mode_codes(np.array([[255, 0], [255, 0]], np.uint8)).top.tolist() == [0, 1]
    assert m.indptr.tolist() == [0, 0, 0, 1, 2, 3, 3]
    assert m.entries.tolist() == [2 * 256 + 2, 3, 256 + 5]
    assert m.entries.dtype == np.uint16


def test_only_data_with_few_stored_entries_gets_them_and_a_shard_keeps_them():
    rng = np.random.default_rng(0)
    spread = rng.integers(0, 200, (300, 5)).astype(np.uint8)
    assert mode_codes(spread) is None
    mostly = np.where(rng.random((300, 5)) < MODE_CODES_MAX_FILL - 0.1, spread, 0).astype(np.uint8)
    buffers = Buffers()
    kept = mode_codes(mostly, buffers)
    assert isinstance(kept, ModeCodes) and mode_codes(mostly, buffers) is kept
    assert mode_codes(mostly.copy(), buffers) is not kept  # other codes: made again
    sparse = SparseCodes(np.zeros(2, np.int64), np.zeros(0, np.int32), np.zeros(0, np.uint8), 3)
    assert mode_codes(sparse) is None


def test_modes_and_entries_of_rows_counted_in_several_chunks():
    """Over ``COUNT_ROWS`` rows the codes are counted in chunks on the threads:
    each feature's mode (the smallest of equally frequent codes) and every
    row's entries are those numpy's counts give."""
    rng = np.random.default_rng(4)
    n = 2 * COUNT_ROWS + 1234
    X = np.where(rng.random((n, 4)) < 0.08, rng.integers(0, 256, (n, 4)), 0).astype(np.uint8)
    X[:, 1] = np.where(X[:, 1] == 0, 9, X[:, 1])
    X[: n // 2, 2], X[n // 2:, 2] = 4, 3  # a tie (n is even): code 3 is the mode
    m = mode_codes(X)
    expect = [int(np.bincount(X[:, f], minlength=256).argmax()) for f in range(4)]
    assert m.mode.tolist() == expect and expect[1] == 9 and expect[2] == 3
    off = X != np.array(expect, np.uint8)
    assert m.indptr.tolist() == [0, *np.cumsum(off.sum(axis=1)).tolist()]
    rows, cols = np.nonzero(off)
    assert m.entries.tolist() == (cols * 256 + X[rows, cols]).tolist()


def _mostly_one_code(n=3000, n_features=12, seed=1):
    """Binned data whose features hold one value in 80-95 % of rows (the mode
    is not bin 0 for every feature), with missing values; feature 5 in a few
    bins, feature 7 mostly missing (its mode the missing-value bin)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    X[rng.random(X.shape) < rng.uniform(0.8, 0.95, n_features)] = 0.0
    X[:, 3] = np.where(X[:, 3] == 0.0, 2.5, X[:, 3])
    X[:, 5] = np.round(X[:, 5] * 2)
    X[rng.random(X.shape) < 0.02] = np.nan
    X[rng.random(n) < 0.9, 7] = np.nan
    mapper = BinMapper(256).fit(X, np.zeros(n_features, bool), {})
    return mapper, mapper.transform(X)


@pytest.mark.parametrize("n_stats", [2, 3])
@pytest.mark.parametrize("features", [None, [0, 3, 4, 11]], ids=["every-feature", "some"])
@pytest.mark.parametrize("n_blocks", [1, 3], ids=["one-thread", "blocks"])
def test_histograms_equal_the_dense_codes_to_the_bit(n_stats, features, n_blocks):
    """Three nodes of two trees, in shuffled row orders, in a padded pool (as
    the grower's), on one thread and in blocks whose straddling nodes are
    summed from buffers: every bin of every slot equals the dense pass's."""
    _, binned = _mostly_one_code()
    m = mode_codes(binned)
    assert m is not None and len(m.entries) < 0.2 * binned.size
    assert m.mode[7] == 255 and m.top[5] < 20 and m.top.max() > 200
    n, n_features = binned.shape
    rng = np.random.default_rng(2)
    stats = rng.integers(-10**9, 10**9, (2, n, n_stats))
    order = np.stack([rng.permutation(n), rng.permutation(n)]).astype(np.int32)
    tree, slot = np.array([0, 0, 1]), np.array([2, 0, 1])
    lo, hi = np.array([0, 1700, 10]), np.array([1700, 2900, 2990])
    features = np.array([] if features is None else features, np.int64)
    pool = np.full((2, 3, n_features, 256 + PAD_BINS, n_stats), 77, np.int64)
    private = np.empty((0, 2) + pool.shape[2:], np.int64)
    for out, codes in zip(pool, (binned, m)):
        out[:] = 0
        fill_histograms(codes, stats, order, tree, slot, lo, hi, features, out, True, n_blocks,
                        private)
    np.testing.assert_array_equal(pool[1], pool[0])
    assert pool[0][:, features if len(features) else slice(None)].any()
    with pytest.raises(ValueError, match="start from zero"):
        fill_histograms(m, stats, order, tree, slot, lo, hi, features, pool[1], False, 1,
                        private)


@numba.njit
def _by_modes(X, rows, n_nodes):
    return by_modes(X, rows, n_nodes)


def test_the_mode_pass_is_taken_for_large_nodes_of_data_with_few_entries():
    """``by_modes``: 57 features, 14 stored a row (spam's): the root's 3,065
    rows yes, a node of 100 rows no, the same rows as 20 nodes no; the dense
    codes never."""
    X = np.zeros((3065, 57), np.uint8)
    X[:, :14] = 1 + np.arange(3065)[:, None] % 3
    m = mode_codes(X)
    assert m is not None and len(m.entries) == 3065 * 14 - sum(
        (np.arange(3065) % 3 == 0).sum() for _ in range(14))
    assert _by_modes(m, 3065, 1)
    assert not _by_modes(m, 100, 1)
    assert not _by_modes(m, 3065, 20)
    assert not _by_modes(X, 3065, 1)


@pytest.mark.parametrize("growth", [GrowthParams(max_depth=6, learning_rate=0.3),
                                    GrowthParams(max_depth=None, max_leaf_nodes=24)],
                         ids=["depth-wise", "best-first"])
def test_trees_grown_from_them_are_the_dense_codes_trees(growth):
    """The grower's node tables, rows and splits are the same whether its
    histograms come from the dense codes only or also from these."""
    mapper, binned = _mostly_one_code(n=6000)
    n, n_features = binned.shape
    rng = np.random.default_rng(3)
    stats = np.stack([rng.integers(-1000, 1000, n), rng.integers(1, 100, n)], 1)[None]
    grown = []
    for modes in (None, mode_codes(binned)):
        part = RowPartition.from_positions(np.zeros((1, n), np.int32))
        g = local_grower.grow(binned, columns(binned), stats.astype(np.int64), part,
                              GradientCriterion(SplitParams(), (1.0, 1.0), False), mapper,
                              np.ones((1, n_features), bool), np.arange(n_features), growth,
                              X_modes=modes)
        grown.append((g, part))
    (a, pa), (b, pb) = grown
    assert len(a.tables[0].split) > 20
    for name, value in vars(a.tables[0]).items():
        np.testing.assert_array_equal(value, getattr(b.tables[0], name))
    np.testing.assert_array_equal(pa.order, pb.order)
    np.testing.assert_array_equal(pa.start, pb.start)
