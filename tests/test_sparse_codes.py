"""Sparse rows' codes (``kernels.sparse_codes``): the stored entries' codes
only, read wherever the dense codes are, giving the dense codes' histograms,
routes and leaves to the bit."""

import numpy as np
import pytest
import scipy.sparse as sp

from distboost.binning import BinMapper
from distboost.engine.shard import SPARSE_CODES_MAX_DENSITY, sparse_codes_pay
from distboost.kernels.common import MISSING_BIN
from distboost.kernels.histogram import (
    LevelSplits,
    RowPartition,
    columns,
    count_children,
    root_histograms,
    split_level,
)
from distboost.kernels.sparse_codes import SparseCodes, lookup
from distboost.kernels.tree import leaf_ids_binned, pack_trees, predict_binned

N, D = 500, 9


def _codes(seed=0, density=0.1):
    rng = np.random.default_rng(seed)
    X = sp.random(N, D, density=density, random_state=seed, format="csr")
    X.data = rng.normal(size=X.nnz)
    X.data[rng.random(X.nnz) < 0.2] = 0.0  # stored zeros: values
    mapper = BinMapper(max_bins=16).fit(X, np.zeros(D, bool), {})
    return mapper.transform_sparse(X), mapper.transform(X)


def test_codes_by_hand():
    # rows: {1: 2.0}, {}, {0: 5.0, 2: -1.0}; edges put 2.0, 5.0 and -1.0 in bins 1, 1, 0
    X = sp.csr_matrix((np.array([2.0, 5.0, -1.0]), np.array([1, 0, 2]), np.array([0, 1, 1, 3])),
                      shape=(3, 3))
    mapper = BinMapper().fit(np.array([[0.0, 0.0, -1.0], [5.0, 2.0, 1.0]]), np.zeros(3, bool), {})
    codes = mapper.transform_sparse(X)
    assert codes.shape == (3, 3) and codes.nbytes == 4 * 8 + 3 * 4 + 3
    assert codes.codes.tolist() == [1, 1, 0]
    assert [lookup(codes.indptr, codes.indices, codes.codes, r, f)
            for r in range(3) for f in range(3)] == [
        MISSING_BIN, 1, MISSING_BIN, MISSING_BIN, MISSING_BIN, MISSING_BIN, 1, MISSING_BIN, 0]


def test_codes_equal_the_dense_codes():
    sparse, dense = _codes()
    assert np.array_equal(sparse.to_dense(), dense)
    assert sparse.nbytes < 2 * dense.nbytes  # the dense codes are kept twice: by row and feature


def test_only_sparse_enough_rows_keep_sparse_codes():
    assert sparse_codes_pay(sp.random(100, 10, density=SPARSE_CODES_MAX_DENSITY, format="csr"))
    assert not sparse_codes_pay(sp.random(100, 10, density=0.3, format="csr"))
    assert not sparse_codes_pay(sp.random(100, 3, density=0.2, format="csr"))  # 8 bytes a row
    assert not sparse_codes_pay(sp.csr_matrix((0, 10)))


def _stats(seed, n_trees=2, n_stats=3):
    rng = np.random.default_rng(seed)
    st = rng.integers(-1000, 1000, (n_trees, N, n_stats)).astype(np.int64)
    st[..., -1] = 1
    return st


@pytest.mark.parametrize("features", [np.arange(D), np.array([1, 4, 7]), np.array([7, 0, 3])])
@pytest.mark.parametrize("n_stats", [2, 3, 5])
def test_histograms_level_and_routes_equal_the_dense_ones(features, n_stats):
    sparse, dense = _codes(seed=1)
    st = _stats(1, n_stats=n_stats)
    rng = np.random.default_rng(2)
    positions = np.full((2, N), -1, np.int64)  # tree 0 a sample of the rows, tree 1 all
    positions[0, np.sort(rng.choice(N, 300, replace=False))] = np.arange(300)
    positions[1] = np.arange(N)

    def level(codes):
        part = RowPartition.from_positions(positions)
        root = root_histograms(codes, st, part, features)
        goes_left = np.zeros((2, 256), bool)
        goes_left[:, [0, 2, 5, MISSING_BIN]] = True  # the missing rows go left in both trees
        splits = LevelSplits(np.array([0, 1]), np.array([0, 0]), np.array([4, 1]), goes_left,
                             np.array([1, 1]), np.array([2, 2]), np.array([True, False]),
                             np.array([0, 1]))
        counted = count_children(columns(codes), part, splits)
        hist, counts = split_level(codes, columns(codes), st, part, splits, 2, features)
        assert np.array_equal(counted, counts)
        again, _ = split_level(codes, columns(codes), st, part.copy(), splits, 2, features,
                               out=hist.copy())  # added to what is there
        return root, hist, counts, again, part.order[0, :300], part.order[1]  # rows in use

    for a, b in zip(level(sparse), level(dense)):
        assert np.array_equal(a, b)
    root = level(sparse)[0]
    assert root[:, features].any() and not root[:, np.setdiff1d(np.arange(D), features)].any()


