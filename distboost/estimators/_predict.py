"""Prediction for fitted tree ensembles on numpy, pandas and Dask data.

On a Dask DataFrame or Array the result is a lazy Dask array computed
partition by partition (``map_partitions`` / ``map_blocks``); the model is
one key of the graph, which each worker receives once, and the data never
leave the workers.
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


def _apply(part, fn):
    return fn(part)


def shipped(fn):
    """``fn`` as one key of a Dask graph.

    A partition's task then names the key instead of carrying ``fn``, so a
    worker receives a fitted model once per graph, not once per partition
    (a model of a hundred trees pickles to about a megabyte), as
    xgboost.dask's ``inplace_predict`` scatters its booster. The key is new
    per call: closures over a model cannot be hashed deterministically.
    """
    import dask

    return dask.delayed(fn, name=f"distboost-model-{uuid.uuid4().hex}")


def map_rows(fn, X, trailing: tuple, dtype=np.float64, token="distboost-predict"):
    """A lazy array of ``fn`` (in-memory X -> ndarray) applied to every
    partition of a Dask X; ``trailing`` is the shape of one row's result."""
    import dask.array as da

    model = shipped(fn)
    meta = np.empty((0,) + trailing, dtype)
    if isinstance(X, da.Array):
        if X.numblocks[1] != 1:
            X = X.rechunk({1: -1})
        chunks = (X.chunks[0],) + tuple((n,) for n in trailing)
        if not trailing:
            return X.map_blocks(_apply, model, drop_axis=1, chunks=chunks, meta=meta, token=token)
        extra = list(range(2, 1 + len(trailing)))
        return X.map_blocks(_apply, model, chunks=chunks, new_axis=extra or None, meta=meta,
                            token=token)
    return X.map_partitions(_apply, model, meta=meta, token=token)


def map_collection(fn, X, n_columns: int | None, dtype=np.float64):
    """Apply ``fn`` (in-memory X -> ndarray) to every partition of a Dask X."""
    return map_rows(fn, X, () if n_columns is None else (n_columns,), dtype)


def predict_any(fn, X, n_columns: int | None):
    """``fn(X)`` for in-memory X, lazily per partition for Dask X."""
    if is_dask(X):
        return map_collection(fn, X, n_columns)
    return fn(X)
