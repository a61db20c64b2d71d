"""Exact sums of float64 arrays, independent of the order of addition.

Each float is split into an integer mantissa and a power of two; mantissas
are added in int64 per exponent and the groups combined as Python integers, so
the total is exact. Partial sums from partitions add up exactly in any order,
and only the final conversion rounds (correctly) to float64. Used for initial
scores and evaluation metrics, so that they do not depend on the partitioning.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numba
import numpy as np

_OFFSET = 1200  # 2**-1200 is below the smallest subnormal's last bit
_HALF = 26


_N_EXPONENTS = 2200  # frexp exponents of finite float64 values lie in [-1073, 1024]
_EXPONENT_BASE = 1100


SUM_BLOCK = 1 << 16
"""Values a thread adds at a time; each block has its own rows of sums, added
as integers afterwards (exact, so in any order)."""


@numba.njit(parallel=True, cache=True)
def _mantissa_sums(values, hi, lo):
    """Add each value's 53-bit integer mantissa, split in two halves, to its
    exponent's column, blocks of values in parallel (``hi``, ``lo``: one row
    a block); no sort."""
    mask = (1 << _HALF) - 1
    n = len(values)
    for block in numba.prange(hi.shape[0]):
        for i in range(block * SUM_BLOCK, min(n, (block + 1) * SUM_BLOCK)):
            v = values[i]
            if v != 0.0:
                mantissa, exponent = math.frexp(v)
                m = np.int64(mantissa * 2.0**53)
                k = exponent + _EXPONENT_BASE
                hi[block, k] += m >> _HALF
                lo[block, k] += m & mask


def exact_sum(values: np.ndarray) -> int:
    """Exact sum of ``values`` as an integer multiple of ``2**-_OFFSET``.

    Parameters
    ----------
    values : ndarray of float64, finite

    Returns
    -------
    total : int
        ``sum(values) == total * 2**-_OFFSET`` exactly.
    """
    values = np.ascontiguousarray(values, dtype=np.float64).ravel()
    n_blocks = max(1, -(-len(values) // SUM_BLOCK))
    hi = np.zeros((n_blocks, _N_EXPONENTS), np.int64)
    lo = np.zeros((n_blocks, _N_EXPONENTS), np.int64)
    _mantissa_sums(values, hi, lo)
    hi, lo = hi.sum(axis=0), lo.sum(axis=0)  # < 2**27 a value: no int64 overflow
    total = 0
    for k in np.flatnonzero(hi | lo):
        shift = int(k) - _EXPONENT_BASE - 53 + _OFFSET
        total += ((int(hi[k]) << _HALF) + int(lo[k])) << shift
    return total


def exact_sums(columns) -> list[int]:
    """``exact_sum`` of each array in ``columns``."""
    return [exact_sum(c) for c in columns]


def to_float(total: int) -> float:
    """Correctly rounded float64 value of an exact sum."""
    return float(Fraction(total, 1 << _OFFSET))
