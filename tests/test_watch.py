"""No silent stalls (``engine.watch``): a fit waiting on a paused worker or a
wave that does not answer says so, names the worker and its state, and fails
after ``distboost.stall-timeout``; workers too small to train are refused
before any work."""

import logging
import time

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.engine.watch import StallError, describe_worker

FEATURES = ["a", "b", "c"]


def test_a_paused_worker_described():
    info = {"status": "Status.paused", "memory_limit": 500 * 2**20,
            "metrics": {"memory": 410 * 2**20}}
    assert describe_worker("tcp://w:1", info) == (
        "tcp://w:1: paused, memory 410 MiB of a 500 MiB memory_limit (Dask pauses a worker at "
        "80 % of its memory_limit and runs nothing there)")
    assert describe_worker("tcp://w:2", None) == "tcp://w:2: no longer in the cluster"


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 3))
    return pd.DataFrame(X, columns=FEATURES).assign(label=(X[:, 0] > 0).astype(int))


@pytest.fixture(scope="module")
def one_worker():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None,
                      memory_limit="1GB") as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


def _sleep(state, seconds):
    time.sleep(seconds)
    return state, None


def test_a_wave_that_does_not_answer_fails_with_a_stall_error(frame, one_worker, caplog):
    from distboost.engine import Engine, plan

    ddf = dd.from_pandas(frame, npartitions=2)
    given = plan(ddf[FEATURES], ddf["label"], client=one_worker)
    ex = given.executor
    engine = Engine(ex)
    engine.prepare(given, False, 255)
    t0 = time.monotonic()
    with dask.config.set({"distboost.stall-warning": 0.5, "distboost.stall-timeout": 2.5}), \
            caplog.at_level(logging.WARNING, "distboost"), \
            pytest.raises(StallError, match=r"no progress for \d+ s in the wave 'probe'"):
        engine.apply(_sleep, "probe", 30)
    assert time.monotonic() - t0 < 10  # not the 30 s the wave would take
    (address,) = one_worker.scheduler_info()["workers"]
    assert any(address in r.message and "running" in r.message for r in caplog.records)
    stalls = [e for _, e in one_worker.get_events("distboost") if e.get("kind") == "stall"]
    assert stalls and stalls[-1]["fit"] == ex.fit_id and list(stalls[-1]["workers"]) == [address]


def _read_and_fill(part):
    """Reading a partition makes the worker pass Dask's pause threshold: it
    holds on to 87 % of its memory_limit (below the 95 % where the nanny
    restarts it), as a worker reading partitions too large for it does."""
    import psutil
    from distributed import get_worker

    worker = get_worker()
    if not hasattr(worker, "distboost_test_filled"):  # once: not again after it is dropped
        worker.distboost_test_filled = True
        rss = psutil.Process().memory_info().rss
        n_bytes = int(0.87 * worker.memory_manager.memory_limit) - rss
        worker.distboost_test_ballast = np.ones(max(n_bytes, 8) // 8)
    return part


def _drop(dask_worker=None):
    del dask_worker.distboost_test_ballast


def test_a_fit_on_a_worker_paused_while_reading_says_so_and_gives_up(frame, one_worker, caplog):
    """The worker passes the pause threshold reading its first partition: the
    fit's other tasks never run; the fit names the worker, paused, with its
    memory and what to do, then stops."""
    ddf = dd.from_pandas(frame, npartitions=4)
    ddf = ddf.map_partitions(_read_and_fill, meta=ddf._meta)
    try:
        with dask.config.set({"distboost.stall-warning": 1, "distboost.stall-timeout": 5}), \
                caplog.at_level(logging.WARNING, "distboost"), \
                pytest.raises(StallError) as error:
            db.GradientBoostingClassifier(n_estimators=2, client=one_worker).fit(
                ddf[FEATURES], ddf["label"])
    finally:
        one_worker.run(_drop)
    message = str(error.value)
    assert "paused, memory" in message and "of a 954 MiB memory_limit" in message
    assert "dask worker --memory-limit" in message and "distboost.stall-timeout = 5 s" in message
    assert [r for r in caplog.records if "paused" in r.message]  # warned before giving up


def test_workers_too_small_to_train_are_refused_before_any_work(frame):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None,
                      memory_limit="250MB") as cluster, \
            Client(cluster, set_as_default=False) as client:
        ddf = dd.from_pandas(frame, npartitions=2)
        with pytest.raises(MemoryError, match=r"cannot train: it uses \d+ MiB before any work "
                                              r".* memory_limit of at least \d+ MiB"):
            db.GradientBoostingClassifier(n_estimators=2, client=client).fit(
                ddf[FEATURES], ddf["label"])
        assert not [k for k in client.futures]  # no task was submitted


def _arrow_pool(dask_worker=None):
    import pyarrow as pa

    return pa.default_memory_pool().backend_name


def _mimalloc_pool(dask_worker=None):
    import pyarrow as pa

    pa.set_memory_pool(pa.mimalloc_memory_pool())


def test_small_workers_get_pyarrow_to_hand_back_what_it_frees(frame, one_worker, caplog):
    """A worker with less than 1 GiB to spare: pyarrow's own pool would keep
    the memory of partitions read before (counted by Dask against the
    worker); from the fit on pyarrow allocates from the system allocator."""
    (address,) = one_worker.scheduler_info()["workers"]
    one_worker.run(_mimalloc_pool)  # pyarrow's default here (an earlier fit changed it)
    ddf = dd.from_pandas(frame, npartitions=2)
    with caplog.at_level(logging.INFO, "distboost"):
        db.GradientBoostingClassifier(n_estimators=2, client=one_worker).fit(
            ddf[FEATURES], ddf["label"])
    assert one_worker.run(_arrow_pool) == {address: "system"}
    assert [r for r in caplog.records if "allocates from the system allocator" in r.message]


def test_a_worker_restarted_while_it_loads_distboost_is_refused_with_its_baseline(frame):
    """A memory_limit below what Python, numpy, pandas, pyarrow, numba and distboost
    take: the worker's nanny restarts it while it loads them to answer (its memory is
    watched every 10 ms here, so it always does), and the fit says so before any work."""
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.worker.memory.monitor-interval": "10ms"}), \
            LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None,
                         memory_limit="150MB") as cluster, \
            Client(cluster, set_as_default=False) as client:
        ddf = dd.from_pandas(frame, npartitions=2)
        with pytest.raises(MemoryError, match=r"cannot train: it uses \d+ MiB before any work "
                                              r"\(its baseline; measured in a fresh process "
                                              r"here: the worker was restarted as it loaded "
                                              r"them\) .* memory_limit of at least \d+ MiB"):
            db.GradientBoostingClassifier(n_estimators=2, client=client).fit(
                ddf[FEATURES], ddf["label"])
        assert not [k for k in client.futures]
