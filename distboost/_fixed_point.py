"""Fixed-point (int64) per-row statistics.

round(v * scale) with a power-of-two scale chosen on the driver from bounds of
|v| (``booster.fixed_point_scales``), so that sums over all rows fit in int64
and are exact whatever the order of addition.
"""

import numba
import numpy as np

from ._common import STAT_DTYPE


def quantize(values: np.ndarray, scale: float) -> np.ndarray:
    """Fixed-point form: round(value * scale) as int64."""
    return np.rint(values * scale).astype(STAT_DTYPE)


@numba.njit(parallel=True, cache=True)
def _fill(g, h, scale_g, scale_h, out):
    n_trees, n = g.shape
    for t in range(n_trees):
        for i in numba.prange(n):
            out[t, i, 0] = np.int64(np.rint(g[t, i] * scale_g))
            out[t, i, 1] = np.int64(np.rint(h[t, i] * scale_h))
            out[t, i, 2] = 1


def gradient_stats(g: np.ndarray, h: np.ndarray, scales, out=None) -> np.ndarray:
    """(g, h, 1) per row and tree in fixed point.

    Parameters
    ----------
    g, h : ndarray of shape (n_trees, n_rows), float64
    scales : (float, float)
    out : ndarray of shape (n_trees, n_rows, 3), int64, optional
        Where to write (a reused buffer); a new array by default.

    Returns
    -------
    stats : ndarray of shape (n_trees, n_rows, 3), int64
    """
    g = np.ascontiguousarray(g, dtype=np.float64)
    h = np.ascontiguousarray(np.broadcast_to(h, g.shape), dtype=np.float64)
    if out is None:
        out = np.empty((g.shape[0], g.shape[1], 3), STAT_DTYPE)
    _fill(g, h, float(scales[0]), float(scales[1]), out)
    return out
