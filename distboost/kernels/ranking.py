"""LambdaMART's lambdas, query by query (Burges 2010, "From RankNet to
LambdaRank to LambdaMART: An Overview"), and the per-query ranking metrics.

Rows arrive grouped by query (each query's rows consecutive). Within a query
the documents are ranked by score, highest first, ties kept in row order (a
stable sort), so a query's lambdas depend on its rows alone and are the same
bits wherever the query is held.

For a pair (i, j) with rel_i > rel_j, s = sigmoid(f_i - f_j) and
|dZ| the change in the objective's metric were the two swapped (1 for
RankNet, |dNDCG|, |dMAP|), optionally divided by |f_i - f_j| + 0.01 once the
query's scores differ (score normalization)::

    lambda_ij = (s - 1) |dZ|          g_i += lambda_ij, g_j -= lambda_ij
    w_ij = 2 max(s (1 - s), 1e-16) |dZ|   h_i += w_ij, h_j += w_ij

(Burges 2010, eqs. 3-4 and section 7, RankNet's cross-entropy with
sigma = 1; the factor 2 and the floor as XGBoost). Pairs are the top-k
positions against every lower one ("topk"), or ``n_pair`` draws per document
among documents of another relevance ("mean"). Normalization (LightGBM's,
also XGBoost's): "topk" multiplies the query's g and h by
log2(1 + S) / S, S = sum over pairs of -2 lambda_ij; "mean" divides them by
``n_pair``.
"""

from __future__ import annotations

import numba
import numpy as np

PAIRWISE, NDCG, MAP = 0, 1, 2
"""The objectives' codes: RankNet, LambdaRank with NDCG, LambdaRank with MAP."""


def query_starts(qid: np.ndarray) -> np.ndarray:
    """Start of every query and the end of the last: int64 of shape (n_queries + 1,)."""
    n = len(qid)
    if n == 0:
        return np.zeros(1, np.int64)
    change = np.flatnonzero(qid[1:] != qid[:-1]) + 1
    return np.concatenate([[0], change, [n]]).astype(np.int64)


@numba.njit(cache=True, inline="always")
def _mix(x):
    """splitmix64's finalizer: a well-mixed 64-bit value from any 64-bit value."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True)
def _ranked(f):
    """Positions by score, highest first, ties in row order (stable)."""
    return np.argsort(-f, kind="mergesort")


@numba.njit(cache=True)
def _gains(rel, exp_gain):
    return (np.power(2.0, rel) - 1.0) if exp_gain else rel.copy()


@numba.njit(cache=True)
def _inverse_ideal_dcg(gain, k):
    """1 / IDCG@k of a query's gains (0 when no document has a gain)."""
    best = np.sort(gain)[::-1]
    idcg = 0.0
    for r in range(min(k, len(best))):
        idcg += best[r] / np.log2(r + 2.0)
    return 1.0 / idcg if idcg > 0 else 0.0


@numba.njit(cache=True)
def _map_tables(lab):
    """Relevant documents up to each position, and sum over positions <= r of
    lab_r / (r + 1), for the labels in ranked order (binary relevance)."""
    n_rel, acc = np.empty(len(lab)), np.empty(len(lab))
    a = c = 0.0
    for r in range(len(lab)):
        c += lab[r]
        a += lab[r] / (r + 1.0)
        n_rel[r], acc[r] = c, a
    return n_rel, acc


@numba.njit(cache=True, inline="always")
def _delta_map(y_hi, y_lo, r_hi, r_lo, n_rel, acc):
    """|dAP| of swapping the documents at positions r_hi and r_lo (Burges 2010, sec. 6)."""
    if r_hi > r_lo:
        r_hi, r_lo, y_hi, y_lo = r_lo, r_hi, y_lo, y_hi
    top, bottom = r_hi + 1.0, r_lo + 1.0
    m, n = n_rel[r_lo], n_rel[r_hi]
    b = acc[r_lo - 1] - acc[r_hi]
    if y_hi < y_lo:
        d = (m / bottom - (n + 1.0) / top) - b
    else:
        d = (n / top - m / bottom) + b
    return abs(d / n_rel[-1])


@numba.njit(cache=True, inline="always")
def _delta(kind, lab, gain, disc, r_hi, r_lo, inv_idcg, n_rel, acc):
    """|dZ| of swapping the documents at positions r_hi and r_lo."""
    if kind == PAIRWISE:
        return 1.0
    if kind == NDCG:
        return abs((gain[r_hi] - gain[r_lo]) * (disc[r_hi] - disc[r_lo]) * inv_idcg)
    return _delta_map(lab[r_hi], lab[r_lo], r_hi, r_lo, n_rel, acc)


@numba.njit(cache=True, inline="always")
def _pair(kind, p, q, order, f, lab, gain, disc, inv_idcg, n_rel, acc, score_norm, spread, g,
          h):
    """Add one pair's lambda (positions p, q); returns its -2 lambda (for S)."""
    if lab[p] == lab[q]:
        return 0.0
    r_hi, r_lo = (p, q) if lab[p] > lab[q] else (q, p)
    i, j = order[r_hi], order[r_lo]
    diff = f[i] - f[j]
    s = 1.0 / (1.0 + np.exp(-diff))
    dz = _delta(kind, lab, gain, disc, r_hi, r_lo, inv_idcg, n_rel, acc)
    if score_norm and spread:
        dz /= abs(diff) + 0.01
    lam = (s - 1.0) * dz
    hess = max(s * (1.0 - s), 1e-16) * dz * 2.0
    g[i] += lam
    g[j] -= lam
    h[i] += hess
    h[j] += hess
    return -2.0 * lam


