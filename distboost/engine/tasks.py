"""Tasks over partitions on a Dask cluster: scans and binning, one task per
partition, with readable keys ``("distboost-bin-r0", fit_token, wave,
partition)`` so that the dashboard names the work; and waits on them that
say so when nothing moves (``watch``)."""

from __future__ import annotations

import uuid

from dask.delayed import Delayed, delayed
from distributed import wait

from ..kernels.threads import set_numba_threads
from .dask_internals import worker_nthreads
from .watch import POLL


class Tasks:
    """One fit's tasks on ``client``; ``watch`` hears of their progress."""

    def __init__(self, client, watch):
        self.client, self.watch = client, watch
        self.token = uuid.uuid4().hex[:8]
        self.round = 0
        self.wave = 0

    def key(self, name, i):
        return (f"distboost-{name}-r{self.round}", self.token, self.wave, i)

    def map(self, fn, name, per_part, *common, indices=None):
        """One task per partition (inputs may be lazy Dask pieces); ``indices``
        name the partitions in the keys (default 0, 1, ...)."""
        self.wave += 1
        indices = range(len(per_part)) if indices is None else indices
        if any(_has_lazy(args) for args in per_part):
            lazy = [
                delayed(_in_worker_threads, pure=False)(fn, *args, *common,
                                                        dask_key_name=self.key(name, i))
                for i, args in zip(indices, per_part)
            ]
            return self.client.compute(lazy)
        return [
            self.client.submit(_in_worker_threads, fn, *args, *common, key=self.key(name, i))
            for i, args in zip(indices, per_part)
        ]

    def stream(self, fn, name, n_tasks, args_of, consume, window):
        """``fn(*args_of(i))`` for i < n_tasks as tasks, at most ``window`` at
        once; ``consume(i, result)`` as each finishes (its result released
        then), before the next task's arguments are made."""
        pending, submitted = {}, 0
        while submitted < n_tasks or pending:
            while submitted < n_tasks and len(pending) < window:
                (future,) = self.map(fn, name, [args_of(submitted)], indices=[submitted])
                pending[future.key] = (submitted, future)
                submitted += 1
            futures = [f for _, f in pending.values()]
            done = self.wait_any(futures, "reading the partitions")
            for key in sorted(done, key=lambda k: pending[k][0]):
                i, future = pending.pop(key)
                consume(i, self.result(future))  # raises the task's own error
                future.release()

    def result(self, future):
        """A finished task's result, straight from its worker unless the client
        goes through the scheduler (``direct_to_workers=False``): by default
        Dask relays a result through the scheduler, twice the bytes. A
        task's own error is raised."""
        return self.client.gather(future, direct=self.client.direct_to_workers is not False)

    def owners(self, futures) -> list[str]:
        """The worker holding each future's result, once all are done; a task's
        own error (e.g. bad input in a partition) is raised."""
        self.wait_all(futures, "binning the partitions")
        for f in futures:
            if f.status == "error":
                f.result()
        who = self.client.who_has(futures)
        return [min(who.get(f.key, ("?",))) for f in futures]

    def wait_all(self, futures, what):
        """Wait for every future, saying so when none finishes for a while (``watch``)."""
        pending = list(futures)
        while pending:
            done = self.wait_any(pending, what)
            pending = [f for f in pending if f.key not in done]

    def wait_any(self, futures, what) -> set:
        """Keys of the futures done once at least one is (``watch``: stalls reported)."""
        while True:
            with self.client.as_current():
                try:
                    wait(futures, timeout=POLL, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    pass
            done = {f.key for f in futures if f.done()}
            if done:
                self.watch.progress()
                return done
            if self.watch.due():
                self.watch.check(what, self._running(futures), self.workers_info())

    def _running(self, futures) -> list[str]:
        """Workers running (or about to run) these futures' tasks; all of them if none is."""
        keys = {f.key for f in futures}
        busy = [w for w, running in self.client.processing().items() if keys & set(running)]
        return busy or list(self.workers_info())

    def workers_info(self) -> dict:
        """The scheduler's view of each worker (status, memory, memory_limit)."""
        return self.client.scheduler_info()["workers"]


def _in_worker_threads(fn, *args):
    """Run ``fn`` with numba using the worker's thread count."""
    n = worker_nthreads()
    if n is not None:
        set_numba_threads(n)
    return fn(*args)


def _has_lazy(obj) -> bool:
    if isinstance(obj, Delayed):
        return True
    if isinstance(obj, (tuple, list)):
        return any(_has_lazy(o) for o in obj)
    return False
