"""Exact sums of float64 arrays, independent of the order of addition.

Each float is split into an integer mantissa and a power of two; mantissas
are added in int64 per exponent and the groups combined as Python integers, so
the total is exact. Partial sums from partitions add up exactly in any order,
and only the final conversion rounds (correctly) to float64. Used for initial
scores and evaluation metrics, so that they do not depend on the partitioning.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

_OFFSET = 1200  # 2**-1200 is below the smallest subnormal's last bit
_HALF = 26


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
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size == 0:
        return 0
    mantissa, exponent = np.frexp(values)
    m = (mantissa * 2.0**53).astype(np.int64)
    shift = (exponent.astype(np.int64) - 53 + _OFFSET)
    groups, inverse = np.unique(shift, return_inverse=True)
    hi = np.zeros(len(groups), np.int64)
    lo = np.zeros(len(groups), np.int64)
    np.add.at(hi, inverse, m >> _HALF)
    np.add.at(lo, inverse, m & ((1 << _HALF) - 1))
    return sum(((int(h) << _HALF) + int(l)) << int(s) for h, l, s in zip(hi, lo, groups))


def exact_sums(columns) -> list[int]:
    """``exact_sum`` of each array in ``columns``."""
    return [exact_sum(c) for c in columns]


def to_float(total: int) -> float:
    """Correctly rounded float64 value of an exact sum."""
    return float(Fraction(total, 1 << _OFFSET))
