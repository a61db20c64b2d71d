"""Bounds of node values under monotone constraints (XGBoost's ``TreeEvaluator``,
scikit-learn's grower): the grower cuts a constrained split's children at the
midpoint of their values, and ``propagate_bounds`` does the same for leaves set
afterwards by a line search. The user-facing parameters are resolved in
``distboost.inputs.constraints``."""

from __future__ import annotations

import numpy as np


def child_bounds(lower: float, upper: float, constraint: int, left_value: float,
                 right_value: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """Bounds of the (left, right) children of a split on a feature with ``constraint``.

    The children's values are clipped to the parent's [lower, upper]; an
    increasing constraint puts the left child below their midpoint and the
    right child above it (a decreasing one the other way round), XGBoost's
    ``TreeEvaluator::AddSplit``. An unconstrained split passes the bounds on.
    """
    if constraint == 0:
        return (lower, upper), (lower, upper)
    mid = 0.5 * (min(max(left_value, lower), upper) + min(max(right_value, lower), upper))
    if constraint > 0:
        return (lower, mid), (mid, upper)
    return (mid, upper), (lower, mid)


def propagate_bounds(nodes: np.ndarray, values: np.ndarray, monotonic: np.ndarray) -> np.ndarray:
    """Bounds of every node of a tree from the values its nodes would take.

    For leaves set after the tree is grown (the line search): ``values`` are
    the line search's value of each node (NaN where a node has no rows: it
    takes its sibling's), and the bounds follow ``child_bounds`` from the root
    down. Each leaf value clipped to its bounds makes the tree monotone in
    every constrained feature, whatever the values.

    Parameters
    ----------
    nodes : ndarray of NODE_DTYPE
    values : ndarray of shape (n_nodes,), float64
    monotonic : ndarray of shape (n_features,), int8

    Returns
    -------
    ndarray of shape (n_nodes, 2): (lower, upper) per node
    """
    bounds = np.empty((len(nodes), 2))
    bounds[0] = -np.inf, np.inf
    for i in range(len(nodes)):  # parents come before their children
        if nodes["is_leaf"][i]:
            continue
        left, right = nodes["left"][i], nodes["right"][i]
        v_l, v_r = values[left], values[right]
        v_l, v_r = (v_r if np.isnan(v_l) else v_l), (v_l if np.isnan(v_r) else v_r)
        c = 0 if np.isnan(v_l) else int(monotonic[nodes["feature"][i]])
        bounds[left], bounds[right] = child_bounds(*bounds[i], c, v_l, v_r)
    return bounds
