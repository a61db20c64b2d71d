"""Running the engine's per-partition work as Dask tasks.

Scanning and binning run as tasks, one per partition, with readable keys
``("distboost-bin-r0", fit_token, wave, partition)`` so the dashboard names
the work. Training then runs on one ``Holder`` Actor per worker, holding the
partitions that worker binned: a tree level is one actor call per worker (no
scheduler round trip), answered with the histogram summed over that worker's
partitions; the rounds show on the dashboard as events. Sums are integers, so
the order of addition does not matter.
"""

from __future__ import annotations

import asyncio
import time
import uuid
import weakref
from collections import defaultdict

import dask
from dask.delayed import Delayed, delayed
from distributed import wait

from ..kernels.threads import set_numba_threads
from . import reduction
from .buffers import Buffers
from .dask_internals import DriverCalls, serialized, worker_nthreads
from .holder import History, Holder, pack, unpack
from .reduction import Failed, combine_all
from .watch import Watch, check_memory


def resolve_client(client=None):
    """The given client or the current default one; never creates a cluster."""
    if client is not None:
        return client
    from distributed import default_client

    try:
        return default_client()
    except ValueError:
        raise ValueError(
            "training data is a Dask collection but no Dask client is active: create one first, "
            "e.g. `from distributed import Client, LocalCluster; client = Client(LocalCluster())` "
            "or `Client('tcp://scheduler:8786')`, or pass client=... to the estimator"
        ) from None


def _call(fn, *args):
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


