"""Turning user data (numpy, pandas, one partition of a Dask collection) into
the float64 matrices the engine bins, with clear errors for bad input."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .checks import show_value
from .sparse import as_csr, is_scipy_sparse, to_dense


@dataclass
class Schema:
    """Feature names, which are categorical, and their categories."""

    feature_names: list[str]
    is_categorical: np.ndarray
    categories: dict[int, list] = field(default_factory=dict)

    @property
    def n_features(self) -> int:
        return len(self.feature_names)


def _where(partition: int | None) -> str:
    return f" in partition {partition}" if partition is not None else ""


def infer_schema(X) -> Schema:
    """Schema of a numpy array or (pandas / Dask meta) DataFrame.

    Raises
    ------
    TypeError
        For a column that is neither numeric, boolean nor categorical.
    """
    if isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        is_cat = np.zeros(len(names), bool)
        for j, (name, dtype) in enumerate(zip(names, X.dtypes)):
            if isinstance(dtype, pd.CategoricalDtype):
                is_cat[j] = True
            elif not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)):
                raise TypeError(
                    f"column {name!r} has dtype {dtype}, which is neither numeric nor categorical; "
                    f"convert it (e.g. X[{name!r}].astype('category') or pd.to_numeric) or drop it"
                )
        return Schema(names, is_cat)
    if is_scipy_sparse(X):
        return Schema([f"f{j}" for j in range(X.shape[1])], np.zeros(X.shape[1], bool))
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
    if not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
        raise TypeError(f"X has dtype {X.dtype}; expected numbers")
    return Schema([f"f{j}" for j in range(X.shape[1])], np.zeros(X.shape[1], bool))


def _plain_number(dtype) -> bool:
    """A NumPy boolean, integer or float dtype: no missing-value marker of
    pandas' own (``pd.NA``) to turn into NaN, and nothing to check."""
    return isinstance(dtype, np.dtype) and dtype.kind in "biuf"


def to_matrix(X, schema: Schema, partition: int | None = None) -> np.ndarray:
    """Float matrix of shape (n_rows, n_features); categoricals become codes.

    float32 and float64 arrays are returned as they are (not copied); every
    other input becomes float64. Values are compared as float64 everywhere.

    Codes follow ``schema.categories`` (NaN for missing or unknown values);
    categorical columns whose categories are not yet known become 0.

    A scipy sparse matrix becomes its dense matrix with NaN where it stores
    nothing (``inputs.sparse``): ``8 n_rows n_features`` bytes, so callers
    that can go by blocks of rows do (``sparse.dense_rows``).
    """
    if is_scipy_sparse(X):
        X = sparse_rows(X, schema, partition)
        return to_dense(X)
    if isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        missing = [c for c in schema.feature_names if c not in names]
        if missing:
            raise KeyError(
                f"feature column(s) {missing} missing{_where(partition)}; "
                f"the model was trained on {schema.feature_names}"
            )
        if names != schema.feature_names:
            X = X.set_axis(names, axis=1)[schema.feature_names]
        numeric = [dt for dt, cat in zip(X.dtypes, schema.is_categorical) if not cat]
        dtype = np.float32 if numeric and all(dt == np.float32 for dt in numeric) else np.float64
        if len(numeric) == schema.n_features and all(_plain_number(dt) for dt in numeric):
            return np.ascontiguousarray(X.to_numpy(dtype))
        out = np.empty((len(X), schema.n_features), dtype)
        for j, name in enumerate(schema.feature_names):
            col = X.iloc[:, j]
            if schema.is_categorical[j]:
                out[:, j] = _category_codes(col, schema.categories.get(j))
            else:
                if not (pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype)):
                    raise TypeError(
                        f"column {name!r}{_where(partition)} has dtype {col.dtype}, which is neither "
                        f"numeric nor categorical; convert or drop it"
                    )
                out[:, j] = col.to_numpy(dtype=dtype, na_value=np.nan)
        return out
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] != schema.n_features:
        raise ValueError(
            f"X{_where(partition)} has shape {X.shape}; expected {schema.n_features} features"
        )
    if X.dtype in (np.float32, np.float64):
        return X  # binned and hashed as float64 values without a copy
    try:
        return X.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"X{_where(partition)} is not numeric ({X.dtype}): {exc}") from None


