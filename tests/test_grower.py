"""The grower on the real histogram kernels: a tree checked by hand, and the
same trees from (g, h) statistics as from (g, h, count)."""

import numpy as np
import pytest

from distboost.binning import BinMapper
from distboost.kernels.histogram import RowPartition, columns, root_histograms, split_level
from distboost.kernels.splitting import GradientCriterion, SplitParams
from distboost.trees.evaluation import SplitFinder
from distboost.trees.grower import LevelBlocks, TreeGrower
from distboost.trees.params import GrowthParams


def grow(X, g, h, counts, growth, params=None, is_categorical=None, n_parts=1, blocks=None):
    """One tree grown in process from integer statistics (scales 1); each
    level's histograms cut into ``n_parts`` partial sums (as holders send them)."""
    n, n_features = X.shape
    is_categorical = np.zeros(n_features, bool) if is_categorical is None else is_categorical
    categories = {j: np.unique(X[~np.isnan(X[:, j]), j]) for j in np.flatnonzero(is_categorical)}
    mapper = BinMapper(256).fit(X, is_categorical, categories)
    binned = mapper.transform(X)
    stats = np.stack([g, h] + ([np.ones(n)] if counts else []), axis=1).astype(np.int64)[None]
    part = RowPartition.from_positions(np.zeros((1, n), np.int32))
    features, cols = np.arange(n_features), columns(binned)

    def build_level(splits, n_slots):
        hist, counts = split_level(binned, cols, stats, part, splits, n_slots, features)
        if n_parts == 1:
            return hist, counts
        rng = np.random.default_rng(n_slots)
        parts = [rng.integers(-2**40, 2**40, hist.shape) for _ in range(n_parts - 1)]
        return (hist - sum(parts), *parts), counts

    criterion = GradientCriterion(params or SplitParams(), (1.0, 1.0), counts)
    root = root_histograms(binned, stats, part, features)
    finder = SplitFinder(criterion, mapper, growth, np.ones((1, n_features), bool))
    grower = TreeGrower(root, finder=finder, build_level=build_level,
                        root_counts=part.stop[:, 0], blocks=blocks)
    return grower.grow()[0]


@pytest.mark.parametrize("counts", [True, False])
def test_a_stump_checked_by_hand(counts):
    """x = 0 0 1 1 2 2, g = -2 -2 1 1 1 1, h = 5 5 1 1 1 1, lambda = 1.

    "x <= 0": G_L = -4, H_L = 10, G_R = 4, H_R = 4, gain = (16/11 + 16/5 - 0) / 2;
    "x <= 1": gain = (4/13 + 4/3) / 2, smaller. Leaves -G/(H + 1): 4/11 and -4/5.
    The left child has more hessian but fewer rows (2 against 4): without
    missing values in training, missing goes to the child with more rows.
    """
    X = np.array([[0.0], [0], [1], [1], [2], [2]])
    tree = grow(X, np.array([-2, -2, 1, 1, 1, 1]), np.array([5, 5, 1, 1, 1, 1]), counts,
                GrowthParams(max_depth=1))
    root, left, right = tree.nodes
    assert (root["feature"], root["bin_threshold"], root["left"], root["right"]) == (0, 0, 1, 2)
    assert root["gain"] == pytest.approx((16 / 11 + 16 / 5) / 2)
    assert root["missing_left"] == 0
    assert (left["value"], right["value"]) == (pytest.approx(4 / 11), pytest.approx(-4 / 5))
    assert (root["count"], left["count"], right["count"]) == (6, 2, 4)
    assert (root["cover"], left["cover"], right["cover"]) == (14, 10, 4)


@pytest.mark.parametrize("growth", [GrowthParams(max_depth=4),
                                    GrowthParams(max_depth=None, max_leaf_nodes=9)],
                         ids=["depth-wise", "best-first"])
def test_without_counts_the_trees_are_the_same(growth):
    """Counts from the routed rows and the direction rule applied after routing
    give the very trees the count statistic gives: values, gains, counts, covers,
    missing directions and category sets."""
    rng = np.random.default_rng(5)
    n = 3000
    X = rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 6, n)  # categorical
    X[rng.random((n, 4)) < 0.03] = np.nan
    X[:, 0] = np.where(np.isnan(X[:, 0]), 0.5, X[:, 0])  # no missing values: direction by rows
    g = (rng.integers(-1000, 1000, n) + (np.nan_to_num(X[:, 1]) > 0) * 700
         - np.isin(X[:, 3], [1, 4]) * 1500)
    h = rng.integers(1, 400, n) * (1 + 5 * (X[:, 0] > 0.8))  # heavy rows on one side
    is_cat = np.array([False, False, False, True])
    a = grow(X, g, h, True, growth, is_categorical=is_cat)
    b = grow(X, g, h, False, growth, is_categorical=is_cat)
    assert a == b
    assert len(a.nodes) > 7 and (a.nodes["is_categorical"] == 1).any()
    assert ((a.nodes["feature"] == 0) & (a.nodes["is_leaf"] == 0)).any()


@pytest.mark.parametrize("growth", [GrowthParams(max_depth=4),
                                    GrowthParams(max_depth=None, max_leaf_nodes=9)],
                         ids=["depth-wise", "best-first"])
