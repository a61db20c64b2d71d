"""Per-worker-group task functions."""

from dataclasses import replace

import numpy as np
import pytest
from _trees import stump

from distboost.binning import BinMapper
from distboost.engine import group as _group
from distboost.engine.shard import make_shard
from distboost.inputs.frames import Schema
from distboost.kernels.compact_histograms import is_compact
from distboost.kernels.histogram import LevelSplits
from distboost.learners import GradientLearner
from distboost.learners.gradient import pack_rounds
from distboost.trees.losses import SquaredError


def test_level_partition_cache_is_only_a_shortcut():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    y = X[:, 0] + rng.normal(size=500)
    schema = Schema(["a", "b", "c"], np.zeros(3, bool))
    mapper = BinMapper(32).fit(X, schema.is_categorical, {})
    shard = make_shard(X, y, None, schema, mapper, None, 0, 0)
    state = _group.set_rows(_group.bundle(shard), GradientLearner(SquaredError()), np.zeros(1), None)
    learner = GradientLearner(SquaredError(), (2.0**40, 2.0**40))
    state, _ = _group.start_round(state, learner, None, False, 0, np.arange(3))

    def splits(node_ids, feature, children, build_left):
        n = len(node_ids)
        goes_left = np.zeros((n, 256), bool)
        goes_left[:, :10] = True
        ints = lambda v: np.array(v, np.int64)
        return LevelSplits(ints([0] * n), ints(node_ids), ints([feature] * n), goes_left,
                           ints([c[0] for c in children]), ints([c[1] for c in children]),
                           np.array(build_left), ints(range(n)))

    level1 = splits([0], 0, [(1, 2)], [True])
    level2 = splits([1, 2], 1, [(3, 4), (5, 6)], [True, False])  # build nodes 3 and 6
    state.memory.forget()
    _, counts1, _ = _group.level(state, (level1,), 1, np.arange(3))
    with_cache, counts, _ = _group.level(state, (level1, level2), 2, np.arange(3))
    with_cache = with_cache.copy()  # the next wave reuses the group's histogram memory
    state.memory.forget()
    recomputed, counts_again, _ = _group.level(state, (level1, level2), 2, np.arange(3))
    np.testing.assert_array_equal(with_cache, recomputed)
    np.testing.assert_array_equal(counts, counts_again)
    codes = shard.X_binned
    left = codes[:, 0] < 10
    assert counts1.tolist() == [[left.sum(), (~left).sum()]]
    assert counts.tolist() == [[(left & (codes[:, 1] < 10)).sum(), (left & (codes[:, 1] >= 10)).sum()],
                               [(~left & (codes[:, 1] < 10)).sum(), (~left & (codes[:, 1] >= 10)).sum()]]
    assert with_cache[:, 0, :, 2].sum() > 0  # rows reached nodes 3 and 6


def test_waves_reuse_the_group_histogram_memory_and_start_from_zero():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    schema = Schema(["a", "b"], np.zeros(2, bool))
    mapper = BinMapper(16).fit(X, schema.is_categorical, {})
    shard = make_shard(X, X[:, 0], None, schema, mapper, None, 0, 0)
    state = _group.set_rows(_group.bundle(shard), GradientLearner(SquaredError()), np.zeros(1), None)
    learner = GradientLearner(SquaredError(), (2.0**40, 2.0**40))
    goes_left = np.zeros((1, 256), bool)
    goes_left[0, :8] = True
    ints = lambda v: np.array(v, np.int64)
    split = LevelSplits(ints([0]), ints([0]), ints([0]), goes_left, ints([1]), ints([2]),
                        np.array([True]), ints([0]))

    state, (root, *_) = _group.start_round(state, learner, None, False, 0, np.arange(2))
    root_again = _group.start_round(state, learner, None, False, 1, np.arange(2))[1][0]
    assert np.shares_memory(root, root_again)  # the same memory, round after round
    first = _group.level(state, (split,), 1, np.arange(2))[0]
    kept = first.copy()
    second = _group.level(state, (split,), 1, np.arange(2))[0]
    assert np.shares_memory(first, second)
    np.testing.assert_array_equal(second, kept)  # zeroed before each wave, not added to
    fresh = replace(state, memory=_group.GroupMemory())
    np.testing.assert_array_equal(_group.level(fresh, (split,), 1, np.arange(2))[0], kept)


