"""How calls reach the holders: the one module that uses Dask's private API.

A wave is one call per holder (a Dask Actor) and, within a wave, one delivery
from each holder to its parent in the reduction tree (``reduction``). Both go
one of two ways:

* **fast**: the driver opens Dask comms of its own to the holders' workers
  (with the client's security settings) and runs an event loop of its own in
  the calling thread; holders deliver through their worker's connection pool.
  Both send Dask's ``actor_execute`` message, which is what an Actor proxy
  sends, without the proxy's hand-over to the client's event-loop thread and
  back on every call. This uses ``distributed.comm.connect``,
  ``distributed.core.send_recv``, ``Worker.rpc``, the ``actor_execute``
  handler and its ``separate_thread`` keyword: private, and free to change.
* **public**: the same calls through ``distributed.Actor`` handles (what
  ``client.submit(..., actor=True)`` gives), awaited on the client's event
  loop on the driver and on the worker's on a worker.

``fast_path_available()`` checks the capabilities the fast path needs (not a
version string); ``DriverCalls`` falls back to the public path by itself
when they are missing, or when asked (``public=True``, which the tests use to
run both paths).
"""

from __future__ import annotations

import asyncio
import inspect


def fast_path_available() -> bool:
    """Whether this Dask has what the fast path sends and calls, as it expects."""
    try:
        import distributed.core
        from distributed import Worker
        from distributed.comm import connect  # noqa: F401
        from distributed.core import send_recv
    except ImportError:
        return False
    handler = getattr(Worker, "actor_execute", None)
    if handler is None or not inspect.iscoroutinefunction(handler):
        return False
    return ({"actor", "function", "args", "kwargs"} <= set(inspect.signature(handler).parameters)
            and "comm" in inspect.signature(send_recv).parameters
            and hasattr(distributed.core, "ConnectionPool"))


class DriverCalls:
    """Calls from the driver to the holders, the fast way or the public way.

    ``run(wave)`` runs ``wave(send)`` to its end, where
    ``async send(group, function, args, kwargs) -> {"status", "result" | "exception"}``
    calls ``function`` on the group's holder.
    """

    def __init__(self, client, public: bool = False):
        self.client = client
        self.public = public or not fast_path_available()
        self._loop = None
        self._comms: dict[str, object] = {}

    def run(self, wave):
        if self.public:
            return self.client.sync(wave, self._actor)
        if self.client.direct_to_workers is False:
            return self.client.sync(wave, self._relayed)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop in this thread: run one of the fit's own
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
            return self._loop.run_until_complete(wave(self._send))
        return self.client.sync(wave, self._pooled)  # a notebook's loop: the client's

    async def _actor(self, g, function, args, kwargs):
        """Through the holder's public Actor handle (on the client's event loop)."""
        from distributed.protocol import Serialize

        args = [a.data if isinstance(a, Serialize) else a for a in args]  # the handle wraps them
        kwargs = {k: v for k, v in kwargs.items() if k != "separate_thread"}
        try:
            return {"status": "OK", "result": await getattr(g.actor, function)(*args, **kwargs)}
        except Exception as error:  # noqa: BLE001 - returned, as the fast path answers it
            return {"status": "error", "exception": error}

    def _pooled(self, g, function, args, kwargs):
        """Through the client's connection pool (what an Actor proxy does)."""
        return self.client.rpc(g.address).actor_execute(
            actor=g.future.key, function=function, args=args, kwargs=kwargs)

    def _relayed(self, g, function, args, kwargs):
        """Through the scheduler (``direct_to_workers=False``)."""
        from distributed.actor import ProxyRPC

        return ProxyRPC(self.client.scheduler, g.address).actor_execute(
            actor=g.future.key, function=function, args=args, kwargs=kwargs)

    async def _send(self, g, function, args, kwargs):
        from distributed.comm import connect
        from distributed.core import send_recv

        comm = self._comms.pop(g.address, None)
        if comm is None or comm.closed():
            comm = await connect(g.address, **self.client.connection_args)
        try:
            answer = await send_recv(comm, op="actor_execute", actor=g.future.key,
                                     function=function, args=args, kwargs=kwargs)
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


def serialized(obj):
    """``obj`` marked for Dask's serialization (out-of-band buffers kept as they are)."""
    from distributed.protocol import to_serialize

    return to_serialize(obj)


async def deliver(peer, public: bool, actor_class, *args) -> None:
    """On a worker: call ``deliver(*args)`` on the ``actor_class`` actor at
    ``peer`` (a ``reduction.Peer``)."""
    if public:
        from distributed import Actor

        await Actor(actor_class, peer.address, peer.key).deliver(*args)
        return
    from distributed import get_worker

    answer = await get_worker().rpc(peer.address).actor_execute(
        actor=peer.key, function="deliver", args=[serialized(a) for a in args], kwargs={})
    if answer["status"] != "OK":
        raise answer["exception"]
