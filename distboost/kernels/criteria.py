"""Impurity criteria on class-weight histograms (classification trees).

The statistics of a row are ``(w * onehot(class), count)``: K fixed-point
class weights (an AdaBoost observation weight, or a bootstrap count times the
sample weight) and the row's multiplicity. A node with class weights
``c_1..c_K`` (total W) has the weighted impurity W·I(p), p = c / W (ESL
9.2.3, eq. 9.17, with every count a sum of observation weights, as CART
weights its cases: Breiman, Friedman, Olshen & Stone 1984):

* Gini              W·I = W - sum_k c_k^2 / W
* entropy           W·I = W log W - sum_k c_k log c_k
* misclassification W·I = W - max_k c_k

A split's gain is the decrease ``W·I - W_L·I_L - W_R·I_R``; the leaf's class
is the weighted majority and its vector value the class frequencies p.
Categorical features are split on a prefix of the categories sorted by the
frequency of the node's majority class, the optimal order for two classes
(Breiman et al. 1984, sec. 4.2.2) and a heuristic for more.

``VarianceCriterion`` is the regression forests' criterion: squared error
reduction with mean leaves, i.e. the gradient criterion on (g, h) =
(-w·count·y, w·count) with lambda = 0.
"""

from __future__ import annotations

import numba
import numpy as np

from .common import MAX_BINS, MISSING_BIN
from .splitting import GradientCriterion, SplitParams, stable_order

CRITERIA = {"gini": 0, "entropy": 1, "log_loss": 1, "misclassification": 2}
_RELATIVE_TOLERANCE = 1e-12  # gains below this fraction of W are rounding noise


@numba.njit(cache=True)
def _weighted_impurity(c, kind):
    """W·I of a class-weight vector ``c`` (float64)."""
    total = 0.0
    for k in range(len(c)):
        total += c[k]
    if total <= 0.0:
        return 0.0
    if kind == 0:
        s = 0.0
        for k in range(len(c)):
            s += c[k] * c[k]
        return total - s / total
    if kind == 1:
        s = total * np.log(total)
        for k in range(len(c)):
            if c[k] > 0.0:
                s -= c[k] * np.log(c[k])
        return s
    m = 0.0
    for k in range(len(c)):
        m = max(m, c[k])
    return total - m


@numba.njit(cache=True)
def class_category_order(hist_f, n_categories, majority):
    """Categories present in the node, sorted by the frequency of class ``majority``."""
    n_classes = hist_f.shape[1] - 1
    present = np.empty(n_categories, np.int64)
    ratio = np.empty(n_categories, np.float64)
    k = 0
    for c in range(n_categories):
        if hist_f[c, n_classes] > 0:
            w = 0.0
            for j in range(n_classes):
                w += hist_f[c, j]
            present[k] = c
            ratio[k] = hist_f[c, majority] / w if w > 0 else 0.0
            k += 1
    return present[:k][stable_order(ratio[:k])]


@numba.njit(cache=True, inline="always")
def _ordered(cl, w_l, cr, w_r, cst, bounds):
    """Whether the children's class-1 frequencies, clipped to the node's bounds,
    keep the order ``cst`` (+1: left <= right; -1: left >= right)."""
    p_l = min(max(cl[1] / w_l, bounds[0]), bounds[1])
    p_r = min(max(cr[1] / w_r, bounds[0]), bounds[1])
    return not ((cst > 0 and p_l > p_r) or (cst < 0 and p_l < p_r))


@numba.njit(cache=True)
def _scan(hist_f, order, total, kind, min_count, parent, cst, bounds):
    """Best prefix of ``order`` (bins or categories) as the left child.

    Returns (gain, prefix_length, missing_left); the missing bin is tried on
    both sides. With ``bounds[2]`` (monotone constraints, two classes) a
    split whose clipped class-1 frequencies break the order ``cst`` is
    refused (``_ordered``).
    """
    n_classes = total.shape[0] - 1
    miss = hist_f[MISSING_BIN]
    best_gain, best_len, best_missing_left = -np.inf, -1, False
    left = np.zeros(n_classes + 1, np.int64)
    cl = np.empty(n_classes, np.float64)
    cr = np.empty(n_classes, np.float64)
    for p in range(len(order) - 1):
        if p > 0 and hist_f[order[p], n_classes] == 0:
            continue  # an empty bin: the candidate before it again (``splitting._scan_order``)
        for k in range(n_classes + 1):
            left[k] += hist_f[order[p], k]
        for missing_left in (False, True):
            if missing_left and miss[n_classes] == 0:
                continue
            n_l = left[n_classes] + (miss[n_classes] if missing_left else 0)
            n_r = total[n_classes] - n_l
            if n_l < min_count or n_r < min_count:
                continue
            w_l = 0.0
            w_r = 0.0
            for k in range(n_classes):
                cl[k] = left[k] + (miss[k] if missing_left else 0)
                cr[k] = total[k] - cl[k]
                w_l += cl[k]
                w_r += cr[k]
            if w_l <= 0.0 or w_r <= 0.0:
                continue
            if bounds[2] and not _ordered(cl, w_l, cr, w_r, cst, bounds):
                continue
            gain = parent - _weighted_impurity(cl, kind) - _weighted_impurity(cr, kind)
            if gain > best_gain:
                best_gain, best_len = gain, p + 1
                best_missing_left = missing_left if miss[n_classes] > 0 else n_l >= n_r
    return best_gain, best_len, best_missing_left


