"""The compiled grower's node table read back tree by tree (a hand-made table)."""

import numpy as np

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
)


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
