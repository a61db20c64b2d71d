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
import operator
import time
import uuid
import weakref
from collections import defaultdict

import numba
from dask.delayed import Delayed, delayed
from distributed import as_completed, wait
from distributed.actor import ProxyRPC
from distributed.protocol import to_serialize

from .holder import History, Holder, pack, unpack


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
    try:
        from distributed import get_worker

        n = get_worker().state.nthreads
        numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
    except ValueError:
        pass
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

    def __init__(self, client):
        self.client = client
        self.token = uuid.uuid4().hex[:8]
        self.round = 0
        self.wave = 0
        self.groups: list[_Group] = []
        self.history = History()
        self._recipes: dict[str, tuple] = {}
        self._binned: dict[str, list] = {}
        self._short: dict[str, bool] = {}  # per wave name: its last call was short
        self._calls = _Calls(client)
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

    def getitem(self, values, item, name):
        return [
            self.client.submit(operator.getitem, v, item, key=self._key(name, i))
            for i, v in enumerate(values)
        ]

    def gather(self, values):
        return self.client.gather(values)

    def _owners(self, futures):
        with self.client.as_current():
            wait(futures)
        for f in futures:
            if f.status == "error":
                f.result()  # raises the task's own error (e.g. bad input in a partition)
        who = self.client.who_has(futures)
        return [min(who.get(f.key, ("?",))) for f in futures]

    def fold(self, values, combine, name, *args):
        """Combine results two by two as they complete, for an associative ``combine``.

        Each merge runs as soon as two results are ready, and its inputs are
        released, so workers hold a few results at a time however many
        partitions there are. The caller must not keep ``values``.
        """
        self.wave += 1
        pending = as_completed(values, loop=self.client.loop)
        values.clear()
        waiting, n = None, 0
        for future in pending:
            if waiting is None:
                waiting = future
                continue
            n += 1
            pending.add(self.client.submit(_call, combine, [waiting, future], *args,
                                           key=self._key(name, n)))
            waiting = future = None
        return waiting.result()

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
            outcomes = self._call(placed, [self.history.replay(g.sets) for g in placed])
            for g, out in zip(placed, outcomes):
                (lost if _lost(g, out) else rebuilt).append(g)
        raise RuntimeError(f"lost workers {self.max_recoveries} times while rebuilding holders; "
                           f"check the cluster's health (memory limits, worker logs)")

    def run(self, ops, name):
        """One actor call per holder; per op, the small results of the holders having its set.

        A holder lost with its worker is rebuilt on the workers left and the
        wave runs again there. An error other than a lost worker ends the
        fit: the holders are released at once (the error's traceback may hold
        this executor in a reference cycle for a while).
        """
        try:
            results = self._wave(ops, name)
        except BaseException:
            self.close()
            raise
        self.history.record(ops)
        out = [[] for _ in ops]
        for g in self.groups:
            mine = (i for i, op in enumerate(ops) if op.set_key in g.sets)
            for i, small in zip(mine, results[id(g)]):
                out[i].append(small)
        return out

    def close(self):
        """Release every holder (their workers drop the fit's data) and the connections."""
        for g in self.groups:
            g.release()
        self._calls.close()

    def _wave(self, ops, name) -> dict:
        """Per holder (by id), its smalls: ``_call`` on every holder, again on
        rebuilt holders for those lost."""
        results, todo = {}, self.groups
        for _ in range(self.max_recoveries + 1):
            t0 = time.perf_counter()
            outcomes = self._call(todo, [[op for op in ops if op.set_key in g.sets] for g in todo],
                                  on_loop=self._short.get(name, False))
            self._short[name] = time.perf_counter() - t0 < LOOP_CALL_SECONDS
            lost = []
            for g, out in zip(todo, outcomes):
                if _lost(g, out):
                    lost.append(g)
                else:
                    results[id(g)] = out
            if not lost:
                break
            self.groups = [g for g in self.groups if g not in lost]
            todo = self._rebuild(lost)
            self.groups += todo
        else:
            raise RuntimeError(f"lost workers {self.max_recoveries} times in one wave ({name})")
        return results

    def _call(self, groups, op_lists, on_loop=False):
        """``Holder.call`` on every group at once; per group, its smalls or the error raised.

        ``on_loop`` runs the calls on the workers' event loops instead of
        their actor threads (one thread hand-over less each way).
        """
        keys = [tuple(map(id, ops)) for ops in op_lists]
        packed = {}
        for key, ops in zip(keys, op_lists):  # packed once, whatever the number of holders
            if ops and key not in packed:
                header, buffers = pack(ops)  # buffers need Dask's serialization, bytes do not
                packed[key] = to_serialize((header, buffers)) if buffers else (header, ())
        kwargs = {"separate_thread": not on_loop}

        async def call(send, g, ops, key):
            # errors are returned, not raised here: a raised error's traceback would
            # hold this frame, and through it the executor, in a reference cycle
            if not ops:
                return []
            reply = asyncio.ensure_future(send(g, packed[key], kwargs))
            while not reply.done():  # don't wait out connection timeouts for a dead worker
                if g.future.status == "error":
                    reply.cancel()
                    return RuntimeError(f"the worker holding {g.future.key} was lost")
                await asyncio.wait([reply], timeout=LOST_POLL)
            if reply.exception() is not None:
                return reply.exception()
            answer = reply.result()
            return unpack(answer["result"]) if answer["status"] == "OK" else answer["exception"]

        async def wave(send):
            return await asyncio.gather(*(call(send, g, ops, key)
                                          for g, ops, key in zip(groups, op_lists, keys)),
                                        return_exceptions=True)

        return self._calls.run(wave)

