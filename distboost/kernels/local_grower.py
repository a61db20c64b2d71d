"""Grow whole trees where the rows are, in compiled code.

``trees.grower.TreeGrower`` grows trees on the driver, one wave of work on the
partitions per level, because on Dask the rows are spread over workers. In
process every row is in one place, so the same trees grow here in one
compiled call per round, with no Python per level or node: the fixed cost of
a level is a few parallel regions, and of a small node a few loops.

The algorithm is the grower's, step for step, and gives the same trees to
the bit (``tests/test_local_grower.py`` holds them against ``TreeGrower``):
nodes are searched as ``node_search`` says; depth-wise growth splits every
leaf with a positive gain at once, level by level, children numbered in
their parents' order; best-first growth (ESL 10.11's J leaves) splits the
leaf with the largest gain (then the smallest id), children numbered in the
order splits are taken. A node of at least ``DENSE_MIN_ROWS`` rows is
searched from a histogram of every feature, the smaller child's built from
its rows and the larger one's subtracted from the parent's (the grower's
way); a smaller node, and every node of a forest that draws features per
node, from its rows: a node of a few rows costs a few rows, not 256 bins per
feature, and a forest's node gathers only the features it drew. Where the
features mostly hold one code, large nodes' histograms skip it (``mode_codes``).

Work is parallel over chunks of rows while nodes are few and large (routing,
histograms, as ``histogram``'s kernels do), over (node, feature) pairs for
dense searches, and over nodes for searches from rows; a batch of nodes whose
rows x features are fewer than ``PARALLEL_MIN_WORK`` runs on one thread,
where waking others would cost more than it gives. A forest's batch of at
least as many trees as threads is grown the other way (``_grow_apart``):
each tree whole on one thread, threads taking the next tree as they finish,
as scikit-learn's forest does; no level waits for every thread, so a thread
that shares its core with another process holds up only its own trees.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.typed import List

from .common import MAX_BINS, MISSING_BIN
from .histogram import PAD_BINS, LevelSplits, fill_either, kernel_features, route_rows
from .intrinsics import launch_threads, set_threads
from .node_histograms import node_histograms, take_slot, threads_for
from .node_records import (
    BIN,
    CATEGORIES,
    COUNT,
    DEPTH,
    FEATURE,
    HAS_MISSING,
    HI,
    HIST,
    ID,
    LEFT,
    LO,
    MISSING_LEFT,
    N_FIELDS,
    PARENT,
    RIGHT,
    SPLIT,
    TREE,
    Grown,
    by_tree,
    copy_row,
    joined,
    split_directions_into,
)
from .node_search import (
    COUNT_STAT,
    GAMMA,
    GRADIENT,
    IMPURITY,
    KIND,
    drawn_features,
    final_gain,
    gather,
    gradient_dense,
    node_terms,
    pack_criterion,
    release,
    scan_feature,
    scratch,
    search_node_rows,
    split_directions,
    splittable,
)
from .sampling import node_key
from .sparse_codes import column, is_sparse_codes, n_code_features
from .splitting import scan_work
from .threads import threads_now, use_threads

DENSE_MIN_ROWS = 64
"""Nodes of this many rows or more are searched from histograms of every
feature (built, or subtracted from their parent's); smaller ones from their
rows. A node's histograms cost 256 bins per feature to clear, subtract and
scan, its rows a gather of each feature's codes; on spam-sized data (57
features) depth-4 trees grew fastest with every node dense, depth-8 trees
with this threshold (64: 5.5 ms a tree; 0: 15.2; 1024: 6.4)."""

SPARSE_DENSE_ENTRIES = 1.0
"""Entries a histogram bin from which a sparse node goes dense (``dense_min_rows``): 1M x
10,000 at 0.1 %, 10 rounds of depth 6: 22.6 s at 64 rows, 8.3 s at 1, 8.7-9.0 s at 2 and 0.5."""

HISTOGRAM_BUDGET = 256 * 2**20
"""Bytes of node histograms held at once; a node that finds no room is
searched from its rows (the same split)."""


# ------------------------------------------------------------------- nodes
@numba.njit(cache=True)
def _take(values, rows):
    """values[rows] of a 1-D array (rows are copied and filled by loops: numba compiles
    array expressions and slice assignments through its general broadcasting code, slowly)."""
    out = np.empty(len(rows), values.dtype)
    for i in range(len(rows)):
        out[i] = values[rows[i]]
    return out


@numba.njit(cache=True)
def _column(ni, rows, field):
    """ni[rows, field]."""
    out = np.empty(len(rows), np.int64)
    for i in range(len(rows)):
        out[i] = ni[rows[i], field]
    return out


@numba.njit(cache=True)
def _where(nodes, keep):
    """nodes[keep]."""
    n = 0
    for i in range(len(nodes)):
        n += keep[i]
    out = np.empty(n, np.int64)
    n = 0
    for i in range(len(nodes)):
        if keep[i]:
            out[n] = nodes[i]
            n += 1
    return out


@numba.njit(cache=True)
def _positive(nodes, gains):
    """The nodes with a positive gain."""
    keep = np.empty(len(nodes), np.bool_)
    for i in range(len(nodes)):
        keep[i] = gains[nodes[i]] > 0
    return _where(nodes, keep)


@numba.njit(cache=True)
def _new_node(ni, gain, tot, g, tree, node_id, parent, depth):
    for k in range(N_FIELDS):
        ni[g, k] = -1
    ni[g, TREE], ni[g, ID], ni[g, PARENT], ni[g, DEPTH] = tree, node_id, parent, depth
    ni[g, SPLIT] = 0
    gain[g] = -np.inf
    for k in range(tot.shape[1]):
        tot[g, k] = 0


@numba.njit(cache=True)
def _room(ni, gain, tot, ltot, need):
    """The node table, with room for ``need`` rows (doubled when short)."""
    if need <= len(gain):
        return ni, gain, tot, ltot
    size = max(need, 2 * len(gain))
    ni2 = np.empty((size, N_FIELDS), np.int64)
    gain2 = np.empty(size)
    tot2 = np.empty((size, tot.shape[1]), np.int64)
    ltot2 = np.empty((size, tot.shape[1]), np.int64)
    for g in range(len(gain)):
        copy_row(ni2, g, ni, g)
        copy_row(tot2, g, tot, g)
        copy_row(ltot2, g, ltot, g)
        gain2[g] = gain[g]
    return ni2, gain2, tot2, ltot2


@numba.njit(cache=True)
def _cat_room(cat, need):
    if need <= len(cat):
        return cat
    out = np.zeros((max(need, 2 * len(cat)), MAX_BINS), np.bool_)
    for i in range(len(cat)):
        copy_row(out, i, cat, i)
    return out


# ------------------------------------------------------------- evaluation
@numba.njit(parallel=True, cache=True)
def _search_dense(nodes, ni, tot, pool, masks, n_bins, is_cat, fp, ip, res_gain, res_bin,
                  res_ml, n_threads):
    """Every (node, feature) pair's best split, from the nodes' histograms;
    the pairs in a few runs per thread, each run with its own scan buffers."""
    n_features = pool.shape[1]
    n_pairs = len(nodes) * n_features
    n_runs = min(n_pairs, 4 * n_threads)
    bins = np.arange(MAX_BINS)
    gradient = ip[KIND] == GRADIENT
    for run in numba.prange(n_runs):
        work = scan_work()
        at, parent, majority = -1, 0.0, 0
        for q in range(run * n_pairs // n_runs, (run + 1) * n_pairs // n_runs):
            i, f = q // n_features, q % n_features
            g = nodes[i]
            res_gain[q] = -np.inf
            if not masks[ni[g, TREE], f]:
                continue
            if i != at:  # a node's terms once per run
                at = i
                parent, majority, _ = node_terms(tot[g], fp, ip)
            if gradient and not is_cat[f]:
                gain, b, ml = gradient_dense(pool[ni[g, HIST], f], n_bins[f], tot[g], fp, ip,
                                             parent, work)
            else:
                gain, b, ml = scan_feature(pool[ni[g, HIST], f], bins, n_bins[f], True,
                                           is_cat[f], n_bins[f], tot[g], fp, ip, parent,
                                           majority, work)
            res_gain[q], res_bin[q], res_ml[q] = gain, b, ml


@numba.njit(parallel=True, cache=True)
def _search_sparse(nodes, ni, tot, Xc, order, stats, masks, n_bins, is_cat, fp, ip, sampling,
                   res_gain, res_f, res_bin, res_ml, n_blocks):
    """Every node's best split from its rows, nodes shared among blocks by rows."""
    n_features = n_code_features(Xc, True)
    max_features, seed, first_tree = sampling
    bounds = _balanced(nodes, ni, n_blocks)
    for blk in numba.prange(n_blocks):
        sc = scratch(stats.shape[2])
        perm = np.empty(n_features, np.int64)
        every = np.arange(n_features)
        for i in range(bounds[blk], bounds[blk + 1]):
            g = nodes[i]
            t = ni[g, TREE]
            rows = order[t, ni[g, LO]:ni[g, HI]]
            features = every
            if max_features >= 0:
                key = node_key(seed, first_tree + t, ni[g, ID])
                features = drawn_features(Xc, rows, masks[t], key, max_features, perm)
            res_gain[i], res_f[i], res_bin[i], res_ml[i] = search_node_rows(
                Xc, rows, stats[t], tot[g], masks[t], n_bins, is_cat, fp, ip, sc, features)


