"""Grow a batch of trees on the driver from summed histograms.

The grower only sees small things: histograms summed over all partitions,
node totals and split tables. Each wave of work on the partitions applies
the chosen splits and histograms the smaller child of each; the larger
child's histogram is the parent's minus the smaller one's (histogram
subtraction). A growth policy says which nodes each wave splits:
``depthwise.DepthWise`` a whole level, ``best_first.BestFirst`` the best
few leaves of each tree. Like scikit-learn's ``TreeGrower.grow``, the loop
is ``while there are nodes to split: split them``.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..kernels.histogram import siblings
from .best_first import BestFirst
from .deferred import PendingCounts
from .depthwise import DepthWise
from .evaluation import SplitFinder
from .nodes import Node, NodeBook, wave_splits
from .tree import Tree


class GrowthPolicy(Protocol):
    """Which nodes the next wave splits, and what becomes of its children."""

    whole_levels: bool
    """Every wave splits whole levels, each split taken at once in wave
    order: the children's ids are known when they are made, the levels may
    reuse their memory (``LevelBlocks``) and a last level may leave its
    counts to a later wave (``deferred``)."""

    def start(self, pairs) -> None:
        """The roots, as (tree, node) pairs with a split of positive gain."""

    def next_splits(self) -> list:
        """The (tree, node) pairs the next wave splits (none: the trees are done)."""

    def wave_done(self, chosen, built, block) -> None:
        """After the wave that split ``chosen``: ``built`` (tree, node) are the
        children with histograms, ``block[k]`` that of ``built[k]``."""


class LevelBlocks:
    """Memory for the children's histograms of depth-wise levels, reused
    from level to level and round to round.

    A level's children read their parents' histograms, which the level
    before wrote, and nothing older is alive by then: two blocks taken in
    turn suffice. Reused memory saves the operating system supplying and
    zeroing fresh pages every level (``engine.buffers``), which costs more
    than the subtraction itself on wide data.
    """

    def __init__(self):
        self._memory, self._turn = [None, None], 0

    def take(self, n, shape, dtype) -> np.ndarray:
        """Room for ``n`` histograms of ``shape``: the block not taken last time."""
        self._turn ^= 1
        memory, shape = self._memory[self._turn], tuple(shape)
        if memory is None or memory.shape[1:] != shape or memory.dtype != dtype \
                or len(memory) < n:
            memory = self._memory[self._turn] = np.empty((n,) + shape, dtype)
        return memory[:n]


class TreeGrower:
    """Grows ``n_trees`` trees at once from one histogram source.

    Parameters
    ----------
    root_hist : ndarray of shape (n_trees, n_features, 256, n_stats), int64
    finder : SplitFinder
        The criterion, bins, growth parameters and features of the trees.
    build_level : callable
        ``build_level(splits: LevelSplits, n_slots) -> (hist, counts)``: routes
        the rows of the split nodes on every partition and returns the
        histograms of the built children (``hist[splits.slot[s]]``), or a
        tuple of histograms whose sum they are (the holders' partial sums),
        and the rows in each split's (left, right) children.
    root_counts : ndarray of shape (n_trees,), optional
        Rows in each root. Needed when the criterion's statistics hold no
        row count (``criterion.count`` is None): node counts then come from
        the waves, and every split is routed, the last level too.
    blocks : LevelBlocks, optional
        Memory that depth-wise levels reuse (``train`` keeps one per fit);
        by default each level allocates its own.
    defer_counts : bool
        Depth-wise: a last level that is routed only to count its children's
        rows (no child is built) is not sent; ``grow`` returns the trees with
        those counts at -1 and those splits' missing direction unsettled, and
        ``pending`` (``deferred.PendingCounts``, with its conditions) for a
        later wave to count.
    """

    def __init__(self, root_hist, *, finder: SplitFinder, build_level, root_counts=None,
                 blocks=None, defer_counts=False):
        self.finder, self.build_level = finder, build_level
        roots = [_root(finder, t, root_hist[t], None if root_counts is None else root_counts[t])
                 for t in range(root_hist.shape[0])]
        self.book = NodeBook(roots)
        self.policy = _policy(self.book, finder)
        # best-first keeps a frontier's histograms alive across waves: no reuse
        self.blocks = blocks if self.policy.whole_levels else None
        self.defer_counts = defer_counts and self.policy.whole_levels
        self.pending: PendingCounts | None = None  # the last level, counted by a later wave
        self.policy.start(finder.evaluate(list(enumerate(roots)), root_hist))

    def grow(self) -> list[Tree]:
        """Split until no allowed split has positive gain; return the trees."""
        while chosen := self.policy.next_splits():
            self._split(chosen)
        return self.trees()

    def trees(self) -> list[Tree]:
        """The trees as grown so far (final once ``grow`` and ``pending`` are done)."""
        return self.book.trees(self.finder.criterion, self.finder.mapper, self.finder.params)

    def _split(self, chosen):
        """Create children, then one wave: apply splits, histogram smaller children."""
        wave = [w for t, parent in chosen if (w := self._children(t, parent)) is not None]
        built, block = [], None
        if wave and self.defer_counts and not any(w[4] for w in wave):
            self.pending = PendingCounts(wave, self)  # the trees' last level
        elif wave:
            built, block = self._run_wave(wave)
        for _, parent in chosen:
            parent.expanded = True
        self.policy.wave_done(chosen, built, block)

    def _children(self, t, parent: Node):
        """Make ``parent``'s children; return its part of the wave, (tree,
        parent, smaller child, larger child, build the smaller?), or None.

        A split none of whose children may split again needs no histogram; it
        is routed all the same when only the workers can count its children.
        """
        criterion, f = self.finder.criterion, parent.feature
        left, parent.goes_left = criterion.left_stats(
            parent.hist[f], self.finder.mapper.is_categorical_[f], parent.split_bin,
            parent.missing_left)
        lchild, rchild = self.book.children(t, parent, left, self.policy.whole_levels)
        self.finder.constrain_children(parent, lchild, rchild)
        build = self.finder.splittable(lchild) or self.finder.splittable(rchild)
        lchild.count, rchild.count = criterion.count(left), criterion.count(rchild.totals)
        if lchild.count is None:  # counted by the wave
            parent.has_missing = criterion.has_missing(parent.hist[f])
        if not build:
            parent.hist = None
            if lchild.count is not None:
                return None
        size = criterion.size
        small, large = (lchild, rchild) if size(left) <= size(rchild.totals) else (rchild, lchild)
        return t, parent, small, large, build

    def _run_wave(self, wave):
        """Route the wave's splits and build the children's histograms (the
        larger by subtraction); return the built children and their block."""
        parts, counts = self.build_level(*wave_splits(wave))
        parts = (parts,) if isinstance(parts, np.ndarray) else tuple(parts)
        for s, (t, parent, *_) in enumerate(wave):
            self.book.set_child_counts(t, parent, counts[s])
        # children's histograms go straight into one block, in node order
        # (left, right), whatever child was built: the larger by subtraction
        built = [w for w in wave if w[4]]
        block = self._block(2 * len(built), parts[0].shape[1:], parts[0].dtype)
        new = []
        for slot, (t, parent, small, large, _) in enumerate(built):
            for n in sorted((small, large), key=lambda n: n.id):
                n.hist = block[len(new)]
                new.append((t, n))
            siblings(parts, slot, parent.hist, small.hist, large.hist)
            parent.hist = None
        return new, block

    def _block(self, n, shape, dtype) -> np.ndarray:
        """Room for a wave's ``n`` children's histograms."""
        if self.blocks is None or not n:
            return np.empty((n,) + tuple(shape), dtype)
        return self.blocks.take(n, shape, dtype)


def _policy(book: NodeBook, finder: SplitFinder) -> GrowthPolicy:
    """Depth-wise growth, or best-first with ``max_leaf_nodes``."""
    limit = finder.params.max_leaf_nodes
    return DepthWise(book, finder) if limit is None else BestFirst(book, finder, limit)


def _root(finder: SplitFinder, t, hist, count) -> Node:
    """Tree ``t``'s root, from its histogram (its totals: the bins of a
    feature the tree may use, summed) and, when the statistics hold no row
    count, its rows ``count``."""
    mask = finder.masks[t]
    root = Node(0, 0, hist[int(np.flatnonzero(mask)[0]) if mask.any() else 0].sum(axis=0))
    root.hist, root.exact = hist, 0
    if finder.params.interaction_cst is not None:
        root.sets = np.arange(len(finder.params.interaction_cst))
    root.count = finder.criterion.count(root.totals)  # None: the workers count
    if root.count is None:
        root.count = int(count)
    return root
