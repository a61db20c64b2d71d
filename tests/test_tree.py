import json

import numpy as np
import pytest

from distboost.kernels.common import MISSING_BIN, NODE_DTYPE
from distboost.kernels.tree import bitset_from_mask, pack_trees, predict_binned, predict_raw
from distboost.trees.tree import Tree


def three_node_tree(missing_left=True):
    """x0 <= 1.5 (bin 1) -> -1.0 else +2.0."""
    nodes = np.zeros(3, NODE_DTYPE)
    nodes[0] = (0.0, 10, 10.0, 0, 1.5, 1, missing_left, 0, -1, 1, 2, 5.0, 0, 0)
    nodes[1] = (-1.0, 4, 4.0, -1, 0.0, 0, 0, 0, -1, -1, -1, 0.0, 1, 1)
    nodes[2] = (2.0, 6, 6.0, -1, 0.0, 0, 0, 0, -1, -1, -1, 0.0, 1, 1)
    return Tree(nodes)


def test_hand_built_tree_predicts_raw_values():
    tree = three_node_tree()
    X = np.array([[1.0], [1.5], [1.6], [np.nan]])
    np.testing.assert_array_equal(tree.predict(X), [-1.0, -1.0, 2.0, -1.0])
    np.testing.assert_array_equal(three_node_tree(False).predict(X), [-1.0, -1.0, 2.0, 2.0])


def test_binned_and_raw_traversal_agree():
    tree = three_node_tree()
    X_binned = np.array([[0], [1], [2], [MISSING_BIN]], np.uint8)
    out = np.zeros((1, 4))
    predict_binned(X_binned, *pack_trees([tree]), np.zeros(1, np.int64), out)
    np.testing.assert_array_equal(out[0], [-1.0, -1.0, 2.0, -1.0])


def test_categorical_node_uses_its_bitset():
    nodes = np.zeros(3, NODE_DTYPE)
    nodes[0] = (0.0, 3, 3.0, 0, 0.0, 0, 0, 1, 0, 1, 2, 1.0, 0, 0)
    nodes[1]["value"], nodes[1]["is_leaf"], nodes[1]["feature"] = 5.0, 1, -1
    nodes[2]["value"], nodes[2]["is_leaf"], nodes[2]["feature"] = 7.0, 1, -1
    mask = np.zeros(256, bool)
    mask[[1, 70]] = True
    tree = Tree(nodes, bitset_from_mask(mask)[None, :])
    X = np.array([[0.0], [1.0], [70.0], [2.0], [np.nan], [300.0]])
    np.testing.assert_array_equal(tree.predict(X), [7, 5, 5, 7, 7, 7])
    alone, first = pack_trees([tree]), pack_trees([tree, three_node_tree()])
    assert (alone.nodes == first.nodes[:3]).all() and alone.roots.tolist() == [0]
    np.testing.assert_array_equal(alone.bitsets, first.bitsets)
    assert alone.nodes is not tree.nodes and alone.bitsets is not tree.cat_bitsets


def test_packed_trees_add_up_per_output():
    t = three_node_tree()
    packed = pack_trees([t, t, t])
    X = np.array([[1.0], [2.0]])
    out = np.zeros((2, 2))
    predict_raw(X, *packed, np.array([0, 1, 0], np.int64), out)
    np.testing.assert_array_equal(out, [[-2.0, 4.0], [-1.0, 2.0]])


def test_json_round_trip_is_exact():
    tree = three_node_tree()
    tree.nodes["threshold"][0] = 0.1 + 0.2
    mask = np.zeros(256, bool)
    mask[[3, 200]] = True
    tree.cat_bitsets = bitset_from_mask(mask)[None, :]
    again = Tree.from_dict(json.loads(json.dumps(tree.to_dict())))
    assert again == tree


def test_heap_order_walk_reaches_the_leaves_the_links_reach():
    """Every traversal kind, on raw values (NaN included) and bin codes (the
    missing bin included), over trees of depths 1 to 9 (best-first, so
    leaves sit at every depth): the heap-order kernel (a computed next slot,
    a block's sums stored once) and the link-following one agree exactly,
    added to scores already there."""
    import distboost as db
    from distboost.kernels.tree import (
        HEAP_MAX_DEPTH,
        _max_depth,
        _walk_heap,
        _walk_links,
        pack_leaf_values,
    )

    rng = np.random.default_rng(8)
    X = rng.normal(size=(3000, 4))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) * np.nan_to_num(X[:, 1]) + rng.logistic(size=3000) > 0)
    model = db.GradientBoostingClassifier(n_estimators=6, max_depth=None, max_leaf_nodes=12,
                                          learning_rate=0.5).fit(X, y.astype(int))
    stumps = db.GradientBoostingRegressor(n_estimators=2, max_depth=1).fit(X, np.nan_to_num(X[:, 2]))
    trees = [t for r in model.trees_ + stumps.trees_ for t in r]
    nodes, roots, bitsets = pack_trees(trees)
    depth = _max_depth(nodes, roots)
    assert 4 <= depth <= HEAP_MAX_DEPTH and {t.max_depth for t in trees} >= {1, depth}
    binned = np.ascontiguousarray(model.bin_mapper_.transform(X))
    assert (binned == MISSING_BIN).any()
    k = len(roots)
    leaf_values = pack_leaf_values(trees, [np.stack([t.nodes["value"], t.nodes["count"]], axis=1)
                                           for t in trees])
    weights, outputs = rng.random(k), np.arange(k) % 3
    for data, raw in ((X, True), (binned, False)):
        for kind, shape in ((0, (3, len(X))), (1, (len(X), 2)), (2, (k, len(X))), (3, (k, len(X)))):
            a = rng.normal(size=shape)  # scores add to what is there (a base score)
            b = a.copy()
            _walk_links(data, raw, nodes, roots, bitsets, kind, outputs, leaf_values, weights, a)
            _walk_heap(data, raw, nodes, roots, depth, kind, outputs, leaf_values, weights, b)
            np.testing.assert_array_equal(a, b)


# ------------------------------------------------ trees added to routed rows
@pytest.mark.parametrize("n_rows", [3065, 200_000])
def test_margins_are_copied_whole_on_one_thread_and_on_many(n_rows):
    """``copy_margins``: below ``COPY_PARALLEL_MIN`` numpy's copy, above it rows
    in parallel; either way every margin of every output."""
    from distboost.kernels.tree import COPY_PARALLEL_MIN, copy_margins

    src = np.random.default_rng(0).normal(size=(2, n_rows))
    dst = np.zeros_like(src)
    assert (src.size >= COPY_PARALLEL_MIN) == (n_rows == 200_000)
    copy_margins(src, dst)
    np.testing.assert_array_equal(dst, src)


def test_the_largest_leaf_is_read_from_leaves_only():
    from distboost.kernels.tree import largest_leaf

    nodes = np.zeros(4, NODE_DTYPE)
    nodes["value"] = [10.0, -3.0, 2.0, -7.0]
    nodes["is_leaf"] = [0, 1, 1, 0]
    assert largest_leaf(nodes) == 3.0
    assert largest_leaf(nodes[:1]) == 0.0
