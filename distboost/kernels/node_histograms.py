"""Histograms of the compiled grower's nodes (``local_grower``).

Of two children searched dense, the smaller one's histogram is built from
its rows and the larger one's subtracted from the parent's (histogram
subtraction: XGBoost's and LightGBM's way; Chen & Guestrin 2016, sec. 3.2,
sum the gradient statistics of each bin). A subtraction covers only the bins
that can hold rows: a numeric feature's own bins and its missing-value bin
(spam-shaped data: 135 of 260 on average); a node's scans, split directions
and the next level's subtractions read no others, so the bins past a
feature's own keep whatever they held.
"""

from __future__ import annotations

import numba
import numpy as np

from .common import MISSING_BIN
from .histogram import fill_either
from .node_records import DEPTH, HI, HIST, LEFT, LO, RIGHT, TREE
from .node_search import splittable
from .sparse_codes import n_code_features

PARALLEL_MIN_WORK = 1 << 18
"""Rows x features of a batch of nodes from which its work is shared among
threads; below, one thread does it. A parallel region costs a few
microseconds, and on a machine shared with other processes it lasts until
its last thread gets a core: spam-sized boosting (3065 rows x 57 features,
200 rounds of depth 4, 2 threads) took 0.36 s quiet and 1.0-1.4 s beside one
busy process with every level on both threads (2^16 here), 0.39 s and
0.48-0.64 s with this threshold (every level on one thread)."""


@numba.njit(cache=True)
def threads_for(work, n_threads):
    """All the threads for ``work`` rows x features of at least
    ``PARALLEL_MIN_WORK``, else one. Not weighed by the statistics a row
    carries: vector leaves' five outputs (10 statistics a row, 10 features,
    2 threads, 30 rounds of depth 6) grew 13 % slower on both threads than on
    one at 16,000 rows, as fast at 50,000 and 1.45x faster at 150,000; their
    histograms' thread buffers and sums grow with the statistics too."""
    return n_threads if work >= PARALLEL_MIN_WORK else 1


@numba.njit(cache=True)
def take_slot(free, n_free):
    if n_free == 0:
        return -1, 0
    return free[n_free - 1], n_free - 1


@numba.njit(cache=True)
def node_histograms(batch, ni, tot, pool, private, free, n_free, codes, stats, order, features,
                    n_bins, is_cat, fp, ip, max_depth, dense_rows, n_threads):
    """Histograms of the batch's children that are searched dense: the smaller
    of a pair built from its rows, the larger subtracted from the parent (or
    built too, where the parent has none); the parents' slots freed.
    Returns the free count."""
    n = len(batch)
    build_tree = np.empty(2 * n, np.int64)
    build_slot = np.empty(2 * n, np.int64)
    build_lo = np.empty(2 * n, np.int64)
    build_hi = np.empty(2 * n, np.int64)
    sub = np.empty((n, 3), np.int64)  # (into, parent, built)
    n_build = n_sub = 0
    spare = np.empty(n, np.int64)  # slots of built histograms only subtracted
    n_spare = 0
    for g in batch:
        lc, rc = ni[g, LEFT], ni[g, RIGHT]
        small, large = (lc, rc) if ni[lc, HI] - ni[lc, LO] <= ni[rc, HI] - ni[rc, LO] else (rc, lc)
        want_small = _wants_dense(small, ni, tot, fp, ip, max_depth, dense_rows)
        want_large = _wants_dense(large, ni, tot, fp, ip, max_depth, dense_rows)
        if want_large and ni[g, HIST] >= 0:
            slot, n_free = take_slot(free, n_free)
            if slot >= 0:
                # the larger child by subtraction: the smaller one built, kept or not
                small_slot, n_free = take_slot(free, n_free)
                if small_slot < 0:
                    free[n_free] = slot
                    n_free += 1
                else:
                    ni[large, HIST] = slot
                    build_tree[n_build], build_slot[n_build] = ni[g, TREE], small_slot
                    build_lo[n_build], build_hi[n_build] = ni[small, LO], ni[small, HI]
                    n_build += 1
                    sub[n_sub] = (slot, ni[g, HIST], small_slot)
                    n_sub += 1
                    if want_small:
                        ni[small, HIST] = small_slot
                    else:
                        spare[n_spare] = small_slot
                        n_spare += 1
                    want_large = want_small = False
        for side in range(2):
            c = small if side == 0 else large
            if (want_small if side == 0 else want_large):
                slot, n_free = take_slot(free, n_free)
                if slot >= 0:
                    ni[c, HIST] = slot
                    build_tree[n_build], build_slot[n_build] = ni[g, TREE], slot
                    build_lo[n_build], build_hi[n_build] = ni[c, LO], ni[c, HI]
                    n_build += 1
    if n_build:
        work = 0
        for i in range(n_build):
            work += build_hi[i] - build_lo[i]
        fill_either(codes, stats, order, build_tree[:n_build], build_slot[:n_build],
                    build_lo[:n_build], build_hi[:n_build], features, pool, work,
                    threads_for(work * n_code_features(codes[0], False), n_threads), private)
    if n_sub:
        subtract_pairs(pool, sub[:n_sub], threads_for(n_sub * pool[0].size, n_threads) > 1,
                       n_bins, is_cat)
    for g in batch:
        if ni[g, HIST] >= 0:
            free[n_free] = ni[g, HIST]
            n_free += 1
            ni[g, HIST] = -1
    for i in range(n_spare):
        free[n_free] = spare[i]
        n_free += 1
    return n_free


