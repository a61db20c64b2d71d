"""Reading a partition: validation, the binning sample, and the binned
``Shard`` each worker keeps (binned features, encoded target, weights and the
global id of its first row). Pure functions; inputs are never modified.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..binning import BinMapper, block_candidates, prior_bound, row_blocks, row_slice
from ..inputs.frames import (
    Schema,
    check_target,
    check_weights,
    observed_categories,
    sparse_rows,
    split_joined,
    to_matrix,
    to_vector,
)
from ..inputs.queries import check_query_ids, check_query_weights, max_query_rows, query_ids
from ..inputs.sparse import is_scipy_sparse
from ..inputs.survival import check_bounds
from ..inputs.targets import n_targets, partition_targets
from ..trees.ranking import QueryTarget
from ..trees.survival import IntervalTarget
from .buffers import Buffers, DiskBuffers, local_directory


@dataclass(frozen=True)
class Shard:
    """One partition of training data, as kept on its worker."""

    X_binned: np.ndarray  # (n_rows, n_features) uint8, row-major; or sparse rows' SparseCodes
    y: np.ndarray  # (n_rows,) float64; class codes for classifiers
    w: np.ndarray  # (n_rows,) float64
    first_row: int
    index: int
    buffers: Buffers = field(default_factory=Buffers, compare=False, repr=False)
    qid: np.ndarray | None = None  # (n_rows,) int64 query ids of a ranker's rows, else None
    upper: np.ndarray | None = None  # (n_rows,) float64 an AFT model's upper bounds (y: lower)

    @property
    def n_rows(self) -> int:
        return self.X_binned.shape[0]

    @property
    def target(self):
        """What a loss reads per row: ``y``, or a ranker's relevance with its query
        ids (``trees.ranking.QueryTarget``), whole queries in one shard."""
        if self.upper is not None:
            return IntervalTarget(self.y, self.upper)
        return self.y if self.qid is None else QueryTarget(self.y, self.qid)

    def release(self) -> None:
        """After a pass: hand the pages of a shard kept on disk back to the OS."""
        self.buffers.release()

    def __reduce__(self):
        """In memory: the arrays. On disk: the arrays too, written to the local
        disk of whichever process unpickles them (``portable``)."""
        if self.buffers.on_disk:
            return portable(self)
        if self.qid is not None or self.upper is not None:
            return Shard, (self.X_binned, self.y, self.w, self.first_row, self.index, Buffers(),
                           self.qid, self.upper)
        return Shard, (self.X_binned, self.y, self.w, self.first_row, self.index)


def _as_inputs(X, y, w, schema, partition, regression, qid=None, upper=None):
    """(X, y, w, qid, upper) of one partition as arrays (``qid``: None, or a ranker's
    query ids, checked: integers, each query's rows consecutive; ``upper``: None, or
    an AFT model's upper bounds, checked with y, the lower bounds)."""
    import pandas as pd

    X, y, w, qid, upper = split_joined(X, y, w, qid, upper)
    if is_scipy_sparse(X):  # kept sparse: sampled and binned from its stored entries
        X = sparse_rows(X, schema, partition)
    if isinstance(X, pd.DataFrame) or hasattr(X, "shape"):
        n = X.shape[0]
    else:
        n = len(X)
    if y is not None:  # k columns: a multi-output target (``inputs.targets``), checked there
        y = partition_targets(y, partition) if n_targets(y) else to_vector(y, "target", partition)
    if y is not None and len(y) != n:
        raise ValueError(
            f"partition {partition}: X has {n} rows but the target has {len(y)}; "
            f"X and y must be partitioned alike"
        )
    if w is None:
        w = np.ones(n)
    else:
        w = check_weights(to_vector(w, "sample_weight", partition), partition)
        if len(w) != n:
            raise ValueError(f"partition {partition}: sample_weight has {len(w)} rows, X has {n}")
    if qid is not None:
        qid = check_query_ids(query_ids(qid, n, f" in partition {partition}"), partition)
        check_query_weights(qid, w, partition)
    if upper is not None:
        upper = check_bounds(y, to_vector(upper, "y_upper", partition),
                             f" in partition {partition}")
    return X, y, w, qid, upper


def scan(X, y, w, schema: Schema, n_samples: int, regression: bool, partition: int,
         allow_empty: bool = False, below=None, n_parts=None, above=None, qid=None,
         upper=None) -> dict:
    """First pass over a partition: validate, count, sample for bin edges
    (rows whose hash is at most ``below``: ``binning.CandidatePool``; more
    than ``above``; with ``n_parts`` partitions in all, at most
    ``binning.prior_bound``).

    Returns
    -------
    dict with ``n_rows``, ``candidates`` (hashes, rows), ``classes`` (labels
    present), ``categories`` (per categorical feature), ``prior`` (the
    prior bound that held rows back, or None), and with ``qid`` ``queries``
    (the partition's query ids, once each, for ``queries.check_queries_apart``)
    """
    X, y, w, qid, upper = _as_inputs(X, y, w, schema, partition, regression, qid, upper)
    n_rows = len(w)
    if n_rows == 0 and not allow_empty:
        raise ValueError(
            f"partition {partition} is empty (0 rows); remove empty partitions before "
            f"training, e.g. with ddf = ddf.repartition(npartitions=...) or by filtering earlier"
        )
    if y is not None and y.ndim == 1:
        check_target(y, regression, partition)
    cats = observed_categories(X, schema) if hasattr(X, "iloc") else {}
    prior = prior_bound(n_samples, n_parts, n_rows) if n_samples and n_parts else None
    if prior is not None and below is not None and below <= prior:
        prior = None  # the pool's threshold holds back more already
    limit = below if prior is None else prior
    return {
        "n_rows": n_rows,
        "w_max": float(w.max(initial=0.0)),
        "w_min": float(w.min(initial=np.inf)),
        "y_absmax": float(np.abs(y.astype(np.float64)).max(initial=0.0)) if regression else 1.0,
        "candidates": _sample(X, w, schema, partition, n_samples, limit, above) if n_samples else None,
        "prior": prior,
        "classes": None if (y is None or regression) else np.unique(y),
        "categories": cats,
        **({} if qid is None else {"queries": np.unique(qid), "max_query": max_query_rows(qid)}),
    }


def _sample(X, w, schema, partition, n_samples, below, above=None):
    """The binning candidates of a partition (``binning.block_candidates``;
    ``binning.frame_candidates`` draws the same outside a fit)."""
    return block_candidates(lambda a, b: _rows(X, schema, partition, a, b), w,
                            n_samples, below, above)


def _rows(X, schema, partition, start, stop):
    """Rows ``start:stop`` as a float matrix, or as CSR rows for sparse X (which
    the sample and the bins take as they are: no dense float block)."""
    if is_scipy_sparse(X):
        return X[start:stop]
    return to_matrix(row_slice(X, start, stop), schema, partition)


def _bin_rows(X, schema, partition, mapper, start, stop, out):
    """Codes of rows ``start:stop`` into ``out`` (C-contiguous), converted block by block."""
    for a, b in row_blocks(stop - start):
        mapper.transform(_rows(X, schema, partition, start + a, start + b), out=out[a:b])
    return out


SPARSE_CODES_MAX_DENSITY = 0.2
"""Sparse rows keep only their stored entries' codes (``kernels.sparse_codes``)
up to this share of stored entries, where a histogram's two additions an entry
cost less than the dense codes' one a cell."""


def sparse_codes_pay(X) -> bool:
    """Whether a CSR partition's codes are kept sparse: at most
    ``SPARSE_CODES_MAX_DENSITY`` of its cells stored, and fewer bytes (8 a row
    and 5 an entry) than the dense codes (a byte a cell, row- and feature-major)."""
    cells = X.shape[0] * X.shape[1]
    sparse_bytes = 8 * (X.shape[0] + 1) + 5 * X.nnz
    return cells > 0 and X.nnz <= SPARSE_CODES_MAX_DENSITY * cells and sparse_bytes < 2 * cells


def encode_target(y: np.ndarray, classes: np.ndarray | None, partition: int, what: str):
    """Class labels -> codes 0..K-1 (float64); regression targets -> float64."""
    if classes is None:
        return y.astype(np.float64)
    codes = np.searchsorted(classes, y)
    codes = np.clip(codes, 0, len(classes) - 1)
    unknown = classes[codes] != y
    if unknown.any():
        raise ValueError(
            f"{what} in partition {partition} has label(s) {sorted(set(y[unknown].tolist()))[:5]} "
            f"not seen in the training target (classes {classes.tolist()})"
        )
    return codes.astype(np.float64)


def make_shard(X, y, w, schema: Schema, mapper: BinMapper, classes, first_row: int,
               partition: int, what: str = "training data", placement=None, qid=None,
               upper=None):
    """Second pass: bin a partition and keep what training needs.

    Returns a ``Shard`` in memory, or, when ``placement`` (a
    ``_placement.Placement``) puts the partition on disk, a list of block
    shards whose arrays are files (``disk_blocks``). A ranker's partition
    (``qid`` given) stays in memory whole: blocks would cut its queries.
    """
    X, y, w, qid, upper = _as_inputs(X, y, w, schema, partition, classes is None, qid, upper)
    y = encode_target(y, classes, partition, what)
    if is_scipy_sparse(X) and sparse_codes_pay(X):  # in memory, the stored entries' codes
        return Shard(mapper.transform_sparse(X), y, w, first_row, partition, qid=qid,
                     upper=upper)
    if placement is not None and placement.on_disk() and qid is None and upper is None:
        rows = placement.rows_per_block(schema.n_features)
        return disk_blocks(lambda a, b, out: _bin_rows(X, schema, partition, mapper, a, b, out),
                           len(y), schema.n_features, y, w, first_row, partition,
                           local_directory(), rows)
    codes = np.empty((len(y), schema.n_features), np.uint8)
    return Shard(_bin_rows(X, schema, partition, mapper, 0, len(y), codes), y, w, first_row,
                 partition, qid=qid, upper=upper)


def disk_blocks(bin_rows, n_rows: int, n_features: int, y: np.ndarray, w: np.ndarray,
                first_row: int, partition: int, directory: str,
                rows_per_block: int) -> list[Shard]:
    """Bin a partition block by block into shards kept on disk.

    Parameters
    ----------
    bin_rows : callable (start, stop, out) -> out, the codes of those rows
        written into ``out`` (uint8, shape (stop - start, n_features))
    n_rows, n_features : int
    y, w : ndarray of shape (n_rows,), encoded target and weights
    first_row : int, the partition's first global row id
    partition : int
    directory : str, where the files go (a worker's local directory)
    rows_per_block : int

    Returns
    -------
    list of Shard, one per block, each with its own ``DiskBuffers``
    """
    blocks = []
    for start in range(0, n_rows, rows_per_block):
        stop = min(start + rows_per_block, n_rows)
        buffers = DiskBuffers(directory)
        codes = buffers.get("codes", (stop - start, n_features), np.uint8)
        codes = bin_rows(start, stop, codes)
        block_y = buffers.keep("y", np.ascontiguousarray(y[start:stop], np.float64))
        block_w = buffers.keep("w", np.ascontiguousarray(w[start:stop], np.float64))
        blocks.append(Shard(codes, block_y, block_w, first_row + start, partition, buffers))
        buffers.release()
    return blocks


def portable(shard: Shard):
    """How a block kept on disk pickles (``Shard.__reduce__``): by value, and
    back into files where it is unpickled (e.g. on another worker, when Dask
    moves it), so that neither side holds more than the block in memory."""
    arrays = (shard.X_binned.copy(), shard.y.copy(), shard.w.copy())
    shard.release()
    return _on_disk, (*arrays, shard.first_row, shard.index)


def _on_disk(X_binned, y, w, first_row, index) -> Shard:
    buffers = DiskBuffers(local_directory())
    shard = Shard(buffers.keep("codes", X_binned), buffers.keep("y", y), buffers.keep("w", w),
                  first_row, index, buffers)
    buffers.release()
    return shard
