"""Where training runs: in this process for numpy/pandas, on Dask for Dask
collections; and the list of partitions (X, y, w) the engine consumes."""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from contextvars import ContextVar

import dask
import numpy as np

from ..inputs import checks
from ..inputs.frames import W_COLUMN, Y_COLUMN, infer_schema
from . import dask_internals, sources
from .dask import DaskExecutor, resolve_client
from .local import LocalExecutor


def is_dask(obj) -> bool:
    return obj is not None and dask.is_dask_collection(obj)


def _dask_parts(obj, what: str, files):
    """Delayed pieces of a Dask DataFrame/Series/Array, split by rows (a
    frame's read where a bad or changed file is named: ``sources.read_parts``)."""
    import dask.array as da

    if isinstance(obj, da.Array):
        if obj.ndim == 2 and obj.numblocks[1] != 1:
            obj = obj.rechunk({1: -1})
        parts = obj.to_delayed()
        return list(parts[:, 0]) if obj.ndim == 2 else list(parts)
    return list(sources.read_parts(obj, False, what, files))


def _meta(X):
    import dask.array as da

    if isinstance(X, da.Array):
        return np.empty((0, X.shape[1]), dtype=X.dtype)
    return dask_internals.meta(X)


_LOCAL_PARTITIONS: ContextVar[int] = ContextVar("distboost_local_partitions", default=1)


@contextmanager
def local_partitions(n_partitions: int):
    """In-process fits inside this block see their rows as ``n_partitions`` partitions.

    The engine then really runs on that many partitions in this process (one
    shard each, in one holder), as it would with a Dask collection of that
    many partitions: the model must be the same whatever ``n_partitions``,
    which is how partition-independence is checked without a cluster.
    Context-local, like ``sklearn.config_context``; Dask collections keep
    their own partitions.

    Examples
    --------
    >>> from distboost.engine import local_partitions
    >>> with local_partitions(4):
    ...     model.fit(X, y)  # doctest: +SKIP
    """
    if isinstance(n_partitions, bool) or not isinstance(n_partitions, int) or n_partitions < 1:
        raise ValueError(f"n_partitions must be a positive int, got {n_partitions!r}")
    token = _LOCAL_PARTITIONS.set(n_partitions)
    try:
        yield
    finally:
        _LOCAL_PARTITIONS.reset(token)


def _split_rows(X, y, w, n_partitions: int) -> list:
    """(X, y, w) as ``n_partitions`` consecutive runs of rows (as equal as can be)."""
    bounds = np.linspace(0, len(y), n_partitions + 1).astype(int)
    rows = (lambda a, i, j: a.iloc[i:j]) if hasattr(X, "iloc") else (lambda a, i, j: a[i:j])
    return [(rows(X, i, j), y[i:j], None if w is None else w[i:j])
            for i, j in itertools.pairwise(bounds)]