@numba.njit(cache=True, inline="always")
def _wants_dense(c, ni, tot, fp, ip, max_depth, dense_rows):
    return (dense_rows >= 0 and ni[c, HI] - ni[c, LO] >= dense_rows
            and (max_depth < 0 or ni[c, DEPTH] < max_depth) and splittable(tot[c], fp, ip))


@numba.njit(cache=True)
def subtract_pairs(pool, sub, parallel, n_bins, is_cat):
    """pool[into] = pool[parent] - pool[built] for each (into, parent, built)
    of ``sub``, over each feature's bins that hold rows (``used_bins``). With
    ``parallel`` one (pair, feature) per work item on the threads, else on
    this one."""
    n_features = pool.shape[1]
    if parallel:
        _subtract_parallel(pool, sub, n_bins, is_cat)
        return
    for i in range(len(sub)):
        for f in range(n_features):
            _difference(pool[sub[i, 0], f], pool[sub[i, 1], f], pool[sub[i, 2], f],
                        used_bins(n_bins, is_cat, f))


@numba.njit(parallel=True, cache=True)
def _subtract_parallel(pool, sub, n_bins, is_cat):
    n_features = pool.shape[1]
    for q in numba.prange(len(sub) * n_features):
        i, f = q // n_features, q % n_features
        _difference(pool[sub[i, 0], f], pool[sub[i, 1], f], pool[sub[i, 2], f],
                    used_bins(n_bins, is_cat, f))


@numba.njit(cache=True, inline="always")
def used_bins(n_bins, is_cat, f):
    """Feature f's leading bins that can hold rows besides the missing-value
    bin: its own (numeric), every one below it (categorical, whose split
    directions look at them all)."""
    return MISSING_BIN if is_cat[f] else n_bins[f]


@numba.njit(cache=True, inline="always")
def _difference(dst, a, b, n):
    """dst = a - b over bins [0, n) and the missing-value bin, (bins, statistics)
    arrays; flat loops over contiguous memory (vectorized)."""
    fd, fa, fb = dst.reshape(-1), a.reshape(-1), b.reshape(-1)
    for j in range(n * dst.shape[1]):
        fd[j] = fa[j] - fb[j]
    for k in range(dst.shape[1]):
        dst[MISSING_BIN, k] = a[MISSING_BIN, k] - b[MISSING_BIN, k]
