"""The compiled grower's node table, and the trees it holds.

``local_grower`` keeps every node of a round's trees as one row of ints (the
fields below), a float gain, its statistics' totals and, for categorical
splits, a row of 256 directions. Here that table is read back: tree by tree in
id order (``by_tree``), with the splits in the order they were made
(``Grown``), and turned into the trees' node records (``NODE_DTYPE``) in one
compiled pass (``table_records``), or as ``NodeTable``s (the driver's grower,
``trees.grower``, makes them too; ``node_records`` makes the records of one).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numba
import numpy as np

from .common import MAX_BINS, MISSING_BIN, N_BITSET_WORDS


@dataclass
class NodeTable:
    """One grown tree's nodes in id order, as arrays (``trees.tree.tree_from_table``).

    ``feature``, ``split_bin``, ``missing_left``, ``gain``, ``left`` and
    ``right`` (children's ids) are read where ``split`` is True; a categorical
    split's directions are row ``categories[k]`` of ``directions`` (256
    bools). ``lower`` and ``upper``: the nodes' bounds under monotone
    constraints, or None.
    """

    totals: np.ndarray
    count: np.ndarray
    depth: np.ndarray
    split: np.ndarray
    feature: np.ndarray
    split_bin: np.ndarray
    missing_left: np.ndarray
    gain: np.ndarray
    left: np.ndarray
    right: np.ndarray
    categories: np.ndarray
    directions: np.ndarray
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None


# the node table: one row of ints per node
(TREE, ID, PARENT, DEPTH, FEATURE, BIN, MISSING_LEFT, HAS_MISSING, LEFT, RIGHT, SPLIT, LO, HI,
 COUNT, HIST, CATEGORIES, N_FIELDS) = range(17)


@numba.njit(cache=True)
def copy_row(dst, i, src, j):
    """dst[i] = src[j] (rows of 2-D arrays)."""
    for k in range(dst.shape[1]):
        dst[i, k] = src[j, k]


@numba.njit(cache=True)
def split_directions_into(ni, g, cat, out, i):
    """out[i] = split g's direction of every bin (its categories, or "bin <=
    its bin" and the missing bin's side)."""
    if ni[g, CATEGORIES] >= 0:
        copy_row(out, i, cat, ni[g, CATEGORIES])
    else:
        for b in range(ni[g, BIN] + 1):
            out[i, b] = True
        out[i, MISSING_BIN] = ni[g, MISSING_LEFT] == 1


@numba.njit(cache=True)
def joined(tables, gains, totals, categories):
    """One node table from trees grown apart (each its tree 0, rows linked
    within it): tree t's rows after tree t-1's, with its tree number, its
    links (parent, children) and categories' rows moved by the rows before."""
    n = n_cat = 0
    for t in range(len(tables)):
        n += len(tables[t])
        n_cat += len(categories[t])
    ni = np.empty((n, N_FIELDS), np.int64)
    gain = np.empty(n)
    tot = np.empty((n, totals[0].shape[1]), np.int64)
    cat = np.zeros((n_cat, MAX_BINS), np.bool_)
    r = c = 0
    for t in range(len(tables)):
        for g in range(len(tables[t])):
            copy_row(ni, r + g, tables[t], g)
            copy_row(tot, r + g, totals[t], g)
            gain[r + g] = gains[t][g]
            ni[r + g, TREE] = t
            for field in (PARENT, LEFT, RIGHT):
                if ni[r + g, field] >= 0:
                    ni[r + g, field] += r
            if ni[r + g, CATEGORIES] >= 0:
                ni[r + g, CATEGORIES] += c
        for k in range(len(categories[t])):
            copy_row(cat, c + k, categories[t], k)
        r += len(tables[t])
        c += len(categories[t])
    return ni, gain, tot, cat


@numba.njit(cache=True)
def by_tree(ni, gains, tot, cat, n_trees):
    """The node table tree by tree in id order, children given by id; where
    each tree's nodes begin; every node's rows (start, stop by tree and id);
    and the split nodes' rows in the order the splits were made, with their
    directions (256 bools each)."""
    n = len(ni)
    bounds = np.zeros(n_trees + 1, np.int64)
    for g in range(n):
        bounds[ni[g, TREE] + 1] += 1
    for t in range(n_trees):
        bounds[t + 1] += bounds[t]
    where = np.empty(n, np.int64)
    width = 0
    for g in range(n):
        where[g] = bounds[ni[g, TREE]] + ni[g, ID]
        width = max(width, ni[g, ID] + 1)
    out = np.empty_like(ni)
    out_gains = np.empty_like(gains)
    out_tot = np.empty_like(tot)
    start = np.zeros((n_trees, width), np.int64)
    stop = np.zeros((n_trees, width), np.int64)
    n_splits = 0
    for g in range(n):
        k = where[g]
        copy_row(out, k, ni, g)
        copy_row(out_tot, k, tot, g)
        out_gains[k] = gains[g]
        for side in (LEFT, RIGHT):
            if ni[g, SPLIT] == 1:
                out[k, side] = ni[ni[g, side], ID]
        start[ni[g, TREE], ni[g, ID]], stop[ni[g, TREE], ni[g, ID]] = ni[g, LO], ni[g, HI]
        n_splits += ni[g, SPLIT] == 1
    split_rows = np.empty(n_splits, np.int64)
    directions = np.zeros((n_splits, MAX_BINS), np.bool_)
    s = 0
    for c in range(n):  # children come in the order their parents were split
        p = ni[c, PARENT]
        if p >= 0 and ni[p, LEFT] == c:
            split_rows[s] = where[p]
            split_directions_into(ni, p, cat, directions, s)
            s += 1
    return out, out_gains, out_tot, bounds, start, stop, split_rows, directions


