"""The compiled grower's node table read back tree by tree (a hand-made table)."""

import numpy as np

from distboost.kernels.common import NODE_DTYPE
from distboost.kernels.node_records import (
    BIN,
    CATEGORIES,
    DEPTH,
    FEATURE,
    HI,
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
    node_records,
    table_records,
)
from distboost.kernels.tree import bitset_from_mask


def _node(tree, id_, parent, depth, lo, hi, split=0, left=-1, right=-1, feature=0, bin_=0,
          missing_left=0, categories=-1):
    row = np.zeros(N_FIELDS, np.int64)
    row[[TREE, ID, PARENT, DEPTH, LO, HI, SPLIT, LEFT, RIGHT, FEATURE, BIN, MISSING_LEFT,
         CATEGORIES]] = [tree, id_, parent, depth, lo, hi, split, left, right, feature, bin_,
                         missing_left, categories]
    return row


def _table():
    """Two trees grown side by side, their rows interleaved as a round makes
    them: tree 1's root splits first (numeric, bin 2, missing left), then
    tree 0's (categorical: categories row 0), then tree 1's node 2 (bin 0)."""
    ni = np.stack([
        _node(1, 0, -1, 0, 0, 6, split=1, left=2, right=3, feature=1, bin_=2, missing_left=1),
        _node(0, 0, -1, 0, 0, 6, split=1, left=4, right=5, feature=0, categories=0),
        _node(1, 1, 0, 1, 0, 4),
        _node(1, 2, 0, 1, 4, 6, split=1, left=6, right=7, feature=0, bin_=0),
        _node(0, 1, 1, 1, 0, 1),
        _node(0, 2, 1, 1, 1, 6),
        _node(1, 3, 3, 2, 4, 5),
        _node(1, 4, 3, 2, 5, 6),
    ])  # children's rows (left, right) are rows of this table
    gains = np.arange(len(ni), dtype=np.float64)
    tot = np.arange(2 * len(ni), dtype=np.int64).reshape(-1, 2)
    cat = np.zeros((1, 256), np.bool_)
    cat[0, [3, 7]] = True
    return ni, gains, tot, cat


def test_nodes_come_back_tree_by_tree_in_id_order_with_children_by_id():
    ni, gains, tot, cat = _table()
    out, out_gains, out_tot, bounds, start, stop, split_rows, directions = by_tree(
        ni, gains, tot, cat, 2)
    assert bounds.tolist() == [0, 3, 8]
    assert out[:, TREE].tolist() == [0, 0, 0, 1, 1, 1, 1, 1]
    assert out[:, ID].tolist() == [0, 1, 2, 0, 1, 2, 3, 4]
    assert out_gains.tolist() == [1, 4, 5, 0, 2, 3, 6, 7]
    assert out_tot[:, 0].tolist() == [2, 8, 10, 0, 4, 6, 12, 14]
    assert out[0, [LEFT, RIGHT]].tolist() == [1, 2]  # ids, no longer rows
    assert out[3, [LEFT, RIGHT]].tolist() == [1, 2]
    assert out[5, [LEFT, RIGHT]].tolist() == [3, 4]
    assert start[1].tolist() == [0, 0, 4, 4, 5] and stop[1].tolist() == [6, 4, 6, 5, 6]
    assert start[0, :3].tolist() == [0, 0, 1] and stop[0, :3].tolist() == [6, 1, 6]
    # splits in the order they were made: tree 1's root, tree 0's root, tree 1's node 2
    assert split_rows.tolist() == [3, 0, 5]
    assert np.flatnonzero(directions[0]).tolist() == [0, 1, 2, 255]  # bin <= 2, missing left
    assert np.flatnonzero(directions[1]).tolist() == [3, 7]
    assert np.flatnonzero(directions[2]).tolist() == [0]


def test_grown_holds_one_node_table_per_tree():
    ni, gains, tot, cat = _table()
    out, out_gains, out_tot, bounds, *_ = by_tree(ni, gains, tot, cat, 2)
    grown = Grown(out, out_gains, out_tot, cat, bounds, splits=None)
    first, second = grown.tables
    assert first.split.tolist() == [True, False, False]
    assert first.left.tolist() == [1, -1, -1] and first.right.tolist() == [2, -1, -1]
    assert second.split.tolist() == [True, False, True, False, False]
    assert second.feature[0] == 1 and second.split_bin[0] == 2 and second.missing_left[0]
    assert second.depth.tolist() == [0, 1, 1, 2, 2]
    assert second.gain.tolist() == [0, 2, 3, 6, 7]


