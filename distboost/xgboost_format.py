"""Models written in XGBoost's JSON model format (``save_model(path,
format="xgboost")``), which ``xgboost.Booster(model_file=path)`` loads and
predicts with the same margins, and which treelite and onnxmltools read.

What is written (XGBoost's ``gbtree`` booster, one scalar tree per output; a
DART model as XGBoost's ``dart`` booster: the same trees and ``weight_drop``,
each tree's weight, which XGBoost multiplies into its output):

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
k targets (regression)         ``reg:squarederror`` with ``num_target`` = k, one
                               tree per target per round; a first round of k
                               one-leaf trees holds the f_0 of each target
k labels (multi-label)         ``binary:logistic`` with ``num_target`` = k, the
                               same trees (margins: the log-odds of each label)
exponential loss               ``binary:logistic`` with every value doubled:
                               the margin is 2 f, the log-odds (f estimates
                               half of it, ESL 10.5), and XGBoost's
                               probabilities are ``predict_proba``'s. (XGBoost
                               has no exponential loss; ``binary:logitraw``
                               is deprecated in XGBoost 3 and reads its base
                               score differently across versions.)
ranker (rank:ndcg, rank:map,   the same ``rank:*`` objective with its
rank:pairwise)                 ``lambdarank_param``; scores are the margins
ranker (lambdarank)            ``rank:ndcg`` (XGBoost has no LightGBM pair
                               weights: the same scores, but training on in
                               XGBoost weighs pairs twice)
survival (survival:cox,        the same objective (AFT with its
survival:aft)                  ``aft_loss_param``); base_score exp(f_0)
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
of the category in the model's categories.

Node ids are the model's. Each tree's nodes are written in distboost's own
order (``node_order``: node 0 the root, siblings adjacent, as every tree
distboost grows has them), so XGBoost's ``pred_leaf`` on the exported model
gives the ids of the estimators' ``apply`` and ``predict(X, pred_leaf=True)``,
which index the trees' ``nodes`` in the model file. (A multiclass model's
first round of one-leaf trees adds K leading columns of 0; forests' parallel
trees are written once per output.)

Categories travel by name. A model with categorical features carries its
training categories as XGBoost's own models do since XGBoost 3.1 (the
``cats`` container of the ``gbtree`` model: per feature its categories, as
UTF-8 text or as 64-bit integers, in the model's order), so XGBoost >= 3.1
re-codes a pandas categorical column by its categories' names, as distboost
does: a serving DataFrame whose categories are ordered differently (or are a
subset) predicts the same. Numbers given as codes (a NumPy array) are read as
the model's codes. XGBoost before 3.1 ignores the container and reads a pandas
column's own codes, which is right only with the training data's
``CategoricalDtype``: exporting warns where the xgboost installed here is older
than 3.1, and where a feature's categories are neither all text nor all
integers (XGBoost stores no others) the container is left out with a warning
naming the feature. Non-ASCII category names are warned about too: xgboost's
Python package (3.2 and before) measures names in characters, not UTF-8 bytes,
and matches none of them, not even in its own models. A model without
categorical features (or saved with ``xgboost_categories=False``, for treelite
4.8, which refuses the container) is written in the 2.1 layout, which every
XGBoost since 2.1 reads.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .kernels.common import MISSING_BIN
from .trees.ranking import is_ranking, pairs_per_sample

__all__ = [
    "XGBoostFormatError", "XGBoostFormatWarning", "model_to_xgboost", "xgboost_objective"
]

FORMAT_VERSION = [2, 1, 0]
"""The XGBoost version whose JSON layout is written for a model without
categorical features (scalar ``base_score``, no category container), read by
XGBoost 2.1 and later, treelite and onnxmltools."""
CATEGORIES_VERSION = [3, 1, 0]
"""The version written with a category container: the first XGBoost that reads
one and re-codes pandas categorical input by name."""
I64_ARRAY = 15
"""XGBoost's JSON value kind of an int64 array (``Value::ValueKind::kI64Array``),
the type of integer categories in the category container."""
INVALID_PARENT = 2147483647
"""XGBoost's parent id of a root node."""


