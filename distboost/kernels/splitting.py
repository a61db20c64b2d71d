"""Best-split search over histograms, and leaf values.

The gradient criterion is XGBoost's regularized objective (Chen & Guestrin
2016, eqs. 5-7):

* leaf value      w* = -G / (H + lambda)
* split gain      1/2 [G_L^2/(H_L+lambda) + G_R^2/(H_R+lambda) - G^2/(H+lambda)] - gamma

A split is kept only when its gain is positive and both children have a
hessian sum of at least ``min_child_weight``. Numeric features split on
"bin <= b"; the missing bin is tried on both sides and the better side becomes
the learned default direction (when a node has no missing values, missing
goes to the child with more rows). Categorical features are split by sorting
the categories present in the node by G/(H+lambda) and scanning that order as
if it were numeric (Fisher 1958: optimal for one output), so one side of the
split is a set of categories.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from .common import MAX_BINS, MISSING_BIN

G, H, C = 0, 1, 2  # positions of gradient, hessian and row count in a stats vector


@dataclass
class SplitParams:
    """Regularization of the gradient criterion."""

    reg_lambda: float = 1.0
    gamma: float = 0.0
    min_child_weight: float = 1.0
    min_samples_leaf: int = 1


@numba.njit(cache=True, inline="always")
def _score(g, h, reg_lambda):
    return g * g / (h + reg_lambda)


@numba.njit(cache=True, inline="always")
def bounded_value(g, h, lam, lower, upper):
    """Newton value -G/(H+lambda) clipped to [lower, upper] (XGBoost's
    ``TreeEvaluator::CalcWeight`` under monotone constraints)."""
    denom = h + lam
    w = -g / denom if denom > 0 else 0.0
    return min(max(w, lower), upper)


@numba.njit(cache=True, inline="always")
def _gain_given_value(g, h, lam, w):
    """-(2 G w + (H + lambda) w^2): twice the objective decrease of value w
    (Chen & Guestrin eq. 4; XGBoost's ``CalcGainGivenWeight``); G^2/(H+lambda)
    at w = -G/(H+lambda)."""
    return -(2.0 * g * w + (h + lam) * w * w)


@numba.njit(cache=True, inline="always")
def _candidate_gain(gl, hl, cl, miss, missing_left, total, scale_g, scale_h, lam, mcw, min_count,
                    parent_score, P, cst, bounds):
    """Gain of the split whose left side holds (gl, hl, cl) plus, if
    ``missing_left``, the missing bin; -inf where a child is too small.
    ``cl`` sums statistic ``P``: the row count, or the hessian (see
    ``GradientCriterion``).

    ``bounds`` (lower, upper, bounded): with ``bounded`` the children's values
    are clipped to the node's bounds, the gain is computed from the clipped
    values, and a split whose values break the order ``cst`` of its feature
    (+1 increasing, -1 decreasing) is refused (XGBoost's
    ``TreeEvaluator::CalcSplitGain``)."""
    if missing_left:
        gl, hl, cl = gl + miss[G], hl + miss[H], cl + miss[P]
    if cl < min_count or total[P] - cl < min_count:
        return -np.inf, cl
    # the scales are powers of two: multiplying by their inverses is exact
    fh_l = hl * (1.0 / scale_h)
    fh_r = (total[H] - hl) * (1.0 / scale_h)
    if fh_l < mcw or fh_r < mcw:
        return -np.inf, cl
    fg_l = gl * (1.0 / scale_g)
    fg_r = (total[G] - gl) * (1.0 / scale_g)
    if bounds[2]:
        w_l = bounded_value(fg_l, fh_l, lam, bounds[0], bounds[1])
        w_r = bounded_value(fg_r, fh_r, lam, bounds[0], bounds[1])
        if (cst > 0 and w_l > w_r) or (cst < 0 and w_l < w_r):
            return -np.inf, cl
        gain = 0.5 * (_gain_given_value(fg_l, fh_l, lam, w_l)
                      + _gain_given_value(fg_r, fh_r, lam, w_r) - parent_score)
        return gain, cl
    gain = 0.5 * (
        _score(fg_l, fh_l, lam)
        + _score(fg_r, fh_r, lam)
        - parent_score
    )
    return gain, cl


@numba.njit(cache=True)
def _scan_order(hist_f, order, n_order, total, scale_g, scale_h, lam, mcw, min_count,
                parent_score, P, cst, bounds, work):
    """Best split "first k bins of ``order`` left" (k >= 1), the missing bin
    tried on both sides; returns (gain, k - 1, missing_left). ``order`` None
    is bins ``0 .. n_order - 1`` in turn (numeric: compiled apart, no array).
    ``work``: ``scan_work()``, reused from call to call."""
    if hist_f[MISSING_BIN, P] == 0 and not bounds[2]:
        return _scan_plain(hist_f, order, n_order, total, scale_g, scale_h, lam, mcw, min_count,
                           parent_score, P, work)
    best_gain, best_k, best_missing_left = -np.inf, -1, False
    miss = hist_f[MISSING_BIN]
    gl = np.int64(0)
    hl = np.int64(0)
    cl = np.int64(0)
    for k in range(n_order - 1):
        b = k if order is None else order[k]
        if k > 0 and hist_f[b, P] == 0:
            continue  # an empty bin: the candidate before it again (the first one, missing
            # values alone on the left, is tried whatever bin 0 holds)
        gl += hist_f[b, G]
        hl += hist_f[b, H]
        cl += hist_f[b, P]
        for missing_left in (False, True):
            if missing_left and miss[P] == 0:
                continue
            gain, c_l = _candidate_gain(gl, hl, cl, miss, missing_left, total, scale_g, scale_h,
                                        lam, mcw, min_count, parent_score, P, cst, bounds)
            if gain > best_gain:
                best_gain, best_k = gain, k
                # without missing values in the node, missing goes to the larger child
                # (by count; without counts the grower decides once the rows are routed)
                best_missing_left = missing_left if miss[P] > 0 else c_l >= total[P] - c_l
    return best_gain, best_k, best_missing_left


@numba.njit(cache=True)
def scan_work():
    """Room for ``_scan_plain``'s passes over at most ``MAX_BINS`` candidates:
    (sums, gains); sums' rows the left sums of G, H and the presence statistic,
    and the candidates' positions."""
    return np.empty((4, MAX_BINS), np.int64), np.empty(MAX_BINS)


@numba.njit(cache=True, error_model="numpy")
def _scan_plain(hist_f, order, n_order, total, scale_g, scale_h, lam, mcw, min_count,
                parent_score, P, work):
    """``_scan_order`` for a node with no missing values and no bounds: the
    same candidates, gains and choice, in three passes: the candidates' left
    sums, their gains, the first largest. The gains' pass has no branch and no
    loop-carried value, so it runs on vector registers (divisions included:
    numpy's error model, where Python's would check each for zero)."""
    sums, gains = work  # indexed, not cut into views: each view costs two atomic counts
    m = _candidates(hist_f, order, n_order - 1, P, sums)
    inv_g, inv_h = 1.0 / scale_g, 1.0 / scale_h
    total_g, total_h, total_p = total[G], total[H], total[P]
    for j in range(m):
        fh_l = sums[1, j] * inv_h
        fh_r = (total_h - sums[1, j]) * inv_h
        gain = 0.5 * (_score(sums[0, j] * inv_g, fh_l, lam)
                      + _score((total_g - sums[0, j]) * inv_g, fh_r, lam) - parent_score)
        ok = ((sums[2, j] >= min_count) & (total_p - sums[2, j] >= min_count)
              & (fh_l >= mcw) & (fh_r >= mcw) & (fh_l + lam > 0) & (fh_r + lam > 0))
        gains[j] = gain if ok else -np.inf
    best_gain, best_j = -np.inf, -1
    for j in range(m):
        if gains[j] > best_gain:
            best_gain, best_j = gains[j], j
    if best_j < 0:
        return best_gain, -1, False
    return best_gain, sums[3, best_j], sums[2, best_j] >= total_p - sums[2, best_j]


@numba.njit(cache=True, inline="always")
def _candidates(hist_f, order, n, P, sums):
    """The candidates k < n, "the first k + 1 bins of ``order`` (bins
    ``0 .. n - 1`` when None) left": the first, and each whose bin holds rows
    (a bin with none repeats the candidate before it). Listed in order in
    ``sums``' columns, with their left sums of G, H and statistic P (rows 0-2)
    and k (row 3), without a branch per bin; returns how many."""
    gl = np.int64(0)
    hl = np.int64(0)
    cl = np.int64(0)
    m = 0
    for k in range(n):
        b = k if order is None else order[k]
        gl += hist_f[b, G]
        hl += hist_f[b, H]
        cl += hist_f[b, P]
        sums[0, m], sums[1, m], sums[2, m], sums[3, m] = gl, hl, cl, k
        m += (k == 0) | (hist_f[b, P] != 0)
    return m


@numba.njit(cache=True)
def stable_order(keys):
    """The positions of ``keys`` in ascending order, ties in position order
    (``np.argsort(kind="stable")``); an insertion sort, for the few
    categories of a node (and none of a general sort's compiled code)."""
    order = np.arange(len(keys))
    for i in range(1, len(keys)):
        j, q = i - 1, order[i]
        while j >= 0 and _after(keys[order[j]], keys[q]):
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = q
    return order


@numba.njit(cache=True, inline="always")
def _after(a, b):
    """Whether ``a`` sorts after ``b`` (NaN after everything, as numpy sorts)."""
    return a > b or (np.isnan(a) and not np.isnan(b))


@numba.njit(cache=True)
def category_order(hist_f, n_categories, scale_g, scale_h, lam, P):
    """Categories present in the node (statistic ``P`` positive), sorted by
    G/(H+lambda) (then by code)."""
    present = np.empty(n_categories, np.int64)
    ratio = np.empty(n_categories, np.float64)
    k = 0
    for c in range(n_categories):
        if hist_f[c, P] > 0:
            present[k] = c
            ratio[k] = (hist_f[c, G] / scale_g) / (hist_f[c, H] / scale_h + lam)
            k += 1
    return present[:k][stable_order(ratio[:k])]


@numba.njit(cache=True)
def _scan_feature(hist_f, n_bins_f, is_cat, total, scale_g, scale_h, lam, mcw, min_count,
                  parent_score, P, cst, bounds, work):
    """Best split of one feature: "bin <= b" (numeric; returns b) or a prefix of
    the sorted categories (categorical; returns its length); (gain, b, missing_left)."""
    if is_cat:
        order = category_order(hist_f, n_bins_f, scale_g, scale_h, lam, P)
        gain, k, missing_left = _scan_order(hist_f, order, len(order), total, scale_g, scale_h,
                                            lam, mcw, min_count, parent_score, P, cst, bounds,
                                            work)
        return gain, k + 1, missing_left
    return _scan_order(hist_f, None, n_bins_f, total, scale_g, scale_h, lam, mcw, min_count,
                       parent_score, P, cst, bounds, work)


@numba.njit(cache=True)
def _best_of_node(hist_n, total, features_n, n_bins, is_categorical, scale_g, scale_h, lam,
                  gamma, mcw, min_count, P, monotonic, bounds):
    """Best split of one node over its allowed features; (gain, feature, bin, missing_left)."""
    if bounds[2]:
        fg, fh = total[G] / scale_g, total[H] / scale_h
        parent_score = _gain_given_value(fg, fh, lam,
                                         bounded_value(fg, fh, lam, bounds[0], bounds[1]))
    else:
        parent_score = _score(total[G] / scale_g, total[H] / scale_h, lam)
    best = (-np.inf, -1, -1, False)
    work = scan_work()
    for f in range(hist_n.shape[0]):
        if not features_n[f]:
            continue
        cst = monotonic[f] if len(monotonic) else 0
        g_, b_, m_ = _scan_feature(hist_n[f], n_bins[f], is_categorical[f], total, scale_g,
                                   scale_h, lam, mcw, min_count, parent_score, P, cst, bounds,
                                   work)
        g_ -= gamma
        if g_ > best[0]:
            best = (g_, f, b_, m_)
    return best


@numba.njit(parallel=True, cache=True)
def _best_splits(hist, totals, features, n_bins, is_categorical, scale_g, scale_h, lam, gamma,
                 mcw, min_count, P, monotonic, lower, upper):
    n_nodes = hist.shape[0]
    gain = np.full(n_nodes, -np.inf)
    feature = np.full(n_nodes, -1, np.int64)
    split_bin = np.full(n_nodes, -1, np.int64)
    missing_left = np.zeros(n_nodes, np.bool_)
    bounded = len(lower) > 0
    for node in numba.prange(n_nodes):  # nodes are independent
        bounds = (lower[node], upper[node], True) if bounded else (-np.inf, np.inf, False)
        gain[node], feature[node], split_bin[node], missing_left[node] = _best_of_node(
            hist[node], totals[node], features[node], n_bins, is_categorical, scale_g, scale_h,
            lam, gamma, mcw, min_count, P, monotonic, bounds)
    return gain, feature, split_bin, missing_left


_NO_BOUNDS = np.zeros(0)
_NO_CONSTRAINTS = np.zeros(0, np.int8)


def find_best_splits(hist, totals, features, n_bins, is_categorical, scale_g, scale_h, lam,
                     gamma, mcw, min_count, P=C, monotonic=None, lower=None, upper=None):
    """Best split of each node.

    Parameters
    ----------
    hist : ndarray of shape (n_nodes, n_features, 256, n_stats), int64
    totals : ndarray of shape (n_nodes, n_stats), int64
        (G, H, count) or (G, H) of each node.
    features : ndarray of shape (n_nodes, n_features), bool
        Features each node may split on (column subsampling).
    n_bins : ndarray of shape (n_features,), int
        Non-missing bins (numeric) or categories (categorical) per feature.
    is_categorical : ndarray of shape (n_features,), bool
    scale_g, scale_h : float
        Fixed-point scales of g and h, powers of two (divisions by them are
        multiplications by their exact inverses).
    min_count : int
        Fewest rows in a child (``min_samples_leaf``).
    P : int
        Statistic that tells a bin's rows exist and counts them against
        ``min_count``: the row count ``C``, or ``H`` for (G, H) statistics
        whose hessian is at least one unit per row (then ``min_count`` is 1).
    monotonic : ndarray of shape (n_features,), int8, optional
        Monotone constraint of each feature (-1, 0, +1; ``constraints``).
    lower, upper : ndarray of shape (n_nodes,), float64, optional
        Bounds of each node's value. Given, every candidate's children
        values are clipped to them, the gains are those of the clipped values,
        and splits breaking their feature's order are refused (XGBoost's
        ``TreeEvaluator``); without them the gains are the unconstrained
        ones, to the bit.

    Returns
    -------
    gain : ndarray (n_nodes,), float64; -inf where no split is allowed
    feature, split_bin : ndarray (n_nodes,), int64
        ``split_bin`` is the last left bin (numeric) or the prefix length of
        the sorted categories (categorical).
    missing_left : ndarray (n_nodes,), bool
    """
    if lower is None:
        lower = upper = _NO_BOUNDS
    monotonic = _NO_CONSTRAINTS if monotonic is None else np.asarray(monotonic, np.int8)
    return _best_splits(hist, totals, features, n_bins, is_categorical, float(scale_g),
                        float(scale_h), float(lam), float(gamma), float(mcw), int(min_count),
                        int(P), monotonic, np.asarray(lower, np.float64),
                        np.asarray(upper, np.float64))



def left_stats(hist_f, is_cat, split_bin, missing_left, scale_g, scale_h, lam, P=C):
    """Stats of the left child and the 256-entry direction table of a split.

    Returns
    -------
    left : ndarray of shape (n_stats,), int64
    goes_left : ndarray of shape (256,), bool
    """
    goes_left = np.zeros(MAX_BINS, dtype=bool)
    if is_cat:
        n_cat = hist_f.shape[0] - 1
        order = category_order(hist_f, n_cat, scale_g, scale_h, lam, P)
        goes_left[order[:split_bin]] = True
    else:
        goes_left[: split_bin + 1] = True
    goes_left[MISSING_BIN] = missing_left
    left = hist_f[goes_left].sum(axis=0)
    return left, goes_left


def leaf_value(g: float, h: float, reg_lambda: float) -> float:
    """Newton leaf value -G/(H+lambda) (Chen & Guestrin 2016, eq. 5)."""
    denom = h + reg_lambda
    return -g / denom if denom > 0 else 0.0


class GradientCriterion:
    """XGBoost's split gain and leaf value on (g, h, count) or (g, h) histograms.

    A ``trees.params.Criterion``.

    With ``counts=False`` the statistics are (g, h) only: one add fewer per
    row and feature in every histogram. That needs every row's fixed-point
    hessian to be at least 1 (``kernels.fixed_point``), so that a positive hessian
    sum means "rows present" and the ``min_samples_leaf == 1`` test becomes
    "hessian sum >= 1"; and ``min_child_weight > 0``, so that no empty child
    passes. Row counts then come from the row partitions (``count`` is
    None, and the grower asks the workers), as in XGBoost, whose histograms
    hold no counts either.
    """

    def __init__(self, params: SplitParams, scales, counts: bool = True):
        if not counts and self.counts_needed(params):
            raise ValueError("(g, h) statistics need min_samples_leaf == 1 and "
                             "min_child_weight > 0; use counts=True")
        if any(math.frexp(s)[0] != 0.5 for s in scales):
            raise ValueError(f"fixed-point scales must be powers of two, got {tuple(scales)} "
                             f"(fixed_point.fixed_point_scales makes them)")
        self.params = params
        self.scale_g, self.scale_h = scales
        self.n_stats = 3 if counts else 2
        self.P = C if counts else H  # the statistic telling that rows are present

    @staticmethod
    def counts_needed(params: SplitParams) -> bool:
        """Whether histograms need a row count for these parameters."""
        return params.min_samples_leaf != 1 or params.min_child_weight <= 0

    def best_splits(self, hist, totals, masks, mapper, constraints=None):
        """Best split of each node (``find_best_splits``); ``constraints``:
        (monotonic, lower, upper) of ``find_best_splits``, or None."""
        p = self.params
        return find_best_splits(
            hist, totals, masks, mapper.n_bins_non_missing_, mapper.is_categorical_,
            self.scale_g, self.scale_h, p.reg_lambda, p.gamma, p.min_child_weight,
            p.min_samples_leaf, self.P, *(constraints or ()),
        )

    def left_stats(self, hist_f, is_cat, split_bin, missing_left):
        return left_stats(hist_f, is_cat, split_bin, missing_left, self.scale_g, self.scale_h,
                          self.params.reg_lambda, self.P)

    def has_missing(self, hist_f) -> bool:
        """Whether the node has rows in the missing bin of this feature."""
        return bool(hist_f[MISSING_BIN, self.P] > 0)

    def splittable(self, totals) -> bool:
        p = self.params
        return (totals[self.P] >= 2 * p.min_samples_leaf
                and totals[H] / self.scale_h >= 2 * p.min_child_weight)

    def node_value(self, totals, lower: float = -np.inf, upper: float = np.inf) -> float:
        """-G/(H+lambda), clipped to the node's bounds [lower, upper] (monotone
        constraints; XGBoost's ``CalcWeight``)."""
        value = leaf_value(totals[G] / self.scale_g, totals[H] / self.scale_h,
                           self.params.reg_lambda)
        return min(max(value, lower), upper) if lower > -np.inf or upper < np.inf else value

    def node_values(self, totals, lower=None, upper=None) -> np.ndarray:
        """``node_value`` of every row of ``totals`` (n_nodes, n_stats), with
        the nodes' bounds when given (arrays; +-inf: unbounded)."""
        g, h = totals[:, G] / self.scale_g, totals[:, H] / self.scale_h
        denom = h + self.params.reg_lambda
        value = np.divide(-g, denom, out=np.zeros(len(denom)), where=denom > 0)
        if lower is None:
            return value
        bounded = (lower > -np.inf) | (upper < np.inf)
        return np.where(bounded, np.minimum(np.maximum(value, lower), upper), value)

    def covers(self, totals) -> np.ndarray:
        """``cover`` of every row of ``totals``."""
        return totals[:, H] / self.scale_h

    def bound_value(self, totals) -> float:
        """The value monotone constraints order: the Newton value."""
        return self.node_value(totals)

    def size(self, totals) -> float:
        """What decides the smaller child (built, the other subtracted): rows,
        or without counts the hessian sum (XGBoost's choice)."""
        return totals[self.P]

    def count(self, totals) -> int | None:
        """Rows in the node; None without counts (the grower gets them from the workers)."""
        return int(totals[C]) if self.n_stats == 3 else None

    def cover(self, totals) -> float:
        return float(totals[H] / self.scale_h)