class DaskExecutor:
    """Runs the engine's work on a Dask cluster.

    Scans and binning run as tasks, one per partition. The binned partitions
    then move into one ``Holder`` Actor per worker, created on the worker
    that binned them (no data moves), and the shard futures are released:
    the worker keeps the uint8 codes and the per-row state only. Every wave
    is one actor call per holder.

    Actors are not recomputed by Dask. When a holder's worker is lost, its
    partitions are binned again from the source graph (on the workers left),
    put into new holders, and brought to the current state by replaying the
    ``History`` of state-changing waves; then the interrupted wave is run on
    them. The model is the same as without the loss.
    """

    max_recoveries = 8
    """Lost holders rebuilt within one wave before giving up."""

    def __init__(self, client, public: bool | None = None):
        self.client = client
        if public is None:  # dask.config.set({"distboost.transport": "public"})
            public = dask.config.get("distboost.transport", "auto") == "public"
        self.token = uuid.uuid4().hex[:8]
        self.round = 0
        self.wave = 0
        self.groups: list[_Group] = []
        self.history = History()
        self._recipes: dict[str, tuple] = {}
        self._binned: dict[str, list] = {}
        self._short: dict[str, bool] = {}  # per wave name: its last call was short
        self._calls = DriverCalls(client, public)
        self.wave_number = 0  # waves run (a retried wave keeps its number)
        self.fit_id = uuid.uuid4().hex[:12]  # the fit's events are named by it
        self.watch = Watch(client, self.fit_id)
        self.buffers = Buffers()  # the driver's sums of its children's sums
        weakref.finalize(self, self._calls.close)  # an executor dropped without close()

    def _key(self, name, i):
        return (f"distboost-{name}-r{self.round}", self.token, self.wave, i)

    def set_round(self, round_index):
        self.round = round_index

    def n_workers(self) -> int:
        return max(1, len(self.client.scheduler_info()["workers"]))

    # ------------------------------------------------------------ tasks
    def map(self, fn, name, per_part, *common, indices=None):
        """One task per partition (inputs may be lazy Dask pieces); ``indices``
        name the partitions in the keys (default 0, 1, ...)."""
        self.wave += 1
        indices = range(len(per_part)) if indices is None else indices
        if any(_has_lazy(args) for args in per_part):
            lazy = [
                delayed(_call, pure=False)(fn, *args, *common, dask_key_name=self._key(name, i))
                for i, args in zip(indices, per_part)
            ]
            return self.client.compute(lazy)
        return [
            self.client.submit(_call, fn, *args, *common, key=self._key(name, i))
            for i, args in zip(indices, per_part)
        ]

    def _wait_all(self, futures, what):
        """Wait for every future, saying so when none finishes for a while (``watch``)."""
        pending = list(futures)
        while pending:
            done = self._wait_any(pending, what)
            pending = [f for f in pending if f.key not in done]

    def _wait_any(self, futures, what) -> set:
        """Keys of the futures done once at least one is (``watch``: stalls reported)."""
        while True:
            with self.client.as_current():
                try:
                    wait(futures, timeout=WATCH_POLL, return_when="FIRST_COMPLETED")
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

    def check_memory(self) -> None:
        """Refuse, before any work, workers whose memory cannot hold a fit
        (``watch.check_memory``)."""
        check_memory(self.client, self.workers_info(), MIN_WORKING_SET)

    def workers_info(self) -> dict:
        """The scheduler's view of each worker (status, memory, memory_limit)."""
        return self.client.scheduler_info()["workers"]

    def _owners(self, futures):
        self._wait_all(futures, "binning the partitions")
        for f in futures:
            if f.status == "error":
                f.result()  # raises the task's own error (e.g. bad input in a partition)
        who = self.client.who_has(futures)
        return [min(who.get(f.key, ("?",))) for f in futures]

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
            done = self._wait_any(futures, "reading the partitions")
            for key in sorted(done, key=lambda k: pending[k][0]):
                i, future = pending.pop(key)
                consume(i, future.result())  # raises the task's own error
                future.release()

    # ---------------------------------------------------------- holders
    def bin(self, set_key, fn, name, per_part, *common):
        """Bin one set's partitions as tasks; keep the recipe to bin them again."""
        self._recipes[set_key] = (fn, name, list(per_part), common)
        self._binned[set_key] = self._bin(set_key, range(len(per_part)))

    def _bin(self, set_key, indices):
        fn, name, per_part, common = self._recipes[set_key]
        indices = list(indices)
        futures = self.map(fn, name, [per_part[i] for i in indices], *common, indices=indices)
        return list(zip(indices, futures))

    def place(self, name):
        """One holder per worker for the partitions it binned; release the shard futures."""
        binned, self._binned = self._binned, {}
        groups, lost = self._place(binned, name)
        self.groups = groups + self._rebuild(lost)

    def _place(self, binned, name):
        """Holders for ``{set_key: [(index, shard future)]}``; returns (placed, lost)."""
        pairs = [(k, i, f) for k, items in binned.items() for i, f in items]
        if not pairs:
            return [], []
        by_worker = defaultdict(list)
        for owner, pair in zip(self._owners([f for _, _, f in pairs]), pairs):
            by_worker[owner].append(pair)
        threads = {w: info["nthreads"] for w, info in self.client.scheduler_info()["workers"].items()}
        self.wave += 1
        groups = []
        for j, (worker, members) in enumerate(sorted(by_worker.items())):
            members.sort(key=lambda m: (m[0], m[1]))
            sets = defaultdict(list)
            for k, i, _ in members:
                sets[k].append(i)
            future = self.client.submit(
                Holder, [(k, len(v)) for k, v in sets.items()], *(f for _, _, f in members),
                n_threads=threads.get(worker), key=self._key(name, j), actor=True,
                workers=None if worker == "?" else [worker], allow_other_workers=True,
            )
            groups.append(_Group(dict(sets), future))
        with self.client.as_current():
            wait([g.future for g in groups])
        who = self.client.who_has([g.future for g in groups])
        placed, lost = [], []
        for g in groups:
            if g.future.status == "error" and _lost(g, g.future.exception()):
                lost.append(g)
            else:
                g.address = min(who[g.future.key])
                if self._calls.public:
                    with self.client.as_current():  # the handle binds to this client
                        g.actor = g.future.result()
                placed.append(g)
        return placed, lost

    def _rebuild(self, lost):
        """New holders for the partitions of ``lost``, in the current state."""
        rebuilt = []
        for _ in range(self.max_recoveries):
            if not lost:
                return rebuilt
            parts = defaultdict(list)
            for g in lost:
                g.release()
                for k, idx in g.sets.items():
                    parts[k] += idx
            placed, lost = self._place({k: self._bin(k, sorted(v)) for k, v in parts.items()},
                                       "regroup")
            outcomes = self._replay(placed, [self.history.replay(g.sets) for g in placed])
            for g, out in zip(placed, outcomes):
                (lost if _lost(g, out) else rebuilt).append(g)
        raise RuntimeError(f"lost workers {self.max_recoveries} times while rebuilding holders; "
                           f"check the cluster's health (memory limits, worker logs)")

    def run(self, ops, name):
        """One wave: per op, its results (``reduction``): for an op that
        combines, one (summed among the holders); else one per holder having
        the op's set, in the holders' order.

        A holder lost with its worker is rebuilt on the workers left and the
        wave is tried again (the others keep their results of it). An error
        other than a lost worker ends the fit: the holders are released at
        once (the error's traceback may hold this executor in a reference
        cycle for a while).
        """
        try:
            results = self._wave(ops, name)
        except BaseException:
            self.close()
            raise
        self.history.record(ops)
        return results

    def close(self):
        """Release every holder (their workers drop the fit's data) and the connections."""
        for g in self.groups:
            g.release()
        self._calls.close()

    def _wave(self, ops, name) -> list:
        self.wave_number += 1
        packed = _packed(ops)
        for attempt in range(self.max_recoveries + 1):
            groups = list(self.groups)
            t0 = time.perf_counter()
            outcomes = self._attempt(groups, ops, packed, attempt, self._short.get(name, False),
                                     f"the wave {name!r} of round {self.round}")
            self._short[name] = time.perf_counter() - t0 < LOOP_CALL_SECONDS
            lost = [g for g, out in zip(groups, outcomes) if _lost(g, out)]
            if not lost and not any(isinstance(out[1], Failed) for out in outcomes):
                self.watch.progress()
                return self._assemble(ops, groups, outcomes)
            self.groups = [g for g in self.groups if g not in lost]
            self.groups += self._rebuild(lost)
        raise RuntimeError(f"lost workers {self.max_recoveries} times in one wave ({name})")

    def _assemble(self, ops, groups, outcomes) -> list:
        """Per op: the driver's sum of its children's sums, or every holder's result."""
        combines = {k: op.combine for k, op in enumerate(ops) if op.combine is not None}
        sums = combine_all(combines, [s for _, s in outcomes if s is not None], self.buffers)
        out = [[sums[k]] if k in sums else [] for k in range(len(ops))]
        for direct, _ in outcomes:
            for k in sorted(direct):
                out[k].append(direct[k])
        return out

    def _attempt(self, groups, ops, packed, attempt, inline, what="a wave"):
        """One try at a wave on ``groups`` (``Holder.wave``, the reduction tree
        over them); per group, (direct results, sums or None) or the error
        raised. Any error aborts the attempt on every holder, so that none
        waits for a child that will not deliver."""
        peers = [reduction.Peer(g.address, g.future.key) for g in groups]
        plans = [reduction.Plan(self.wave_number, attempt,
                                tuple(k for k, op in enumerate(ops) if op.set_key in g.sets),
                                None if parent < 0 else peers[parent], n_children, inline,
                                self._calls.public)
                 for g, (parent, n_children) in zip(groups, reduction.tree(len(groups)))]

        async def wave(send):
            failed = asyncio.Event()
            calls = [asyncio.ensure_future(
                _watched(send(g, "wave", [packed, serialized(plan)], {}), g, failed))
                for g, plan in zip(groups, plans)]
            abort = asyncio.ensure_future(self._abort_when(failed, send, groups, attempt))
            try:
                await self._monitor(calls, groups, what)
            except BaseException:
                failed.set()
                await asyncio.sleep(0)  # the abort goes out before the calls are dropped
                for call in calls:
                    call.cancel()
                raise
            outcomes = await asyncio.gather(*calls, return_exceptions=True)
            abort.cancel()
            return outcomes

        return [out if isinstance(out, BaseException) else unpack(out)
                for out in self._calls.run(wave)]

    async def _monitor(self, calls, groups, what):
        """Until every call is answered: say so when none is for a while (``watch``;
        ``StallError`` after ``distboost.stall-timeout``)."""
        while not all(call.done() for call in calls):
            await asyncio.wait(calls, timeout=WATCH_POLL)
            if self.watch.due() and not all(call.done() for call in calls):
                info = await asyncio.to_thread(self.workers_info)
                waiting = [g.address for g, call in zip(groups, calls) if not call.done()]
                self.watch.check(what, waiting, info)

    async def _abort_when(self, failed, send, groups, attempt):
        """Once ``failed`` is set, tell every holder still there to stop waiting."""
        await failed.wait()
        live = [g for g in groups if g.future.status != "error"]
        await asyncio.gather(*(send(g, "abort", [self.wave_number, attempt], {}) for g in live),
                             return_exceptions=True)

    def _replay(self, groups, op_lists):
        """``Holder.call`` on every group (its own ops, in its actor thread);
        per group, its smalls or the error raised."""
        async def wave(send):
            calls = [_watched(send(g, "call", [_packed(ops)], {}), g, asyncio.Event())
                     for g, ops in zip(groups, op_lists)]
            return await asyncio.gather(*calls, return_exceptions=True)

        return [out if isinstance(out, BaseException) else unpack(out)
                for out in self._calls.run(wave)]