@numba.njit(cache=True)
def _mean_pairs(kind, order, f, lab, gain, disc, inv_idcg, n_rel, acc, score_norm, spread,
                n_pair, state, g, h):
    """``n_pair`` draws per document among those of another relevance."""
    n = len(lab)
    by_label = np.argsort(-lab, kind="mergesort")  # positions, most relevant first
    start = 0
    while start < n:
        stop = start + 1
        while stop < n and lab[by_label[stop]] == lab[by_label[start]]:
            stop += 1
        others = start + n - stop
        for _ in range(n_pair):
            for a in range(start, stop if others else start):
                state = _mix(state + np.uint64(0x9E3779B97F4A7C15))
                r = np.int64(state % np.uint64(others))
                b = r if r < start else r + stop - start
                _pair(kind, by_label[a], by_label[b], order, f, lab, gain, disc, inv_idcg, n_rel,
                      acc, score_norm, spread, g, h)
        start = stop


@numba.njit(cache=True)
def _query(kind, rel, f, exp_gain, top_k, n_pair, mean, normalize, score_norm, key, g, h):
    """One query's g and h (zeroed first), ``g``/``h`` views of its rows."""
    g[:] = 0.0
    h[:] = 0.0
    n = len(rel)
    order = _ranked(f)
    lab = rel[order]
    gain = _gains(lab, exp_gain)
    disc = 1.0 / np.log2(np.arange(n) + 2.0)  # DCG's discount of each place
    inv_idcg = _inverse_ideal_dcg(gain, n if mean else top_k) if kind == NDCG else 0.0
    n_rel, acc = _map_tables(lab)
    if kind == MAP and n_rel[-1] == 0:
        return
    spread = f[order[0]] != f[order[n - 1]]
    total = 0.0
    if mean:
        _mean_pairs(kind, order, f, lab, gain, disc, inv_idcg, n_rel, acc, score_norm, spread,
                    n_pair, key, g, h)
    else:
        for p in range(min(n, top_k)):
            for q in range(p + 1, n):
                total += _pair(kind, p, q, order, f, lab, gain, disc, inv_idcg, n_rel, acc,
                               score_norm, spread, g, h)
    norm = 1.0
    if normalize and mean:
        norm = 1.0 / n_pair
    elif normalize and total > 0:
        norm = np.log2(1.0 + total) / total
    if norm != 1.0:
        g *= norm
        h *= norm


@numba.njit(parallel=True, cache=True)
def lambdas(kind, rel, qid, f, w, starts, exp_gain, top_k, n_pair, mean, normalize, score_norm,
            seed, g, h):
    """Every query's lambdas (g) and weights (h), times the rows' weights.

    Parameters
    ----------
    kind : int, ``PAIRWISE``, ``NDCG`` or ``MAP``
    rel, f, w : float64 arrays of shape (n_rows,), relevance, scores, weights
    qid : int64 array of shape (n_rows,), each query's rows consecutive
    starts : int64 array of shape (n_queries + 1,), ``query_starts(qid)``
    exp_gain : bool, NDCG's gain 2^rel - 1 (else rel)
    top_k, n_pair : int, the "topk" truncation, the "mean" draws per document
    mean, normalize, score_norm : bool, "mean" pairs; the query normalization;
        |dZ| / (|f_i - f_j| + 0.01)
    seed : uint64, with the query id and its scores' bits, keys "mean"'s draws
    g, h : float64 arrays of shape (n_rows,), written
    """
    for t in numba.prange(len(starts) - 1):
        a, b = starts[t], starts[t + 1]
        key = _mix(seed ^ _mix(np.uint64(qid[a]) + np.uint64(0x632BE59BD9B4E019)))
        if mean:
            for i in range(a, b):
                key = _mix(key ^ f[i:i + 1].view(np.uint64)[0])
        _query(kind, rel[a:b], f[a:b], exp_gain, top_k, n_pair, mean, normalize, score_norm,
               key, g[a:b], h[a:b])
        for i in range(a, b):
            g[i] *= w[i]
            h[i] *= w[i]


@numba.njit(cache=True)
def query_metrics(kind, rel, f, starts, k, exp_gain, out):
    """Per query NDCG@k, AP@k or reciprocal rank of the first relevant document
    (``kind`` 0, 1, 2), written into ``out`` of shape (n_queries,).

    NDCG of a query without gain is 1 and AP of one without a relevant
    document is 1 (XGBoost's convention); the reciprocal rank of a query
    without a relevant document is 0.
    """
    for t in range(len(starts) - 1):
        a, b = starts[t], starts[t + 1]
        order = _ranked(f[a:b])
        lab = rel[a:b][order]
        top = min(k, b - a)
        if kind == 0:
            gain = _gains(lab, exp_gain)
            inv = _inverse_ideal_dcg(gain, k)
            dcg = 0.0
            for r in range(top):
                dcg += gain[r] / np.log2(r + 2.0)
            out[t] = dcg * inv if inv > 0 else 1.0
        elif kind == 1:
            hits, total = 0.0, 0.0
            for r in range(top):
                if lab[r] > 0:
                    hits += 1.0
                    total += hits / (r + 1.0)
            out[t] = total / hits if hits > 0 else 1.0
        else:
            out[t] = 0.0
            for r in range(top):
                if lab[r] > 0:
                    out[t] = 1.0 / (r + 1.0)
                    break
