"""What one worker keeps during a fit, and the calls that change it.

A ``Holder`` keeps the group states (``group.GroupState``) of the partitions
one worker holds: the training set's and each evaluation set's. The engine
talks to it in waves; a wave is a list of ``Op``: a ``group`` function to run
on one set's state, and whether it returns a new state, a small result or
both. In process the holder is a plain object; on Dask it is an Actor living
on the worker that binned its partitions, so a tree level costs one actor call
per worker instead of a scheduler round trip. ``LocalExecutor`` is the
executor of a fit in process: it keeps every partition in one ``Holder`` and
runs a wave as that holder's ``run``.

An Actor's state is not recomputed by Dask when its worker dies, so the
driver keeps a ``History``: per set, how its rows started and the trees added
to them since, which a rebuilt holder replays through the learner to reach
the same state bit for bit.
"""

from __future__ import annotations

import asyncio
import pickle
from dataclasses import dataclass

from ..kernels.threads import set_numba_threads
from .buffers import Buffers
from .dask_internals import deliver
from .group import RowsFrom, TreesAdded, bundle, restore
from .reduction import Failed, Mailbox, combine_all

CHILD_TIMEOUT = 3600.0
"""Seconds a holder waits for its children's sums before giving up on a wave
(the driver aborts a wave with a lost holder long before)."""

STATE, SMALL, BOTH = "state", "small", "both"
"""What an op's function returns: a new state, a small result, or (state, small)."""


@dataclass(frozen=True)
class Op:
    """``fn(state_of[set_key], *args)`` on every holder having that set.

    Parameters
    ----------
    set_key : str
        ``"train"`` or ``"eval0"``, ``"eval1"``, ...
    fn : picklable callable from ``group``
    args : tuple
    returns : STATE, SMALL or BOTH
    rows : group.RowsFrom, group.TreesAdded or None
        What the op does to the set's rows, for ``History``: sets them from
        scratch, or adds trees (and starts a round). None for an op that
        changes the state otherwise (a pass of the round: ``engine.apply``).
    combine : callable or None
        ``combine(results, buffers) -> result``: how the small results of
        several holders make one (histograms summed, ``group.combine_level``);
        such results are summed among the holders (``reduction``). None: every
        holder's result goes to the driver.
    """

    set_key: str
    fn: object
    args: tuple = ()
    returns: str = SMALL
    rows: RowsFrom | TreesAdded | None = None
    combine: object = None

    @property
    def changes_state(self) -> bool:
        return self.returns != SMALL


