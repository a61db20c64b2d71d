"""Best splits of single nodes, for the compiled grower (``local_grower``).

A node's best split is the criterion's scan of each allowed feature
(``splitting._scan_order`` for XGBoost's regularized gain, Chen & Guestrin
2016 eq. 7; ``criteria._scan`` for the impurity decrease, ESL eq. 9.17), the
first of the largest gains winning; here the criterion comes packed into two
arrays (``pack_criterion``) so that compiled code can take any of them.

A feature is scanned from its histogram over the node's rows (``dense``:
all 256 bins) or from the node's rows themselves (``search_rows``): the
rows' statistics gathered by code into a small buffer, and only bin 0 and
the non-empty bins scanned, in order. An empty bin adds nothing, so its
candidate is the one before it again and never the larger (the scans skip
them too), and both ways find the same split. A forest's node draws its
features first (``drawn_features``), from its own stream.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.extending import overload

from .common import MAX_BINS, MISSING_BIN
from .criteria import (
    _RELATIVE_TOLERANCE,
    ImpurityCriterion,
    VarianceCriterion,
    _weighted_impurity,
    class_category_order,
)
from .criteria import _scan as _impurity_scan
from .histogram import PAD_BINS
from .intrinsics import trailing_zeros
from .sampling import node_permutation
from .sparse_codes import at, column, is_sparse_type
from .splitting import G, GradientCriterion, H, _scan_order, _score, category_order, scan_work
from .vector_splits import _scan as _vector_scan
from .vector_splits import vector_score

# the criterion, packed: kinds, and positions in the float and int parameter arrays
GRADIENT, IMPURITY, VECTOR = 0, 1, 2
SCALE_G, SCALE_H, LAMBDA, GAMMA, MIN_CHILD_WEIGHT, NOISE, GAIN_SCALE = range(7)
KIND, MIN_COUNT, PRESENT, N_CLASSES, IMPURITY_KIND, COUNT_STAT, VARIANCE = range(7)


# ------------------------------------------------------------------ criterion
def packed_kind(criterion):
    """The kernels' kind of ``criterion`` (``GRADIENT``, ``IMPURITY``, ``VECTOR``),
    or None for one they do not know."""
    if isinstance(criterion, ImpurityCriterion):
        return IMPURITY
    if isinstance(criterion, GradientCriterion):
        return GRADIENT
    if hasattr(criterion, "node_vectors"):  # trees.vector_leaves.VectorCriterion
        return VECTOR
    return None


def pack_criterion(criterion):
    """The criterion's parameters as (float64, int64) arrays for the kernels,
    or None for a criterion they do not know (``packed_kind``)."""
    kind = packed_kind(criterion)
    if kind == IMPURITY:
        k = criterion.n_classes
        return (_packed({NOISE: _RELATIVE_TOLERANCE, GAIN_SCALE: criterion.scale}, np.float64),
                _packed({KIND: IMPURITY, MIN_COUNT: criterion.min_samples_leaf, PRESENT: k,
                         N_CLASSES: k, IMPURITY_KIND: criterion.kind, COUNT_STAT: k}, np.int64))
    if kind == GRADIENT:
        p = criterion.params
        variance = isinstance(criterion, VarianceCriterion)
        return (_packed({SCALE_G: criterion.scale_g, SCALE_H: criterion.scale_h,
                         LAMBDA: p.reg_lambda, GAMMA: p.gamma, MIN_CHILD_WEIGHT: p.min_child_weight,
                         NOISE: _RELATIVE_TOLERANCE if variance else 0.0}, np.float64),
                _packed({KIND: GRADIENT, MIN_COUNT: p.min_samples_leaf, PRESENT: criterion.P,
                         COUNT_STAT: 2 if criterion.n_stats == 3 else -1, VARIANCE: variance},
                        np.int64))
    if kind == VECTOR:
        p, k = criterion.params, criterion.k
        return (_packed({SCALE_G: criterion.scale_g, SCALE_H: criterion.scale_h,
                         LAMBDA: p.reg_lambda, GAMMA: p.gamma, MIN_CHILD_WEIGHT: p.min_child_weight},
                        np.float64),
                _packed({KIND: VECTOR, MIN_COUNT: p.min_samples_leaf, PRESENT: criterion.P,
                         N_CLASSES: k, COUNT_STAT: 2 * k if criterion.counts else -1}, np.int64))
    return None


def _packed(values: dict, dtype) -> np.ndarray:
    """The 7 parameters of one kind, ``values`` by position, zero elsewhere (made from
    a list at once: every round packs its criterion)."""
    out = [0] * 7
    for place, value in values.items():
        out[place] = value
    return np.array(out, dtype)


@numba.njit(cache=True, inline="always")
def splittable(tot, fp, ip):
    """The criterion's ``splittable``: enough rows (and hessian, or classes) to split."""
    if ip[KIND] == VECTOR:  # every output's hessian (``VectorCriterion.splittable``)
        if tot[ip[PRESENT]] < 2 * ip[MIN_COUNT]:
            return False
        for j in range(ip[N_CLASSES]):
            if tot[2 * j + 1] / fp[SCALE_H] < 2 * fp[MIN_CHILD_WEIGHT]:
                return False
        return True
    if ip[KIND] == GRADIENT:
        return (tot[ip[PRESENT]] >= 2 * ip[MIN_COUNT]
                and tot[H] / fp[SCALE_H] >= 2 * fp[MIN_CHILD_WEIGHT])
    k = ip[N_CLASSES]
    if tot[k] < 2 * ip[MIN_COUNT]:
        return False
    present = 0
    for c in range(k):
        present += tot[c] != 0
    return present > 1