async def _watched(reply, g, failed):
    """The packed result of a holder's call; an error (returned, not raised)
    sets ``failed``. A lost worker is noticed while waiting, not after
    connection timeouts."""
    reply = asyncio.ensure_future(reply)
    while not reply.done():
        if g.future.status == "error":
            reply.cancel()
            failed.set()
            return RuntimeError(f"the worker holding {g.future.key} was lost")
        await asyncio.wait([reply], timeout=LOST_POLL)
    # errors are returned, not raised: a raised error's traceback would hold
    # the caller's frame, and through it the executor, in a reference cycle
    error = reply.exception()
    if error is None:
        answer = reply.result()
        if answer["status"] == "OK":
            return answer["result"]
        error = answer["exception"]
    failed.set()
    return error


def _packed(ops):
    """A wave's ops packed once for every holder (``holder.pack``)."""
    header, buffers = pack(ops)  # buffers need Dask's serialization, bytes do not
    return serialized((header, buffers)) if buffers else (header, ())


LOOP_CALL_SECONDS = 0.1
"""A wave whose last call took less than this runs on the workers' event loops
(no hand-over to and from a thread: ~0.15 ms less per call); a longer one in
a thread, so that a worker's event loop is never held long."""

LOST_POLL = 0.05
"""Seconds between looks at whether a holder's worker was lost, during a call."""

