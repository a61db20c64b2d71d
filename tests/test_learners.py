"""The learners meet the engine's typed protocol, and each update type is what
its learner adds: a tiny shard whose row states can be checked by hand."""

import numpy as np
import pytest

from distboost.engine.shard import Shard
from distboost.kernels.common import NODE_DTYPE
from distboost.kernels.losses import SquaredError
from distboost.kernels.tree import PackedTrees, Tree, pack_trees
from distboost.learners import AdaBoostLearner, AdaBoostUpdate, GradientLearner
from distboost.learners.gradient import RoundTrees, pack_rounds


def _shard():
    X = np.array([[0], [1], [2], [3]], np.uint8)
    return Shard(X, np.array([1.0, 0.0, 1.0, 1.0]), np.array([1.0, 1.0, 2.0, 0.0]), 0, 0)


def _stump(left: float, right: float) -> Tree:
    """x0 bin <= 1 goes left."""
    nodes = np.zeros(3, NODE_DTYPE)
    nodes["feature"][0], nodes["bin_threshold"][0] = 0, 1
    nodes["left"][0], nodes["right"][0] = 1, 2
    nodes["is_leaf"][1:] = 1
    nodes["value"][1:] = (left, right)
    return Tree(nodes, np.zeros((0, 4), np.uint64))


def test_gradient_update_adds_packed_trees_to_the_margins():
    shard, learner = _shard(), GradientLearner(SquaredError())
    assert isinstance(pack_trees([_stump(-1.0, 2.0)]), PackedTrees)
    packed = pack_rounds([[_stump(-1.0, 2.0)]], 1)
    assert isinstance(packed, RoundTrees) and packed.roots.tolist() == [0]
    assert packed.outputs.tolist() == [0]
    margin = learner.initial_state(shard, np.array([0.5]), None)
    assert margin.tolist() == [[0.5] * 4]
    assert learner.update(shard, margin, packed).tolist() == [[-0.5, -0.5, 2.5, 2.5]]
    assert learner.initial_state(shard, np.array([0.5]), packed).tolist() == [[-0.5, -0.5, 2.5, 2.5]]


def test_adaboost_weights_start_from_sample_weights_and_take_samme_updates():
    shard, learner = _shard(), AdaBoostLearner(2)
    w, _ = learner.initial_state(shard, 4.0)
    assert w.tolist() == [0.25, 0.25, 0.5, 0.0]
    with pytest.raises(ValueError, match="start from the sample weights"):
        learner.initial_state(shard, 4.0, AdaBoostUpdate(pack_trees([]), "SAMME", 1.0, 1.0))
    miss = np.array([1.0, 0.0, 0.0, 1.0])  # rows 0 and 3 misclassified
    update = AdaBoostUpdate(pack_trees([]), "SAMME", alpha=np.log(3.0), z=1.5)
    new, _ = learner.update(shard, (w, miss), update)
    np.testing.assert_allclose(new, [0.25 * 3 / 1.5, 0.25 / 1.5, 0.5 / 1.5, 0.0])


def test_each_tree_of_a_round_adds_to_its_own_output():
    shard, learner = _shard(), GradientLearner(SquaredError())
    packed = pack_rounds([[_stump(1.0, 2.0), _stump(10.0, 20.0)]] * 2, 2)
    assert packed.outputs.tolist() == [0, 1, 0, 1]
    margin = learner.update(shard, learner.initial_state(shard, np.zeros(2), None), packed)
    assert margin.tolist() == [[2.0, 2.0, 4.0, 4.0], [20.0, 20.0, 40.0, 40.0]]
