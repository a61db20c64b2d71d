"""What the engine asks of an executor (``Executor``): tasks over partitions
before the holders exist, then waves of ``holder.Op`` on the holders.

``holder.LocalExecutor`` runs everything in this process; ``dask.DaskExecutor``
on a Dask cluster.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Executor(Protocol):
    """What the engine asks of an executor: tasks over partitions before the
    holders exist, then waves of ``Op`` on the holders.

    ``LocalExecutor`` runs everything in this process; ``dask.DaskExecutor``
    on a Dask cluster. ``groups`` are the holders' handles, each with ``sets``:
    per set key (``"train"``, ``"eval0"``, ...) the indices of the partitions it holds.
    """

    groups: list
    remote: bool
    """Whether the holders' results leave their process (then histograms
    travel compact where mostly empty: ``kernels.compact_histograms``)."""

    def map(self, fn, name: str, per_part, *common) -> list:
        """``fn(*args, *common)`` for each partition's ``args`` (results or futures)."""

    def stream(self, fn, name: str, n_tasks: int, args_of, consume, window: int) -> None:
        """``fn(*args_of(i))`` for each task i, at most ``window`` at once;
        ``consume(i, result)`` as each finishes, before later tasks' arguments
        are made (so that they can depend on what came back)."""

    def bin(self, set_key: str, fn, name: str, per_part, *common) -> None:
        """Bin one set's partitions (``fn`` per partition), kept until ``place``."""

    def place(self, name: str) -> None:
        """Hand the binned partitions to holders (``groups``)."""

    def run(self, ops, name: str) -> list:
        """One wave: ``ops`` on every holder having their sets; per op, the
        small results of those holders."""

    def set_round(self, round_index: int) -> None:
        """The round the next waves belong to (names them)."""

    def n_workers(self) -> int:
        """Workers the partitions are spread over."""

    def single_partition(self, set_key: str) -> bool:
        """Whether the set's rows are one partition in memory in this process
        (then its trees may grow in one call where they are)."""

    def check_memory(self) -> None:
        """Refuse, before any work, workers too small to train."""

    def close(self) -> None:
        """Release the holders and whatever reaches them."""