def sparse_rows(X, schema: Schema, partition: int | None = None):
    """A sparse partition (or block) as a checked CSR matrix of ``schema``'s width."""
    X = as_csr(X, "X", partition)
    if X.shape[1] != schema.n_features:
        raise ValueError(f"X{_where(partition)} is a sparse matrix of shape {X.shape}; expected "
                         f"{schema.n_features} features (columns)")
    return X


def _category_codes(col: pd.Series, categories: list | None) -> np.ndarray:
    if categories is None:
        return np.zeros(len(col))
    codes = pd.Categorical(col.astype(object), categories=categories).codes.astype(np.float64)
    codes[codes < 0] = np.nan
    return codes


def observed_categories(X, schema: Schema) -> dict[int, list]:
    """Categories of each categorical column declared or present in ``X``."""
    found = {}
    for j in np.flatnonzero(schema.is_categorical):
        col = X.iloc[:, j]
        declared = list(col.cat.categories) if isinstance(col.dtype, pd.CategoricalDtype) else []
        found[int(j)] = declared + [v for v in pd.unique(col.dropna()) if v not in set(declared)]
    return found


def merge_categories(parts: list[dict[int, list]]) -> dict[int, list]:
    """Union of categories per column, in order of first appearance by partition."""
    merged: dict[int, list] = {}
    for part in parts:
        for j, cats in part.items():
            seen = merged.setdefault(j, [])
            known = set(seen)
            seen.extend(c for c in cats if c not in known)
    return merged


def to_vector(y, name: str, partition: int | None = None) -> np.ndarray:
    """A 1-D numpy array from a Series, DataFrame column or array."""
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise ValueError(f"{name}{_where(partition)} must have one column, got {y.shape[1]}")
        y = y.iloc[:, 0]
    arr = y.to_numpy() if isinstance(y, pd.Series) else np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name}{_where(partition)} must be 1-dimensional, got shape {arr.shape}")
    return arr


def check_target(y: np.ndarray, regression: bool, partition: int | None = None, offset: int = 0):
    """Reject NaN/inf (regression); missing, infinite or continuous labels
    (classification: a float label must be a whole number, as in scikit-learn)."""
    if regression:
        try:
            yf = y.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"target{_where(partition)} is not numeric (dtype {y.dtype})") from None
        bad = ~np.isfinite(yf)
    else:
        bad = pd.isna(y)
        if y.dtype.kind == "f":
            bad = bad | np.isinf(y)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"target{_where(partition)} has {int(bad.sum())} missing or infinite value(s), "
            f"the first at row {i + offset} (value {show_value(y[i])}); drop or fix those rows"
        )
    if not regression and y.dtype.kind == "f" and (y != np.round(y)).any():
        i = int(np.flatnonzero(y != np.round(y))[0])
        raise ValueError(
            f"Unknown label type: continuous. The classifier's target{_where(partition)} holds "
            f"non-integer numbers (row {i + offset}: {show_value(y[i])}); use a regressor, or encode the "
            f"classes as integers or strings"
        )


def check_weights(w: np.ndarray, partition: int | None = None) -> np.ndarray:
    w = np.asarray(w, dtype=np.float64)
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"sample_weight{_where(partition)} must be finite and >= 0; row {i} is {show_value(w[i])}"
        )
    return w


Y_COLUMN, W_COLUMN = "__distboost_target__", "__distboost_weight__"
"""Columns the target and weights travel in when joined to X's partitions (``_data``)."""
Q_COLUMN = "__distboost_qid__"
"""The column a ranker's query ids travel in when joined to X's partitions."""
U_COLUMN = "__distboost_upper__"
"""The column an AFT model's upper bounds travel in when joined to X's partitions."""


def split_joined(X, y, w, qid=None, upper=None):
    """Undo ``engine.input_plan._joined`` inside a task: (X, y, w, qid, upper) of
    one partition (``qid``: a ranker's query ids; ``upper``: an AFT model's upper
    bounds; None when not given)."""
    if isinstance(y, str) and y == Y_COLUMN:
        def column(value, name):
            return X[name] if isinstance(value, str) and value == name else value

        y, w, qid, upper = (X[Y_COLUMN], column(w, W_COLUMN), column(qid, Q_COLUMN),
                            column(upper, U_COLUMN))
        X = X.drop(columns=[c for c in (Y_COLUMN, W_COLUMN, Q_COLUMN, U_COLUMN)
                            if c in X.columns])
    return X, y, w, qid, upper
