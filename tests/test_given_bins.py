"""Precomputed bins: ``BinMapper.from_edges`` and ``fit(bin_mapper=...)``
(``distboost.engine.input_plan.given_bins``). Bins given by name are matched to X's columns;
the model is the one the same bins found by the fit itself give; whatever does
not match is refused with the feature's name."""

import numpy as np
import pandas as pd
import pytest

from distboost import AdaBoostClassifier, GradientBoostingClassifier, RandomForestRegressor
from distboost.binning import BinMapper
from distboost.inputs.frames import to_matrix
from distboost.kernels.common import MISSING_BIN

rng = np.random.default_rng(5)
N = 800
X = pd.DataFrame({
    "size": rng.normal(size=N),
    "colour": pd.Categorical(rng.choice(["red", "green", "blue"], N),
                             categories=["red", "green", "blue"]),
    "age": rng.integers(0, 60, N).astype(float),
})
X.loc[::7, "size"] = np.nan
X.loc[::11, "colour"] = np.nan
Y = ((X["size"].fillna(1.0) > 0.2) ^ (X["colour"] == "blue") ^ (X["age"] > 30)).astype(int)
PARAMS = {"n_estimators": 6, "max_depth": 3, "random_state": 0}


def by_name(mapper, names):
    """``mapper``'s bins as ``from_edges`` arguments (numeric edges, categories)."""
    edges = {n: mapper.bin_edges_[j] for j, n in enumerate(names) if not mapper.is_categorical_[j]}
    cats = {n: mapper.categories_[j] for j, n in enumerate(names) if mapper.is_categorical_[j]}
    return edges, cats


def same_trees(a, b):
    assert len(a.trees_) == len(b.trees_)
    assert all(ta == tb for ra, rb in zip(a.trees_, b.trees_) for ta, tb in zip(ra, rb))


def test_from_edges_bins_values_categories_and_missing():
    mapper = BinMapper.from_edges({"x": [0.0, 1.0]}, {"c": ["b", "a"]})
    assert list(mapper.feature_names_in_) == ["x", "c"]
    assert mapper.n_bins_non_missing_.tolist() == [3, 2]
    codes = np.array([[-1.0, 1.0], [0.5, 0.0], [1.0, np.nan], [np.nan, 1.0], [9.0, 0.0]])
    np.testing.assert_array_equal(mapper.transform(codes),
                                  [[0, 1], [1, 0], [1, MISSING_BIN], [MISSING_BIN, 1], [2, 0]])


@pytest.mark.parametrize(("edges", "categories", "message"), [
    ({"x": [1.0, 1.0]}, {}, "bin edges of feature 'x' must be finite and strictly increasing"),
    ({"x": [0.0, np.nan]}, {}, "bin edges of feature 'x' must be finite"),
    ({"x": ["low"]}, {}, "bin edges of feature 'x' are not numbers"),
    ({"x": np.arange(255.0)}, {}, "feature 'x' has 255 bin edges, more than max_bins - 2 = 254"),
    ({"x": [0.0]}, {"x": ["a"]}, "feature 'x' has both edges and categories"),
    ({}, {"c": list(range(256))}, "feature 'c' has 256 categories, more than max_bins - 1"),
    ({}, {"c": ["a", "a"]}, "feature 'c' lists a category twice"),
])
def test_from_edges_refuses_unusable_bins(edges, categories, message):
    with pytest.raises(ValueError, match=message):
        BinMapper.from_edges(edges, categories)


def test_given_bins_give_the_model_the_fit_finds_itself():
    """The fit's own bins, given back by name in another order: the same model,
    categorical codes and the missing-value bin included."""
    own = GradientBoostingClassifier(**PARAMS).fit(X, Y)
    edges, cats = by_name(own.bin_mapper_, list(X.columns))
    reordered = {"age": edges["age"], "size": edges["size"]}
    given = GradientBoostingClassifier(**PARAMS).fit(
        X, Y, bin_mapper=BinMapper.from_edges(reordered, cats))
    same_trees(given, own)
    assert given.bin_mapper_.to_dict() == own.bin_mapper_.to_dict()
    assert given._schema.categories == {1: ["red", "green", "blue"]}
    binned = given.bin_mapper_.transform(to_matrix(X, given._schema))
    assert (binned[X["colour"].isna().to_numpy(), 1] == MISSING_BIN).all()
    assert (binned[X["size"].isna().to_numpy(), 0] == MISSING_BIN).all()
    np.testing.assert_array_equal(binned[~X["colour"].isna().to_numpy(), 1],
                                  X["colour"].cat.codes[X["colour"].notna()])