def test_partial_sums_and_reused_level_memory_give_the_same_trees(growth):
    """Levels answered as 2 or 3 partial sums (the holders answering the
    driver) give the tree of one summed histogram; so do rounds that reuse
    the levels' memory (``LevelBlocks``), one after the other."""
    rng = np.random.default_rng(9)
    n = 2000
    X = rng.normal(size=(n, 3))
    X[rng.random((n, 3)) < 0.05] = np.nan
    g, h = rng.integers(-1000, 1000, n) + (X[:, 1] > 0) * 900, rng.integers(1, 300, n)
    reference = grow(X, g, h, True, growth)
    assert len(reference.nodes) >= 9
    blocks = LevelBlocks()
    for n_parts in (2, 3):
        assert grow(X, g, h, True, growth, n_parts=n_parts) == reference
        assert grow(X, g, h, True, growth, n_parts=n_parts, blocks=blocks) == reference
    other = grow(X, -g, h, True, growth, blocks=blocks)  # another round in the same memory
    assert other != reference
    assert grow(X, -g, h, True, growth) == other


def test_level_blocks_take_two_blocks_in_turn_and_keep_them():
    blocks = LevelBlocks()
    a = blocks.take(2, (3, 256, 2), np.int64)
    b = blocks.take(4, (3, 256, 2), np.int64)
    assert a.shape == (2, 3, 256, 2) and b.shape == (4, 3, 256, 2)
    assert not np.shares_memory(a, b)  # a level's parents stay while its children are written
    assert np.shares_memory(blocks.take(1, (3, 256, 2), np.int64), a)
    assert np.shares_memory(blocks.take(3, (3, 256, 2), np.int64), b)
    assert not np.shares_memory(blocks.take(4, (3, 256, 2), np.int64), a)  # grown: new memory


def test_gh_statistics_need_min_samples_leaf_1_and_a_positive_min_child_weight():
    for params in (SplitParams(min_samples_leaf=2), SplitParams(min_child_weight=0.0)):
        assert GradientCriterion.counts_needed(params)
        with pytest.raises(ValueError, match="min_samples_leaf == 1"):
            GradientCriterion(params, (1.0, 1.0), counts=False)
    assert not GradientCriterion.counts_needed(SplitParams())


def test_a_stump_against_its_monotone_constraint_is_refused():
    """x = 0 0 1 1, g = -2 -2 2 2, h = 1, lambda = 1: the only split gives values
    4/3 and -4/3, a decreasing step. Free or decreasing it is taken (gain
    (16/3 + 16/3) / 2), with bounds cut at the midpoint 0: the left child
    [0, inf), the right (-inf, 0]; increasing, the root stays a leaf."""
    X = np.array([[0.0], [0], [1], [1]])
    g, h = np.array([-2, -2, 2, 2]), np.ones(4)
    for cst in (0, -1):
        growth = GrowthParams(max_depth=1, monotonic_cst=np.array([cst], np.int8))
        tree = grow(X, g, h, True, growth)
        assert tree.nodes["gain"][0] == pytest.approx(16 / 3)
        np.testing.assert_allclose(tree.nodes["value"], [0.0, 4 / 3, -4 / 3])
        if cst:
            np.testing.assert_array_equal(tree.bounds, [[-np.inf, np.inf], [0.0, np.inf],
                                                        [-np.inf, 0.0]])
    tree = grow(X, g, h, True, GrowthParams(max_depth=1, monotonic_cst=np.array([1], np.int8)))
    assert len(tree.nodes) == 1 and tree.nodes["is_leaf"][0] == 1


def test_splits_below_the_root_respect_the_bounds():
    """Increasing in x, depth 2: x = 0 1 2 3, g = 4 -4 1 -1, h = 1, lambda = 0.

    Root: "x <= 0" (values -4 | 4/3, gain (16 + 16/3) / 2) beats "x <= 2" (gain
    2/3); bounds cut at (-4 + 4/3) / 2 = -4/3. In the right child (rows x = 1 2 3)
    "x <= 1" gives 4 | 0 and "x <= 2" gives 3/2 | 1, both decreasing: refused,
    so it stays a leaf at 4/3, where the unconstrained tree splits it into 4 | 0.
    """
    X = np.array([[0.0], [1], [2], [3]])
    g, params = np.array([4, -4, 1, -1]), SplitParams(reg_lambda=0.0, min_child_weight=0.0)
    growth = GrowthParams(max_depth=2, monotonic_cst=np.array([1], np.int8))
    tree = grow(X, g, np.ones(4), True, growth, params)
    assert tree.nodes["gain"][0] == pytest.approx((16 + 16 / 3) / 2)
    np.testing.assert_allclose(tree.predict(X), [-4, 4 / 3, 4 / 3, 4 / 3])
    np.testing.assert_allclose(tree.bounds, [[-np.inf, np.inf], [-np.inf, -4 / 3],
                                             [-4 / 3, np.inf]])
    free = grow(X, g, np.ones(4), True, GrowthParams(max_depth=2), params)
    np.testing.assert_allclose(free.predict(X), [-4, 4, 0, 0])


def test_interaction_sets_limit_the_features_of_a_path():
    """y depends on x0 x1 only; with sets {0}, {1} no path holds both."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(64, 2)).astype(float)
    g = np.where((X[:, 0] > 1) == (X[:, 1] > 1), -3, 3)
    sets = np.array([[True, False], [False, True]])
    tree = grow(X, g, np.ones(64), True, GrowthParams(max_depth=3, interaction_cst=sets))
    features = tree.nodes["feature"][tree.nodes["is_leaf"] == 0]
    assert len(set(features.tolist())) == 1  # the root's set holds the rest of every path
    free = grow(X, g, np.ones(64), True, GrowthParams(max_depth=3))
    assert set(free.nodes["feature"][free.nodes["is_leaf"] == 0].tolist()) == {0, 1}
