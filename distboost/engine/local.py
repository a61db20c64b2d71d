"""The in-process executor: every partition in one ``Holder`` in this process."""

from __future__ import annotations

from .holder import Holder


class LocalExecutor:
    """Runs everything in this process: all partitions in one ``Holder``."""

    def __init__(self, n_jobs: int | None = None):
        self.n_jobs = n_jobs
        self.groups = []
        self._sets = {}

    def map(self, fn, name, per_part, *common):
        return [fn(*args, *common) for args in per_part]

    def stream(self, fn, name, n_tasks, args_of, consume, window):
        """``consume(i, fn(*args_of(i)))`` for each i in turn."""
        for i in range(n_tasks):
            consume(i, fn(*args_of(i)))

    def bin(self, set_key, fn, name, per_part, *common):
        """Bin the partitions of one set (``fn(*args, *common)`` per partition)."""
        self._sets[set_key] = self.map(fn, name, per_part, *common)

    def place(self, name):
        """Bundle every binned set into one holder."""
        sets = {k: v for k, v in self._sets.items() if v}
        self._sets = {}
        if sets:
            layout = [(k, len(v)) for k, v in sets.items()]
            self.groups = [_Local(Holder(layout, *(s for v in sets.values() for s in v)))]

    def run(self, ops, name):
        """Run a wave; per op, the small results of the groups having its set."""
        out = [[] for _ in ops]
        for g in self.groups:
            mine = [i for i, op in enumerate(ops) if op.set_key in g.sets]
            for i, small in zip(mine, g.holder.run([ops[i] for i in mine])):
                out[i].append(small)
        return out

    def single_partition(self, set_key) -> bool:
        """Whether the set's rows are one partition held in memory here."""
        if len(self.groups) != 1 or set_key not in self.groups[0].sets:
            return False
        shards = self.groups[0].sets[set_key].shards
        return len(shards) == 1 and not shards[0].buffers.on_disk

    def set_round(self, round_index):
        pass

    def check_memory(self):
        """Nothing to check: this process's memory is the user's."""

    def n_workers(self) -> int:
        return 1

    def close(self):
        """Nothing to release: the holder goes with this executor."""


class _Local:
    """The in-process holder, and its sets (as ``dask._Group`` has them)."""

    def __init__(self, holder):
        self.holder, self.sets = holder, holder.states