@numba.njit(cache=True)
def node_terms(tot, fp, ip):
    """What every feature's scan of a node shares: the parent's score (gradient)
    or weighted impurity, its majority class and class weight (impurity)."""
    if ip[KIND] == VECTOR:
        return vector_score(tot, ip[N_CLASSES], 1.0 / fp[SCALE_G], 1.0 / fp[SCALE_H],
                            fp[LAMBDA]), 0, 0.0
    if ip[KIND] == GRADIENT:
        return _score(tot[G] / fp[SCALE_G], tot[H] / fp[SCALE_H], fp[LAMBDA]), 0, 0.0
    k = ip[N_CLASSES]
    c = np.empty(k, np.float64)
    w = 0.0
    majority = 0
    for j in range(k):
        c[j] = tot[j]
        w += c[j]
        if c[j] > c[majority]:
            majority = j
    return _weighted_impurity(c, ip[IMPURITY_KIND]), majority, w


_NO_BOUNDS = (-np.inf, np.inf, False)


@numba.njit(cache=True)
def scan_feature(hist_f, order, n_order, dense, is_cat, n_bins_f, tot, fp, ip, parent, majority,
                 work):
    """One feature's best split: (gain before gamma, split bin, missing goes left).

    ``dense``: ``hist_f`` holds every bin and is scanned whole (``order`` is
    ``0 .. 255``); otherwise only the bins ``order[:n_order - 1]`` (bin 0 and
    the non-empty ones, ascending, then one more) hold rows. The split bin is the last left bin (numeric)
    or the length of the left prefix of the sorted categories. Vector-leaf
    criteria (numeric only) scan ``hist_f`` whole, skipping its empty bins.
    ``work``: ``splitting.scan_work()``, reused from feature to feature.
    """
    if ip[KIND] == VECTOR:
        return _vector_scan(hist_f, n_bins_f, tot, ip[N_CLASSES], 1.0 / fp[SCALE_G],
                            1.0 / fp[SCALE_H], fp[LAMBDA], fp[MIN_CHILD_WEIGHT], ip[MIN_COUNT],
                            parent, ip[PRESENT])
    if ip[KIND] == GRADIENT:
        if is_cat:
            cats = category_order(hist_f, n_bins_f, fp[SCALE_G], fp[SCALE_H], fp[LAMBDA],
                                  ip[PRESENT])
            gain, k, ml = _scan_order(hist_f, cats, len(cats), tot, fp[SCALE_G], fp[SCALE_H],
                                      fp[LAMBDA], fp[MIN_CHILD_WEIGHT], ip[MIN_COUNT], parent,
                                      ip[PRESENT], 0, _NO_BOUNDS, work)
            return gain, k + 1, ml
        if dense:
            return gradient_dense(hist_f, n_bins_f, tot, fp, ip, parent, work)
        gain, k, ml = _scan_order(hist_f, order, n_order, tot, fp[SCALE_G], fp[SCALE_H],
                                  fp[LAMBDA], fp[MIN_CHILD_WEIGHT], ip[MIN_COUNT], parent,
                                  ip[PRESENT], 0, _NO_BOUNDS, work)
        return gain, order[k] if k >= 0 else -1, ml
    if is_cat:
        cats = class_category_order(hist_f, n_bins_f, majority)
        return _impurity_scan(hist_f, cats, tot, ip[IMPURITY_KIND], ip[MIN_COUNT], parent, 0,
                              _NO_BOUNDS)
    gain, length, ml = _impurity_scan(hist_f, order[:n_order], tot, ip[IMPURITY_KIND],
                                      ip[MIN_COUNT], parent, 0, _NO_BOUNDS)
    return gain, order[length - 1] if length > 0 else -1, ml