class Holder:
    """The group states of one worker's partitions, set by set.

    Parameters
    ----------
    layout : list of (set_key, n_partitions)
        How ``shards`` divide into sets, in order.
    *shards : Shard
        The binned partitions (``shard.make_shard``).
    n_threads : int or None
        Numba threads for the kernels (the worker's thread count); None leaves
        numba's setting alone.
    """

    def __init__(self, layout, *shards, n_threads=None):
        self.states, k = {}, 0
        for set_key, n in layout:
            self.states[set_key] = bundle(*shards[k: k + n])
            k += n
        self.n_threads = n_threads
        self.mailbox = Mailbox()
        self.buffers = Buffers()  # the sums of reduced results
        self._own = (None, None)  # (wave, this holder's own results of it)

    def run(self, ops):
        """Run ``ops`` in order; return their small results (None for STATE ops)."""
        if self.n_threads is not None:
            set_numba_threads(self.n_threads)
        smalls = []
        for op in ops:
            try:
                out = op.fn(self.states[op.set_key], *op.args)
            finally:
                for shard in self.states[op.set_key].shards:  # pages of rows kept on disk
                    shard.release()
            if op.returns == SMALL:
                smalls.append(out)
            elif op.returns == STATE:
                self.states[op.set_key] = out
                smalls.append(None)
            else:
                self.states[op.set_key], small = out
                smalls.append(small)
        return smalls

    def call(self, packed_ops):
        """``run`` for a remote caller: ops and results ``pack``-ed."""
        return pack(self.run(unpack(packed_ops)))

    async def wave(self, packed_ops, plan):
        """One attempt at a wave (``reduction``): run this holder's ops of the
        wave (once per wave, whatever the attempts), add the sums its children
        deliver to its own results, and deliver those sums to its parent.

        ``plan`` (a ``reduction.Plan``) comes pickled: bytes travel in Dask's
        message as they are, where an object marked for Dask's serialization
        costs a few tenths of a millisecond more per call.

        Returns, packed: (per position, the results of ops that are not summed;
        the sums, or None when they went to the parent, or a ``Failed``).
        """
        ops, plan = unpack(packed_ops), pickle.loads(plan)
        mine = {k: ops[k] for k in plan.mine}
        wave, own = self._own
        if wave != plan.wave:
            run = [mine[k] for k in plan.mine]
            try:
                results = (self.run(run) if plan.inline else
                           await asyncio.get_running_loop().run_in_executor(None, self.run, run))
            except Exception as error:
                await self._deliver_up(plan, Failed(f"{type(error).__name__}: {error}"))
                raise
            own = dict(zip(plan.mine, results))
            self._own = (plan.wave, own)
        combines = {k: op.combine for k, op in enumerate(ops) if op.combine is not None}
        direct = {k: r for k, r in own.items() if k not in combines}
        reports = [{k: r for k, r in own.items() if k in combines}]
        if plan.n_children:
            reports += await self.mailbox.collect(plan.wave, plan.attempt, plan.n_children,
                                                  CHILD_TIMEOUT)
        failed = next((r for r in reports if isinstance(r, Failed)), None)
        sums = failed or _for_wire(combine_all(combines, reports, self.buffers))
        if plan.parent is None:
            return pack((direct, sums))
        sent = await self._deliver_up(plan, sums)
        return pack((direct, failed or (None if sent is True else sent)))

    async def _deliver_up(self, plan, sums):
        """Deliver ``sums`` to the parent; True, or a ``Failed`` if it cannot be reached."""
        if plan.parent is None:
            return True
        try:
            await deliver(plan.parent, plan.public, type(self), plan.wave, plan.attempt,
                          pack(sums))
        except Exception as error:  # noqa: BLE001 - the parent's worker is gone: the driver sees
            return Failed(f"parent holder unreachable ({type(error).__name__}: {error})")
        return True

    async def deliver(self, wave, attempt, packed_sums):
        """A child's sums for (wave, attempt)."""
        self.mailbox.put(wave, attempt, unpack(packed_sums))

    async def abort(self, wave, attempt):
        """The driver gave up this attempt: stop waiting for children."""
        self.mailbox.abort(wave, attempt)


def _for_wire(sums: dict) -> dict:
    """Sums as they leave the worker: each in its ``wire()`` form where it has
    one (``group.LevelResult``: histograms compact where mostly empty)."""
    return {k: r.wire() if hasattr(r, "wire") else r for k, r in sums.items()}


def pack(obj):
    """``obj`` pickled as (header, buffers): arrays of ``OUT_OF_BAND_BYTES`` or
    more as out-of-band buffers (PEP 574), sent as they are, never copied into
    the header; smaller ones inside it.

    A wave's ops are packed once for every holder, and a holder's results
    into one message, which Dask's comms send without inspecting each object.
    As Dask does, objects pickle by reference unless that fails or they come
    from ``__main__``: then by value (cloudpickle).
    """
    buffers = []

    def out_of_band(buffer):
        if buffer.raw().nbytes < OUT_OF_BAND_BYTES:
            return True  # in the header
        buffers.append(buffer.raw())
        return False

    header = _by_reference(obj, out_of_band)
    if header is None:
        import cloudpickle

        buffers.clear()
        header = cloudpickle.dumps(obj, protocol=5, buffer_callback=out_of_band)
    return header, buffers


