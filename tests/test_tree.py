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
def _grown_with_rows(X, g, growth, counts=False, is_categorical=None, in_bag=None):
    """One round grown in process from integer statistics, and what its levels
    left: (binned rows, packed trees, partition, split history)."""
    from distboost.binning import BinMapper
    from distboost.kernels.histogram import RowPartition, columns, root_histograms, split_level
    from distboost.kernels.splitting import GradientCriterion, SplitParams
    from distboost.trees.evaluation import SplitFinder
    from distboost.trees.grower import TreeGrower

    n, n_features = X.shape
    is_categorical = np.zeros(n_features, bool) if is_categorical is None else is_categorical
    categories = {j: np.unique(X[~np.isnan(X[:, j]), j]) for j in np.flatnonzero(is_categorical)}
    mapper = BinMapper(256).fit(X, is_categorical, categories)
    binned = mapper.transform(X)
    stats = np.stack([g, np.ones(n)] + ([np.ones(n)] if counts else []), axis=1)
    positions = np.zeros((1, n), np.int32) if in_bag is None else np.where(in_bag, 0, -1)[None]
    part = RowPartition.from_positions(positions.astype(np.int32))
    features, cols, history = np.arange(n_features), columns(binned), []

    def build_level(splits, n_slots):
        history.append(splits)
        return split_level(binned, cols, stats.astype(np.int64)[None], part, splits, n_slots,
                           features)

    criterion = GradientCriterion(SplitParams(), (1.0, 1.0), counts)
    root = root_histograms(binned, stats.astype(np.int64)[None], part, features)
    finder = SplitFinder(criterion, mapper, growth, np.ones((1, n_features), bool))
    trees = TreeGrower(root, finder=finder, build_level=build_level,
                       root_counts=part.stop[:, 0]).grow()
    return binned, pack_trees(trees), part, history


def _routed_vs_walked(binned, packed, part, history):
    from distboost.kernels.histogram import columns
    from distboost.kernels.tree import add_routed, routed_places

    margin = np.random.default_rng(0).normal(size=(1, len(binned)))
    walked, routed = margin.copy(), margin.copy()
    predict_binned(binned, *packed, np.zeros(1, np.int64), walked)
    places = routed_places(packed.nodes, packed.roots, history)
    done = add_routed(columns(binned), *packed, np.zeros(1, np.int64), part, *places, routed)
    return done, routed, walked


def _data(n=4000, seed=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 7, n)  # categorical
    X[rng.random((n, 4)) < 0.05] = np.nan
    g = (rng.integers(-1000, 1000, n) + (np.nan_to_num(X[:, 1]) > 0) * 900
         - np.isin(X[:, 3], [1, 4]) * 1500 + (np.nan_to_num(X[:, 0]) > 0.3) * 600)
    return X, g, np.array([False, False, False, True])


def test_routed_rows_get_the_trees_of_a_walk_to_the_bit():
    """``add_routed`` adds what ``predict_binned`` adds, to the bit: depth-wise
    (the last level's rows moved into the leaves), best-first with speculative
    expansions the tree did not take, and with the row count in the statistics
    (the last level not routed: rows continue from a split node), on data with
    missing values and a categorical feature."""
    from distboost.trees.params import GrowthParams

    X, g, is_cat = _data()
    for growth, counts in [(GrowthParams(max_depth=5), False),
                           (GrowthParams(max_depth=None, max_leaf_nodes=13), False),
                           (GrowthParams(max_depth=5), True)]:
        binned, packed, part, history = _grown_with_rows(X, g, growth, counts, is_cat)
        assert packed.nodes["is_categorical"].any() and len(packed.nodes) > 15
        done, routed, walked = _routed_vs_walked(binned, packed, part, history)
        assert done
        np.testing.assert_array_equal(routed, walked)


def test_rows_a_level_above_the_leaves_get_their_leaf_values_by_code():
    """A deferred last level (``group._pending_counts``): the rows stay where
    the level above left them, in split nodes with two leaves below, numeric
    and categorical, missing values included; added by code, to the bit."""
    from distboost.kernels.histogram import RowPartition, columns, replay
    from distboost.kernels.tree import routed_places
    from distboost.trees.params import GrowthParams

    X, g, is_cat = _data()
    binned, packed, _, history = _grown_with_rows(X, g, GrowthParams(max_depth=6), False, is_cat)
    part = replay(columns(binned), RowPartition.from_positions(np.zeros((1, len(X)), np.int32)),
                  history[:-1])
    _, place = routed_places(packed.nodes, packed.roots, history[:-1])
    nodes = packed.nodes[place[0]]
    two_leaves = ((nodes["is_leaf"] == 0) & (packed.nodes["is_leaf"][nodes["left"]] == 1)
                  & (packed.nodes["is_leaf"][nodes["right"]] == 1))
    assert two_leaves.sum() >= 20 and nodes["is_categorical"][two_leaves].any()
    done, routed, walked = _routed_vs_walked(binned, packed, part, history[:-1])
    assert done
    np.testing.assert_array_equal(routed, walked)


