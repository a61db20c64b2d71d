"""Trees built on the driver: the grower and its growth policies, the
bookkeeping of nodes, the fitted ``Tree``, and the losses' Python side.

The numba kernels these call (histograms, split search, traversal, the
losses' loops) are in ``kernels``; this package imports nothing else of
distboost.
"""
