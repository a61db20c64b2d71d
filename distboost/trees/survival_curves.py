"""Survival curves: the Cox model's (Breslow's baseline cumulative hazard times
the hazard ratio), the AFT model's (its error distribution), and the
Kaplan-Meier estimate they are checked against.

- Cox (Cox 1972; Breslow 1974, the estimator of the baseline): H(t | x) =
  H_0(t) exp(f(x)) with H_0(t) = sum_{k: t_k <= t} d_k / R_k, R_k = sum over
  the training rows at risk at t_k (time >= t_k) of exp(f_j); S = exp(-H).
  ``training.survival.breslow_baseline`` finds f_max and the cumulative sums
  A_k = sum_{j <= k} d_j / R~_j of R~ = R exp(-f_max) at the fitted model
  exactly across partitions, so H(t | x) = A_k exp(f(x) - f_max).
- AFT (Barnwal, Cho & Hocking 2022, eq. 2): log T = f(x) + sigma Z, so
  S(t | x) = 1 - F_Z((log t - f(x)) / sigma) and H = -log S.
- Kaplan-Meier (Kaplan & Meier 1958): S(t) = prod_{t_k <= t} (1 - d_k / n_k),
  d_k the events at t_k and n_k the rows with time >= t_k.
"""

from __future__ import annotations

import numpy as np

from ..kernels import survival as ks


def check_times(times) -> np.ndarray:
    """The times at which to evaluate curves: 1-D, finite, >= 0."""
    arr = np.atleast_1d(np.asarray(times, np.float64))
    if arr.ndim != 1:
        raise ValueError(f"times must be 1-dimensional, got shape {arr.shape}")
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"times has {int(bad.sum())} value(s) that are not finite times >= 0, "
                         f"the first at position {i} ({arr[i]!r})")
    return arr


def cox_cumulative_hazard(f, event_times, sums, f_max, times) -> np.ndarray:
    """H(t | x) = A_k exp(f(x) - f_max) at each time (k: the last event time
    <= t; 0 before the first), shape (len(f), len(times))."""
    k = np.searchsorted(event_times, check_times(times), side="right") - 1
    at = np.where(k >= 0, np.asarray(sums, np.float64)[np.maximum(k, 0)], 0.0)
    return np.exp(np.asarray(f, np.float64) - f_max)[:, None] * at[None, :]


def aft_survival(distribution: int, sigma: float, f, times) -> np.ndarray:
    """S(t | x) = 1 - F((log t - f(x)) / sigma), shape (len(f), len(times))."""
    times = check_times(times)
    f = np.ascontiguousarray(f, np.float64)
    out = np.empty((len(f), len(times)))
    with np.errstate(divide="ignore"):
        log_t = np.log(times)
    ks.aft_survival(distribution, f, log_t, float(sigma), out)
    return out


def kaplan_meier(time, event, times) -> tuple[np.ndarray, np.ndarray]:
    """The Kaplan-Meier estimate at ``times`` and the number still at risk there
    (time >= t), from right-censored rows (event 1: the event at ``time``, 0:
    censored at ``time``). The product runs over the distinct event times in
    increasing order."""
    time = np.asarray(time, np.float64)
    event = np.asarray(event) > 0
    times = check_times(times)
    t_k, d_k = np.unique(time[event], return_counts=True)
    ordered = np.sort(time)
    n_k = len(time) - np.searchsorted(ordered, t_k, side="left")
    surv = np.cumprod(1.0 - d_k / n_k)
    k = np.searchsorted(t_k, times, side="right") - 1
    km = np.where(k >= 0, surv[np.maximum(k, 0)] if len(surv) else 1.0, 1.0)
    at_risk = len(time) - np.searchsorted(ordered, times, side="left")
    return km, at_risk