@numba.njit(cache=True)
def gradient_dense(hist_f, n_bins_f, tot, fp, ip, parent, work):
    """``scan_feature`` of a numeric feature's whole histogram under a gradient
    criterion, the most frequent scan: called by itself, without
    ``scan_feature``'s other cases, it takes ~40 ns less a feature (spam's
    nodes: 430 against 470 ns)."""
    return _scan_order(hist_f, None, n_bins_f, tot, fp[SCALE_G], fp[SCALE_H], fp[LAMBDA],
                       fp[MIN_CHILD_WEIGHT], ip[MIN_COUNT], parent, ip[PRESENT], 0, _NO_BOUNDS,
                       work)


@numba.njit(cache=True)
def final_gain(best, tot, w, fp, ip):
    """The node's gain as the grower keeps it: impurity decreases at most a
    rounding noise of W count as none and are scaled back from fixed point;
    variance reductions below their noise count as none (``criteria``)."""
    if ip[KIND] == IMPURITY:
        if best <= fp[NOISE] * w:
            return -np.inf
        return best / fp[GAIN_SCALE]
    if ip[VARIANCE]:
        noise = fp[NOISE] * abs(tot[G] / fp[SCALE_G]) ** 2 / max(tot[H] / fp[SCALE_H],
                                                                  np.finfo(np.float64).tiny)
        return best if best > noise else -np.inf
    return best


@numba.njit(cache=True)
def split_directions(hist_f, is_cat, split_bin, missing_left, tot, fp, ip, out):
    """The split's direction of every bin into ``out`` (256 bools); the left
    child's statistics and whether the node has missing values."""
    for b in range(MAX_BINS):
        out[b] = False
    if is_cat:
        if ip[KIND] == GRADIENT:
            cats = category_order(hist_f, MISSING_BIN, fp[SCALE_G], fp[SCALE_H], fp[LAMBDA],
                                  ip[PRESENT])
        else:
            cats = class_category_order(hist_f, MISSING_BIN, np.argmax(tot[:ip[N_CLASSES]]))
        for j in range(split_bin):
            out[cats[j]] = True
    else:
        out[:split_bin + 1] = True
    out[MISSING_BIN] = missing_left
    left = np.zeros(hist_f.shape[1], np.int64)
    for b in range(MAX_BINS):
        if out[b]:
            for k in range(len(left)):
                left[k] += hist_f[b, k]
    return left, hist_f[MISSING_BIN, ip[PRESENT]] > 0


# ------------------------------------------------------- searches from rows
LANES = 4
"""Buffers a node's rows are gathered into in turn: many rows share a code
(the zeros of a sparse column), and additions into one bin wait each for
the one before; four bins in turn overlap four such chains."""


@numba.njit(cache=True)
def scratch(n_stats):
    """What gathering a feature's rows and scanning them needs: (lanes, seen,
    listed, present, order, work); lanes padded as ``histogram``'s kernels pad
    (``PAD_BINS``), or the same bin of each lane would be 4 KiB apart; work
    ``splitting.scan_work()``."""
    return (np.zeros((LANES, MAX_BINS + PAD_BINS, n_stats), np.int64), np.zeros(MAX_BINS, np.uint8),
            np.empty(MAX_BINS, np.int64), np.zeros(4, np.uint64),
            np.empty(MAX_BINS + 1, np.int64), scan_work())


