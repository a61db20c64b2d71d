import numpy as np
import pytest

from distboost.kernels.tree import pack_trees, predict_binned
from distboost.trees.tree import Tree


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
    from distboost.kernels.routed import add_routed, routed_places

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


@pytest.mark.parametrize("chunk", [None, 37], ids=["one-item", "row-ids-cut-on-threads"])
def test_routed_rows_get_the_trees_of_a_walk_to_the_bit(monkeypatch, chunk):
    """``add_routed`` adds what ``predict_binned`` adds, to the bit: depth-wise
    (the last level's rows moved into the leaves), best-first with speculative
    expansions the tree did not take, and with the row count in the statistics
    (the last level not routed: rows continue from a split node), on data with
    missing values and a categorical feature; the rows in one work item, and
    cut by row id into several that cut through every node."""
    from distboost.kernels import routed as routed_kernels
    from distboost.trees.params import GrowthParams

    if chunk:
        monkeypatch.setattr(routed_kernels, "ROUTED_CHUNK", chunk)
        assert routed_kernels._row_chunk(4000) <= 1000

    X, g, is_cat = _data()
    for growth, counts in [(GrowthParams(max_depth=5), False),
                           (GrowthParams(max_depth=None, max_leaf_nodes=13), False),
                           (GrowthParams(max_depth=5), True)]:
        binned, packed, part, history = _grown_with_rows(X, g, growth, counts, is_cat)
        assert packed.nodes["is_categorical"].any() and len(packed.nodes) > 15
        done, routed, walked = _routed_vs_walked(binned, packed, part, history)
        assert done
        np.testing.assert_array_equal(routed, walked)


@pytest.mark.parametrize("chunk", [None, 37], ids=["one-item", "row-ids-cut-on-threads"])
def test_rows_a_level_above_the_leaves_get_their_leaf_values_by_code(monkeypatch, chunk):
    """A deferred last level (``group._pending_counts``): the rows stay where
    the level above left them, in split nodes with two leaves below, numeric
    and categorical, missing values included; added by code, to the bit."""
    from distboost.kernels import routed as routed_kernels

    if chunk:
        monkeypatch.setattr(routed_kernels, "ROUTED_CHUNK", chunk)
    from distboost.kernels.histogram import RowPartition, columns, replay
    from distboost.kernels.routed import routed_places
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
    from distboost.kernels.routed import routed_places
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
    from distboost.kernels.routed import routed_places
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
    output: in tree order; on threads, chunks of row ids that cut
    through every leaf); rows outside a root leave everything to the walk."""
    from distboost.kernels import routed as tree_kernels
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
