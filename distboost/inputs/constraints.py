"""Monotone and interaction constraints: scikit-learn's ``monotonic_cst`` and
``interaction_cst``, resolved against the training columns.

* ``monotonic_cst``: -1 / 0 / +1 per feature (an array in column order, or a
  dict by column name): the model must be non-increasing / free /
  non-decreasing in that feature, all other inputs held fixed. The grower
  enforces it exactly by bounds on node values (XGBoost's
  ``TreeEvaluator``, scikit-learn's grower): a split whose children's values
  break the order is refused, children inherit the parent's bounds cut at
  the midpoint of the two children's values, and every value is clipped to
  its bounds (``grower``, ``splitting``; ``propagate_bounds`` for leaves set
  afterwards by a line search). Categorical features cannot be constrained.
* ``interaction_cst``: a sequence of feature sets (indices or names), or
  "pairwise" / "no_interactions". Every root-to-leaf path uses features of
  one set only; features listed nowhere form one more set. Sets may overlap
  (``[{0, 1}, {1, 2}]``: 0 and 2 never share a path), as in scikit-learn.

Resolution happens at the start of ``fit``, once the columns are known and
before any Dask work; every refusal names the parameter, the value and what
to do.
"""

from __future__ import annotations

import difflib
import numbers
from collections.abc import Mapping

import numpy as np

from .checks import InvalidParameterError, show_value

INTERACTION_SHORTHANDS = ("pairwise", "no_interactions")


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _direction(value, where: str) -> int:
    """-1, 0 or +1 from ``value`` (an integral number), else an error naming ``where``."""
    ok = (isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
          and value in (-1, 0, 1))
    if not ok:
        raise InvalidParameterError(
            f"{where} must be -1 (decreasing), 0 (free) or 1 (increasing); got "
            f"{show_value(value)}")
    return int(value)


def check_monotonic_cst(value, owner: str) -> None:
    """What can be checked before the columns are known: the kind and the values."""
    if value is None:
        return
    if isinstance(value, Mapping):
        for key, v in value.items():
            if not isinstance(key, str):
                raise InvalidParameterError(
                    f"{owner}: monotonic_cst as a dict maps column names to -1/0/1; got the key "
                    f"{key!r} ({type(key).__name__}); use an array in column order for positions")
            _direction(v, f"{owner}: monotonic_cst[{key!r}]")
        return
    if isinstance(value, (str, bytes)) or np.ndim(value) != 1:
        raise InvalidParameterError(
            f"{owner}: monotonic_cst must be None, an array of -1/0/1 (one per feature) or a "
            f"dict by column name; got {value!r}")
    for j, v in enumerate(value):
        _direction(v, f"{owner}: monotonic_cst[{j}]")


def monotonic_constraints(value, feature_names, named: bool, is_categorical,
                          owner: str) -> np.ndarray | None:
    """``monotonic_cst`` as an int8 array in column order; None if no feature is constrained.

    Parameters
    ----------
    value : array-like, dict or None
    feature_names : list of str
    named : bool
        Whether the columns have names of the user's (a DataFrame), which a dict needs.
    is_categorical : ndarray of shape (n_features,), bool
    owner : str
        The estimator's name, for messages.
    """
    check_monotonic_cst(value, owner)
    if value is None:
        return None
    n = len(feature_names)
    if isinstance(value, Mapping):
        if not named:
            raise InvalidParameterError(
                f"{owner}: monotonic_cst is a dict by column name, but X has no column names "
                f"(a numpy array); pass an array of -1/0/1 in column order, or a DataFrame")
        _known_names(list(value), feature_names, "monotonic_cst", owner)
        cst = np.array([value.get(name, 0) for name in feature_names], np.int8)
    else:
        cst = np.array([int(v) for v in value], np.int8)
        if len(cst) != n:
            raise InvalidParameterError(
                f"{owner}: monotonic_cst has {len(cst)} value(s) but X has {n} feature(s) "
                f"{_short(feature_names)}; give one of -1/0/1 per feature, or a dict by name")
    categorical = [feature_names[j] for j in np.flatnonzero(cst != 0) if is_categorical[j]]
    if categorical:
        raise InvalidParameterError(
            f"{owner}: monotonic_cst constrains categorical feature(s) {categorical}; "
            f"categories have no order, so only numeric features can be monotone: set 0 there")
    return cst if cst.any() else None


def check_interaction_cst(value, owner: str) -> None:
    """What can be checked before the columns are known: the kind of value."""
    if value is None or (isinstance(value, str) and value in INTERACTION_SHORTHANDS):
        return
    bad = isinstance(value, (str, bytes, Mapping)) or not _iterable(value) or any(
        isinstance(s, (str, bytes, Mapping)) or not _iterable(s) for s in value)
    if bad:
        raise InvalidParameterError(
            f"{owner}: interaction_cst must be None, 'pairwise', 'no_interactions' or a sequence "
            f"of feature sets (lists, tuples or sets of column indices or names), e.g. "
            f"[[0, 1], ['x2', 'x3']]; got {value!r}")


def _iterable(value) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True


def interaction_constraints(value, feature_names, named: bool, owner: str) -> np.ndarray | None:
    """``interaction_cst`` as a bool matrix (n_sets, n_features); None without constraints.

    The features no set lists form one more set (scikit-learn's rule).
    """
    check_interaction_cst(value, owner)
    if value is None:
        return None
    n = len(feature_names)
    if value == "no_interactions":
        value = [[j] for j in range(n)]
    elif value == "pairwise":
        value = [[i, j] for i in range(n) for j in range(i + 1, n)] or [[0]]
    sets = []
    for k, group in enumerate(value):
        members = [_feature_index(f, feature_names, named, f"interaction_cst[{k}]", owner)
                   for f in group]
        if not members:
            raise InvalidParameterError(
                f"{owner}: interaction_cst[{k}] is empty; every set needs at least one feature")
        twice = sorted({feature_names[j] for j in members if members.count(j) > 1})
        if twice:
            raise InvalidParameterError(
                f"{owner}: interaction_cst[{k}] lists feature(s) {twice} more than once (by "
                f"index and by name?); list each feature once per set")
        mask = np.zeros(n, bool)
        mask[members] = True
        sets.append(mask)
    rest = ~np.any(sets, axis=0)
    if rest.any():
        sets.append(rest)
    return np.array(sets)


def _feature_index(feature, feature_names, named: bool, where: str, owner: str) -> int:
    if _is_int(feature):
        if not 0 <= feature < len(feature_names):
            raise InvalidParameterError(
                f"{owner}: {where} holds feature index {feature}, outside [0, "
                f"{len(feature_names) - 1}] for X's {len(feature_names)} features")
        return int(feature)
    if isinstance(feature, str):
        if not named:
            raise InvalidParameterError(
                f"{owner}: {where} names feature {feature!r}, but X has no column names (a "
                f"numpy array); use column indices, or a DataFrame")
        _known_names([feature], feature_names, where, owner)
        return feature_names.index(feature)
    raise InvalidParameterError(
        f"{owner}: {where} holds {feature!r} ({type(feature).__name__}); use column indices "
        f"or names")


def _known_names(names, feature_names, where: str, owner: str) -> None:
    unknown = [n for n in names if n not in feature_names]
    if unknown:
        close = difflib.get_close_matches(str(unknown[0]), feature_names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise InvalidParameterError(
            f"{owner}: {where} names unknown feature(s) {unknown[:5]}{hint}; X's columns are "
            f"{_short(feature_names)}")


def _short(names) -> str:
    names = list(names)
    return str(names[:8])[:-1] + (", ...]" if len(names) > 8 else "]")
