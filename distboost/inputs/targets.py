"""Multi-output targets: a y of k > 1 columns (numpy, pandas or Dask), checked.

Every refusal names the column (its name in a DataFrame, else its index),
the row and the value, and says what to do.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..trees.multi_output import check_binary_labels
from .checks import show_value


def n_targets(y) -> int | None:
    """k when ``y`` has k > 1 columns (2-D numpy, pandas or Dask), else None."""
    if y is None:
        return None
    if isinstance(y, pd.Series) or getattr(y, "ndim", None) == 1:
        return None
    columns = getattr(y, "columns", None)
    if columns is not None:
        return len(columns) if len(columns) > 1 else None
    shape = getattr(y, "shape", None)
    if shape is None:
        try:
            shape = np.shape(y)
        except (TypeError, ValueError):  # ragged lists: check_y says what is wrong
            return None
    return int(shape[1]) if len(shape) == 2 and shape[1] is not None and shape[1] > 1 else None


def column_names(y, k: int) -> list[str]:
    """How refusals name ``y``'s columns: a DataFrame's names, else "column j"."""
    columns = getattr(y, "columns", None)
    if columns is not None:
        return [f"column {c!r}" for c in columns]
    return [f"column {j}" for j in range(k)]


def _where(partition) -> str:
    return "" if partition is None else f" in partition {partition}"


def to_targets(y, partition=None) -> np.ndarray:
    """A k-column target as a float64 array of shape (n, k).

    Raises TypeError naming a column that is not numeric (booleans count as 0/1).
    """
    names = column_names(y, n_targets(y) or 1)
    if isinstance(y, pd.DataFrame):
        for name, dtype in zip(names, y.dtypes):
            if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)):
                raise TypeError(
                    f"the target's {name}{_where(partition)} is not numeric (dtype {dtype}); a "
                    f"multi-output target holds numbers only: encode or drop that column")
        arr = y.to_numpy()
    else:
        arr = np.asarray(y)
    if arr.dtype.kind not in "biuf":
        for j, name in enumerate(names):
            try:
                arr[:, j].astype(np.float64)
            except (TypeError, ValueError):
                raise TypeError(
                    f"the target's {name}{_where(partition)} is not numeric (dtype "
                    f"{arr.dtype}, e.g. {show_value(arr[0, j])}); a multi-output target holds "
                    f"numbers only: encode or drop that column") from None
    return np.ascontiguousarray(arr, dtype=np.float64)


def check_targets(y: np.ndarray, names, classifier: bool, partition=None, offset: int = 0):
    """Refuse NaN or infinite targets and, for multi-label classification,
    labels other than 0 and 1; each refusal names the column, the row and the value."""
    bad = ~np.isfinite(y)
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise ValueError(
            f"the target's {names[j]}{_where(partition)} has {int(bad[:, j].sum())} missing or "
            f"infinite value(s), the first at row {i + offset} (value {show_value(y[i, j])}); "
            f"drop or fix those rows")
    if classifier:
        check_binary_labels(y, names, _where(partition), offset)


def check_multi_fit_target(y, n_rows: int, classifier: bool, k_train: int | None = None,
                           what: str = "y") -> np.ndarray:
    """An in-memory k-column target of ``fit``, checked: (n_rows, k) float64;
    ``k_train``: the training target's k, which an evaluation set's must match."""
    k = n_targets(y)
    check_same_targets(k, k_train, what)
    arr = to_targets(y)
    if len(arr) != n_rows:
        raise ValueError(f"X has {n_rows} rows but y has {len(arr)}; pass one row of targets "
                         f"per row of X")
    check_targets(arr, column_names(y, k), classifier)
    return arr


def check_same_targets(k, k_train: int | None, what: str) -> None:
    """An evaluation set's target has the training target's k columns."""
    if k_train is not None and k != k_train:
        raise ValueError(f"{what} has {k or 1} column(s) but the training target has {k_train}; "
                         f"pass the same targets")


def partition_targets(y, partition) -> np.ndarray:
    """A partition's k-column target (on a worker), checked for NaN and infinities."""
    k = n_targets(y)
    arr = to_targets(y, partition)
    check_targets(arr, column_names(y, k), False, partition)
    return arr
