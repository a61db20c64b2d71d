"""The engine's waves give the same results whatever executor runs them.

The same rows go through ``Engine`` once with the in-process executor (one
holder) and once with the Dask executor (a holder per worker, partitions
spread over two workers): every wave's summed histograms, row counts and
metrics must be equal to the bit, since the sums are integers.
"""

import itertools

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from distboost.engine import Engine, LocalExecutor, local_partitions, plan
from distboost.engine.dask import DaskExecutor
from distboost.kernels.compact_histograms import summed
from distboost.kernels.fixed_point import fixed_point_scales
from distboost.kernels.histogram import LevelSplits
from distboost.learners import GradientLearner
from distboost.metrics import LossMetric
from distboost.trees.losses import SquaredError

N = 2000


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(5)
    X = np.where(rng.random((N, 4)) < 0.05, np.nan, rng.normal(size=(N, 4)))  # 5 % missing
    y = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2 + rng.normal(0, 0.1, N)
    return pd.DataFrame(X, columns=list("abcd")).assign(y=y)


def _dense_sum(parts):
    """The holders' partial sums of a level (dense, or compact from a worker) added up."""
    return summed(parts, np.empty(parts[0].shape, parts[0].dtype))


def _waves(engine, given):
    """prepare, initial rows, a round start and two levels; what each returned."""
    loss = SquaredError()
    engine.prepare(given, True, 32)
    schema = given.schema
    base = engine.init_score(loss)
    engine.set_rows(GradientLearner(loss), base, None)
    scales = fixed_point_scales(loss.gradient_bounds(engine.y_absmax, engine.w_max, 0.0), engine.n_rows)
    learner = GradientLearner(loss, scales, n_stats=2, metrics=(LossMetric("rmse", loss),))
    features = np.arange(schema.n_features)
    root, root_counts, metric, _, _ = engine.start_round(learner, None, True, 0, features)
    root = root.copy()  # in process, valid until the next wave of its kind
    goes_left = np.zeros((1, 256), bool)
    goes_left[0, :16] = True
    ints = lambda v: np.array(v, np.int64)
    level1 = LevelSplits(ints([0]), ints([0]), ints([0]), goes_left, ints([1]), ints([2]),
                         np.array([True]), ints([0]))
    parts1, counts1 = engine.level(level1, 1)  # partial sums: one per holder answering
    hist1 = _dense_sum(parts1)
    level2 = LevelSplits(ints([0, 0]), ints([1, 2]), ints([1, 1]), np.repeat(goes_left, 2, axis=0),
                         ints([3, 5]), ints([4, 6]), np.array([True, False]), ints([0, -1]))
    parts2, counts2 = engine.level(level2, 1)
    hist2 = _dense_sum(parts2)
    return [base, root, root_counts, metric, hist1, counts1, hist2, counts2]


def test_local_partitions_cut_in_memory_rows_into_runs_within_its_block(frame):
    X, y = frame[list("abcd")], frame["y"]
    w = np.arange(N, dtype=float)
    with local_partitions(3):
        parts = plan(X, y, w).parts
    assert [len(p[1]) for p in parts] == [666, 667, 667]  # linspace(0, 2000, 4) truncated
    assert [p[0].index[0] for p in parts] == [0, 666, 1333]
    assert [p[2][0] for p in parts] == [0.0, 666.0, 1333.0]  # weights follow their rows
    parts = plan(X, y, w).parts
    assert len(parts) == 1  # outside the block: one partition again
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="n_partitions must be a positive int"), \
                local_partitions(bad):
            pass


def test_local_partitions_give_the_same_waves(frame):
    X, y = frame[list("abcd")], frame["y"]
    runs = []
    for k in (1, 5):
        with local_partitions(k):
            given = plan(X, y)
        assert len(given.parts) == k
        with Engine(given.executor) as engine:
            runs.append(_waves(engine, given))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_local_and_dask_executors_give_the_same_waves(frame, dask_client):
    X, y = frame[list("abcd")], frame["y"]
    given = plan(X, y)
    assert isinstance(given.executor, LocalExecutor)
    with Engine(given.executor) as engine:
        local = _waves(engine, given)

    ddf = dd.from_pandas(frame, npartitions=4)
    given = plan(ddf[list("abcd")], ddf["y"], client=dask_client)
    assert isinstance(given.executor, DaskExecutor)
    with Engine(given.executor) as engine:
        distributed = _waves(engine, given)
        assert len(engine.groups) == 2  # both workers hold rows

    names = ["base score", "root histogram", "root counts", "metric", "level 1 histogram",
             "level 1 counts", "level 2 histogram", "level 2 counts"]
    for name, a, b in zip(names, local, distributed):
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert local[2].tolist() == [N]  # every row in the root
    assert local[5].sum() == N and local[7].sum() == N  # each level routes every row
    assert local[6][0].any()  # node 3 (built) has rows
    # node 1 holds every row of feature 0's bins 0..15: there its histogram is the root's
    np.testing.assert_array_equal(local[4][0, 0, :16], local[1][0, 0, :16])


SKEWED = [[500, 500, 500, 500], [100, 100, 100, 1700]]
"""Partition sizes: even (each first scan sends enough), and one partition
with most rows (its first scan holds back rows the sample needs)."""


def _sample_of(engine, parts, schema):
    _, (hashes, rows, weights) = engine._scan(parts, schema, 300, True)
    return hashes, rows, weights


@pytest.mark.parametrize("sizes", SKEWED)
def test_binning_sample_is_a_single_pass_whatever_the_partition_sizes(frame, sizes, caplog):
    """Each scan sends at most twice its share of the sample (``prior_bound``);
    a partition that held back rows the sample needs is asked for them again:
    the sample is the one ``frame_candidates`` draws from all rows at once."""
    from distboost.binning import frame_candidates

    X, y = frame[list("abcd")], frame["y"]
    with local_partitions(1):
        given = plan(X, y)
    ex, ((Xp, yp, _),), schema = given.executor, given.parts, given.schema
    cuts = np.cumsum([0] + sizes)
    parts = [(Xp.iloc[a:b], yp[a:b], None) for a, b in itertools.pairwise(cuts)]
    with caplog.at_level("DEBUG", logger="distboost"), Engine(ex) as engine:
        got = _sample_of(engine, parts, schema)
    for a, b in zip(frame_candidates(X, n_samples=300), got):
        np.testing.assert_array_equal(a, b)
    assert ("asked again" in caplog.text) == (sizes == SKEWED[1])


def test_binning_sample_on_dask_asks_a_large_partition_again(frame, dask_client, caplog):
    from distboost.binning import frame_candidates

    ddf = dd.from_pandas(frame, npartitions=4).repartition(divisions=[0, 100, 200, 300, N - 1])
    assert ddf.map_partitions(len).compute().tolist() == SKEWED[1]
    given = plan(ddf[list("abcd")], ddf["y"], client=dask_client)
    ex, parts, schema = given.executor, given.parts, given.schema
    with caplog.at_level("DEBUG", logger="distboost"), Engine(ex) as engine:
        got = _sample_of(engine, parts, schema)
    for a, b in zip(frame_candidates(frame[list("abcd")], n_samples=300), got):
        np.testing.assert_array_equal(a, b)
    assert "asked again" in caplog.text
