"""Simulated censored survival data for the survival tests and bench.

- ``weibull_ph``: proportional hazards, Weibull baseline (Bender, Augustin &
  Blettner 2005, "Generating survival times to simulate Cox proportional
  hazards models", eq. 8): T = (-log U / (lam exp(eta)))^(1/k), U uniform,
  eta = x0 - 0.5 x1 + 0.5 x2 x3 + sin(x4); right-censored by an independent
  exponential time C; observed min(T, C), event T <= C.
- ``lognormal_aft``: log T = eta + sigma N(0, 1) (an AFT model with normal
  errors), right-censored by an independent exponential C, a share of the
  rows interval-censored instead ([T / a, T * b] with a, b in [1, 2]) and a
  few left-censored ([0, T * b]).
"""

from __future__ import annotations

import numpy as np


def _features(rng, n, d):
    X = rng.normal(size=(n, d))
    eta = X[:, 0] - 0.5 * X[:, 1] + 0.5 * X[:, 2] * X[:, 3] + np.sin(X[:, 4])
    return X, eta


def weibull_ph(n: int, d: int = 6, shape: float = 1.5, censor_scale: float = 2.0,
               seed: int = 0):
    """(X, time, event): Weibull proportional-hazards times, ~30 % right-censored."""
    rng = np.random.default_rng(seed)
    X, eta = _features(rng, n, d)
    t = (-np.log(rng.uniform(size=n)) / (0.5 * np.exp(eta))) ** (1.0 / shape)
    c = rng.exponential(censor_scale, size=n)
    return X, np.minimum(t, c), (t <= c).astype(np.float64)


def lognormal_aft(n: int, d: int = 6, sigma: float = 0.5, censor_scale: float = 8.0,
                  interval_share: float = 0.2, left_share: float = 0.05, seed: int = 0):
    """(X, y_lower, y_upper): log-normal AFT times with right-, interval- and
    left-censored rows."""
    rng = np.random.default_rng(seed)
    X, eta = _features(rng, n, d)
    t = np.exp(1.0 + eta + sigma * rng.normal(size=n))
    c = rng.exponential(censor_scale, size=n)
    lower, upper = t.copy(), t.copy()
    right = c < t
    lower[right], upper[right] = c[right], np.inf
    kind = rng.uniform(size=n)
    interval = ~right & (kind < interval_share)
    lower[interval] = t[interval] / rng.uniform(1, 2, interval.sum())
    upper[interval] = t[interval] * rng.uniform(1, 2, interval.sum())
    left = ~right & ~interval & (kind > 1 - left_share)
    lower[left], upper[left] = 0.0, t[left] * rng.uniform(1, 2, left.sum())
    return X, lower, upper
