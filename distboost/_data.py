"""Where training runs: in this process for numpy/pandas, on Dask for Dask
collections; and the list of partitions (X, y, w) the engine consumes."""

from __future__ import annotations

import dask
import numpy as np

from ._input import Schema, infer_schema
from .dask_engine import DaskExecutor, resolve_client
from .engine import LocalExecutor


def is_dask(obj) -> bool:
    return obj is not None and dask.is_dask_collection(obj)


def _dask_parts(obj, what: str):
    """Delayed pieces of a Dask DataFrame/Series/Array, split by rows."""
    import dask.array as da

    if isinstance(obj, da.Array):
        if obj.ndim == 2 and obj.numblocks[1] != 1:
            obj = obj.rechunk({1: -1})
        parts = obj.to_delayed()
        return list(parts[:, 0]) if obj.ndim == 2 else list(parts)
    return list(obj.to_delayed())


def _meta(X):
    import dask.array as da

    if isinstance(X, da.Array):
        return np.empty((0, X.shape[1]), dtype=X.dtype)
    return X._meta


def plan(X, y, sample_weight, eval_set, eval_sample_weight, client, n_jobs):
    """Executor, training partitions, evaluation partitions and schema.

    Returns
    -------
    executor : LocalExecutor or DaskExecutor
    parts : list of (X, y, w)
    eval_parts : list (per eval set) of lists of (X, y, w)
    schema : Schema
    """
    eval_set = list(eval_set or [])
    eval_w = list(eval_sample_weight or [None] * len(eval_set))
    if is_dask(X):
        client = resolve_client(client)
        schema = infer_schema(_meta(X))
        parts = _zip_parts(X, y, sample_weight)
        eval_parts = [_zip_parts(Xe, ye, we) for (Xe, ye), we in zip(eval_set, eval_w)]
        return DaskExecutor(client), parts, eval_parts, schema
    if is_dask(y) or is_dask(sample_weight):
        raise TypeError("X is in memory but y or sample_weight is a Dask collection; use the same kind")
    schema = infer_schema(X)
    eval_parts = []
    for (Xe, ye), we in zip(eval_set, eval_w):
        if is_dask(Xe):
            raise TypeError(
                "eval_set holds a Dask collection but the training data are in memory; "
                "compute it first or train on Dask collections"
            )
        eval_parts.append([(Xe, ye, we)])
    return LocalExecutor(n_jobs), [(X, y, sample_weight)], eval_parts, schema


def _zip_parts(X, y, w):
    if not is_dask(X):
        return [(dask.delayed(X), dask.delayed(y), None if w is None else dask.delayed(w))]
    xs = _dask_parts(X, "X")
    ys = _dask_parts(y, "y") if is_dask(y) else None
    ws = _dask_parts(w, "sample_weight") if is_dask(w) else None
    if ys is None:
        raise TypeError("X is a Dask collection, so y must be one too (partitioned like X)")
    for name, other in (("y", ys), ("sample_weight", ws)):
        if other is not None and len(other) != len(xs):
            raise ValueError(
                f"X has {len(xs)} partitions but {name} has {len(other)}; partition them alike "
                f"(e.g. take both from one DataFrame: ddf.drop(columns='label'), ddf['label'])"
            )
    return [(x, yy, None if ws is None else ws[i]) for i, (x, yy) in enumerate(zip(xs, ys))]


