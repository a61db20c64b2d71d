"""Survival losses row by row: the accelerated failure time (AFT) model's
negative log-likelihood and its derivatives, Cox's gradients from risk-set
tables, the fixed-point risk-set sums, and Harrell's concordance.

AFT (Barnwal, Cho & Hocking 2022, "Survival regression with accelerated
failure time model in XGBoost", J. Comput. Graph. Stat. 31(4), eqs. 2-8):
log T = f(x) + sigma Z with Z normal, logistic or extreme (Gumbel minimum).
For a label [lower, upper] the loss is -log(pdf(z) / (sigma lower)) when
lower == upper (uncensored, z = (log lower - f) / sigma) and
-log(CDF(z_upper) - CDF(z_lower)) otherwise (upper = +inf: right-censored;
lower = 0: left-censored; else interval-censored). Gradients and hessians are
those of the paper, with XGBoost's regularization: denominators below 1e-12
replaced by the limits as f -> +-inf (``_limit_grad``, ``_limit_hess``,
Table 2 of the paper), then g clipped to [-15, 15] and h to [1e-16, 15].

Cox (Cox 1972; Breslow 1974 for ties): with event times t_1 < ... < t_K,
d_k events at t_k and risk-set sums R_k = sum_{j: t_j >= t_k} exp(f_j), the
negative log partial likelihood is sum_k [d_k log R_k - sum_{i event at t_k}
f_i]; its derivatives per row are g_i = exp(f_i) A_i - delta_i and
h_i = exp(f_i) A_i - exp(f_i)^2 B_i with A_i = sum_{k: t_k <= t_i} d_k / R_k,
B_i = sum_{k: t_k <= t_i} d_k / R_k^2 (the diagonal of the Hessian).
"""

from __future__ import annotations

import math

import numba
import numpy as np

NORMAL, LOGISTIC, EXTREME = 0, 1, 2
UNCENSORED, RIGHT, LEFT, INTERVAL = 0, 1, 2, 3
MIN_GRAD, MAX_GRAD = -15.0, 15.0
MIN_HESS, MAX_HESS = 1e-16, 15.0
EPS = 1e-12
_SQRT2 = math.sqrt(2.0)
_SQRT2PI = math.sqrt(2.0 * math.pi)


@numba.njit(cache=True)
def _pdf_cdf(dist, z):
    """(pdf, cdf, pdf', pdf'') of the standard distribution at z (XGBoost's
    ``probability_distribution.h``: an infinite exp(z) gives 0 densities)."""
    if dist == NORMAL:
        pdf = math.exp(-0.5 * z * z) / _SQRT2PI
        return pdf, 0.5 * math.erfc(-z / _SQRT2), -z * pdf, (z * z - 1.0) * pdf
    w = math.exp(z)
    if dist == LOGISTIC:
        if math.isinf(w):
            return 0.0, 1.0, 0.0, 0.0
        pdf = 0.0 if math.isinf(w * w) else w / ((1.0 + w) * (1.0 + w))
        hess = 0.0 if math.isinf(w * w) else pdf * (w * w - 4.0 * w + 1.0) / ((1.0 + w) * (1.0 + w))
        return pdf, w / (1.0 + w), pdf * (1.0 - w) / (1.0 + w), hess
    if math.isinf(w):
        return 0.0, 1.0, 0.0, 0.0
    pdf = w * math.exp(-w)
    hess = 0.0 if math.isinf(w * w) else (w * w - 3.0 * w + 1.0) * pdf
    return pdf, 1.0 - math.exp(-w), (1.0 - w) * pdf, hess


@numba.njit(cache=True)
def _limit_grad(dist, censor, sign, sigma):
    """lim g as f -> -inf (sign False) or +inf (sign True), XGBoost's table."""
    if dist == NORMAL:
        if censor == RIGHT:
            return MIN_GRAD if sign else 0.0
        if censor == LEFT:
            return 0.0 if sign else MAX_GRAD
        return MIN_GRAD if sign else MAX_GRAD
    if dist == LOGISTIC:
        if censor == RIGHT:
            return -1.0 / sigma if sign else 0.0
        if censor == LEFT:
            return 0.0 if sign else 1.0 / sigma
        return -1.0 / sigma if sign else 1.0 / sigma
    if censor == RIGHT:
        return MIN_GRAD if sign else 0.0
    if censor == LEFT:
        return 0.0 if sign else 1.0 / sigma
    return MIN_GRAD if sign else 1.0 / sigma


