"""How many threads numba's kernels use in this process: one rule, written once;
and how its idle threads wait."""

from __future__ import annotations

import os

import numba
from numba.np.ufunc import parallel

from .intrinsics import get_threads, set_threads


def start_threads_waiting_passively() -> None:
    """Start numba's threads (once per process) with libgomp told to put a
    waiting thread to sleep at once (``OMP_WAIT_POLICY=PASSIVE``).

    libgomp's default lets a thread that waits at a barrier spin for about
    300,000 turns first. On a machine whose cores other processes also use,
    the spinning threads take the cores from the threads they wait for, and
    every parallel region waits a time slice or more (89k rows x 20 features,
    30 rounds of depth 6, beside two busy processes on 2 cores: 3.4 s on 2
    threads, 0.7 s on one; passive, 0.4-0.9 s on 2).
    libgomp reads the setting once, when it is loaded, so it is set just for
    the loading and taken away again: the process's environment is left as
    it was. A user's own ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` is kept,
    as is a libgomp some other library loaded before this one; numba's other
    threading layers (``NUMBA_THREADING_LAYER``) do not read it.
    """
    if parallel._is_initialized or {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"} & set(os.environ):
        return
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        parallel._launch_threads()
    finally:
        del os.environ["OMP_WAIT_POLICY"]


@numba.njit(cache=True)
def _threads_now():
    return get_threads()


@numba.njit(cache=True)
def _use_threads(n):
    set_threads(n)


def threads_now() -> int:
    """``numba.get_num_threads()``; once numba's threads are started, read in
    compiled code (0.05 us against 0.7: every round asks a few times)."""
    return _threads_now() if parallel._is_initialized else numba.get_num_threads()


def use_threads(n: int) -> None:
    """``numba.set_num_threads(n)`` for 1 <= n <= ``NUMBA_NUM_THREADS`` (not
    checked); once numba's threads are started, set in compiled code (0.1 us
    against 1)."""
    if parallel._is_initialized:
        _use_threads(n)
    else:
        numba.set_num_threads(n)


def set_numba_threads(n: int) -> None:
    """numba kernels use ``n`` threads from now on (1 at least, and at most the
    pool numba started with, ``NUMBA_NUM_THREADS``). For a Dask worker's own
    process (its ``nthreads``); elsewhere use the ``numba_threads`` context."""
    use_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))


class numba_threads:
    """Context: numba kernels use ``n`` threads (None: numba's default; on Dask
    (``distributed``), 1).

    On Dask this process only finds splits, in kernels of a fraction of a
    millisecond: more threads gain nothing there, while OpenMP's idle threads
    spin after every parallel region, taking CPU from workers that share the
    machine (a LocalCluster: 2-worker W1 rounds 10 % faster with one thread).
    """

    def __init__(self, n, distributed: bool = False):
        self.n = n if n is not None or not distributed else 1

    def __enter__(self):
        self.saved = threads_now()
        if self.n:
            set_numba_threads(self.n)

    def __exit__(self, *exc):
        use_threads(self.saved)


PARALLEL_MIN_ROWS = 1 << 15
"""Rows from which a pass over them (gradients, margins, row partitions) is
shared among threads. Below, one thread does it: such a pass takes tens of
microseconds, less than waking the other threads costs, and on a machine
shared with other processes a woken thread that is not given a core holds
the whole pass at its end."""


def for_rows(n_rows: int):
    """Context: passes over ``n_rows`` rows run on one thread when they are
    fewer than ``PARALLEL_MIN_ROWS``; otherwise the setting stays as it is."""
    return numba_threads(1) if n_rows < PARALLEL_MIN_ROWS else numba_threads(None)
