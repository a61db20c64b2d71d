"""A wave's calls from the driver to the holders, and their answers.

The driver packs a wave's ops once (``holder.pack``) and calls every holder
over connections of the fit's own (``dask_internals.DriverCalls``: Dask's
``actor_execute`` message, or the public ``Actor`` handles). Each holder runs
its part of the wave and the reduction tree (``reduction``) among them; an
error on any holder aborts the attempt on all of them, so that none waits
for a child that will not deliver. What a lost holder means is not decided
here (``dask.DaskExecutor``): calls return their errors.
"""

from __future__ import annotations

import asyncio
import pickle

from . import reduction
from .dask_internals import DriverCalls, serialized
from .holder import pack, unpack
from .lost_scheduler import scheduler_lost
from .watch import POLL

LOOP_CALL_SECONDS = 0.1
"""A wave whose last call took less than this runs on the workers' event loops
(no hand-over to and from a thread: ~0.15 ms less per call); a longer one in
a thread, so that a worker's event loop is never held long."""

LOST_POLL = 0.05
"""Seconds between looks at whether a holder's worker was lost, during a call."""


class Transport:
    """Calls to one fit's holders (``groups``: objects with the holder's
    ``address`` and actor ``future``) on ``client``; stalls go to ``watch``,
    with the scheduler's view of the workers (``workers_info()``)."""

    def __init__(self, client, public: bool, watch, workers_info):
        self.watch, self.workers_info = watch, workers_info
        self._calls = DriverCalls(client, public)

    @property
    def public(self) -> bool:
        """Whether calls go through Dask's public ``Actor`` handles."""
        return self._calls.public

    def close(self):
        self._calls.close()

    def wave(self, groups, ops, packed, wave_number, attempt, inline, what="a wave") -> list:
        """One try at a wave on ``groups`` (``Holder.wave``, the reduction tree
        over them); per group, (direct results, sums or None) or the error
        raised."""
        peers = [reduction.Peer(g.address, g.future.key) for g in groups]
        plans = [reduction.Plan(wave_number, attempt,
                                tuple(k for k, op in enumerate(ops) if op.set_key in g.sets),
                                None if parent < 0 else peers[parent], n_children, inline,
                                self.public)
                 for g, (parent, n_children) in zip(groups, reduction.tree(len(groups)))]

        async def wave(send):
            failed = asyncio.Event()
            calls = [asyncio.ensure_future(
                _watched(send(g, "wave", [packed, pickle.dumps(plan)], {}), g, failed))
                for g, plan in zip(groups, plans)]
            abort = asyncio.ensure_future(self._abort_when(failed, send, groups, wave_number,
                                                           attempt))
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

    def replay(self, groups, op_lists) -> list:
        """``Holder.call`` on every group (its own ops, in its actor thread);
        per group, its smalls or the error raised."""
        async def wave(send):
            calls = [_watched(send(g, "call", [packed_ops(ops)], {}), g, asyncio.Event())
                     for g, ops in zip(groups, op_lists)]
            return await asyncio.gather(*calls, return_exceptions=True)

        return [out if isinstance(out, BaseException) else unpack(out)
                for out in self._calls.run(wave)]

    async def _monitor(self, calls, groups, what):
        """Until every call is answered: say so when none is for a while (``watch``;
        ``StallError`` after ``distboost.stall-timeout``)."""
        while not all(call.done() for call in calls):
            await asyncio.wait(calls, timeout=POLL)
            if self.watch.due() and not all(call.done() for call in calls):
                info = await asyncio.to_thread(self.workers_info)
                waiting = [g.address for g, call in zip(groups, calls) if not call.done()]
                self.watch.check(what, waiting, info)

    async def _abort_when(self, failed, send, groups, wave_number, attempt):
        """Once ``failed`` is set, tell every holder still there to stop waiting."""
        await failed.wait()
        live = [g for g in groups if g.future.status != "error"]
        await asyncio.gather(*(send(g, "abort", [wave_number, attempt], {}) for g in live),
                             return_exceptions=True)


async def _watched(reply, g, failed):
    """The packed result of a holder's call; an error (returned, not raised)
    sets ``failed``. A lost worker, or a lost scheduler, is noticed while
    waiting, not after connection timeouts."""
    reply = asyncio.ensure_future(reply)
    while not reply.done():
        lost = (RuntimeError(f"the worker holding {g.future.key} was lost")
                if g.future.status == "error" else
                ConnectionError("the Dask scheduler was lost")
                if scheduler_lost(g.future.client) else None)
        if lost is not None:
            reply.cancel()
            failed.set()
            return lost
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


def packed_ops(ops):
    """A wave's ops packed once for every holder (``holder.pack``)."""
    header, buffers = pack(ops)  # buffers need Dask's serialization, bytes do not
    return serialized((header, buffers)) if buffers else (header, ())
