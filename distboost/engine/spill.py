"""Where a fit keeps each worker's binned rows: in memory or in files on the
worker's local disk (``out_of_core``); the policy and its parameters. The
files themselves are ``buffers.DiskBuffers``; blocks of rows on disk are
``shard.disk_blocks``.
"""

from __future__ import annotations

from dataclasses import dataclass

BLOCK_BYTES = 32 * 2**20
"""Target size of one block's working set (codes and per-row state)."""

STATE_BYTES_PER_ROW = 16 + 52
"""Bytes per row besides the codes while training one output (target,
weight, statistics, positions, partition indices, two margins)."""


AUTO_FRACTION = 0.4
"""``out_of_core="auto"`` keeps a worker's partitions on disk when the memory
training them in memory would take exceeds this fraction of the worker's
``memory_limit`` (the rest is the worker's baseline, one partition being read
and binned, histograms, and Dask's own margin before it pauses a worker at
80 %)..."""

AUTO_TARGET = 0.6
"""... or when the worker's memory now plus its share would exceed this fraction
of ``memory_limit`` (Dask's own ``distributed.worker.memory.target``)."""


OUT_OF_CORE_PARAMETER = f"""\
    out_of_core : "auto" or bool, default "auto"
        Where each worker keeps its binned partitions while training: False in
        memory, True in files under the worker's local directory (read block
        by block; worker memory stays bounded whatever the data size), "auto"
        on disk for workers whose share would take more than {AUTO_FRACTION:.0%} of their
        ``memory_limit``, or push them past {AUTO_TARGET:.0%} of it. The model is the same
        either way.
"""
"""The estimators' docstring entry for ``out_of_core`` (the policy is this module's)."""


def decide_on_disk(share_bytes: float, limit: float | None, rss: float) -> bool:
    """``out_of_core="auto"`` on one worker: keep its rows on disk?

    Parameters
    ----------
    share_bytes : float, the worker's share of the rows as training keeps them in memory
    limit : float or None, the worker's ``memory_limit`` (None or 0: no limit)
    rss : float, the worker process's resident memory now
    """
    if not limit:
        return False
    return share_bytes > AUTO_FRACTION * limit or rss + share_bytes > AUTO_TARGET * limit


def in_memory_bytes_per_row(n_features: int, n_outputs: int = 1) -> int:
    """Bytes per row of a shard trained in memory (codes in two layouts and state)."""
    return 2 * n_features + STATE_BYTES_PER_ROW * max(1, n_outputs)


def block_rows(n_features: int, n_outputs: int = 1, block_bytes: int = BLOCK_BYTES) -> int:
    """Rows per block so that a block's working set is about ``block_bytes``."""
    rows = block_bytes // in_memory_bytes_per_row(n_features, n_outputs)
    return int(max(1024, rows - rows % 1024))


@dataclass(frozen=True)
class Placement:
    """Where a fit's binned partitions are kept: in memory or on local disk.

    Parameters
    ----------
    mode : "auto", True or False
        The estimator's ``out_of_core``: True puts every partition on disk,
        False keeps them in memory, "auto" decides on each worker.
    share_bytes : float
        Memory a worker's share of the data would take in memory (the
        driver's estimate: rows x bytes per row / workers).
    n_outputs : int
        Trees per round (sizes the per-row state).
    block_bytes : int
        Target working set of one block (``BLOCK_BYTES``).
    """

    mode: object = "auto"
    share_bytes: float = 0.0
    n_outputs: int = 1
    block_bytes: int = BLOCK_BYTES

    def on_disk(self) -> bool:
        """Decide here (on the worker binning a partition)."""
        if self.mode != "auto":
            return bool(self.mode)
        limit = worker_memory_limit()
        return limit is not None and decide_on_disk(self.share_bytes, limit, _process_rss())

    def rows_per_block(self, n_features: int) -> int:
        return block_rows(n_features, self.n_outputs, self.block_bytes)


def worker_memory_limit() -> int | None:
    """This Dask worker's ``memory_limit`` in bytes (None outside a worker or unlimited)."""
    from .dask_internals import worker_memory_limit as limit

    return limit()


def _process_rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss
