"""What each kind of estimator keeps in its model file, checked against the
trees (``model_trees``) before the estimator is built.

An estimator class names its kind in ``_model_layout``:

``"boosting"``
    gradient boosting: one tree per output each round, the outputs those of
    the loss (1, or K for K > 2 classes; k for a model of k targets, the file's
    ``n_targets``), a base score per output, no state
    (DART, ``params.booster`` "dart": state ``tree_weights``, K per round);
``"bagged"``
    forests and bagging: one tree per round, a classifier's trees with class
    frequencies in ``leaf_values`` (K per node); state
    ``estimators_features`` (the features of each tree);
``"adaboost"``
    one tree per round voting for a class (SAMME: node values are class
    codes; SAMME.R: class frequencies in ``leaf_values``); state
    ``estimator_weights`` (alpha_m > 0) and ``estimator_errors``;
``"survival"``
    gradient boosting's, one output; a Cox model's state: its Breslow
    baseline (``unique_times``, ``breslow_sums``, ``breslow_f_max``);
``"voting"``
    no trees of its own: ``state.members``, [name, model file] pairs of
    distboost estimators of the same task.

Each check also bounds the model's predictions from its leaves (the largest
|raw score| any row can get, summed as the kernels sum), so that a file whose
leaves would add up beyond float64 (to inf, and then NaN) is refused rather
than predicting them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..trees.losses import LOG_LINK_LOSSES
from .model_checker import DAMAGED, Checker, describe, join, short
from .model_trees import CheckedTrees

LOG_MAX = math.log(np.finfo(np.float64).max)
"""The largest f with a finite e^f (log-link losses predict e^f)."""
SAMME_R_SPAN = LOG_MAX - math.log(np.finfo(np.float64).eps)
"""The largest |log p_k - mean_j log p_j| of SAMME.R's leaves (p clipped at eps)."""


class Parts(NamedTuple):
    """The checked parts of a model file that its layout is checked against."""

    cls: type
    n_classes: int | None  # classifiers: the number of classes
    n_features: int
    base_score: np.ndarray
    trees: CheckedTrees
    member: Callable  # (model dict, path) -> (estimator class, prediction bound)


def check_layout(c: Checker, d: dict, parts: Parts, path: str) -> float:
    """Check ``d`` as the kind of model ``parts.cls`` keeps (its ``_model_layout``).

    Parameters
    ----------
    c : Checker
    d : dict
        The decoded model file, its other parts already checked (``parts``).
    parts : Parts
    path : str
        Where ``d`` is in the file ("" at the top, a voting member's path below).

    Returns
    -------
    float
        An upper bound on |every prediction| (raw scores; e^f for log links).

    Raises
    ------
    ModelFileError
    """
    with np.errstate(over="ignore"):  # a sum too large is refused, not warned about
        return LAYOUTS[parts.cls._model_layout](c, d, parts, path)


def _what(parts: Parts) -> str:
    name, k = parts.cls.__name__, parts.n_classes
    return f"{'an' if name[0] in 'AEIOU' else 'a'} {name}" + (f" of {k} classes" if k else "")


def _outputs(c: Checker, parts: Parts, n_outputs: int, per_round: int, path: str) -> None:
    """``n_outputs`` base scores and ``per_round`` trees in every round."""
    if len(parts.base_score) != n_outputs:
        c.fail(join(path, "base_score"), f"has {len(parts.base_score)} values but {_what(parts)} "
                                         f"has {n_outputs} output(s); {DAMAGED}")
    for r, m in enumerate(parts.trees.per_round):
        if m != per_round:
            c.fail(f"{join(path, 'trees')}[{r}]", f"has {m} tree(s) but {_what(parts)} has "
                                                  f"{per_round} per round; {DAMAGED}")


def _some_trees(c: Checker, parts: Parts, path: str) -> int:
    n_trees = len(parts.trees.per_round)
    if not n_trees:
        c.fail(join(path, "trees"), f"is empty; {_what(parts)} has at least one tree")
    return n_trees


def _bounded(c: Checker, bound: float, path: str, limit: float = np.inf, what: str = "",
             key: str = "trees", terms: str = "leaf values") -> float:
    """``bound`` (the largest |prediction|), refused unless below ``limit``."""
    if not bound < limit:
        c.fail(join(path, key), f"{terms} add up to {bound:.4g}{what}, beyond what float64 "
                                f"holds: predictions would be inf or NaN; {DAMAGED}")
    return bound


def _no_state(c: Checker, d: dict, parts: Parts, path: str) -> None:
    if "state" in d:
        c.fail(join(path, "state"), f"{_what(parts)} keeps no state; {DAMAGED}")


def _state(c: Checker, d: dict, parts: Parts, path: str) -> dict:
    state = c.typed(d, "state", dict, path, optional=True)
    if state is None:
        c.fail(join(path, "state"), f"missing; {_what(parts)} keeps its state there; {DAMAGED}")
    return state


def _leaf_vectors(c: Checker, parts: Parts, width: int, path: str) -> None:
    """Every tree has ``leaf_values`` of ``width`` columns."""
    for t, values in enumerate(parts.trees.leaf_values):
        if values is None or values.shape[1] != width:
            r, i = _round_and_index(parts.trees, t)
            got = "none" if values is None else f"{values.shape[1]} per node"
            c.fail(f"{join(path, 'trees')}[{r}][{i}].leaf_values",
                   f"{_what(parts)} has {width} leaf values per node, this tree {got}; {DAMAGED}")


def _round_and_index(trees: CheckedTrees, t: int) -> tuple[int, int]:
    ends = np.cumsum(trees.per_round)
    r = int(np.searchsorted(ends, t, side="right"))
    return r, t - int(ends[r - 1] if r else 0)


def _per_tree(c: Checker, state: dict, key: str, n_trees: int, path: str) -> list:
    values = c.typed(state, key, list, path)
    if len(values) != n_trees:
        c.fail(join(path, key), f"has {len(values)} entries for {n_trees} trees; {DAMAGED}")
    return values


# ------------------------------------------------------------------- layouts
def _boosting(c: Checker, d: dict, parts: Parts, path: str) -> float:
    k = parts.n_classes
    loss = d["params"].get("loss")
    if loss == "exponential" and k is not None and k != 2:
        c.fail(join(path, "params.loss"), f"is 'exponential', a loss of two classes, but the "
                                          f"model has {k}; {DAMAGED}")
    n_outputs = k if k is not None and k > 2 else 1
    n_outputs = d.get("n_targets") or n_outputs  # a multi-output model: one per target
    _outputs(c, parts, n_outputs, n_outputs, path)
    weights = 1.0
    if d["params"].get("booster") == "dart":  # DART: a weight per tree, in (0, 1]
        weights = _tree_weights(c, d, parts, n_outputs, path)
    else:
        _no_state(c, d, parts, path)
    bound = np.abs(parts.base_score).max(initial=0.0) + (weights
                                                         * parts.trees.largest_leaf()).sum()
    if isinstance(loss, str) and loss in LOG_LINK_LOSSES:
        return math.exp(_bounded(c, bound, path, LOG_MAX, f" (loss={loss!r} predicts e^f)"))
    return _bounded(c, bound, path)


def _tree_weights(c: Checker, d: dict, parts: Parts, k: int, path: str) -> np.ndarray:
    """A DART model's ``state.tree_weights``: per round, K weights in (0, 1]."""
    spath = join(path, "state")
    rounds = _per_tree(c, _state(c, d, parts, path), "tree_weights",
                       len(parts.trees.per_round), spath)
    flat = []
    for r, weights in enumerate(rounds):
        key = f"{spath}.tree_weights[{r}]"
        if not isinstance(weights, list) or len(weights) != k:
            c.fail(key, f"expected a list of {k} weight(s), got {describe(weights)}; {DAMAGED}")
        w = c.array(weights, "number", lambda i, key=key: f"{key}[{i}]")
        bad = np.flatnonzero(~((w > 0) & (w <= 1)))
        if len(bad):
            c.fail(f"{key}[{bad[0]}]", f"is {w[bad[0]]}; a DART tree's weight is in (0, 1]; "
                                       f"{DAMAGED}")
        flat.extend(w.tolist())
    return np.asarray(flat, np.float64)


def _bagged(c: Checker, d: dict, parts: Parts, path: str) -> float:
    k = parts.n_classes
    _outputs(c, parts, k or 1, 1, path)
    n_trees = _some_trees(c, parts, path)
    if k:
        _leaf_vectors(c, parts, k, path)
    spath = join(path, "state")
    state = _state(c, d, parts, path)
    features = _per_tree(c, state, "estimators_features", n_trees, spath)
    for t, f in enumerate(features):
        key = f"{spath}.estimators_features[{t}]"
        if not isinstance(f, list):
            c.fail(key, f"expected a list of feature indices, got {describe(f)}")
        f = c.array(f, "int", lambda i, key=key: f"{key}[{i}]")
        bad = np.flatnonzero((f < 0) | (f >= parts.n_features))
        if len(bad):
            c.fail(f"{key}[{bad[0]}]", f"is {f[bad[0]]}, not a feature index (0 to "
                                       f"{parts.n_features - 1}); {DAMAGED}")
    c.typed(state, "oob_score", "number", spath, optional=True)
    if k:  # the mean of the trees' class frequencies, each tree's weighted 1/M
        return _bounded(c, (parts.trees.largest_leaf_vector() / n_trees).sum(), path)
    return _bounded(c, parts.trees.largest_leaf().sum(), path)  # summed, then / M


def _adaboost(c: Checker, d: dict, parts: Parts, path: str) -> float:
    k = parts.n_classes
    _outputs(c, parts, k, 1, path)
    n_trees = _some_trees(c, parts, path)
    spath = join(path, "state")
    state = _state(c, d, parts, path)
    alphas = _per_tree(c, state, "estimator_weights", n_trees, spath)
    alphas = c.array(alphas, "number", lambda i: f"{spath}.estimator_weights[{i}]")
    bad = np.flatnonzero(~(np.isfinite(alphas) & (alphas > 0)))
    if len(bad):
        c.fail(f"{spath}.estimator_weights[{bad[0]}]", f"is {alphas[bad[0]]}; a tree's weight "
                                                       f"alpha_m is a finite number > 0; {DAMAGED}")
    errors = _per_tree(c, state, "estimator_errors", n_trees, spath)
    c.finite(c.array(errors, "number", lambda i: f"{spath}.estimator_errors[{i}]"),
             lambda i: f"{spath}.estimator_errors[{i}]")
    if d["params"].get("algorithm") == "SAMME.R":
        _leaf_vectors(c, parts, k, path)
        return _bounded(c, alphas.sum() * (k - 1) * SAMME_R_SPAN, path)
    _class_codes(c, parts, k, path)
    return _bounded(c, alphas.sum(), path)


def _class_codes(c: Checker, parts: Parts, k: int, path: str) -> None:
    """SAMME's trees vote with their nodes' values: class codes 0 to K - 1."""
    value = parts.trees.nodes["value"]
    bad = np.flatnonzero((value != np.floor(value)) | (value < 0) | (value >= k))
    if len(bad):
        t = int(np.searchsorted(parts.trees.start, bad[0], side="right") - 1)
        r, i = _round_and_index(parts.trees, t)
        c.fail(f"{join(path, 'trees')}[{r}][{i}].nodes.value[{bad[0] - parts.trees.start[t]}]",
               f"is {float(value[bad[0]])!r}, not a class code (0 to {k - 1}): a SAMME tree's "
               f"nodes vote for a class; {DAMAGED}")


