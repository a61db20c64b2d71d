"""Prediction for fitted tree ensembles on numpy, pandas and Dask data.

On a Dask DataFrame or Array the result is a lazy Dask array computed
partition by partition (``map_partitions`` / ``map_blocks``); the model
travels in the graph once, the data never leave the workers.
"""

from __future__ import annotations

import uuid

import numpy as np

from ..engine.inputs import is_dask
from ..inputs.frames import to_matrix
from ..kernels.threads import numba_threads
from ..kernels.tree import pack_trees, predict_raw


def raw_scores(schema, base_score, trees_by_round, X, n_jobs=None) -> np.ndarray:
    """Raw scores of shape (n_rows, n_outputs) for in-memory X."""
    matrix = to_matrix(X, schema)
    flat = [t for round_trees in trees_by_round for t in round_trees]
    k = len(base_score)
    out = np.repeat(np.asarray(base_score, np.float64)[:, None], len(matrix), axis=1)
    if flat:
        nodes, roots, bitsets = pack_trees(flat)
        outputs = np.tile(np.arange(k, dtype=np.int64), len(trees_by_round))
        with numba_threads(n_jobs):
            predict_raw(matrix, nodes, roots, bitsets, outputs, out)
    return out.T


class _PartitionFunction:
    """A per-partition prediction function with a unique Dask token.

    Closures over a fitted model cannot be hashed deterministically; the
    token names this one prediction graph instead.
    """

    def __init__(self, fn):
        self.fn = fn
        self.token = uuid.uuid4().hex

    def __call__(self, part):
        return self.fn(part)

    def __dask_tokenize__(self):
        return ("distboost-predict", self.token)


def map_collection(fn, X, n_columns: int | None, dtype=np.float64):
    """Apply ``fn`` (in-memory X -> ndarray) to every partition of a Dask X."""
    import dask.array as da

    fn = _PartitionFunction(fn)
    if isinstance(X, da.Array):
        if X.numblocks[1] != 1:
            X = X.rechunk({1: -1})
        if n_columns is None:
            return X.map_blocks(fn, drop_axis=1, dtype=dtype, name="distboost-predict")
        return X.map_blocks(fn, chunks=(X.chunks[0], (n_columns,)), dtype=dtype,
                            name="distboost-predict")
    meta = np.empty((0,) if n_columns is None else (0, n_columns), dtype)
    return X.map_partitions(fn, meta=meta, token="distboost-predict")


def predict_any(fn, X, n_columns: int | None):
    """``fn(X)`` for in-memory X, lazily per partition for Dask X."""
    if is_dask(X):
        return map_collection(fn, X, n_columns)
    return fn(X)
