"""scikit-learn's ``early_stopping`` for the gradient boosting estimators: when it
is on, and the validation rows it holds out (``validation_fraction``).

A row is held out when a hash of its feature values, mixed with the seed of
``random_state``, falls below ``validation_fraction``: the same rows whatever
the partitioning, in this process and on Dask alike, with no pass over the
data to count or number them. Rows with equal features fall on the same side.
scikit-learn draws an exact fraction (``train_test_split``, stratified for
classifiers); here each row is held out with that probability.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine.input_plan import is_dask
from ..inputs import checks
from ..inputs.sparse import as_csr, dense_rows, is_scipy_sparse, to_dense

AUTO_MIN_ROWS = 10_000
"""``early_stopping="auto"`` turns it on above this many training rows (scikit-learn's
``HistGradientBoosting*``)."""

_GOLDEN = 0x9E3779B97F4A7C15  # spreads consecutive seeds over the 64-bit hashes


def early_stopping_on(est, X) -> bool:
    """Whether ``est.early_stopping`` is on for training rows ``X``: "auto" as
    scikit-learn, above ``AUTO_MIN_ROWS`` rows (a Dask collection is counted:
    ``len``, from Parquet metadata where Dask can)."""
    if est.early_stopping == "auto":
        return n_rows(X) > AUTO_MIN_ROWS
    return bool(est.early_stopping)


def n_rows(X) -> int:
    """The number of rows of ``X`` (in memory or Dask)."""
    if is_dask(X) and hasattr(X, "columns"):
        return len(X)
    rows = X.shape[0]
    if is_dask(X) and not isinstance(rows, int | np.integer):
        return int(rows.compute()) if hasattr(rows, "compute") else int(X.shape[0])
    return int(rows)


def held_out(X, seed: int, fraction: float) -> np.ndarray:
    """Which rows of the in-memory block ``X`` are validation rows, shape (n,), bool.

    A scipy sparse X holds out the rows its dense form (NaN where nothing is
    stored) holds out, made dense a block of rows at a time."""
    if is_scipy_sparse(X):
        X, step = as_csr(X), dense_rows(X.shape[1])
        return np.concatenate([held_out(to_dense(X[a:a + step]), seed, fraction)
                               for a in range(0, X.shape[0], step)])
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    hashes = pd.util.hash_pandas_object(frame, index=False).to_numpy(np.uint64)
    key = np.uint64((int(seed) * _GOLDEN) & 0xFFFFFFFFFFFFFFFF)
    mixed = pd.util.hash_array(hashes ^ key)
    return (mixed >> np.uint64(11)).astype(np.float64) * 2.0 ** -53 < fraction


def split(X, y, sample_weight, fraction: float, seed: int):
    """``(X, y, w)`` for training and ``(X_val, y_val, w_val)`` held out.

    Raises
    ------
    ValueError
        For a pandas frame of sparse columns or a Dask Array of sparse chunks,
        or in-memory data of which no row (or every row) is held out.
    """
    if (checks.is_sparse(X) and not is_scipy_sparse(X)) or (
            is_dask(X) and checks.is_sparse(getattr(X, "_meta", None))):
        raise ValueError("early_stopping holds out validation rows by their feature values, "
                         "which distboost does not read from a pandas frame of sparse columns "
                         "or a Dask Array of sparse chunks; pass eval_set=[(X_val, y_val)] "
                         "instead")
    if is_dask(X):
        return _split_dask(X, y, sample_weight, fraction, seed)
    mask = held_out(X, seed, fraction)
    n_val = int(mask.sum())
    if n_val == 0 or n_val == len(mask):
        raise ValueError(
            f"validation_fraction={fraction} held out {n_val} of the {len(mask)} training rows; "
            f"early stopping needs rows on both sides: choose another validation_fraction, "
            f"or pass eval_set=[(X_val, y_val)]")
    return _take(X, y, sample_weight, ~mask), _take(X, y, sample_weight, mask)


def _take(X, y, w, rows):
    if is_scipy_sparse(X):
        def pick(a):
            return as_csr(a)[np.flatnonzero(rows)]
    else:
        pick = (lambda a: a.iloc[rows]) if hasattr(X, "iloc") else (lambda a: np.asarray(a)[rows])
    take_1d = (lambda a: a.iloc[rows]) if hasattr(y, "iloc") else (lambda a: np.asarray(a)[rows])
    return pick(X), take_1d(y), None if w is None else np.asarray(w)[rows]


def _split_dask(X, y, w, fraction, seed):
    """Training and validation collections, partition by partition (lazy)."""
    if hasattr(X, "columns"):
        mask = X.map_partitions(held_out, seed, fraction, meta=(None, bool))
    else:
        X = X.rechunk({1: -1}) if X.ndim == 2 else X
        mask = X.map_blocks(held_out, seed, fraction, drop_axis=1, dtype=bool)
    keep = ~mask
    return (X[keep], y[keep], None if w is None else w[keep]), (
        X[mask], y[mask], None if w is None else w[mask])