def test_best_first_speculation_leaves_rows_below_leaves_of_the_tree():
    """Speculative children the tree did not take stand for their parent, a
    leaf; here one of them was expanded too, and its children stand for the
    same leaf."""
    from distboost.kernels.tree import routed_places
    from distboost.trees.params import GrowthParams

    X, g, is_cat = _data(seed=7)
    binned, packed, part, history = _grown_with_rows(
        X, g, GrowthParams(max_depth=None, max_leaf_nodes=13), False, is_cat)
    held, place = routed_places(packed.nodes, packed.roots, history)
    n_taken = int(packed.nodes["is_leaf"].sum()) - 1
    assert (sum(len(splits.tree) for splits in history), n_taken) == (16, 12)  # 4 not taken
    assert packed.nodes["is_leaf"][place[0]].all()
    assert (len(held[0]), len(set(place[0].tolist()))) == (17, 13)  # 17 nodes, 13 leaves
    done, routed, walked = _routed_vs_walked(binned, packed, part, history)
    assert done
    np.testing.assert_array_equal(routed, walked)


def test_rows_outside_the_round_or_other_trees_are_left_to_the_walk():
    """Rows left out of the round (no partition node) and trees the levels did
    not grow: nothing is added, and the caller walks."""
    from distboost.kernels.tree import routed_places
    from distboost.trees.params import GrowthParams

    X, g, is_cat = _data(seed=8)
    in_bag = np.random.default_rng(1).random(len(X)) < 0.8
    binned, packed, part, history = _grown_with_rows(X, g, GrowthParams(max_depth=3), False,
                                                     is_cat, in_bag)
    done, routed, _ = _routed_vs_walked(binned, packed, part, history)
    assert not done
    np.testing.assert_array_equal(routed, np.random.default_rng(0).normal(size=(1, len(X))))
    other = pack_trees([Tree(packed.nodes.copy(), packed.bitsets)])
    other.nodes["feature"][other.nodes["is_leaf"] == 0] = 2  # another split feature
    assert routed_places(other.nodes, other.roots, history) is None


def _whole_trees_here(outputs, in_bag=None):
    """Two trees grown in one ``local_grower.grow`` call on ``_data``'s rows
    (the second on other gradients), packed, with their partition and levels."""
    from distboost.binning import BinMapper
    from distboost.kernels import local_grower
    from distboost.kernels.histogram import RowPartition, columns
    from distboost.kernels.splitting import GradientCriterion, SplitParams
    from distboost.trees.params import GrowthParams
    from distboost.trees.tree import tree_from_table

    X, g, is_cat = _data(seed=9)
    n, n_features = X.shape
    categories = {j: np.unique(X[~np.isnan(X[:, j]), j]) for j in np.flatnonzero(is_cat)}
    mapper = BinMapper(256).fit(X, is_cat, categories)
    binned = mapper.transform(X)
    stats = np.stack([np.stack([g, np.ones(n)], axis=1),
                      np.stack([np.roll(g, 7) * 3, np.ones(n) * 2], axis=1)]).astype(np.int64)
    positions = np.zeros((2, n), np.int32)
    if in_bag is not None:
        positions[:, ~in_bag] = -1
    part = RowPartition.from_positions(positions)
    growth = GrowthParams(max_depth=4, learning_rate=0.3)
    criterion = GradientCriterion(SplitParams(), (1.0, 1.0), False)
    grown = local_grower.grow(binned, columns(binned), stats, part, criterion, mapper,
                              np.ones((2, n_features), bool), np.arange(n_features), growth)
    trees = [tree_from_table(t, criterion, mapper, growth.learning_rate) for t in grown.tables]
    return binned, pack_trees(trees), part, [grown.splits]


@pytest.mark.parametrize("parallel", [False, True], ids=["one-thread", "rows-on-threads"])
@pytest.mark.parametrize("outputs", [[0, 1], [0, 0]], ids=["two-outputs", "one-output"])
def test_whole_trees_grown_here_add_each_leaf_to_its_rows(monkeypatch, parallel, outputs):
    """Trees grown whole in one call: each leaf's value is added to the rows
    the grower left in it, to the bit what a walk adds (two trees on one
    output: in tree order; on threads, chunks of row positions that cut
    through leaves); rows outside a root leave everything to the walk."""
    from distboost.kernels import tree as tree_kernels
    from distboost.kernels.histogram import columns

    if parallel:
        monkeypatch.setattr(tree_kernels, "COPY_PARALLEL_MIN", 0)
        monkeypatch.setattr(tree_kernels, "ROUTED_CHUNK", 37)
    outputs = np.array(outputs, np.int64)
    binned, packed, part, history = _whole_trees_here(outputs)
    assert packed.nodes["is_leaf"].sum() > 20 and (packed.nodes["is_leaf"] == 0).sum() > 10
    places = tree_kernels.routed_places(packed.nodes, packed.roots, history)
    assert places == (None, None)
    margin = np.random.default_rng(0).normal(size=(2, len(binned)))
    walked, routed = margin.copy(), margin.copy()
    predict_binned(binned, *packed, outputs, walked)
    assert tree_kernels.add_routed(columns(binned), *packed, outputs, part, *places, routed)
    np.testing.assert_array_equal(routed, walked)
    assert (routed != margin).sum() == len(binned) * len(set(outputs.tolist()))

    in_bag = np.random.default_rng(2).random(len(binned)) < 0.9
    binned, packed, part, history = _whole_trees_here(outputs, in_bag)
    untouched = margin.copy()
    assert not tree_kernels.add_routed(columns(binned), *packed, outputs, part,
                                       *tree_kernels.routed_places(packed.nodes, packed.roots,
                                                                   history), untouched)
    np.testing.assert_array_equal(untouched, margin)


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