def test_given_edges_are_the_split_thresholds():
    mapper = BinMapper.from_edges({"size": [-0.5, 0.2, 0.9], "age": [30.5]},
                                  {"colour": ["red", "green", "blue"]})
    model = GradientBoostingClassifier(**PARAMS).fit(X, Y, bin_mapper=mapper)
    thresholds = {0: set(), 2: set()}
    for round_trees in model.trees_:
        nodes = round_trees[0].nodes
        for node in nodes[nodes["is_leaf"] == 0]:
            if node["feature"] in thresholds:
                thresholds[node["feature"]].add(float(node["threshold"]))
    assert thresholds[0] <= {-0.5, 0.2, 0.9, np.inf} and thresholds[2] <= {30.5, np.inf}
    assert 0.2 in thresholds[0] and 30.5 in thresholds[2]  # the informative cuts are used


def test_other_estimators_take_bins_too():
    mapper = BinMapper.from_edges({"size": [0.2], "age": [10.5, 30.5]},
                                  {"colour": ["red", "green", "blue"]})
    for est in (AdaBoostClassifier(n_estimators=3, max_depth=2, random_state=0),
                RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0)):
        est.fit(X, Y, bin_mapper=mapper)
        assert [len(e) for e in est.bin_mapper_.bin_edges_] == [1, 0, 2]


def test_bins_on_dask_equal_bins_in_memory(dask_client):
    import dask.dataframe as dd

    mapper = BinMapper.from_edges({"size": [-0.5, 0.2], "age": [30.5]},
                                  {"colour": ["red", "green", "blue"]})
    local = GradientBoostingClassifier(**PARAMS).fit(X, Y, bin_mapper=mapper)
    ddf = dd.from_pandas(X.assign(y=Y), npartitions=3)
    dist = GradientBoostingClassifier(client=dask_client, **PARAMS)
    dist.fit(ddf.drop(columns="y"), ddf["y"], bin_mapper=mapper)
    same_trees(dist, local)


@pytest.mark.parametrize(("mapper", "error", "message"), [
    (BinMapper.from_edges({"size": [0.0]}, {"colour": ["red", "green", "blue"]}), ValueError,
     r"bin_mapper has no bins for feature 'age' of X; its features are \['size', 'colour'\]"),
    (BinMapper.from_edges({"size": [0.0], "age": [1.0], "weight": [2.0]},
                          {"colour": ["red", "green", "blue"]}), ValueError,
     "bin_mapper has bins for feature 'weight', which X does not have"),
    (BinMapper.from_edges({"size": [0.0], "age": [1.0], "colour": [0.5]}), ValueError,
     "feature 'colour' is categorical in X but numeric in bin_mapper"),
    (BinMapper.from_edges({"size": [0.0]}, {"colour": ["red", "green", "blue"], "age": [1, 2]}),
     ValueError, "feature 'age' is numeric in X but categorical in bin_mapper"),
    (BinMapper.from_edges({"size": [0.0], "age": [1.0]}, {"colour": ["red", "green"]}),
     ValueError, "feature 'colour' has category 'blue', which bin_mapper does not list"),
    (BinMapper().fit(np.zeros((3, 2)), [False, False], {}), ValueError,
     r"bin_mapper has bins for 2 features but X has 3 \(\['size', 'colour', 'age'\]\)"),
    ({"size": [0.0]}, TypeError, "bin_mapper must be a fitted distboost.binning.BinMapper"),
])
def test_bins_that_do_not_match_the_data_are_refused(mapper, error, message):
    with pytest.raises(error, match=message):
        GradientBoostingClassifier(n_estimators=2).fit(X, Y, bin_mapper=mapper)


def test_a_continued_model_keeps_its_own_bins():
    first = GradientBoostingClassifier(**PARAMS).fit(X, Y)
    same = BinMapper.from_edges(*by_name(first.bin_mapper_, list(X.columns)))
    more = GradientBoostingClassifier(**PARAMS).fit(X, Y, init_model=first, bin_mapper=same)
    assert len(more.trees_) == 12
    other = BinMapper.from_edges({"size": [0.0], "age": [1.0]}, {"colour": ["red", "green", "blue"]})
    with pytest.raises(ValueError, match="bin_mapper differs from the bins of the model being"):
        GradientBoostingClassifier(**PARAMS).fit(X, Y, init_model=first, bin_mapper=other)
