"""Random feature subsets (``distboost.kernels.sampling``): boosting's by-level and
by-node column subsampling nests and has the requested sizes, the forests'
per-node subsets skip constant features and key by global tree index, and
every draw is reproducible."""

import numpy as np

from distboost.kernels.common import MAX_BINS
from distboost.kernels.sampling import (
    NodeFeatures,
    NodeFeatureSampler,
    draw_node_features,
    node_keys,
)


def test_node_features_nest_and_have_the_requested_sizes():
    tree_masks = np.zeros((2, 20), bool)
    tree_masks[0, :10] = True
    tree_masks[1, 5:] = True
    nf = NodeFeatures(tree_masks, bylevel=0.5, bynode=0.4, seed=1, round_index=7)
    for t in range(2):
        for depth in range(3):
            level = nf.level_mask(t, depth)
            assert not (level & ~tree_masks[t]).any()
            assert level.sum() == round(0.5 * tree_masks[t].sum())
            for node in range(5):
                mask = nf.node_mask(t, depth, node)
                assert not (mask & ~level).any()
                assert mask.sum() == max(1, round(0.4 * level.sum()))
                assert np.array_equal(mask, NodeFeatures(tree_masks, 0.5, 0.4, 1, 7).node_mask(t, depth, node))
    other_round = NodeFeatures(tree_masks, 0.5, 0.4, 1, 8)
    assert any(not np.array_equal(nf.level_mask(0, d), other_round.level_mask(0, d)) for d in range(3))


def test_node_features_skip_constant_features_and_are_reproducible():
    keys = node_keys(7, [(0, 0), (0, 1), (3, 5)])
    allowed = np.ones((3, 10), bool)
    non_constant = np.ones((3, 10), bool)
    non_constant[:, :6] = False
    masks = draw_node_features(keys, allowed, non_constant, 3)
    assert (masks.sum(axis=1) == 3).all()
    assert not masks[:, :6].any()
    np.testing.assert_array_equal(masks, draw_node_features(keys, allowed, non_constant, 3))
    # different nodes draw differently (with these keys)
    many = draw_node_features(node_keys(7, [(t, 0) for t in range(20)]), np.ones((20, 10), bool),
                              np.ones((20, 10), bool), 3)
    assert len({m.tobytes() for m in many}) > 5


def test_feature_sampler_keys_by_global_tree_index():
    hist = np.ones((2, 8, MAX_BINS, 3), np.int64)
    masks = np.ones((2, 8), bool)
    a = NodeFeatureSampler(2, seed=1, first_tree=4, count_stat=2)(masks, hist, [(0, 0, 0), (1, 0, 0)])
    b = NodeFeatureSampler(2, seed=1, first_tree=5, count_stat=2)(masks[:1], hist[:1], [(0, 0, 0)])
    np.testing.assert_array_equal(a[1], b[0])


def test_the_grower_hook_gives_each_node_its_own_mask():
    tree_masks = np.ones((2, 12), bool)
    nf = NodeFeatures(tree_masks, bylevel=0.5, bynode=0.5, seed=3, round_index=0)
    nodes = [(0, 1, 1), (1, 2, 4)]
    masks = nf(tree_masks.copy(), None, nodes)
    assert masks.shape == (2, 12)
    for k, (t, depth, node) in enumerate(nodes):
        np.testing.assert_array_equal(masks[k], nf.node_mask(t, depth, node))