class XGBoostFormatError(TypeError):
    """The model cannot be expressed in XGBoost's model format."""


class XGBoostFormatWarning(UserWarning):
    """The exported model routes categories by their codes for some XGBoost versions."""


# ----------------------------------------------------------------- objectives
def _ranking_objective(est) -> dict:
    """A ranker's ``rank:*`` objective with its LambdaMART parameters (XGBoost's names)."""
    k = pairs_per_sample(est.objective, est.lambdarank_pair_method,
                         est.lambdarank_num_pair_per_sample)
    flag = {True: "1", False: "0"}
    name = "rank:ndcg" if est.objective == "lambdarank" else est.objective
    return {"name": name, "lambdarank_param": {
        "lambdarank_pair_method": est.lambdarank_pair_method,
        "lambdarank_num_pair_per_sample": str(k),
        "lambdarank_normalization": flag[bool(est.lambdarank_normalization)],
        "lambdarank_score_normalization": flag[bool(est.lambdarank_score_normalization)],
        "ndcg_exp_gain": flag[bool(est.ndcg_exp_gain)],
        "lambdarank_unbiased": "0",
    }}


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
    if getattr(est, "n_targets_", None) is not None:  # k targets, one tree per target per round
        return (logistic, "multi_logit", 1.0) if est._is_classifier else (
            dict(_REGRESSION[loss]), "multi_identity", 1.0)
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
    if is_ranking(loss):
        return _ranking_objective(est), "identity", 1.0
    if loss == "survival:cox":
        return {"name": "survival:cox"}, "log", 1.0
    if loss == "survival:aft":
        return ({"name": "survival:aft", "aft_loss_param": {
            "aft_loss_distribution": est.aft_loss_distribution,
            "aft_loss_distribution_scale": _float32_text(est.aft_loss_distribution_scale)}},
            "log", 1.0)
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


def node_order(nodes: np.ndarray) -> np.ndarray:
    """The distboost node written at each position of the exported tree.

    The tree's own order wherever XGBoost can read it: every node reached from
    the root, node 0, and every split's right child right after its left
    (XGBoost finds the right child at left + 1), which holds for every tree
    distboost grows (children are numbered in pairs as splits are taken,
    depth-wise or best-first). The exported node ids are then the model's,
    so XGBoost's ``pred_leaf`` equals ``apply``. Another tree (a model file
    edited by hand) is renumbered breadth first (``_bfs_order``).
    """
    order = _bfs_order(nodes)
    split = nodes["is_leaf"] == 0
    if len(order) == len(nodes) and (nodes["right"][split] == nodes["left"][split] + 1).all():
        return np.arange(len(nodes), dtype=np.int64)
    return order


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
    order = node_order(nodes)
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


# ----------------------------------------------------------------- categories
def _encoded_categories(values: list) -> tuple[dict, list[int]] | None:
    """One feature's categories as XGBoost stores them and their sorted order,
    or None where XGBoost cannot (categories neither all text nor all integers)."""
    if all(isinstance(v, str) for v in values):
        raw = [v.encode("utf-8") for v in values]
        offsets = np.cumsum([0] + [len(b) for b in raw]).tolist()
        data = np.frombuffer(b"".join(raw), np.uint8).astype(np.int8)  # XGBoost's I8Array
        return {"offsets": offsets, "values": data.tolist()}, sorted(range(len(raw)),
                                                                      key=raw.__getitem__)
    if all(_is_integral(v) for v in values):
        ints = [int(v) for v in values]
        return {"type": I64_ARRAY, "values": ints}, sorted(range(len(ints)),
                                                           key=ints.__getitem__)
    return None


