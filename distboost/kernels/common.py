"""Shared dtypes and record layouts.

Every module that exchanges arrays with another agrees on these: the binned
feature matrix, the fixed-point statistics, and the flat node record of a
fitted tree.
"""

import numpy as np

X_BINNED_DTYPE = np.uint8
"""Dtype of the binned feature matrix (at most 256 bins, the last for missing)."""

STAT_DTYPE = np.int64
"""Per-row statistics and histograms are fixed-point integers so that sums are
exact and do not depend on the order of addition (hence on partitioning)."""

MAX_BINS = 256
MISSING_BIN = MAX_BINS - 1
"""Missing values (and unseen categories) always fall into the last bin."""

NODE_DTYPE = np.dtype(
    [
        ("value", np.float64),
        ("count", np.int64),
        ("cover", np.float64),
        ("feature", np.int32),
        ("threshold", np.float64),
        ("bin_threshold", np.uint8),
        ("missing_left", np.uint8),
        ("is_categorical", np.uint8),
        ("cat_index", np.int32),
        ("left", np.int32),
        ("right", np.int32),
        ("gain", np.float64),
        ("is_leaf", np.uint8),
        ("depth", np.int32),
    ]
)
"""One record per tree node; node 0 is the root. ``value`` is already multiplied
by the learning rate; ``count`` is the number of training rows reaching the node
and ``cover`` the sum of their hessians; go left if ``x <= threshold`` (numeric)
or if the category's bit is set in ``cat_bitsets[cat_index]`` (categorical)."""

N_BITSET_WORDS = MAX_BINS // 64
