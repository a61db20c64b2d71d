"""Models written in XGBoost's JSON model format (``save_model(path,
format="xgboost")``), which ``xgboost.Booster(model_file=path)`` loads and
predicts with the same margins, and which treelite and onnxmltools read.

What is written (XGBoost's ``gbtree`` booster, one scalar tree per output):

=============================  ==================================================
distboost model                XGBoost objective
=============================  ==================================================
squared_error regression       ``reg:squarederror``
absolute_error regression      ``reg:absoluteerror``
huber regression               ``reg:pseudohubererror`` (XGBoost has no Huber
                               loss; the nearest, for continued training only:
                               predictions are the margins either way)
quantile regression            ``reg:quantileerror`` with ``quantile_alpha``
log_loss, two classes          ``binary:logistic`` (margin: the log-odds)
log_loss, K classes            ``multi:softprob``; a first round of K one-leaf
                               trees holds the priors f_0k
exponential loss               ``binary:logistic`` with every value doubled:
                               the margin is 2 f, the log-odds (f estimates
                               half of it, ESL 10.5), and XGBoost's
                               probabilities are ``predict_proba``'s. (XGBoost
                               has no exponential loss; ``binary:logitraw``
                               is deprecated in XGBoost 3 and reads its base
                               score differently across versions.)
random forest / bagging,       ``reg:squarederror``, the M trees as one round of
regression                     parallel trees (``num_parallel_tree``), leaves / M
random forest / bagging,       ``reg:squarederror`` with ``num_target`` = K: per
classification                 class, the M trees' class frequencies / M (the
                               prediction is ``predict_proba``)
=============================  ==================================================

AdaBoost, voting ensembles and losses XGBoost lacks are refused with an
error naming what cannot be expressed.

Routing is kept exactly. XGBoost casts inputs to float32 and sends ``x <
split_condition`` left, distboost sends ``x <= threshold`` left: the split
condition written is the smallest float32 above the threshold, so every
float32 value (and every float64 value that is a float32 number) routes as
in distboost; other float64 values route by their float32 rounding, as
everything XGBoost predicts does. Missing values follow ``default_left``.
Categorical splits list the category codes that go right (XGBoost sends the
listed codes right, the others left); the codes are distboost's: the index
of the category in the model's categories (a pandas column with the
training data's ``CategoricalDtype``, or its codes as numbers).
"""

from __future__ import annotations

import math

import numpy as np

from .kernels.common import MISSING_BIN

FORMAT_VERSION = [2, 1, 0]
"""The XGBoost version whose JSON layout is written (scalar ``base_score``,
no category container), read by XGBoost 2.1 and later, treelite and onnxmltools."""
INVALID_PARENT = 2147483647
"""XGBoost's parent id of a root node."""


class XGBoostFormatError(TypeError):
    """The model cannot be expressed in XGBoost's model format."""


# ----------------------------------------------------------------- objectives
def xgboost_objective(est) -> tuple[dict, str, float]:
    """XGBoost's objective section, the kind of model (see the module table) and
    the factor XGBoost's margin is of distboost's raw output."""
    name = type(est).__name__
    if name.startswith("GradientBoosting"):
        return _boosting_objective(est)
    if name in ("RandomForestRegressor", "BaggingRegressor"):
        return {"name": "reg:squarederror", "reg_loss_param": {"scale_pos_weight": "1"}}, "mean", 1.0
    if name in ("RandomForestClassifier", "BaggingClassifier"):
        return ({"name": "reg:squarederror", "reg_loss_param": {"scale_pos_weight": "1"}},
                "targets", 1.0)
    reason = {
        "AdaBoostClassifier": "XGBoost has no AdaBoost (SAMME) objective: its decision function "
                              "is an alpha-weighted average of class votes, and its "
                              "probabilities a softmax of it divided by K - 1",
        "VotingClassifier": "XGBoost has no voting of models; export each member",
        "VotingRegressor": "XGBoost has no voting of models; export each member",
    }.get(name, "it is not a distboost tree ensemble XGBoost can express")
    raise XGBoostFormatError(f"{name} cannot be written in XGBoost's model format: {reason}. "
                             f"Save it with format='distboost'")


_REGRESSION = {
    "squared_error": {"name": "reg:squarederror", "reg_loss_param": {"scale_pos_weight": "1"}},
    "absolute_error": {"name": "reg:absoluteerror"},
    "huber": {"name": "reg:pseudohubererror", "pseudo_huber_param": {"huber_slope": "1"}},
}