@numba.njit(cache=True)
def _balanced(nodes, ni, n_blocks):
    """Cut ``nodes`` into ``n_blocks`` runs of about the same number of rows."""
    total = 0
    for g in nodes:
        total += ni[g, HI] - ni[g, LO]
    bounds = np.full(n_blocks + 1, len(nodes), np.int64)
    bounds[0] = 0
    done, b = 0, 1
    for i in range(len(nodes)):
        done += ni[nodes[i], HI] - ni[nodes[i], LO]
        while b < n_blocks and done * n_blocks >= total * b:
            bounds[b] = i + 1
            b += 1
    return bounds


@numba.njit(cache=True)
def _set_split(g, gain, f, b, ml, hist_f, ni, gains, tot, ltot, cat, n_cat, is_cat, fp, ip,
               goes_left):
    """Keep node g's best split, its left child's statistics and, for a
    categorical split, its categories; returns the categories' row count."""
    gains[g] = gain
    ni[g, FEATURE], ni[g, BIN], ni[g, MISSING_LEFT] = f, b, ml
    left, has_missing = split_directions(hist_f, is_cat[f], b, ml, tot[g], fp, ip, goes_left)
    for k in range(len(left)):
        ltot[g, k] = left[k]
    ni[g, HAS_MISSING] = has_missing
    if is_cat[f]:
        for code in range(MAX_BINS):
            cat[n_cat, code] = goes_left[code]
        ni[g, CATEGORIES] = n_cat
        return n_cat + 1
    return n_cat


