"""The bookkeeping of trees grown on the driver: nodes, their two ids, the
rows their waves count, and the finished node tables.

Every node has two numbers. ``Node.id`` is its number in the waves: the
workers route rows by it, and it is given when the node is made (its
parent expanded). ``Node.exact`` is its id in the tree, given when its
parent's split is taken. Depth-wise growth takes every split of a wave at
once, in wave order, so the two agree; best-first growth may expand a node
that the order takes later, or never (its children then get no tree id,
and it stays a leaf), so that its trees are those of one split per wave.
"""

from __future__ import annotations

import numpy as np

from ..kernels.common import MAX_BINS, MISSING_BIN
from ..kernels.histogram import LevelSplits
from ..kernels.node_records import NodeTable
from .tree import Tree, tree_from_table


class Node:
    """One node of a tree being grown: its statistics, its best split, its
    children and, while it may still split, its histogram."""

    __slots__ = (
        "adopted",
        "count",
        "depth",
        "exact",
        "expanded",
        "feature",
        "gain",
        "goes_left",
        "has_missing",
        "hist",
        "id",
        "left",
        "lower",
        "missing_left",
        "parent",
        "right",
        "sets",
        "split_bin",
        "totals",
        "upper",
    )

    def __init__(self, node_id, depth, totals, parent=None):
        # ``id``: the node's number in the waves (routing on the workers);
        # ``exact``: its id in the tree, given when its parent's split is taken
        self.id, self.depth, self.totals, self.parent = node_id, depth, totals, parent
        self.exact = -1
        self.expanded = self.adopted = False
        self.count = None
        self.has_missing = True
        self.hist = None
        self.gain = -np.inf
        self.feature = self.split_bin = -1
        self.missing_left = False
        self.goes_left = None
        self.left = self.right = -1
        # monotone constraints: bounds of the node's value (the whole line at the root);
        # interaction constraints: the interaction sets its path is still within
        self.lower, self.upper = -np.inf, np.inf
        self.sets = None


class NodeBook:
    """The nodes of ``n_trees`` trees in the order they were made, the ids
    given, and the leaves of the trees taken so far.

    Parameters
    ----------
    roots : list of Node
        Each tree's root (wave id and tree id 0).
    """

    def __init__(self, roots: list[Node]):
        self.nodes = [[root] for root in roots]
        self.n_trees = len(roots)
        self.n_leaves = [1] * self.n_trees
        self.n_exact = [1] * self.n_trees  # tree ids given so far, per tree

    def children(self, t, parent: Node, left_totals, in_wave_order: bool) -> tuple[Node, Node]:
        """Make ``parent``'s two children in tree ``t`` (their wave ids next);
        ``in_wave_order``: the split is taken as it is made, so their tree
        ids are their wave ids."""
        nodes = self.nodes[t]
        lchild = Node(len(nodes), parent.depth + 1, left_totals, parent)
        rchild = Node(len(nodes) + 1, parent.depth + 1, parent.totals - left_totals, parent)
        parent.left, parent.right = lchild.id, rchild.id
        if in_wave_order:
            lchild.exact, rchild.exact = lchild.id, rchild.id
        nodes += [lchild, rchild]
        return lchild, rchild

    def adopt(self, t, parent: Node) -> list[Node]:
        """Take ``parent``'s split into tree ``t``: its children get their
        tree ids (if they have none yet); return them (left, right)."""
        parent.adopted = True
        self.n_leaves[t] += 1
        children = [self.nodes[t][parent.left], self.nodes[t][parent.right]]
        for child in children:
            if child.exact < 0:
                child.exact = self.n_exact[t]
                self.n_exact[t] += 1
        return children

    def set_child_counts(self, t, parent: Node, counts):
        """Children's rows as routed; without missing values in the node,
        missing goes to the child with more rows (``splitting``)."""
        lchild, rchild = self.nodes[t][parent.left], self.nodes[t][parent.right]
        if lchild.count is not None:
            return
        lchild.count, rchild.count = int(counts[0]), int(counts[1])
        if not parent.has_missing:
            parent.missing_left = lchild.count >= rchild.count
            parent.goes_left[MISSING_BIN] = parent.missing_left

    def trees(self, criterion, mapper, params) -> list[Tree]:
        """Every tree, its nodes in tree-id order (``table``)."""
        return [tree_from_table(self.table(t, params.monotonic_cst is not None), criterion,
                                mapper, params.learning_rate) for t in range(self.n_trees)]

    def table(self, t, bounded: bool) -> NodeTable:
        """Tree ``t``'s nodes in id order; an expansion never taken stays a leaf."""
        made = self.nodes[t]
        nodes = sorted((n for n in made if n.exact >= 0), key=lambda n: n.exact)
        split = [n.adopted for n in nodes]
        categorical = [n.goes_left for n in nodes if n.adopted and n.goes_left is not None]
        return NodeTable(
            totals=np.stack([n.totals for n in nodes]),
            count=np.array([-1 if n.count is None else n.count for n in nodes], np.int64),
            depth=np.array([n.depth for n in nodes], np.int64),
            split=np.array(split, bool),
            feature=np.array([n.feature for n in nodes], np.int64),
            split_bin=np.array([n.split_bin for n in nodes], np.int64),
            missing_left=np.array([n.missing_left for n in nodes], bool),
            gain=np.array([n.gain for n in nodes]),
            left=np.array([made[n.left].exact if n.adopted else -1 for n in nodes], np.int64),
            right=np.array([made[n.right].exact if n.adopted else -1 for n in nodes], np.int64),
            categories=np.cumsum([n.adopted and n.goes_left is not None for n in nodes]) - 1,
            directions=np.array(categorical, bool).reshape(-1, MAX_BINS),
            lower=np.array([n.lower for n in nodes]) if bounded else None,
            upper=np.array([n.upper for n in nodes]) if bounded else None,
        )


def wave_splits(wave) -> tuple[LevelSplits, int]:
    """A wave's split table, and its number of histogram slots.

    ``wave`` lists (tree, parent, smaller child, larger child, build the
    smaller?) of every routed parent; a parent whose smaller child is built
    sends its histogram to the next free slot (-1: none).
    """
    n = len(wave)
    tree, node, feature, left, right, slot = (np.empty(n, np.int64) for _ in range(6))
    goes_left = np.zeros((n, MAX_BINS), bool)
    build_left = np.empty(n, bool)
    n_slots = 0
    for s, (t, parent, small, _, build) in enumerate(wave):
        tree[s], node[s], feature[s] = t, parent.id, parent.feature
        goes_left[s], left[s], right[s] = parent.goes_left, parent.left, parent.right
        build_left[s], slot[s] = small.id == parent.left, n_slots if build else -1
        n_slots += build
    return LevelSplits(tree, node, feature, goes_left, left, right, build_left, slot), n_slots
