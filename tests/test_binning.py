import numpy as np
import pytest

from distboost import binning
from distboost.binning import (
    SAMPLE_ROWS,
    BinMapper,
    CandidatePool,
    find_bin_edges,
    merge_candidates,
    midpoint_percentile,
    prior_bound,
    sample_candidates,
    weighted_percentile,
)
from distboost.kernels.common import MISSING_BIN
from distboost.kernels.threads import numba_threads


def test_few_distinct_values_get_midpoint_edges():
    col = np.array([10.0, 20.0, 25.0, 35.0, 20.0])
    np.testing.assert_array_equal(find_bin_edges(col, 256), [15.0, 22.5, 30.0])
    np.testing.assert_array_equal(find_bin_edges(col.astype(np.int64), 256), [15.0, 22.5, 30.0])


def test_missing_values_are_ignored_by_edges_and_get_the_last_bin():
    X = np.array([[1.0], [np.nan], [3.0], [2.0]])
    mapper = BinMapper().fit(X, [False], {})
    np.testing.assert_array_equal(mapper.bin_edges_[0], [1.5, 2.5])
    np.testing.assert_array_equal(mapper.transform(X)[:, 0], [0, MISSING_BIN, 2, 1])


def test_value_on_an_edge_goes_to_the_lower_bin():
    # bin b holds edges[b-1] < x <= edges[b]: the raw split test is x <= edge
    mapper = BinMapper().fit(np.array([[0.0], [1.0], [2.0]]), [False], {})
    X = np.array([[0.5], [0.50000001], [-np.inf], [np.inf]])
    np.testing.assert_array_equal(mapper.transform(X)[:, 0], [0, 1, 0, 2])


def test_codes_are_searchsorted_left_for_every_number_of_edges():
    """The fixed-step search against numpy's, from no edges to the most a
    feature can have (254), on the edges, beside them and at +-inf."""
    rng = np.random.default_rng(3)
    edges = [np.sort(rng.choice(1000, size=n, replace=False) / 7.0) for n in range(255)]
    mapper = BinMapper.from_edges({f"f{n}": e for n, e in enumerate(edges)})
    values = np.concatenate([np.arange(-1, 1001) / 7.0, [-np.inf, np.inf]])
    values = np.concatenate([values, np.nextafter(values, np.inf), np.nextafter(values, -np.inf)])
    codes = mapper.transform(np.repeat(values[:, None], len(edges), axis=1))
    for n, e in enumerate(edges):
        np.testing.assert_array_equal(codes[:, n], np.searchsorted(e, values, side="left"))
    as_float32 = values.astype(np.float32)
    codes32 = mapper.transform(np.repeat(as_float32[:, None], len(edges), axis=1))
    np.testing.assert_array_equal(codes32[:, 254], np.searchsorted(edges[254], as_float32))


def test_many_values_use_at_most_max_bins_minus_one_value_bins():
    rng = np.random.default_rng(0)
    col = rng.normal(size=10_000)
    for max_bins in (3, 17, 256):
        edges = find_bin_edges(col, max_bins)
        assert len(edges) + 1 <= max_bins - 1
        assert np.all(np.diff(edges) > 0)
    # quantile bins hold roughly equal counts
    mapper = BinMapper(17).fit(col[:, None], [False], {})
    counts = np.bincount(mapper.transform(col[:, None])[:, 0])
    assert counts.min() > 0.8 * len(col) / 16 and counts.max() < 1.2 * len(col) / 16


def test_weighted_percentile_equals_repeating_rows():
    rng = np.random.default_rng(1)
    values = np.sort(rng.normal(size=300))
    weights = rng.integers(1, 5, size=300)
    q = np.linspace(0, 100, 33)
    expected = np.percentile(np.repeat(values, weights), q, method="midpoint")
    np.testing.assert_array_equal(weighted_percentile(values, weights.astype(float), q), expected)


def test_unit_weights_take_the_ranks_themselves():
    """``midpoint_percentile`` is ``weighted_percentile`` with weights 1, to
    the bit, for every length up to 40."""
    rng = np.random.default_rng(4)
    q = np.linspace(0, 100, 256)[1:-1]
    for n in range(1, 41):
        values = np.sort(rng.normal(size=n))
        expected = weighted_percentile(values, np.ones(n), q)
        np.testing.assert_array_equal(midpoint_percentile(values, q), expected)


@pytest.mark.parametrize("kind", ["normal", "ties", "missing", "few"])
def test_edges_of_unit_and_float32_columns_are_the_weighted_paths(kind):
    """The unit-weight path (ranks, no cumulative sum) and a float32 column
    (sorted as float32) give the edges of the weighted path with weights 1
    on the float64 values."""
    rng = np.random.default_rng(5)
    col = rng.normal(size=3001).astype(np.float32)
    if kind == "ties":
        col = np.round(col, 1)
    elif kind == "missing":
        col[rng.random(col.size) < 0.3] = np.nan
    elif kind == "few":
        col = rng.integers(0, 40, col.size).astype(np.float32)
    values = np.sort(col[~np.isnan(col)].astype(np.float64))
    distinct = np.unique(values)
    q = np.linspace(0, 100, 256)[1:-1]
    expected = (0.5 * (distinct[:-1] + distinct[1:]) if len(distinct) <= 255 else
                np.unique(weighted_percentile(values, np.ones(len(values)), q)))
    np.testing.assert_array_equal(find_bin_edges(col.astype(np.float64), 256), expected)
    np.testing.assert_array_equal(find_bin_edges(col, 256), expected)
    np.testing.assert_array_equal(BinMapper().fit(col[:, None], [False], {}).bin_edges_[0], expected)


def test_sample_does_not_depend_on_row_order_or_partitioning():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(5000, 3))
    w = np.ones(len(X))
    whole = sample_candidates(X, w, 700)
    perm = rng.permutation(len(X))
    pieces = [sample_candidates(X[perm][i::7], w[i::7], 700) for i in range(7)]
    merged = merge_candidates([merge_candidates(pieces[:3], 700), merge_candidates(pieces[3:], 700)], 700)
    np.testing.assert_array_equal(whole[0], merged[0])
    np.testing.assert_array_equal(whole[1], merged[1])


