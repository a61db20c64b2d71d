"""Best-split search for vector-leaf trees (one tree, k outputs).

Each row carries k pairs of fixed-point statistics and a row count, laid
out ``(g_0, h_0, g_1, h_1, ..., g_{k-1}, h_{k-1}, 1)``. A split's gain is the
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
def _candidate(left, miss, missing_left, total, k, inv_g, inv_h, lam, mcw):
    """sum_j of both children's scores, or -inf when a child has less than
    ``mcw`` of some output's hessian."""
    s = 0.0
    for j in range(k):
        gl, hl = left[2 * j], left[2 * j + 1]
        if missing_left:
            gl += miss[2 * j]
            hl += miss[2 * j + 1]
        fh_l = hl * inv_h
        fh_r = (total[2 * j + 1] - hl) * inv_h
        if fh_l < mcw or fh_r < mcw:
            return -np.inf
        s += _score(gl * inv_g, fh_l, lam) + _score((total[2 * j] - gl) * inv_g, fh_r, lam)
    return s


@numba.njit(cache=True)
def _scan(hist_f, n_bins_f, total, k, inv_g, inv_h, lam, mcw, min_count, parent):
    """Best "bin <= b" of one feature: (gain, b, missing_left)."""
    c = 2 * k
    miss = hist_f[MISSING_BIN]
    left = np.zeros(c + 1, np.int64)
    best_gain, best_b, best_missing_left = -np.inf, -1, False
    for b in range(n_bins_f - 1):
        if b > 0 and hist_f[b, c] == 0:
            continue  # an empty bin: the candidate before it again
        for s in range(c + 1):
            left[s] += hist_f[b, s]
        for missing_left in (False, True):
            if missing_left and miss[c] == 0:
                continue
            cl = left[c] + (miss[c] if missing_left else 0)
            if cl < min_count or total[c] - cl < min_count:
                continue
            score = _candidate(left, miss, missing_left, total, k, inv_g, inv_h, lam, mcw)
            gain = 0.5 * (score - parent)
            if gain > best_gain:
                best_gain, best_b = gain, b
                best_missing_left = missing_left if miss[c] > 0 else cl >= total[c] - cl
    return best_gain, best_b, best_missing_left


@numba.njit(parallel=True, cache=True)
def best_vector_splits(hist, totals, features, n_bins, scale_g, scale_h, lam, gamma, mcw,
                       min_count):
    """Best split of each node by the summed gain (see the module).

    Parameters
    ----------
    hist : ndarray of shape (n_nodes, n_features, 256, 2k + 1), int64
    totals : ndarray of shape (n_nodes, 2k + 1), int64
    features : ndarray of shape (n_nodes, n_features), bool
    n_bins : ndarray of shape (n_features,), int
    scale_g, scale_h : float
        Fixed-point scales (powers of two), shared by the outputs.

    Returns
    -------
    gain, feature, split_bin, missing_left : ndarrays of length n_nodes
        ``split_bin`` the last left bin; gain -inf where nothing may split.
    """
    n_nodes, n_features = hist.shape[0], hist.shape[1]
    k = (hist.shape[3] - 1) // 2
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
                               mcw, min_count, parent)
            g_ -= gamma
            if g_ > gain[node]:
                gain[node], feature[node], split_bin[node], missing_left[node] = g_, f, b_, m_
    return gain, feature, split_bin, missing_left
