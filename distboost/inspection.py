"""Interpretation of fitted tree ensembles (ESL section 10.13).

* :func:`relative_importance` -- the relevance of each input variable, ESL
  eqs. 10.42-10.45: the squared improvements of the splits on a variable,
  summed over a tree, averaged over the trees (and over the K classes), and
  scaled so that the largest is 100.
* :func:`partial_dependence` -- the partial dependence of the model on one or
  two inputs, ESL eq. 10.47, either exactly by a weighted traversal of every
  tree ("recursion", Friedman 2001 section 8.2) or by brute force over the data
  (the mean prediction with the chosen inputs set to each grid value). Brute
  force also works on a Dask DataFrame: each partition returns per-grid-point
  sums, which are added up and divided by the total row count.
* :func:`ice_curves` -- individual conditional expectation curves, the
  per-row curves whose mean is the brute-force partial dependence.
* :func:`shap_values` and :func:`shap_interaction_values` -- exact
  path-dependent TreeSHAP (Lundberg et al. 2020, Algorithm 2) of the raw
  output, with XGBoost's ``pred_contribs`` / ``pred_interactions`` layout;
  lazy, partition by partition, on Dask collections (``distboost.estimators.shap``).
* :func:`survival_by_risk_group` -- a survival model's predicted survival
  against Kaplan-Meier by quantile group of predicted risk, on held-out data
  (``distboost.estimators.survival_check``).

Every function works on the fitted attributes of the distboost estimators
(``trees_``, ``base_score_``, ``bin_mapper_``, ``feature_names_in_``) and on
their ``decision_function``; nothing here needs a cluster unless the data is a
Dask collection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .estimators.shap import shap_interaction_values, shap_values
from .estimators.survival_check import survival_by_risk_group
from .inputs.sparse import as_csr, dense_rows, is_scipy_sparse, to_dense
from .kernels.tree import feature_totals

__all__ = [
    "IceCurves",
    "PartialDependence",
    "ice_curves",
    "importance_frame",
    "partial_dependence",
    "relative_importance",
    "shap_interaction_values",
    "shap_values",
    "supports_recursion",
    "survival_by_risk_group",
]

_IMPORTANCE_KINDS = ("gain", "split", "cover")


# --------------------------------------------------------------------------- trees
def _tree_groups(est: Any) -> list[list[Any]]:
    """The fitted trees as a list over rounds of a list over the K outputs."""
    trees = getattr(est, "trees_", None)
    if trees is None:
        raise TypeError(
            f"{type(est).__name__} has no fitted trees (`trees_`); fit it first or pass "
            "a distboost tree ensemble"
        )
    return [list(group) if isinstance(group, (list, tuple)) else [group] for group in trees]


def _n_features(est: Any) -> int:
    n = getattr(est, "n_features_in_", None)
    if n is not None:
        return int(n)
    return 1 + max(
        int(t.nodes["feature"].max(initial=-1)) for group in _tree_groups(est) for t in group
    )


def _feature_names(est: Any) -> list[str]:
    names = getattr(est, "feature_names_in_", None)
    if names is None:
        return [f"x{j}" for j in range(_n_features(est))]
    return [str(n) for n in names]


# ---------------------------------------------------------------------- importance
def relative_importance(est: Any, kind: str = "gain") -> np.ndarray:
    """Relative importance of each input variable, largest = 100.

    For ``kind="gain"`` this is ESL eq. 10.42 averaged as in eq. 10.43:
    ``I_l^2(T) = sum_t i_t^2 1(v(t) = l)`` summed over the internal nodes ``t``
    of a tree, averaged over the M trees of each output and then over the K
    outputs (eq. 10.45, multiclass), and scaled so that the largest is 100.
    The split record's ``gain`` is the reduction of the training objective
    made by the split. For squared error with ``reg_lambda=0`` it is one half
    of ESL's squared improvement ``i_t^2 = (w_l w_r / (w_l + w_r))
    (ybar_l - ybar_r)^2``, which the scaling removes; for other losses it is
    the second-order (Newton) analogue. It is not square-rooted: ESL quotes
    the averaged squares.

    Parameters
    ----------
    est : fitted distboost tree ensemble
        Anything with ``trees_`` (list over rounds of list over outputs of
        trees whose ``nodes`` record array has ``feature``, ``gain``,
        ``cover`` and ``is_leaf``).
    kind : {"gain", "split", "cover"}
        ``"gain"``: total squared improvement (ESL 10.42); ``"split"``: the
        number of splits on the variable; ``"cover"``: the total cover (sum
        of hessians) of the nodes split on the variable.

    Returns
    -------
    importance : ndarray of shape (n_features,), dtype float64
        Largest value 100; all zeros if the trees have no split.
    """
    if kind not in _IMPORTANCE_KINDS:
        raise ValueError(f"kind must be one of {_IMPORTANCE_KINDS}, got {kind!r}")
    groups = _tree_groups(est)
    n_features = _n_features(est)
    n_outputs = max(len(g) for g in groups) if groups else 1
    total = np.zeros(n_features)
    for k in range(n_outputs):
        trees_k = [g[k] for g in groups if len(g) > k]
        per_tree = [feature_totals(t.nodes, n_features, kind) for t in trees_k]
        total += np.mean(per_tree, axis=0) if per_tree else 0.0  # eq. 10.43
    total /= n_outputs  # eq. 10.45
    top = total.max(initial=0.0)
    return total * (100.0 / top) if top > 0 else total


def importance_frame(est: Any) -> pd.DataFrame:
    """All three importances in one table, most important (by gain) first.

    Returns
    -------
    DataFrame
        Index: feature names; columns ``gain``, ``split``, ``cover`` (each
        scaled so its largest is 100) and ``n_splits`` (raw split counts).
    """
    groups = _tree_groups(est)
    n_features = _n_features(est)
    counts = sum(feature_totals(t.nodes, n_features, "split") for g in groups for t in g)
    frame = pd.DataFrame(
        {kind: relative_importance(est, kind) for kind in _IMPORTANCE_KINDS},
        index=pd.Index(_feature_names(est), name="feature"),
    )
    frame["n_splits"] = np.asarray(counts, dtype=np.int64)
    return frame.sort_values("gain", ascending=False, kind="stable")


# ------------------------------------------------------------------ feature / grid
def _resolve_features(est: Any, features: Any) -> tuple[int, ...]:
    """Column indices of ``features`` (an index, a name, or a pair of them)."""
    if isinstance(features, (int, np.integer, str)):
        features = (features,)
    names = _feature_names(est)
    out = []
    for f in features:
        if isinstance(f, str):
            if f not in names:
                raise KeyError(f"unknown feature {f!r}; the model's features are {names}")
            out.append(names.index(f))
        else:
            if not 0 <= int(f) < len(names):
                raise IndexError(f"feature index {f} out of range 0..{len(names) - 1}")
            out.append(int(f))
    if not 1 <= len(out) <= 2:
        raise ValueError(f"partial dependence takes one or two features, got {len(out)}")
    return tuple(out)


def _categories(est: Any, j: int) -> list | None:
    mapper = getattr(est, "bin_mapper_", None)
    if mapper is None:
        return None
    is_cat = getattr(mapper, "is_categorical_", None)
    if is_cat is None or not bool(np.asarray(is_cat)[j]):
        return None
    return list(mapper.categories_[j])


def _is_dask(X: Any) -> bool:
    return hasattr(X, "dask") and hasattr(X, "npartitions")


def _column(X: Any, j: int, name: str) -> np.ndarray | pd.Series:
    if isinstance(X, pd.DataFrame):
        return X[name] if name in X.columns else X.iloc[:, j]
    return np.asarray(X)[:, j]


def _sample_partition(part: pd.DataFrame, n_rows: int, random_state: int) -> pd.DataFrame:
    return part.sample(n=min(len(part), n_rows), random_state=random_state)


def _sample_rows(X: Any, n_rows: int, random_state: int = 0) -> Any:
    """At most about ``n_rows`` rows of ``X`` (a local frame or array)."""
    if _is_dask(X):
        per_part = max(1, n_rows // max(1, X.npartitions))
        return X.map_partitions(_sample_partition, per_part, random_state).compute()
    if is_scipy_sparse(X):  # the sampled rows made dense, NaN where nothing is stored
        rows = _sample_rows(np.arange(X.shape[0]), n_rows, random_state)
        return to_dense(as_csr(X)[rows])
    if len(X) <= n_rows:
        return X
    idx = np.sort(np.random.default_rng(random_state).choice(len(X), n_rows, replace=False))
    return X.iloc[idx] if isinstance(X, pd.DataFrame) else np.asarray(X)[idx]


def _numeric_grid(values: np.ndarray, resolution: int, percentiles: tuple) -> np.ndarray:
    values = values[np.isfinite(values)]
    if values.size == 0:
        raise ValueError("cannot build a partial dependence grid: the feature is all missing")
    unique = np.unique(values)
    if unique.size <= resolution:
        return unique.astype(np.float64)
    lo, hi = np.quantile(values, percentiles)
    if lo == hi:
        lo, hi = unique[0], unique[-1]
    return np.linspace(lo, hi, resolution)


@dataclass
class _Axis:
    """One grid axis: values as the user sees them and as the trees see them."""

    feature: int
    name: str
    values: np.ndarray  # labels for categorical axes
    codes: np.ndarray  # float64 inputs to the trees (category codes if categorical)
    deciles: np.ndarray | None
    categorical: bool


def _make_axis(est, sample, j, resolution, percentiles, grid) -> _Axis:
    name = _feature_names(est)[j]
    cats = _categories(est, j)
    col = _column(sample, j, name)
    if cats is not None:
        if grid is None:
            present = pd.Series(col).dropna().unique()
            grid = [c for c in cats if c in set(present)] or cats
        values = np.asarray(grid, dtype=object)
        lookup = {c: i for i, c in enumerate(cats)}
        codes = np.array([lookup.get(v, np.nan) for v in values], dtype=np.float64)
        return _Axis(j, name, values, codes, None, True)
    col = np.asarray(col, dtype=np.float64)
    values = (
        np.asarray(grid, dtype=np.float64)
        if grid is not None
        else _numeric_grid(col, resolution, percentiles)
    )
    finite = col[np.isfinite(col)]
    deciles = np.quantile(finite, np.linspace(0.1, 0.9, 9)) if finite.size else None
    return _Axis(j, name, values, values.copy(), deciles, False)


# ------------------------------------------------------------------------ results
@dataclass
class PartialDependence:
    """Partial dependence of the model's raw output on one or two features.

    Attributes
    ----------
    features : tuple of int
        Column indices.
    feature_names : list of str
    grid_values : list of ndarray
        One array per feature: the grid (category labels for categorical
        features).
    average : ndarray of shape (K, n_0) or (K, n_0, n_1)
        The partial dependence ``f_S(x_S)`` of ESL eq. 10.47 for each of the
        K raw outputs (the decision function: log-odds for binary
        classification, one score per class for multiclass, the prediction
        for regression).
    deciles : list of (ndarray or None)
        Deciles of each numeric feature in the data, for a rug.
    categorical : list of bool
    method : str
        ``"recursion"`` or ``"brute"``.
    """

    features: tuple[int, ...]
    feature_names: list[str]
    grid_values: list[np.ndarray]
    average: np.ndarray
    deciles: list[np.ndarray | None] = field(default_factory=list)
    categorical: list[bool] = field(default_factory=list)
    method: str = "recursion"


@dataclass
class IceCurves:
    """Individual conditional expectation curves for one feature.

    Attributes
    ----------
    feature, feature_name : int, str
    grid_values : ndarray of shape (n_grid,)
    curves : ndarray of shape (K, n_rows, n_grid)
        The raw output of each sampled row with the feature set to each grid
        value (minus the row's value at the first grid point if centered).
    average : ndarray of shape (K, n_grid)
        The mean of the curves: brute-force partial dependence on the sample.
    deciles : ndarray or None
    categorical : bool
    centered : bool
    """

    feature: int
    feature_name: str
    grid_values: np.ndarray
    curves: np.ndarray
    average: np.ndarray
    deciles: np.ndarray | None
    categorical: bool
    centered: bool


# ---------------------------------------------------------------------- recursion
def _goes_left(node: np.void, bitsets: np.ndarray | None, x: np.ndarray) -> np.ndarray:
    """Boolean mask: which of the values ``x`` the split sends to the left."""
    missing = np.isnan(x)
    if node["is_categorical"]:
        codes = np.where(missing, 0, x).astype(np.int64)
        unseen = missing | (codes < 0) | (codes >= 64 * bitsets.shape[1])
        codes = np.clip(codes, 0, 64 * bitsets.shape[1] - 1)
        words = bitsets[node["cat_index"], codes // 64]
        left = ((words >> (codes % 64).astype(np.uint64)) & np.uint64(1)).astype(bool)
        return np.where(unseen, bool(node["missing_left"]), left)
    with np.errstate(invalid="ignore"):
        left = x <= node["threshold"]
    return np.where(missing, bool(node["missing_left"]), left)


def tree_partial_dependence(tree: Any, features: Sequence[int], grid: np.ndarray) -> np.ndarray:
    """Partial dependence of one tree by weighted traversal (ESL eq. 10.47).

    Friedman (2001, section 8.2): start at the root with weight 1; at a split
    on a target variable follow the branch the grid point takes; at any other
    split follow both branches, each weighted by the fraction of the node's
    training rows (``count``) that went that way; the partial dependence is
    the weighted sum of the leaf values reached.

    Parameters
    ----------
    tree : distboost Tree
        Has ``nodes`` (node record array) and ``cat_bitsets``.
    features : sequence of int
        The target variables' column indices, in the order of ``grid``'s columns.
    grid : ndarray of shape (n_points, len(features)), dtype float64
        Grid points (category codes for categorical variables).

    Returns
    -------
    ndarray of shape (n_points,)
    """
    nodes = tree.nodes
    bitsets = getattr(tree, "cat_bitsets", None)
    position = {f: i for i, f in enumerate(features)}
    out = np.zeros(grid.shape[0])
    stack = [(0, np.ones(grid.shape[0]))]
    while stack:
        node_id, weight = stack.pop()
        node = nodes[node_id]
        if node["is_leaf"]:
            out += weight * node["value"]
            continue
        left, right = int(node["left"]), int(node["right"])
        if int(node["feature"]) in position:
            mask = _goes_left(node, bitsets, grid[:, position[int(node["feature"])]])
            w_left, w_right = weight * mask, weight * ~mask
        else:
            n_left, n_right = float(nodes[left]["count"]), float(nodes[right]["count"])
            frac = n_left / (n_left + n_right) if n_left + n_right > 0 else 0.5
            w_left, w_right = weight * frac, weight * (1.0 - frac)
        for child, w in ((left, w_left), (right, w_right)):
            if w.any():
                stack.append((child, w))
    return out


def _recursion(est: Any, features: tuple[int, ...], grid: np.ndarray) -> np.ndarray:
    """Raw partial dependence of the ensemble, shape (K, n_points)."""
    groups = _tree_groups(est)
    base = np.atleast_1d(np.asarray(getattr(est, "base_score_", 0.0), dtype=np.float64))
    n_outputs = max(len(base), max((len(g) for g in groups), default=1))
    out = np.zeros((n_outputs, grid.shape[0])) + base.reshape(-1, 1)
    for group in groups:
        for k, tree in enumerate(group):
            out[k] += tree_partial_dependence(tree, features, grid)
    return out


# -------------------------------------------------------------------- brute force
def _raw_output(est: Any, X: Any) -> np.ndarray:
    """Decision function as shape (n, K); class probabilities for classifiers
    without one; else the prediction."""
    if hasattr(est, "decision_function"):
        raw = est.decision_function(X)
    elif hasattr(est, "predict_proba"):
        raw = est.predict_proba(X)
    else:
        raw = est.predict(X)
    raw = np.asarray(raw, dtype=np.float64)
    return raw.reshape(len(raw), -1)


def _set_columns(X: Any, axes: list[_Axis], point: Sequence) -> Any:
    """A copy of the local frame/array with the target columns set to ``point``."""
    if isinstance(X, pd.DataFrame):
        X = X.copy()
        for axis, value in zip(axes, point):
            col = axis.name if axis.name in X.columns else X.columns[axis.feature]
            if isinstance(X[col].dtype, pd.CategoricalDtype):
                X[col] = pd.Categorical([value] * len(X), dtype=X[col].dtype)
            else:
                X[col] = value
        return X
    X = np.array(X, dtype=np.float64, copy=True)
    for axis, value in zip(axes, point):
        X[:, axis.feature] = value
    return X


def _grid_points(axes: list[_Axis], attr: str) -> list[tuple]:
    arrays = [getattr(a, attr) for a in axes]
    if len(arrays) == 1:
        return [(v,) for v in arrays[0]]
    return [(u, v) for u in arrays[0] for v in arrays[1]]


def _partition_sums(est: Any, part: Any, axes: list[_Axis], points: list) -> np.ndarray:
    """Per-grid-point sums of the raw output over one partition: (n_points + 1, K).

    The last row holds the partition's row count (in every column).
    """
    n_points = len(points)
    if len(part) == 0:
        return np.zeros((n_points + 1, 1))
    sums = [_raw_output(est, _set_columns(part, axes, p)).sum(axis=0) for p in points]
    sums = np.vstack(sums)
    return np.vstack([sums, np.full((1, sums.shape[1]), float(len(part)))])


def _add_sums(parts: list[np.ndarray]) -> np.ndarray:
    width = max(p.shape[1] for p in parts)
    total = np.zeros((parts[0].shape[0], width))
    for p in parts:
        total[:-1] += p[:-1]
        total[-1] = total[-1] + p[-1, 0]
    return total


def _brute(est: Any, X: Any, axes: list[_Axis]) -> np.ndarray:
    """Mean raw output over X at each grid point, shape (K, n_points)."""
    points = _grid_points(axes, "values")
    if _is_dask(X):
        import dask

        est_key = dask.delayed(est, pure=True)
        task = dask.delayed(_partition_sums, pure=True)
        parts = [
            task(est_key, part, axes, points, dask_key_name=("distboost-partial-dependence", i))
            for i, part in enumerate(X.to_delayed())
        ]
        total = dask.delayed(_add_sums)(parts).compute()
    elif is_scipy_sparse(X):  # dense blocks of rows, NaN where nothing is stored
        X, step = as_csr(X), dense_rows(X.shape[1])
        total = _add_sums([_partition_sums(est, to_dense(X[a:a + step]), axes, points)
                           for a in range(0, X.shape[0], step)])
    else:
        total = _partition_sums(est, X, axes, points)
    n_rows = total[-1, 0]
    if n_rows == 0:
        raise ValueError("cannot compute partial dependence on empty data")
    return (total[:-1] / n_rows).T


# ------------------------------------------------------------------------ public
def _tree_inputs(est: Any, rows: Any) -> np.ndarray:
    """Rows as the trees see them: float64, category codes for categorical columns."""
    if not isinstance(rows, pd.DataFrame):
        return np.asarray(rows, dtype=np.float64)
    columns = []
    for j, name in enumerate(_feature_names(est)):
        col = rows[name] if name in rows.columns else rows.iloc[:, j]
        cats = _categories(est, j)
        if cats is None:
            columns.append(col.to_numpy(dtype=np.float64, na_value=np.nan))
        else:
            lookup = {c: i for i, c in enumerate(cats)}
            columns.append(np.array([lookup.get(v, np.nan) for v in col], dtype=np.float64))
    return np.column_stack(columns)


def supports_recursion(est: Any, X: Any = None, n_rows: int = 20) -> bool:
    """Whether the model is ``base_score_ + sum of its trees`` (ESL eq. 10.47's
    recursion is exact only then).

    Checked on the attributes and, given data ``X`` (local), on its first
    ``n_rows`` rows: the trees' sum must reproduce the raw output
    (``decision_function``; ``predict`` for regressors, which have none).
    Forests (averages) and AdaBoost (weighted votes) fail it, so they get
    brute force.
    """
    needed = ("trees_", "base_score_")  # the raw output: decision_function, else predict
    if any(getattr(est, a, None) is None for a in needed):
        return False
    if X is None or _is_dask(X):
        return True
    rows = X.iloc[:n_rows] if isinstance(X, pd.DataFrame) else np.asarray(X)[:n_rows]
    if len(rows) == 0:
        return True
    try:
        inputs = _tree_inputs(est, rows)
        summed = _recursion(est, tuple(range(inputs.shape[1])), inputs)
        raw = _raw_output(est, rows).T
    except (ValueError, IndexError, KeyError, TypeError):
        return False
    return summed.shape == raw.shape and bool(np.allclose(summed, raw, rtol=1e-9, atol=1e-9))


_supports_recursion = supports_recursion


def partial_dependence(
    est: Any,
    X: Any,
    features: int | str | Sequence[int | str],
    *,
    grid_resolution: int = 20,
    percentiles: tuple[float, float] = (0.05, 0.95),
    method: str = "auto",
    grid: Sequence[Sequence] | None = None,
    sample_size: int = 20_000,
) -> PartialDependence:
    """Partial dependence of the raw model output on one or two features.

    ESL eq. 10.47: ``f_S(x_S) = (1/N) sum_i f(x_S, x_iC)``, the model averaged
    over the data with the variables ``S`` held at ``x_S``.

    Parameters
    ----------
    est : fitted distboost estimator
    X : ndarray, DataFrame, scipy sparse matrix (entries not stored are missing) or dask DataFrame
        The data: the grid (and its deciles) is taken from it (from a sample
        of at most ``sample_size`` rows); brute force averages over all of it,
        partition by partition for a Dask DataFrame.
    features : int, str, or a sequence of one or two of them
    grid_resolution : int
        Grid points per numeric feature (fewer if it has fewer distinct values).
    percentiles : (float, float)
        The numeric grid spans these quantiles of the feature.
    method : {"auto", "recursion", "brute"}
        ``"recursion"``: exact weighted traversal of the trees using the
        training row counts of the nodes (Friedman 2001 section 8.2); it
        averages over the *training* data whatever ``X`` is. ``"brute"``: the
        mean of ``decision_function`` over ``X``. ``"auto"`` uses recursion
        when the estimator is a boosted tree ensemble, else brute force.
    grid : sequence of arrays, optional
        Explicit grid values per feature (category labels for categorical
        features).
    sample_size : int
        Rows sampled from X to build the grid.

    Returns
    -------
    PartialDependence
    """
    idx = _resolve_features(est, features)
    if method not in ("auto", "recursion", "brute"):
        raise ValueError(f"method must be 'auto', 'recursion' or 'brute', got {method!r}")
    sample = _sample_rows(X, sample_size)
    additive = supports_recursion(est, sample)
    if method == "auto":
        method = "recursion" if additive else "brute"
    elif method == "recursion" and not additive:
        raise ValueError(
            f"method='recursion' needs a model that is the sum of its trees (gradient "
            f"boosting); {type(est).__name__} is not: use method='brute'"
        )
    grids = list(grid) if grid is not None else [None] * len(idx)
    axes = [_make_axis(est, sample, j, grid_resolution, percentiles, g) for j, g in zip(idx, grids)]
    if method == "recursion":
        points = np.array(_grid_points(axes, "codes"), dtype=np.float64)
        flat = _recursion(est, idx, points)
    else:
        flat = _brute(est, X, axes)
    shape = (flat.shape[0],) + tuple(len(a.values) for a in axes)
    return PartialDependence(
        features=idx,
        feature_names=[a.name for a in axes],
        grid_values=[a.values for a in axes],
        average=flat.reshape(shape),
        deciles=[a.deciles for a in axes],
        categorical=[a.categorical for a in axes],
        method=method,
    )


def ice_curves(
    est: Any,
    X: Any,
    feature: int | str,
    *,
    grid_resolution: int = 20,
    percentiles: tuple[float, float] = (0.05, 0.95),
    n_samples: int = 100,
    centered: bool = False,
    random_state: int = 0,
    grid: Sequence | None = None,
) -> IceCurves:
    """Individual conditional expectation (ICE) curves (Goldstein et al. 2015).

    Each sampled row's raw output as one feature sweeps its grid, the others
    held at the row's values; their mean is the brute-force partial
    dependence (ESL eq. 10.47) on the sample.

    Parameters
    ----------
    est : fitted distboost estimator
    X : ndarray, DataFrame, scipy sparse matrix (entries not stored are missing) or dask DataFrame
    feature : int or str
    grid_resolution, percentiles
        As in :func:`partial_dependence`.
    n_samples : int
        Number of rows (curves) drawn from X.
    centered : bool
        Subtract each curve's value at the first grid point ("c-ICE").
    random_state : int
    grid : sequence, optional
        Explicit grid values (e.g. those of a partial dependence result).

    Returns
    -------
    IceCurves
    """
    (j,) = _resolve_features(est, feature)
    rows = _sample_rows(X, n_samples, random_state)
    axis = _make_axis(est, rows, j, grid_resolution, percentiles, grid)
    curves = np.stack(
        [_raw_output(est, _set_columns(rows, [axis], (v,))) for v in axis.values], axis=-1
    )  # (n_rows, K, n_grid)
    curves = np.transpose(curves, (1, 0, 2))
    if centered:
        curves = curves - curves[:, :, :1]
    return IceCurves(
        feature=j,
        feature_name=axis.name,
        grid_values=axis.values,
        curves=curves,
        average=curves.mean(axis=1),
        deciles=axis.deciles,
        categorical=axis.categorical,
        centered=centered,
    )