def _voting(c: Checker, d: dict, parts: Parts, path: str) -> float:
    name, task = parts.cls.__name__, parts.cls._estimator_type
    if parts.trees.per_round or len(parts.base_score):
        c.fail(join(path, "trees"), f"a {name} keeps its trees in its members (state.members); "
                                    f"its own trees and base_score are []; {DAMAGED}")
    if d["params"].get("prefit") is not True:
        c.fail(join(path, "params.prefit"), f"is {short(d['params'].get('prefit'))}; a saved "
                                            f"{name}'s members are fitted (prefit is true); "
                                            f"{DAMAGED}")
    spath = join(path, "state")
    members = c.typed(_state(c, d, parts, path), "members", list, spath)
    if not members:
        c.fail(f"{spath}.members", f"is empty; a {name} has at least one member")
    names, bounds = [], []
    for i, member in enumerate(members):
        where = f"{spath}.members[{i}]"
        if not (isinstance(member, list) and len(member) == 2 and isinstance(member[0], str)
                and isinstance(member[1], dict)):
            c.fail(where, f"expected a [name, model] pair, got {describe(member)}")
        if member[0] in names:
            c.fail(f"{where}[0]", f"names member {short(member[0])} a second time; {DAMAGED}")
        names.append(member[0])
        if member[1].get("estimator") in ("VotingClassifier", "VotingRegressor"):
            c.fail(f"{where}[1].estimator", f"is {member[1]['estimator']}: a member is not itself "
                                            f"a voting model; {DAMAGED}")
        cls, bound = parts.member(member[1], f"{where}[1]")
        if cls._estimator_type != task:
            c.fail(f"{where}[1].estimator", f"is {cls.__name__}, a {cls._estimator_type}; a "
                                            f"{name} votes over {task}s")
        bounds.append(bound)
    weights = _voting_weights(c, d["params"].get("weights"), len(members), path)
    if task == "classifier":  # votes and probabilities are at most 1 a member
        return _bounded(c, weights.sum(), path, key="params.weights", terms="the weights")
    return _bounded(c, float(np.dot(weights, bounds)), path, key="params.weights",
                    terms="the members' predictions times their weights")


def _voting_weights(c: Checker, weights, n_members: int, path: str) -> np.ndarray:
    """The members' weights (None: 1 each): finite, >= 0, one per member, some > 0."""
    if weights is None:
        return np.ones(n_members)
    key = join(path, "params.weights")
    if not isinstance(weights, list):
        c.fail(key, f"expected null or a list of numbers, got {describe(weights)}")
    w = c.array(weights, "number", lambda i: f"{key}[{i}]")
    if len(w) != n_members or not (np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0):
        c.fail(key, f"is {describe(weights)}; expected {n_members} finite weights >= 0, not all "
                    f"0, one per member")
    return w


def _survival(c: Checker, d: dict, parts: Parts, path: str) -> float:
    """Gradient boosting's layout; a Cox model's state: Breslow's baseline
    (``unique_times`` increasing, ``breslow_sums`` one each, finite, >= 0 and
    non-decreasing, ``breslow_f_max`` finite); an AFT model's: empty."""
    _outputs(c, parts, 1, 1, path)
    bound = _bounded(c, np.abs(parts.base_score).max(initial=0.0)
                     + parts.trees.largest_leaf().sum(), path)
    state = c.typed(d, "state", dict, path, optional=True) or {}
    spath = join(path, "state")
    if d["params"].get("objective") == "survival:aft":
        if state:
            c.fail(spath, f"an AFT model keeps no state; {DAMAGED}")
        return bound
    times = c.array(c.typed(state, "unique_times", list, spath), "number",
                    lambda i: f"{spath}.unique_times[{i}]")
    sums = c.array(c.typed(state, "breslow_sums", list, spath), "number",
                   lambda i: f"{spath}.breslow_sums[{i}]")
    f_max = c.typed(state, "breslow_f_max", "number", spath)
    if not (np.isfinite(times).all() and (np.diff(times) > 0).all() and len(sums) == len(times)
            and np.isfinite(sums).all() and (sums >= 0).all() and (np.diff(sums) >= 0).all()
            and math.isfinite(f_max)):
        c.fail(spath, f"is not a Breslow baseline (unique_times increasing, breslow_sums one "
                      f"per time, finite, >= 0, non-decreasing, breslow_f_max finite); {DAMAGED}")
    return bound


LAYOUTS = {"boosting": _boosting, "bagged": _bagged, "adaboost": _adaboost, "voting": _voting,
           "survival": _survival}
"""The check of each ``_model_layout``."""
