"""Every use of Dask's private API, each with a fallback to its public API.

distboost runs beside whatever Dask a cluster already runs (see
``pyproject.toml`` for the range tested), so nothing outside this module may
use a private Dask module or attribute (``tests/test_dask_private.py`` reads
the package to make sure). Each private path here is taken only when a check
of the capability it needs succeeds at run time (never a version string), and
each has a public path giving the same result:

===================  ==========================================  ===========================
what                 private path                                public path
===================  ==========================================  ===========================
holders' calls       ``actor_execute`` over comms of the fit's    ``distributed.Actor``
(``DriverCalls``,    own (``distributed.comm.connect``,           handles
``deliver``)         ``distributed.core.send_recv``,
                     ``Worker.rpc``)
buffers in calls     ``distributed.protocol.to_serialize``        the object as it is
calls to a lost      ``ConnectionPool.remove`` of the client's    they fail when Dask's
scheduler            ``rpc`` (``cut_calls``)                      connect timeout ends
X and y from one     dask-expr's ``are_co_aligned``               unknown: X and y are read
frame (``co_aligned``)                                            partition by partition
                                                                  side by side
a partition's files  dask-expr's plan of ``read_parquet``         errors keep their partition
(``parquet_plan``)                                                and row; files unchecked
metadata (``meta``)  ``collection._meta``                         an empty frame of the
                                                                  public ``dtypes``
worker threads       ``Worker.state.nthreads``                    numba's own thread count
worker memory        ``Worker.memory_manager``                    unknown (no limit)
``/distboost`` page  ``distributed.dashboard`` internals          no page (logged); events
                                                                  are still collected
===================  ==========================================  ===========================

``dask.config.set({"distboost.dask-internals": False})`` (or
``DASK_DISTBOOST__DASK_INTERNALS=False`` in the environment) takes every
public path; ``{"distboost.transport": "public"}`` only the holders' public
calls. The tests run both ways and compare the models.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import weakref
from dataclasses import dataclass

import dask

logger = logging.getLogger("distboost")

INTERNALS = "distboost.dask-internals"
"""Dask config key: False takes the public path everywhere."""


def internals_allowed() -> bool:
    """Whether private paths may be taken at all (``distboost.dask-internals``)."""
    value = dask.config.get(INTERNALS, True)
    if isinstance(value, str):
        return value.strip().lower() not in ("false", "0", "no", "off")
    return bool(value)


# ---------------------------------------------------------------- holders' calls
def fast_path_available() -> bool:
    """Whether this Dask has what the fast path sends and calls, as it expects."""
    if not internals_allowed():
        return False
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

    The fast way opens Dask comms of the fit's own to the holders' workers
    (with the client's security settings) and runs an event loop of its own in
    the calling thread, sending Dask's ``actor_execute`` message (what an Actor
    proxy sends) without the proxy's hand-over to the client's event-loop
    thread and back on every call. The public way awaits ``distributed.Actor``
    handles on the client's event loop.

    Parameters
    ----------
    client : distributed.Client
    public : bool
        Take the public way even when the fast one is available.

    Notes
    -----
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
        """Run the coroutine function ``wave(send)`` to its end; its result."""
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
        except Exception as error:  # noqa: BLE001 (answered as the fast path answers errors)
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
        """Close the fit's connections and event loop (``_drain``ed first)."""
        self._drain()
        for comm in self._comms.values():
            comm.abort()
        self._comms.clear()
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    def _drain(self):
        """Cancel the tasks a failed wave left on the fit's loop (its calls, its
        aborts) and run them to their end, so that none is destroyed pending and
        none leaves its connection dangling; not from inside another event loop."""
        left = asyncio.all_tasks(self._loop) if self._loop is not None else ()
        if not left:
            return
        for task in left:
            task.cancel()
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # none in this thread: run ours to the tasks' end
            self._loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))


def cut_calls(client, address: str, reason: str) -> bool:
    """Make ``client``'s calls that wait to connect to ``address`` fail now
    (with ``CommClosedError(reason)``) instead of after
    ``distributed.comm.timeouts.connect``: Dask's ``ConnectionPool.remove``, on
    the client's event loop. False where this Dask's client has no such pool;
    the calls then fail when their wait ends."""
    if not internals_allowed():
        return False
    remove = getattr(getattr(client, "rpc", None), "remove", None)
    loop = getattr(client, "loop", None)
    if remove is None or loop is None:
        return False
    takes_reason = "reason" in inspect.signature(remove).parameters

    def cut():
        remove(address, reason=reason) if takes_reason else remove(address)

    try:
        loop.add_callback(cut)
    except Exception:  # a client closing as we look
        logger.debug("distboost: could not cut the calls to %s", address, exc_info=True)
        return False
    return True