def test_node_records_of_a_hand_table():
    """A root split on numeric feature 1 at bin 2 (threshold: that bin's edge),
    its left child split on categorical feature 0 (bitset 0), three leaves:
    split fields only where a node splits, -1 for a leaf's feature, children
    and bitset."""
    split = np.array([True, True, False, False, False])
    edges = np.array([[0.5, 1.5, 2.5, np.inf], [10.0, 20.0, 30.0, np.inf]])
    out = np.zeros(5, NODE_DTYPE)
    node_records(out, np.arange(5) * 0.5, np.arange(5) + 10.0, np.array([9, 5, 3, 4, 2]),
                 np.array([0, 1, 1, 2, 2]), split, np.array([3.0, 1.0, 7.0, 7.0, 7.0]),
                 np.array([True, False, True, True, True]), np.array([1, 0, 1, 1, 1]),
                 np.array([1, 3, 9, 9, 9]), np.array([2, 4, 9, 9, 9]),
                 np.array([2, 1, 2, 2, 2]), np.array([True, False]), edges)
    assert out["value"].tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert out["cover"].tolist() == [10.0, 11.0, 12.0, 13.0, 14.0]
    assert out["count"].tolist() == [9, 5, 3, 4, 2] and out["depth"].tolist() == [0, 1, 1, 2, 2]
    assert out["is_leaf"].tolist() == [0, 0, 1, 1, 1]
    assert out["feature"].tolist() == [1, 0, -1, -1, -1]
    assert out["gain"].tolist() == [3.0, 1.0, 0.0, 0.0, 0.0]
    assert out["missing_left"].tolist() == [1, 0, 0, 0, 0]
    assert out["left"].tolist() == [1, 3, -1, -1, -1]
    assert out["right"].tolist() == [2, 4, -1, -1, -1]
    assert out["is_categorical"].tolist() == [0, 1, 0, 0, 0]
    assert out["cat_index"].tolist() == [-1, 0, -1, -1, -1]
    assert out["bin_threshold"].tolist() == [2, 0, 0, 0, 0]
    assert out["threshold"].tolist() == [30.0, 0.0, 0.0, 0.0, 0.0]


def test_table_records_are_each_node_tables_records_with_its_bitsets():
    """Both trees' records in one pass, row for row what ``node_records`` makes
    of each tree's ``NodeTable`` (children and bitsets numbered within the
    tree), and the categorical split's bitset that of its directions."""
    ni, gains, tot, cat = _table()
    ni[3, FEATURE] = 2  # tree 1's node 2 on a numeric feature of its own
    out, out_gains, out_tot, bounds, *_ = by_tree(ni, gains, tot, cat, 2)
    is_categorical = np.array([True, False, False])
    edges = np.array([np.arange(256) * 1.0, np.arange(256) * 10.0, np.arange(256) * 100.0])
    value, cover = out_tot[:, 0] * 0.5, out_tot[:, 1] * 2.0
    rec = np.zeros(len(out), NODE_DTYPE)
    bits, where = table_records(out, out_gains, cat, bounds, value, cover, is_categorical,
                                edges, rec)
    assert where.tolist() == [0, 1, 1]  # tree 0's root is the one categorical split
    assert bits.shape == (1, 4) and bits[0].tolist() == bitset_from_mask(cat[0]).tolist()
    assert bits[0, 0] == (1 << 3) | (1 << 7)
    for t, table in enumerate(Grown(out, out_gains, out_tot, cat, bounds, splits=None).tables):
        a, b = bounds[t], bounds[t + 1]
        expected = np.zeros(b - a, NODE_DTYPE)
        node_records(expected, value[a:b], cover[a:b], table.count, table.depth, table.split,
                     table.gain, table.missing_left, table.feature, table.left, table.right,
                     table.split_bin, is_categorical, edges)
        assert rec[a:b].tobytes() == expected.tobytes()
    assert rec["cat_index"].tolist() == [0, -1, -1, -1, -1, -1, -1, -1]
    assert rec["threshold"].tolist() == [0.0, 0.0, 0.0, 20.0, 0.0, 0.0, 0.0, 0.0]
    assert rec["feature"].tolist() == [0, -1, -1, 1, -1, 2, -1, -1]
    assert rec["left"].tolist() == [1, -1, -1, 1, -1, 3, -1, -1]


def test_a_bitset_has_the_codes_going_left_below_the_missing_bin():
    mask = np.zeros(256, np.bool_)
    mask[[0, 63, 64, 200, 254, 255]] = True
    assert bitset_from_mask(mask).tolist() == [1 | (1 << 63), 1, 0, (1 << 8) | (1 << 62)]
    assert bitset_from_mask(np.array([False, True])).tolist() == [2, 0, 0, 0]