def _table(ni, gains, tot, cat):
    """One tree's node table, from its rows of the node table (in id order)."""
    split = ni[:, SPLIT] == 1
    return NodeTable(totals=tot, count=ni[:, COUNT], depth=ni[:, DEPTH], split=split,
                     feature=ni[:, FEATURE], split_bin=ni[:, BIN],
                     missing_left=ni[:, MISSING_LEFT] == 1, gain=gains,
                     left=np.where(split, ni[:, LEFT], -1), right=np.where(split, ni[:, RIGHT], -1),
                     categories=ni[:, CATEGORIES], directions=cat)


class Grown:
    """What ``grow`` returns: the node table tree by tree (``by_tree``'s
    ``ni``, ``gains``, ``tot``, ``cat`` and ``bounds``, each tree's rows),
    its ``NodeTable`` per tree (``tables``), and the splits in the order they
    were made, as one ``histogram.LevelSplits`` (``splits``: the rows' way
    through them, to add the trees from where the rows are)."""

    def __init__(self, ni, gains, tot, cat, bounds, splits):
        self.ni, self.gains, self.tot, self.cat, self.bounds = ni, gains, tot, cat, bounds
        self.splits = splits

    @property
    def tables(self) -> list[NodeTable]:
        return [_table(self.ni[a:b], self.gains[a:b], self.tot[a:b], self.cat)
                for a, b in pairwise(self.bounds)]


@numba.njit(cache=True, inline="always")
def _put_record(out, i, value, cover, count, depth, s, gain, missing_left, f, left, right,
                split_bin, is_categorical, edges, n_cat):
    """Record i of ``out``: the node's value, cover, count and depth; for a
    split, its feature, gain, children, missing direction and, numeric, its
    bin and threshold ``edges[f, split_bin]`` (the mapper's padded edges),
    categorical, bitset ``n_cat``; a leaf's split fields zero (-1 for its
    feature, children and bitset). Returns the categorical splits so far."""
    f = f if s else -1
    cat = s and is_categorical[max(f, 0)]
    numeric = s and not cat
    node = out[i]
    node["value"], node["cover"] = value, cover
    node["count"], node["depth"] = count, depth
    node["is_leaf"], node["feature"] = not s, f
    node["gain"] = gain if s else 0.0
    node["missing_left"] = s and missing_left
    node["left"] = left if s else -1
    node["right"] = right if s else -1
    node["is_categorical"] = cat
    node["cat_index"] = n_cat if cat else -1
    node["bin_threshold"] = split_bin if numeric else 0
    node["threshold"] = edges[f, split_bin] if numeric else 0.0
    return n_cat + cat


@numba.njit(cache=True)
def node_records(out, value, cover, count, depth, split, gain, missing_left, feature, left,
                 right, split_bin, is_categorical, edges):
    """Fill ``out`` (``NODE_DTYPE``), one record per node of a grown tree's
    node table (``_put_record``), its categorical splits' bitsets numbered
    in node order."""
    n_cat = 0
    for i in range(len(out)):
        n_cat = _put_record(out, i, value[i], cover[i], count[i], depth[i], split[i], gain[i],
                            missing_left[i], feature[i], left[i], right[i], split_bin[i],
                            is_categorical, edges, n_cat)


@numba.njit(cache=True)
def put_bitset(bits, k, goes_left):
    """Row k of ``bits`` (uint64 words): bit c set where category code c < 255 goes left
    (``goes_left[c]``; codes past its end do not)."""
    for w in range(N_BITSET_WORDS):
        bits[k, w] = 0
    for code in range(min(len(goes_left), MISSING_BIN)):
        if goes_left[code]:
            bits[k, code >> 6] |= np.uint64(1) << np.uint64(code & 63)


@numba.njit(cache=True)
def table_records(ni, gains, cat, bounds, value, cover, is_categorical, edges, out):
    """The records of every tree of a ``by_tree`` table into ``out`` (row for
    row; children and bitsets numbered within each tree, ``_put_record``),
    given every node's value and cover; returns the categorical splits'
    bitsets (``put_bitset``) and where each tree's begin among them."""
    n_bits = 0
    for g in range(len(ni)):
        n_bits += ni[g, SPLIT] == 1 and is_categorical[ni[g, FEATURE]]
    bits = np.zeros((n_bits, N_BITSET_WORDS), np.uint64)
    bit_bounds = np.zeros(len(bounds), np.int64)
    k = 0
    for t in range(len(bounds) - 1):
        n_cat = 0
        for g in range(bounds[t], bounds[t + 1]):
            before = n_cat
            n_cat = _put_record(out, g, value[g], cover[g], ni[g, COUNT], ni[g, DEPTH],
                                ni[g, SPLIT] == 1, gains[g], ni[g, MISSING_LEFT] == 1,
                                ni[g, FEATURE], ni[g, LEFT], ni[g, RIGHT], ni[g, BIN],
                                is_categorical, edges, n_cat)
            if n_cat > before:  # a categorical split: its bitset
                put_bitset(bits, k, cat[ni[g, CATEGORIES]])
                k += 1
        bit_bounds[t + 1] = k
    return bits, bit_bounds