def serialized(obj):
    """``obj`` marked for Dask's serialization (out-of-band buffers kept as they are);
    ``obj`` itself where that marker is unavailable (it is then pickled)."""
    if not internals_allowed():
        return obj
    try:
        from distributed.protocol import to_serialize
    except ImportError:
        return obj
    return to_serialize(obj)


async def deliver(peer, public: bool, actor_class, *args) -> None:
    """On a worker: call ``deliver(*args)`` on the ``actor_class`` actor at
    ``peer`` (a ``reduction.Peer``), the fast way unless ``public``."""
    if public:
        from distributed import Actor

        await Actor(actor_class, peer.address, peer.key).deliver(*args)
        return
    from distributed import get_worker

    answer = await get_worker().rpc(peer.address).actor_execute(
        actor=peer.key, function="deliver", args=[serialized(a) for a in args], kwargs={})
    if answer["status"] != "OK":
        raise answer["exception"]


# ---------------------------------------------------------------- collections
def co_aligned(*collections) -> bool | None:
    """Whether Dask collections come from the same rows (e.g. one frame's
    columns): True or False when dask-expr can tell, None when it cannot."""
    if not internals_allowed():
        return None
    try:
        from dask.dataframe.dask_expr._expr import are_co_aligned
    except ImportError:
        return None
    exprs = [getattr(c, "expr", None) for c in collections]
    if any(e is None for e in exprs):
        return None
    try:
        return bool(are_co_aligned(*exprs))
    except Exception:
        logger.debug("distboost: dask-expr's are_co_aligned failed", exc_info=True)
        return None


def meta(collection):
    """The empty pandas object a Dask DataFrame or Series stands for (its dtypes,
    categories included)."""
    if internals_allowed():
        found = getattr(collection, "_meta", None)
        if found is not None:
            return found
    import dask.dataframe as dd
    import pandas as pd

    if isinstance(collection, dd.DataFrame):
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in collection.dtypes.items()},
                            columns=collection.columns)
    return pd.Series(dtype=collection.dtype, name=collection.name)


def parquet_pieces(collection, partition: int, optimize: bool = True):
    """Per piece partition ``partition`` reads: (filesystem, path, row groups
    or None); None where the plan cannot be read (``parquet_plan``)."""
    plan = parquet_plan(collection, optimize)
    return None if plan is None else plan.pieces[partition]


@dataclass(frozen=True)
class ParquetPlan:
    """Where each partition of a collection comes from in its Parquet files.

    Parameters
    ----------
    pieces : list, per partition, of lists of (filesystem, path, row groups or None)
    columns : list of str, the columns read from every file
    """

    pieces: list
    columns: list


def parquet_plan(collection, optimize: bool = True) -> ParquetPlan | None:
    """The files and row groups every partition of ``collection`` reads, from
    dask-expr's plan of ``read_parquet``; None where it cannot be read (another
    reader, aggregated files, partitions moved or merged after the read, a
    dask-expr of another shape, or internals not allowed).

    ``optimize=False`` follows the collection's partitions as given
    (``to_delayed(optimize_graph=False)`` sees them so).
    """
    if not internals_allowed():
        return None
    try:
        return _plan(collection, optimize)
    except Exception:
        logger.debug("distboost: could not trace the partitions to their files", exc_info=True)
        return None


