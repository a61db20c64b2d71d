import numba
import numpy as np
import pytest

from distboost.kernels.common import MISSING_BIN
from distboost.kernels.histogram import (
    CHUNK_ROWS,
    PARALLEL_SIBLINGS,
    LevelSplits,
    RowPartition,
    columns,
    count_children,
    replay,
    root_histograms,
    siblings,
    split_level,
)


def _stats(g, h):
    s = np.empty((1, len(g), 3), np.int64)
    s[0, :, 0], s[0, :, 1], s[0, :, 2] = g, h, 1
    return s


def _reference(X, stats_t, rows, features):
    """Histogram of the given rows, by numpy: the definition."""
    hist = np.zeros((X.shape[1], 256, stats_t.shape[1]), np.int64)
    for j in features:
        np.add.at(hist[j], X[rows, j], stats_t[rows])
    return hist


def _one_split(tree, node, feature, goes_left, left, right, build_left, slot):
    gl = np.zeros((1, 256), bool)
    gl[0] = goes_left
    return LevelSplits(*(np.array([v], np.int64) for v in (tree, node, feature)), gl,
                       *(np.array([v], np.int64) for v in (left, right)),
                       np.array([build_left]), np.array([slot], np.int64))


def test_hand_checked_histogram():
    # 10 rows, 2 features (row-major: one row's codes together)
    X = np.array([[0, 1, 1, 2, 0, 3, 3, 1, 0, MISSING_BIN],
                  [5, 5, 5, 5, 5, 6, 6, 6, 6, 6]], np.uint8).T.copy()
    g = np.arange(10)
    h = np.ones(10, np.int64) * 2
    part = RowPartition.from_positions(np.zeros((1, 10), np.int32))
    hist = root_histograms(X, _stats(g, h), part, np.array([0, 1]))
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
    X = rng.integers(0, 10, size=(50, 3)).astype(np.uint8)
    pos = np.zeros((1, 50), np.int32)
    pos[0, :20] = -1  # rows not in the tree (subsampled)
    st = _stats(rng.integers(-5, 5, 50), np.ones(50))
    hist = root_histograms(X, st, RowPartition.from_positions(pos), np.array([1]))
    assert not hist[0, 0].any() and not hist[0, 2].any()
    assert hist[0, 1, :, 2].sum() == 30


def test_children_partition_their_parent_and_subtraction_equals_recomputing():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 30, size=(200, 4)).astype(np.uint8)
    st = _stats(rng.integers(-1000, 1000, 200), rng.integers(1, 50, 200))
    part = RowPartition.from_positions(np.zeros((1, 200), np.int32))
    root = root_histograms(X, st, part, np.arange(4))[0]
    goes_left = np.arange(256) < 12  # feature 2, bins 0..11 go left
    built, counts = split_level(X, columns(X), st, part, _one_split(0, 0, 2, goes_left, 1, 2, True, 0), 1, np.arange(4))
    left_rows, right_rows = part.node_rows(0, 1), part.node_rows(0, 2)
    assert counts.tolist() == [[len(left_rows), len(right_rows)]]
    np.testing.assert_array_equal(left_rows, np.flatnonzero(X[:, 2] < 12))
    np.testing.assert_array_equal(right_rows, np.flatnonzero(X[:, 2] >= 12))
    np.testing.assert_array_equal(built[0], _reference(X, st[0], left_rows, range(4)))
    np.testing.assert_array_equal(root - built[0], _reference(X, st[0], right_rows, range(4)))