MIN_WORKING_SET = 100 * 2**20
"""Bytes a worker needs above its baseline and below its pause threshold
(``check_memory``): what the kernels, one block of rows on disk, one partition
being read and the histograms take at the least."""

WATCH_POLL = 1.0
"""Seconds between looks at whether a fit's tasks or waves make progress (``watch``)."""

LOST_PATIENCE = 10.0
"""Seconds a connection error waits for the scheduler to confirm a lost worker."""

LOST = (OSError, RuntimeError, KeyError)
"""What reaching a holder raises when its worker is gone (connection errors;
the worker no longer knowing the actor)."""


class _Group:
    """One holder Actor (its future, its worker) and the partitions, per set, it holds."""

    def __init__(self, sets: dict, future):
        self.sets, self.future, self.address, self.actor = sets, future, None, None

    def release(self):
        self.future.release()


def _lost(group, outcome) -> bool:
    """Is ``outcome`` (a call's result or error) the loss of the holder's worker?

    Errors that do not mean a lost worker are raised.
    """
    if not isinstance(outcome, BaseException):
        return False
    if not isinstance(outcome, LOST):
        raise outcome
    _raise_unless_lost(group, outcome)
    return True


def _raise_unless_lost(group, error):
    """Re-raise ``error`` unless the scheduler says the holder's worker is gone.

    A dead worker surfaces first as a connection error on the driver; the
    scheduler marks the actor's future as erred moments later.
    """
    patience = LOST_PATIENCE if isinstance(error, OSError) else LOST_POLL
    deadline = time.monotonic() + patience
    while group.future.status != "error":
        if time.monotonic() >= deadline:
            raise error
        time.sleep(0.05)
