"""The compiled in-process grower (``kernels.local_grower``, ``node_search``):
the trees of the wave-by-wave grower to the bit, for every criterion, growth,
search path and thread count; a split checked by hand on both search paths."""

import json

import dask
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import distboost as db
from distboost.binning import BinMapper
from distboost.engine.waves import Engine
from distboost.kernels import local_grower, node_search
from distboost.kernels.histogram import RowPartition, columns, root_histograms, split_level
from distboost.kernels.splitting import GradientCriterion, SplitParams, scan_work
from distboost.trees.evaluation import SplitFinder
from distboost.trees.grower import TreeGrower
from distboost.trees.params import GrowthParams
from distboost.trees.tree import tree_from_table, trees_from_grown


def _data(n=4000, n_features=6, seed=0, categorical=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    X[rng.random(X.shape) < 0.05] = np.nan
    X[:, 1] = np.round(X[:, 1] * 2)  # 15 bins or so: most of its histogram holds no rows
    is_cat = np.zeros(n_features, bool)
    if categorical:
        X[:, -1], is_cat[-1] = rng.integers(0, 9, n), True
    categories = {j: np.unique(X[~np.isnan(X[:, j]), j]) for j in np.flatnonzero(is_cat)}
    mapper = BinMapper(256).fit(X, is_cat, categories)
    g, h = rng.integers(-1000, 1000, n), rng.integers(1, 100, n)
    return mapper, mapper.transform(X), g, h


def _by_waves(mapper, binned, stats, growth, criterion):
    n, n_features = binned.shape
    part = RowPartition.from_positions(np.zeros((1, n), np.int32))
    features, cols = np.arange(n_features), columns(binned)

    def build_level(splits, n_slots):
        return split_level(binned, cols, stats, part, splits, n_slots, features)

    root = root_histograms(binned, stats, part, features)
    finder = SplitFinder(criterion, mapper, growth, np.ones((1, n_features), bool))
    return TreeGrower(root, finder=finder, build_level=build_level,
                      root_counts=part.stop[:, 0]).grow()[0]


def _here(mapper, binned, stats, growth, criterion):
    n, n_features = binned.shape
    part = RowPartition.from_positions(np.zeros((1, n), np.int32))
    junk = np.random.default_rng(7)  # memory as a round leaves it: what no row fills stays
    grown = local_grower.grow(binned, columns(binned), stats, part, criterion, mapper,
                              np.ones((1, n_features), bool), np.arange(n_features), growth,
                              memory=lambda shape: junk.integers(-2**40, 2**40, shape))
    (tree,) = trees_from_grown(grown, criterion, mapper, growth.learning_rate)
    assert tree == tree_from_table(grown.tables[0], criterion, mapper, growth.learning_rate)
    return tree, part


@pytest.mark.parametrize("dense_rows", [0, 1024, 1 << 40], ids=["dense", "mixed", "rows"])
@pytest.mark.parametrize("growth", [GrowthParams(max_depth=5, learning_rate=0.3),
                                    GrowthParams(max_depth=None, max_leaf_nodes=20)],
                         ids=["depth-wise", "best-first"])
@pytest.mark.parametrize("counts", [True, False], ids=["g-h-count", "g-h"])
@pytest.mark.parametrize("categorical", [False, True], ids=["numeric", "categorical"])
def test_the_trees_of_the_waves(monkeypatch, dense_rows, growth, counts, categorical):
    """Every node searched from histograms, from its rows, or either by size:
    the wave grower's tree, ids, counts, covers, gains and missing directions
    included; and the rows end in the nodes the tree sends them to."""
    monkeypatch.setattr(local_grower, "DENSE_MIN_ROWS", dense_rows)
    mapper, binned, g, h = _data(categorical=categorical)
    stats = np.stack([g, h] + ([np.ones(len(g))] if counts else []), axis=1).astype(np.int64)
    criterion = GradientCriterion(SplitParams(reg_lambda=2.0), (1.0, 1.0), counts)
    expected = _by_waves(mapper, binned, stats[None], growth, criterion)
    tree, part = _here(mapper, binned, stats[None], growth, criterion)
    assert tree == expected and len(tree.nodes) > 15
    leaves = np.flatnonzero(tree.nodes["is_leaf"])
    walked = np.empty((1, len(binned)), np.int32)
    from distboost.kernels.tree import leaf_indices_binned, pack_trees

    leaf_indices_binned(binned, *pack_trees([tree]), walked)
    for leaf in leaves:
        assert (walked[0, part.node_rows(0, leaf)] == leaf).all()


@pytest.mark.parametrize("dense_rows", [0, 1024], ids=["dense", "mixed"])
def test_vector_trees_of_the_waves_with_and_without_counts(monkeypatch, dense_rows):
    """Vector leaves (three outputs): the wave grower's tree here, and the same
    tree, counts and missing directions included, whether the statistics hold
    a row count or the grower counts the routed rows."""
    from distboost.trees.vector_leaves import VectorCriterion

    monkeypatch.setattr(local_grower, "DENSE_MIN_ROWS", dense_rows)
    mapper, binned, g, h = _data()
    rng = np.random.default_rng(1)
    pairs = [g, h] + [a for _ in range(2) for a in (rng.integers(-900, 900, len(g)),
                                                   rng.integers(1, 50, len(g)))]
    growth = GrowthParams(max_depth=5, learning_rate=0.3)
    trees = []
    for counts in (True, False):
        stats = np.stack(pairs + ([np.ones(len(g))] if counts else []), axis=1).astype(np.int64)
        criterion = VectorCriterion(SplitParams(reg_lambda=2.0), (1.0, 1.0), 3, counts)
        assert criterion.n_stats == 6 + counts
        expected = _by_waves(mapper, binned, stats[None], growth, criterion)
        tree, _ = _here(mapper, binned, stats[None], growth, criterion)
        assert tree == expected and len(tree.nodes) > 15
        trees.append(tree)
    assert trees[0] == trees[1]
    with pytest.raises(ValueError, match="need min_samples_leaf == 1"):
        VectorCriterion(SplitParams(min_samples_leaf=2), (1.0, 1.0), 3, counts=False)


def test_a_split_with_missing_values_alone_on_the_left_by_hand():
    """Codes 1 and 2 (bin 0 empty) with g = +1, missing with g = -4, h = 1,
    lambda = 1. The first candidate of the scan, "bin <= 0" with missing left,
    puts the missing rows alone on the left: G_L = -8, H_L = 2; G_R = 4,
    H_R = 4; gain = (64/3 + 16/5 - 16/7) / 2, the best. Searched from the rows,
    the empty bin 0 is still tried."""
    codes = np.array([255, 255, 1, 1, 2, 2], np.uint8)
    stats = np.array([[-4, 1], [-4, 1], [1, 1], [1, 1], [1, 1], [1, 1]], np.int64)
    fp, ip = node_search.pack_criterion(GradientCriterion(SplitParams(), (1.0, 1.0), False))
    tot = stats.sum(axis=0)
    hist = np.zeros((256, 2), np.int64)
    np.add.at(hist, codes, stats)
    parent = node_search.node_terms(tot, fp, ip)[0]
    dense = node_search.scan_feature(hist, np.arange(256), 3, True, False, 3, tot, fp, ip,
                                     parent, 0, scan_work())
    best = node_search.search_rows(codes[None, :], np.arange(6), stats, tot, np.ones(1, bool),
                                   np.array([3]), np.zeros(1, bool), fp, ip,
                                   node_search.scratch(2), np.arange(1))
    assert dense == (pytest.approx((64 / 3 + 16 / 5 - 16 / 7) / 2), 0, True)
    assert best == (dense[0], 0, 0, True)


def _cases():
    rng = np.random.default_rng(3)
    n = 3000
    X = rng.normal(size=(n, 6))
    X[rng.random((n, 6)) < 0.05] = np.nan
    X[:, 5] = rng.integers(0, 7, n)
    yb = ((X[:, 0] > 0) ^ (np.nan_to_num(X[:, 1]) > 0.3)).astype(int)
    ym = rng.integers(0, 3, n) + (np.nan_to_num(X[:, 2]) > 0)
    yr = np.nan_to_num(X[:, 0]) * 2 + rng.normal(size=n)
    w = rng.random(n) + 0.2
    w[:50] = 0
    Xc = pd.DataFrame(np.nan_to_num(X[:, :5]), columns=list("abcde"))
    Xc["cat"] = pd.Categorical(rng.integers(0, 9, n))
    yc = ((Xc["cat"].cat.codes % 3 == 0) ^ (Xc["a"] > 0)).astype(int)
    Yr = np.column_stack([yr, np.nan_to_num(X[:, 3]) - yr, rng.normal(size=n)])
    Yb = np.column_stack([yb, np.nan_to_num(X[:, 2]) > 0])
    C, R = db.GradientBoostingClassifier, db.GradientBoostingRegressor
    return {
        "vector_leaves": (R(n_estimators=4, max_depth=5, multi_strategy="multi_output_tree"),
                          X, Yr, w),
        "vector_leaves_best_first": (R(n_estimators=3, max_depth=None, max_leaf_nodes=9,
                                       gamma=0.2, min_samples_leaf=4, subsample=0.8,
                                       random_state=1, multi_strategy="multi_output_tree"),
                                     X, Yr, None),
        "vector_leaves_multi_label": (C(n_estimators=4, max_depth=4,
                                        multi_strategy="multi_output_tree"), X, Yb, None),
        "binary": (C(n_estimators=6, max_depth=4), X, yb, None),
        "weights_subsample": (C(n_estimators=6, max_depth=4, subsample=0.7, random_state=1),
                              X, yb, w),
        "multiclass": (C(n_estimators=4, max_depth=3), X, ym, None),
        "absolute_error": (R(loss="absolute_error", n_estimators=4, max_depth=3), X, yr, w),
        "huber_best_first": (R(loss="huber", n_estimators=4, max_leaf_nodes=7, max_depth=None),
                             X, yr, None),
        "colsample_bytree": (R(n_estimators=4, max_depth=5, colsample_bytree=0.6,
                               random_state=2), X, yr, None),
        "categorical": (C(n_estimators=4, max_depth=4), Xc, yc, None),
        "gamma_min_samples_leaf": (C(n_estimators=4, max_depth=4, gamma=0.5, reg_lambda=3,
                                     min_samples_leaf=5), X, yb, None),
        "min_child_weight_0": (C(n_estimators=4, max_depth=4, min_child_weight=0), X, yb, None),
        "adaboost": (db.AdaBoostClassifier(n_estimators=5, max_depth=2), X, ym, w),
        "forest_oob": (db.RandomForestClassifier(n_estimators=7, max_depth=5, random_state=0,
                                                 trees_per_pass=3, oob_score=True), X, ym, w),
        "forest_full_depth": (db.RandomForestClassifier(n_estimators=6, random_state=0), X, ym,
                              None),
        "forest_entropy_best_first": (db.RandomForestClassifier(
            n_estimators=4, criterion="entropy", max_leaf_nodes=30, min_samples_leaf=3,
            random_state=4), Xc, yc, None),
        "forest_misclassification": (db.RandomForestClassifier(
            n_estimators=3, criterion="misclassification", random_state=1), X, yb, None),
        "forest_regressor": (db.RandomForestRegressor(n_estimators=4, max_features=0.5,
                                                      random_state=2), X, yr, w),
        "bagging_subspaces": (db.BaggingRegressor(n_estimators=4, max_features=0.5, max_depth=6,
                                                  random_state=1, oob_score=True), X, yr, w),
        "bagging_full_depth": (db.BaggingClassifier(n_estimators=3, random_state=1), X, ym,
                               None),
    }


CASES = _cases()


def _model(est, X, y, w, tmp_path, here):
    with dask.config.set({"distboost.local-grower": here}):
        model = clone(est).fit(X, y, sample_weight=w)
    path = tmp_path / f"{here}.json"
    model.save_model(path)
    rows = X.iloc[:500] if hasattr(X, "iloc") else X[:500]
    oob = [getattr(model, a) for a in ("oob_score_", "oob_decision_function_", "oob_prediction_")
           if hasattr(model, a)]
    return json.loads(path.read_text())["trees"], model.predict(rows), oob


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_ensemble_fits_the_same_model_here_as_wave_by_wave(name, tmp_path):
    est, X, y, w = CASES[name]
    waves = _model(est, X, y, w, tmp_path, False)
    here = _model(est, X, y, w, tmp_path, True)
    assert here[0] == waves[0]
    np.testing.assert_array_equal(here[1], waves[1])
    for a, b in zip(here[2], waves[2]):
        np.testing.assert_array_equal(a, b)


def test_fits_in_process_send_no_level_waves_unless_the_grower_cannot_run_here(monkeypatch):
    """One partition in memory: no level waves. Monotone constraints, boosting's
    per-level feature draws, several partitions and ``distboost.local-grower``
    False go wave by wave."""
    from distboost.engine import local_partitions

    levels, level = [], Engine.level

    def counted(self, *args):
        levels[-1] += 1
        return level(self, *args)

    monkeypatch.setattr(Engine, "level", counted)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    y = (X[:, 0] > 0).astype(int)
    fits = [lambda: db.GradientBoostingClassifier(n_estimators=2).fit(X, y),
            lambda: db.GradientBoostingClassifier(n_estimators=2, monotonic_cst=[1, 0, 0]).fit(X, y),
            lambda: db.GradientBoostingClassifier(n_estimators=2, colsample_bylevel=0.5).fit(X, y)]
    for fit in fits:
        levels.append(0)
        fit()
    with local_partitions(3):
        levels.append(0)
        fits[0]()
    with dask.config.set({"distboost.local-grower": False}):
        levels.append(0)
        fits[0]()
    assert levels[0] == 0 and all(n > 0 for n in levels[1:])
    levels.append(0)  # vector leaves grow here too
    db.GradientBoostingRegressor(n_estimators=2, multi_strategy="multi_output_tree").fit(
        X, np.column_stack([y, X[:, 1]]))
    assert levels[-1] == 0


def test_threads_change_no_tree(monkeypatch):
    """Batches large enough for threads (routing, histograms, searches shared
    among them) and small ones on one thread: the same trees at 1 and 2 threads.
    A forest with at least as many trees as threads grows each tree whole on
    one thread (``_grow_apart``): the same trees as level by level."""
    from distboost.kernels import local_grower

    apart, calls = local_grower._grow_apart, []
    monkeypatch.setattr(local_grower, "_grow_apart",
                        lambda *args: calls.append(len(args[2])) or apart(*args))
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40_000, 8))
    X[rng.random(X.shape) < 0.02] = np.nan
    y = (np.nan_to_num(X[:, 0]) * X[:, 1] + rng.normal(size=len(X)) > 0).astype(int)
    Y = np.column_stack([y, np.nan_to_num(X[:, 2]) > 0])
    fits = [(db.GradientBoostingClassifier(n_estimators=3, max_depth=7, n_jobs=n).fit(X, y),
             db.RandomForestClassifier(n_estimators=4, max_depth=12, random_state=0,
                                       n_jobs=n).fit(X, y),
             db.GradientBoostingClassifier(n_estimators=2, max_depth=6, n_jobs=n,
                                           multi_strategy="multi_output_tree").fit(X, Y))
            for n in (1, 2)]
    assert fits[0][0].trees_ == fits[1][0].trees_
    assert fits[0][1].estimators_ == fits[1][1].estimators_
    assert fits[0][2].trees_ == fits[1][2].trees_
    assert calls and all(n >= 2 for n in calls)  # at 2 threads only
