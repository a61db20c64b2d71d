"""Per-row arrays in files on a worker's local disk (out-of-core training).

A partition kept on disk is cut into blocks of rows; each block is a
``Shard`` whose binned codes, target, weights and per-row training state
(statistics, node partitions, margins: everything its ``Buffers`` lend) are
files mapped into memory. The kernels read them as ordinary arrays. After
each block's work its pages are handed back (``madvise(MADV_DONTNEED)``):
they stay in the operating system's page cache, not in the worker's
resident memory, which Dask's memory monitor watches. A worker's memory is
then its baseline plus one block's working set, whatever the number of rows
it holds.

The files are unlinked as soon as they are mapped: the space lives as long
as the mapping, and nothing is left on disk when the process ends, however
it ends.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from dataclasses import dataclass

import numpy as np

from ._partition import Buffers, Shard

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
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return None
    return worker.memory_manager.memory_limit or None


def _process_rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _mapped(directory: str, shape, dtype):
    """A new array of ``shape`` in a file under ``directory`` (unlinked), and its map."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if nbytes == 0:
        return np.empty(shape, dtype), None
    fd, path = tempfile.mkstemp(prefix="distboost-", suffix=".bin", dir=directory)
    try:
        os.ftruncate(fd, nbytes)
        mm = mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    finally:
        os.close(fd)
        os.unlink(path)
    return np.ndarray(shape, dtype, buffer=mm), mm


class DiskBuffers(Buffers):
    """``Buffers`` whose arrays are mapped files under ``directory``.

    ``get`` lends an array as the in-memory ``Buffers`` does; ``keep`` moves a
    learner's freshly computed per-row array into a file; ``release`` hands
    every mapped page back to the operating system.
    """

    on_disk = True

    def __init__(self, directory: str):
        super().__init__()
        self.directory = directory
        self._maps = {}

    def get(self, name: str, shape, dtype) -> np.ndarray:
        shape, dtype = tuple(shape), np.dtype(dtype)
        array = self._arrays.get(name)
        if array is None or array.shape != shape or array.dtype != dtype:
            array, self._maps[name] = _mapped(self.directory, shape, dtype)
            self._arrays[name] = array
        return array

    def keep(self, name: str, value):
        """``value`` (an array or a tuple of arrays) as arrays in files."""
        if isinstance(value, tuple):
            return tuple(self.keep(f"{name}-{i}", v) for i, v in enumerate(value))
        if not isinstance(value, np.ndarray) or value.ndim == 0:
            return value
        if any(value is a for a in self._arrays.values()):
            return value
        out = self.get(name, value.shape, value.dtype)
        np.copyto(out, value)
        return out

    def release(self) -> None:
        """Drop the mapped pages from this process's resident memory.

        For shared file mappings the data stay in the page cache (written
        back to the file when dirty); the next access maps them again.
        """
        for mm in self._maps.values():
            if mm is not None:
                mm.madvise(mmap.MADV_DONTNEED)

    def __reduce__(self):
        return Buffers, ()


def disk_blocks(matrix_of, n_rows: int, y: np.ndarray, w: np.ndarray, mapper, first_row: int,
                partition: int, directory: str, rows_per_block: int) -> list[Shard]:
    """Bin a partition block by block into shards kept on disk.

    Parameters
    ----------
    matrix_of : callable (start, stop) -> float matrix of those rows
    n_rows : int
    y, w : ndarray of shape (n_rows,), encoded target and weights
    mapper : BinMapper
    first_row : int, the partition's first global row id
    partition : int
    directory : str, where the files go (a worker's local directory)
    rows_per_block : int

    Returns
    -------
    list of Shard, one per block, each with its own ``DiskBuffers``
    """
    blocks = []
    for start in range(0, n_rows, rows_per_block):
        stop = min(start + rows_per_block, n_rows)
        buffers = DiskBuffers(directory)
        matrix = matrix_of(start, stop)
        codes = mapper.transform(matrix, out=buffers.get("codes", matrix.shape, np.uint8))
        block_y = buffers.keep("y", np.ascontiguousarray(y[start:stop], np.float64))
        block_w = buffers.keep("w", np.ascontiguousarray(w[start:stop], np.float64))
        blocks.append(Shard(codes, block_y, block_w, first_row + start, partition, buffers))
        buffers.release()
    return blocks


def portable(shard: Shard):
    """How a block kept on disk pickles (``Shard.__reduce__``): by value, and
    back into files where it is unpickled (e.g. on another worker, when Dask
    moves it), so that neither side holds more than the block in memory."""
    arrays = (shard.X_binned.copy(), shard.y.copy(), shard.w.copy())
    shard.release()
    return _on_disk, (*arrays, shard.first_row, shard.index)


def _on_disk(X_binned, y, w, first_row, index) -> Shard:
    buffers = DiskBuffers(local_directory())
    shard = Shard(buffers.keep("codes", X_binned), buffers.keep("y", y), buffers.keep("w", w),
                  first_row, index, buffers)
    buffers.release()
    return shard


def local_directory() -> str:
    """The Dask worker's local directory, or the system's temporary one."""
    try:
        from distributed import get_worker

        return get_worker().local_directory
    except (ImportError, ValueError):
        return tempfile.gettempdir()