def test_pool_of_scans_below_its_threshold_gives_the_whole_sample_in_any_order():
    """Scans told the pool's threshold send only the rows that can still enter
    the sample, and the pool's sample is the one of all rows, whatever the
    order the partitions come in."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6000, 3))
    w = np.ones(len(X))
    whole = sample_candidates(X, w, 500)
    pieces = np.array_split(np.arange(len(X)), 12)
    for order in (range(12), rng.permutation(12)):
        pool, sent = CandidatePool(500), []
        for k in order:
            rows = pieces[k]
            candidates = sample_candidates(X[rows], w[rows], 500, pool.threshold)
            sent.append(len(candidates[0]))
            pool.add(candidates)
        hashes, sample, _weights = pool.result()
        np.testing.assert_array_equal(hashes, whole[0])
        np.testing.assert_array_equal(sample, whole[1])
        assert pool.threshold == whole[0][-1]
        # once the pool has seen k pieces, a scan sends about 500 / k of its rows
        assert sum(sent) < len(X) / 2 and sent[-1] < 100
    assert (sample_candidates(X, w, 500, below=whole[0][9])[0] == whole[0][:10]).all()


def test_zero_weight_rows_are_not_sampled():
    X = np.arange(6.0)[:, None]
    _, rows, _weights = sample_candidates(X, np.array([1, 0, 1, 0, 1, 2.0]), 10)
    assert sorted(rows[:, 0]) == [0.0, 2.0, 4.0, 5.0]


def test_categorical_codes_are_bins_and_unknown_codes_are_missing():
    mapper = BinMapper().fit(np.zeros((3, 1)), [True], {0: ["a", "b", "c"]})
    X = np.array([[0.0], [2.0], [np.nan], [7.0]])
    np.testing.assert_array_equal(mapper.transform(X)[:, 0], [0, 2, MISSING_BIN, MISSING_BIN])
    assert mapper.n_bins_non_missing_[0] == 3


def test_max_bins_is_validated():
    with pytest.raises(ValueError, match="max_bins"):
        BinMapper(300)


def test_dict_round_trip():
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(size=500), rng.integers(0, 4, 500)])
    mapper = BinMapper(64).fit(X, [False, True], {1: ["w", "x", "y", "z"]})
    again = BinMapper.from_dict(mapper.to_dict())
    np.testing.assert_array_equal(mapper.transform(X), again.transform(X))


def test_frame_candidates_give_the_bins_of_fit():
    """Bins made outside ``fit`` (blocks of a DataFrame, merged in a pool) are the
    fit's own: weights, missing values and a categorical column included."""
    import pandas as pd

    from distboost import GradientBoostingRegressor
    from distboost.binning import CandidatePool, frame_candidates

    rng = np.random.default_rng(4)
    X = pd.DataFrame({"a": rng.normal(size=900).round(2), "b": rng.exponential(size=900),
                      "c": pd.Categorical(rng.choice(["x", "y", "z"], 900))})
    X.loc[::11, "b"] = np.nan
    y, w = rng.normal(size=900), rng.integers(0, 4, 900).astype(float)
    pool = CandidatePool(SAMPLE_ROWS)
    for rows in np.array_split(rng.permutation(900), 4):
        pool.add(frame_candidates(X.iloc[rows], w[rows], below=pool.threshold))
    _, sample, weights = pool.result()
    mapper = BinMapper(64).fit(sample, [False, False, True], {2: ["x", "y", "z"]}, weights,
                               feature_names=["a", "b", "c"])
    own = GradientBoostingRegressor(n_estimators=3, max_bins=64).fit(X, y, sample_weight=w)
    given = GradientBoostingRegressor(n_estimators=3, max_bins=64).fit(X, y, sample_weight=w,
                                                                      bin_mapper=mapper)
    assert given.bin_mapper_.to_dict() == own.bin_mapper_.to_dict()
    for j in range(2):
        np.testing.assert_array_equal(mapper.bin_edges_[j], own.bin_mapper_.bin_edges_[j])
    np.testing.assert_array_equal(given.predict(X), own.predict(X))


def test_frame_candidates_of_no_rows_are_an_empty_sample():
    import pandas as pd

    from distboost.binning import frame_candidates

    hashes, rows, weights = frame_candidates(pd.DataFrame({"a": [], "b": []}, dtype=float))
    assert hashes.shape == (0,) and rows.shape == (0, 2) and weights.shape == (0,)


def test_prior_bound_is_twice_the_partitions_share_of_the_hashes():
    # 4 partitions of 1000 rows, a sample of 300: each sends hashes below 2 * 300 / 4000 of 2^64
    assert prior_bound(300, 4, 1000) == int(0.15 * 2.0**64)
    assert prior_bound(300, 1, 600) is None  # twice the share is every row
    assert prior_bound(300, 2, 0) is None  # an empty partition holds nothing back