def _by_reference(obj, buffer_callback):
    """``obj`` pickled by reference, or None where only by value will do."""
    try:
        header = pickle.dumps(obj, protocol=5, buffer_callback=buffer_callback)
    except (pickle.PicklingError, AttributeError, TypeError):  # e.g. a local function
        return None
    return None if b"__main__" in header else header


OUT_OF_BAND_BYTES = 1 << 16


def unpack(packed):
    """The object ``pack`` packed."""
    header, buffers = packed
    return pickle.loads(header, buffers=buffers)


class History:
    """Per set, what its rows went through: data from which a rebuilt holder
    reaches the current state (``group.restore``).

    The rows from scratch (``RowsFrom``), the trees added since, round by
    round (``TreesAdded``), and the ops since the latest of those that
    changed the state otherwise (the round's passes, e.g. a search's cache).
    """

    def __init__(self):
        self.start: dict[str, RowsFrom] = {}
        self.added: dict[str, list[TreesAdded]] = {}
        self.passes: dict[str, list[Op]] = {}

    def record(self, ops):
        """Take note of a wave's ``ops``, once it has run on every holder."""
        for op in ops:
            if not op.changes_state:
                continue
            key = op.set_key
            if isinstance(op.rows, RowsFrom):
                self.start[key], self.added[key], self.passes[key] = op.rows, [], []
            elif isinstance(op.rows, TreesAdded):
                self.added[key].append(op.rows)
                self.passes[key] = []
            else:
                self.passes.setdefault(key, []).append(op)

    def replay(self, set_keys) -> list[Op]:
        """The ops that bring fresh holders of ``set_keys`` to the current state."""
        return [op for key in set_keys for op in self._replay(key)]

    def _replay(self, key):
        ops = list(self.passes.get(key, ()))
        if key in self.start:
            ops.insert(0, Op(key, restore, (self.start[key], tuple(self.added[key])), STATE))
        return ops


class LocalExecutor:
    """Runs everything in this process: all partitions in one ``Holder``."""

    remote = False

    def __init__(self, n_jobs: int | None = None):
        self.n_jobs = n_jobs
        self.groups = []
        self._sets = {}

    def map(self, fn, name, per_part, *common):
        return [fn(*args, *common) for args in per_part]

    def stream(self, fn, name, n_tasks, args_of, consume, window):
        """``consume(i, fn(*args_of(i)))`` for each i in turn."""
        for i in range(n_tasks):
            consume(i, fn(*args_of(i)))

    def bin(self, set_key, fn, name, per_part, *common):
        """Bin the partitions of one set (``fn(*args, *common)`` per partition)."""
        self._sets[set_key] = self.map(fn, name, per_part, *common)

    def place(self, name):
        """Bundle every binned set into one holder."""
        sets = {k: v for k, v in self._sets.items() if v}
        self._sets = {}
        if sets:
            layout = [(k, len(v)) for k, v in sets.items()]
            self.groups = [_Local(Holder(layout, *(s for v in sets.values() for s in v)))]

    def run(self, ops, name):
        """Run a wave; per op, the small results of the groups having its set."""
        out = [[] for _ in ops]
        for g in self.groups:
            mine = [i for i, op in enumerate(ops) if op.set_key in g.sets]
            for i, small in zip(mine, g.holder.run([ops[i] for i in mine])):
                out[i].append(small)
        return out

    def single_partition(self, set_key) -> bool:
        """Whether the set's rows are one partition held in memory here."""
        if len(self.groups) != 1 or set_key not in self.groups[0].sets:
            return False
        shards = self.groups[0].sets[set_key].shards
        return len(shards) == 1 and not shards[0].buffers.on_disk

    def set_round(self, round_index):
        pass

    def check_memory(self):
        """Nothing to check: this process's memory is the user's."""

    def n_workers(self) -> int:
        return 1

    def close(self):
        """Nothing to release: the holder goes with this executor."""


class _Local:
    """The in-process holder, and its sets (as ``dask._Group`` has them)."""

    def __init__(self, holder):
        self.holder, self.sets = holder, holder.states
