"""Histograms of per-row statistics over rows partitioned by node.

A histogram ``hist[slot, feature, bin, stat]`` sums the fixed-point statistics
of the rows that sit in the node assigned to ``slot`` and whose ``feature``
falls in ``bin``. The binned matrix is row-major (one row's codes are
contiguous), and each tree keeps its rows *partitioned by node*
(``RowPartition``, as XGBoost's row partitioner and scikit-learn's
``sample_indices``): the rows of a node are one contiguous range of an index
array. A level then touches only the rows of the nodes it splits, and one pass
over each such range both routes the rows to the children (a stable partition,
so ranges stay in ascending row order and memory reads stay nearly sequential)
and adds the rows of the child being built to its histogram; the other child's
histogram is the parent's minus this one (histogram subtraction).

Work is cut into chunks of at most ``CHUNK_ROWS`` rows, in node order, and
the chunks into one block per thread, each a contiguous run of about the same
number of rows. A block writes straight into the histograms of the nodes it
alone touches; only a node whose chunks straddle blocks (at most the first and
the last of each block) is summed in per-block buffers and added up afterwards
(XGBoost's per-thread buffers, kept to the nodes that need them: at 16 threads
and 32 nodes a level fills 2 x 16 node buffers, not 16 x 32). Each block zeroes
what it writes, so no pass over the output comes first. Statistics are int64,
so the sums are exact and do not depend on how rows were cut into chunks,
blocks or partitions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from numba.extending import overload

from .common import MAX_BINS, STAT_DTYPE
from .compact_histograms import is_compact
from .compact_histograms import siblings as compact_siblings
from .intrinsics import add_2, add_4, add_8, add_pair, prefetch
from .mode_codes import add_mode_rows, by_modes, finish_modes, is_mode_type
from .sparse_codes import (
    add_sparse_row,
    at,
    column,
    finish_missing,
    is_sparse_codes,
    is_sparse_type,
    prefetch_code,
)
from .threads import threads_now

CHUNK_ROWS = 16384
"""Rows per unit of work: small enough to balance threads, large enough that
the per-chunk bookkeeping does not show."""

CHUNKS_PER_BLOCK = 8
MIN_CHUNK_ROWS = 1024
"""Chunks are shortened (not below ``MIN_CHUNK_ROWS``) until each block (thread)
gets ``CHUNKS_PER_BLOCK`` of them: a block's share is then even to an eighth."""

PAD_BINS = 4
"""Bins of padding after each feature's 256 in histograms a kernel keeps to
itself (``local_grower``'s): unpadded, the same bin of every feature lies a
multiple of 4 KiB apart, and a row's additions to features that share a
common code (zero-inflated, low-cardinality columns) then look to the
processor as if each might read what the one before wrote (4K aliasing),
which made such rows several times slower to add."""

PREFETCH_AHEAD = 16
"""Rows between asking for a row's codes and statistics and reading them."""

ROUTE_PREFETCH_AHEAD = 64
"""The same for routing, whose rows cost less each (one code, no histogram)."""


@dataclass
class RowPartition:
    """Rows of each tree grouped by node.

    Attributes
    ----------
    order : ndarray of shape (n_trees, n_rows), int32
        Row indices; the rows of node ``k`` of tree ``t`` are
        ``order[t, start[t, k]:stop[t, k]]``, in ascending order.
    start, stop : ndarray of shape (n_trees, n_nodes), int64
        Range of each node (empty for nodes not made yet).
    scratch : ndarray like ``order``
        Where routing writes before the rows go back into ``order``.
    """

    order: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    scratch: np.ndarray

    @classmethod
    def from_positions(cls, positions: np.ndarray, buffers=None) -> RowPartition:
        """Every tree's root holds its rows with ``positions >= 0`` (in-bag rows).

        ``buffers`` (a shard's ``Buffers``) lends the index arrays, which are
        then overwritten by the next partition made from the same buffers.
        """
        n_trees, n_rows = positions.shape
        if buffers is None:
            order, scratch = (np.empty((n_trees, n_rows), np.int32) for _ in range(2))
        else:
            order = buffers.get("partition-order", (n_trees, n_rows), np.int32)
            scratch = buffers.get("partition-scratch", (n_trees, n_rows), np.int32)
        start = np.zeros((n_trees, 1), np.int64)
        stop = _in_bag_rows(positions, order).reshape(n_trees, 1)
        return cls(order, start, stop, scratch)

    def copy(self) -> RowPartition:
        return RowPartition(self.order.copy(), self.start.copy(), self.stop.copy(),
                            np.empty_like(self.scratch))

    def ensure_nodes(self, n_nodes: int) -> None:
        """Room for node ids below ``n_nodes``."""
        have = self.start.shape[1]
        if n_nodes > have:  # doubled: a tree's levels grow it a few times only
            size = max(n_nodes, 2 * have)
            start, stop = (np.zeros((self.start.shape[0], size), np.int64) for _ in range(2))
            start[:, :have], stop[:, :have] = self.start, self.stop
            self.start, self.stop = start, stop

    def node_rows(self, tree: int, node: int) -> np.ndarray:
        return self.order[tree, self.start[tree, node]: self.stop[tree, node]]