@numba.njit(cache=True)
def _evaluate(nodes, ni, gains, tot, ltot, cat, n_cat, pool, Xc, order, stats, masks, n_bins,
              is_cat, fp, ip, sampling, n_threads):
    """Best split of each node of ``nodes`` (splittable ones), kept in the
    node table when its gain is positive. Returns (cat, n_cat)."""
    n_features = n_code_features(Xc, True)
    has_hist = _column(ni, nodes, HIST) >= 0
    dense, sparse = _where(nodes, has_hist), _where(nodes, ~has_hist)
    cat = _cat_room(cat, n_cat + len(nodes))
    goes_left = np.empty(MAX_BINS, np.bool_)
    sc = scratch(stats.shape[2])
    if len(dense):
        res_gain = np.empty(len(dense) * n_features)
        res_bin = np.empty(len(dense) * n_features, np.int64)
        res_ml = np.empty(len(dense) * n_features, np.bool_)
        _search_dense(dense, ni, tot, pool, masks, n_bins, is_cat, fp, ip, res_gain, res_bin,
                      res_ml, n_threads)
        for i in range(len(dense)):
            g = dense[i]
            best, best_q = -np.inf, -1
            for q in range(i * n_features, (i + 1) * n_features):
                gain = res_gain[q] - fp[GAMMA] if ip[KIND] != IMPURITY else res_gain[q]
                if gain > best:
                    best, best_q = gain, q
            best = final_gain(best, tot[g], node_terms(tot[g], fp, ip)[2], fp, ip)
            if np.isfinite(best) and best > 0:
                f = best_q - i * n_features
                n_cat = _set_split(g, best, f, res_bin[best_q], res_ml[best_q],
                                   pool[ni[g, HIST], f], ni, gains, tot, ltot, cat, n_cat, is_cat,
                                   fp, ip, goes_left)
    if len(sparse):
        res_gain = np.empty(len(sparse))
        res_f = np.empty(len(sparse), np.int64)
        res_bin = np.empty(len(sparse), np.int64)
        res_ml = np.empty(len(sparse), np.bool_)
        n_blocks = n_threads if n_threads > 1 and len(sparse) > 1 else 1
        _search_sparse(sparse, ni, tot, Xc, order, stats, masks, n_bins, is_cat, fp, ip, sampling,
                       res_gain, res_f, res_bin, res_ml, n_blocks)
        for i in range(len(sparse)):
            g = sparse[i]
            best = final_gain(res_gain[i], tot[g], node_terms(tot[g], fp, ip)[2], fp, ip)
            if np.isfinite(best) and best > 0:
                f = res_f[i]
                t = ni[g, TREE]
                n_listed = gather(column(Xc, f), order[t, ni[g, LO]:ni[g, HI]], stats[t], sc)
                n_cat = _set_split(g, best, f, res_bin[i], res_ml[i], sc[0][0], ni, gains, tot,
                                   ltot, cat, n_cat, is_cat, fp, ip, goes_left)
                release(sc, n_listed)
    return cat, n_cat


