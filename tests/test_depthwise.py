"""Depth-wise growth: a wave splits every node of a level with a split; the
children with a split make the next level."""

import numpy as np

from distboost.trees.depthwise import DepthWise
from distboost.trees.nodes import Node, NodeBook


def test_a_level_is_every_node_with_a_split_and_its_children_the_next():
    roots = [Node(0, 0, np.zeros(2)), Node(0, 0, np.zeros(2))]
    for root in roots:
        root.exact = 0
    book = NodeBook(roots)
    policy = DepthWise(book, finder=None)
    policy.start([(0, roots[0]), (1, roots[1])])
    chosen = policy.next_splits()
    assert chosen == [(0, roots[0]), (1, roots[1])] and policy.next_splits() == []
    children = [book.children(t, n, np.zeros(2), in_wave_order=True) for t, n in chosen]
    children[0][0].gain = 1.0  # only the first tree's left child has a split
    policy.wave_done(chosen, [], None)
    assert policy.next_splits() == [(0, children[0][0])]
    assert book.n_leaves == [2, 2] and all(n.adopted for n in roots)
