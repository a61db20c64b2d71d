"""The losses' numba kernels: the logistic function, and binomial deviance's
gradients and hessians in one pass (straight into fixed point too).

The losses themselves (``Loss`` and its subclasses, ``make_loss``) are
driver-side objects in ``trees.losses``; these are the loops they hand rows to.
"""

from __future__ import annotations

import numba
import numpy as np

from .fixed_point import put_row_stats


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Logistic function 1 / (1 + exp(-x)), without overflow."""
    return _sigmoid(np.ascontiguousarray(x, dtype=np.float64).ravel()).reshape(np.shape(x))


@numba.njit(cache=True, inline="always")
def _logistic(x):
    """1 / (1 + exp(-x)) for one value, without overflow: with e = exp(-|x|),
    1 / (1 + e) for x >= 0 and e / (1 + e) below (no branch, so loops over
    it vectorize)."""
    e = np.exp(-abs(x))
    return (1.0 if x >= 0 else e) / (1.0 + e)


@numba.njit(parallel=True, cache=True)
def _sigmoid(x):
    out = np.empty_like(x)
    for i in numba.prange(len(x)):
        out[i] = _logistic(x[i])
    return out


@numba.njit(parallel=True, cache=True)
def binomial_gradients(y, f, w, g, h):
    """g = (p - y) w and h = p (1 - p) w with p = sigmoid(f), in one pass."""
    for i in numba.prange(len(f)):
        p = _logistic(f[i])
        g[i] = (p - y[i]) * w[i]
        h[i] = p * (1.0 - p) * w[i]


@numba.njit(parallel=True, cache=True)
def binomial_stats(y, f, w, scale_g, scale_h, out):
    """``binomial_gradients`` quantized straight into fixed point (``put_row_stats``)."""
    for i in numba.prange(len(f)):
        p = _logistic(f[i])
        put_row_stats(out, i, (p - y[i]) * w[i], p * (1.0 - p) * w[i], scale_g, scale_h)
