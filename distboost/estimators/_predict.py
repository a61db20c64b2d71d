"""Prediction for fitted tree ensembles on numpy, pandas and Dask data.

On a Dask DataFrame or Array the result is a lazy Dask array computed
partition by partition (``map_partitions`` / ``map_blocks``); the model
travels in the graph once, the data never leave the workers. A DataFrame
read from Parquet files is read in the prediction's own tasks, so that an
error names the file it came from (``engine.sources.apply_to_parts``); where
its files cannot be traced, errors name the partition.
"""

from __future__ import annotations

import uuid

import numpy as np

from ..engine import sources
from ..engine.input_plan import is_dask
from ..inputs.frames import sparse_rows, to_matrix
from ..inputs.sparse import dense_rows, is_scipy_sparse, to_dense
from ..kernels.threads import numba_threads
from ..kernels.tree import leaf_indices, pack_trees, predict_raw


def raw_scores(schema, base_score, trees_by_round, X, n_jobs=None) -> np.ndarray:
    """Raw scores of shape (n_rows, n_outputs) for in-memory X."""
    flat = [t for round_trees in trees_by_round for t in round_trees]
    k = len(base_score)
    parts = []
    for matrix in row_matrices(X, schema):
        out = np.repeat(np.asarray(base_score, np.float64)[:, None], len(matrix), axis=1)
        if flat:
            nodes, roots, bitsets = pack_trees(flat)
            outputs = np.tile(np.arange(k, dtype=np.int64), len(trees_by_round))
            with numba_threads(n_jobs):
                predict_raw(matrix, nodes, roots, bitsets, outputs, out)
        parts.append(out)
    return (parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)).T


def leaf_ids(schema, trees, X, n_jobs=None) -> np.ndarray:
    """The leaf each row of in-memory X reaches in each of ``trees``, shape
    (n_rows, n_trees), int64: the leaf's index in its tree's ``nodes`` (the
    node ids of the model file and of the XGBoost export). Rows walk the
    trees as ``raw_scores``' do: missing values and unknown categories take
    each split's learned side."""
    parts = []
    for matrix in row_matrices(X, schema):
        out = np.zeros((len(trees), len(matrix)), np.int64)
        if trees:
            with numba_threads(n_jobs):
                leaf_indices(matrix, *pack_trees(trees), out)
        parts.append(out)
    return (parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)).T


def row_matrices(X, schema):
    """The float matrices of in-memory X's rows, in order: X's whole, or, for
    a scipy sparse X, its dense rows (NaN where nothing is stored) a block of
    ``inputs.sparse.dense_rows`` at a time, so that a prediction holds one
    such block (32 MiB), not ``8 n_rows n_features`` bytes."""
    if not is_scipy_sparse(X):
        yield to_matrix(X, schema)
        return
    X = sparse_rows(X, schema)
    step = dense_rows(schema.n_features)
    for start in range(0, max(X.shape[0], 1), step):
        yield to_dense(X[start:start + step])


class _PartitionFunction:
    """A per-partition prediction function with a unique Dask token.

    Closures over a fitted model cannot be hashed deterministically; the
    token names this one prediction graph instead. An error raised on a
    partition of a Dask DataFrame names the partition (``partition_info``).
    """

    def __init__(self, fn):
        self.fn = fn
        self.token = uuid.uuid4().hex

    def __call__(self, part, partition_info=None):
        try:
            return self.fn(part)
        except (ValueError, TypeError, KeyError) as error:
            if partition_info is None:
                raise
            richer = sources.same_type(
                error, f"{sources.message(error)} [X, partition {partition_info['number']}]")
            if richer is None:
                raise
            raise richer from error

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
    return map_frame(fn, X, () if n_columns is None else (n_columns,), dtype,
                     "distboost-predict")


def map_frame(fn, X, trailing: tuple, dtype, name: str):
    """A lazy array (named ``name-...``) of ``fn`` applied to every partition of
    a Dask DataFrame (``trailing``: the shape of one row's result): read and
    applied in one task per partition where the partitions trace to their
    files (``sources.apply_to_parts``), else ``map_partitions``."""
    import dask.array as da

    key_name, zeros = f"{name}-{uuid.uuid4().hex}", (0,) * len(trailing)
    calls = sources.apply_to_parts(X, fn, "X", lambda i: (key_name, i, *zeros))
    if calls is None:
        return X.map_partitions(fn, meta=np.empty((0,) + trailing, dtype), token=name)
    graph = {}
    for call in calls:
        graph.update(call.__dask_graph__())
    chunks = ((np.nan,) * len(calls),) + tuple((n,) for n in trailing)
    return da.Array(graph, key_name, chunks, dtype=dtype)


def map_rows(fn, X, trailing: tuple, dtype):
    """A lazy array of ``fn`` (in-memory X -> ndarray of shape (n_rows,
    *trailing)) applied to every partition of a Dask X."""
    import dask.array as da

    fn = _PartitionFunction(fn)
    if isinstance(X, da.Array):
        if X.numblocks[1] != 1:
            X = X.rechunk({1: -1})
        new_axis = list(range(2, 1 + len(trailing))) or None
        return X.map_blocks(fn, chunks=(X.chunks[0], *((n,) for n in trailing)),
                            new_axis=new_axis, dtype=dtype, name="distboost-apply")
    return map_frame(fn, X, trailing, dtype, "distboost-apply")


def rows_any(fn, X, trailing: tuple, dtype):
    """``fn(X)`` for in-memory X, lazily per partition for Dask X (``map_rows``)."""
    return map_rows(fn, X, trailing, dtype) if is_dask(X) else fn(X)


def predict_any(fn, X, n_columns: int | None):
    """``fn(X)`` for in-memory X, lazily per partition for Dask X."""
    if is_dask(X):
        return map_collection(fn, X, n_columns)
    return fn(X)
