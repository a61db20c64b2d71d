"""Depth-wise growth: every splittable node of a level split in one wave.

The trees grow level by level (ESL 9.2.2's recursive binary partitions,
XGBoost's ``grow_policy="depthwise"``) until no node of a level has a
split of positive gain or ``max_depth`` stops them. Every split of a wave
is taken at once, in wave order: a node's id in the tree is its wave id.
"""

from __future__ import annotations

from .evaluation import SplitFinder
from .nodes import NodeBook


class DepthWise:
    """The ``GrowthPolicy`` that splits whole levels.

    Parameters
    ----------
    book : NodeBook
        The trees' nodes.
    finder : SplitFinder
        The children's best splits, once their histograms are built.
    """

    whole_levels = True

    def __init__(self, book: NodeBook, finder: SplitFinder):
        self.book, self.finder = book, finder
        self.level = [[] for _ in range(book.n_trees)]  # per tree: nodes to split next

    def start(self, pairs):
        """The roots with a split of positive gain: the first level."""
        for t, node in pairs:
            self.level[t].append(node)

    def next_splits(self) -> list:
        """Every node of the level with a split (none: the trees are done)."""
        chosen = [(t, n) for t in range(self.book.n_trees) for n in self.level[t]]
        self.level = [[] for _ in range(self.book.n_trees)]
        return chosen

    def wave_done(self, chosen, built, block):
        """The wave's children with histograms (``block[k]`` of ``built[k]``)
        find their splits; every split of the wave is taken, and the children
        with a positive gain make the next level."""
        if built:
            self.finder.evaluate(built, block)
        for t, parent in chosen:
            self.level[t] += [c for c in self.book.adopt(t, parent) if c.gain > 0]