def _boosting_objective(est) -> tuple[dict, str, float]:
    loss = est.loss
    logistic = {"name": "binary:logistic", "reg_loss_param": {"scale_pos_weight": "1"}}
    if loss in _REGRESSION:
        return dict(_REGRESSION[loss]), "identity", 1.0
    if loss == "quantile":
        alpha = f"[{float(est.alpha)!r}]"
        return ({"name": "reg:quantileerror", "quantile_loss_param": {"quantile_alpha": alpha}},
                "identity", 1.0)
    if loss == "log_loss" and len(est.classes_) == 2:
        return logistic, "logit", 1.0
    if loss == "log_loss":
        k = str(len(est.classes_))
        return ({"name": "multi:softprob", "softmax_multiclass_param": {"num_class": k}},
                "softmax", 1.0)
    if loss == "exponential":
        return logistic, "logit", 2.0
    raise XGBoostFormatError(
        f"{type(est).__name__} with loss={loss!r} cannot be written in XGBoost's model format: "
        f"XGBoost has no such objective. Save it with format='distboost'"
    )


# ---------------------------------------------------------------- thresholds
def split_condition(threshold: float) -> np.float32:
    """The float32 s with ``x < s`` exactly when ``x <= threshold``, for every
    float32 x: the smallest float32 above ``threshold``.

    Round to nearest gives the float32 just below or just above the
    threshold; from just below (or equal) the next float32 up is the one.
    """
    with np.errstate(over="ignore"):  # beyond float32's range: +-inf, as XGBoost reads it
        s = np.float32(threshold)
    if float(s) <= threshold:
        s = np.nextafter(s, np.float32(np.inf))
    return s


def _right_categories(bits: np.ndarray, missing_left: bool, n_categories: int) -> list[int]:
    """Codes distboost sends right at a categorical split: those in [0, 255)
    whose bit is clear, and (when missing values go right) the codes 255 and
    above that the model knows, which distboost treats as missing."""
    codes = np.arange(MISSING_BIN)
    left = (bits[codes >> 6] >> (codes & 63).astype(np.uint64)) & np.uint64(1)
    right = codes[left == 0].tolist()
    if not missing_left:
        right += list(range(MISSING_BIN, max(n_categories, MISSING_BIN + 1)))
    return right


# ---------------------------------------------------------------------- trees
def _bfs_order(nodes: np.ndarray) -> np.ndarray:
    """distboost node ids in XGBoost's order: breadth first, siblings
    adjacent (XGBoost finds the right child at left + 1)."""
    order = [0]
    for k in order:
        if not nodes[k]["is_leaf"]:
            order += [int(nodes[k]["left"]), int(nodes[k]["right"])]
    return np.asarray(order, np.int64)


def _categorical_fields(tree, order, n_categories) -> dict:
    """split_type and the category lists of the categorical splits."""
    nodes = tree.nodes
    split_type, cat_nodes, segments, sizes, categories = [], [], [], [], []
    for new, k in enumerate(order):
        node = nodes[k]
        categorical = bool(node["is_categorical"]) and not node["is_leaf"]
        split_type.append(int(categorical))
        if not categorical:
            continue
        right = _right_categories(tree.cat_bitsets[node["cat_index"]], bool(node["missing_left"]),
                                  n_categories.get(int(node["feature"]), 0))
        if not right:
            raise XGBoostFormatError(f"a categorical split (node {k}) sends every category left, "
                                     f"which XGBoost's categorical splits cannot express")
        cat_nodes.append(new)
        segments.append(len(categories))
        sizes.append(len(right))
        categories += right
    return {"split_type": split_type, "categories_nodes": cat_nodes,
            "categories_segments": segments, "categories_sizes": sizes,
            "categories": categories}


def tree_to_xgboost(tree, values: np.ndarray, tree_id: int, n_features: int,
                    n_categories: dict) -> dict:
    """One distboost tree as an XGBoost JSON tree with the node values ``values``.

    Parameters
    ----------
    tree : Tree
    values : ndarray of shape (n_nodes,), float64
        Per node, the value XGBoost adds at a leaf (weights applied).
    tree_id : int
    n_features : int
    n_categories : dict of int to int
        Number of categories of each categorical feature.
    """
    nodes = tree.nodes
    order = _bfs_order(nodes)
    new_id = np.empty(len(nodes), np.int64)
    new_id[order] = np.arange(len(order))
    rec = nodes[order]
    leaf = rec["is_leaf"] == 1
    left = np.where(leaf, -1, new_id[np.where(leaf, 0, rec["left"])])
    right = np.where(leaf, -1, new_id[np.where(leaf, 0, rec["right"])])
    parents = np.full(len(order), INVALID_PARENT, np.int64)
    parents[left[~leaf]] = parents[right[~leaf]] = np.flatnonzero(~leaf)
    conditions = [float(np.float32(values[k])) if rec[new]["is_leaf"]
                  else float(split_condition(float(rec[new]["threshold"])))
                  for new, k in enumerate(order)]
    out = {
        "base_weights": [float(np.float32(v)) for v in values[order]],
        "default_left": [int(not lf and m) for lf, m in zip(leaf, rec["missing_left"])],
        "id": tree_id,
        "left_children": left.tolist(),
        "loss_changes": [float(np.float32(g)) for g in np.where(leaf, 0.0, rec["gain"])],
        "parents": parents.tolist(),
        "right_children": right.tolist(),
        "split_conditions": conditions,
        "split_indices": np.where(leaf, 0, rec["feature"]).tolist(),
        "sum_hessian": [float(np.float32(c)) for c in rec["cover"]],
        "tree_param": {"num_deleted": "0", "num_feature": str(n_features),
                       "num_nodes": str(len(order)), "size_leaf_vector": "1"},
    }
    out.update(_categorical_fields(tree, order, n_categories))
    return out