def test_a_split_with_no_slot_builds_nothing_and_moves_its_rows_to_the_children():
    """slot -1: children never built or split (the last level); their rows are
    counted and moved all the same (the round's trees are added from there)."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 30, size=(300, 2)).astype(np.uint8)
    st = _stats(rng.integers(-1000, 1000, 300), rng.integers(1, 50, 300))
    part = RowPartition.from_positions(np.where(rng.random((1, 300)) < 0.9, 0, -1).astype(np.int32))
    in_bag = part.node_rows(0, 0).copy()
    goes_left = np.arange(256) < 7
    split = _one_split(0, 0, 1, goes_left, 1, 2, True, -1)
    counted = count_children(columns(X), part, split)  # counted where they are
    np.testing.assert_array_equal(part.node_rows(0, 0), in_bag)
    hist, counts = split_level(X, columns(X), st, part, split, 0, np.arange(2))
    assert hist.shape == (0, 2, 256, 3)
    left = in_bag[X[in_bag, 1] < 7]
    assert counts.tolist() == counted.tolist() == [[len(left), len(in_bag) - len(left)]]
    np.testing.assert_array_equal(part.node_rows(0, 1), left)
    np.testing.assert_array_equal(part.node_rows(0, 2), np.setdiff1d(in_bag, left))


def _grow_levels(X, stats, positions, depth, features, seed):
    """Random depth-wise splits of every node, checked against the reference."""
    rng = np.random.default_rng(seed)
    n_trees = stats.shape[0]
    part = RowPartition.from_positions(positions)
    history, leaves = [], [[0] for _ in range(n_trees)]
    for _ in range(depth):
        cols = {k: [] for k in ("tree", "node", "feature", "left", "right", "build_left", "slot")}
        goes = []
        next_leaves = [[] for _ in range(n_trees)]
        for t in range(n_trees):
            for node in leaves[t]:
                child = 2 * node + 1
                cols["tree"].append(t)
                cols["node"].append(node)
                cols["feature"].append(int(rng.integers(X.shape[1])))
                cols["left"].append(child)
                cols["right"].append(child + 1)
                cols["build_left"].append(bool(rng.integers(2)))
                cols["slot"].append(len(cols["slot"]))
                goes.append(rng.random(256) < 0.5)
                next_leaves[t] += [child, child + 1]
        splits = LevelSplits(
            *(np.array(cols[k], np.int64) for k in ("tree", "node", "feature")), np.array(goes),
            *(np.array(cols[k], np.int64) for k in ("left", "right")),
            np.array(cols["build_left"]), np.array(cols["slot"], np.int64),
        )
        counted = count_children(columns(X), part, splits)
        hist, counts = split_level(X, columns(X), stats, part, splits, len(goes), features)
        np.testing.assert_array_equal(counted, counts)
        for s in range(len(goes)):
            t, built = splits.tree[s], splits.left[s] if splits.build_left[s] else splits.right[s]
            rows = part.node_rows(t, built)
            np.testing.assert_array_equal(hist[s], _reference(X, stats[t], rows, features))
            assert counts[s].tolist() == [len(part.node_rows(t, splits.left[s])),
                                          len(part.node_rows(t, splits.right[s]))]
        history.append(splits)
        leaves = next_leaves
    return part, history


def test_levels_match_the_definition_across_chunks_and_trees():
    rng = np.random.default_rng(2)
    n = 2 * CHUNK_ROWS + 777  # several chunks per node near the root
    X = rng.integers(0, 256, size=(n, 3)).astype(np.uint8)
    stats = rng.integers(-100, 100, size=(2, n, 3)).astype(np.int64)
    positions = np.where(rng.random((2, n)) < 0.8, 0, -1).astype(np.int32)
    part, _ = _grow_levels(X, stats, positions, 3, np.array([0, 2]), seed=3)
    for t in range(2):  # leaves hold each in-bag row once, in ascending order per leaf
        rows = [part.node_rows(t, k) for k in range(7, 15)]
        assert all((np.diff(r) > 0).all() for r in rows)
        np.testing.assert_array_equal(np.sort(np.concatenate(rows)), np.flatnonzero(positions[t] >= 0))


@pytest.mark.parametrize("n_stats", [1, 4, 5, 7, 8, 10, 11, 15, 17])
def test_any_number_of_statistics(n_stats):
    """Rows of many statistics go in in runs of 8, 4, 2 and 1: every remainder,
    every feature and a subset of them, roots and levels."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 7, size=(300, 3)).astype(np.uint8)
    stats = rng.integers(-(2**40), 2**40, size=(1, 300, n_stats)).astype(np.int64)
    part = RowPartition.from_positions(np.zeros((1, 300), np.int32))
    for features in (np.arange(3), np.array([0, 2])):
        np.testing.assert_array_equal(root_histograms(X, stats, part, features)[0],
                                      _reference(X, stats[0], np.arange(300), features))
    _grow_levels(X, stats, np.zeros((1, 300), np.int32), 2, np.arange(3), seed=5)


