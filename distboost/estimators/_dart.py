"""DART on the gradient boosting estimators (Rashmi & Gilad-Bachrach 2015;
XGBoost's ``booster="dart"``): its parameters checked, the spec's part, the
trees' weights in prediction and in model files (``training.dart`` trains).

A DART model keeps ``tree_weights_`` (shape (n_estimators_, K)): its
prediction is f(x) = f_0 + sum_m sum_k w_mk T_mk(x). A gradient boosting
model (``booster="gbtree"``) has ``tree_weights_ = None``: every weight 1.
"""

from __future__ import annotations

import numpy as np

from ..inputs.checks import BOOL, Interval, InvalidParameterError, Options
from ..training.dart import NORMALIZE_TYPES, SAMPLE_TYPES, DartParams
from ..trees.tree import Tree

DEFAULTS = {"booster": "gbtree", "rate_drop": 0.0, "skip_drop": 0.0, "normalize_type": "tree",
            "sample_type": "uniform", "one_drop": False}
"""DART's parameters and their defaults (XGBoost's)."""

CONSTRAINTS = {
    "booster": [Options(("gbtree", "dart"))],
    "rate_drop": [Interval("real", 0, 1, "both")],
    "skip_drop": [Interval("real", 0, 1, "both")],
    "normalize_type": [Options(NORMALIZE_TYPES)],
    "sample_type": [Options(SAMPLE_TYPES)],
    "one_drop": [BOOL],
}

PARAMETERS = """\
    booster : {"gbtree", "dart"}, default "gbtree"
        "dart": DART (Rashmi & Gilad-Bachrach 2015, XGBoost's dart booster):
        each round drops some of the trees so far, grows the new tree(s) on
        the gradients at the margins without them, then weighs the new and
        the dropped trees again (``normalize_type``); the model keeps every
        tree's weight (``tree_weights_``) and predicts with them. The drops
        are functions of ``random_state`` and the round only: the same in
        process and on Dask. Newton leaves only (a loss whose
        ``leaf_estimation`` is line search is refused). Metrics measured
        during training, ``evals_result_`` and early stopping see the whole
        model (every tree, its current weight), as XGBoost's; early stopping
        keeps the model as it was after ``best_iteration_`` (its trees with
        the weights they had then; XGBoost keeps the first trees with their
        final weights). ``staged_predict`` gives the first rounds with the
        final weights, as XGBoost's ``iteration_range``.
    rate_drop : float in [0, 1], default 0.0
        DART: the chance of each tree to be dropped in a round.
    skip_drop : float in [0, 1], default 0.0
        DART: the chance that a round drops nothing (it then adds its trees
        with weight 1, as gradient boosting).
    normalize_type : {"tree", "forest"}, default "tree"
        DART, with k trees dropped and lr = learning_rate / K: "tree": the
        new trees weigh 1 / (k + lr), the dropped ones are scaled by
        k / (k + lr); "forest": both by 1 / (1 + lr).
    sample_type : {"uniform", "weighted"}, default "uniform"
        DART: trees dropped with the same chance, or with a chance in
        proportion to their weight (``rate_drop`` times the number of trees
        times w_i / sum of the weights).
    one_drop : bool, default False
        DART: drop one tree when the draw dropped none (unless the round is
        skipped).
"""
"""The docstring of DART's parameters (both gradient boosting estimators)."""


def check(est, leaf_estimation: str) -> None:
    """Refuse DART's parameters without ``booster="dart"``, and DART with
    leaves the dropout cannot serve."""
    owner = type(est).__name__
    if getattr(est, "booster", "gbtree") != "dart":
        changed = [f"{k}={getattr(est, k)!r}" for k, v in DEFAULTS.items()
                   if k != "booster" and getattr(est, k, v) != v]
        if changed:
            raise InvalidParameterError(
                f"{owner}: {', '.join(changed)} is DART's, but booster='gbtree' drops no "
                f"trees; set booster='dart' to train DART, or leave it at its default")
        return
    if leaf_estimation == "line_search":
        raise InvalidParameterError(
            f"{owner}: booster='dart' grows its trees on Newton steps at the margins without "
            f"the dropped trees; leaf_estimation='line_search' (the default of loss="
            f"{est.loss!r} when 'auto') re-estimates leaves at the whole model's margins and "
            f"is not supported with it: use booster='gbtree', or a loss with a hessian and "
            f"leaf_estimation='newton'")


def params(est) -> DartParams | None:
    """The spec's DART parameters, None for gradient boosting."""
    if getattr(est, "booster", "gbtree") != "dart":
        return None
    return DartParams(float(est.rate_drop), float(est.skip_drop), est.normalize_type,
                      est.sample_type, bool(est.one_drop))


def prior_weights(est, init_model) -> np.ndarray | None:
    """The continued model's tree weights (None: gradient boosting's, 1 each).
    A DART model continues as DART only: its weights would be lost otherwise."""
    weights = None if init_model is None else getattr(init_model, "tree_weights_", None)
    if weights is not None and getattr(est, "booster", "gbtree") != "dart":
        raise ValueError(
            f"init_model is a DART model (booster='dart', its trees weighted); continue it with "
            f"booster='dart' (rate_drop=0 adds rounds without dropout), not booster="
            f"{est.booster!r}")
    return weights


def weighted_trees(est) -> list:
    """``trees_`` round by round, each tree's values times its weight (what
    prediction adds up); ``trees_`` itself for gradient boosting."""
    weights = getattr(est, "tree_weights_", None)
    if weights is None:
        return est.trees_
    out = []
    for round_trees, round_weights in zip(est.trees_, weights):
        scaled = []
        for tree, w in zip(round_trees, round_weights):
            nodes = tree.nodes.copy()
            nodes["value"] *= w
            scaled.append(Tree(nodes, tree.cat_bitsets, tree.leaf_values))
        out.append(scaled)
    return out


def flat_weights(est) -> np.ndarray:
    """Every tree's weight, rounds first (1 each for gradient boosting)."""
    weights = getattr(est, "tree_weights_", None)
    n = sum(len(r) for r in est.trees_)
    return np.ones(n) if weights is None else np.asarray(weights, np.float64).ravel()


def model_state(est) -> dict | None:
    """A DART model's state in its model file: the weights, round by round."""
    weights = getattr(est, "tree_weights_", None)
    return None if weights is None else {"tree_weights": np.asarray(weights).tolist()}


def load_state(est, state: dict) -> None:
    est.tree_weights_ = np.asarray(state["tree_weights"], np.float64).reshape(
        len(est.trees_), len(est.base_score_))
