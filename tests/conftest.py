"""Shared fixtures: one real LocalCluster for the session, dashboards off."""

import itertools
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
def partitioned(monkeypatch):
    """``partitioned(k)``: in-process fits see their rows as k partitions.

    The engine really runs on k partitions (in this process), which is how
    partition-independence is checked without a cluster.
    """
    from distboost import _data

    real = _data.plan

    def use(n_parts):
        def plan(X, y, w, *args):
            ex, parts, evals, schema = real(X, y, w, *args)
            ((Xa, ya, wa),) = parts
            bounds = np.linspace(0, len(ya), n_parts + 1).astype(int)
            parts = [(Xa[i:j], ya[i:j], None if wa is None else wa[i:j])
                     for i, j in itertools.pairwise(bounds)]
            return ex, parts, evals, schema

        monkeypatch.setattr(_data, "plan", plan)

    return use