def plan(X, y, sample_weight, eval_set, eval_sample_weight, client, n_jobs, classifier=False):
    """Executor, training partitions, evaluation partitions and schema.

    In-memory data are validated here, before any work starts (see
    ``inputs.checks``); Dask collections are checked on their metadata here and
    partition by partition as they are read.

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
        _check_dask_fit(X, y)
        for k, (Xe, _) in enumerate(eval_set):
            if is_dask(Xe) and hasattr(Xe, "columns"):
                checks.check_columns(Xe.columns, f"eval_set[{k}]")
        client = resolve_client(client)
        schema = infer_schema(_meta(X))
        files = sources.FileIdentities()  # each file as the fit first reads it
        parts = _zip_parts(X, y, sample_weight, "training data", files)
        eval_parts = [_zip_parts(Xe, ye, we, f"eval_set[{k}]", files)
                      for k, ((Xe, ye), we) in enumerate(zip(eval_set, eval_w))]
        return DaskExecutor(client), parts, eval_parts, schema
    if is_dask(y) or is_dask(sample_weight):
        raise TypeError("X is in memory but y or sample_weight is a Dask collection; use the same kind")
    X, y, sample_weight = checks.check_fit_data(X, y, sample_weight, classifier)
    schema = infer_schema(X)
    eval_parts = []
    for k, ((Xe, ye), we) in enumerate(zip(eval_set, eval_w)):
        if is_dask(Xe):
            raise TypeError(
                "eval_set holds a Dask collection but the training data are in memory; "
                "compute it first or train on Dask collections"
            )
        Xe, ye, we = checks.check_fit_data(Xe, ye, we, classifier)
        if checks.is_sparse(Xe) or Xe.shape[1] != X.shape[1]:
            raise ValueError(f"eval_set[{k}] has {Xe.shape[1]} features, but the training "
                             f"data have {X.shape[1]}; pass the same columns")
        eval_parts.append([(Xe, ye, we)])
    parts = _split_rows(X, y, sample_weight, _LOCAL_PARTITIONS.get())
    return LocalExecutor(n_jobs), parts, eval_parts, schema


def _check_dask_fit(X, y) -> None:
    """What the metadata of Dask training data can tell before any task runs."""
    if y is None:
        raise ValueError("this estimator requires y to be passed, but the target y is None; "
                         "pass the target as fit(X, y)")
    meta = _meta(X)
    if getattr(meta, "ndim", 2) != 2:
        raise ValueError(f"X must be a 2-D Dask DataFrame or Array, got {meta.ndim}-D; "
                         f"reshape it (e.g. X.to_frame() for a single feature)")
    if checks.is_sparse(meta):
        checks.check_X(meta)
    if hasattr(meta, "columns"):
        checks.check_columns(meta.columns)
    if meta.shape[1] == 0:
        raise ValueError("X has 0 feature(s) (no columns) while a minimum of 1 is required; "
                         "pass at least one feature column")
    dtypes = list(meta.dtypes) if hasattr(meta, "dtypes") else [meta.dtype]
    if any(getattr(dt, "kind", "") == "c" for dt in dtypes):
        raise ValueError("Complex data not supported: X has complex columns; pass real numbers")


def _joined(X, y, w):
    """X with y (and w) as extra columns, or None if they don't align.

    Taking X and y from one frame in one task reads each partition once and
    keeps their rows together whatever the optimizer does to partition counts.
    """
    import dask.dataframe as dd

    if not (isinstance(X, dd.DataFrame) and isinstance(y, dd.Series)):
        return None
    if w is not None and not isinstance(w, dd.Series):
        return None
    if not _co_aligned(X, y, w):
        return None  # e.g. from two folders: zip partitions, whose lengths are then checked
    extra = {Y_COLUMN: y} if w is None else {Y_COLUMN: y, W_COLUMN: w}
    try:
        return X.assign(**extra)
    except (ValueError, NotImplementedError, TypeError):
        return None


def _co_aligned(X, y, w) -> bool:
    """Whether y (and w) are known to come from the same rows as X (e.g. one
    frame's columns). Where Dask cannot tell (``dask_internals.co_aligned``),
    no: X, y and w are then read side by side, partition by partition, and
    their lengths compared, which gives the same model."""
    return bool(dask_internals.co_aligned(X, y, *([] if w is None else [w])))


@contextmanager
def naming_sources(X, y, w):
    """Errors that name a partition and a row also name the file and row they came
    from, when X was read from Parquet files (see ``engine.sources``)."""
    try:
        yield
    except (ValueError, TypeError) as exc:
        richer = sources.with_source(exc, *_source_collection(X, y, w)) if is_dask(X) else None
        if richer is None:
            raise
        raise richer from exc


def _source_collection(X, y, w):
    """The collection whose partitions the training parts are (see ``_zip_parts``),
    and whether they are its optimized partitions (``to_delayed()``) or its
    partitions as given (``to_delayed(optimize_graph=False)``)."""
    import dask.dataframe as dd

    if not isinstance(X, dd.DataFrame):
        return None, False
    joined = _joined(X, y, w)
    return (X, False) if joined is None else (joined, True)


def _zip_parts(X, y, w, what: str, files):
    """(X, y, w) per partition: Delayed pieces (a frame's read naming a bad or
    changed file, ``sources.read_parts``; ``files`` notes each file's identity)."""
    if not is_dask(X):
        return [(dask.delayed(X), dask.delayed(y), None if w is None else dask.delayed(w))]
    joined = _joined(X, y, w)
    if joined is not None:
        return [(part, Y_COLUMN, None if w is None else W_COLUMN)
                for part in sources.read_parts(joined, True, what, files)]
    xs = _dask_parts(X, what, files)
    # without optimization, partition counts follow the user's collections
    ys = _dask_parts(y, what, files) if is_dask(y) else None
    ws = _dask_parts(w, what, files) if is_dask(w) else None
    if ys is None:
        raise TypeError("X is a Dask collection, so y must be one too (partitioned like X)")
    for name, other in (("y", ys), ("sample_weight", ws)):
        if other is not None and len(other) != len(xs):
            raise ValueError(
                f"X has {len(xs)} partitions but {name} has {len(other)}; partition them alike "
                f"(e.g. take both from one DataFrame: ddf.drop(columns='label'), ddf['label'])"
            )
    return [(x, yy, None if ws is None else ws[i]) for i, (x, yy) in enumerate(zip(xs, ys))]


