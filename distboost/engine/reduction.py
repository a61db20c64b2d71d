"""Wave results summed among the holders: a reduction tree with the driver at its root.

Histograms add up exactly (fixed-point integers), so the holders can add them
among themselves instead of each sending its own to the driver (design.md,
"Scale-out"). The holders form a heap of fan-in ``FAN_IN`` under the driver:
holders ``0 .. F-1`` answer the driver, holder ``i``'s children are
``F(i+1) .. F(i+1)+F-1``. Each holder adds what its children deliver to its own
results and delivers the sum to its parent, so the driver receives ``F`` sums
per wave whatever the number of workers, in ``log_F(W)`` steps.

An op's results are summed when the op says how (``Op.combine``); the others
go to the driver from every holder, as before.

A wave lost with a worker is tried again with the same ``wave`` number: the
holders that had finished keep their own (not yet summed) results of that wave
(``Holder``'s cache), so a state-changing op never runs twice on a holder, and
only the rebuilt holders compute.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

FAN_IN = 2
"""Children per holder, and holders answering the driver: what the driver
receives per wave is FAN_IN sums, whatever the number of workers."""


@dataclass(frozen=True)
class Peer:
    """Where a holder is: its worker's address and its actor's key."""

    address: str
    key: object


@dataclass(frozen=True)
class Plan:
    """One holder's part in one attempt at a wave.

    Parameters
    ----------
    wave : int
        The executor's wave number; a retried wave keeps it.
    attempt : int
        Which try at the wave this is (an abort names it).
    mine : tuple of int
        Positions in the wave's op list of the ops this holder runs.
    parent : Peer or None
        Where the holder delivers its sums; None: it answers the driver with them.
    n_children : int
        Deliveries the holder waits for before it sums.
    inline : bool
        Run the ops on the worker's event loop (short waves) rather than in a thread.
    public : bool
        Deliver through Dask's public Actor interface (``engine.dask_internals``).
    """

    wave: int
    attempt: int
    mine: tuple
    parent: Peer | None
    n_children: int
    inline: bool = False
    public: bool = False


def tree(n_holders: int, fan_in: int = FAN_IN) -> list[tuple[int, int]]:
    """Per holder, (parent position or -1 for the driver, number of children)."""
    return [(i // fan_in - 1 if i >= fan_in else -1,
             max(0, min(n_holders, fan_in * (i + 2)) - fan_in * (i + 1)))
            for i in range(n_holders)]


class Failed:
    """What a holder delivers instead of sums when it cannot compute them (its
    ops raised, a child failed, the attempt was aborted): its parent stops
    waiting and passes it up."""

    def __init__(self, reason: str):
        self.reason = reason

    def __repr__(self):
        return f"Failed({self.reason!r})"


class Mailbox:
    """Deliveries from a holder's children, per (wave, attempt).

    Lives on the worker's event loop: ``put`` and ``abort`` are called by
    other holders' and the driver's messages, ``collect`` by the holder's wave.
    """

    def __init__(self):
        self._boxes: dict[tuple[int, int], tuple[list, asyncio.Event]] = {}

    def _box(self, wave, attempt):
        for old in [k for k in self._boxes if k[0] < wave]:  # earlier waves are over
            del self._boxes[old]
        if (wave, attempt) not in self._boxes:
            self._boxes[wave, attempt] = ([], asyncio.Event())
        return self._boxes[wave, attempt]

    def put(self, wave: int, attempt: int, payload) -> None:
        parts, event = self._box(wave, attempt)
        parts.append(payload)
        event.set()

    def abort(self, wave: int, attempt: int) -> None:
        """Stop every wait for this attempt (a holder of the wave was lost)."""
        self.put(wave, attempt, Failed("aborted by the driver"))

    async def collect(self, wave: int, attempt: int, n: int, timeout: float) -> list:
        """The ``n`` deliveries of this attempt, or fewer when one is ``Failed``."""
        parts, event = self._box(wave, attempt)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(parts) < n and not any(isinstance(p, Failed) for p in parts):
            event.clear()
            remaining = deadline - loop.time()
            if remaining <= 0:
                return parts + [Failed(f"no delivery from a child holder in {timeout:.0f} s")]
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except asyncio.TimeoutError:
                pass
        del self._boxes[wave, attempt]
        return parts


def combine_all(combines: dict, reports: list[dict], buffers) -> dict:
    """Per op position, its results in ``reports`` (dicts position -> result)
    combined by the op's ``combine(results, buffers)``; a lone result is kept."""
    out = {}
    for k, combine in combines.items():
        parts = [r[k] for r in reports if k in r]
        if parts:
            out[k] = parts[0] if len(parts) == 1 else combine(parts, buffers)
    return out
