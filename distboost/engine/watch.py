"""No silent stalls: say so when a fit's work on the cluster makes no progress.

A task (reading, scanning, binning a partition) or a wave (one call per
holder) can wait for a long time on a worker that Dask has paused: past 80 %
of its ``memory_limit`` a worker runs nothing until its memory goes down,
which it may never do. ``Watch`` notices that no task finished and no wave
answered for ``distboost.stall-warning`` seconds (Dask config, default 60),
says which workers it waits for and in what state they are (paused, memory
used of the limit) and what to do, in the ``distboost`` logger and as a
``stall`` event on the scheduler (the dashboard's ``/distboost`` page shows
it); after ``distboost.stall-timeout`` seconds without progress (default 600;
``None`` waits for ever) the fit fails with ``StallError``::

    dask.config.set({"distboost.stall-warning": 30, "distboost.stall-timeout": 300})
    # or DASK_DISTBOOST__STALL_TIMEOUT=300 in the environment
"""

from __future__ import annotations

import logging
import time

import dask

logger = logging.getLogger("distboost")

TOPIC = "distboost"


class StallError(TimeoutError):
    """The fit made no progress for ``distboost.stall-timeout`` seconds."""


def _seconds(key: str, default: float | None) -> float | None:
    value = dask.config.get(key, default)
    if value in (None, False, "None", "none", ""):
        return None
    if isinstance(value, str):
        from dask.utils import parse_timedelta

        return float(parse_timedelta(value))
    return float(value)


def _mib(n) -> str:
    return f"{n / 2**20:.0f} MiB"


def describe_worker(address: str, info: dict | None) -> str:
    """A worker's state as the scheduler last saw it, in words."""
    if info is None:
        return f"{address}: no longer in the cluster"
    status = str(info.get("status", "unknown")).replace("Status.", "")
    memory = (info.get("metrics") or {}).get("memory")
    limit = info.get("memory_limit")
    state = f"{address}: {status}"
    if memory is not None and limit:
        state += f", memory {_mib(memory)} of a {_mib(limit)} memory_limit"
    elif memory is not None:
        state += f", memory {_mib(memory)}"
    if status == "paused":
        state += " (Dask pauses a worker at 80 % of its memory_limit and runs nothing there)"
    return state


ADVICE = ("What to do: give the workers more memory (dask worker --memory-limit), use "
          "smaller partitions (fewer rows per task, e.g. dd.read_parquet(..., "
          "split_row_groups=True) or .repartition(partition_size=...)), or more workers; "
          "out_of_core=True keeps the binned rows on the workers' disks. The workers' logs say "
          "more.")


class Watch:
    """Tracks a fit's progress on a cluster; warns, then fails, when there is none.

    Parameters
    ----------
    client : distributed.Client
    fit_id : str
        The fit's id in its events (``_events``).
    """

    def __init__(self, client, fit_id: str):
        self.client, self.fit_id = client, fit_id
        self.progress()

    @property
    def warn_after(self) -> float | None:
        return _seconds("distboost.stall-warning", 60.0)

    @property
    def fail_after(self) -> float | None:
        return _seconds("distboost.stall-timeout", 600.0)

    def progress(self) -> None:
        """Something finished: the clock starts again."""
        self._last = self._warned = time.monotonic()

    def due(self) -> bool:
        """Whether ``check`` has something to say now."""
        now, warn, fail = time.monotonic(), self.warn_after, self.fail_after
        return ((warn is not None and now - self._warned >= warn)
                or (fail is not None and now - self._last >= fail))

    def check(self, what: str, waiting_on: list[str], workers: dict) -> None:
        """While waiting on ``waiting_on`` (worker addresses) for ``what``: warn
        every ``warn_after`` seconds without progress, raise ``StallError``
        after ``fail_after``. ``workers`` is ``scheduler_info()["workers"]``."""
        if not self.due():
            return
        idle, fail_after = time.monotonic() - self._last, self.fail_after
        states = "; ".join(describe_worker(a, workers.get(a)) for a in sorted(set(waiting_on)))
        message = (f"distboost: no progress for {idle:.0f} s in {what}, waiting for "
                   f"{len(set(waiting_on))} worker(s): {states or 'none known'}. {ADVICE}")
        if fail_after is not None and idle >= fail_after:
            raise StallError(f"{message} Gave up after distboost.stall-timeout = "
                             f"{fail_after:.0f} s (Dask config; None waits for ever).")
        self._warned = time.monotonic()
        logger.warning(message)
        try:
            self.client.log_event(TOPIC, {"fit": self.fit_id, "kind": "stall", "what": what,
                                          "idle": round(idle, 1), "message": message,
                                          "workers": sorted(set(waiting_on))})
        except Exception:
            logger.debug("distboost: could not log the stall event", exc_info=True)


def worker_memory(dask_worker) -> dict:
    """On a worker (``client.run``): its memory limit, pause fraction and current use."""
    import psutil

    from .._dask_private import worker_memory_limit, worker_pause_fraction

    return {"memory_limit": worker_memory_limit(dask_worker),
            "pause": worker_pause_fraction(dask_worker),
            "rss": psutil.Process().memory_info().rss}
