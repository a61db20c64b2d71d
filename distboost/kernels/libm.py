"""exp, log, log1p, expm1 and power with the same bits whatever numpy's version.

numpy computes float64 ``exp``, ``log``, ``log1p``, ``expm1`` and ``power`` with
SIMD implementations of its own, chosen by the CPU and changed between
releases: numpy 1.26 and 2.4 disagree in the last bit on about a quarter of
all inputs (and neither is the C library). A model computed from them (the
multinomial deviance's softmax and priors, AdaBoost's weights, the log-link
losses) would depend on the numpy installed. These are numba ufuncs over the
C library's scalar functions instead, the same functions numba's kernels
call, so every model is the same to the bit on every numpy in range
(``tests/test_model_pins.py`` runs on the oldest and newest). They broadcast
like numpy's ufuncs, compute in float64 and warn alike (log(0) = -inf).
"""

from __future__ import annotations

import math

import numba


@numba.vectorize(["float64(float64)"], cache=True)
def exp(x):
    """e**x, elementwise."""
    return math.exp(x)


@numba.vectorize(["float64(float64)"], cache=True)
def log(x):
    """Natural logarithm, elementwise (-inf at 0, nan below)."""
    return math.log(x)


@numba.vectorize(["float64(float64)"], cache=True)
def log1p(x):
    """log(1 + x), elementwise, accurate near 0."""
    return math.log1p(x)


@numba.vectorize(["float64(float64)"], cache=True)
def expm1(x):
    """e**x - 1, elementwise, accurate near 0."""
    return math.expm1(x)


@numba.vectorize(["float64(float64, float64)"], cache=True)
def power(x, p):
    """x**p, elementwise (nan for x < 0 and a fractional p)."""
    return math.pow(x, p)