def _plan(collection, optimize: bool) -> ParquetPlan | None:
    from dask.dataframe.dask_expr._expr import Blockwise
    from dask.dataframe.dask_expr.io.io import FusedIO

    expr = (collection.optimize(fuse=False) if optimize else collection).expr
    nodes = list(expr.walk())
    if not all(isinstance(e, Blockwise) for e in nodes):
        return None  # a partition there is not made from one bucket of the read's partitions
    fused = [e for e in nodes if isinstance(e, FusedIO)]
    reads = [e for e in nodes if type(e).__name__.startswith("ReadParquet")]
    if len(fused) == 1:
        read = fused[0].operand("_expr")
        buckets = [list(b) for b in fused[0]._fusion_buckets]
    elif not fused and len(reads) == 1:
        read = reads[0]
        buckets = [[i] for i in read._partitions]
    else:
        return None
    if len(buckets) != expr.npartitions:
        return None
    fs, parts = read._dataset_info["fs"], read._plan["parts"]
    pieces = [[parts[i]["piece"] for i in bucket] for bucket in buckets]
    if not all(isinstance(p, tuple) for bucket in pieces for p in bucket):
        return None  # aggregated files
    return ParquetPlan([[(fs, p[0], p[1]) for p in bucket] for bucket in pieces],
                       [str(c) for c in read.columns])


# ---------------------------------------------------------------- workers
def worker_nthreads() -> int | None:
    """Threads of the Dask worker running this task (None: not on a worker, or
    unknown)."""
    if not internals_allowed():
        return None
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return None
    n = getattr(getattr(worker, "state", None), "nthreads", None)
    return n if isinstance(n, int) and n > 0 else None


def worker_memory_limit(worker=None) -> int | None:
    """A Dask worker's ``memory_limit`` in bytes (this task's worker by
    default); None outside a worker, unlimited, or unknown."""
    if not internals_allowed():
        return None
    if worker is None:
        try:
            from distributed import get_worker

            worker = get_worker()
        except (ImportError, ValueError):
            return None
    limit = getattr(getattr(worker, "memory_manager", None), "memory_limit", None)
    return int(limit) if limit else None


def worker_pause_fraction(worker) -> float | None:
    """The fraction of ``memory_limit`` at which Dask pauses ``worker`` (from
    the worker when it says, else Dask's config; None: never)."""
    fraction = None
    if internals_allowed():
        manager = getattr(worker, "memory_manager", None)
        fraction = getattr(manager, "memory_pause_fraction", None)
        if manager is not None:
            return fraction or None
    fraction = dask.config.get("distributed.worker.memory.pause", None)
    return float(fraction) if fraction else None


# ---------------------------------------------------------------- dashboard
def register_dashboard_page(route: str, make_doc) -> bool:
    """Add ``make_doc(scheduler, extra, doc)`` as the page ``route`` to the
    dashboard of every scheduler started from now on, in this process.

    Returns False, with a log line, when this Dask's dashboard has no table of
    pages where it expects one (the page is then not served; nothing else
    changes)."""
    applications = None
    if internals_allowed():
        try:
            from distributed.dashboard import scheduler as dashboard

            applications = getattr(dashboard, "applications", None)
        except ImportError:
            applications = None
    if not isinstance(applications, dict):
        logger.warning("distboost: this Dask's dashboard has no page table where distboost "
                    "expects one (distributed.dashboard.scheduler.applications); the %s "
                    "page is not served (training and its events are unaffected)", route)
        return False
    applications.setdefault(route, make_doc)
    return True


def link_dashboard_page(scheduler, route: str) -> bool:
    """Name ``route`` in the menu of ``scheduler``'s dashboard; False where
    this Dask keeps its menu elsewhere."""
    if not internals_allowed():
        return False
    try:
        from distributed.dashboard.scheduler import template_variables

        pages = template_variables(scheduler)["pages"]
    except Exception:
        logger.debug("distboost: no dashboard menu to link %s from", route, exc_info=True)
        return False
    if route.strip("/") not in pages:
        pages.append(route.strip("/"))
    return True


def dress_dashboard_doc(doc, extra: dict, component, period_ms: int) -> None:
    """Give a Bokeh ``doc`` the dashboard's look (template, theme) where it can,
    and call ``component.update()`` every ``period_ms`` milliseconds while the
    document lives (Bokeh's public ``add_periodic_callback``, holding the
    component weakly from the callback, as Dask's own pages do)."""
    if internals_allowed():
        try:
            from distributed.dashboard.components.scheduler import BOKEH_THEME, env

            doc.template = env.get_template("simple.html")
            doc.theme = BOKEH_THEME
        except Exception:
            logger.debug("distboost: a plain Bokeh page (no dashboard template)",
                         exc_info=True)
    doc.template_variables.update(extra)
    ref = weakref.ref(component)

    def update():
        live = ref()
        if live is not None:
            live.update()

    doc.add_periodic_callback(update, period_ms)
    doc.distboost_component = component  # lives as long as the document