@numba.njit(parallel=True, cache=True)
def _in_bag_rows(positions, out):
    """Per tree t, write the rows with positions[t] >= 0 into out[t], ascending;
    return how many, shape (n_trees,). Chunks of rows are counted, then
    written at their running offsets, both in parallel."""
    n_trees, n_rows = positions.shape
    n_chunks = (n_rows + CHUNK_ROWS - 1) // CHUNK_ROWS
    at = np.zeros((n_trees, n_chunks + 1), np.int64)
    for q in numba.prange(n_trees * n_chunks):
        t, c = q // n_chunks, q % n_chunks
        k = 0
        for i in range(c * CHUNK_ROWS, min(n_rows, (c + 1) * CHUNK_ROWS)):
            k += positions[t, i] >= 0
        at[t, c + 1] = k
    for t in range(n_trees):
        for c in range(n_chunks):
            at[t, c + 1] += at[t, c]
    for q in numba.prange(n_trees * n_chunks):
        t, c = q // n_chunks, q % n_chunks
        k, lo, hi = at[t, c], c * CHUNK_ROWS, min(n_rows, (c + 1) * CHUNK_ROWS)
        if at[t, c + 1] - k == hi - lo:  # every row in the bag (the common case): no test
            for i in range(lo, hi):
                out[t, k + i - lo] = i
            continue
        for i in range(lo, hi):
            if positions[t, i] >= 0:
                out[t, k] = i
                k += 1
    return at[:, n_chunks].copy()


@dataclass
class LevelSplits:
    """The splits of one wave, one entry per split node whose rows move.

    Attributes
    ----------
    tree, node, feature, left, right : ndarray of shape (n_splits,), int64
        Tree, split node, split feature and child node ids.
    goes_left : ndarray of shape (n_splits, 256), bool
        Direction of each bin, the missing bin included (learned default).
    build_left : ndarray of shape (n_splits,), bool
        Which child is histogrammed (the smaller one).
    slot : ndarray of shape (n_splits,), int64
        Output slot of the histogrammed child; -1 for a split whose children
        are never split or built (its rows move all the same: the round's
        trees are added to them from there, ``routed.add_routed``).
    whole_trees : bool
        The splits are every split of their trees, numbered as in the trees
        (``local_grower``): each leaf of a tree holds its rows.
    """

    tree: np.ndarray
    node: np.ndarray
    feature: np.ndarray
    goes_left: np.ndarray
    left: np.ndarray
    right: np.ndarray
    build_left: np.ndarray
    slot: np.ndarray
    whole_trees: bool = False

    @property
    def n_nodes(self) -> int:
        """Node ids this wave creates are below this."""
        return int(max(self.left.max(initial=0), self.right.max(initial=0))) + 1


# ------------------------------------------------------------------ kernels
@numba.njit(cache=True, inline="always")
def _add_row(X, r, features, st, flat_st, hs, stride):
    """hs[j, X[r, j]] += st[r] for every feature j.

    ``hs`` is one node's histogram flattened, (feature, bin, stat) in C order,
    ``stride`` bins per feature (256, or more in padded memory: ``PAD_BINS``).
    The common cases are unrolled: two or three statistics, and every feature
    (an empty ``features``), which spares the loop an index load per feature;
    more statistics (classes, vector leaves' outputs) are added in runs of
    8, 4, 2 and 1 (``_add_stats``).
    """
    n_stats = st.shape[1]
    if n_stats == 2:  # (g, h): one vector add per feature
        g, h = st[r, 0], st[r, 1]
        if len(features) == 0:
            for j in range(X.shape[1]):
                add_pair(hs, (j * stride + np.int64(X[r, j])) * 2, g, h)
        else:
            for k in range(len(features)):
                add_pair(hs, (features[k] * stride + np.int64(X[r, features[k]])) * 2, g, h)
    elif n_stats == 3:
        g, h, c = st[r, 0], st[r, 1], st[r, 2]
        if len(features) == 0:
            for j in range(X.shape[1]):
                i = (j * stride + np.int64(X[r, j])) * 3
                add_pair(hs, i, g, h)
                hs[i + 2] += c
        else:
            for k in range(len(features)):
                i = (features[k] * stride + np.int64(X[r, features[k]])) * 3
                add_pair(hs, i, g, h)
                hs[i + 2] += c
    else:
        n = X.shape[1] if len(features) == 0 else len(features)
        at = r * n_stats
        for k in range(n):
            j = k if len(features) == 0 else features[k]
            _add_stats(hs, (j * stride + np.int64(X[r, j])) * n_stats, flat_st, at, n_stats)