class _Calls:
    """How a wave's actor calls reach the holders' workers.

    Over connections of the fit's own, opened with the client's security
    settings and driven by an event loop run in the calling thread, so that
    a wave costs no hand-over to the client's event-loop thread and back. In
    a thread that already runs an event loop (a notebook) through the
    client's loop and connection pool instead (what an Actor proxy does),
    and through the scheduler when the client was told not to reach
    workers directly (``direct_to_workers=False``).
    """

    def __init__(self, client):
        self.client = client
        self._loop = None
        self._comms: dict[str, object] = {}

    def run(self, wave):
        """``wave(send)`` to its end, ``async send(group, payload, kwargs) -> answer``
        reaching the holders the way this thread and client allow."""
        if self.client.direct_to_workers is False:
            return self.client.sync(wave, self._relayed)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop in this thread: run one of the fit's own
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
            return self._loop.run_until_complete(wave(self._send))
        return self.client.sync(wave, self._pooled)

    def _pooled(self, g, payload, kwargs):
        """Through the client's connection pool (what an Actor proxy does)."""
        return self.client.rpc(g.address).actor_execute(
            actor=g.future.key, function="call", args=[payload], kwargs=kwargs)

    def _relayed(self, g, payload, kwargs):
        """Through the scheduler."""
        return ProxyRPC(self.client.scheduler, g.address).actor_execute(
            actor=g.future.key, function="call", args=[payload], kwargs=kwargs)

    async def _send(self, g, payload, kwargs):
        from distributed.comm import connect
        from distributed.core import send_recv

        comm = self._comms.pop(g.address, None)
        if comm is None or comm.closed():
            comm = await connect(g.address, **self.client.connection_args)
        try:
            answer = await send_recv(comm, op="actor_execute", actor=g.future.key, function="call",
                                     args=[payload], kwargs=kwargs)
        except BaseException:
            comm.abort()  # a cut exchange leaves the connection unusable
            raise
        self._comms[g.address] = comm  # reused only after a whole exchange
        return answer

    def close(self):
        """Close the fit's connections and event loop."""
        for comm in self._comms.values():
            comm.abort()
        self._comms.clear()
        if self._loop is not None:
            self._loop.close()
            self._loop = None


LOOP_CALL_SECONDS = 0.1
"""A wave whose last call took less than this runs on the workers' event loops
(no hand-over to and from the actor thread: ~0.15 ms less per call); a longer
one in the actor thread, so that a worker's event loop is never held long."""

LOST_POLL = 0.05
"""Seconds between looks at whether a holder's worker was lost, during a call."""

LOST_PATIENCE = 10.0
"""Seconds a connection error waits for the scheduler to confirm a lost worker."""

LOST = (OSError, RuntimeError, KeyError)
"""What reaching a holder raises when its worker is gone (connection errors;
the worker no longer knowing the actor)."""


class _Group:
    """One holder Actor (its future, its worker) and the partitions, per set, it holds."""

    def __init__(self, sets: dict, future):
        self.sets, self.future, self.address = sets, future, None

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
