"""One validation layer for what users hand to the estimators: hyperparameters
(checked at the start of ``fit``, before any Dask work), in-memory arrays and
frames, targets and weights, and the input of prediction.

Every refusal says what is wrong, where (parameter and value; column and row)
and what to do. Messages use scikit-learn's wording where its conformance
checks look for it ("Reshape your data", "X has 1 features, but ... is
expecting 4 features as input", "Unknown label type: continuous", ...).
scikit-learn is optional: its exception and warning classes are used as
additional bases only when it is already imported.
"""

from __future__ import annotations

import numbers
import sys
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..callbacks import TrainingCallback
from .sparse import as_csr, is_scipy_sparse


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit`` (also a scikit-learn ``NotFittedError``
    when scikit-learn is imported)."""


class InvalidParameterError(ValueError, TypeError):
    """A hyperparameter of the wrong type or out of its range."""


class DataConversionWarning(UserWarning):
    """Input was converted (e.g. a column vector y flattened)."""


_SKLEARN_TWINS: dict[type, type] = {}


def _with_sklearn_base(cls: type, sklearn_name: str) -> type:
    """``cls``, also deriving from scikit-learn's class of that name when it is loaded."""
    if "sklearn" not in sys.modules:
        return cls
    if cls not in _SKLEARN_TWINS:
        from sklearn import exceptions

        base = getattr(exceptions, sklearn_name)
        _SKLEARN_TWINS[cls] = type(cls.__name__, (cls, base), {"__module__": cls.__module__})
    return _SKLEARN_TWINS[cls]


def not_fitted(est) -> NotFittedError:
    """The error for using ``est`` before ``fit``."""
    cls = _with_sklearn_base(NotFittedError, "NotFittedError")
    return cls(f"this {type(est).__name__} is not fitted yet; call fit first")


def warn_conversion(message: str) -> None:
    warnings.warn(message, _with_sklearn_base(DataConversionWarning, "DataConversionWarning"),
                  stacklevel=4)


