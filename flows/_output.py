"""Claiming an output folder: one rule for every flow that writes one.

A flow may write into a folder that is absent or empty. A folder holding
something else is either one the flow wrote before (it ``owns`` it: its
marker file is there, or nothing but its part files), whose own outputs it
replaces only when asked (``overwrite``), leaving anything else in it, or
anything else, which is never touched. The check runs before any work
starts, so a refused run has changed nothing.

A training holds its folder's lock while it runs (``locked_output``): a
second one into the same folder is refused at once.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

LOCK = ".distboost.lock"
"""The lock file of a folder being written (``locked_output``); not an output."""


def claim_output(output: str | Path, what: str, owns: Callable[[Path], bool],
                 overwrite: bool, refuse: str = "") -> Path:
    """``output`` as a folder this flow may write, or an error saying why not.

    Parameters
    ----------
    output : the folder
    what : what the flow writes there, for messages ("a prepared-data folder")
    owns : ``owns(folder)``: whether a non-empty folder is one this flow wrote
    overwrite : replace a folder the flow owns (``--force``)
    refuse : the sentence for a folder it does not own (default: "exists and
        is not {what}; refusing to replace it: choose another output")

    Raises
    ------
    FileExistsError
        Naming the folder and what to do.
    """
    out = Path(output)
    if out.is_file():
        raise FileExistsError(f"{out} is a file, not a folder; choose another output")
    if not out.exists() or not any(p.name != LOCK for p in out.iterdir()):
        return out
    if not owns(out):
        raise FileExistsError(f"{out} " + (refuse or f"exists and is not {what}; refusing to "
                                                      f"replace it: choose another output"))
    if not overwrite:
        raise FileExistsError(f"{out} already exists; pass --force (overwrite=True) to "
                              f"replace it")
    return out


def has_marker(name: str) -> Callable[[Path], bool]:
    """``owns`` for a flow that marks its folders with the file ``name``."""
    return lambda folder: (folder / name).is_file()


PART_FILE = re.compile(r"part-\d+\.parquet")
"""The name of a part file the flows write (``part-00000.parquet``)."""


def only_parquet(folder: Path) -> bool:
    """``owns`` for a flow whose folders hold its Parquet part files alone."""
    return all(PART_FILE.fullmatch(p.name) or p.name == LOCK for p in folder.iterdir())


# ---------------------------------------------------------------------- lock
class OutputInUse(BlockingIOError):
    """Another process is writing the output folder (``locked_output``)."""


_HELD: dict[str, list] = {}
"""Locks this process holds: folder -> [descriptor, times taken]."""


@contextlib.contextmanager
def locked_output(output: str | Path, what: str = "distboost training") -> Iterator[Path]:
    """Hold ``output``'s lock while writing it: one writer per folder at a time.

    The lock is ``fcntl.flock`` on ``output/.distboost.lock`` (the folder is
    made if needed): the system releases it when the process ends, however it
    ends, so a crashed run never leaves its folder locked. The file holds the
    holder's PID, for the message the next one gets, and is removed when the
    lock is released (with the folder, if the lock made it and it is empty).
    Taken again in the same process (the command line takes it before the
    flow that takes it too), the lock is shared. Without ``fcntl`` (Windows)
    there is no lock.

    Raises
    ------
    OutputInUse
        At once when another process holds it, naming the folder and that
        process.
    """
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"{out} is a file, not a folder; choose another output")
    key = os.path.abspath(out)
    if key in _HELD or _flock() is None:
        _HELD.setdefault(key, [None, 0])[1] += 1
        try:
            yield out
        finally:
            _release(key, out, made=False)
        return
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    _HELD[key] = [_acquire(out, what), 1]
    try:
        yield out
    finally:
        _release(key, out, made)


def _flock():
    try:
        import fcntl
    except ImportError:  # pragma: no cover (Windows)
        return None
    return fcntl


def _acquire(out: Path, what: str) -> int:
    """The descriptor of ``out``'s lock file, locked, with this process's PID in it."""
    fcntl, path = _flock(), out / LOCK
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise OutputInUse(
                f"{out} is being written by another {what} (PID {holder}); one at a time in "
                f"a folder: wait for it to end or stop it, or choose another output") from None
        if _same_file(fd, path):
            break
        os.close(fd)  # locked a file its holder removed as it ended: lock the new one
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


def _release(key: str, out: Path, made: bool) -> None:
    held = _HELD[key]
    held[1] -= 1
    if held[1]:
        return
    del _HELD[key]
    if held[0] is None:
        return
    with contextlib.suppress(OSError):
        (out / LOCK).unlink()  # while still locked: no one holds the removed file
    os.close(held[0])
    if made:
        with contextlib.suppress(OSError):
            out.rmdir()
