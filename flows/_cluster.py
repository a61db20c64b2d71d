"""A Dask client for the flows: a given scheduler, or a LocalCluster started here."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from distributed import Client, LocalCluster

from distboost.dashboard import PAGE, SCHEDULER_KWARGS
from flows._in_process import IN_PROCESS, InProcess, is_in_process
from flows.config import ClusterConfig


def run_logger() -> logging.Logger | logging.LoggerAdapter:
    """Prefect's run logger inside a flow or task run, a plain logger outside
    (e.g. when a task's ``.fn`` is called directly in a test)."""
    from prefect import get_run_logger
    from prefect.exceptions import MissingContextError

    try:
        return get_run_logger()
    except MissingContextError:
        return logging.getLogger("distboost.flows")


def step(task, *args):
    """``task(*args)`` in a flow run; outside one, the task's plain function
    (a small job the command line runs in this process without Prefect:
    ``flow.fn``, no flow run, no Prefect server to start)."""
    from prefect.context import FlowRunContext

    return task(*args) if FlowRunContext.get() is not None else task.fn(*args)


def say(message: str) -> None:
    """A status line for the person at the terminal (stderr: stdout is for results)."""
    print(f"distboost: {message}", file=sys.stderr, flush=True)


def cluster_config(scheduler: str | None, cluster: ClusterConfig | dict | None) -> ClusterConfig:
    """Merge a scheduler address into the cluster settings.

    The address comes from ``scheduler``, else the settings, else the
    ``DISTBOOST_SCHEDULER`` environment variable (set it on a Prefect worker
    so that every deployment run uses that cluster).
    """
    config = ClusterConfig.model_validate(cluster or {})
    scheduler = scheduler or config.scheduler or os.environ.get(SCHEDULER_ENV) or None
    return config.model_copy(update={"scheduler": scheduler})


SCHEDULER_ENV = "DISTBOOST_SCHEDULER"
_STARTED: set[str] = set()
"""Scheduler addresses of the LocalClusters this process started (and still runs)."""
_ANNOUNCED: set[str] = set()  # schedulers already named on the terminal
_IMPORTABLE: set[tuple[str, str]] = set()  # (scheduler, module) the workers imported
WORKER_MODULES = ("distboost.engine", "flows._tabular", "flows._data")
"""Modules whose functions the flows and the library send to the Dask workers."""


def check_importable(client: Client, modules) -> None:
    """Fail at once if a Dask worker cannot import one of ``modules``.

    A task is sent to a worker as a pickle naming its function's module; a
    worker that cannot import that module does not report an error but drops
    its connection to the scheduler, reconnects and is sent the same task
    again, so the computation would wait forever. Checking first turns that
    into an error naming the worker and the module.

    Raises
    ------
    RuntimeError
        Naming the first worker and module that failed, with the worker's error.
    """
    if is_in_process(client):
        return  # this process imported them
    address = client.scheduler.address
    for module in dict.fromkeys(modules):
        if (address, module) in _IMPORTABLE:
            continue
        results = client.run(exec, f"import {module}", on_error="return")
        failed = [(w, e) for w, e in results.items() if isinstance(e, BaseException)]
        if failed:
            worker, error = failed[0]
            raise RuntimeError(
                f"Dask worker {worker} cannot import {module} ({type(error).__name__}: {error}), "
                f"so it cannot run the tasks that use it; install distboost (with flows/) on the "
                f"workers, or run from the repository root, and keep functions sent to the workers "
                f"in the distboost or flows package (not in a script Prefect loads by file name)"
            )
        _IMPORTABLE.add((address, module))


def check_functions(client: Client, *functions) -> None:
    """``check_importable`` for the modules of functions about to be sent to the workers."""
    # numpy < 2's ufuncs have no __module__; their type's module is numpy
    check_importable(client, [getattr(f, "__module__", None) or type(f).__module__
                              for f in functions])


def quiet_dask_logs(level: int = logging.ERROR) -> None:
    """Keep the scheduler's and workers' chatter (started, registered...) off the terminal."""
    for name in (
        "distributed",
        "distributed.scheduler",
        "distributed.worker",
        "distributed.core",
        "distributed.nanny",
        "distributed.http.proxy",
    ):
        logging.getLogger(name).setLevel(level)


def connect(address: str) -> Client | InProcess:
    """A client of the scheduler at ``address`` (a flow's task reconnecting to
    its flow's cluster), or ``InProcess`` for ``IN_PROCESS``; close it after use."""
    if address == IN_PROCESS:
        return InProcess()
    return Client(address, set_as_default=False)


@contextmanager
def dask_client(
    scheduler: str | None = None, cluster: ClusterConfig | dict | None = None,
    quiet: bool = False, training: bool = False,
) -> Iterator[Client | InProcess]:
    """Connect to ``scheduler`` or start a LocalCluster; close what we opened.

    Parameters
    ----------
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://host:8786``), or ``IN_PROCESS``
        (``flows._in_process``: no cluster, Dask's synchronous scheduler in
        this process). Without it a LocalCluster is started with the
        ``cluster`` settings, and its dashboard address is printed.
    cluster : ClusterConfig or dict, optional
    quiet : bool
        Print nothing (the caller already announced the cluster).
    training : bool
        The caller trains: print the live training page of a LocalCluster it
        starts too (a link that works while the command runs).
    """
    config = cluster_config(scheduler, cluster)
    if config.scheduler == IN_PROCESS:
        yield InProcess()
        return
    if config.scheduler:
        client = Client(config.scheduler, set_as_default=False)
        if not quiet and config.scheduler not in _STARTED | _ANNOUNCED:
            _ANNOUNCED.add(config.scheduler)
            say(f"connected to the Dask scheduler at {config.scheduler}")
            say(f"Dask dashboard: {client.dashboard_link}")
        try:
            check_importable(client, WORKER_MODULES)
            yield client
        finally:
            client.close()
        return
    quiet_dask_logs()
    with warnings.catch_warnings():  # "port 8787 in use": we print the real address below
        warnings.filterwarnings("ignore", message=".*already in use.*")
        local = LocalCluster(
            n_workers=config.n_workers,
            threads_per_worker=config.threads_per_worker,
            processes=config.processes,
            memory_limit=config.memory_limit,
            dashboard_address=config.dashboard_address or ":0",  # the HTTP server always runs
            silence_logs=logging.ERROR,
            scheduler_kwargs=SCHEDULER_KWARGS,  # the /distboost page
        )
    client = Client(local, set_as_default=False)
    _STARTED.add(local.scheduler_address)
    if not quiet:
        say(
            f"started a local Dask cluster ({config.n_workers} workers) at "
            f"{local.scheduler_address}"
        )
        if config.dashboard_address is not None:
            say(f"Dask dashboard: {client.dashboard_link}")
            if training:
                say(f"training live: {client.dashboard_link.replace('/status', PAGE)}")
    try:
        check_importable(client, WORKER_MODULES)
        yield client
    finally:
        _STARTED.discard(local.scheduler_address)
        client.close()
        local.close()
