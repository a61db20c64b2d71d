"""Best-split search over histograms, and leaf values.

The gradient criterion is XGBoost's regularized objective (Chen & Guestrin
2016, eqs. 5-7; seed 003):

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

from dataclasses import dataclass

import numba
import numpy as np

from ._common import MAX_BINS, MISSING_BIN

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
def _candidate_gain(gl, hl, cl, miss, missing_left, total, scale_g, scale_h, lam, mcw, min_count,
                    parent_score):
    """Gain of the split whose left side holds (gl, hl, cl) plus, if
    ``missing_left``, the missing bin; -inf where a child is too small."""
    if missing_left:
        gl, hl, cl = gl + miss[G], hl + miss[H], cl + miss[C]
    if cl < min_count or total[C] - cl < min_count:
        return -np.inf, cl
    fh_l = hl / scale_h
    fh_r = (total[H] - hl) / scale_h
    if fh_l < mcw or fh_r < mcw:
        return -np.inf, cl
    gain = 0.5 * (
        _score(gl / scale_g, fh_l, lam)
        + _score((total[G] - gl) / scale_g, fh_r, lam)
        - parent_score
    )
    return gain, cl


@numba.njit(cache=True)
def _scan_order(hist_f, order, total, scale_g, scale_h, lam, mcw, min_count, parent_score):
    """Best split "first k bins of ``order`` left" (k >= 1), the missing bin
    tried on both sides; returns (gain, k - 1, missing_left)."""
    best_gain, best_k, best_missing_left = -np.inf, -1, False
    miss = hist_f[MISSING_BIN]
    gl = np.int64(0)
    hl = np.int64(0)
    cl = np.int64(0)
    for k in range(len(order) - 1):
        b = order[k]
        gl += hist_f[b, G]
        hl += hist_f[b, H]
        cl += hist_f[b, C]
        for missing_left in (False, True):
            if missing_left and miss[C] == 0:
                continue
            gain, c_l = _candidate_gain(gl, hl, cl, miss, missing_left, total, scale_g, scale_h,
                                        lam, mcw, min_count, parent_score)
            if gain > best_gain:
                best_gain, best_k = gain, k
                # without missing values in the node, missing goes to the larger child
                best_missing_left = missing_left if miss[C] > 0 else c_l >= total[C] - c_l
    return best_gain, best_k, best_missing_left


@numba.njit(cache=True)
def _scan_numeric(hist_f, n_bins, total, scale_g, scale_h, lam, mcw, min_count, parent_score):
    """Best "bin <= b" split of one numeric feature; returns (gain, b, missing_left)."""
    return _scan_order(hist_f, np.arange(n_bins), total, scale_g, scale_h, lam, mcw, min_count,
                       parent_score)


@numba.njit(cache=True)
def category_order(hist_f, n_categories, scale_g, scale_h, lam):
    """Categories present in the node, sorted by G/(H+lambda) (then by code)."""
    present = np.empty(n_categories, np.int64)
    ratio = np.empty(n_categories, np.float64)
    k = 0
    for c in range(n_categories):
        if hist_f[c, C] > 0:
            present[k] = c
            ratio[k] = (hist_f[c, G] / scale_g) / (hist_f[c, H] / scale_h + lam)
            k += 1
    order = np.argsort(ratio[:k], kind="mergesort")
    return present[:k][order]


@numba.njit(cache=True)
def _scan_categorical(hist_f, n_categories, total, scale_g, scale_h, lam, mcw, min_count, parent_score):
    """Best prefix of the sorted categories; returns (gain, prefix_length, missing_left)."""
    order = category_order(hist_f, n_categories, scale_g, scale_h, lam)
    gain, k, missing_left = _scan_order(hist_f, order, total, scale_g, scale_h, lam, mcw,
                                        min_count, parent_score)
    return gain, k + 1, missing_left


@numba.njit(parallel=True, cache=True)
def find_best_splits(hist, totals, features, n_bins, is_categorical, scale_g, scale_h, lam, gamma, mcw, min_count):
    """Best split of each node.

    Parameters
    ----------
    hist : ndarray of shape (n_nodes, n_features, 256, 3), int64
    totals : ndarray of shape (n_nodes, 3), int64
        (G, H, count) of each node.
    features : ndarray of shape (n_nodes, n_features), bool
        Features each node may split on (column subsampling).
    n_bins : ndarray of shape (n_features,), int
        Non-missing bins (numeric) or categories (categorical) per feature.
    is_categorical : ndarray of shape (n_features,), bool
    scale_g, scale_h : float
        Fixed-point scales of g and h.

    Returns
    -------
    gain : ndarray (n_nodes,), float64; -inf where no split is allowed
    feature, split_bin : ndarray (n_nodes,), int64
        ``split_bin`` is the last left bin (numeric) or the prefix length of
        the sorted categories (categorical).
    missing_left : ndarray (n_nodes,), bool
    """
    n_nodes, n_features = hist.shape[0], hist.shape[1]
    gain = np.full(n_nodes, -np.inf)
    feature = np.full(n_nodes, -1, np.int64)
    split_bin = np.full(n_nodes, -1, np.int64)
    missing_left = np.zeros(n_nodes, np.bool_)
    for node in numba.prange(n_nodes):  # nodes are independent
        total = totals[node]
        parent_score = _score(total[G] / scale_g, total[H] / scale_h, lam)
        for f in range(n_features):
            if not features[node, f]:
                continue
            if is_categorical[f]:
                g_, b_, m_ = _scan_categorical(hist[node, f], n_bins[f], total, scale_g, scale_h, lam, mcw, min_count, parent_score)
            else:
                g_, b_, m_ = _scan_numeric(hist[node, f], n_bins[f], total, scale_g, scale_h, lam, mcw, min_count, parent_score)
            g_ -= gamma
            if g_ > gain[node]:
                gain[node], feature[node], split_bin[node], missing_left[node] = g_, f, b_, m_
    return gain, feature, split_bin, missing_left


def left_stats(hist_f, is_cat, split_bin, missing_left, scale_g, scale_h, lam):
    """Stats of the left child and the 256-entry direction table of a split.

    Returns
    -------
    left : ndarray of shape (3,), int64
    goes_left : ndarray of shape (256,), bool
    """
    goes_left = np.zeros(MAX_BINS, dtype=bool)
    if is_cat:
        n_cat = hist_f.shape[0] - 1
        order = category_order(hist_f, n_cat, scale_g, scale_h, lam)
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
    """XGBoost's split gain and leaf value on (g, h, count) histograms.

    The interface every criterion offers the grower: ``best_splits``,
    ``left_stats``, ``splittable``, ``node_value``, ``count`` and ``cover``.
    """

    n_stats = 3

    def __init__(self, params: SplitParams, scales):
        self.params = params
        self.scale_g, self.scale_h = scales

    def best_splits(self, hist, totals, masks, mapper):
        p = self.params
        return find_best_splits(
            hist, totals, masks, mapper.n_bins_non_missing_, mapper.is_categorical_,
            self.scale_g, self.scale_h, p.reg_lambda, p.gamma, p.min_child_weight,
            p.min_samples_leaf,
        )

    def left_stats(self, hist_f, is_cat, split_bin, missing_left):
        return left_stats(hist_f, is_cat, split_bin, missing_left, self.scale_g, self.scale_h,
                          self.params.reg_lambda)

    def splittable(self, totals) -> bool:
        p = self.params
        return (totals[C] >= 2 * p.min_samples_leaf
                and totals[H] / self.scale_h >= 2 * p.min_child_weight)

    def node_value(self, totals) -> float:
        return leaf_value(totals[G] / self.scale_g, totals[H] / self.scale_h, self.params.reg_lambda)

    def count(self, totals) -> int:
        return int(totals[C])

    def cover(self, totals) -> float:
        return float(totals[H] / self.scale_h)
