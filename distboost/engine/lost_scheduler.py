"""A lost scheduler named as such within seconds, and Dask's noise about it kept quiet.

Killed, or with its machine gone, the scheduler takes a fit's tasks and
holders with it: Dask keeps no work without its scheduler. What reached the
fit was whichever call met the loss first: a raw ``CommClosedError`` ("Stream
is closed"), a cancelled future, or a call that waited for the scheduler for
``distributed.comm.timeouts.connect`` (30 s) before it failed. While a fit
runs on a cluster, ``SchedulerWatch`` looks at the client every
``POLL`` seconds (a client whose connection to its scheduler broke is
``connecting``, then ``closed``); once the scheduler is lost it cuts short
the calls still waiting for it, and the fit fails with
``SchedulerLostError``, naming the scheduler and what to do.

While a fit runs, ``quiet_dask_noise`` keeps what Dask logs about the
connections a loss breaks (dangling streams closed, reconnection attempts,
asyncio tasks destroyed while pending) off the terminal: a filter on those
few loggers, removed when the fit ends. The user's own logging is untouched.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import re
import threading
import time

from .dask_internals import cut_calls

logger = logging.getLogger("distboost")

POLL = 0.2
"""Seconds between looks at the client's connection to its scheduler."""

CONFIRM = 3.0
"""Seconds a connection error waits for the client to confirm a lost scheduler."""

LIVE = ("running", "newly-created")
"""A client's states while it has, or is getting, its scheduler."""


class SchedulerLostError(ConnectionError):
    """The fit's Dask scheduler is gone; the message says which one and what to do."""


def scheduler_lost(client) -> bool:
    """Whether ``client`` lost its scheduler (it reconnects, or gave up)."""
    return str(getattr(client, "status", "running")) not in LIVE


def lost_message(address: str) -> str:
    """What ``SchedulerLostError`` says: the scheduler, what it means, what to do."""
    return (f"lost the Dask scheduler at {address} during the fit: the connection to it "
            f"broke and it does not answer (stopped or killed, out of memory, or its machine "
            f"or network down), and the fit's work on the cluster went with it. Check the "
            f"scheduler's log, start it again (or connect to another) and fit again; models "
            f"saved by a TrainingCheckPoint callback continue with fit(..., init_model=path)")


class SchedulerWatch:
    """While entered, watches ``client``'s scheduler from a thread of its own;
    an error leaving the block after the scheduler was lost becomes
    ``SchedulerLostError``."""

    def __init__(self, client):
        self.client = client
        self.address = str(getattr(client.scheduler, "address", None) or "(unknown address)")
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="distboost-scheduler-watch",
                                        daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(POLL):
            if scheduler_lost(self.client):
                self.lost = True
                cut_calls(self.client, self.address, "distboost: the scheduler was lost")

    def __exit__(self, kind, error, traceback) -> None:
        self._stop.set()
        if error is None or not isinstance(error, (Exception, asyncio.CancelledError)):
            return
        if (self.lost or scheduler_lost(self.client)
                or (_about_connections(error) and self._confirmed())):
            logger.debug("distboost: the error that met the lost scheduler", exc_info=error)
            raise SchedulerLostError(lost_message(self.address)) from None

    def _confirmed(self) -> bool:
        """Whether the client says, within ``CONFIRM`` seconds, that its scheduler is lost."""
        deadline = time.monotonic() + CONFIRM
        while not scheduler_lost(self.client):
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL / 4)
        return True


CONNECTION_ERRORS = (ConnectionError, asyncio.CancelledError, concurrent.futures.CancelledError)


def _about_connections(error: BaseException) -> bool:
    """Whether ``error``, or one it was raised from, is what a lost scheduler
    raises: a connection error (Dask's ``CommClosedError``, its "Timed out trying
    to connect"), or a cancellation. Not a missing file, say: such an error
    leaves the fit at once."""
    seen = set()
    while error is not None and id(error) not in seen:
        if (isinstance(error, CONNECTION_ERRORS)
                or any(c.__name__ == "CommClosedError" for c in type(error).__mro__)
                or (type(error) is OSError and "connect" in str(error))):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


@contextlib.contextmanager
def watching_scheduler(executor):
    """``SchedulerWatch`` and ``quiet_dask_noise`` around a fit on a cluster
    (an executor with a ``client``); nothing in process."""
    client = getattr(executor, "client", None)
    if client is None:
        yield
        return
    with quiet_dask_noise(), SchedulerWatch(client):
        yield


# ---------------------------------------------------------------- noise
NOISY = ("distributed.batched", "distributed.client", "distributed.comm.core",
         "distributed.comm.tcp", "distributed.core", "distributed.utils", "asyncio")
"""The loggers whose records about broken connections are dropped during a fit."""

NOISE = re.compile(r"Closing dangling stream|Batched Comm Closed|Connection to .* has been "
                   r"closed|Lost connection|Reconnecting|report stream closed|Failed to "
                   r"reconnect to scheduler|Task was destroyed but it is pending")
"""What those records say (asyncio's only about Dask's or distboost's tasks)."""


class DaskNoise(logging.Filter):
    """Drops Dask's records about broken connections; passes everything else."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.name == "asyncio":
            return not (NOISE.search(message) and re.search(r"distributed|distboost", message))
        if NOISE.search(message):
            return False
        error = record.exc_info[1] if record.exc_info else None
        return error is None or not _about_connections(error)


_FILTER = DaskNoise()
_USERS = [0]
_USERS_LOCK = threading.Lock()


@contextlib.contextmanager
def quiet_dask_noise():
    """Drop Dask's records about broken connections (``DaskNoise``) while in the
    block; nested and concurrent blocks share one filter."""
    with _USERS_LOCK:
        _USERS[0] += 1
        if _USERS[0] == 1:
            for name in NOISY:
                logging.getLogger(name).addFilter(_FILTER)
    try:
        yield
    finally:
        with _USERS_LOCK:
            _USERS[0] -= 1
            if _USERS[0] == 0:
                for name in NOISY:
                    logging.getLogger(name).removeFilter(_FILTER)