def find_best_impurity_splits(hist, totals, features, n_bins, is_categorical, kind, min_count,
                              tolerance, monotonic=None, lower=None, upper=None):
    """Best split of each node by impurity decrease.

    Parameters
    ----------
    hist : ndarray of shape (n_nodes, n_features, 256, K + 1), int64
    totals : ndarray of shape (n_nodes, K + 1), int64
    features : ndarray of shape (n_nodes, n_features), bool
    n_bins : ndarray of shape (n_features,), int
    is_categorical : ndarray of shape (n_features,), bool
    kind : int
        0 Gini, 1 entropy, 2 misclassification.
    min_count : int
        Fewest rows (counted with multiplicity) in a child.
    tolerance : float
        Gains at most ``tolerance * W`` count as no gain.

    Returns
    -------
    gain : ndarray (n_nodes,), float64, in fixed-point weight units; -inf: no split
    feature, split_bin : ndarray (n_nodes,), int64
        ``split_bin``: last left bin (numeric) or prefix length (categorical).
    missing_left : ndarray (n_nodes,), bool

    ``monotonic`` (n_features,) and ``lower``, ``upper`` (n_nodes,): monotone
    constraints on the frequency of class 1 of two classes (``_scan``).
    """
    if lower is None:
        lower = upper = np.zeros(0)
    monotonic = np.zeros(0, np.int8) if monotonic is None else np.asarray(monotonic, np.int8)
    return _best_impurity_splits(hist, totals, features, n_bins, is_categorical, kind, min_count,
                                 tolerance, monotonic, np.asarray(lower, np.float64),
                                 np.asarray(upper, np.float64))


@numba.njit(cache=True)
def _best_impurity_splits(hist, totals, features, n_bins, is_categorical, kind, min_count,
                          tolerance, monotonic, lower, upper):
    n_nodes, n_features = hist.shape[0], hist.shape[1]
    n_classes = hist.shape[3] - 1
    bounded = len(lower) > 0
    gain = np.full(n_nodes, -np.inf)
    feature = np.full(n_nodes, -1, np.int64)
    split_bin = np.full(n_nodes, -1, np.int64)
    missing_left = np.zeros(n_nodes, np.bool_)
    c = np.empty(n_classes, np.float64)
    for node in range(n_nodes):
        total = totals[node]
        w = 0.0
        majority = 0
        for k in range(n_classes):
            c[k] = total[k]
            w += c[k]
            if c[k] > c[majority]:
                majority = k
        parent = _weighted_impurity(c, kind)
        bounds = (lower[node], upper[node], True) if bounded else (-np.inf, np.inf, False)
        for f in range(n_features):
            if not features[node, f]:
                continue
            cst = monotonic[f] if len(monotonic) else 0
            if is_categorical[f]:
                order = class_category_order(hist[node, f], n_bins[f], majority)
                g_, b_, m_ = _scan(hist[node, f], order, total, kind, min_count, parent, cst,
                                   bounds)
            else:
                order = np.arange(n_bins[f])
                g_, b_, m_ = _scan(hist[node, f], order, total, kind, min_count, parent, cst,
                                   bounds)
                b_ -= 1  # prefix length -> last left bin
            if g_ > gain[node]:
                gain[node], feature[node], split_bin[node], missing_left[node] = g_, f, b_, m_
        if gain[node] <= tolerance * w:
            gain[node] = -np.inf
    return gain, feature, split_bin, missing_left


