"""The engine on a Dask cluster: where the holders go, and how a lost one comes back.

Scanning and binning run as tasks, one per partition (``tasks``). Training
then runs on one ``Holder`` Actor per worker, holding the partitions that
worker binned: a tree level is one call per holder (``transport``; no
scheduler round trip), answered with the histograms summed among the holders
(``reduction``); the rounds show on the dashboard as events. This module
places the holders, runs the waves through the transport, and rebuilds the
holders of a lost worker. Sums are integers, so the order of addition does
not matter.
"""

from __future__ import annotations

import time
import uuid
import weakref
from collections import defaultdict

import dask
from distributed import wait

from .balance import balance
from .disk import DiskSpaceError, check_room
from .holder import History, Holder
from .lost_scheduler import scheduler_lost
from .reduction import Failed
from .shard import Shard
from .spill import Placement
from .tasks import Tasks
from .transport import LOOP_CALL_SECONDS, LOST_POLL, Transport, packed_ops
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

    remote = True

    def __init__(self, client, public: bool | None = None):
        self.client = client
        if public is None:  # dask.config.set({"distboost.transport": "public"})
            public = dask.config.get("distboost.transport", "auto") == "public"
        self.groups: list[_Group] = []
        self.history = History()
        self._recipes: dict[str, tuple] = {}
        self._binned: dict[str, list] = {}
        self._short: dict[str, bool] = {}  # per wave name: its last call was short
        self.wave_number = 0  # waves run (a retried wave keeps its number)
        self.fit_id = uuid.uuid4().hex[:12]  # the fit's events are named by it
        self.watch = Watch(client, self.fit_id)
        self.tasks = Tasks(client, self.watch)
        self.transport = Transport(client, public, self.watch, self.tasks.workers_info)
        weakref.finalize(self, self.transport.close)  # an executor dropped without close()

    def set_round(self, round_index):
        self.tasks.round = round_index

    def n_workers(self) -> int:
        return max(1, len(self.workers_info()))

    def single_partition(self, set_key) -> bool:
        """Never: the rows are on the workers, their levels go in waves."""
        return False

    # ------------------------------------------------------------ tasks
    def map(self, fn, name, per_part, *common, indices=None):
        """One task per partition (``tasks.Tasks.map``)."""
        return self.tasks.map(fn, name, per_part, *common, indices=indices)

    def stream(self, fn, name, n_tasks, args_of, consume, window):
        """Tasks at most ``window`` at once, consumed as they finish (``tasks.Tasks.stream``)."""
        self.tasks.stream(fn, name, n_tasks, args_of, consume, window)

    def check_memory(self) -> None:
        """Refuse, before any work, workers whose memory cannot hold a fit
        (``watch.check_memory``)."""
        check_memory(self.client, self.workers_info(), MIN_WORKING_SET)

    def workers_info(self) -> dict:
        """The scheduler's view of each worker (status, memory, memory_limit)."""
        return self.tasks.workers_info()

    # ---------------------------------------------------------- holders
    def bin(self, set_key, fn, name, per_part, *common):
        """Bin one set's partitions as tasks; keep the recipe to bin them again.
        Before the fit's first binning, out of core: room on the workers'
        disks (``disk.check_room``)."""
        if not self._recipes:
            placement = next((c for c in common if isinstance(c, Placement)), None)
            check_room(self.client, self.workers_info(), placement)
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
        threads = {w: info["nthreads"] for w, info in self.workers_info().items()}
        owners = self._balanced(pairs, self.tasks.owners([f for _, _, f in pairs]), threads)
        by_worker = defaultdict(list)
        for owner, pair in zip(owners, pairs):
            by_worker[owner].append(pair)
        self.tasks.wave += 1
        groups = []
        for j, (worker, members) in enumerate(sorted(by_worker.items())):
            members.sort(key=lambda m: (m[0], m[1]))
            sets = defaultdict(list)
            for k, i, _ in members:
                sets[k].append(i)
            future = self.client.submit(
                Holder, [(k, len(v)) for k, v in sets.items()], *(f for _, _, f in members),
                n_threads=threads.get(worker), key=self.tasks.key(name, j), actor=True,
                workers=None if worker == "?" else [worker], allow_other_workers=True,
            )
            groups.append(_Group(dict(sets), future))
        with self.client.as_current():
            wait([g.future for g in groups])
        who = self.client.who_has([g.future for g in groups])
        placed, lost = [], []
        for g in groups:
            if (g.future.status == "error" and _lost(g, g.future.exception())
                    or not who.get(g.future.key)):  # or its worker went away since
                lost.append(g)
            else:
                g.address = min(who[g.future.key])
                if self.transport.public:
                    with self.client.as_current():  # the handle binds to this client
                        g.actor = g.future.result()
                placed.append(g)
        return placed, lost

    def _balanced(self, pairs, owners, threads) -> list:
        """Owners after each set's partitions moved so that the workers hold
        rows in proportion to their threads (``balance``), also workers that
        read none. When a partition went to a worker's disk, memory is short
        somewhere and nothing moves: rows moved in memory could take their
        new worker past its limit, and blocks on disk would be read back."""
        if len(threads) < 2:
            return owners
        facts = self.client.gather(self.map(_shard_facts, "size", [(f,) for _, _, f in pairs]))
        if not all(in_memory for _, in_memory in facts):
            return owners
        owners = list(owners)
        for key in sorted({k for k, _, _ in pairs}):
            at = [j for j, (k, _, _) in enumerate(pairs) if k == key]
            moved = balance([owners[j] for j in at], [facts[j][0] for j in at], threads)
            for j, owner in zip(at, moved):
                owners[j] = owner
        return owners

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
            outcomes = self.transport.replay(placed, [self.history.replay(g.sets) for g in placed])
            for g, out in zip(placed, outcomes):
                (lost if _lost(g, out) else rebuilt).append(g)
        raise RuntimeError(f"lost workers {self.max_recoveries} times while rebuilding holders; "
                           f"check the cluster's health (memory limits, room in the workers' "
                           f"local directories, worker logs)")

    def run(self, ops, name):
        """One wave: per op, its results (``reduction``): for an op that
        combines, the sums of the holders answering the driver (summed among
        the holders below them); else one per holder having the op's set, in
        the holders' order.

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
        self.transport.close()

    def _wave(self, ops, name) -> list:
        self.wave_number += 1
        packed = packed_ops(ops)
        for attempt in range(self.max_recoveries + 1):
            groups = list(self.groups)
            t0 = time.perf_counter()
            outcomes = self.transport.wave(groups, ops, packed, self.wave_number, attempt,
                                           self._short.get(name, False),
                                           f"the wave {name!r} of round {self.tasks.round}")
            self._short[name] = time.perf_counter() - t0 < LOOP_CALL_SECONDS
            lost = [g for g, out in zip(groups, outcomes) if _lost(g, out)]
            if not lost and not any(isinstance(out[1], Failed) for out in outcomes):
                self.watch.progress()
                return self._assemble(ops, groups, outcomes)
            self.groups = [g for g in self.groups if g not in lost]
            self.groups += self._rebuild(lost)
        raise RuntimeError(f"lost workers {self.max_recoveries} times in one wave ({name})")

    def _assemble(self, ops, groups, outcomes) -> list:
        """Per op: the sums of the holders that answer the driver (at most
        ``reduction.FAN_IN``; the engine adds them where it uses them, the
        grower while it subtracts), or every holder's result."""
        out = [[] for _ in ops]
        for direct, sums in outcomes:
            for k in sorted(direct):
                out[k].append(direct[k])
            for k in sorted(sums or {}):
                out[k].append(sums[k])
        return out

MIN_WORKING_SET = 100 * 2**20
"""Bytes a worker needs above its baseline and below its pause threshold
(``check_memory``): what the kernels, one block of rows on disk, one partition
being read and the histograms take at the least."""

LOST_PATIENCE = 10.0
"""Seconds a connection error waits for the scheduler to confirm a lost worker."""

LOST = (OSError, RuntimeError, KeyError)
"""What reaching a holder raises when its worker is gone (connection errors;
the worker no longer knowing the actor)."""

NOT_LOST = (DiskSpaceError,)
"""Errors of those kinds that a worker still there raised: the fit's own cause."""


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
    if not isinstance(outcome, LOST) or isinstance(outcome, NOT_LOST):
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
        if time.monotonic() >= deadline or scheduler_lost(group.future.client):
            raise error  # no scheduler to confirm it (lost_scheduler names that loss)
        time.sleep(0.05)


def _shard_facts(binned) -> tuple[int, bool]:
    """A bin task's rows, and whether they are in memory (a shard, not blocks on disk)."""
    if isinstance(binned, Shard):
        return binned.n_rows, not binned.buffers.on_disk
    return sum(s.n_rows for s in binned), False