def test_candidates_between_above_and_below_complete_those_below_above():
    """A first scan under a bound plus a later one above it give the rows of one scan."""
    rng = np.random.default_rng(6)
    X, w = rng.normal(size=(4000, 3)), np.ones(4000)
    whole = sample_candidates(X, w, 500)
    bound = int(whole[0][200])
    first = sample_candidates(X, w, 500, below=bound)
    rest = sample_candidates(X, w, 500, below=int(whole[0][-1]), above=bound)
    assert len(first[0]) == 201 and (rest[0] > np.uint64(bound)).all()
    for a, b in zip(whole, merge_candidates([first, rest], 500)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n_samples", [1, 300, 700, 1500, 5000])
def test_blocks_bounded_by_the_sample_so_far_give_the_whole_sample(n_samples):
    """``block_candidates`` bounds later blocks by the ``n_samples``-th smallest
    hash read so far (and merges at twice the sample): still the rows with the
    smallest hashes, equal hashes (a repeated row) by weight, under a threshold
    or not, whatever the blocks and the rows' order."""
    from distboost.binning import block_candidates
    from distboost.kernels.rng import row_content_hashes

    rng = np.random.default_rng(7)
    X = rng.normal(size=(4000, 3))
    X[::9] = X[4]  # equal rows: equal hashes, different weights
    w = rng.choice([0.0, 1.0, 2.5], len(X))
    perm = rng.permutation(len(X))
    for below in (None, int(sample_candidates(X, w, 800)[0][-1])):
        Xk, wk = X[w > 0], w[w > 0]
        h = row_content_hashes(Xk)
        first = np.flatnonzero(h <= np.uint64(below if below is not None else 2**64 - 1))
        first = first[np.lexsort((wk[first], h[first]))][:n_samples]
        blocks = block_candidates(lambda a, b: X[a:b], w, n_samples, below)
        with pytest.MonkeyPatch.context() as patch:  # blocks of 256 rows: many bounds
            patch.setattr(binning, "row_blocks", lambda n, blocks=binning.row_blocks: blocks(n, 256))
            small = block_candidates(lambda a, b: X[perm][a:b], w[perm], n_samples, below)
        for got in (blocks, small):
            np.testing.assert_array_equal(got[0], h[first])
            np.testing.assert_array_equal(got[1], Xk[first])
            np.testing.assert_array_equal(got[2], wk[first])


def test_the_threshold_table_holds_every_bins_threshold():
    """``threshold_table[j, b]`` is ``bin_threshold_value(j, b)``: the bin's
    upper edge, +inf past a feature's edges."""
    X = np.column_stack([np.arange(10.0), np.repeat([1.0, 5.0], 5)])
    mapper = BinMapper().fit(X, [False, False], {})
    table = mapper.threshold_table
    assert table.shape == (2, 256) and table.dtype == np.float64
    for j in range(2):
        assert [table[j, b] for b in range(256)] == [mapper.bin_threshold_value(j, b)
                                                    for b in range(256)]
    assert table[1, 0] < np.inf and table[1, 2] == np.inf


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_features_sorted_on_one_thread_or_two_give_numpys_percentiles(dtype):
    rng = np.random.default_rng(5)
    sample = rng.normal(size=(600, 7)).round(1).astype(dtype)
    sample[::9, 2] = np.nan
    sample[:, 4] = rng.integers(0, 3, 600)
    fits = []
    for n in (1, 2):
        with numba_threads(n):
            fits.append(BinMapper(32).fit(sample, np.zeros(7, bool), {}).bin_edges_)
    for j in range(7):
        values = np.sort(sample[:, j][~np.isnan(sample[:, j])].astype(np.float64))
        distinct = np.unique(values)
        expected = (0.5 * (distinct[:-1] + distinct[1:]) if len(distinct) <= 31 else
                    np.unique(np.percentile(values, np.linspace(0, 100, 32)[1:-1], method="midpoint")))
        np.testing.assert_array_equal(fits[0][j], expected)
        np.testing.assert_array_equal(fits[1][j], expected)
        np.testing.assert_array_equal(find_bin_edges(sample[:, j], 32), expected)
    assert [len(e) for e in fits[0]][4] == 2


@pytest.mark.parametrize("weighted", [False, True])
def test_categorical_columns_between_numeric_ones_leave_their_edges_in_place(weighted):
    """Only the numeric columns are sorted; each keeps its own edges, whatever
    categorical columns sit before it."""
    rng = np.random.default_rng(8)
    sample = np.column_stack([rng.integers(0, 4, 300), rng.normal(size=300).round(2),
                              rng.integers(0, 3, 300), rng.exponential(size=300).round(2)])
    weights = rng.uniform(0.5, 2.0, 300) if weighted else None
    is_categorical = [True, False, True, False]
    mapper = BinMapper(16).fit(sample, is_categorical, {0: list("abcd"), 2: list("xyz")}, weights)
    assert [len(e) for e in mapper.bin_edges_[::2]] == [0, 0]
    for j in (1, 3):
        np.testing.assert_array_equal(mapper.bin_edges_[j], find_bin_edges(sample[:, j], 16, weights))
    assert not np.array_equal(mapper.bin_edges_[1], mapper.bin_edges_[3])
