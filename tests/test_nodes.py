"""The bookkeeping of trees grown on the driver: wave ids when a node is
made, tree ids when its parent's split is taken, counts by rows."""

import numpy as np

from distboost.trees.nodes import Node, NodeBook


def _book():
    root = Node(0, 0, np.array([10, 4]))
    root.exact = 0
    return NodeBook([root]), root


def test_children_take_the_next_wave_ids_and_their_tree_ids_when_taken():
    """Root, then its right child expanded before its left (as speculation
    may): the wave ids follow the expansions (1 2, then 3 4 of the right,
    5 6 of the left), the tree ids the order the splits are taken (left
    first: 3 4 to the left child's children)."""
    book, root = _book()
    left, right = book.children(0, root, np.array([3, 1]), in_wave_order=False)
    assert (left.id, right.id, left.exact, right.exact) == (1, 2, -1, -1)
    np.testing.assert_array_equal(right.totals, [7, 3])
    rl, rr = book.children(0, right, np.array([2, 1]), in_wave_order=False)
    ll, lr = book.children(0, left, np.array([1, 0]), in_wave_order=False)
    assert [n.id for n in (rl, rr, ll, lr)] == [3, 4, 5, 6]
    assert book.adopt(0, root) == [left, right] and (left.exact, right.exact) == (1, 2)
    book.adopt(0, left)
    book.adopt(0, right)
    assert [n.exact for n in (ll, lr, rl, rr)] == [3, 4, 5, 6] and book.n_leaves == [4]
    table = book.table(0, bounded=False)
    np.testing.assert_array_equal(table.left, [1, 3, 5, -1, -1, -1, -1])
    np.testing.assert_array_equal(table.totals[3], [1, 0])


def test_an_expansion_never_taken_stays_a_leaf():
    book, root = _book()
    left, _ = book.children(0, root, np.array([3, 1]), in_wave_order=False)
    book.adopt(0, root)
    book.children(0, left, np.array([1, 0]), in_wave_order=False)  # expanded, not taken
    table = book.table(0, bounded=False)
    assert len(table.split) == 3 and table.split.tolist() == [True, False, False]


def test_in_wave_order_the_tree_ids_are_the_wave_ids():
    book, root = _book()
    left, right = book.children(0, root, np.array([3, 1]), in_wave_order=True)
    assert (left.exact, right.exact) == (1, 2)
    book.adopt(0, root)
    assert (left.exact, right.exact) == (1, 2) and book.n_exact == [1]


def test_without_missing_values_missing_goes_to_the_child_with_more_rows():
    book, root = _book()
    root.has_missing, root.goes_left = False, np.zeros(256, bool)
    book.children(0, root, np.array([3, 1]), in_wave_order=True)
    book.set_child_counts(0, root, np.array([5, 2]))
    left, right = book.nodes[0][1:]
    assert (left.count, right.count) == (5, 2)
    assert root.missing_left and root.goes_left[255]
