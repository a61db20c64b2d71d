"""Kernels: numpy arrays in, numpy arrays out, numba where hot; no Dask.

Binned codes to histograms (``histogram``), histograms to splits
(``splitting`` for gradient statistics, ``criteria`` for impurity), whole
trees where the rows are (``local_grower``), walks of fitted trees
(``tree``), and what they stand on: the losses' loops, feature sampling,
monotone bounds, fixed-point and exact sums, counter-based random numbers,
the C library's exp and log, TreeSHAP. Trees grown on the driver, the
``Tree`` class and the losses themselves are in ``trees``.
"""

import numba

from .threads import start_threads_waiting_passively


@numba.njit(cache=True)
def _runtime_loaded() -> int:
    return 1


# numba loads its compiler runtime (type registries, code generation, about
# 0.3 s) at the first compiled call of a process, even one from its cache:
# here, at import, rather than inside a fit's first kernel. libm's ufuncs are
# made on first use (each ~30 ms), so a worker only pays for those it uses.
_runtime_loaded()


start_threads_waiting_passively()