def _is_integral(v) -> bool:
    """An integer (not a bool), or a float that is a whole number within int64."""
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, (int, np.integer)):
        return -2**63 <= int(v) < 2**63
    return isinstance(v, (float, np.floating)) and float(v).is_integer() and abs(v) < 2**63


def category_container(schema) -> dict | None:
    """XGBoost's ``cats`` container of the model's training categories (XGBoost
    >= 3.1): per feature its categories in distboost's code order (none for a
    numeric feature), the features' segments, and within each segment the
    categories' order sorted by value (bytes for text), which XGBoost searches
    when re-coding input. None for a model without categorical features, or
    with one whose categories XGBoost cannot store (warned, naming it)."""
    if not any(schema.is_categorical):
        return None
    enc, segments, sorted_idx = [], [0], []
    for j, name in enumerate(schema.feature_names):
        if not schema.is_categorical[j]:
            enc.append({"offsets": [], "values": []})
            segments.append(segments[-1])
            continue
        values = list(schema.categories.get(j, []))
        encoded = _encoded_categories(values)
        if encoded is None:
            warnings.warn(
                f"categorical feature {name!r} has categories that are neither all text nor all "
                f"integers ({values[:5]!r}...); XGBoost stores no others, so the exported model "
                f"carries no training categories and XGBoost reads a pandas column's category "
                f"codes: predict with the training data's CategoricalDtype (or cast the "
                f"categories to text before training)", XGBoostFormatWarning, stacklevel=4)
            return None
        _warn_if_not_ascii(name, values)
        enc.append(encoded[0])
        segments.append(segments[-1] + len(values))
        sorted_idx += encoded[1]
    return {"enc": enc, "feature_segments": segments, "sorted_idx": sorted_idx}


def _warn_if_not_ascii(name: str, values: list) -> None:
    """XGBoost's Python package (3.2 and before) measures a pandas column's
    category names in characters, not UTF-8 bytes, so it does not match
    non-ASCII names with the stored ones, not even in its own models."""
    other = [v for v in values if isinstance(v, str) and not v.isascii()]
    if other:
        warnings.warn(
            f"categorical feature {name!r} has non-ASCII categories ({other[:3]!r}); xgboost's "
            f"Python package (3.2 and before) measures category names in characters instead of "
            f"UTF-8 bytes and does not match them, so rows with any category of this feature "
            f"can route wrongly in xgboost: give xgboost the column with the training data's "
            f"CategoricalDtype (same categories, same order) or its codes as numbers, or use "
            f"ASCII category names", XGBoostFormatWarning,
            stacklevel=5)


def warn_if_xgboost_ignores_categories() -> None:
    """Warn where the xgboost installed here is older than 3.1: it would
    ignore the exported training categories and read pandas codes."""
    try:
        import xgboost
    except ImportError:
        return
    installed = xgboost.__version__
    numbers = [int(p) if p.isdigit() else 0 for p in installed.split(".")[:2]]
    if numbers < CATEGORIES_VERSION[:2]:
        warnings.warn(
            f"the xgboost installed here ({installed}) is older than 3.1: it ignores the "
            f"training categories the exported model carries and reads a pandas categorical "
            f"column's own codes, which route rows wrongly unless the column has the training "
            f"data's CategoricalDtype (same categories, same order). Use xgboost >= 3.1 to "
            f"predict from DataFrames", XGBoostFormatWarning, stacklevel=4)


# --------------------------------------------------------------------- model
_MULTI_TARGET = ("multi_identity", "multi_logit")
"""The kinds of a multi-output gradient boosting model (k targets): XGBoost's
``num_target`` = k with ``multi_strategy="one_output_per_tree"`` (tree_info: the
target of each scalar tree), the f_0 of each target in a first round of k
one-leaf trees."""


