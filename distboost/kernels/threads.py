"""How many threads numba's kernels use in this process: one rule, written once."""

from __future__ import annotations

import numba


def set_numba_threads(n: int) -> None:
    """numba kernels use ``n`` threads from now on (1 at least, and at most the
    pool numba started with, ``NUMBA_NUM_THREADS``). For a Dask worker's own
    process (its ``nthreads``); elsewhere use the ``numba_threads`` context."""
    numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))


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
        self.saved = numba.get_num_threads()
        if self.n:
            set_numba_threads(self.n)

    def __exit__(self, *exc):
        numba.set_num_threads(self.saved)


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
