"""Fixed-point (int64) per-row statistics.

round(v * scale) with a power-of-two scale chosen on the driver from bounds of
|v| (``fixed_point_scales``), so that sums over all rows fit in int64
and are exact whatever the order of addition.
"""

import math

import numba
import numpy as np

from .common import STAT_DTYPE


def quantize(values: np.ndarray, scale: float) -> np.ndarray:
    """Fixed-point form: round(value * scale) as int64."""
    return np.rint(values * scale).astype(STAT_DTYPE)


@numba.njit(cache=True, inline="always")
def put_row_stats(out, i, g, h, scale_g, scale_h):
    """out[i] = (g, h, 1) in fixed point, or (g, h) when ``out`` has two
    columns, with the hessian then at least one unit (so that a positive
    hessian sum means "rows present": ``splitting.GradientCriterion``)."""
    out[i, 0] = np.int64(np.rint(g * scale_g))
    hq = np.int64(np.rint(h * scale_h))
    if out.shape[1] == 3:
        out[i, 1] = hq
        out[i, 2] = 1
    else:
        out[i, 1] = max(hq, 1)


@numba.njit(parallel=True, cache=True)
def _fill(g, h, scale_g, scale_h, out):
    n_trees, n = g.shape
    for t in range(n_trees):
        for i in numba.prange(n):
            put_row_stats(out[t], i, g[t, i], h[t, i], scale_g, scale_h)


def gradient_stats(g: np.ndarray, h: np.ndarray, scales, out=None) -> np.ndarray:
    """(g, h, 1) or (g, h) per row and tree in fixed point (``put_row_stats``).

    Parameters
    ----------
    g, h : ndarray of shape (n_trees, n_rows), float64
    scales : (float, float)
    out : ndarray of shape (n_trees, n_rows, 3 or 2), int64, optional
        Where to write (a reused buffer); a new (n_trees, n_rows, 3) array by default.

    Returns
    -------
    stats : ndarray of shape (n_trees, n_rows, 3 or 2), int64
    """
    g = np.ascontiguousarray(g, dtype=np.float64)
    h = np.ascontiguousarray(np.broadcast_to(h, g.shape), dtype=np.float64)
    if out is None:
        out = np.empty((g.shape[0], g.shape[1], 3), STAT_DTYPE)
    _fill(g, h, float(scales[0]), float(scales[1]), out)
    return out


def fixed_point_scales(bounds, n_rows: int) -> tuple[float, float]:
    """Powers of two mapping |g| and h to int64 so that no sum can overflow.

    With bound m and scale 2^e, e = floor(61 - log2(m * n_rows)), the sum over
    all rows of round(v * 2^e) stays below 2^62 in magnitude.
    """
    scales = []
    for m in bounds:
        if not math.isfinite(m):
            raise FloatingPointError(
                "gradients are unbounded (inf or NaN scores); check the target for extreme "
                "values or lower the learning rate"
            )
        scales.append(1.0 if m <= 0 else 2.0 ** math.floor(61 - math.log2(m * max(n_rows, 1))))
    return tuple(scales)