# --------------------------------------------------------------- expansion

@numba.njit(cache=True)
def _directions(batch, ni, cat):
    """The routing table of the batch's splits: (n, 256) bools."""
    out = np.zeros((len(batch), MAX_BINS), np.bool_)
    for i in range(len(batch)):
        g = batch[i]
        split_directions_into(ni, g, cat, out, i)
    return out


@numba.njit(cache=True)
def _children(batch, ni, gains, tot, ltot, n_nodes, next_id, fp, ip, max_depth):
    """Two new nodes per split of ``batch``, numbered per tree in batch order."""
    for g in batch:
        t = ni[g, TREE]
        for side in range(2):
            c = n_nodes + side
            _new_node(ni, gains, tot, c, t, next_id[t] + side, g, ni[g, DEPTH] + 1)
        for k in range(tot.shape[1]):
            tot[n_nodes, k] = ltot[g, k]
            tot[n_nodes + 1, k] = tot[g, k] - ltot[g, k]
        ni[g, LEFT], ni[g, RIGHT], ni[g, SPLIT] = n_nodes, n_nodes + 1, 1
        next_id[t] += 2
        n_nodes += 2
    return n_nodes


@numba.njit(cache=True)
def _route_batch(batch, ni, cat, Xc, order, tmp, n_threads):
    """Move each split node's rows into its children; set their row ranges."""
    n = len(batch)
    trees, features = _column(ni, batch, TREE), _column(ni, batch, FEATURE)
    lo, hi = _column(ni, batch, LO), _column(ni, batch, HI)
    left = route_rows(Xc, order, tmp, trees, features, _directions(batch, ni, cat), lo, hi,
                      n_threads)
    for i in range(n):
        g = batch[i]
        lc, rc = ni[g, LEFT], ni[g, RIGHT]
        ni[lc, LO], ni[lc, HI], ni[lc, COUNT] = lo[i], lo[i] + left[i], left[i]
        ni[rc, LO], ni[rc, HI], ni[rc, COUNT] = lo[i] + left[i], hi[i], hi[i] - lo[i] - left[i]


@numba.njit(cache=True)
def _settle_counts(batch, ni, tot, cat, ip):
    """Children's counts: the criterion's (rows with multiplicity) when its
    statistics hold them, else the rows routed; without a count statistic, a
    split with no missing values sends them to the child with more rows."""
    for g in batch:
        lc, rc = ni[g, LEFT], ni[g, RIGHT]
        if ip[COUNT_STAT] >= 0:
            ni[lc, COUNT], ni[rc, COUNT] = tot[lc, ip[COUNT_STAT]], tot[rc, ip[COUNT_STAT]]
        elif not ni[g, HAS_MISSING]:
            ml = ni[lc, COUNT] >= ni[rc, COUNT]
            ni[g, MISSING_LEFT] = ml
            if ni[g, CATEGORIES] >= 0:
                cat[ni[g, CATEGORIES], MISSING_BIN] = ml