@pytest.mark.parametrize("threads", [1, 2])
def test_thread_count_does_not_change_results(threads):
    rng = np.random.default_rng(6)
    n = 3 * CHUNK_ROWS
    X = rng.integers(0, 256, size=(n, 4)).astype(np.uint8)
    stats = rng.integers(-(2**40), 2**40, size=(1, n, 3)).astype(np.int64)
    pos = np.zeros((1, n), np.int32)
    saved = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        part = RowPartition.from_positions(pos)
        got = root_histograms(X, stats, part, np.arange(4))
    finally:
        numba.set_num_threads(saved)
    np.testing.assert_array_equal(got[0], _reference(X, stats[0], np.arange(n), range(4)))


def test_a_partition_holds_the_in_bag_rows_ascending_whatever_each_chunk_keeps():
    """Chunks of rows all in the bag (written without a test), partly in,
    and out; two trees with different bags."""
    n = 3 * CHUNK_ROWS + 5
    positions = np.zeros((2, n), np.int32)
    positions[0, CHUNK_ROWS + 7: CHUNK_ROWS + 9000] = -1
    positions[0, 2 * CHUNK_ROWS: 3 * CHUNK_ROWS] = -1
    positions[1, ::3] = -1
    part = RowPartition.from_positions(positions)
    for t in range(2):
        rows = np.flatnonzero(positions[t] >= 0)
        assert part.stop[t, 0] == len(rows)
        np.testing.assert_array_equal(part.node_rows(t, 0), rows)


def test_replay_rebuilds_the_partition_without_histograms():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 256, size=(5000, 3)).astype(np.uint8)
    stats = rng.integers(-9, 9, size=(1, 5000, 3)).astype(np.int64)
    pos = np.where(rng.random((1, 5000)) < 0.5, 0, -1).astype(np.int32)
    part, history = _grow_levels(X, stats, pos, 3, np.arange(3), seed=8)
    again = replay(columns(X), RowPartition.from_positions(pos), history)
    for k in range(7, 15):
        np.testing.assert_array_equal(again.node_rows(0, k), part.node_rows(0, k))


def test_columns_are_the_codes_feature_major_and_kept_per_shard():
    from distboost.engine.buffers import Buffers

    X = np.arange(12, dtype=np.uint8).reshape(4, 3)
    buffers = Buffers()
    cols = columns(X, buffers)
    np.testing.assert_array_equal(cols, X.T)
    assert columns(X, buffers) is cols  # made once
    assert cols.flags.c_contiguous


@pytest.mark.parametrize("n_features", [2, 300], ids=["numpy", "threads"])
@pytest.mark.parametrize("n_parts", [1, 2, 3])
def test_siblings_add_the_partial_sums_and_subtract_them_from_the_parent(n_parts, n_features):
    """parent = 10, built child's parts sum to 1 + 2 + 3 (or 1, or 1 + 2): the
    built child gets the sum, its sibling 10 minus it; the inputs are kept.
    300 features make a node large enough for the threaded pass."""
    shape = (n_features, 256, 2)
    assert (np.prod(shape) >= PARALLEL_SIBLINGS) == (n_features == 300)
    parts = [np.full((2,) + shape, k + 1, np.int64) for k in range(n_parts)]
    for k, p in enumerate(parts):
        p[0] = -99  # another slot's histogram: not read
    parent = np.full(shape, 10, np.int64)
    kept = [p.copy() for p in parts] + [parent.copy()]
    built, other = np.empty(shape, np.int64), np.empty(shape, np.int64)
    siblings(parts, 1, parent, built, other)
    total = sum(range(1, n_parts + 1))
    assert (built == total).all() and (other == 10 - total).all()
    for a, b in zip(parts + [parent], kept):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n_blocks", [1, 2, 3, 7, 16])
