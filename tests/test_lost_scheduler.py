"""A scheduler killed mid-fit is named as such within seconds
(``distboost.engine.lost_scheduler``), and Dask's noise about the broken
connections stays off the terminal while the fit runs, and only then."""

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.engine.lost_scheduler import NOISY, DaskNoise, SchedulerWatch, quiet_dask_noise

REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def scheduler_and_worker(workers: int = 1):
    """A real ``dask scheduler`` and ``workers`` ``dask worker`` (processes of their
    own); yields (scheduler address, scheduler process)."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    quiet = {"env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    cli = [sys.executable, "-m", "distributed.cli"]
    procs = [subprocess.Popen([*cli[:2], f"{cli[2]}.dask_scheduler", "--host", "127.0.0.1",
                               "--port", address.rsplit(":", 1)[1], "--dashboard-address", ":0"],
                              **quiet)]
    try:
        procs += [subprocess.Popen([*cli[:2], f"{cli[2]}.dask_worker", address, "--nthreads", "1",
                                    "--no-dashboard", "--no-nanny"], **quiet)
                  for _ in range(workers)]
        yield address, procs[0]
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=30)


class Records(logging.Handler):
    """Every record Dask's noisy loggers let through."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.seen: list[logging.LogRecord] = []

    def emit(self, record):
        self.seen.append(record)


def test_a_killed_scheduler_fails_the_fit_with_its_address_within_seconds():
    from distributed import Client

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(2000, 4)), columns=list("abcd"))
    y = pd.Series((X["a"] + X["b"] ** 2 > 1).astype(int), name="y")
    records, killed = Records(), []
    with scheduler_and_worker() as (address, scheduler):
        client = Client(address, set_as_default=False, timeout=120)
        try:
            client.wait_for_workers(1, timeout=120)

            def kill_at_round_two(r, *_):
                if r == 2:
                    os.kill(scheduler.pid, signal.SIGKILL)
                    killed.append(time.monotonic())
                    time.sleep(0.5)  # the next calls meet a closed port, not a closing one

            est = db.GradientBoostingClassifier(n_estimators=500, max_depth=2, client=client)
            loggers = [logging.getLogger(name) for name in NOISY]
            for lg in loggers:
                lg.addHandler(records)
            try:
                with pytest.raises(db.SchedulerLostError) as info:
                    est.fit(dd.from_pandas(X, npartitions=2), dd.from_pandas(y, npartitions=2),
                            callbacks=[kill_at_round_two])
            finally:
                for lg in loggers:
                    lg.removeHandler(records)
            took = time.monotonic() - killed[0]
        finally:
            with quiet_dask_noise():
                client.close(timeout=10)
    message = str(info.value)
    assert message.startswith(f"lost the Dask scheduler at {address} during the fit")
    assert "start it again" in message and "init_model" in message
    assert isinstance(info.value, ConnectionError) and info.value.__cause__ is None
    assert took < 10, took  # Dask alone: a CommClosedError, or 30 s of connection attempts
    noise = [r.getMessage() for r in records.seen if not DaskNoise().filter(r)]
    assert noise == []  # nothing Dask said about the loss got past the fit's filter


class _Client:
    """What ``SchedulerWatch`` reads of a client."""

    status = "running"

    class scheduler:  # the attribute of a client
        address = "tcp://10.0.0.5:8786"


def test_only_what_a_lost_scheduler_raises_is_named_so(monkeypatch):
    from distboost.engine import lost_scheduler

    monkeypatch.setattr(lost_scheduler, "CONFIRM", 0.3)
    client = _Client()
    started = time.monotonic()
    with pytest.raises(FileNotFoundError), SchedulerWatch(client):
        raise FileNotFoundError("part-0.parquet")  # an OSError, but no connection's
    with pytest.raises(ConnectionResetError), SchedulerWatch(client):
        raise ConnectionResetError("a worker's")  # the scheduler still there: as raised
    assert time.monotonic() - started < 2  # (0.3 s waited for the client to say otherwise)
    client.status = "connecting"
    with pytest.raises(db.SchedulerLostError, match="^lost the Dask scheduler at tcp://10.0.0.5:"
                                                    "8786 during the fit"), SchedulerWatch(client):
        raise ValueError("whatever met the loss first")
    with pytest.raises(KeyboardInterrupt), SchedulerWatch(client):
        raise KeyboardInterrupt


def _record(name, message, level=logging.WARNING, error=None):
    return logging.LogRecord(name, level, __file__, 1, message, None,
                             (type(error), error, None) if error else None)


def test_dask_noise_is_dropped_only_while_a_fit_runs():
    noise = _record("distributed.comm.tcp", "Closing dangling stream in <TCP local=...>")
    reset = _record("distributed.client", "", logging.ERROR, ConnectionResetError("reset"))
    pending = _record("asyncio", "Task was destroyed but it is pending!\ntask: <Task "
                                 "coro=<wave() at /x/distboost/engine/transport.py:70>>",
                      logging.ERROR)
    theirs = _record("asyncio", "Task was destroyed but it is pending!\ntask: <Task "
                                "coro=<my_job() at /home/me/app.py:3>>", logging.ERROR)
    useful = _record("distributed.client", "Couldn't gather 3 keys, rescheduling")
    tcp = logging.getLogger("distributed.comm.tcp")
    assert tcp.filter(noise)  # outside a fit: as Dask logs it
    with quiet_dask_noise(), quiet_dask_noise():  # nested (a fit inside a command)
        assert not tcp.filter(noise)
        assert not logging.getLogger("distributed.client").filter(reset)
        assert not logging.getLogger("asyncio").filter(pending)
        assert logging.getLogger("asyncio").filter(theirs)
        assert logging.getLogger("distributed.client").filter(useful)
    assert tcp.filter(noise)
    assert not any(isinstance(f, DaskNoise) for n in NOISY for f in logging.getLogger(n).filters)


def test_calls_waiting_for_a_lost_scheduler_are_cut_short():
    """A call that waits to connect to a dead scheduler fails when cut, not after
    Dask's connect timeout (``dask_internals.cut_calls``)."""
    from distributed import Client

    from distboost.engine.dask_internals import cut_calls

    with (scheduler_and_worker(workers=0) as (address, scheduler),
          Client(address, set_as_default=False, timeout=120) as client, quiet_dask_noise()):
        os.kill(scheduler.pid, signal.SIGKILL)
        scheduler.wait(timeout=30)
        threading.Timer(1.0, cut_calls, (client, address, "cut by the test")).start()
        started = time.monotonic()
        with pytest.raises(OSError, match="cut by the test"):
            client.log_event("distboost-test", {"x": 1})
        assert time.monotonic() - started < 10