@numba.njit(cache=True)
def _searchable(children, ni, tot, fp, ip, max_depth):
    """The children that may split (depth and criterion)."""
    keep = np.zeros(len(children), np.bool_)
    for i in range(len(children)):
        c = children[i]
        keep[i] = (max_depth < 0 or ni[c, DEPTH] < max_depth) and splittable(tot[c], fp, ip)
    return _where(children, keep)


# -------------------------------------------------------------------- loops
@numba.njit(cache=True)
def _grow(codes, Xc, stats, order, tmp, root_lo, root_hi, masks, features, n_bins, is_cat, fp, ip,
          sampling, max_depth, max_leaves, n_threads, dense_rows, memory, n_slots):
    n_trees, n_stats = stats.shape[0], stats.shape[2]
    cap = 64 * n_trees
    ni = np.empty((cap, N_FIELDS), np.int64)
    gains = np.empty(cap)
    tot = np.empty((cap, n_stats), np.int64)
    ltot = np.empty((cap, n_stats), np.int64)
    cat = np.zeros((8, MAX_BINS), np.bool_)
    n_cat = 0
    pool = memory[:n_slots]  # node histograms; then the blocks' buffers (``fill_histograms``)
    private = memory[n_slots:].reshape((n_threads, 2) + memory.shape[1:])
    free = np.arange(n_slots)[::-1].copy()
    n_free = n_slots
    next_id = np.ones(n_trees, np.int64)
    rows = 0
    for t in range(n_trees):
        rows += root_hi[t] - root_lo[t]
    set_threads(threads_for(rows * n_code_features(codes[0], False), n_threads))
    for t in range(n_trees):
        _new_node(ni, gains, tot, t, t, 0, -1, 0)
        ni[t, LO], ni[t, HI] = root_lo[t], root_hi[t]
    n_free = _root_histograms(ni, tot, pool, private, free, n_free, codes, stats, order, features,
                              max_depth, dense_rows, n_threads)
    for t in range(n_trees):
        ni[t, COUNT] = tot[t, ip[COUNT_STAT]] if ip[COUNT_STAT] >= 0 else root_hi[t] - root_lo[t]
    n_nodes = n_trees
    roots = _searchable(np.arange(n_trees), ni, tot, fp, ip, max_depth)
    cat, n_cat = _evaluate(roots, ni, gains, tot, ltot, cat, n_cat, pool, Xc, order, stats, masks,
                           n_bins, is_cat, fp, ip, sampling, n_threads)
    for t in range(n_trees):  # roots that may not split: their histograms go back
        if gains[t] <= 0 and ni[t, HIST] >= 0:
            free[n_free] = ni[t, HIST]
            n_free += 1
            ni[t, HIST] = -1
    if max_leaves > 0:
        for t in range(n_trees):
            ni, gains, tot, ltot, cat, n_cat, n_nodes, n_free = _best_first(
                t, ni, gains, tot, ltot, cat, n_cat, n_nodes, next_id, pool, private, free,
                n_free, codes, Xc, stats, order, tmp, masks, features, n_bins, is_cat, fp, ip,
                sampling, max_depth, max_leaves, n_threads, dense_rows)
        return ni[:n_nodes], gains[:n_nodes], tot[:n_nodes], cat[:n_cat]
    batch = _positive(roots, gains)
    while len(batch):
        ni, gains, tot, ltot = _room(ni, gains, tot, ltot, n_nodes + 2 * len(batch))
        cat, n_cat, n_nodes, n_free, batch = _expand(
            batch, ni, gains, tot, ltot, cat, n_cat, n_nodes, next_id, pool, private, free, n_free,
            codes, Xc, stats, order, tmp, masks, features, n_bins, is_cat, fp, ip, sampling,
            max_depth, n_threads, dense_rows)
    return ni[:n_nodes], gains[:n_nodes], tot[:n_nodes], cat[:n_cat]


@numba.njit(cache=True)
def _tables(n_trees, n_stats):
    """Room for the node tables of trees grown apart: empty ones."""
    tables = List()
    gains = List()
    totals = List()
    categories = List()
    for _ in range(n_trees):
        tables.append(np.empty((0, N_FIELDS), np.int64))
        gains.append(np.empty(0))
        totals.append(np.empty((0, n_stats), np.int64))
        categories.append(np.empty((0, MAX_BINS), np.bool_))
    return tables, gains, totals, categories