def show_value(value) -> str:
    """A value for a message: 1.5 rather than np.float64(1.5)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


# ----------------------------------------------------------- hyperparameters
@dataclass(frozen=True)
class Interval:
    """A number of ``kind`` ("int" or "real") between ``low`` and ``high``.

    ``closed`` is "both", "left", "right" or "neither" (which bounds belong).
    """

    kind: str
    low: float | None = None
    high: float | None = None
    closed: str = "both"

    def accepts(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        if self.kind == "int" and not isinstance(value, numbers.Integral):
            return False
        if isinstance(value, float) and np.isnan(value):
            return False
        lo_ok = self.low is None or (value >= self.low if self.closed in ("both", "left")
                                     else value > self.low)
        hi_ok = self.high is None or (value <= self.high if self.closed in ("both", "right")
                                      else value < self.high)
        return lo_ok and hi_ok

    def __str__(self) -> str:
        word = "an int" if self.kind == "int" else "a number"
        if self.low is not None and self.high is not None:
            left = "[" if self.closed in ("both", "left") else "("
            right = "]" if self.closed in ("both", "right") else ")"
            return f"{word} in {left}{self.low}, {self.high}{right}"
        if self.low is not None:
            return f"{word} {'>=' if self.closed in ('both', 'left') else '>'} {self.low}"
        if self.high is not None:
            return f"{word} {'<=' if self.closed in ('both', 'right') else '<'} {self.high}"
        return word


@dataclass(frozen=True)
class Options:
    """One of a set of strings."""

    values: tuple

    def accepts(self, value) -> bool:
        return isinstance(value, str) and value in self.values

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


class _Kind:
    def __init__(self, test, text: str):
        self.test, self.text = test, text

    def accepts(self, value) -> bool:
        return self.test(value)

    def __str__(self) -> str:
        return self.text


BOOL = _Kind(lambda v: isinstance(v, (bool, np.bool_)), "a bool")
NONE = _Kind(lambda v: v is None, "None")
RANDOM_STATE = _Kind(
    lambda v: v is None or isinstance(v, np.random.RandomState)
    or (isinstance(v, numbers.Integral) and not isinstance(v, bool) and 0 <= v < 2**32),
    "None, an int in [0, 2**32) or a numpy RandomState",
)
ANY = _Kind(lambda v: True, "anything")
VERBOSE = _Kind(lambda v: isinstance(v, (bool, np.bool_, numbers.Integral)), "a bool or an int")
N_JOBS = _Kind(lambda v: v is None or (isinstance(v, numbers.Integral)
                                       and not isinstance(v, bool) and v >= 1),
               "None or an int >= 1")
def _is_metric(m) -> bool:
    """A metric name, a function fn(y_true, raw_score) or a ``metrics.make_metric`` object."""
    return isinstance(m, str) or callable(m) or hasattr(m, "rowwise")


METRIC_NAMES = _Kind(
    lambda v: _is_metric(v) or (isinstance(v, (list, tuple)) and len(v) > 0
                                and all(_is_metric(m) for m in v)),
    "a metric name, a function, a metrics.make_metric object, or a non-empty list of them")
CALLABLE = _Kind(callable, "a function fn(y_true, raw_score) -> (gradient, hessian)")
POSITIVE_INT = Interval("int", 1, None)
NONNEG_REAL = Interval("real", 0, None)
FRACTION = Interval("real", 0, 1, "right")
MAX_BINS = Interval("int", 3, 256)
TREE_ENSEMBLE = {
    "max_depth": [POSITIVE_INT, NONE],
    "max_leaf_nodes": [Interval("int", 2, None), NONE],
    "max_bins": [MAX_BINS],
    "random_state": [RANDOM_STATE],
    "n_jobs": [N_JOBS],
    "client": [ANY],
    "out_of_core": [BOOL, Options(("auto",))],
}
"""Constraints of the parameters every tree ensemble takes."""


def validate_params(est) -> None:
    """Check every hyperparameter of ``est`` against ``est._parameter_constraints``.

    Raises
    ------
    InvalidParameterError
        Naming the estimator, the parameter, its value and what it may be.
    """
    constraints = getattr(type(est), "_parameter_constraints", {})
    for name in est.get_params(deep=False):
        allowed = constraints.get(name, [ANY])
        value = getattr(est, name)
        if any(c.accepts(value) for c in allowed):
            continue
        kinds = " or ".join(str(c) for c in allowed)
        raise InvalidParameterError(
            f"{type(est).__name__}: parameter {name} must be {kinds}; got {value!r} "
            f"({type(value).__name__}). Pass e.g. {name}={_example(allowed)!r}"
        )


def _example(allowed):
    for c in allowed:
        if isinstance(c, Options):
            return c.values[0]
        if isinstance(c, Interval):
            low = c.low if c.low is not None else 0
            value = low if c.closed in ("both", "left") else low + 1
            return int(value) if c.kind == "int" else float(value if value else 0.1)
    return None


# -------------------------------------------------------------- input data
def is_sparse(X) -> bool:
    """A scipy sparse matrix/array (or a DataFrame of pandas sparse columns)."""
    if is_scipy_sparse(X):
        return True
    if isinstance(X, pd.DataFrame):
        return any(isinstance(dt, pd.SparseDtype) for dt in X.dtypes)
    return False


def _refuse_sparse(X, what: str) -> None:
    if is_sparse(X) and what == "y":
        raise TypeError("y is a sparse matrix; pass the target as a 1-D dense array (e.g. "
                        "y.toarray().ravel())")
    if is_sparse(X):  # a pandas frame of sparse columns: its fill value is not "missing"
        raise TypeError(
            f"{what} is a pandas DataFrame with sparse columns, which distboost does not take; "
            f"pass a scipy.sparse matrix (X.sparse.to_coo().tocsr(): entries not stored are "
            f"missing values) or a dense frame (X.sparse.to_dense())"
        )


def check_columns(columns, what: str = "X") -> None:
    """Refuse column labels that cannot name features: MultiIndex columns (and
    tuples as labels), and labels that repeat, also once made text (features are named ``str(label)``,
    so int labels are fine: ``0`` is the feature ``'0'``, but not beside ``'0'``).

    Raises
    ------
    TypeError
        For MultiIndex columns or a tuple label, naming the levels or the label.
    ValueError
        Naming the repeated label and its positions.
    """
    if isinstance(columns, pd.MultiIndex):
        raise TypeError(
            f"{what} has MultiIndex columns ({columns.nlevels} levels, e.g. {columns[0]!r}); "
            f"distboost names each feature by one label: flatten them first, e.g. "
            f"X.columns = ['_'.join(map(str, c)) for c in X.columns]")
    first: dict[str, int] = {}
    for j, label in enumerate(columns):
        if isinstance(label, tuple):
            raise TypeError(
                f"{what}'s column {label!r} (position {j}) is a tuple, as a MultiIndex's are; "
                f"distboost names each feature by one label: flatten them first, e.g. "
                f"X.columns = ['_'.join(map(str, c)) if isinstance(c, tuple) else c "
                f"for c in X.columns]")
        name = str(label)
        if name not in first:
            first[name] = j
            continue
        k = first[name]
        other = columns[k]
        if type(other) is type(label) and other == label:
            count = sum(str(c) == name for c in columns)
            raise ValueError(
                f"{what} has {count} columns named {label!r} (at positions {k} and {j}"
                f"{' and more' if count > 2 else ''}); each feature needs a name of its own: "
                f"rename or drop the copies, e.g. X = X.loc[:, ~X.columns.duplicated()]")
        raise ValueError(
            f"{what}'s columns {other!r} (position {k}) and {label!r} (position {j}) both "
            f"name the feature {name!r} (features are named by str(label)); rename one")


def check_X(X, what: str = "X"):
    """In-memory X as a 2-D numeric numpy array, a pandas DataFrame or a
    scipy.sparse CSR matrix.

    Lists and array-likes become numpy arrays; object arrays holding numbers
    become float64; scipy sparse matrices and arrays of any format become
    CSR (``inputs.sparse.as_csr``: entries not stored are missing values).
    """
    if is_scipy_sparse(X):
        return as_csr(X, what)
    _refuse_sparse(X, what)
    if isinstance(X, pd.DataFrame):
        check_columns(X.columns, what)
        if X.shape[1] == 0:
            raise ValueError(f"{what} has 0 feature(s) (shape={X.shape}) while a minimum of 1 "
                             f"is required; pass at least one feature column")
        if len(X) == 0:
            raise ValueError(f"{what} has 0 sample(s) (shape={X.shape}) while a minimum of 1 "
                             f"is required")
        return X
    if X is None:
        raise ValueError(f"{what} is None; pass an array or DataFrame of shape (n_samples, "
                         f"n_features)")
    X = np.asarray(X) if not isinstance(X, pd.Series) else X.to_frame()
    if isinstance(X, pd.DataFrame):
        return check_X(X, what)
    if X.ndim != 2:
        raise ValueError(
            f"Expected a 2D array for {what}, got a {X.ndim}D array of shape {X.shape}. "
            f"Reshape your data either using array.reshape(-1, 1) if your data has a single "
            f"feature or array.reshape(1, -1) if it contains a single sample."
        )
    if np.iscomplexobj(X):
        raise ValueError(f"Complex data not supported: {what} has dtype {X.dtype}; pass real "
                         f"numbers")
    if X.shape[1] == 0:
        raise ValueError(f"{what} has 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
                         f"required; pass at least one feature column")
    if X.shape[0] == 0:
        raise ValueError(f"{what} has 0 sample(s) (shape={X.shape}) while a minimum of 1 is "
                         f"required")
    if X.dtype.kind == "O":
        X = _object_to_float(X, what)
    elif X.dtype.kind not in "biuf":
        raise TypeError(f"{what} has dtype {X.dtype}; expected numbers (use a pandas DataFrame "
                        f"with category columns for categorical features)")
    return X


def _object_to_float(X: np.ndarray, what: str) -> np.ndarray:
    try:
        return X.astype(np.float64)
    except (TypeError, ValueError) as exc:
        for i, row in enumerate(X):
            for j, value in enumerate(row):
                try:
                    float(value)
                except (TypeError, ValueError):
                    raise TypeError(
                        f"{what} has dtype object and a value that is not a number at row {i}, "
                        f"column {j}: {value!r} ({exc}); pass numbers, or a pandas DataFrame "
                        f"with category columns for categorical features"
                    ) from None
        raise


def check_y(y, n_rows: int, classifier: bool):
    """In-memory y as a 1-D array of ``n_rows`` labels or real targets.

    A column vector is flattened with a ``DataConversionWarning`` (as
    scikit-learn does); regression targets must be real numbers.
    """
    if y is None:
        raise ValueError(
            "this estimator requires y to be passed, but the target y is None; pass the "
            "target as fit(X, y)"
        )
    _refuse_sparse(y, "y")
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise ValueError(f"y must be 1-dimensional (one target column), got a frame with "
                             f"{y.shape[1]} columns")
        warn_conversion("A column-vector y was passed when a 1d array was expected; it was "
                        "flattened. Pass y as a Series or 1-D array.")
        y = y.iloc[:, 0]
    arr = y.to_numpy() if isinstance(y, pd.Series) else np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        warn_conversion("A column-vector y was passed when a 1d array was expected; it was "
                        "flattened. Pass y as a 1-D array, e.g. y.ravel().")
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {arr.shape}; "
                         f"multi-output targets are not supported")
    if len(arr) != n_rows:
        raise ValueError(f"X has {n_rows} rows but y has {len(arr)}; pass one target per row")
    if np.iscomplexobj(arr):
        raise ValueError(f"Complex data not supported: y has dtype {arr.dtype}")
    if not classifier and arr.dtype.kind not in "biuf":
        arr = _numeric_target(arr)
    return pd.Series(arr, index=y.index) if isinstance(y, pd.Series) else arr


def _numeric_target(arr: np.ndarray) -> np.ndarray:
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError):
        bad = next(i for i, v in enumerate(arr) if not _is_number(v))
        raise ValueError(
            f"a regression target must hold numbers; y at row {bad} is {show_value(arr[bad])}; "
            f"convert or drop those rows (or use a classifier for labels)"
        ) from None


def _is_number(v) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


def check_sample_weight(sample_weight, n_rows: int):
    """In-memory sample weights: 1-D, one per row, finite, >= 0, not all zero."""
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Real) and not isinstance(sample_weight, bool):
        return np.full(n_rows, float(sample_weight))
    w = sample_weight.to_numpy() if isinstance(sample_weight, pd.Series) else \
        np.asarray(sample_weight)
    if w.ndim != 1:
        raise ValueError(f"sample_weight must be 1-dimensional, got shape {w.shape}")
    if len(w) != n_rows:
        raise ValueError(f"sample_weight has {len(w)} values for {n_rows} rows of X; pass one "
                         f"weight per row")
    try:
        w = w.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"sample_weight must hold numbers, got dtype {w.dtype}") from None
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"sample_weight must be finite and >= 0; row {i} is {show_value(w[i])}")
    check_weight_total(float(w.sum()))
    return w


def check_weight_total(total: float) -> None:
    if not total > 0:
        raise ValueError(
            "Sample weights must contain at least one non-zero number: sample_weight is zero "
            "for every row, so there is nothing to fit; give some rows a positive weight"
        )


def check_fit_data(X, y, sample_weight, classifier: bool):
    """X, y and sample_weight of an in-memory ``fit``, checked and converted."""
    X = check_X(X)
    y = check_y(y, X.shape[0], classifier)
    return X, y, check_sample_weight(sample_weight, X.shape[0])


def weighted_score(pred, y, sample_weight, classifier: bool) -> float:
    """Accuracy (classifiers) or R^2 (regressors) of predictions, weighted.

    ``y`` and ``sample_weight`` are checked like ``fit``'s: one per prediction.
    """
    pred = np.asarray(pred)
    y = np.asarray(check_y(y, len(pred), classifier))
    w = check_sample_weight(sample_weight, len(pred))
    w = np.ones(len(pred)) if w is None else w
    if classifier:
        return float(np.sum(w * (pred == y)) / np.sum(w))
    y = y.astype(np.float64)
    mean = np.average(y, weights=w)
    return float(1.0 - np.sum(w * (y - pred) ** 2) / np.sum(w * (y - mean) ** 2))


def check_fit_arguments(eval_set, early_stopping_rounds, callbacks) -> None:
    """The arguments of gradient boosting's ``fit`` beside the data."""
    if eval_set is not None and not (
        isinstance(eval_set, (list, tuple))
        and all(isinstance(e, (list, tuple)) and len(e) == 2 for e in eval_set)
    ):
        raise ValueError("eval_set must be a list of (X, y) pairs, e.g. eval_set=[(X_val, y_val)]")
    if early_stopping_rounds is not None:
        if not POSITIVE_INT.accepts(early_stopping_rounds):
            raise InvalidParameterError(
                f"early_stopping_rounds must be None or an int >= 1; got "
                f"{early_stopping_rounds!r} ({type(early_stopping_rounds).__name__})")
        if not eval_set:
            raise ValueError("early_stopping_rounds needs a validation set to watch: pass "
                             "eval_set=[(X_val, y_val)] to fit, or set early_stopping=True "
                             "to hold out validation_fraction of the training rows")
    bad = [c for c in callbacks or [] if not (callable(c) or isinstance(c, TrainingCallback))]
    if bad:
        raise TypeError(f"callbacks must be distboost.callbacks.TrainingCallback objects or "
                        f"callables cb(round, train_metric, eval_metrics); "
                        f"got {bad[0]!r}")


