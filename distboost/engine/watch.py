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

POLL = 1.0
"""Seconds between looks at whether a fit's tasks or waves make progress."""

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
        The fit's id in its events (``training.events``).
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


SMALL_WORKER_ROOM = 2**30
"""Workers with less memory than this to spare (below Dask's pause threshold)
have pyarrow allocate from the system allocator (``use_system_arrow_pool``),
unless ``ARROW_DEFAULT_MEMORY_POOL`` says otherwise."""


def worker_memory(dask_worker) -> dict:
    """On a worker (``client.run``): its memory limit, pause fraction and
    current use, and pyarrow's allocator (None: pyarrow not imported). Once
    this function is unpickled there, distboost's modules are loaded."""
    import os
    import sys

    import psutil

    from .dask_internals import worker_memory_limit, worker_pause_fraction

    pa = sys.modules.get("pyarrow")
    return {"memory_limit": worker_memory_limit(dask_worker),
            "pause": worker_pause_fraction(dask_worker),
            "rss": psutil.Process().memory_info().rss,
            "arrow_pool": None if pa is None else pa.default_memory_pool().backend_name,
            "arrow_pool_chosen": "ARROW_DEFAULT_MEMORY_POOL" in os.environ}


def use_system_arrow_pool(dask_worker=None) -> str:
    """On a worker: pyarrow allocates from the system allocator from now on.

    Its default pool (mimalloc or jemalloc) keeps memory it freed for reuse:
    ~100 MB on a worker that has read a few partitions, counted by Dask's
    monitor as the worker's own, enough to pause a small worker for good.
    """
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    return pa.default_memory_pool().backend_name


def check_memory(client, workers: dict, min_working_set: int) -> None:
    """Refuse, before any work, workers whose memory cannot hold a fit.

    A worker needs room for the working set (``min_working_set`` bytes) above
    what it uses already (its baseline: Python, numpy, pandas, pyarrow, numba,
    distributed, distboost) and below the fraction of ``memory_limit`` where
    Dask pauses it. A worker whose limit is below its baseline may be restarted
    by its nanny while it loads distboost to answer: its baseline is then
    measured in a fresh process here.

    Parameters
    ----------
    client : distributed.Client
    workers : dict
        ``scheduler_info()["workers"]`` (their ``memory_limit``).
    min_working_set : int

    Raises
    ------
    MemoryError
        Naming the worker, its baseline, its limit and the limit it needs.
    """
    try:
        answers = client.run(worker_memory, on_error="return")
    except OSError as error:  # a worker lost while answering: the broadcast failed
        answers = {address: error for address in workers}
    pause_default = _pause_fraction()
    for address, m in sorted(answers.items()):
        if isinstance(m, BaseException):
            limit = (workers.get(address) or {}).get("memory_limit")
            rss = _fresh_baseline() if limit else None
            if rss is None or (pause_default or 1.0) * limit - rss >= min_working_set:
                raise m  # not a worker too small for distboost's modules, as far as we can tell
            note = "; measured in a fresh process here: the worker was restarted as it loaded them"
            _refuse(address, rss, pause_default, limit, min_working_set, note)
            continue
        limit, pause, rss = m["memory_limit"], m["pause"], m["rss"]
        if not limit:  # this Dask does not say (see _dask_private): the scheduler does
            limit, pause = (workers.get(address) or {}).get("memory_limit"), pause_default
        if not (limit and pause):
            continue
        if wants_system_arrow_pool(m, limit, pause):
            _use_system_arrow_pool(client, address, m, pause * limit - rss)
        if pause * limit - rss < min_working_set:
            _refuse(address, rss, pause, limit, min_working_set)


def wants_system_arrow_pool(m: dict, limit: float, pause: float) -> bool:
    """Whether a worker (``worker_memory``'s answer ``m``, its ``memory_limit`` and
    pause fraction) should have pyarrow allocate from the system allocator: less
    than ``SMALL_WORKER_ROOM`` to spare, and a pool neither the system's already
    nor chosen by ``ARROW_DEFAULT_MEMORY_POOL``."""
    return (pause * limit - m["rss"] < SMALL_WORKER_ROOM
            and m["arrow_pool"] not in (None, "system") and not m["arrow_pool_chosen"])


def _use_system_arrow_pool(client, address, m, room):
    client.run(use_system_arrow_pool, workers=[address])
    logger.info("distboost: pyarrow on %s allocates from the system allocator from now on: its "
                "%s pool keeps freed memory, and this worker has %.0f MiB to spare (set "
                "ARROW_DEFAULT_MEMORY_POOL to choose the pool yourself)", address,
                m["arrow_pool"], room / 2**20)


def _refuse(address, rss, pause, limit, min_working_set, note=""):
    room, need = pause * limit - rss, (rss + min_working_set) / pause
    raise MemoryError(
        f"worker {address} cannot train: it uses {rss / 2**20:.0f} MiB before any work (its "
        f"baseline{note}) and Dask pauses it at {pause:.0%} of its {limit / 2**20:.0f} MiB "
        f"memory_limit, which leaves {max(room, 0) / 2**20:.0f} MiB; distboost needs at least "
        f"{min_working_set / 2**20:.0f} MiB there (compiled kernels, a block of rows, a "
        f"partition being read, histograms). Give each worker a memory_limit of at least "
        f"{need / 2**20:.0f} MiB (dask worker --memory-limit), or fewer worker processes with "
        f"more memory each.")


def _pause_fraction() -> float | None:
    value = dask.config.get("distributed.worker.memory.pause", 0.8)
    return float(value) if value else None


def _fresh_baseline() -> int | None:
    """Bytes a fresh Python process of this environment holds once it has loaded a
    Dask worker's and distboost's modules (None if that cannot be measured)."""
    import subprocess
    import sys

    code = ("import psutil, distributed, distboost, distboost.engine.group, "
            "distboost.engine.holder; print(psutil.Process().memory_info().rss)")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=120, check=True)
        return int(out.stdout.split()[-1])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return None
