"""Best-first growth, a wave serving several splits of each tree.

With ``max_leaf_nodes`` (the J of ESL 10.11) a tree splits the leaf with
the largest gain, smallest id first on ties, until it has J leaves or no
leaf has a positive gain (LightGBM's leaf-wise growth, XGBoost's
``grow_policy="lossguide"``). So that it does not pay one wave per split, a
wave expands the best few nodes of each tree at once (speculatively: their
children's histograms are built), and the expansions are then taken in
exact best-first order. A wave's expansions need not be leaves yet: a child
that an earlier wave built has its split too, and is expanded before its
parent is taken when it is likely to be, so a wave can serve several
branches of the tree a level deeper each. Another wave is needed only when
that order reaches a leaf that was not expanded; an expansion the order
never reaches is dropped (its node stays a leaf). Node ids are given in the
order splits are taken (``nodes``), so the trees are those of one split per
wave.

Lazy evaluation: with features drawn per node by its id (``node_features``),
a built child finds its split only once its id is known, when its parent's
split is taken; it cannot be expanded before that.
"""

from __future__ import annotations

import numpy as np

from .evaluation import SplitFinder
from .nodes import NodeBook

SPECULATIVE_SPLITS = 8
"""Nodes a wave expands at most, per tree (the best leaf, and the nodes the
order is likeliest to take next: ``BestFirst._speculate``). On W1 (1M rows,
63 leaves, 50 trees) 8 took 615 waves, against 581 for expanding every node
with a split each wave, and 26 % more expansions than splits taken; 4 took
880 waves and 6 took 685 (11 % more expansions)."""


class BestFirst:
    """The ``GrowthPolicy`` that takes the best leaf first, speculating.

    Parameters
    ----------
    book : NodeBook
        The trees' nodes.
    finder : SplitFinder
        The nodes' best splits.
    max_leaf_nodes : int
        Leaves a tree may have.
    """

    whole_levels = False

    def __init__(self, book: NodeBook, finder: SplitFinder, max_leaf_nodes: int):
        self.book, self.finder, self.max_leaf_nodes = book, finder, max_leaf_nodes
        self.lazy = finder.node_features is not None
        self.frontier = [[] for _ in range(book.n_trees)]  # the leaves with a split
        self.known = [[] for _ in range(book.n_trees)]  # nodes with a split, not expanded

    def start(self, pairs):
        """Nodes with a split of positive gain that join the frontier (the roots first)."""
        for t, node in pairs:
            self.frontier[t].append(node)
            self.known[t].append(node)

    def next_splits(self) -> list:
        """The nodes the next wave expands, every tree's (none: the trees are done)."""
        return [(t, n) for t in range(self.book.n_trees) for n in self._take(t)]

    def wave_done(self, chosen, built, block):
        """The built children find their splits (unless that must wait for
        their ids): they may be expanded from now on."""
        if built and not self.lazy:
            for t, node in self.finder.evaluate(built, block):
                self.known[t].append(node)

    def _take(self, t) -> list:
        """Take tree ``t``'s splits in best-first order (largest gain, then
        smallest id) as long as the best leaf is expanded; return the nodes
        to expand in the next wave (none: the tree is done).

        The next wave expands the best leaf and, speculatively, the nodes
        the order is likeliest to take next (``_speculate``), at most
        ``SPECULATIVE_SPLITS`` and never more than the splits the tree may
        still take.
        """
        frontier, limit = self.frontier[t], self.max_leaf_nodes
        while frontier and self.book.n_leaves[t] < limit:
            best = max(frontier, key=lambda n: (n.gain, -n.exact))
            if not best.expanded:
                room = min(SPECULATIVE_SPLITS, limit - self.book.n_leaves[t])
                return self._speculate(t, best, room)
            frontier.remove(best)
            self._adopt(t, best)
        return []

    def _speculate(self, t, best, room) -> list:
        """The best leaf, and the ``room - 1`` other nodes of tree ``t`` with a
        known split, not expanded, that the order is likeliest to take.

        Those are not only leaves of the tree taken so far: a child that a
        wave built, of a node not taken yet, has its split too. The order
        takes a node only after every ancestor not taken yet, each when its
        gain is the largest of the frontier; so the nodes rank by the
        smallest gain on that path (``_outlook``). Expanding such a child
        speculatively spares the order one wave per level of a branch it
        goes down.
        """
        known = self.known[t] = [n for n in self.known[t] if not n.expanded]
        others = sorted((n for n in known if n is not best), key=lambda n: -_outlook(n))
        return [best] + others[:room - 1]

    def _adopt(self, t, parent):
        """Take ``parent``'s split into tree ``t``; its children join the
        frontier (lazily: once they have found their splits)."""
        children = self.book.adopt(t, parent)
        if self.lazy:
            built = [c for c in children if c.hist is not None]
            if built:
                pairs = [(t, c) for c in built]
                self.start(self.finder.evaluate(pairs, np.stack([c.hist for c in built])))
        else:
            self.frontier[t] += [c for c in children if c.gain > 0]


def _outlook(node) -> float:
    """The smallest gain on ``node``'s path up to the tree taken so far:
    how large the frontier's best gain may be when the order takes it."""
    gain, parent = node.gain, node.parent
    while parent is not None and not parent.adopted:
        gain, parent = min(gain, parent.gain), parent.parent
    return gain