class ImpurityCriterion:
    """Weighted impurity splits and class-frequency leaves on (w·onehot, count)
    stats; a ``trees.params.Criterion``.

    Parameters
    ----------
    n_classes : int
    criterion : {"gini", "entropy", "log_loss", "misclassification"}
    scale : float
        Fixed-point scale of the class weights.
    min_samples_leaf : int
    """

    def __init__(self, n_classes: int, criterion: str = "gini", scale: float = 1.0,
                 min_samples_leaf: int = 1):
        if criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {criterion!r}")
        self.n_classes, self.kind = n_classes, CRITERIA[criterion]
        self.scale, self.min_samples_leaf = scale, min_samples_leaf
        self.n_stats = n_classes + 1

    def best_splits(self, hist, totals, masks, mapper, constraints=None):
        """Best split of each node; ``constraints``: (monotonic, lower, upper) on
        the class-1 frequency (two classes), or None."""
        gain, feature, split_bin, missing_left = find_best_impurity_splits(
            hist, totals, masks, mapper.n_bins_non_missing_, mapper.is_categorical_,
            self.kind, self.min_samples_leaf, _RELATIVE_TOLERANCE, *(constraints or ()),
        )
        return gain / self.scale, feature, split_bin, missing_left

    def left_stats(self, hist_f, is_cat, split_bin, missing_left):
        goes_left = np.zeros(MAX_BINS, dtype=bool)
        if is_cat:
            majority = int(np.argmax(hist_f[:, : self.n_classes].sum(axis=0)))
            order = class_category_order(hist_f, hist_f.shape[0] - 1, majority)
            goes_left[order[:split_bin]] = True
        else:
            goes_left[: split_bin + 1] = True
        goes_left[MISSING_BIN] = missing_left
        return hist_f[goes_left].sum(axis=0), goes_left

    def splittable(self, totals) -> bool:
        """At least 2·min_samples_leaf rows and more than one class present."""
        return (totals[self.n_classes] >= 2 * self.min_samples_leaf
                and np.count_nonzero(totals[: self.n_classes]) > 1)

    def node_value(self, totals, lower: float = -np.inf, upper: float = np.inf) -> float:
        """The weighted majority class (its code), ESL eq. 9.17's c_m; under
        bounds, the most frequent class of the clipped frequencies."""
        if lower > -np.inf or upper < np.inf:
            return float(np.argmax(self.node_vector(totals, lower, upper)))
        return float(np.argmax(totals[: self.n_classes]))

    def node_vector(self, totals, lower: float = -np.inf, upper: float = np.inf) -> np.ndarray:
        """Class frequencies p_k of the node; with bounds (monotone constraints,
        two classes) p_1 is clipped to [lower, upper] and p_0 = 1 - p_1, as
        scikit-learn's trees clip a node's value."""
        c = totals[: self.n_classes].astype(np.float64)
        s = c.sum()
        p = c / s if s > 0 else np.full(self.n_classes, 1.0 / self.n_classes)
        if lower > -np.inf or upper < np.inf:
            p1 = min(max(p[1], lower), upper)
            p = np.array([1.0 - p1, p1])
        return p

    def node_vectors(self, totals, lower=None, upper=None) -> np.ndarray:
        """``node_vector`` of every row of ``totals`` (n_nodes, K + 1), with the
        nodes' bounds when given (arrays; +-inf: unbounded)."""
        c = totals[:, : self.n_classes].astype(np.float64)
        s = c.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(s > 0, c / s, 1.0 / self.n_classes)
        if lower is not None:
            bounded = (lower > -np.inf) | (upper < np.inf)
            p1 = np.minimum(np.maximum(p[:, 1], lower), upper)
            p = np.where(bounded[:, None], np.stack([1.0 - p1, p1], axis=1), p)
        return p

    def node_values(self, totals, lower=None, upper=None) -> np.ndarray:
        """``node_value`` of every row of ``totals``: the majority class's code."""
        if lower is None:
            return np.argmax(totals[:, : self.n_classes], axis=1).astype(np.float64)
        bounded = (lower > -np.inf) | (upper < np.inf)
        return np.where(bounded, np.argmax(self.node_vectors(totals, lower, upper), axis=1),
                        np.argmax(totals[:, : self.n_classes], axis=1)).astype(np.float64)

    def covers(self, totals) -> np.ndarray:
        """``cover`` of every row of ``totals``."""
        return totals[:, : self.n_classes].sum(axis=1) / self.scale

    def bound_value(self, totals) -> float:
        """The value monotone constraints order: the frequency of class 1."""
        return float(self.node_vector(totals)[1])

    def count(self, totals) -> int:
        return int(totals[self.n_classes])

    size = count  # the smaller child (built, the other subtracted) has fewer rows

    def has_missing(self, hist_f) -> bool:
        """Whether the node has rows in the missing bin of this feature."""
        return bool(hist_f[MISSING_BIN, self.n_classes] > 0)

    def cover(self, totals) -> float:
        return float(totals[: self.n_classes].sum() / self.scale)


class VarianceCriterion(GradientCriterion):
    """Squared-error reduction with mean leaves on (-w·n·y, w·n, n) stats.

    With lambda = 0 the gradient gain G_L²/H_L + G_R²/H_R - G²/H is exactly
    the decrease of the weighted sum of squares, and -G/H the weighted mean.
    """

    def __init__(self, scales, min_samples_leaf: int = 1):
        # lambda = the smallest float: G²/(H + lambda) is G²/H to the last bit for every
        # nonempty node, and 0 (not 0/0) for a tree whose bootstrap sample is empty
        tiny = np.finfo(float).tiny
        params = SplitParams(reg_lambda=tiny, gamma=0.0, min_child_weight=tiny,
                             min_samples_leaf=min_samples_leaf)
        super().__init__(params, scales)

    def best_splits(self, hist, totals, masks, mapper, constraints=None):
        gain, feature, split_bin, missing_left = super().best_splits(hist, totals, masks, mapper,
                                                                     constraints)
        noise = _RELATIVE_TOLERANCE * np.abs(totals[:, 0] / self.scale_g) ** 2 / np.maximum(
            totals[:, 1] / self.scale_h, np.finfo(float).tiny)
        gain = np.where(gain > noise, gain, -np.inf)
        return gain, feature, split_bin, missing_left
