"""Deferred counts: a last level counted by a later wave gives the trees
its own wave gives."""

import numpy as np

from distboost.binning import BinMapper
from distboost.kernels.histogram import RowPartition, columns, root_histograms, split_level
from distboost.kernels.splitting import GradientCriterion, SplitParams
from distboost.trees.evaluation import SplitFinder
from distboost.trees.grower import TreeGrower
from distboost.trees.params import GrowthParams


def test_a_deferred_last_level_gives_the_same_tree_once_counted():
    """``defer_counts``: the last level, routed only to count its children, is
    not sent; the provisional tree has -1 there, and ``complete`` with the
    counts a later wave makes of its ``pending.splits`` gives the very tree the
    level's own wave gives (counts, and missing directions by rows)."""
    rng = np.random.default_rng(5)
    n = 3000
    X = rng.normal(size=(n, 3))
    X[rng.random((n, 3)) < 0.03] = np.nan
    X[:, 0] = np.where(np.isnan(X[:, 0]), 0.5, X[:, 0])  # no missing values: direction by rows
    g = rng.integers(-1000, 1000, n) + (np.nan_to_num(X[:, 1]) > 0) * 700
    h = rng.integers(1, 400, n) * (1 + 5 * (X[:, 0] > 0.8))
    growth = GrowthParams(max_depth=3)
    mapper = BinMapper(256).fit(X, np.zeros(3, bool), {})
    binned = mapper.transform(X)
    stats = np.stack([g, h], axis=1).astype(np.int64)[None]
    features, cols = np.arange(3), columns(binned)
    sent = []

    def make(defer):
        part = RowPartition.from_positions(np.zeros((1, n), np.int32))

        def build_level(splits, n_slots):
            sent.append(n_slots)
            return split_level(binned, cols, stats, part, splits, n_slots, features)

        criterion = GradientCriterion(SplitParams(), (1.0, 1.0), counts=False)
        finder = SplitFinder(criterion, mapper, growth, np.ones((1, 3), bool))
        return TreeGrower(root_histograms(binned, stats, part, features), finder=finder,
                          build_level=build_level, root_counts=part.stop[:, 0],
                          defer_counts=defer), build_level

    reference = make(False)[0].grow()[0]
    assert sent == [1, 2, 0]  # the last level's wave builds nothing: it counts
    sent.clear()
    grower, build_level = make(True)
    provisional = grower.grow()[0]
    assert sent == [1, 2]
    assert (provisional.nodes["count"] == -1).sum() == 8  # the 4 last splits' children
    assert (provisional.nodes["count"] >= 0).sum() == 7
    pending = grower.pending
    splits = pending.splits
    assert len(splits.tree) == 4 and (splits.slot == -1).all()
    _, counts = build_level(splits, 0)  # what the next round start counts
    final = pending.complete(counts)[0]
    assert final == reference and grower.pending is None
    assert (final.nodes["count"][final.nodes["is_leaf"] == 1].sum()) == n
    no_missing = (reference.nodes["feature"] == 0) & (reference.nodes["is_leaf"] == 0)
    assert no_missing.any()


def test_defer_counts_leaves_levels_that_build_and_best_first_alone():
    """With counts in the statistics no level is sent for counting, so none
    is deferred; best-first growth never defers."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 2))
    g, h = rng.integers(-100, 100, 500), rng.integers(1, 50, 500)
    mapper = BinMapper(256).fit(X, np.zeros(2, bool), {})
    binned = mapper.transform(X)
    cols, features = columns(binned), np.arange(2)
    for counts, growth in [(True, GrowthParams(max_depth=2)),
                           (False, GrowthParams(max_depth=None, max_leaf_nodes=4))]:
        stats = np.stack([g, h] + ([np.ones(500)] if counts else []), axis=1).astype(np.int64)[None]
        part = RowPartition.from_positions(np.zeros((1, 500), np.int32))

        def build_level(splits, n_slots, stats=stats, part=part):
            return split_level(binned, cols, stats, part, splits, n_slots, features)

        finder = SplitFinder(GradientCriterion(SplitParams(), (1.0, 1.0), counts), mapper,
                             growth, np.ones((1, 2), bool))
        grower = TreeGrower(root_histograms(binned, stats, part, features), finder=finder,
                            build_level=build_level, root_counts=part.stop[:, 0],
                            defer_counts=True)
        tree = grower.grow()[0]
        assert grower.pending is None and (tree.nodes["count"] >= 0).all()