@pytest.mark.parametrize("zero", [True, False])
@pytest.mark.parametrize("kept", [False, True])
def test_blocks_write_their_own_nodes_and_sum_the_straddling_ones(n_blocks, zero, kept):
    """Nodes of many sizes (empty, within one chunk, over several blocks) cut
    into 1 to 16 blocks, whatever the threads: each node's histogram is the
    definition, added to what ``out`` held unless zeroed; slots nobody names
    stay as they were. The blocks' buffers are made in the call, or kept from
    an earlier one (``kept``: full of another call's sums)."""
    from distboost.kernels.histogram import fill_histograms

    rng = np.random.default_rng(n_blocks)
    n = 5 * CHUNK_ROWS + 123
    X = rng.integers(0, 256, size=(n, 3)).astype(np.uint8)
    stats = rng.integers(-(2**40), 2**40, size=(2, n, 2)).astype(np.int64)
    order = np.stack([rng.permutation(n), rng.permutation(n)]).astype(np.int32)
    cuts = np.sort(rng.choice(n, 6, replace=False))
    lo = np.array([0, cuts[0], cuts[1], cuts[1], cuts[3], 0, cuts[5]], np.int64)
    hi = np.array([cuts[0], cuts[1], cuts[1], cuts[3], cuts[5], n, cuts[5] + 5], np.int64)
    tree = np.array([0, 0, 0, 1, 1, 0, 1], np.int64)
    slot = np.array([6, 0, 2, 3, 1, 5, 7], np.int64)  # slot 4 named by nobody
    before = rng.integers(-9, 9, size=(8, 3, 256, 2)).astype(np.int64)
    out = before.copy()
    shape = (n_blocks, 2, 3, 256, 2) if kept else (0, 2, 3, 256, 2)
    private = rng.integers(-(2**40), 2**40, size=shape).astype(np.int64)
    fill_histograms(X, stats, order, tree, slot, lo, hi, np.arange(0), out, zero, n_blocks,
                    private)
    for i in range(len(lo)):
        rows = np.sort(order[tree[i], lo[i]:hi[i]])
        expected = _reference(X, stats[tree[i]], rows, range(3))
        np.testing.assert_array_equal(out[slot[i]], expected + (0 if zero else before[slot[i]]))
    np.testing.assert_array_equal(out[4], before[4])


@pytest.mark.parametrize("n_blocks", [1, 3, 16])
def test_routing_in_parallel_keeps_each_side_in_ascending_order(n_blocks):
    """Chunks written back at their running offsets (one block: each range
    whole on this thread): the left rows of each range, then its right rows,
    both ascending, whatever the blocks."""
    from distboost.kernels.histogram import route_rows

    rng = np.random.default_rng(9)
    n = 4 * CHUNK_ROWS + 7
    X_columns = rng.integers(0, 256, size=(2, n)).astype(np.uint8)
    order = np.stack([np.arange(n), rng.permutation(n)]).astype(np.int32)
    order[1, : n // 2].sort()
    order[1, n // 2:].sort()
    tmp = np.empty_like(order)
    goes_left = rng.random((3, 256)) < 0.5
    tree, feature = np.array([0, 1, 1]), np.array([1, 0, 1])
    lo, hi = np.array([0, 0, n // 2]), np.array([n, n // 2, n])
    expected = []
    for i in range(3):
        rows = order[tree[i], lo[i]:hi[i]].copy()
        left = goes_left[i][X_columns[feature[i], rows]]
        expected.append(np.concatenate([rows[left], rows[~left]]))
    n_left = route_rows(X_columns, order, tmp, tree, feature, goes_left, lo, hi, n_blocks)
    for i in range(3):
        np.testing.assert_array_equal(order[tree[i], lo[i]:hi[i]], expected[i])
        assert n_left[i] == goes_left[i][X_columns[feature[i], expected[i]]].sum()