@numba.njit(cache=True)
def gather(codes, rows, stats, sc):
    """``sc``'s first lane becomes the histogram of the rows' ``codes``
    (statistics summed per code), its bitmap ``present`` marks the codes;
    returns how many codes are listed (for ``release``)."""
    lanes, seen, listed, present, _, _ = sc
    mask = LANES - 1 if len(rows) >= 16 * LANES else 0  # lanes are a power of two
    n_stats = stats.shape[1]
    n_listed = 0
    for i in range(len(rows)):
        r = rows[i]
        c = at(codes, r)
        n_listed = _list_code(seen, listed, n_listed, c)
        lane = i & mask
        lanes[lane, c, 0] += stats[r, 0]
        lanes[lane, c, 1] += stats[r, 1]
        for k in range(2, n_stats):
            lanes[lane, c, k] += stats[r, k]
    _mark_present(present, listed, n_listed)
    for j in range(n_listed):
        c = listed[j]
        for lane in range(1, mask + 1):
            for k in range(n_stats):
                lanes[0, c, k] += lanes[lane, c, k]
                lanes[lane, c, k] = 0
    return n_listed


@numba.njit(cache=True, inline="always")
def _list_code(seen, listed, n_listed, c):
    """List code ``c`` the first time it is seen; returns how many are listed."""
    if not seen[c]:
        seen[c] = 1
        listed[n_listed] = c
        n_listed += 1
    return n_listed


@numba.njit(cache=True, inline="always")
def _mark_present(present, listed, n_listed):
    """``present``: the bitmap of the listed codes."""
    for w in range(4):
        present[w] = 0
    for j in range(n_listed):
        c = listed[j]
        present[c >> 6] |= np.uint64(1) << np.uint64(c & 63)


@numba.njit(cache=True)
def release(sc, n_listed):
    """Zero what ``gather`` wrote."""
    lanes, seen, listed, _, _, _ = sc
    for j in range(n_listed):
        for k in range(lanes.shape[2]):
            lanes[0, listed[j], k] = 0
        seen[listed[j]] = 0


@numba.njit(cache=True)
def _bin_order(present, n_bins_f, order):
    """Bin 0 and the non-empty bins below the feature's last, ascending, then
    the last: the bins a dense numeric scan's candidates differ at. Returns
    how many entries of ``order`` are set."""
    last = n_bins_f - 1
    order[0] = 0
    n = 1 if last > 0 else 0
    for w in range(4):
        word = present[w]
        while word:
            b = w * 64 + trailing_zeros(word)
            word &= word - np.uint64(1)
            if b >= last:
                break
            if b > 0:
                order[n] = b
                n += 1
    order[n] = last
    return n + 1


@numba.njit(cache=True)
def _non_constant(codes, rows):
    """Whether the rows take more than one code (missing counts as one)."""
    if len(rows) == 0:
        return False
    first = at(codes, rows[0])
    for r in rows:
        if at(codes, r) != first:
            return True
    return False


@numba.njit(cache=True)
def search_rows(Xc, rows, stats, tot, allowed, n_bins, is_cat, fp, ip, sc, features):
    """Best split of a node from its rows, over ``features`` (ascending):
    (gain, feature, split bin, missing left), gamma subtracted. ``sc``:
    ``scratch``'s buffers."""
    parent, majority, _ = node_terms(tot, fp, ip)
    best, best_f, best_b, best_m = -np.inf, -1, -1, False
    for f in features:
        if not allowed[f]:
            continue
        n_listed = gather(column(Xc, f), rows, stats, sc)
        gain, b, ml = _scan_gathered(f, n_listed, sc, n_bins, is_cat, tot, fp, ip, parent,
                                     majority)
        if gain > best:
            best, best_f, best_b, best_m = gain, f, b, ml
    return best, best_f, best_b, best_m


@numba.njit(cache=True, inline="always")
def _scan_gathered(f, n_listed, sc, n_bins, is_cat, tot, fp, ip, parent, majority):
    """Feature f's best split from what ``gather`` put in ``sc`` (then released),
    gamma subtracted."""
    order = sc[4]
    n_order = 0 if is_cat[f] else _bin_order(sc[3], n_bins[f], order)
    gain, b, ml = scan_feature(sc[0][0], order, n_order, False, is_cat[f], n_bins[f], tot, fp,
                               ip, parent, majority, sc[5])
    release(sc, n_listed)
    if ip[KIND] != IMPURITY:
        gain -= fp[GAMMA]
    return gain, b, ml