@numba.njit(cache=True)
def _limit_hess(dist, censor, sign, sigma):
    """lim h as f -> -inf (sign False) or +inf (sign True), XGBoost's table."""
    if dist == NORMAL:
        if censor == RIGHT:
            return 1.0 / (sigma * sigma) if sign else MIN_HESS
        if censor == LEFT:
            return MIN_HESS if sign else 1.0 / (sigma * sigma)
        return 1.0 / (sigma * sigma)
    if dist == LOGISTIC or censor == LEFT:
        return MIN_HESS
    return MAX_HESS if sign else MIN_HESS


@numba.njit(cache=True)
def _clip(x, lo, hi):
    return lo if x < lo else min(x, hi)


@numba.njit(cache=True, error_model="numpy")
def aft_row(dist, lower, upper, f, sigma):
    """(loss, g, h) of one row: the AFT negative log-likelihood of [lower, upper]
    at margin f (XGBoost's ``AFTLoss::Loss``, ``Gradient``, ``Hessian``)."""
    if lower == upper:
        z = (math.log(lower) - f) / sigma
        pdf, _, dpdf, d2pdf = _pdf_cdf(dist, z)
        loss = -math.log(max(pdf / (sigma * lower), EPS))
        censor, sign = UNCENSORED, z > 0
        g_num, g_den = dpdf, sigma * pdf
        h_num, h_den = -(pdf * d2pdf - dpdf * dpdf), sigma * sigma * pdf * pdf
    else:
        z_u = z_l = 0.0
        censor = INTERVAL
        if math.isinf(upper):
            pdf_u, cdf_u, dpdf_u = 0.0, 1.0, 0.0
            censor = RIGHT
        else:
            z_u = (math.log(upper) - f) / sigma
            pdf_u, cdf_u, dpdf_u, _ = _pdf_cdf(dist, z_u)
        if lower <= 0.0:
            pdf_l, cdf_l, dpdf_l = 0.0, 0.0, 0.0
            censor = LEFT
        else:
            z_l = (math.log(lower) - f) / sigma
            pdf_l, cdf_l, dpdf_l, _ = _pdf_cdf(dist, z_l)
        loss = -math.log(max(cdf_u - cdf_l, EPS))
        sign = z_u > 0 or z_l > 0
        cdf_diff, pdf_diff = cdf_u - cdf_l, pdf_u - pdf_l
        g_num, g_den = pdf_diff, sigma * cdf_diff
        h_num = -(cdf_diff * (dpdf_u - dpdf_l) - pdf_diff * pdf_diff)
        h_den = g_den * g_den
    g = g_num / g_den  # IEEE division (error_model="numpy"): 0/0 is nan, x/0 is +-inf
    if g_den < EPS and (math.isnan(g) or math.isinf(g)):
        g = _limit_grad(dist, censor, sign, sigma)
    h = h_num / h_den
    if h_den < EPS and (math.isnan(h) or math.isinf(h)):
        h = _limit_hess(dist, censor, sign, sigma)
    return loss, _clip(g, MIN_GRAD, MAX_GRAD), _clip(h, MIN_HESS, MAX_HESS)


@numba.njit(cache=True)
def aft_rows(dist, lower, upper, f, sigma, w, loss_out, g_out, h_out):
    """``aft_row`` over rows; g and h times the weights w (outputs: loss, g, h)."""
    for i in range(len(f)):
        loss, g, h = aft_row(dist, lower[i], upper[i], f[i], sigma)
        loss_out[i] = loss
        g_out[i] = g * w[i]
        h_out[i] = h * w[i]


@numba.njit(cache=True)
def aft_survival(dist, f, log_times, sigma, out):
    """S(t | x) = 1 - F((log t - f(x)) / sigma) of the AFT model (Barnwal, Cho &
    Hocking 2022, eq. 2) for each row's margin f and each log t (log 0 = -inf:
    S = 1); ``out``: (len(f), len(log_times))."""
    for i in range(len(f)):
        for j in range(len(log_times)):
            _, cdf, _, _ = _pdf_cdf(dist, (log_times[j] - f[i]) / sigma)
            out[i, j] = 1.0 - cdf


# ----------------------------------------------------------------------- Cox
N_LIMBS = 7
FRACTION_BITS = 192
"""A risk-set sum in fixed point: bits 0..223 in seven 32-bit limbs held in int64,
value = sum_j limb_j 2^(32 j - 192): terms down to 2^-192 (e^-133) of the
largest one count."""
_LIMB = 32
_MASK = (1 << 32) - 1


