"""Memory a shard's passes reuse (``Buffers``), in this process or in files
on a worker's local disk (``DiskBuffers``, out-of-core training).

A partition kept on disk is cut into blocks of rows; each block is a
``Shard`` whose binned codes, target, weights and per-row training state
(statistics, node partitions, margins: everything its ``Buffers`` lend) are
files mapped into memory. The kernels read them as ordinary arrays. After
each block's work its pages are handed back (``madvise(MADV_DONTNEED)``):
they stay in the operating system's page cache, not in the worker's
resident memory, which Dask's memory monitor watches. A worker's memory is
then its baseline plus one block's working set, whatever the number of rows
it holds.

Each file gets its space before it is mapped (``disk.allocate``), so a full
disk is a ``disk.DiskSpaceError`` naming the directory, never a SIGBUS when a
page finds no block to land on. The files are unlinked as soon as they are
mapped: the space lives as long as the mapping, and nothing is left on disk
when the process ends, however it ends.
"""

from __future__ import annotations

import mmap
import os
import tempfile

import numpy as np

from .disk import allocate


class Buffers:
    """Arrays a shard's passes reuse from round to round.

    Writing into freshly allocated memory costs more than the arithmetic of
    a pass (the operating system supplies and zeroes every new page), so the
    per-row statistics and the row partitions of each round reuse the arrays
    of the round before. Nothing is kept when a shard is pickled.
    """

    on_disk = False

    def __init__(self):
        self._arrays = {}
        self._zero = {}  # per name: (n,) bool, rows along the first axis known all zeros

    def get(self, name: str, shape, dtype) -> np.ndarray:
        """An array of this shape and dtype (contents undefined), reused when possible."""
        shape, dtype = tuple(shape), np.dtype(dtype)
        array = self._arrays.get(name)
        if array is None or array.shape != shape or array.dtype != dtype:
            array = self._arrays[name] = np.empty(shape, dtype)
        return array

    def zeros(self, name: str, shape, dtype) -> np.ndarray:
        """A zeroed array of this shape and dtype, in memory reused from call to call.

        The memory grows along the first axis as needed and the result is a
        view of it, valid until the next call with the same ``name``.
        """
        zero = self._zero.pop(name, None)
        if not self._fits(name, shape, dtype):
            array = self._arrays[name] = np.zeros(shape, dtype)
            return array
        view = self.room(name, shape, dtype)
        if zero is None:
            view.fill(0)
            return view
        for i in np.flatnonzero(~zero[:len(view)]):
            view[i].fill(0)
        zero[:len(view)] = False  # the caller writes them
        self._zero[name] = zero
        return view

    def mark_zero(self, name: str, n: int) -> None:
        """The first ``n`` rows of ``name``'s memory (``zeros``) are all zeros
        again (e.g. ``compact_histograms.compact(clear=True)`` left them so):
        the next ``zeros`` need not zero them."""
        zero = self._zero.get(name)
        if zero is None:
            zero = self._zero[name] = np.zeros(len(self._arrays[name]), bool)
        zero[:n] = True

    def room(self, name: str, shape, dtype) -> np.ndarray:
        """An array of this shape and dtype (contents undefined), in memory
        reused as ``zeros``'s is (histograms of a changing number of nodes)."""
        shape = tuple(shape)
        self._zero.pop(name, None)  # the caller writes it
        if not self._fits(name, shape, dtype):
            self._arrays[name] = np.empty(shape, dtype)
        return self._arrays[name][: shape[0]]

    def _fits(self, name, shape, dtype) -> bool:
        array = self._arrays.get(name)
        return (array is not None and array.shape[1:] == tuple(shape[1:])
                and array.dtype == np.dtype(dtype) and array.shape[0] >= shape[0])

    def keep(self, name: str, value):
        """Keep a learner's freshly computed per-row ``value`` (here: as it is).

        ``DiskBuffers`` moves it into a file instead.
        """
        return value

    def release(self) -> None:
        """Hand back memory after a pass over the shard (nothing to do in memory)."""

    def __reduce__(self):
        return Buffers, ()


def _mapped(directory: str, shape, dtype):
    """A new array of ``shape`` in a file under ``directory`` (unlinked), and its map."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if nbytes == 0:
        return np.empty(shape, dtype), None
    fd, path = tempfile.mkstemp(prefix="distboost-", suffix=".bin", dir=directory)
    try:
        allocate(fd, nbytes, directory)
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


def local_directory() -> str:
    """The Dask worker's local directory, or the system's temporary one."""
    try:
        from distributed import get_worker

        return get_worker().local_directory
    except (ImportError, ValueError):
        return tempfile.gettempdir()
