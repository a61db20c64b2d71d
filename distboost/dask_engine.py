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
    """Submits per-partition functions to a Dask cluster."""

    def __init__(self, client):
        self.client = client
        self.token = uuid.uuid4().hex[:8]
        self.round = 0
        self.wave = 0
        self.worker_of: list | None = None

    def _key(self, name, i):
        return (f"distboost-{name}-r{self.round}", self.token, self.wave, i)

    def next_wave(self, round_index=None):
        if round_index is not None:
            self.round = round_index
        self.wave += 1

    def map(self, fn, name, per_part, *common):
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

    def getitem(self, values, item, name):
        return [
            self.client.submit(operator.getitem, v, item, key=self._key(name, i))
            for i, v in enumerate(values)
        ]

    def gather(self, values):
        return self.client.gather(values)

    def placed(self, shards):
        """Remember which worker holds each partition (for per-worker sums)."""
        wait(shards)
        who = self.client.who_has(shards)
        self.worker_of = [sorted(who.get(f.key, ("?",)))[0] for f in shards]

    def _groups(self, values):
        if self.worker_of is not None and len(self.worker_of) == len(values):
            owners = self.worker_of
        else:
            wait(values)
            who = self.client.who_has(values)
            owners = [sorted(who.get(v.key, ("?",)))[0] for v in values]
        groups = defaultdict(list)
        for owner, v in zip(owners, values):
            groups[owner].append(v)
        return groups

    def reduce(self, values, combine, name, *args):
        """Combine per worker (one task each), then on the driver."""
        partial = [
            self.client.submit(
                _call, combine, vals, *args, key=self._key(name, j),
                workers=None if w == "?" else [w], allow_other_workers=True,
            )
            for j, (w, vals) in enumerate(sorted(self._groups(values).items()))
        ]
        return combine(self.client.gather(partial), *args)

    def release(self, values):
        pass
