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

Each ufunc is made (compiled, or loaded from numba's cache) when it is first
used, not when the module is imported: a worker that never computes one
does not pay for it, and importing distboost on a fresh Dask worker, which
every cold fit waits for, stays short.
"""

from __future__ import annotations

import math

import numba


def _exp(x):
    """e**x, elementwise."""
    return math.exp(x)


def _log(x):
    """Natural logarithm, elementwise (-inf at 0, nan below)."""
    return math.log(x)


def _log1p(x):
    """log(1 + x), elementwise, accurate near 0."""
    return math.log1p(x)


def _expm1(x):
    """e**x - 1, elementwise, accurate near 0."""
    return math.expm1(x)


def _power(x, p):
    """x**p, elementwise (nan for x < 0 and a fractional p)."""
    return math.pow(x, p)


_UFUNCS = {
    "exp": (_exp, "float64(float64)"),
    "log": (_log, "float64(float64)"),
    "log1p": (_log1p, "float64(float64)"),
    "expm1": (_expm1, "float64(float64)"),
    "power": (_power, "float64(float64, float64)"),
}

__all__ = list(_UFUNCS)


def __getattr__(name: str):
    """``exp``, ``log``, ``log1p``, ``expm1``, ``power``: the numba ufunc over the
    C library's function, made on first use and kept (PEP 562)."""
    if name not in _UFUNCS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    fn, signature = _UFUNCS[name]
    ufunc = numba.vectorize([signature], cache=True)(fn)
    ufunc.__doc__ = fn.__doc__
    globals()[name] = ufunc
    return ufunc


def __dir__():
    return sorted({*globals(), *_UFUNCS})
