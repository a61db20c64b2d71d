"""The learners meet the engine's typed protocol, and each update type is what
its learner adds: a tiny shard whose row states can be checked by hand."""

import numpy as np
import pytest
from _trees import stump

from distboost.engine.shard import Shard
from distboost.kernels.tree import PackedTrees, pack_trees
from distboost.learners import AdaBoostLearner, AdaBoostUpdate, GradientLearner
from distboost.learners.gradient import RoundTrees, pack_rounds
from distboost.trees.losses import SquaredError


def _shard():
    X = np.array([[0], [1], [2], [3]], np.uint8)
    return Shard(X, np.array([1.0, 0.0, 1.0, 1.0]), np.array([1.0, 1.0, 2.0, 0.0]), 0, 0)


def test_gradient_update_adds_packed_trees_to_the_margins():
    shard, learner = _shard(), GradientLearner(SquaredError())
    assert isinstance(pack_trees([stump(-1.0, 2.0)]), PackedTrees)
    packed = pack_rounds([[stump(-1.0, 2.0)]], 1)
    assert isinstance(packed, RoundTrees) and packed.roots.tolist() == [0]
    assert packed.outputs.tolist() == [0]
    margin = learner.initial_state(shard, np.array([0.5]), None)
    assert margin.tolist() == [[0.5] * 4]
    assert learner.update(shard, margin, packed).tolist() == [[-0.5, -0.5, 2.5, 2.5]]
    assert learner.initial_state(shard, np.array([0.5]), packed).tolist() == [[-0.5, -0.5, 2.5, 2.5]]


def test_adaboost_weights_start_from_sample_weights_and_take_samme_updates():
    shard, learner = _shard(), AdaBoostLearner(2)
    w = learner.initial_state(shard, 4.0)
    assert w.tolist() == [0.25, 0.25, 0.5, 0.0]  # step 1: w_i = w_i / sum(w)
    with pytest.raises(ValueError, match="start from the sample weights"):
        learner.initial_state(shard, 4.0, AdaBoostUpdate(pack_trees([]), "SAMME", 1.0, 1.0))
    tree = pack_trees([stump(0.0, 1.0)])  # classes 0, 0, 1, 1 against y = 1, 0, 1, 1
    alpha, err = np.log(3.0), 0.25  # only row 0 is misclassified
    z = (1 - err) + np.exp(alpha) * err  # step 2(d)'s normalizer: the new weights' sum
    new = learner.update(shard, w, AdaBoostUpdate(tree, "SAMME", alpha, z))
    np.testing.assert_allclose(new, [0.25 * 3 / 1.5, 0.25 / 1.5, 0.5 / 1.5, 0.0])
    assert new.sum() == pytest.approx(1.0)


def test_each_tree_of_a_round_adds_to_its_own_output():
    shard, learner = _shard(), GradientLearner(SquaredError())
    packed = pack_rounds([[stump(1.0, 2.0), stump(10.0, 20.0)]] * 2, 2)
    assert packed.outputs.tolist() == [0, 1, 0, 1]
    margin = learner.update(shard, learner.initial_state(shard, np.zeros(2), None), packed)
    assert margin.tolist() == [[2.0, 2.0, 4.0, 4.0], [20.0, 20.0, 40.0, 40.0]]