def check_predict_X(est, X):
    """In-memory X for prediction, matching the features ``est`` was fitted on."""
    X = check_X(X)
    expected = est.n_features_in_
    if not isinstance(X, pd.DataFrame):
        if X.shape[1] != expected:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(est).__name__} is expecting "
                f"{expected} features as input; pass the columns the model was trained on"
            )
        return X
    names = getattr(est, "feature_names_in_", None)
    schema = getattr(est, "_schema", None)
    if names is None:
        if schema and [str(c) for c in X.columns] == schema.feature_names:
            return X
        # fitted on an array: columns count by position, whatever their names
        return check_predict_X(est, X.to_numpy())
    _check_no_missing_features(est, names, X.columns)
    return X


def _check_no_missing_features(est, names, columns) -> None:
    """Refuse columns that lack one of the features ``est`` was trained on."""
    missing = [n for n in names if n not in {str(c) for c in columns}]
    if missing:
        raise ValueError(
            f"X is missing feature column(s) {missing[:10]} that {type(est).__name__} was "
            f"trained on (features {list(names)[:10]}{'...' if len(names) > 10 else ''})"
        )


def check_dask_X(est, X):
    """A Dask collection for prediction: its columns (from metadata) match the
    model. Returns X; a DataFrame for a model fitted on an array gets the
    model's column names by position, as an in-memory DataFrame does."""
    ncols = X.shape[1] if X.ndim == 2 else None
    if hasattr(X, "columns"):
        check_columns(X.columns)
        names = getattr(est, "feature_names_in_", None)
        if names is not None:
            _check_no_missing_features(est, names, X.columns)
            return X
        ncols = len(X.columns)
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D Dask collection for X, got {X.ndim}D. Reshape your "
                         f"data, e.g. X.reshape(-1, 1) for a single feature")
    if isinstance(ncols, numbers.Integral) and ncols != est.n_features_in_:
        raise ValueError(
            f"X has {ncols} features, but {type(est).__name__} is expecting "
            f"{est.n_features_in_} features as input"
        )
    schema = getattr(est, "_schema", None)
    if hasattr(X, "columns") and schema and [str(c) for c in X.columns] != schema.feature_names:
        X = X.rename(columns=dict(zip(X.columns, schema.feature_names)))
    return X
