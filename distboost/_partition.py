"""Pure per-partition functions: what every Dask task (or the in-process
engine) runs on one partition. Inputs are never modified.

A partition's training state is a ``Shard``: its binned features, encoded
target, weights and the global id of its first row. Margins (raw scores) and
per-round positions are separate values passed between tasks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _exact
from ._common import STAT_DTYPE
from ._input import (
    Schema,
    check_target,
    check_weights,
    observed_categories,
    to_matrix,
    to_vector,
)
from ._random import row_uniforms
from .binning import BinMapper, sample_candidates
from .histogram import apply_splits, build_histograms
from .tree import predict_binned


@dataclass(frozen=True)
class Shard:
    """One partition of training data, as kept on its worker."""

    X_binned: np.ndarray  # (n_features, n_rows) uint8
    y: np.ndarray  # (n_rows,) float64; class codes for classifiers
    w: np.ndarray  # (n_rows,) float64
    first_row: int
    index: int

    @property
    def n_rows(self) -> int:
        return self.X_binned.shape[1]


def _as_inputs(X, y, w, schema, partition, regression):
    import pandas as pd

    from ._data import split_joined

    X, y, w = split_joined(X, y, w)
    if isinstance(X, pd.DataFrame) or hasattr(X, "shape"):
        n = X.shape[0]
    else:
        n = len(X)
    y = to_vector(y, "target", partition) if y is not None else None
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
    return X, y, w


def scan(X, y, w, schema: Schema, n_samples: int, regression: bool, partition: int,
         allow_empty: bool = False) -> dict:
    """First pass over a partition: validate, count, sample for bin edges.

    Returns
    -------
    dict with ``n_rows``, ``candidates`` (hashes, rows), ``classes`` (labels
    present), ``categories`` (per categorical feature)
    """
    X, y, w = _as_inputs(X, y, w, schema, partition, regression)
    matrix = to_matrix(X, schema, partition)
    if len(matrix) == 0 and not allow_empty:
        raise ValueError(
            f"partition {partition} is empty (0 rows); remove empty partitions before "
            f"training, e.g. with ddf = ddf.repartition(npartitions=...) or by filtering earlier"
        )
    if y is not None:
        check_target(y, regression, partition)
    cats = observed_categories(X, schema) if hasattr(X, "iloc") else {}
    return {
        "n_rows": len(matrix),
        "w_max": float(w.max(initial=0.0)),
        "y_absmax": float(np.abs(y.astype(np.float64)).max(initial=0.0)) if regression else 1.0,
        "candidates": sample_candidates(matrix, w, n_samples),
        "classes": None if (y is None or regression) else np.unique(y),
        "categories": cats,
    }


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
               partition: int, what: str = "training data") -> Shard:
    """Second pass: bin a partition and keep what training needs."""
    X, y, w = _as_inputs(X, y, w, schema, partition, classes is None)
    matrix = to_matrix(X, schema, partition)
    y = encode_target(y, classes, partition, what)
    return Shard(mapper.transform(matrix), y, w, first_row, partition)


def init_sums(shard: Shard, loss) -> list[int]:
    """Exact sums of the loss's initial statistics."""
    return _exact.exact_sums(loss.init_statistics(shard.y, shard.w))


def initial_margin(shard: Shard, base_score: np.ndarray, packed_trees) -> np.ndarray:
    """f_0 plus the output of already trained trees (continued training)."""
    margin = np.repeat(np.asarray(base_score, np.float64)[:, None], shard.n_rows, axis=1)
    if packed_trees is not None:
        predict_binned(shard.X_binned, *packed_trees, margin)
    return margin


def metric_sums(shard: Shard, margin: np.ndarray, loss) -> tuple[int, int]:
    """Exact (sum of w * loss, sum of w)."""
    return _exact.exact_sum(shard.w * loss.pointwise(shard.y, margin)), _exact.exact_sum(shard.w)


def quantize(values: np.ndarray, scale: float) -> np.ndarray:
    """Fixed-point form: round(value * scale) as int64."""
    return np.rint(values * scale).astype(STAT_DTYPE)


def root_histograms(shard: Shard, grad, scales, seed: int, round_index: int, subsample: float,
                    features):
    """Start a round: fixed-point stats, initial positions and root histograms.

    Rows left out by ``subsample`` (drawn from (seed, round, global row id),
    Friedman 2002) or with zero weight get position -1.

    Returns
    -------
    stats : ndarray (n_trees, n_rows, 3), int64 -- (g, h, 1)
    positions : ndarray (n_trees, n_rows), int32
    hist : ndarray (n_trees, n_features, 256, 3), int64
    """
    g, h = grad
    n_trees, n = g.shape
    stats = np.empty((n_trees, n, 3), STAT_DTYPE)
    stats[:, :, 0] = quantize(g, scales[0])
    stats[:, :, 1] = quantize(h, scales[1])
    stats[:, :, 2] = 1
    active = shard.w > 0
    if subsample < 1.0:
        active &= row_uniforms(seed, round_index, shard.first_row, n) < subsample
    positions = np.where(active, 0, -1).astype(np.int32)[None, :].repeat(n_trees, axis=0)
    slot_of_node = np.arange(n_trees, dtype=np.int32)[:, None]
    hist = build_histograms(shard.X_binned, stats, positions, slot_of_node, n_trees, features)
    return stats, positions, hist


def level_histograms(shard: Shard, stats, positions, split_arrays, slot_of_node, n_slots, features):
    """Apply a level's splits, then histogram the nodes to build.

    Returns
    -------
    positions : ndarray (n_trees, n_rows), int32
    hist : ndarray (n_slots, n_features, 256, 3), int64
    """
    positions = apply_splits(shard.X_binned, positions, *split_arrays)
    hist = build_histograms(shard.X_binned, stats, positions, slot_of_node, n_slots, features)
    return positions, hist


def sum_arrays(arrays):
    """Sum of a list of histograms (exact: integers)."""
    total = arrays[0].copy()
    for a in arrays[1:]:
        total += a
    return total
