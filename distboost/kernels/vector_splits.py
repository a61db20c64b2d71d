"""Best-split search for vector-leaf trees (one tree, k outputs).

Each row carries k pairs of fixed-point statistics, laid out ``(g_0, h_0,
g_1, h_1, ..., g_{k-1}, h_{k-1})``, and where the parameters need one a row
count after them; statistic ``P``, the count or else h_0 (at least 1 a row
in fixed point), tells that rows are present (``splitting``'s rule). A split's gain is the
sum over the outputs of Chen & Guestrin (2016)'s eq. 7,

    1/2 sum_j [G_Lj^2/(H_Lj+lambda) + G_Rj^2/(H_Rj+lambda) - G_j^2/(H_j+lambda)] - gamma,

the decrease of the objective sum_j L_j when each output's leaf takes its
own Newton value -G_j/(H_j+lambda) (XGBoost's ``multi_strategy=
"multi_output_tree"``). A child must hold at least ``min_child_weight`` of
every output's hessian. Numeric features only: "bin <= b", the missing bin
tried on both sides (``splitting``'s rule).
"""

from __future__ import annotations

import numba
import numpy as np

from .common import MISSING_BIN


@numba.njit(cache=True, inline="always")
def _score(g, h, lam):
    return g * g / (h + lam)


@numba.njit(cache=True)
def vector_score(total, k, inv_g, inv_h, lam):
    """sum_j G_j^2/(H_j+lambda) of a node's totals."""
    s = 0.0
    for j in range(k):
        s += _score(total[2 * j] * inv_g, total[2 * j + 1] * inv_h, lam)
    return s


@numba.njit(cache=True)
def _candidates(hist_f, n_bins_f, P):
    """The candidates' left sums, one column each, (n_stats, n), and their
    last left bins: bin 0 and every bin below the feature's last that holds
    rows (statistic ``P``; an empty bin's candidate is the one before it
    again, never the larger)."""
    m, n_stats = max(n_bins_f - 1, 0), hist_f.shape[1]
    left = np.empty((n_stats, m), np.int64)
    bins = np.empty(m, np.int64)
    n = 0
    for b in range(m):
        if b > 0 and hist_f[b, P] == 0:
            continue
        for s in range(n_stats):
            left[s, n] = (left[s, n - 1] if n > 0 else 0) + hist_f[b, s]
        bins[n] = b
        n += 1
    return left, bins, n


@numba.njit(cache=True, error_model="numpy")
def _summed_scores(left, n, shift, total, k, inv_g, inv_h, lam, mcw, min_count, P, out):
    """``out[:n]`` = sum_j of both children's scores of each candidate, its
    left sums ``left`` plus ``shift`` (the missing bin, or zeros); -inf where
    a child has less than ``min_count`` of statistic ``P`` or less than
    ``mcw`` of some output's hessian. Output by output over all candidates
    at once: loops the compiler vectorises."""
    short = np.empty(n, np.bool_)
    p_tot, p_add = total[P], shift[P]
    for i in range(n):
        cl = left[P, i] + p_add
        short[i] = (cl < min_count) | (p_tot - cl < min_count)
        out[i] = 0.0
    for j in range(k):
        g_tot, h_tot = total[2 * j], total[2 * j + 1]
        g_add, h_add = shift[2 * j], shift[2 * j + 1]
        for i in range(n):
            gl = left[2 * j, i] + g_add
            hl = left[2 * j + 1, i] + h_add
            fh_l = hl * inv_h
            fh_r = (h_tot - hl) * inv_h
            short[i] |= (fh_l < mcw) | (fh_r < mcw)
            out[i] += _score(gl * inv_g, fh_l, lam) + _score((g_tot - gl) * inv_g, fh_r, lam)
    for i in range(n):
        if short[i]:
            out[i] = -np.inf


@numba.njit(cache=True)
def _scan(hist_f, n_bins_f, total, k, inv_g, inv_h, lam, mcw, min_count, parent, P):
    """Best "bin <= b" of one feature: (gain, b, missing_left); candidates in
    ascending order of b, missing right before missing left, the first of
    the largest gains winning. ``min_count`` bounds statistic ``P`` of each
    child (rows, or without counts output 0's hessian: 1 means "not empty")."""
    miss = hist_f[MISSING_BIN]
    left, bins, n = _candidates(hist_f, n_bins_f, P)
    has_missing = miss[P] > 0
    scores = np.empty((2, n))
    _summed_scores(left, n, np.zeros(hist_f.shape[1], np.int64), total, k, inv_g, inv_h, lam,
                   mcw, min_count, P, scores[0])
    if has_missing:
        _summed_scores(left, n, miss, total, k, inv_g, inv_h, lam, mcw, min_count, P, scores[1])
    best_gain, best_i, best_missing_left = -np.inf, -1, False
    for i in range(n):
        gain = 0.5 * (scores[0, i] - parent)
        if gain > best_gain:
            best_gain, best_i, best_missing_left = gain, i, False
        if has_missing:
            gain = 0.5 * (scores[1, i] - parent)
            if gain > best_gain:
                best_gain, best_i, best_missing_left = gain, i, True
    if best_i < 0:
        return best_gain, -1, False
    if not has_missing:  # missing goes to the larger child (by count; without counts the
        cl = left[P, best_i]  # grower decides once the rows are routed)
        best_missing_left = cl >= total[P] - cl
    return best_gain, bins[best_i], best_missing_left


@numba.njit(parallel=True, cache=True)
def best_vector_splits(hist, totals, features, n_bins, scale_g, scale_h, lam, gamma, mcw,
                       min_count, P):
    """Best split of each node by the summed gain (see the module).

    Parameters
    ----------
    hist : ndarray of shape (n_nodes, n_features, 256, 2k or 2k + 1), int64
    totals : ndarray of shape (n_nodes, 2k or 2k + 1), int64
    features : ndarray of shape (n_nodes, n_features), bool
    n_bins : ndarray of shape (n_features,), int
    scale_g, scale_h : float
        Fixed-point scales (powers of two), shared by the outputs.
    P : int
        The statistic telling that rows are present: 2k (the count) or 1.

    Returns
    -------
    gain, feature, split_bin, missing_left : ndarrays of length n_nodes
        ``split_bin`` the last left bin; gain -inf where nothing may split.
    """
    n_nodes, n_features = hist.shape[0], hist.shape[1]
    k = hist.shape[3] // 2
    inv_g, inv_h = 1.0 / scale_g, 1.0 / scale_h
    gain = np.full(n_nodes, -np.inf)
    feature = np.full(n_nodes, -1, np.int64)
    split_bin = np.full(n_nodes, -1, np.int64)
    missing_left = np.zeros(n_nodes, np.bool_)
    for node in numba.prange(n_nodes):
        parent = vector_score(totals[node], k, inv_g, inv_h, lam)
        for f in range(n_features):
            if not features[node, f]:
                continue
            g_, b_, m_ = _scan(hist[node, f], n_bins[f], totals[node], k, inv_g, inv_h, lam,
                               mcw, min_count, parent, P)
            g_ -= gamma
            if g_ > gain[node]:
                gain[node], feature[node], split_bin[node], missing_left[node] = g_, f, b_, m_
    return gain, feature, split_bin, missing_left