@pytest.mark.parametrize("shape", [{"max_depth": 4}, {"max_depth": None, "max_leaf_nodes": 40}])
def test_prediction_and_leaves_of_sparse_codes(shape):
    from distboost import GradientBoostingRegressor

    rng = np.random.default_rng(3)
    X = sp.random(N, D, density=0.1, random_state=3, format="csr")
    X.data = rng.normal(size=X.nnz)
    y = np.asarray(X[:, :3].sum(axis=1)).ravel() + (X[:, 3].getnnz(axis=1) == 0)
    model = GradientBoostingRegressor(n_estimators=3, learning_rate=1.0, **shape).fit(X, y)
    sparse, dense = model.bin_mapper_.transform_sparse(X), model.bin_mapper_.transform(X)
    packed = pack_trees([t for r in model.trees_ for t in r])
    out_s, out_d = np.zeros((1, N)), np.zeros((1, N))
    predict_binned(sparse, *packed, np.zeros(3, np.int64), out_s)
    predict_binned(dense, *packed, np.zeros(3, np.int64), out_d)
    assert np.array_equal(out_s, out_d) and out_s.std() > 0
    ids_s, ids_d = np.zeros((3, N), np.int64), np.zeros((3, N), np.int64)
    leaf_ids_binned(sparse, *packed, ids_s)
    leaf_ids_binned(dense, *packed, ids_d)
    assert np.array_equal(ids_s, ids_d) and len(np.unique(ids_s)) > 3


def test_sparse_codes_pickle():
    import pickle

    sparse, _ = _codes()
    again = pickle.loads(pickle.dumps(sparse))
    assert isinstance(again, SparseCodes) and np.array_equal(again.to_dense(), sparse.to_dense())


@pytest.mark.parametrize("seed", range(4))
def test_search_from_stored_entries_equals_the_search_of_dense_codes(seed):
    from distboost.kernels import node_search
    from distboost.kernels.splitting import GradientCriterion, SplitParams

    sparse, dense = _codes(seed=seed, density=0.15)
    rng = np.random.default_rng(seed)
    stats = np.stack([rng.integers(-50, 50, N), rng.integers(1, 20, N), np.ones(N, int)], 1)
    fp, ip = node_search.pack_criterion(
        GradientCriterion(SplitParams(reg_lambda=0.5), (1.0, 1.0), True))
    n_bins = np.full(D, 17, np.int64)
    for rows in (np.arange(N), np.sort(rng.choice(N, 40, replace=False))):
        tot = stats[rows].sum(axis=0)
        allowed = rng.random(D) < 0.8
        for features in (np.arange(D), np.array([0, 2, 3, 8])):
            args = (rows, stats, tot, allowed, n_bins, np.zeros(D, bool), fp, ip,
                    node_search.scratch(3), features)
            want = node_search.search_rows(np.ascontiguousarray(dense.T), *args)
            assert node_search.search_sparse_rows(sparse, *args) == want
            assert want[1] >= 0


def test_sparse_nodes_go_dense_by_their_stored_entries():
    """``local_grower.dense_min_rows``: 64 rows for dense codes; for sparse
    codes the rows whose entries number one per histogram bin, here 9
    features x 260 bins at 0.1 x 9 entries a row: 2,600 rows."""
    from distboost.kernels import local_grower
    from distboost.kernels.common import MAX_BINS
    from distboost.kernels.histogram import PAD_BINS

    sparse, dense = _codes()
    assert local_grower.dense_min_rows(dense) == local_grower.DENSE_MIN_ROWS == 64
    per_row = len(sparse.indices) / N
    assert per_row == pytest.approx(0.9)
    assert MAX_BINS + PAD_BINS == 260
    assert local_grower.dense_min_rows(sparse) == int(9 * 260 / per_row)


@pytest.mark.parametrize("entries", [0.0, 0.15, 1.0], ids=["every node dense", "mixed", "rows"])
def test_the_trees_of_sparse_codes_whatever_nodes_go_dense(monkeypatch, entries):
    """Nodes searched from histograms or from their stored entries (by
    ``SPARSE_DENSE_ENTRIES``) grow the dense codes' trees, to the bit."""
    from distboost.kernels import local_grower
    from distboost.kernels.splitting import GradientCriterion, SplitParams
    from distboost.trees.params import GrowthParams
    from distboost.trees.tree import tree_from_table

    rng = np.random.default_rng(3)
    X = sp.random(N, D, density=0.2, random_state=3, format="csr")
    X.data = rng.normal(size=X.nnz)
    mapper = BinMapper(max_bins=16).fit(X, np.zeros(D, bool), {})
    stats = np.stack([rng.integers(-1000, 1000, N), rng.integers(1, 100, N), np.ones(N, int)],
                     axis=1).astype(np.int64)[None]
    criterion = GradientCriterion(SplitParams(reg_lambda=1.0), (1.0, 1.0), True)
    growth = GrowthParams(max_depth=5, learning_rate=0.3)
    monkeypatch.setattr(local_grower, "SPARSE_DENSE_ENTRIES", entries)
    trees = []
    for codes in (mapper.transform_sparse(X), mapper.transform(X)):
        part = RowPartition.from_positions(np.zeros((1, N), np.int32))
        grown = local_grower.grow(codes, columns(codes), stats, part, criterion, mapper,
                                  np.ones((1, D), bool), np.arange(D), growth)
        trees.append(tree_from_table(grown.tables[0], criterion, mapper, 0.3))
    assert trees[0] == trees[1] and len(trees[0].nodes) > 15