@numba.njit(cache=True, inline="always")
def _add_stats(hs, i, flat, at, n_stats):
    """hs[i:i + n_stats] += flat[at:at + n_stats], in runs of 8, 4, 2 and 1."""
    s = 0
    while s + 8 <= n_stats:
        add_8(hs, i + s, flat, at + s)
        s += 8
    if s + 4 <= n_stats:
        add_4(hs, i + s, flat, at + s)
        s += 4
    if s + 2 <= n_stats:
        add_2(hs, i + s, flat, at + s)
        s += 2
    if s < n_stats:
        hs[i + s] += flat[at + s]


@numba.njit(cache=True)
def _plan(owner_lo, owner_hi, n_blocks):
    """Cut ranges [lo[i], hi[i]) into chunks; give each block a contiguous run
    of chunks with about the same number of rows.

    Chunks are ``CHUNK_ROWS`` long, or shorter when that would leave fewer
    than ``CHUNKS_PER_BLOCK`` per block (down to ``MIN_CHUNK_ROWS``): a block
    ends at a chunk's end, so many threads on few rows need finer chunks to
    get even shares.

    Returns (chunk_owner, chunk_lo, chunk_hi, block_start).
    """
    total = 0
    for i in range(len(owner_lo)):
        total += owner_hi[i] - owner_lo[i]
    size = max(MIN_CHUNK_ROWS, min(CHUNK_ROWS, total // (n_blocks * CHUNKS_PER_BLOCK)))
    n_chunks = 0
    for i in range(len(owner_lo)):
        n_chunks += (owner_hi[i] - owner_lo[i] + size - 1) // size
    owner = np.empty(n_chunks, np.int64)
    clo = np.empty(n_chunks, np.int64)
    chi = np.empty(n_chunks, np.int64)
    c = 0
    for i in range(len(owner_lo)):
        a = owner_lo[i]
        while a < owner_hi[i]:
            owner[c], clo[c], chi[c] = i, a, min(a + size, owner_hi[i])
            a = chi[c]
            c += 1
    block_start = np.zeros(n_blocks + 1, np.int64)
    done, b = 0, 1
    for c in range(n_chunks):
        done += chi[c] - clo[c]
        while b < n_blocks and done * n_blocks >= total * b:
            block_start[b] = c + 1
            b += 1
    block_start[b:] = n_chunks
    return owner, clo, chi, block_start


@numba.njit(cache=True)
def _sharing(owner, block_start, n_owners):
    """Which owners (nodes) more than one block writes, and where each block's go.

    Returns
    -------
    shared : ndarray (n_owners,), bool
        True for an owner whose chunks straddle blocks, or that has none (its
        histogram is then made by ``_reduce_shared``, zero or a sum of buffers).
    first_block, last_block : ndarray (n_owners,), int64
        The blocks holding the owner's first and last chunk (-1: no chunk).
    """
    first_block = np.full(n_owners, -1, np.int64)
    last_block = np.full(n_owners, -1, np.int64)
    for b in range(len(block_start) - 1):
        for c in range(block_start[b], block_start[b + 1]):
            if first_block[owner[c]] < 0:
                first_block[owner[c]] = b
            last_block[owner[c]] = b
    shared = (first_block < 0) | (first_block != last_block)
    return shared, first_block, last_block


@numba.njit(cache=True, inline="always")
def _zero(a):
    for i in range(len(a)):
        a[i] = 0


@numba.njit(cache=True, inline="always")
def _open_block(blk, block_start, owner, shared, private, out, owner_slot, zero):
    """Block blk's first owner (-1: no chunk), the block's buffers of its shared
    owners zeroed (and, with ``zero``, its other owners' histograms)."""
    c0, c1 = block_start[blk], block_start[blk + 1]
    if c0 == c1:
        return -1
    first, last = owner[c0], owner[c1 - 1]
    for o in range(first, last + 1):
        if shared[o]:
            _zero(private[blk, 0 if o == first else 1].reshape(-1))
        elif zero:
            _zero(out[owner_slot[o]].reshape(-1))
    return first


@numba.njit(cache=True, inline="always")
def _owner_histogram(o, first, blk, shared, private, out, owner_slot):
    """Where owner o's sums go in block blk, flattened: its buffer when shared."""
    if shared[o]:
        return private[blk, 0 if o == first else 1].reshape(-1)
    return out[owner_slot[o]].reshape(-1)


@numba.njit(parallel=True, cache=True)
def _accumulate(X, stats, order, owner_tree, owner_slot, owner, clo, chi, block_start, features,
                out, private, shared, zero):
    """out[slot] += the statistics of every row of each chunk; a shared
    owner's sums go to its block's buffer ``private[block, 0]`` (the block's
    first owner) or ``private[block, 1]`` (its last) instead. With ``zero``
    every histogram a block writes starts from zero. Dense codes or sparse
    codes (``sparse_codes.SparseCodes``): ``add_chunk`` is chosen when compiled.
    """
    stride = out.shape[2]
    for blk in numba.prange(len(block_start) - 1):
        first = _open_block(blk, block_start, owner, shared, private, out, owner_slot, zero)
        if first < 0:
            continue
        for c in range(block_start[blk], block_start[blk + 1]):
            o = owner[c]
            hs = _owner_histogram(o, first, blk, shared, private, out, owner_slot)
            add_chunk(X, stats[owner_tree[o]], order[owner_tree[o]], clo[c], chi[c], features,
                      hs, stride)


@numba.njit(cache=True, inline="always")
def _add_dense_chunk(X, st, rows, lo, hi, features, hs, stride):
    """hs += the statistics of rows[lo:hi] (dense codes). Rows are read
    ``PREFETCH_AHEAD`` iterations after asking for them, except in chunks of
    consecutive rows, which stream."""
    n_features, n_stats = X.shape[1], st.shape[1]
    flat_X, flat_st = X.reshape(-1), st.reshape(-1)
    if rows[hi - 1] - rows[lo] == hi - 1 - lo:  # consecutive rows (a root): stream them
        for r in range(rows[lo], rows[hi - 1] + 1):
            _add_row(X, r, features, st, flat_st, hs, stride)
        return
    for k in range(lo, hi):
        if k + PREFETCH_AHEAD < hi:
            ahead = rows[k + PREFETCH_AHEAD]
            prefetch(flat_X, ahead * n_features)
            prefetch(flat_X, ahead * n_features + n_features - 1)
            prefetch(flat_st, ahead * n_stats)
        _add_row(X, rows[k], features, st, flat_st, hs, stride)


@numba.njit(cache=True, inline="always")
def _add_sparse_chunk(X, st, rows, lo, hi, features, hs, stride):
    """hs += the statistics of rows[lo:hi] (sparse codes: ``add_sparse_row``)."""
    for k in range(lo, hi):
        add_sparse_row(X, rows[k], features, st, hs, stride)


def add_chunk(X, st, rows, lo, hi, features, hs, stride):
    """``_add_dense_chunk``, ``_add_sparse_chunk`` or ``_add_mode_chunk``, by the codes' type."""


@numba.njit(cache=True, inline="always")
def _add_mode_chunk(X, st, rows, lo, hi, features, hs, stride):
    """hs += the statistics of rows[lo:hi]' stored entries (``mode_codes.ModeCodes``)."""
    add_mode_rows(X, st, rows, lo, hi, features, hs, stride)


@overload(add_chunk)
def _add_chunk_of(X, st, rows, lo, hi, features, hs, stride):
    kernel = (_add_mode_chunk if is_mode_type(X) else
              _add_sparse_chunk if is_sparse_type(X) else _add_dense_chunk)

    def impl(X, st, rows, lo, hi, features, hs, stride):
        kernel(X, st, rows, lo, hi, features, hs, stride)
    return impl


@numba.njit(parallel=True, cache=True)
def _reduce_shared(out, private, owner, owner_slot, block_start, shared, first_block, last_block,
                   zero):
    """out[slot] (+)= the block buffers of every shared owner, one (owner,
    feature) pair per work item; an owner with no chunk gets zeros."""
    n_features = out.shape[1]
    todo = np.flatnonzero(shared)
    for q in numba.prange(len(todo) * n_features):
        o, f = todo[q // n_features], q % n_features
        dst = out[owner_slot[o], f].reshape(-1)  # flat loops: vectorized
        if zero:
            _zero(dst)
        for b in range(max(first_block[o], 0), last_block[o] + 1):
            if block_start[b] == block_start[b + 1]:
                continue  # an empty block wrote nothing
            src = private[b, 0 if owner[block_start[b]] == o else 1, f].reshape(-1)
            for i in range(len(dst)):
                dst[i] += src[i]


@numba.njit(parallel=True, cache=True)
def _route(X_columns, order, tmp, owner, clo, chi, block_start, tree, feature, goes_left, n_left):
    """Stable partition of each chunk into tmp: left rows from the chunk's
    start up, right rows from its end down (branch-free: each row is written
    to both ends and the counts decide which write stays).

    Reads the split feature's codes from the feature-major copy: a node's
    rows are sparse, and a cache line of one feature's codes serves many of
    them where one of the row-major matrix serves one row.
    """
    for blk in numba.prange(len(block_start) - 1):
        for c in range(block_start[blk], block_start[blk + 1]):
            s = owner[c]
            n_left[c] = _split_chunk(column(X_columns, feature[s]), order[tree[s]],
                                     tmp[tree[s]], goes_left[s], clo[c], chi[c])


@numba.njit(cache=True, inline="always")
def _split_chunk(codes, rows, buf, gl, lo, hi):
    """``_route``'s partition of rows[lo:hi] into buf[lo:hi]; returns the left rows."""
    nl = 0
    nr = 0
    for k in range(lo, hi):
        if k + ROUTE_PREFETCH_AHEAD < hi:
            prefetch_code(codes, rows[k + ROUTE_PREFETCH_AHEAD])
        r = rows[k]
        left = np.int64(gl[at(codes, r)])
        buf[lo + nl] = r
        buf[hi - 1 - nr] = r
        nl += left
        nr += 1 - left
    return nl


@numba.njit(cache=True)
def _destinations(owner, clo, chi, n_left, lo, n_owners):
    """Where each chunk's left and right rows go: a node's left parts, in
    chunk order, from its start; then its right parts. Returns (left_at,
    right_at, the left child's rows per owner)."""
    left_at = np.empty(len(owner), np.int64)
    right_at = np.empty(len(owner), np.int64)
    n_left_of = np.zeros(n_owners, np.int64)
    for c in range(len(owner)):
        n_left_of[owner[c]] += n_left[c]
    at = lo.copy()
    right = lo + n_left_of
    for c in range(len(owner)):
        o = owner[c]
        left_at[c] = at[o]
        at[o] += n_left[c]
        right_at[c] = right[o]
        right[o] += chi[c] - clo[c] - n_left[c]
    return left_at, right_at, n_left_of


@numba.njit(parallel=True, cache=True)
def _assemble(order, tmp, tree, owner, clo, chi, n_left, left_at, right_at):
    """Write the chunks back in parallel: each chunk's left rows at
    ``left_at``, its right rows (stored from its end down) at ``right_at``."""
    for c in numba.prange(len(owner)):
        t = tree[owner[c]]
        _put_back(order[t], tmp[t], clo[c], chi[c], n_left[c], left_at[c], right_at[c])


@numba.njit(cache=True, inline="always")
def _put_back(rows, buf, lo, hi, n_left, left_at, right_at):
    """A chunk's left rows (buf[lo:lo + n_left]) to rows from ``left_at``, its
    right rows (stored from ``hi`` down) to rows from ``right_at``."""
    k = left_at
    for i in range(lo, lo + n_left):
        rows[k] = buf[i]
        k += 1
    k = right_at
    for i in range(hi - 1, lo + n_left - 1, -1):
        rows[k] = buf[i]
        k += 1


@numba.njit(cache=True)
def _route_here(X_columns, order, tmp, tree, feature, goes_left, lo, hi):
    """``route_rows`` on this thread: each range as one chunk, without the
    parallel regions (their start costs more than 3,065 rows take)."""
    left = np.empty(len(lo), np.int64)
    for s in range(len(lo)):
        rows, buf = order[tree[s]], tmp[tree[s]]
        left[s] = _split_chunk(column(X_columns, feature[s]), rows, buf, goes_left[s], lo[s],
                               hi[s])
        _put_back(rows, buf, lo[s], hi[s], left[s], lo[s], lo[s] + left[s])
    return left


@numba.njit(parallel=True, cache=True)
def _siblings_of_two(a, b, parent, built, other):
    for f in numba.prange(a.shape[0]):  # features are independent; flat loops: vectorized
        fa, fb, fp, fbuilt, fother = (a[f].reshape(-1), b[f].reshape(-1), parent[f].reshape(-1),
                                      built[f].reshape(-1), other[f].reshape(-1))
        for i in range(len(fa)):
            v = fa[i] + fb[i]
            fbuilt[i] = v
            fother[i] = fp[i] - v


@numba.njit(parallel=True, cache=True)
def _siblings_of_one(a, parent, built, other):
    for f in numba.prange(a.shape[0]):
        fa, fp, fbuilt, fother = (a[f].reshape(-1), parent[f].reshape(-1), built[f].reshape(-1),
                                  other[f].reshape(-1))
        for i in range(len(fa)):
            v = fa[i]
            fbuilt[i] = v
            fother[i] = fp[i] - v


PARALLEL_SIBLINGS = 1 << 17
"""Entries of a node's histogram from which ``siblings`` writes them in one
pass on the threads (500 features: 256k); below, numpy's two passes stay in
cache and cost less than waking the threads for every node (28 features: 14k)."""


def siblings(parts, slot, parent, built, other):
    """Both children's histograms from the built one's partial sums.

    ``built = sum(p[slot] for p in parts)`` (the holders' sums of the built
    child) and ``other = parent - built`` (histogram subtraction); a large
    node in one pass over the features in parallel. Exact: int64.

    Parameters
    ----------
    parts : sequence of ndarray of shape (n_slots, n_features, 256, n_stats)
        Histograms whose sum is the built children's (one per answering
        holder); some may be ``compact_histograms.CompactHistograms``.
    slot : int
    parent : ndarray of shape (n_features, 256, n_stats)
    built, other : ndarray of shape (n_features, 256, n_stats)
        Written.
    """
    if any(is_compact(p) for p in parts):
        compact_siblings(parts, slot, parent, built, other)
        return
    if parent.size < PARALLEL_SIBLINGS:
        np.copyto(built, parts[0][slot])
        for p in parts[1:]:
            built += p[slot]
        np.subtract(parent, built, out=other)
        return
    if len(parts) == 1:
        _siblings_of_one(parts[0][slot], parent, built, other)
        return
    first = parts[0][slot]
    if len(parts) > 2:
        first = first + sum(p[slot] for p in parts[1:-1])
    _siblings_of_two(first, parts[-1][slot], parent, built, other)


# ------------------------------------------------------------------- passes
@numba.njit(cache=True)
def fill_histograms(X_binned, stats, order, tree, slot, lo, hi, features, out, zero, n_blocks,
                    private):
    """out[slot[i]] (+)= statistics of rows order[tree[i], lo[i]:hi[i]]: the
    plan, the blocks' pass and the sums of straddling nodes (``zero``: the
    named slots start from zero). ``out`` is (n_slots, n_features, 256 or
    more bins, n_stats) (padded: ``PAD_BINS``); ``private``, the blocks'
    buffers, (n_blocks, 2) + out's node shape when that much is there (memory
    kept from call to call), else made here. Callable from compiled code."""
    owner, clo, chi, block_start = _plan(lo, hi, n_blocks)
    shared, first_block, last_block = _sharing(owner, block_start, len(lo))
    n_private = n_blocks if shared.any() else 0
    if len(private) < n_private:
        private = np.empty((n_private, 2) + out.shape[1:], out.dtype)
    _accumulate(X_binned, stats, order, tree, slot, owner, clo, chi, block_start, features, out,
                private, shared, zero)
    if n_private:
        _reduce_shared(out, private, owner, slot, block_start, shared, first_block, last_block,
                       zero)
    finish_missing(X_binned, out, stats, order, tree, slot, lo, hi, features)
    finish_modes(X_binned, out, stats, order, tree, slot, lo, hi, features, zero)


@numba.njit(cache=True)
def fill_either(codes, stats, order, tree, slot, lo, hi, features, out, rows, n_blocks, private):
    """``fill_histograms`` of nodes started from zero (``rows`` rows in all)
    from ``codes``, a pair: the dense or sparse codes, and
    ``mode_codes.ModeCodes`` or the same codes again; from the second where
    ``mode_codes.by_modes`` finds them less work, for two statistics (g, h)
    only (more, as AdaBoost's: 0.36 -> 0.45 s for spam's 400 stumps)."""
    if stats.shape[2] == 2 and by_modes(codes[1], rows, len(slot)):
        fill_histograms(codes[1], stats, order, tree, slot, lo, hi, features, out, True,
                        n_blocks, private)
    else:
        fill_histograms(codes[0], stats, order, tree, slot, lo, hi, features, out, True,
                        n_blocks, private)


@numba.njit(cache=True)
def kernel_features(features, n_features):
    """``features`` ascending (sparse rows look them up), none when they are every feature
    (the kernels' unrolled case); compiled: every round's grower asks."""
    out = np.sort(features)
    every = len(out) == n_features and (len(out) == 0 or out[-1] == n_features - 1)
    return out[:0] if every and (out == np.arange(n_features)).all() else out


def _histograms(X_binned, stats, order, tree, slot, lo, hi, n_slots, features, out=None):
    """hist[slot[i]] = statistics of rows order[tree[i], lo[i]:hi[i]], summed;
    added to ``out`` when given (the histograms of a worker's other partitions),
    which is then returned. Every slot is written (a slot no range names is zero)."""
    shape = (n_slots, X_binned.shape[1], MAX_BINS, stats.shape[2])
    features = kernel_features(np.asarray(features, np.int64), X_binned.shape[1])
    zero = out is None
    if zero:
        out = np.empty(shape, STAT_DTYPE)
        unnamed = np.ones(n_slots, bool)
        unnamed[slot] = False
        out[unnamed] = 0
    fill_histograms(X_binned, stats, order, np.asarray(tree, np.int64),
                    np.asarray(slot, np.int64), np.asarray(lo, np.int64),
                    np.asarray(hi, np.int64), features, out, zero, threads_now(),
                    np.empty((0, 2) + out.shape[1:], out.dtype))
    return out


def root_histograms(X_binned, stats, partition: RowPartition, features, out=None):
    """Histograms of every tree's root (slot t for tree t), added to ``out``
    when given.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8
    stats : ndarray of shape (n_trees, n_rows, n_stats), int64
        Fixed-point per-row statistics, e.g. (g, h, 1) for gradient boosting.
    partition : RowPartition
        Every tree's root range (its in-bag rows).
    features : ndarray of int
        Features to histogram (others stay zero: column subsampling).

    Returns
    -------
    hist : ndarray of shape (n_trees, n_features, 256, n_stats), int64
    """
    trees = np.arange(stats.shape[0], dtype=np.int64)
    return _histograms(X_binned, stats, partition.order, trees, trees, partition.start[:, 0],
                       partition.stop[:, 0], len(trees), features, out)


@numba.njit(cache=True)
def route_rows(X_columns, order, tmp, tree, feature, goes_left, lo, hi, n_blocks):
    """Move the rows of ranges order[tree[i], lo[i]:hi[i]] to the left part of
    their range where ``goes_left[i]`` takes their code of ``feature[i]``, the
    others after them, both in ascending row order; return the left rows per
    range. Callable from compiled code."""
    if n_blocks == 1:
        return _route_here(X_columns, order, tmp, tree, feature, goes_left, lo, hi)
    owner, clo, chi, block_start = _plan(lo, hi, n_blocks)
    n_left = np.empty(len(owner), np.int64)
    _route(X_columns, order, tmp, owner, clo, chi, block_start, tree, feature, goes_left, n_left)
    left_at, right_at, left = _destinations(owner, clo, chi, n_left, lo, len(lo))
    _assemble(order, tmp, tree, owner, clo, chi, n_left, left_at, right_at)
    return left


def route(X_columns, partition: RowPartition, splits: LevelSplits) -> np.ndarray:
    """Move the rows of every split node into its children's ranges (in place).

    ``X_columns`` is the binned matrix feature-major, shape (n_features, n_rows).
    Returns the rows of each split's (left, right) children, shape (n_splits, 2).
    """
    partition.ensure_nodes(splits.n_nodes)
    lo = partition.start[splits.tree, splits.node]
    hi = partition.stop[splits.tree, splits.node]
    left = route_rows(X_columns, partition.order, partition.scratch, splits.tree, splits.feature,
                      splits.goes_left, lo, hi, threads_now())
    partition.start[splits.tree, splits.left] = lo
    partition.stop[splits.tree, splits.left] = lo + left
    partition.start[splits.tree, splits.right] = lo + left
    partition.stop[splits.tree, splits.right] = hi
    return np.stack([left, hi - lo - left], axis=1)


def count_children(X_columns, partition: RowPartition, splits: LevelSplits) -> np.ndarray:
    """``route``'s counts, shape (n_splits, 2), with no row moved."""
    lo = partition.start[splits.tree, splits.node]
    hi = partition.stop[splits.tree, splits.node]
    owner, clo, chi, block_start = _plan(lo, hi, threads_now())
    n_left = np.empty(len(owner), np.int64)
    _count_left(X_columns, partition.order, owner, clo, chi, block_start, splits.tree,
                splits.feature, splits.goes_left, n_left)
    left = np.bincount(owner, n_left, len(lo)).astype(np.int64)
    return np.stack([left, hi - lo - left], axis=1)


@numba.njit(parallel=True, cache=True)
def _count_left(X_columns, order, owner, clo, chi, block_start, tree, feature, goes_left, n_left):
    """n_left[c] = the rows of chunk c that go left (``_split_chunk``'s count)."""
    for blk in numba.prange(len(block_start) - 1):
        for c in range(block_start[blk], block_start[blk + 1]):
            s, nl = owner[c], 0
            codes, rows, gl = column(X_columns, feature[s]), order[tree[s]], goes_left[s]
            for k in range(clo[c], chi[c]):
                if k + ROUTE_PREFETCH_AHEAD < chi[c]:
                    prefetch_code(codes, rows[k + ROUTE_PREFETCH_AHEAD])
                nl += np.int64(gl[at(codes, rows[k])])
            n_left[c] = nl


def split_level(X_binned, X_columns, stats, partition: RowPartition, splits: LevelSplits,
                n_slots: int, features, out=None):
    """Route the rows of every split node to its children, then histogram the
    built children (each now one contiguous range of rows).

    ``X_binned`` is row-major (n_rows, n_features) and ``X_columns`` the same
    codes feature-major (``columns``). ``partition`` is updated in place.
    Returns ``hist`` of shape
    (n_slots, n_features, 256, n_stats), int64, where ``hist[slot[s]]`` is
    split s's built child (added to ``out`` when given), and the rows of each
    split's (left, right) children, shape (n_splits, 2).
    """
    counts = route(X_columns, partition, splits)
    built = np.where(splits.build_left, splits.left, splits.right)
    keep = splits.slot >= 0
    tree, built, slot = splits.tree[keep], built[keep], splits.slot[keep]
    return _histograms(X_binned, stats, partition.order, tree, slot,
                       partition.start[tree, built], partition.stop[tree, built], n_slots,
                       features, out), counts


def replay(X_columns, partition: RowPartition, split_history) -> RowPartition:
    """A copy of ``partition`` after the given levels' splits (no histograms)."""
    partition = partition.copy()
    for splits in split_history:
        route(X_columns, partition, splits)
    return partition


def columns(X_binned, buffers=None) -> np.ndarray:
    """The binned matrix feature-major, shape (n_features, n_rows): what
    routing reads. Made once per shard when ``buffers`` keeps it. Sparse codes
    (``sparse_codes.SparseCodes``) serve as they are."""
    if is_sparse_codes(X_binned):
        return X_binned
    if buffers is not None:
        out = buffers.get("columns", X_binned.shape[::-1], X_binned.dtype)
        if getattr(buffers, "columns_of", None) is not X_binned:
            _transpose(np.ascontiguousarray(X_binned), out)
            buffers.columns_of = X_binned
        return out
    out = np.empty(X_binned.shape[::-1], X_binned.dtype)
    _transpose(np.ascontiguousarray(X_binned), out)
    return out


TRANSPOSE_ROWS = 4096
"""Rows a thread turns feature-major at a time (their codes stay in cache)."""


@numba.njit(parallel=True, cache=True)
def _transpose(X, out):
    """``out[:] = X.T`` for a C-contiguous ``X``, blocks of rows in parallel."""
    n_rows, n_features = X.shape
    for block in numba.prange((n_rows + TRANSPOSE_ROWS - 1) // TRANSPOSE_ROWS):
        lo = block * TRANSPOSE_ROWS
        hi = min(n_rows, lo + TRANSPOSE_ROWS)
        for f in range(n_features):
            for i in range(lo, hi):
                out[f, i] = X[i, f]