@numba.njit(cache=True)
def search_sparse_rows(X, rows, stats, tot, allowed, n_bins, is_cat, fp, ip, sc, features):
    """``search_rows`` of sparse codes (``sparse_codes.SparseCodes``): the rows'
    stored entries bucketed by feature, each feature gathered from its own
    (``gather_entries``), so a node costs its stored entries, not rows x
    features; a feature no row stores is missing in every row (constant)."""
    n_features = X.n_features
    start = np.zeros(n_features + 1, np.int64)
    for r in rows:
        for k in range(X.indptr[r], X.indptr[r + 1]):
            start[X.indices[k] + 1] += 1
    for f in range(n_features):
        start[f + 1] += start[f]
    fill = start[:-1].copy()
    entry_rows = np.empty(start[-1], np.int64)
    entry_codes = np.empty(start[-1], np.uint8)
    for r in rows:
        for k in range(X.indptr[r], X.indptr[r + 1]):
            f = X.indices[k]
            entry_rows[fill[f]], entry_codes[fill[f]] = r, X.codes[k]
            fill[f] += 1
    parent, majority, _ = node_terms(tot, fp, ip)
    best, best_f, best_b, best_m = -np.inf, -1, -1, False
    for f in features:
        if not allowed[f] or start[f] == start[f + 1]:
            continue
        n_listed = gather_entries(entry_rows, entry_codes, start[f], start[f + 1], len(rows),
                                  stats, tot, sc)
        gain, b, ml = _scan_gathered(f, n_listed, sc, n_bins, is_cat, tot, fp, ip, parent,
                                     majority)
        if gain > best:
            best, best_f, best_b, best_m = gain, f, b, ml
    return best, best_f, best_b, best_m


@numba.njit(cache=True)
def gather_entries(entry_rows, entry_codes, a, b, n_rows, stats, tot, sc):
    """``gather`` of one feature's stored entries a:b among a node's ``n_rows``
    rows: the rows storing nothing go to ``MISSING_BIN`` with the node's
    total ``tot`` less the stored entries' sums (exact: fixed point)."""
    lanes, seen, listed, present, _, _ = sc
    n_stats = stats.shape[1]
    n_listed = 0
    for e in range(a, b):
        r, c = entry_rows[e], entry_codes[e]
        n_listed = _list_code(seen, listed, n_listed, c)
        for k in range(n_stats):
            lanes[0, c, k] += stats[r, k]
    if b - a < n_rows:
        stored = np.zeros(n_stats, np.int64)
        for j in range(n_listed):
            for k in range(n_stats):
                stored[k] += lanes[0, listed[j], k]
        n_listed = _list_code(seen, listed, n_listed, MISSING_BIN)
        for k in range(n_stats):
            lanes[0, MISSING_BIN, k] += tot[k] - stored[k]
    _mark_present(present, listed, n_listed)
    return n_listed


def search_node_rows(Xc, rows, stats, tot, allowed, n_bins, is_cat, fp, ip, sc, features):
    """``search_rows``, or ``search_sparse_rows`` of sparse codes (chosen when compiled)."""


@overload(search_node_rows)
def _search_node_rows(Xc, rows, stats, tot, allowed, n_bins, is_cat, fp, ip, sc, features):
    kernel = search_sparse_rows if is_sparse_type(Xc) else search_rows

    def impl(Xc, rows, stats, tot, allowed, n_bins, is_cat, fp, ip, sc, features):
        return kernel(Xc, rows, stats, tot, allowed, n_bins, is_cat, fp, ip, sc, features)
    return impl


@numba.njit(cache=True)
def drawn_features(Xc, rows, allowed, key, max_features, perm):
    """A forest node's features: the first ``max_features`` of its permutation
    that are allowed and not constant on its rows, ascending
    (``sampling.NodeFeatureSampler``)."""
    node_permutation(key, perm)
    taken = np.empty(min(max_features, len(perm)), np.int64)
    n = 0
    for j in range(len(perm)):
        if n >= max_features:
            break
        f = perm[j]
        if allowed[f] and _non_constant(column(Xc, f), rows):
            taken[n] = f
            n += 1
    for i in range(1, n):  # insertion sort: a handful of features
        f, j = taken[i], i - 1
        while j >= 0 and taken[j] > f:
            taken[j + 1] = taken[j]
            j -= 1
        taken[j + 1] = f
    return taken[:n]
