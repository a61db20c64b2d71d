"""Training progress as Dask events, one per round, on the ``distboost`` topic.

A fit on a Dask cluster logs its progress on the scheduler
(``Client.log_event``), where any client reads it
(``client.get_events("distboost")``), and so do the dashboard's ``/events``
page and ``distboost.dashboard``. Training in process has no scheduler and
logs nothing. Every event is a dict of plain numbers and strings with
``fit`` (an id shared by one fit's events) and ``kind``:

``fit-start``
    ``estimator`` (class name), ``params`` (its scalar parameters),
    ``first_round`` (rounds the model had before: ``init_model``,
    ``warm_start``), ``n_rounds`` (the round count when all rounds have run),
    ``metric`` (the metric's name, or None), ``eval_sets`` (their names) and
    ``placement``: per worker, ``memory_rows`` and ``disk_rows`` (training
    rows kept in memory and on local disk, see ``out_of_core``).
``round``
    ``round`` (0-based, numbered like ``evals_result_``) and ``n_rounds``;
    the round's own metrics by evaluation set and name, the very values
    ``evals_result_`` keeps, e.g. ``"training": {"logloss": 0.41},
    "validation_0": {"logloss": 0.44}``; ``best_round`` (lowest metric of the
    last validation set so far, or None); ``n_trees`` and ``n_leaves`` of the
    round; ``elapsed`` (seconds since the fit started), ``round_time``
    (seconds since the previous event) and ``timings``: the round's share of
    the estimator's ``fit_timings_`` (``kernels``: the slowest worker's own
    compute; ``round_start`` + ``histograms``: those waves as the driver
    waited for them, so minus ``kernels`` they are scheduling and transfer;
    ``split_finding`` and ``line_search``: driver work). Learners add their
    own: AdaBoost ``estimator_weight`` (alpha) with the metric
    ``weighted_error``; forests ``trees_grown`` (a forest's "round" is the
    index of the last tree of a batch grown together).
``fit-end``
    ``n_rounds`` (the rounds the model keeps), ``best_round``, ``elapsed``,
    ``timings`` (the whole fit) and learner extras (forests: ``oob_score``).
``stall``
    No task finished and no wave answered for a while (``engine.watch``):
    ``what`` the fit waits for, ``idle`` seconds, the ``workers`` it waits on
    and a ``message`` naming their state and what to do. It may come before
    ``fit-start`` (while the partitions are read).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from ..metrics import EarlyStopping

TOPIC = "distboost"
_WHOLE_FIT = ("prepare", "fit")  # timings that are not per round


def eval_set_names(n: int) -> list[str]:
    """``["validation_0", ..., "validation_{n-1}"]``: the names of ``n`` evaluation
    sets, as ``evals_result_``, the round metrics and the events give them."""
    return [f"validation_{k}" for k in range(n)]


def scalar_params(params: dict) -> dict[str, Any]:
    """The parameters (``get_params(deep=False)``) that are plain numbers,
    strings, booleans or None."""
    return {k: v for k, v in params.items() if v is None or isinstance(v, (bool, int, float, str))}


class FitEvents:
    """The events of one fit (a no-op without a Dask client).

    The estimator says what it is; training says when the fit starts
    (``start``: after the rows' initial state, with what it will run),
    each round (``round``) and the end (``end``).

    Parameters
    ----------
    engine : Engine
        The fit's engine: its executor's client (if any) receives the events,
        its ``timings`` are reported per round.
    estimator : str
        The estimator's class name.
    params : dict
        Its scalar parameters (``scalar_params``).
    """

    def __init__(self, engine, estimator: str, params: dict):
        self.client = getattr(engine.ex, "client", None)
        self.outbox = None if self.client is None else Outbox(self.client)
        self.timings = engine.timings
        self.fit = getattr(engine.ex, "fit_id", None) or uuid.uuid4().hex[:12]
        self.estimator, self.params = estimator, params
        self.placement = list(getattr(engine, "placement", []))
        self.metric, self.n_rounds = None, 0

    def start(self, n_rounds: int, first_round: int = 0, metric: str | None = None,
              eval_sets: int = 0, higher_is_better: bool = False,
              history: dict | None = None) -> FitEvents:
        """Post the start of the fit (and return the events).

        Parameters
        ----------
        n_rounds : int
            Rounds this fit runs at most (after ``first_round``).
        first_round : int
            Rounds the model already had.
        metric : str, optional
            Name of the per-round metric that picks the best round.
        eval_sets : int
            Number of validation sets.
        higher_is_better : bool
            Whether the best round has the highest ``metric`` (AUC) or the lowest.
        history : dict, optional
            The metrics of the ``first_round`` rounds before (a continued fit's
            carried ``evals_result_``): the best round is the whole run's.
        """
        self.metric = metric
        self.n_rounds = first_round + n_rounds
        self._rule = EarlyStopping(metric, higher_is_better).replay(history or {}, first_round)
        self._started = self._last = time.perf_counter()
        self._timings_before = dict(self.timings)
        self._post("fit-start", estimator=self.estimator, params=self.params,
                   first_round=first_round, n_rounds=self.n_rounds, metric=metric,
                   eval_sets=eval_set_names(eval_sets), placement=self.placement)
        return self

    def round(self, round_index: int, metrics: dict, trees=(), **extra) -> None:
        """Post round ``round_index`` with its own ``metrics`` and ``trees``."""
        if self.client is None:
            return
        self._rule.update(round_index, metrics)
        now = time.perf_counter()
        timings = {k: round(v - self._timings_before.get(k, 0.0), 6)
                   for k, v in self.timings.items() if k not in _WHOLE_FIT}
        self._timings_before = dict(self.timings)
        leaves = sum(int(t.nodes["is_leaf"].sum()) for t in trees)
        self._post("round", round=int(round_index), n_rounds=self.n_rounds, **metrics,
                   best_round=self.best_round, n_trees=len(trees), n_leaves=leaves,
                   elapsed=round(now - self._started, 6), round_time=round(now - self._last, 6),
                   timings={k: v for k, v in timings.items() if v}, **extra)
        self._last = now

    def end(self, n_rounds: int, **extra) -> None:
        """Post the end of the fit: the rounds the model keeps; return once the
        scheduler has every event of the fit."""
        self._post("fit-end", n_rounds=int(n_rounds), best_round=self.best_round,
                   elapsed=round(time.perf_counter() - self._started, 6),
                   timings={k: round(v, 6) for k, v in self.timings.items()}, **extra)
        if self.outbox is not None:
            self.outbox.flush()

    @property
    def best_round(self) -> int | None:
        """The best round so far (``metrics.EarlyStopping``'s rule)."""
        return self._rule.best_round

    def _post(self, kind: str, **fields) -> None:
        if self.outbox is not None:
            self.outbox.post({"fit": self.fit, "kind": kind, **fields})


class Outbox:
    """Events logged on ``client``'s scheduler in the order posted, without
    the poster waiting for each (``Client.log_event`` is a round trip to the
    scheduler: on many short rounds, a few per cent of the fit).

    Each event is sent on the client's event loop once the one before it was
    taken. A send that failed raises at the next ``post`` or at ``flush``.
    """

    def __init__(self, client, topic: str = TOPIC):
        self.client, self.topic, self._last = client, topic, None

    def post(self, msg: dict) -> None:
        self._raise_failed()
        self._last = asyncio.run_coroutine_threadsafe(self._send(self._last, msg),
                                                      self.client.loop.asyncio_loop)

    def flush(self) -> None:
        """Wait until the scheduler has taken every event posted."""
        if self._last is not None:
            self._last.result()

    async def _send(self, previous, msg):
        if previous is not None:
            await asyncio.wrap_future(previous)
        await self.client.scheduler.log_event(topic=self.topic, msg=msg)

    def _raise_failed(self):
        if self._last is not None and self._last.done() and self._last.exception() is not None:
            raise self._last.exception()