def test_restore_replays_the_rows_through_the_learner_to_the_same_state():
    """``restore`` (a rebuilt holder) from the history's data: the rows from
    scratch, the trees added round by round, the statistics of the round in
    progress, equal to what the waves made, to the bit."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    schema = Schema(["a", "b"], np.zeros(2, bool))
    mapper = BinMapper(16).fit(X, schema.is_categorical, {})
    shards = [make_shard(X[i::2], X[i::2, 0] ** 2, None, schema, mapper, None, i, i)
              for i in range(2)]
    learner = GradientLearner(SquaredError(), (2.0**40, 2.0**40))
    first, second = (pack_rounds([[stump(rng.normal(), rng.normal(), f, 7)]], 1) for f in (0, 1))
    base, start = np.array([0.3]), _group.RowsFrom(learner, np.array([0.3]), None)
    live = _group.set_rows(_group.bundle(*shards), learner, base, None)
    live, _ = _group.start_round(live, learner, None, False, 0, np.arange(2))
    live, _ = _group.start_round(live, learner, first, False, 1, np.arange(2))
    added = (_group.TreesAdded(learner, None, 0), _group.TreesAdded(learner, first, 1))
    mid_round = _group.restore(_group.bundle(*shards), start, added)
    _assert_same_rows(mid_round, live)
    assert len(mid_round.stats) == 2  # the statistics of round 1, in progress

    live, _ = _group.finish(live, learner, second, False)
    added += (_group.TreesAdded(learner, second),)
    _assert_same_rows(_group.restore(_group.bundle(*shards), start, added), live)


def _assert_same_rows(got, want):
    for name in ("rows", "stats", "positions"):
        assert len(getattr(got, name)) == len(getattr(want, name))
        for a, b in zip(getattr(got, name), getattr(want, name)):
            np.testing.assert_array_equal(a, b)


def test_a_round_start_adds_the_trees_from_the_routed_rows_or_walks_them():
    """The round start adds the previous round's trees from where its levels
    left the rows (``learners.RoutedLearner``), equal to the bit to the walk a
    rebuilt holder (no rows remembered) makes; and it does take that path."""
    from distboost.learners import RoutedLearner

    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 3))
    X[rng.random(X.shape) < 0.05] = np.nan
    state, learner, _, trees, history = _grown_round(
        X, lambda x: np.sin(3 * np.nan_to_num(x[:, 0])) + x[:, 1] ** 2, 3, 4)
    assert isinstance(learner, RoutedLearner)
    update = pack_rounds([trees], 1)
    assert len(history) == 4 and _group._routed(state, learner, update)[0] is not None

    calls = []
    learner.update_routed = lambda *a: calls.append(1) or GradientLearner.update_routed(learner, *a)
    routed, _ = _group.start_round(state, learner, update, False, 1, np.arange(3))
    assert len(calls) == 3  # every partition took the routed path
    routed = replace(routed, **{name: tuple(a.copy() for a in getattr(routed, name))
                                for name in ("rows", "stats", "positions")})  # buffers reused
    state.memory.forget()
    walked, _ = _group.start_round(state, learner, update, False, 1, np.arange(3))
    assert len(calls) == 3
    _assert_same_rows(routed, walked)
    assert not np.array_equal(routed.rows[0], state.rows[0])  # the trees were added


def test_a_round_start_counts_the_pending_last_level_as_its_own_wave_would():
    """``pending`` (the previous round's history, its count-only last level
    last): the round start counts its children's rows where level 2 left
    them, without moving them, then adds the trees from there (a step more).
    Counts and rows equal the level wave's followed by a plain round start,
    also on a holder that remembers no partitions (rebuilt)."""

    rng = np.random.default_rng(4)
    X = rng.normal(size=(2400, 3))
    X[rng.random(X.shape) < 0.05] = np.nan
    state, learner, grower, trees, history = _grown_round(
        X, lambda x: np.cos(2 * np.nan_to_num(x[:, 1])) + x[:, 0], 2, 3, defer=True)
    update = pack_rounds([trees], 1)
    pending = (*history, grower.pending.splits)
    assert len(history) == 2 and len(pending[-1].tree) == 4

    def copied(s):
        return replace(s, **{name: tuple(a.copy() for a in getattr(s, name))
                             for name in ("rows", "stats", "positions")})

    expected_counts = _group.level(state, pending, 0, np.arange(3)).counts
    expected = copied(_group.start_round(state, learner, update, False, 1, np.arange(3))[0])
    calls = []  # the order of each partition's rows the trees are added from

    def update_routed(shard, margin, update, partition, places):
        calls.append(partition.order.copy())
        return GradientLearner.update_routed(learner, shard, margin, update, partition, places)

    learner.update_routed = update_routed
    for remembered in (True, False):
        if remembered:  # the partitions after level 2, as its wave left them
            _group.level(state, tuple(history), int((history[-1].slot >= 0).sum()), np.arange(3))
            level_2 = [p.order.copy() for p in state.memory.routed(state)[0]]
        else:
            state.memory.forget()
        got, started = _group.start_round(state, learner, update, False, 1, np.arange(3), pending)
        np.testing.assert_array_equal(started.pending_counts, expected_counts)
        _assert_same_rows(got, expected)
        if remembered:  # added from level 2's rows, which the count did not move
            assert len(calls) == 2
            assert all(np.array_equal(a, b) for a, b in zip(level_2, calls))
    assert expected_counts.sum() == 2400
    with pytest.raises(ValueError, match="builds histogram slot 1, but the level has 0 slot"):
        _group.level(state, tuple(history), 0, np.arange(3))  # level 2 builds two children
    combined = _group.CombineRoundStart(learner)([started, started], _group.Buffers())
    np.testing.assert_array_equal(combined.pending_counts, 2 * expected_counts)


def _grown_round(X, target, n_shards, max_depth, defer=False):
    """A group of ``n_shards`` shards of ``X`` (every n-th row, ``target(x)``),
    its first round started and its tree grown on the group's own levels.

    Returns (state, learner, grower, trees, history of the levels sent).
    """
    from distboost.kernels.splitting import GradientCriterion, SplitParams
    from distboost.trees.evaluation import SplitFinder
    from distboost.trees.grower import TreeGrower
    from distboost.trees.params import GrowthParams

    schema = Schema(["a", "b", "c"], np.zeros(3, bool))
    mapper = BinMapper(64).fit(X, schema.is_categorical, {})
    shards = [make_shard(X[i::n_shards], target(X[i::n_shards]), None, schema, mapper, None, i, i)
              for i in range(n_shards)]
    learner = GradientLearner(SquaredError(), (2.0**30, 2.0**30), n_stats=2)
    state = _group.set_rows(_group.bundle(*shards), learner, np.zeros(1), None)
    state, start = _group.start_round(state, learner, None, False, 0, np.arange(3))
    history = []

    def build_level(splits, n_slots):
        history.append(splits)
        result = _group.level(state, tuple(history), n_slots, np.arange(3))
        return result.histograms.copy(), result.counts

    criterion = GradientCriterion(SplitParams(), (2.0**30, 2.0**30), counts=False)
    finder = SplitFinder(criterion, mapper, GrowthParams(max_depth=max_depth),
                         np.ones((1, 3), bool))
    grower = TreeGrower(start.histograms.copy(), finder=finder, build_level=build_level,
                        root_counts=start.root_counts, defer_counts=defer)
    return state, learner, grower, grower.grow(), history


def test_waves_leaving_the_worker_send_compact_histograms_and_zeroed_memory():
    """``wire``: a level's mostly empty histograms leave compact, the group's
    memory is left zeroed (not zeroed again by the next wave) and every wave
    still equals the one kept in process."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    schema = Schema(["a", "b", "c"], np.zeros(3, bool))
    mapper = BinMapper(255).fit(X, schema.is_categorical, {})
    shard = make_shard(X, X[:, 0], None, schema, mapper, None, 0, 0)
    state = _group.set_rows(_group.bundle(shard), GradientLearner(SquaredError()), np.zeros(1), None)
    learner = GradientLearner(SquaredError(), (2.0**40, 2.0**40))
    state, root = _group.start_round(state, learner, None, False, 0, np.arange(3), wire=True)
    assert not is_compact(root.histograms)  # 200 rows fill most of 255 bins: dense
    ints = lambda v: np.array(v, np.int64)
    for cut in (5, 40, 5, 200):  # built children of 5 to 40 rows: mostly empty
        goes_left = np.zeros((1, 256), bool)
        goes_left[0, :cut] = True
        split = LevelSplits(ints([0]), ints([0]), ints([0]), goes_left, ints([1]), ints([2]),
                            np.array([cut < 100]), ints([0]))
        in_process = _group.level(state, (split,), 1, np.arange(3))[0].copy()
        sent = _group.level(state, (split,), 1, np.arange(3), wire=True)[0]
        assert is_compact(sent)
        np.testing.assert_array_equal(sent.to_dense(), in_process)
        memory = state.memory.buffers._arrays["level"]
        assert not memory.any()  # compacting zeroed it: the next wave starts from zero
