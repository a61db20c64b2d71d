"""Kernels: numpy arrays in, numpy arrays out, numba where hot; no Dask.

Binned codes to histograms (``histogram``), histograms to splits
(``splitting`` for gradient statistics, ``criteria`` for impurity), splits to
trees (``grower``, ``tree``), and what they stand on: losses, feature
sampling, monotone bounds, fixed-point and exact sums, counter-based random
numbers, the C library's exp and log, TreeSHAP.
"""
