"""Trees added to the rows a round's levels routed: each row continues from
the node the levels left it in (mostly a leaf, or a split of two leaves)
instead of walking from the root, to the bit what ``tree.predict_binned``
adds.

The rows of a node are in ascending order (``histogram.RowPartition``), so
the work is cut by row ids, not by positions in the partition: a thread adds
to the rows of its own range of ids only, found in each node by binary
search, and no two threads write the same cache line of the margins (cut by
positions, every thread wrote everywhere: 2 threads took as long as one).
"""

from __future__ import annotations

import numba
import numpy as np

from .common import MISSING_BIN
from .histogram import ROUTE_PREFETCH_AHEAD
from .intrinsics import prefetch
from .sparse_codes import at, column, is_sparse_codes, prefetch_code, rows_view
from .threads import threads_now
from .tree import COPY_PARALLEL_MIN, _step, _walk_table

ROUTED_CHUNK = 1 << 16
"""Row ids per parallel work item of ``add_routed``, at least (``_row_chunk``)."""


def routed_places(nodes, roots, split_history):
    """Where, in the finished trees of a round, the rows its levels routed are.

    The round's levels (``histogram.LevelSplits``, in the grower's node ids)
    moved the rows of each split node into its children. A grower node
    stands for a packed node of the finished trees: the root for the root;
    the children of a split the tree took for that split's children; the
    children of an expansion the tree did not take (best-first speculation)
    for their parent, which the tree keeps as a leaf. A split the levels did
    not route (its children's counts were known without it) leaves its rows
    in a node the tree splits further.

    Parameters
    ----------
    nodes, roots : from ``pack_trees`` (the round's trees, tree t grown as
        the levels' tree t)
    split_history : sequence of LevelSplits

    Returns
    -------
    None where a split the trees took is not the levels' (other trees), else:
    held : list (per tree) of ndarray, int64, or None
        Grower ids of the nodes that hold rows after the last level. None for
        whole trees grown in one call (``LevelSplits.whole_trees``): every
        leaf holds its rows, and the grower's ids are the packed trees' own.
    place : list (per tree) of ndarray, int64, or None (with ``held``)
        The packed node each of those nodes stands for; its rows continue
        from there to their leaf (``add_routed``).
    """
    if len(split_history) == 1 and split_history[0].whole_trees:
        return None, None  # each leaf holds its rows, at its own id
    sizes = np.diff(np.append(np.asarray(roots, np.int64), len(nodes)))
    same = _same_ids(nodes, roots, sizes, split_history)
    if same is not None:
        return same
    places = [{0: int(r)} for r in roots]
    held = [{0} for _ in roots]
    for splits in split_history:
        for s in range(len(splits.tree)):
            t, parent = int(splits.tree[s]), int(splits.node[s])
            left, right = int(splits.left[s]), int(splits.right[s])
            k = places[t][parent]
            taken = not nodes[k]["is_leaf"]
            if taken and nodes[k]["feature"] != splits.feature[s]:
                return None  # not the trees these levels grew
            places[t][left] = int(nodes[k]["left"]) if taken else k
            places[t][right] = int(nodes[k]["right"]) if taken else k
            held[t].discard(parent)
            held[t].update((left, right))
    ids = [np.array(sorted(h), np.int64) for h in held]
    return ids, [np.array([places[t][n] for n in ids[t]], np.int64) for t in range(len(roots))]


def _same_ids(nodes, roots, sizes, split_history):
    """``routed_places`` when every routed split is the trees' own, numbered
    as in the trees (depth-wise growth): each node holding rows stands for
    itself. None otherwise."""
    if not split_history:
        return None
    tree, node, left, right, feature = (
        np.concatenate([getattr(s, name) for s in split_history]).astype(np.int64)
        for name in ("tree", "node", "left", "right", "feature"))
    roots = np.asarray(roots, np.int64)
    if not ((node < sizes[tree]) & (left < sizes[tree]) & (right < sizes[tree])).all():
        return None
    k = roots[tree] + node
    if not ((nodes["is_leaf"][k] == 0).all() and (nodes["feature"][k] == feature).all()
            and (nodes["left"][k] == roots[tree] + left).all()
            and (nodes["right"][k] == roots[tree] + right).all()):
        return None
    holds = np.zeros(len(nodes), bool)  # by packed node: holds rows after the levels
    holds[roots] = True
    holds[roots[tree] + left] = True
    holds[roots[tree] + right] = True
    holds[k] = False
    held = [np.flatnonzero(holds[r: r + n]) for r, n in zip(roots, sizes)]
    return held, [r + ids for r, ids in zip(roots, held)]