def _leaf_only(value: float, tree_id: int, n_features: int) -> dict:
    """A tree of one leaf (a constant)."""
    v = float(np.float32(value))
    return {"base_weights": [v], "default_left": [0], "id": tree_id, "left_children": [-1],
            "loss_changes": [0.0], "parents": [INVALID_PARENT], "right_children": [-1],
            "split_conditions": [v], "split_indices": [0], "sum_hessian": [0.0],
            "tree_param": {"num_deleted": "0", "num_feature": str(n_features), "num_nodes": "1",
                           "size_leaf_vector": "1"},
            "split_type": [0], "categories_nodes": [], "categories_segments": [],
            "categories_sizes": [], "categories": []}


# --------------------------------------------------------------------- model
def _scalar_trees(terms) -> list[tuple[object, np.ndarray, int]]:
    """(tree, node values, output) per scalar XGBoost tree, output-major
    within a round as XGBoost grows them; a tree with K outputs becomes K trees."""
    out = []
    for tree, values, w, first in zip(terms.trees, terms.leaf_values, terms.tree_weight,
                                      terms.tree_output):
        for q in range(values.shape[1]):
            out.append((tree, w * values[:, q], int(first) + q))
    return out


def _gbtree(est, terms, kind: str, n_features: int) -> tuple[dict, np.ndarray]:
    """The ``gradient_booster`` section and the base score left to write."""
    n_categories = {int(j): len(c) for j, c in est._schema.categories.items()}
    scalar = _scalar_trees(terms)
    base = np.asarray(terms.base_score, np.float64)
    trees, info = [], []
    if kind == "softmax":  # the priors f_0k as a first round of one-leaf trees
        for k, f0 in enumerate(base):
            trees.append(_leaf_only(f0, len(trees), n_features))
            info.append(k)
        base = np.zeros(1)
    if kind in ("mean", "targets"):  # every tree in one round of parallel trees
        scalar.sort(key=lambda item: item[2])  # stable: output-major
    for tree, values, output in scalar:
        trees.append(tree_to_xgboost(tree, values, len(trees), n_features, n_categories))
        info.append(output)
    n_groups = terms.n_outputs
    parallel = len(terms.trees) if kind in ("mean", "targets") else 1
    per_round = n_groups * parallel
    indptr = list(range(0, len(trees) + 1, per_round))
    model = {"gbtree_model_param": {"num_parallel_tree": str(parallel),
                                    "num_trees": str(len(trees))},
             "iteration_indptr": indptr, "tree_info": info, "trees": trees}
    return {"model": model, "name": "gbtree"}, base


def _base_score(base: np.ndarray, kind: str) -> str:
    """XGBoost's base_score (in the objective's probability space: it applies
    the link to get the margin; logistic: the sigmoid of the margin)."""
    if np.ptp(base) != 0:
        raise XGBoostFormatError("outputs with different base scores need one-leaf trees")
    f0 = float(base[0])  # one value for every output
    if kind == "logit":
        if abs(f0) > 30:
            raise XGBoostFormatError(f"the initial log-odds {f0} is beyond what XGBoost's "
                                     f"float32 base_score can hold as a probability; save "
                                     f"the model with format='distboost'")
        return repr(1.0 / (1.0 + math.exp(-f0)))
    return repr(f0)


def model_to_xgboost(est) -> dict:
    """The fitted estimator as XGBoost's JSON model (a dict); see the module."""
    est._check_fitted()
    objective, kind, scale = xgboost_objective(est)
    terms = est._additive_trees()
    terms = terms._replace(tree_weight=scale * terms.tree_weight,
                           base_score=scale * terms.base_score)
    schema = est._schema
    n_features = schema.n_features
    booster, base = _gbtree(est, terms, kind, n_features)
    named = not all(n == f"f{j}" for j, n in enumerate(schema.feature_names))
    n_classes = len(est.classes_) if kind == "softmax" else 0
    learner = {
        "attributes": {},
        "feature_names": list(schema.feature_names) if named else [],
        "feature_types": ["c" if c else "float" for c in schema.is_categorical] if named else [],
        "gradient_booster": booster,
        "learner_model_param": {
            "base_score": _base_score(base, kind), "boost_from_average": "0",
            "num_class": str(n_classes), "num_feature": str(n_features),
            "num_target": str(terms.n_outputs if kind == "targets" else 1),
        },
        "objective": objective,
    }
    return {"learner": learner, "version": FORMAT_VERSION}