def _scalar_trees(terms) -> list[tuple[object, np.ndarray, int]]:
    """(tree, node values, output) per scalar XGBoost tree, output-major
    within a round as XGBoost grows them; a tree with K outputs becomes K trees."""
    out = []
    for tree, values, w, first in zip(terms.trees, terms.leaf_values, terms.tree_weight,
                                      terms.tree_output):
        for q in range(values.shape[1]):
            out.append((tree, w * values[:, q], int(first) + q))
    return out


def _gbtree(est, terms, kind: str, n_features: int,
            categories: bool) -> tuple[dict, np.ndarray]:
    """The ``gradient_booster`` section and the base score left to write."""
    n_categories = {int(j): len(c) for j, c in est._schema.categories.items()}
    scalar = _scalar_trees(terms)
    base = np.asarray(terms.base_score, np.float64)
    trees, info = [], []
    if kind in ("softmax", *_MULTI_TARGET):  # f_0k as a first round of one-leaf trees
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
    cats = category_container(est._schema) if categories else None
    if cats is not None:
        model["cats"] = cats
    return {"model": model, "name": "gbtree"}, base


def _dart(gbtree: dict, weights: np.ndarray, kind: str) -> dict:
    """XGBoost's ``dart`` booster: the ``gbtree`` section and ``weight_drop``,
    one weight per tree (1 for the priors' one-leaf trees of ``softmax``);
    XGBoost predicts f_0 + sum_i weight_drop[i] T_i(x)."""
    weights = np.asarray(weights, np.float64)
    prior = [1.0] * weights.shape[1] if kind == "softmax" else []
    return {"name": "dart", "gbtree": gbtree, "weight_drop": prior + weights.ravel().tolist()}


def _base_score(base: np.ndarray, kind: str) -> str:
    """XGBoost's base_score (in the objective's probability space: it applies
    the link to get the margin; logistic: the sigmoid of the margin), as text."""
    if np.ptp(base) != 0:
        raise XGBoostFormatError("outputs with different base scores need one-leaf trees")
    f0 = float(base[0])  # one value for every output
    if kind in ("logit", "multi_logit"):
        if abs(f0) > 30:
            raise XGBoostFormatError(f"the initial log-odds {f0} is beyond what XGBoost's "
                                     f"float32 base_score can hold as a probability; save "
                                     f"the model with format='distboost'")
        return _float32_text(1.0 / (1.0 + math.exp(-f0)))
    if kind == "log":  # survival: XGBoost's margin is log(base_score)
        return _float32_text(math.exp(f0))
    return _float32_text(f0)


def _float32_text(value: float) -> str:
    """The shortest text of ``value`` rounded to float32, as XGBoost holds it.
    XGBoost before 3.1 does not read longer decimals (it keeps its default
    base_score 0.5 for a 17-digit one, silently)."""
    return np.format_float_scientific(np.float32(value), unique=True, trim="-")


def model_to_xgboost(est, categories: bool = True) -> dict:
    """The fitted estimator as XGBoost's JSON model (a dict); see the module.
    ``categories=False`` leaves the training categories out: codes only, in
    the 2.1 layout, for readers that refuse a category container (treelite
    4.8 does)."""
    est._check_fitted()
    objective, kind, scale = xgboost_objective(est)
    terms = est._additive_trees()
    dart = getattr(est, "tree_weights_", None)  # DART: the leaves as they are, the weights apart
    weight = terms.tree_weight if dart is None else np.ones(len(terms.trees))
    terms = terms._replace(tree_weight=scale * weight, base_score=scale * terms.base_score)
    schema = est._schema
    n_features = schema.n_features
    booster, base = _gbtree(est, terms, kind, n_features, categories)
    if dart is not None:
        booster = _dart(booster, dart, kind)
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
            "num_target": str(terms.n_outputs if kind in ("targets", *_MULTI_TARGET) else 1),
        },
        "objective": objective,
    }
    if "cats" in booster.get("gbtree", booster)["model"]:
        warn_if_xgboost_ignores_categories()
        return {"learner": learner, "version": CATEGORIES_VERSION}
    return {"learner": learner, "version": FORMAT_VERSION}