@numba.njit(cache=True)
def _add_fixed(limbs, v):
    """limbs += floor(v 2^192) for 0 <= v <= 1, spread over 32-bit limbs (carries
    left for later: each limb takes 2^31 additions before it could overflow)."""
    if v <= 0.0:
        return
    m, e = math.frexp(v)
    mant = np.int64(m * 2.0**53)
    shift = e + FRACTION_BITS - 53  # v 2^192 = mant 2^(e - 53 + 192)
    if shift < 0:
        if shift <= -53:
            return
        mant = mant >> (-shift)
        shift = 0
    k, offset = shift // _LIMB, shift % _LIMB
    for piece, at in ((mant & _MASK, k), (mant >> _LIMB, k + 1)):
        x = piece << offset
        limbs[at] += x & _MASK
        if at + 1 < N_LIMBS:
            limbs[at + 1] += x >> _LIMB


@numba.njit(cache=True)
def event_bins(time, event_times, out):
    """Each row's bin: the index of the last event time <= its time, -1 for a
    row before the first event time (in no risk set)."""
    for i in range(len(time)):
        out[i] = np.searchsorted(event_times, time[i], side="right") - 1


@numba.njit(cache=True)
def cox_bin_sums(bins, f, f_max, out):
    """Each row's exp(f - f_max) added, in fixed point, to its bin
    (``event_bins``; rows of bin -1 are in no risk set). ``out``:
    (n_event_times, N_LIMBS) int64, added to."""
    for i in range(len(f)):
        b = bins[i]
        if b >= 0:
            _add_fixed(out[b], math.exp(f[i] - f_max))


def fixed_to_float(limbs: np.ndarray) -> np.ndarray:
    """Fixed-point sums (rows of ``N_LIMBS`` limbs, carries pending) as float64:
    the carries propagated in integers, then the limbs added in one fixed order
    (the same bits for the same integers)."""
    limbs = np.array(limbs, np.int64)
    for j in range(N_LIMBS - 1):
        carry = limbs[:, j] >> _LIMB
        limbs[:, j] &= _MASK
        limbs[:, j + 1] += carry
    out = limbs[:, N_LIMBS - 1].astype(np.float64) * 2.0 ** (_LIMB * (N_LIMBS - 1)
                                                              - FRACTION_BITS)
    for j in range(N_LIMBS - 2, -1, -1):
        out = out + limbs[:, j].astype(np.float64) * 2.0 ** (_LIMB * j - FRACTION_BITS)
    return out


@numba.njit(cache=True)
def cox_gradients(bins, event, f, f_max, a, b, w, g_out, h_out):
    """g = v A - delta, h = v A - v^2 B with v = exp(f - f_max) and A, B the
    cumulative sums d_k / R~_k and d_k / R~_k^2 up to the row's bin
    (``event_bins``; R~_k the risk-set sums scaled by exp(-f_max)); both times
    the weight."""
    for i in range(len(f)):
        k = bins[i]
        v = math.exp(f[i] - f_max)
        ak = a[k] if k >= 0 else 0.0
        bk = b[k] if k >= 0 else 0.0
        g_out[i] = (v * ak - event[i]) * w[i]
        h_out[i] = (v * ak - v * v * bk) * w[i]


# ----------------------------------------------------------------- C-index
@numba.njit(cache=True)
def concordance(time, event, risk, w):
    """Harrell's C: over pairs (i, j) with time_i < time_j and event_i = 1,
    weighted w_i w_j, the share with risk_i > risk_j (ties in risk count 1/2).
    Rows sorted by time here; O(n log n) with a Fenwick tree over risk ranks.
    Returns (concordant weight, comparable weight)."""
    n = len(time)
    order = np.argsort(-time, kind="mergesort")
    ranks = np.searchsorted(np.unique(risk), risk)
    m = ranks.max() + 2 if n else 1
    tree = np.zeros(m + 1)
    total = 0.0
    concordant = comparable = 0.0
    i = 0
    while i < n:
        j = i
        while j < n and time[order[j]] == time[order[i]]:
            j += 1
        for p in range(i, j):  # events at this time against rows strictly later
            r = order[p]
            if event[r]:
                below = 0.0
                q = ranks[r]
                while q > 0:
                    below += tree[q]
                    q -= q & -q
                equal = 0.0
                q = ranks[r] + 1
                while q > 0:
                    equal += tree[q]
                    q -= q & -q
                equal -= below
                concordant += w[r] * (below + 0.5 * equal)
                comparable += w[r] * total
        for p in range(i, j):
            r = order[p]
            q = ranks[r] + 1
            while q <= m:
                tree[q] += w[r]
                q += q & -q
            total += w[r]
        i = j
    return concordant, comparable