@numba.njit(parallel=True, cache=True)
def _grow_apart(X, Xc, stats, order, tmp, root_lo, root_hi, masks, features, n_bins, is_cat, fp,
                ip, sampling, max_depth, max_leaves, memory):
    """A forest's trees grown each whole on one thread, threads taking the
    next tree as they finish one (``_grow`` of one tree: the same tree). ``X``:
    the codes alone (no histograms here; a pair of sparse codes would not
    pass into the parallel loop)."""
    n_trees = stats.shape[0]
    tables, gains, totals, categories = _tables(n_trees, stats.shape[2])
    for t in numba.prange(n_trees):  # one tree a chunk (``grow`` sets the chunk size)
        tables[t], gains[t], totals[t], categories[t] = _grow(
            (X, X), Xc, stats[t:t + 1], order[t:t + 1], tmp[t:t + 1], root_lo[t:t + 1],
            root_hi[t:t + 1], masks[t:t + 1], features, n_bins, is_cat, fp, ip,
            (sampling[0], sampling[1], sampling[2] + t), max_depth, max_leaves, 1, -1, memory, 0)
    return joined(tables, gains, totals, categories)


@numba.njit(parallel=True, cache=True)
def _tree_sums(order, stats, lo, hi, trees, tot):
    """tot[t] = the statistics of tree t's rows order[t, lo[t]:hi[t]] summed
    (exact: integers), for each t of ``trees``, trees in parallel; each sum
    into four accumulators in turn (no chain of additions into one place)."""
    n_stats = stats.shape[2]
    for q in numba.prange(len(trees)):
        t = trees[q]
        acc = np.zeros((4, n_stats), np.int64)
        for i in range(lo[t], hi[t]):
            r = order[t, i]
            for k in range(n_stats):
                acc[i & 3, k] += stats[t, r, k]
        for k in range(n_stats):
            tot[t, k] = acc[0, k] + acc[1, k] + acc[2, k] + acc[3, k]


@numba.njit(cache=True)
def _root_histograms(ni, tot, pool, private, free, n_free, codes, stats, order, features, max_depth,
                     dense_rows, n_threads):
    """The roots' statistics, and histograms of those searched dense: a root
    of ``dense_rows`` rows or more gets one (room allowing), and its
    statistics are then its histogram's over the bins of one feature (every
    row is in one of them); the others' are summed from their rows."""
    n_trees = stats.shape[0]
    built = np.empty(n_trees, np.int64)
    n = 0
    for t in range(n_trees):
        if dense_rows >= 0 and max_depth != 0 and ni[t, HI] - ni[t, LO] >= dense_rows:
            slot, n_free = take_slot(free, n_free)
            if slot >= 0:
                ni[t, HIST] = slot
                built[n] = t
                n += 1
    if n:
        work = 0
        for t in built[:n]:
            work += ni[t, HI] - ni[t, LO]
        b = built[:n]
        fill_either(codes, stats, order, _column(ni, b, TREE), _column(ni, b, HIST),
                    _column(ni, b, LO), _column(ni, b, HI), features, pool, work,
                    threads_for(work * n_code_features(codes[0], False), n_threads), private)
    f0 = features[0] if len(features) else 0
    for t in built[:n]:
        for k in range(stats.shape[2]):
            tot[t, k] = 0
        for b in range(MAX_BINS):
            for k in range(stats.shape[2]):
                tot[t, k] += pool[ni[t, HIST], f0, b, k]
    summed = _where(np.arange(n_trees), _column(ni, np.arange(n_trees), HIST) < 0)
    every = np.arange(n_trees)
    _tree_sums(order, stats, _column(ni, every, LO), _column(ni, every, HI), summed, tot)
    return n_free


