"""Per-worker-group task functions."""

import numpy as np

from distboost import _group
from distboost._input import Schema
from distboost._partition import make_shard
from distboost.binning import BinMapper
from distboost.learner import GradientLearner
from distboost.losses import SquaredError


def test_level_positions_cache_is_only_a_shortcut():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    y = X[:, 0] + rng.normal(size=500)
    schema = Schema(["a", "b", "c"], np.zeros(3, bool))
    mapper = BinMapper(32).fit(X, schema.is_categorical, {})
    shard = make_shard(X, y, None, schema, mapper, None, 0, 0)
    state = _group.set_rows(_group.bundle(shard), GradientLearner(SquaredError()), np.zeros(1), None)
    learner = GradientLearner(SquaredError(), (2.0**40, 2.0**40))
    state, _ = _group.start_round(state, learner, None, False, 0, np.arange(3))

    def splits(node_ids, feature, children):
        split_of_node = np.full((1, 8), -1, np.int32)
        goes_left = np.zeros((len(node_ids), 256), bool)
        for s, node in enumerate(node_ids):
            split_of_node[0, node] = s
            goes_left[s, :10] = True
        left = np.array([c[0] for c in children], np.int32)
        right = np.array([c[1] for c in children], np.int32)
        return split_of_node, np.full(len(node_ids), feature, np.int32), goes_left, left, right

    level1 = splits([0], 0, [(1, 2)])
    level2 = splits([1, 2], 1, [(3, 4), (5, 6)])
    slots = np.full((1, 8), -1, np.int32)
    slots[0, [3, 6]] = [0, 1]
    _group._POSITIONS.clear()
    _group.level(state, (level1,), np.array([[-1, 0, -1, -1, -1, -1, -1, -1]], np.int32), 1, np.arange(3))
    with_cache, _ = _group.level(state, (level1, level2), slots, 2, np.arange(3))
    _group._POSITIONS.clear()
    recomputed, _ = _group.level(state, (level1, level2), slots, 2, np.arange(3))
    np.testing.assert_array_equal(with_cache, recomputed)
    assert with_cache[:, 0, :, 2].sum() > 0  # rows reached nodes 3 and 6
