"""Shared fixtures: one real LocalCluster for the session, dashboards off."""

import os

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
