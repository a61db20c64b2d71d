"""Shared fixtures: one real LocalCluster for the session, dashboards off."""

import contextlib
import os

import numpy as np
import pytest

os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")


@pytest.fixture(scope="session")
def dask_client():
    """A real two-worker LocalCluster (one thread each) shared by the session.

    Not the default client: tests pass it explicitly, so that tests of the
    "no client" error and of in-process training see no cluster.
    """
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                           processes=True, memory_limit="3GiB")
    client = Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


@pytest.fixture
def partitioned():
    """``partitioned(k)``: in-process fits see their rows as k partitions.

    The engine really runs on k partitions (in this process), which is how
    partition-independence is checked without a cluster
    (``distboost.engine.local_partitions``).
    """
    from distboost.engine import local_partitions

    with contextlib.ExitStack() as stack:
        def use(n_parts):
            stack.close()
            stack.enter_context(local_partitions(n_parts))

        yield use


@pytest.fixture(scope="module")
def dashboard_client():
    """A real two-worker LocalCluster with its dashboard on a free loopback port,
    serving the /distboost page (``distboost.dashboard`` preloaded)."""
    from distributed import Client, LocalCluster

    from distboost.dashboard import SCHEDULER_KWARGS

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address="127.0.0.1:0", memory_limit="2GiB",
                           scheduler_kwargs=SCHEDULER_KWARGS)
    client = Client(cluster, set_as_default=False)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def dask_classification():
    """(X, y, X_valid, y_valid): 1500 rows of a 4-input circle problem as Dask
    collections, two training partitions and one validation partition."""
    import dask.dataframe as dd
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(1500, 4)), columns=["a", "b", "c", "d"])
    y = pd.Series(np.where((X**2).sum(axis=1) > 3.36, 1, 0), name="y")
    Xd, yd = dd.from_pandas(X, npartitions=3), dd.from_pandas(y, npartitions=3)
    return Xd.partitions[:2], yd.partitions[:2], Xd.partitions[2:], yd.partitions[2:]


@pytest.fixture(scope="session")
def prefect_harness():
    """One temporary Prefect server and database for the flow runs of the session
    (the modules using it import ``_flows_fixtures`` first, for quiet settings)."""
    import prefect.settings
    from prefect.settings import temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    try:  # newer Prefects: a heartbeat thread per flow run (~1 s per flow); off
        updates = {prefect.settings.PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}
    except AttributeError:  # Prefect 3.4: no flow heartbeats
        updates = {}
    no_heartbeat = temporary_settings(updates=updates)
    with prefect_test_harness(server_startup_timeout=120), no_heartbeat:
        yield