@numba.njit(cache=True)
def _expand(batch, ni, gains, tot, ltot, cat, n_cat, n_nodes, next_id, pool, private, free,
            n_free, codes, Xc, stats, order, tmp, masks, features, n_bins, is_cat, fp, ip, sampling,
            max_depth, n_threads, dense_rows):
    """Split every node of ``batch``: children made, rows routed, histograms
    built, children searched. Returns the children with a positive gain."""
    work = 0
    for g in batch:
        work += ni[g, HI] - ni[g, LO]
    nt = threads_for(work * n_code_features(codes[0], False), n_threads)
    set_threads(nt)
    first = n_nodes
    n_nodes = _children(batch, ni, gains, tot, ltot, n_nodes, next_id, fp, ip, max_depth)
    _route_batch(batch, ni, cat, Xc, order, tmp, nt)
    _settle_counts(batch, ni, tot, cat, ip)
    n_free = node_histograms(batch, ni, tot, pool, private, free, n_free, codes, stats, order,
                             features, n_bins, is_cat, fp, ip, max_depth, dense_rows, nt)
    children = _searchable(np.arange(first, n_nodes), ni, tot, fp, ip, max_depth)
    cat, n_cat = _evaluate(children, ni, gains, tot, ltot, cat, n_cat, pool, Xc, order, stats,
                           masks, n_bins, is_cat, fp, ip, sampling, nt)
    return cat, n_cat, n_nodes, n_free, _positive(children, gains)


@numba.njit(cache=True)
def _best_first(t, ni, gains, tot, ltot, cat, n_cat, n_nodes, next_id, pool, private, free,
                n_free, codes, Xc, stats, order, tmp, masks, features, n_bins, is_cat, fp, ip,
                sampling, max_depth, max_leaves, n_threads, dense_rows):
    """Tree t, best-first: split the leaf with the largest gain (then the
    smallest id) until ``max_leaves`` leaves or no positive gain."""
    frontier = np.empty(2 * max_leaves + 2, np.int64)
    n_frontier = 0
    if gains[t] > 0:
        frontier[0] = t
        n_frontier = 1
    n_leaves = 1
    while n_frontier and n_leaves < max_leaves:
        k = 0
        for j in range(1, n_frontier):
            a, b = frontier[j], frontier[k]
            if gains[a] > gains[b] or (gains[a] == gains[b] and ni[a, ID] < ni[b, ID]):
                k = j
        best = frontier[k]
        frontier[k] = frontier[n_frontier - 1]
        n_frontier -= 1
        ni, gains, tot, ltot = _room(ni, gains, tot, ltot, n_nodes + 2)
        batch = np.array([best])
        cat, n_cat, n_nodes, n_free, children = _expand(
            batch, ni, gains, tot, ltot, cat, n_cat, n_nodes, next_id, pool, private, free, n_free,
            codes, Xc, stats, order, tmp, masks, features, n_bins, is_cat, fp, ip, sampling,
            max_depth, n_threads, dense_rows)
        n_leaves += 1
        for c in children:
            frontier[n_frontier] = c
            n_frontier += 1
    for j in range(n_frontier):  # leaves never split: their histograms go back
        g = frontier[j]
        if ni[g, HIST] >= 0:
            free[n_free] = ni[g, HIST]
            n_free += 1
            ni[g, HIST] = -1
    return ni, gains, tot, ltot, cat, n_cat, n_nodes, n_free


# ------------------------------------------------------------------ python
def dense_min_rows(X_binned) -> int:
    """Rows from which a node is searched from every feature's histograms: ``DENSE_MIN_ROWS``,
    for sparse codes as many as store ``SPARSE_DENSE_ENTRIES`` entries a bin."""
    if not is_sparse_codes(X_binned):
        return DENSE_MIN_ROWS
    per_row = max(len(X_binned.indices), 1) / max(len(X_binned.indptr) - 1, 1)
    bins = X_binned.n_features * (MAX_BINS + PAD_BINS)
    return max(DENSE_MIN_ROWS, int(SPARSE_DENSE_ENTRIES * bins / per_row))