@numba.njit(parallel=True, cache=True)
def _add_routed(X_columns, nodes, roots, bitsets, tree_output, order, range_start, range_stop,
                range_place, n_rows, out, probe, chunk):
    """``add_routed``'s kernel: per tree, the rows of range r (positions
    range_start[t, r]:range_stop[t, r] of ``order``) continue from packed
    node range_place[t, r] to their leaf, rows ``chunk`` ids at a time on
    the threads. A range whose node is a leaf adds its value to every row;
    a split of two leaves adds their values by code (``_step`` of each
    code, a table made once per range, every tree's at once); a deeper
    split walks each row."""
    table, thresholds, _ = _walk_table(nodes, roots)
    cat_index = nodes["cat_index"].astype(np.int64)
    has_categorical = (nodes["is_categorical"] != 0).any()
    X = rows_view(X_columns)
    n_trees, n_ranges = range_start.shape
    kind = np.zeros((n_trees, n_ranges), np.int64)
    by_code = np.zeros((n_trees, n_ranges, len(probe)))
    for tr in numba.prange(n_trees * n_ranges):  # every tree's tables in one parallel region
        t, r = tr // n_ranges, tr % n_ranges  # kind 0: a leaf, 1: a split of two leaves, 2: deeper
        k0 = range_place[t, r]
        left, right = table[k0, 2], table[k0, 3]
        kind[t, r] = 0 if left == k0 else 1 if table[left, 2] == left and table[right, 2] == right else 2
        for code in range(len(probe) if kind[t, r] == 1 else 0):
            leaf = _step(probe, code, False, k0, table, thresholds, bitsets, cat_index,
                         has_categorical)
            by_code[t, r, code] = nodes[leaf]["value"]
    for t in range(n_trees):
        margins = out[tree_output[t]]
        for c in numba.prange((n_rows + chunk - 1) // chunk):
            for r in range(n_ranges):
                rows = order[t, min(range_start[t, r], range_stop[t, r]):range_stop[t, r]]
                lo = np.searchsorted(rows, c * chunk)
                hi = np.searchsorted(rows, min(n_rows, (c + 1) * chunk))
                k0 = range_place[t, r]
                if kind[t, r] == 0:
                    _add_value(rows, lo, hi, nodes[k0]["value"], margins)
                    continue
                codes = column(X_columns, table[k0, 0])
                for j in range(lo, hi):
                    if j + ROUTE_PREFETCH_AHEAD < hi:
                        prefetch_code(codes, rows[j + ROUTE_PREFETCH_AHEAD])
                        prefetch(margins, rows[j + ROUTE_PREFETCH_AHEAD])
                    i, k = rows[j], k0
                    if kind[t, r] == 1:
                        margins[i] += by_code[t, r, at(codes, i)]
                        continue
                    while table[k, 2] != k:
                        k = _step(X, i, False, k, table, thresholds, bitsets, cat_index,
                                  has_categorical)
                    margins[i] += nodes[k]["value"]


@numba.njit(parallel=True, cache=True)
def _add_leaves(nodes, roots, tree_output, order, start, stop, n_rows, out, chunk):
    """``add_routed`` for whole trees grown here (``held`` None): the rows of
    tree t's leaf k, order[t, start[t, k]:stop[t, k]], get its value, tree by
    tree (``predict_binned``'s order); ``chunk`` > 0: rows ``chunk`` ids at a
    time on the threads. False, adding nothing, unless every tree's root
    holds all ``n_rows`` rows."""
    for t in range(len(roots)):
        if stop[t, 0] - start[t, 0] != n_rows:
            return False
    n_items = (n_rows + chunk - 1) // chunk if chunk > 0 else 0
    for t in range(len(roots)):
        o, r = tree_output[t], roots[t]
        size = (roots[t + 1] if t + 1 < len(roots) else len(nodes)) - r
        for c in numba.prange(n_items):
            for k in range(size):
                if nodes[r + k]["is_leaf"]:
                    rows = order[t, start[t, k]:stop[t, k]]
                    _add_value(rows, np.searchsorted(rows, c * chunk),
                               np.searchsorted(rows, min(n_rows, (c + 1) * chunk)),
                               nodes[r + k]["value"], out[o])
        for k in range(size if chunk <= 0 else 0):
            if nodes[r + k]["is_leaf"]:
                _add_value(order[t], start[t, k], stop[t, k], nodes[r + k]["value"], out[o])
    return True


@numba.njit(cache=True, inline="always")
def _add_value(rows, lo, hi, value, out):
    """out[rows[lo:hi]] += value, each row's margin fetched ahead."""
    for j in range(lo, hi):
        if j + ROUTE_PREFETCH_AHEAD < hi:
            prefetch(out, rows[j + ROUTE_PREFETCH_AHEAD])
        out[rows[j]] += value


def _row_chunk(n_rows: int) -> int:
    """Row ids per work item of ``add_routed``: ``ROUTED_CHUNK`` at least,
    and about four items a thread."""
    return max(ROUTED_CHUNK, -(-n_rows // (4 * threads_now())))


@numba.njit(cache=True)
def _ranges(start, stop, held, place, bounds):
    """Per tree t, the non-empty row ranges of its held nodes
    ``held[bounds[t]:bounds[t + 1]]`` sorted by start (they tile the tree's
    rows), with their packed places; unused entries start and stop at the
    largest int64."""
    n_trees = len(bounds) - 1
    width = 0
    for t in range(n_trees):
        width = max(width, bounds[t + 1] - bounds[t])
    big = np.iinfo(np.int64).max
    range_start = np.full((n_trees, width), big, np.int64)
    range_stop = np.full((n_trees, width), big, np.int64)
    range_place = np.zeros((n_trees, width), np.int64)
    for t in range(n_trees):
        nodes = held[bounds[t]:bounds[t + 1]]
        starts = np.empty(len(nodes), np.int64)
        for j in range(len(nodes)):  # an empty range sorts last and is dropped
            empty = stop[t, nodes[j]] <= start[t, nodes[j]]
            starts[j] = big if empty else start[t, nodes[j]]
        by_start = np.argsort(starts, kind="mergesort")
        for m in range(len(by_start)):
            j = by_start[m]
            if starts[j] == big:
                break
            range_start[t, m], range_stop[t, m] = starts[j], stop[t, nodes[j]]
            range_place[t, m] = place[bounds[t] + j]
    return range_start, range_stop, range_place


def add_routed(X_columns, nodes, roots, bitsets, tree_output, partition, held, place,
               out) -> bool:
    """``predict_binned`` for rows a round's levels routed: each row continues
    from the packed node its node stands for (``routed_places``), most often a
    leaf, instead of walking from the root.

    The values added, and their order per output and row (tree by tree), are
    ``predict_binned``'s. Returns False, adding nothing, when some row is in
    no tree's partition (rows left out of the round's sample, or of zero
    weight): those need the walk.

    Parameters
    ----------
    X_columns : ndarray of shape (n_features, n_rows), uint8
        The binned rows feature-major (``histogram.columns``).
    partition : histogram.RowPartition
        The rows of each grower node after the round's last level.
    held, place : from ``routed_places``
    """
    n_trees = len(roots)
    n_rows, n_features = X_columns.shape if is_sparse_codes(X_columns) else X_columns.shape[::-1]
    if partition.order.shape[0] != n_trees:
        return False
    if held is None:
        return _add_leaves(nodes, np.asarray(roots, np.int64), np.asarray(tree_output, np.int64),
                           partition.order, partition.start, partition.stop, n_rows, out,
                           _row_chunk(n_rows) if out.size >= COPY_PARALLEL_MIN else 0)
    lo, hi = partition.start[:, 0].copy(), partition.stop[:, 0].copy()
    if ((hi - lo) != n_rows).any():
        return False
    bounds = np.zeros(n_trees + 1, np.int64)
    np.cumsum([len(h) for h in held], out=bounds[1:])
    range_start, range_stop, range_place = _ranges(
        partition.start, partition.stop, np.concatenate(held).astype(np.int64, copy=False),
        np.concatenate(place).astype(np.int64, copy=False), bounds)
    probe = np.repeat(np.arange(MISSING_BIN + 1, dtype=np.uint8)[:, None], n_features, 1)
    _add_routed(X_columns, nodes, roots, bitsets, np.asarray(tree_output, np.int64),
                partition.order, range_start, range_stop, range_place, n_rows, out, probe,
                _row_chunk(n_rows))
    return True
