"""Room on the workers' local disks for out-of-core training.

A file that keeps binned rows (``buffers.DiskBuffers``) gets all its space
when it is made (``allocate``: ``os.posix_fallocate``, or zeros written where
the file system cannot reserve space), before it is mapped into memory. A
full disk is then an error at that moment naming the directory and the space
asked for (``DiskSpaceError``), not a worker killed by SIGBUS when a page of
a mapped file finds no block to land on. Before any partition is binned,
``check_room`` compares the free space of each worker's local directory with
what out of core will write there.
"""

from __future__ import annotations

import errno
import os
import shutil

from . import spill

ADVICE = ("Give the workers a local directory with room for their share of the rows (dask "
          "worker --local-directory DIR, or LocalCluster(local_directory=DIR)), free space "
          "there, add workers (each then keeps a smaller share), or keep the rows in memory "
          "(out_of_core=False) where the workers' memory allows.")

ZEROS = 1 << 20
"""Bytes written at a time where space is reserved by writing zeros."""

NO_ROOM = (errno.ENOSPC, errno.EDQUOT)
CANNOT_RESERVE = (errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL, errno.ENOSYS)
"""``posix_fallocate``'s answers where a file system cannot reserve space."""


class DiskSpaceError(OSError):
    """A worker's local directory has no room for the rows out of core keeps
    there (``errno`` is ``ENOSPC``); the message names the directory, the
    space free and the space needed."""

    def __init__(self, message: str, directory: str | None = None):
        super().__init__(message)
        self.errno = errno.ENOSPC
        self.directory = directory


def allocate(fd: int, nbytes: int, directory: str) -> None:
    """Give the open, empty file ``fd`` (in ``directory``) ``nbytes`` bytes of
    disk space now; its size becomes ``nbytes``.

    Raises
    ------
    DiskSpaceError
        When the file system has no room for them.
    """
    try:
        _reserve(fd, nbytes)
    except OSError as error:
        if error.errno in NO_ROOM:
            raise no_room(directory, nbytes) from error
        raise


def _reserve(fd: int, nbytes: int) -> None:
    fallocate = getattr(os, "posix_fallocate", None)
    if fallocate is not None:
        try:
            fallocate(fd, 0, nbytes)
            return
        except OSError as error:
            if error.errno not in CANNOT_RESERVE:
                raise
    _write_zeros(fd, nbytes)


def _write_zeros(fd: int, nbytes: int) -> None:
    zeros = memoryview(bytes(min(nbytes, ZEROS)))
    os.lseek(fd, 0, os.SEEK_SET)
    left = nbytes
    while left:
        left -= os.write(fd, zeros[:left])


def no_room(directory: str, nbytes: int) -> DiskSpaceError:
    """The error for ``nbytes`` more bytes that do not fit in ``directory``."""
    return DiskSpaceError(
        f"out of core: no room in {directory}{_whose()} for {_mib(nbytes)} more of binned "
        f"rows ({_mib(free_bytes(directory))} free there). {ADVICE}", directory)


def check_room(client, workers: dict, placement) -> None:
    """Refuse, before any partition is binned, workers whose local directory
    has less free space than out of core would write there.

    Parameters
    ----------
    client : distributed.Client
    workers : dict
        ``scheduler_info()["workers"]`` (each worker's ``memory_limit`` and
        memory, for ``out_of_core="auto"``).
    placement : spill.Placement or None
        The fit's placement: its mode, and a worker's share of the rows in
        bytes (``share_bytes``, the estimate of what a worker writes).

    Raises
    ------
    DiskSpaceError
        Naming the worker, its directory, the space free there and needed.
    """
    if placement is None or placement.mode is False or placement.share_bytes <= 0:
        return
    on_disk = sorted(a for a, info in workers.items() if _on_disk(placement, info))
    if not on_disk:
        return
    need = placement.share_bytes
    for address, room in sorted(client.run(local_room, workers=on_disk,
                                           on_error="return").items()):
        if isinstance(room, BaseException):
            continue  # a worker that cannot say: binning will, if it has no room
        directory, free = room
        if free < need:
            raise DiskSpaceError(
                f"out of core: worker {address} would keep about {_mib(need)} of binned "
                f"training rows in its local directory {directory}, which has {_mib(free)} "
                f"free. {ADVICE}", directory)


def _on_disk(placement, info: dict) -> bool:
    """Whether a worker (the scheduler's ``info`` on it) will keep its rows on disk."""
    if placement.mode != "auto":
        return bool(placement.mode)
    memory = (info.get("metrics") or {}).get("memory") or 0
    return spill.decide_on_disk(placement.share_bytes, info.get("memory_limit"), memory)


def local_room(dask_worker) -> tuple[str, int]:
    """On a worker (``client.run``): its local directory and the bytes free there."""
    directory = dask_worker.local_directory
    return directory, free_bytes(directory)


def free_bytes(directory: str) -> int:
    """Bytes free for this process in ``directory`` (0 where it cannot be told)."""
    try:
        return shutil.disk_usage(directory).free
    except OSError:
        return 0


def _whose() -> str:
    try:
        from distributed import get_worker

        return f" (the local directory of worker {get_worker().address})"
    except (ImportError, ValueError):
        return ""


def _mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"
