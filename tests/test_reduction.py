"""Wave results summed among the holders (``engine.reduction``): the tree, the
mailbox, and fits on clusters of several workers equal to the fit in process,
over Dask's public Actor interface too, over TLS, and with a worker killed in
the middle of a reduction."""

import asyncio
import logging
import os
import signal

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.engine.buffers import Buffers
from distboost.engine.group import LevelResult, combine_level
from distboost.engine.reduction import Failed, Mailbox, combine_all, tree


def test_tree_is_a_heap_under_the_driver():
    # holders 0 and 1 answer the driver; i's children are 2(i+1) and 2(i+1)+1
    assert tree(1) == [(-1, 0)]
    assert tree(2) == [(-1, 0), (-1, 0)]
    assert tree(5) == [(-1, 2), (-1, 1), (0, 0), (0, 0), (1, 0)]
    parents = [p for p, _ in tree(32)]
    assert all(parents.count(i) == c for i, (_, c) in enumerate(tree(32)))
    depth = [0] * 32
    for i, p in enumerate(parents):
        depth[i] = 1 if p < 0 else depth[p] + 1
    assert max(depth) == 5  # log2(32): the driver's two children, then 4 more steps


def test_mailbox_waits_for_every_child_or_a_failure():
    async def main():
        box = Mailbox()
        box.put(3, 0, {"early": 1})  # a child may deliver before its parent waits
        later = asyncio.get_running_loop().call_later(0.01, box.put, 3, 0, {"late": 2})
        parts = await box.collect(3, 0, 2, timeout=5)
        later.cancel()
        box.put(4, 0, {"x": 1})
        asyncio.get_running_loop().call_later(0.01, box.abort, 4, 0)
        aborted = await box.collect(4, 0, 3, timeout=5)
        timed_out = await box.collect(5, 0, 1, timeout=0.05)
        return parts, aborted, timed_out

    parts, aborted, timed_out = asyncio.run(main())
    assert parts == [{"early": 1}, {"late": 2}]
    assert aborted[0] == {"x": 1} and isinstance(aborted[1], Failed)
    assert isinstance(timed_out[0], Failed) and "no delivery" in timed_out[0].reason


def test_combine_all_sums_each_op_and_leaves_inputs_alone():
    a = LevelResult(np.arange(8).reshape(2, 4), np.array([[1, 2]]), 0.5)
    b = LevelResult(np.ones((2, 4), np.int64), np.array([[3, 4]]), 0.7)
    combined = combine_all({0: combine_level}, [{0: a}, {0: b}, {1: "not summed"}], Buffers())
    hist, counts, seconds = combined[0]
    np.testing.assert_array_equal(hist, np.arange(8).reshape(2, 4) + 1)
    np.testing.assert_array_equal(counts, [[4, 6]])
    assert seconds == 0.7 and a[0][0, 0] == 0  # the first input was not added into
    assert combine_all({0: combine_level}, [{0: a}], Buffers())[0] is a  # alone: as it is


# ---------------------------------------------------------------- on clusters
FEATURES = [f"x{i}" for i in range(6)]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(8000, 6))
    X[rng.random(X.shape) < 0.03] = np.nan
    y = (np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2 + rng.logistic(size=8000) > 0)
    frame = pd.DataFrame(X, columns=FEATURES).assign(label=y.astype(int))
    return frame.iloc[:6000], frame.iloc[6000:]


PARAMS = {"n_estimators": 6, "max_depth": 4, "eval_metric": ["logloss", "auc"]}


@pytest.fixture(scope="module")
def local_model(data):
    train, valid = data
    return db.GradientBoostingClassifier(**PARAMS).fit(
        train[FEATURES], train["label"], eval_set=[(valid[FEATURES], valid["label"])])


@pytest.fixture(scope="module")
def five_workers():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=5, threads_per_worker=1, dashboard_address=None,
                      memory_limit="1GB") as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


def _dask_fit(client, data, **extra):
    train, valid = data
    dtrain, dvalid = dd.from_pandas(train, npartitions=10), dd.from_pandas(valid, npartitions=5)
    return db.GradientBoostingClassifier(client=client, **PARAMS, **extra).fit(
        dtrain[FEATURES], dtrain["label"], eval_set=[(dvalid[FEATURES], dvalid["label"])])


def _same(a, b):
    assert all(x[0] == y[0] for x, y in zip(a.trees_, b.trees_, strict=True))
    assert a.evals_result_ == b.evals_result_


@pytest.mark.parametrize("transport", ["auto", "public"])
def test_five_holders_sum_among_themselves_and_give_the_local_model(
        data, local_model, five_workers, transport, caplog):
    with dask.config.set({"distboost.transport": transport}), \
            caplog.at_level(logging.INFO, "distributed.protocol"):
        model = _dask_fit(five_workers, data)
    # every message goes the way Dask sends it best (no fall-back to pickle per wave)
    assert not [r for r in caplog.records if "Failed to serialize" in r.getMessage()]
    assert len(model.data_placement_) == 5  # one holder per worker: a tree of depth 2
    _same(model, local_model)


def test_tls_cluster_gives_the_local_model(data, local_model):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=3, threads_per_worker=1, dashboard_address=None,
                      security=True, memory_limit="1GB") as cluster, \
            Client(cluster, set_as_default=False) as client:
        assert cluster.scheduler_address.startswith("tls://")
        _same(_dask_fit(client, data), local_model)


def _die_on_level(n, dask_worker=None):
    """On this worker: SIGKILL itself in its ``n``-th level op from now on."""
    from distboost.engine import group

    level, calls = group.level, [0]

    def dying_level(*args):
        calls[0] += 1
        if calls[0] == n:
            os.kill(os.getpid(), signal.SIGKILL)
        return level(*args)

    group.level = dying_level


@pytest.mark.parametrize("position", [0, 3], ids=["parent", "leaf"])
def test_a_worker_killed_during_a_reduction_gives_the_same_model(data, local_model, position):
    """A holder's worker dies while it computes its level (its parent waits for
    its sums; or, a parent, its children deliver to nobody): the wave is
    aborted on every holder, the lost partitions are rebinned, and the wave is
    tried again with the other holders' own results kept."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=4, threads_per_worker=1, dashboard_address=None,
                      memory_limit="1GB") as cluster, \
            Client(cluster, set_as_default=False) as client:
        victim = sorted(client.scheduler_info()["workers"])[position]
        client.run(_die_on_level, 9, workers=[victim])
        model = _dask_fit(client, data)
        assert victim not in client.scheduler_info()["workers"]
    _same(model, local_model)
