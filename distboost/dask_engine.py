"""Running the engine's per-partition work as Dask tasks.

Training data stay on the workers as futures of ``Shard`` objects; each wave
submits one task per partition with a readable key
``("distboost-histogram-r12", fit_token, wave, partition)`` so the dashboard
groups work by round. Histograms are first summed on each worker (one task per
worker, over the partitions it holds) and only those few sums travel to the
driver. Sums are integers, so the order of addition does not matter.
"""

from __future__ import annotations

import operator
import uuid
from collections import defaultdict

import numba
from dask.delayed import Delayed, delayed
from distributed import wait

from . import _group


def resolve_client(client=None):
    """The given client or the current default one; never creates a cluster."""
    if client is not None:
        return client
    from distributed import default_client

    try:
        return default_client()
    except ValueError:
        raise ValueError(
            "training data is a Dask collection but no Dask client is active: create one first, "
            "e.g. `from distributed import Client, LocalCluster; client = Client(LocalCluster())` "
            "or `Client('tcp://scheduler:8786')`, or pass client=... to the estimator"
        ) from None


def _call(fn, *args):
    """Run ``fn`` with numba using the worker's thread count."""
    try:
        from distributed import get_worker

        n = get_worker().state.nthreads
        numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
    except ValueError:
        pass
    return fn(*args)


def _has_lazy(obj) -> bool:
    if isinstance(obj, Delayed):
        return True
    if isinstance(obj, (tuple, list)):
        return any(_has_lazy(o) for o in obj)
    return False


class DaskExecutor:
    """Submits the engine's work to a Dask cluster.

    Per-partition passes (scan, binning) run one task per partition; after
    binning, partitions are bundled into one group per worker and every wave
    runs one task per group on that worker.
    """

    rebase_every = 50
    """Rounds between rebuilding row states from the model: bounds the chain
    of tasks a lost worker's data is recomputed from (see Engine.rebase_due)."""

    def __init__(self, client):
        self.client = client
        self.token = uuid.uuid4().hex[:8]
        self.round = 0
        self.wave = 0

    def _key(self, name, i):
        return (f"distboost-{name}-r{self.round}", self.token, self.wave, i)

    def set_round(self, round_index):
        self.round = round_index

    def map(self, fn, name, per_part, *common):
        """One task per partition (inputs may be lazy Dask pieces)."""
        self.wave += 1
        if any(_has_lazy(args) for args in per_part):
            lazy = [
                delayed(_call, pure=False)(fn, *args, *common, dask_key_name=self._key(name, i))
                for i, args in enumerate(per_part)
            ]
            return self.client.compute(lazy)
        return [
            self.client.submit(_call, fn, *args, *common, key=self._key(name, i))
            for i, args in enumerate(per_part)
        ]

    def call(self, groups, fn, name, *common):
        """One task per group."""
        self.wave += 1
        return [
            self.client.submit(_call, fn, g, *common, key=self._key(name, i))
            for i, g in enumerate(groups)
        ]

    def getitem(self, values, item, name):
        return [
            self.client.submit(operator.getitem, v, item, key=self._key(name, i))
            for i, v in enumerate(values)
        ]

    def gather(self, values):
        return self.client.gather(values)

    def _owners(self, futures):
        with self.client.as_current():
            wait(futures)
        for f in futures:
            if f.status == "error":
                f.result()  # raises the task's own error (e.g. bad input in a partition)
        who = self.client.who_has(futures)
        return [min(who.get(f.key, ("?",))) for f in futures]

    def bundle(self, shards, name):
        """Group partitions by the worker holding them (no data moves)."""
        if not shards:
            return []
        groups = defaultdict(list)
        for owner, f in zip(self._owners(shards), shards):
            groups[owner].append(f)
        self.wave += 1
        return [
            self.client.submit(
                _group.bundle, *futs, key=self._key(name, j),
                workers=None if w == "?" else [w], allow_other_workers=True,
            )
            for j, (w, futs) in enumerate(sorted(groups.items()))
        ]

    def reduce(self, values, combine, name, *args):
        """Combine per worker (one task each), then on the driver."""
        groups = defaultdict(list)
        for owner, v in zip(self._owners(values), values):
            groups[owner].append(v)
        self.wave += 1
        partial = [
            self.client.submit(
                _call, combine, vals, *args, key=self._key(name, j),
                workers=None if w == "?" else [w], allow_other_workers=True,
            )
            for j, (w, vals) in enumerate(sorted(groups.items()))
        ]
        return combine(self.client.gather(partial), *args)
