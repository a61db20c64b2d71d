"""The evaluation report's lines on a DART model (``booster="dart"``, Rashmi &
Gilad-Bachrach 2015, "DART: Dropouts meet Multiple Additive Regression
Trees"): the booster, its dropout parameters and a summary of the trees'
weights (``tree_weights_``, by which the model multiplies each tree).
"""

from __future__ import annotations

from typing import Any

import numpy as np

DART_PARAMS = ("rate_drop", "skip_drop", "normalize_type", "sample_type", "one_drop")
"""XGBoost's names of DART's parameters, as the estimators take them."""


def booster_details(est: Any) -> dict[str, Any]:
    """The report's details of a gradient boosting model's booster: nothing for
    gradient boosting (``booster="gbtree"``); for DART, ``booster``, its
    parameters and the weights' count, minimum, median, mean and maximum."""
    if getattr(est, "booster", "gbtree") != "dart":
        return {}
    params = ", ".join(f"{p}={getattr(est, p)!r}" for p in DART_PARAMS)
    out: dict[str, Any] = {"booster": f"dart ({params})"}
    weights = getattr(est, "tree_weights_", None)
    if weights is not None and np.size(weights):
        w = np.asarray(weights, np.float64).ravel()
        out["tree weights (DART)"] = (f"{w.size:,} trees: min {w.min():.4g}, median "
                                      f"{np.median(w):.4g}, mean {w.mean():.4g}, "
                                      f"max {w.max():.4g}")
    return out