def pool_slots(n_features, n_stats, n_trees, max_depth, max_leaves, n_rows, dense_rows):
    """Histograms held at once, within ``HISTOGRAM_BUDGET``: enough for two
    levels of the widest batch (depth-wise) or the frontier (best-first)."""
    per = n_features * (MAX_BINS + PAD_BINS) * n_stats * 8
    if dense_rows < 0:
        return 0
    widest = max(1, n_rows // max(dense_rows, 1))
    if max_depth is not None:
        widest = min(widest, 2 ** max_depth)
    need = n_trees * (2 * min(widest, max_leaves or widest) + 2)
    return int(max(0, min(need, HISTOGRAM_BUDGET // per)))


def grow(X_binned, X_columns, stats, partition, criterion, mapper, masks, features, growth,
         sampling=None, n_threads=None, memory=None, X_modes=None) -> Grown:
    """Grow a batch of trees on rows held here (see the module docstring).

    Parameters
    ----------
    X_binned, X_columns : ndarray (n_rows, n_features) and (n_features, n_rows), uint8
        The codes row-major and feature-major (``histogram.columns``).
    stats : ndarray (n_trees, n_rows, n_stats), int64
    partition : histogram.RowPartition
        Every tree's root range; on return, the rows of every node (ids as
        in the tables), its ``order`` rearranged in place.
    criterion : a criterion ``pack_criterion`` knows
    mapper : BinMapper
    masks : ndarray (n_trees, n_features), bool
        Features each tree may split on.
    features : ndarray of int
        Features any tree may use (the histograms').
    growth : trees.params.GrowthParams
        Without monotone or interaction constraints.
    sampling : (max_features, seed, first_tree) or None
        A forest's per-node feature subsets (``sampling.NodeFeatureSampler``).
    n_threads : int, optional
        Threads at most (numba's setting by default).
    memory : callable, optional
        ``memory(shape)`` -> an int64 array of that shape, for the nodes'
        histograms and the threads' buffers: memory kept from round to round
        (``engine.buffers``) spares the operating system supplying fresh pages
        every round. By default a new array.
    X_modes : mode_codes.ModeCodes, optional
        ``X_binned`` without each feature's most frequent code: histograms of
        nodes for which they are less work (``mode_codes.by_modes``) are built
        from them, the same histograms to the bit.
    """
    fp, ip = pack_criterion(criterion)
    n_trees, n_rows, n_stats = stats.shape
    n_features = X_binned.shape[1]
    features = kernel_features(np.asarray(features, np.int64), n_features)
    dense_rows = -1 if sampling is not None else dense_min_rows(X_binned)
    max_depth = -1 if growth.max_depth is None else int(growth.max_depth)
    max_leaves = -1 if growth.max_leaf_nodes is None else int(growth.max_leaf_nodes)
    launch_threads()
    saved = threads_now()
    n_threads = saved if n_threads is None else max(1, min(int(n_threads), saved))
    n_slots = pool_slots(n_features, n_stats, n_trees, growth.max_depth, growth.max_leaf_nodes,
                         n_rows, dense_rows)
    shape = (n_slots + 2 * n_threads, n_features, MAX_BINS + PAD_BINS, n_stats)
    pool = np.empty(shape, np.int64) if memory is None else memory(shape)
    codes = (X_binned, X_binned if X_modes is None or sampling is not None else X_modes)
    args = (codes, X_columns, stats, partition.order, partition.scratch,
            partition.start[:, 0].copy(), partition.stop[:, 0].copy(), masks, features,
            mapper.n_bins_non_missing_.astype(np.int64), mapper.is_categorical_,
            fp, ip, (-1, 0, 0) if sampling is None else tuple(int(v) for v in sampling),
            max_depth, max_leaves)
    try:
        if sampling is not None and 1 < n_threads <= n_trees:
            use_threads(n_threads)
            chunk = numba.set_parallel_chunksize(1)  # trees handed out one by one
            try:
                ni, gains, tot, cat = _grow_apart(X_binned, *args[1:], pool[:2])
            finally:
                numba.set_parallel_chunksize(chunk)
        else:
            ni, gains, tot, cat = _grow(*args, n_threads, dense_rows, pool, n_slots)
    finally:
        use_threads(saved)
    ni, gains, tot, bounds, start, stop, split_rows, directions = by_tree(ni, gains, tot, cat,
                                                                            n_trees)
    partition.start, partition.stop = start, stop
    split = ni[split_rows]
    splits = LevelSplits(split[:, TREE], split[:, ID], split[:, FEATURE], directions,
                         split[:, LEFT], split[:, RIGHT], np.ones(len(split), bool),
                         np.full(len(split), -1, np.int64), whole_trees=True)
    return Grown(ni, gains, tot, cat, bounds, splits)
