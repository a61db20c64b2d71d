"""Grow a batch of trees from summed histograms.

The grower runs on the driver and only sees small things: histograms summed
over all partitions, node totals and split tables. Each wave of work on the
partitions applies the chosen splits and histograms the smaller child of each;
the larger child's histogram is the parent's minus the smaller one's
(histogram subtraction). Depth-wise growth splits every splittable node of a
level in one wave. Best-first growth (``max_leaf_nodes``, the J of ESL 10.11)
splits, in each tree, the leaf with the largest gain; so that it does not pay
one wave per split, a wave expands the best few leaves of the frontier at
once (speculatively: their children's histograms are built), and the
expansions are then taken in exact best-first order. A wave's expansions
need not be leaves yet: a child that an earlier wave built has its split
too, and is expanded before its parent is taken when it is likely to be,
so a wave can serve several branches of the tree a level deeper each.
Another wave is needed only when that order reaches a leaf that was not
expanded; an expansion the order never reaches is dropped (its node stays a
leaf). Node ids are given in the order splits are taken, so the trees are
those of one split per wave.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .bounds import child_bounds
from .common import MAX_BINS, MISSING_BIN, N_BITSET_WORDS, NODE_DTYPE
from .histogram import LevelSplits, siblings
from .tree import Tree, bitset_from_mask


class Criterion(Protocol):
    """What the grower asks of a criterion: split search and node values over
    the statistics of histograms (``splitting.GradientCriterion``,
    ``criteria.ImpurityCriterion``, ``criteria.VarianceCriterion``).

    ``hist`` is (n_nodes, n_features, 256, n_stats) and ``hist_f`` one node's
    (256, n_stats) for one feature; ``totals`` is a node's (n_stats,) sums;
    all int64 fixed point. A criterion may also define
    ``node_vector(totals, lower, upper) -> ndarray``: a vector per node (class
    frequencies), kept in ``Tree.vectors``.
    """

    n_stats: int
    """Statistics per row and bin."""

    def best_splits(self, hist, totals, masks, mapper, constraints=None) -> tuple:
        """Per node: (gain, feature, split bin, missing goes left), arrays of
        length n_nodes (gain <= 0: no split); ``constraints`` is (monotonic,
        lower, upper) or None."""

    def left_stats(self, hist_f, is_cat: bool, split_bin: int,
                   missing_left: bool) -> tuple[np.ndarray, np.ndarray]:
        """The left child's totals, and which bins go left (256 bools)."""

    def splittable(self, totals) -> bool:
        """Whether a node with these totals may be split at all."""

    def node_value(self, totals, lower: float = -np.inf, upper: float = np.inf) -> float:
        """The node's value (before the learning rate), within [lower, upper]."""

    def bound_value(self, totals) -> float:
        """The value monotone constraints order."""

    def size(self, totals) -> float:
        """What decides the smaller child, the one whose histogram is built."""

    def count(self, totals) -> int | None:
        """Rows in the node; None when the statistics hold no row count (then
        the waves count them)."""

    def has_missing(self, hist_f) -> bool:
        """Whether the node has rows in the missing bin of this feature."""

    def cover(self, totals) -> float:
        """The node's cover (hessian sum, or class weight), for the tree and SHAP."""



SPECULATIVE_SPLITS = 8
"""Best-first growth: nodes a wave expands at most, per tree (the best leaf,
and the nodes the order is likeliest to take next: ``TreeGrower._speculate``).
On W1 (1M rows, 63 leaves, 50 trees) 8 took 615 waves, against 581 for
expanding every node with a split each wave, and 26 % more expansions than
splits taken; 4 took 880 waves and 6 took 685 (11 % more expansions)."""


@dataclass
class GrowthParams:
    """How far trees grow, what their paths may combine, and how leaves are scaled.

    ``monotonic_cst`` (n_features,) int8 of -1 / 0 / +1 and ``interaction_cst``
    (n_sets, n_features) bool are ``constraints``' resolved forms (None: none).
    """

    max_depth: int | None = 6
    max_leaf_nodes: int | None = None
    learning_rate: float = 1.0
    monotonic_cst: np.ndarray | None = None
    interaction_cst: np.ndarray | None = None


@dataclass
class NodeTable:
    """One grown tree's nodes in id order, as arrays (``tree_from_table``).

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


def tree_from_table(table: NodeTable, criterion, mapper, learning_rate: float) -> Tree:
    """The ``Tree`` of a node table: values (times the learning rate), covers,
    and vectors from the criterion; thresholds from the bins. Fields a node
    has no use for are zero (or -1 for its feature, children and categories)."""
    bounds = (table.lower, table.upper)
    split = table.split
    rec = np.empty(len(split), NODE_DTYPE)
    rec["value"] = learning_rate * criterion.node_values(table.totals, *bounds)
    rec["count"] = table.count
    rec["cover"] = criterion.covers(table.totals)
    rec["depth"] = table.depth
    rec["is_leaf"] = ~split
    rec["gain"] = np.where(split, table.gain, 0.0)
    rec["missing_left"] = split & table.missing_left
    feature = np.where(split, table.feature, -1)
    rec["feature"] = feature
    rec["left"] = np.where(split, table.left, -1)
    rec["right"] = np.where(split, table.right, -1)
    is_cat = split & mapper.is_categorical_[np.maximum(feature, 0)]
    numeric = split & ~is_cat
    rec["is_categorical"] = is_cat
    rec["cat_index"] = np.where(is_cat, np.cumsum(is_cat) - 1, -1)
    split_bin = np.where(numeric, table.split_bin, 0)
    rec["bin_threshold"] = split_bin
    rec["threshold"] = np.where(numeric, mapper.bin_threshold_values(np.maximum(feature, 0),
                                                                     split_bin), 0.0)
    bits = np.array([bitset_from_mask(table.directions[table.categories[k]])
                     for k in np.flatnonzero(is_cat)], np.uint64).reshape(-1, N_BITSET_WORDS)
    vectors = criterion.node_vectors(table.totals, *bounds) \
        if hasattr(criterion, "node_vectors") else None
    tree = Tree(rec, bits, vectors)
    if table.lower is not None:  # for the line search, which sets the leaves again within bounds
        tree.bounds = np.column_stack([table.lower, table.upper])
    return tree


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


class _Node:
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


class TreeGrower:
    """Grows ``n_trees`` trees at once from one histogram source.

    Parameters
    ----------
    root_hist : ndarray of shape (n_trees, n_features, 256, n_stats), int64
    build_level : callable
        ``build_level(splits: LevelSplits, n_slots) -> (hist, counts)``: routes
        the rows of the split nodes on every partition and returns the
        histograms of the built children (``hist[splits.slot[s]]``), or a
        tuple of histograms whose sum they are (the holders' partial sums),
        and the rows in each split's (left, right) children.
    mapper : BinMapper
    params : GrowthParams
    criterion : Criterion
        Split search and node values over the histograms' statistics.
    feature_masks : ndarray of shape (n_trees, n_features), bool
        Features each tree may split on (column subsampling by tree).
    node_features : callable, optional
        ``node_features(masks, hist, nodes) -> masks``: the features each of a
        block of nodes may split on, from their trees' masks (n_nodes,
        n_features), their histograms and their (tree, depth, node_id):
        boosting's column subsampling by level and by node
        (``sampling.NodeFeatures``) or the forests' per-node subsets
        (``sampling.NodeFeatureSampler``); by default the trees' masks.
    root_counts : ndarray of shape (n_trees,), optional
        Rows in each root. Needed when the criterion's statistics hold no
        row count (``criterion.count`` is None): node counts then come from
        the waves, and every split is routed, the last level too.
    blocks : LevelBlocks, optional
        Memory that depth-wise levels reuse (``train`` keeps one per fit);
        by default each level allocates its own.
    defer_counts : bool
        Depth-wise: a last level that is routed only to count its children's
        rows (the statistics hold no count, and no child is built) is not
        sent; ``grow`` returns the trees with those counts at -1 and those
        splits' missing direction unsettled, and ``deferred_splits`` for the
        next wave to route (the next round start), whose counts ``complete``
        takes. Only for rows that all take part in the round (weights > 0,
        no row sampling) and no evaluation rows: the unsettled missing
        direction then sends no row elsewhere than the final one would.
    """

    def __init__(self, root_hist, build_level, mapper, params: GrowthParams, criterion: Criterion,
                 feature_masks, node_features=None, root_counts=None, blocks=None,
                 defer_counts=False):
        self.node_features = node_features
        self.build_level = build_level
        self.mapper = mapper
        self.params = params
        self.criterion = criterion
        self.masks = feature_masks
        self.n_trees = root_hist.shape[0]
        self.best_first = params.max_leaf_nodes is not None
        # best-first keeps a frontier's histograms alive across waves: no reuse
        self.blocks = None if self.best_first else blocks
        # with per-node features drawn by node id, children are evaluated once
        # their ids are known: when their parent's split is taken
        self.lazy = self.best_first and node_features is not None
        self.defer_counts = defer_counts and not self.best_first
        self.deferred = None  # the last level's wave, when its counts are left to a later wave
        self.nodes, self.n_leaves = [], [1] * self.n_trees
        for t in range(self.n_trees):
            f0 = int(np.flatnonzero(feature_masks[t])[0]) if feature_masks[t].any() else 0
            root = _Node(0, 0, root_hist[t, f0].sum(axis=0))
            root.hist, root.exact = root_hist[t], 0
            if params.interaction_cst is not None:
                root.sets = np.arange(len(params.interaction_cst))
            root.count = self.criterion.count(root.totals)  # None: the workers count
            if root.count is None:
                root.count = int(root_counts[t])
            self.nodes.append([root])
        self.n_exact = [1] * self.n_trees  # exact ids given so far, per tree
        self.candidates = [[] for _ in range(self.n_trees)]  # best-first: the frontier
        self.known = [[] for _ in range(self.n_trees)]  # nodes with a split, not expanded
        roots = [(t, self.nodes[t][0]) for t in range(self.n_trees)]
        self._add_candidates(self._evaluate(roots, root_hist))
        self.n_expanded = 0  # splits expanded in waves (best-first: some may go unused)

    # ------------------------------------------------------------------ loop
    def grow(self) -> list[Tree]:
        """Split until no allowed split has positive gain; return the trees."""
        while True:
            chosen = self._choose()
            if not chosen:
                break
            self._split(chosen)
        return [self._make_tree(t) for t in range(self.n_trees)]

    def _choose(self):
        """The (tree, node) pairs to split in the next wave."""
        if not self.best_first:
            chosen = [(t, n) for t in range(self.n_trees) for n in self.candidates[t]]
            self.candidates = [[] for _ in range(self.n_trees)]
            return chosen
        return [(t, n) for t in range(self.n_trees) for n in self._take_best_first(t)]

    def _take_best_first(self, t) -> list:
        """Take tree ``t``'s splits in best-first order (largest gain, then
        smallest id) as long as the best leaf is expanded; return the nodes
        to expand in the next wave (none: the tree is done).

        The next wave expands the best leaf and, speculatively, the nodes
        the order is likeliest to take next (``_speculate``), at most
        ``SPECULATIVE_SPLITS`` and never more than the splits the tree may
        still take.
        """
        frontier, limit = self.candidates[t], self.params.max_leaf_nodes
        while frontier and self.n_leaves[t] < limit:
            best = max(frontier, key=lambda n: (n.gain, -n.exact))
            if not best.expanded:
                return self._speculate(t, best, min(SPECULATIVE_SPLITS, limit - self.n_leaves[t]))
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
        others = sorted((n for n in known if n is not best), key=lambda n: -self._outlook(n))
        return [best] + others[:room - 1]

    @staticmethod
    def _outlook(node) -> float:
        """The smallest gain on ``node``'s path up to the tree taken so far:
        how large the frontier's best gain may be when the order takes it."""
        gain, parent = node.gain, node.parent
        while parent is not None and not parent.adopted:
            gain, parent = min(gain, parent.gain), parent.parent
        return gain

    def _adopt(self, t, parent):
        """Take ``parent``'s split into tree ``t``: its children get their ids."""
        parent.adopted = True
        self.n_leaves[t] += 1
        children = [self.nodes[t][parent.left], self.nodes[t][parent.right]]
        for child in children:
            if child.exact < 0:
                child.exact = self.n_exact[t]
                self.n_exact[t] += 1
        if self.lazy:
            built = [c for c in children if c.hist is not None]
            if built:
                pairs = [(t, c) for c in built]
                self._add_candidates(self._evaluate(pairs, np.stack([c.hist for c in built])))
        else:
            self.candidates[t] += [c for c in children if c.gain > 0]

    def _add_candidates(self, pairs):
        for t, node in pairs:
            self.candidates[t].append(node)
            self.known[t].append(node)

    def _splittable(self, node) -> bool:
        p = self.params
        return (p.max_depth is None or node.depth < p.max_depth) and self.criterion.splittable(node.totals)

    def _constrain_children(self, parent, lchild, rchild):
        """Children's bounds and interaction sets.

        Monotone constraints (XGBoost's ``TreeEvaluator::AddSplit``, scikit-learn's
        grower): children start from the parent's bounds; a split on a
        constrained feature cuts them at the midpoint of the two children's
        values (clipped to the parent's bounds), the left child below it for an
        increasing constraint, above it for a decreasing one. Interaction
        constraints: a child keeps the parent's sets that hold the split feature.
        """
        p = self.params
        if p.monotonic_cst is not None:
            c = int(p.monotonic_cst[parent.feature])
            values = [self.criterion.bound_value(n.totals) if c else 0.0 for n in (lchild, rchild)]
            (lchild.lower, lchild.upper), (rchild.lower, rchild.upper) = child_bounds(
                parent.lower, parent.upper, c, *values)
        if parent.sets is not None:
            keep = parent.sets[p.interaction_cst[parent.sets, parent.feature]]
            lchild.sets = rchild.sets = keep

    def _split(self, chosen):
        """Create children, then one wave: apply splits, histogram smaller children.

        A split none of whose children may split again needs no histogram; it
        is routed all the same when only the workers can count its children.
        """
        wave = []  # (tree, parent, smaller child, larger child, build the smaller?)
        size = self.criterion.size
        for t, parent in chosen:
            f = parent.feature
            left, parent.goes_left = self.criterion.left_stats(
                parent.hist[f], self.mapper.is_categorical_[f], parent.split_bin, parent.missing_left
            )
            nodes = self.nodes[t]
            lchild = _Node(len(nodes), parent.depth + 1, left, parent)
            rchild = _Node(len(nodes) + 1, parent.depth + 1, parent.totals - left, parent)
            parent.left, parent.right = lchild.id, rchild.id
            if not self.best_first:  # splits are taken in wave order: ids are known
                lchild.exact, rchild.exact = lchild.id, rchild.id
            nodes += [lchild, rchild]
            self._constrain_children(parent, lchild, rchild)
            build = self._splittable(lchild) or self._splittable(rchild)
            lchild.count, rchild.count = self.criterion.count(left), self.criterion.count(rchild.totals)
            if lchild.count is None:  # counted by the wave
                parent.has_missing = self.criterion.has_missing(parent.hist[f])
            if not build:
                parent.hist = None
                if lchild.count is not None:
                    continue
            small, large = (lchild, rchild) if size(left) <= size(rchild.totals) else (rchild, lchild)
            wave.append((t, parent, small, large, build))
        if wave and self.defer_counts and not any(w[4] for w in wave):
            self.deferred = wave  # the tree's last level: counted by a later wave (``complete``)
        elif wave:
            self._run_wave(wave)
        for t, parent in chosen:
            parent.expanded = True
        self.n_expanded += len(chosen)
        if not self.best_first:  # depth-wise: every split is taken at once, in wave order
            for t, parent in chosen:
                self._adopt(t, parent)

    def _run_wave(self, wave):
        """Route the wave's splits and build the children's histograms (the
        larger by subtraction); evaluate the children unless that must wait."""
        parts, counts = self.build_level(*self._wave_splits(wave))
        parts = (parts,) if isinstance(parts, np.ndarray) else tuple(parts)
        for s, (t, parent, *_) in enumerate(wave):
            self._set_child_counts(t, parent, counts[s])
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
        if new and not self.lazy:
            evaluated = self._evaluate(new, block)
            if self.best_first:  # their splits are known: they may be expanded
                for t, node in evaluated:
                    self.known[t].append(node)

    @property
    def deferred_splits(self):
        """The ``LevelSplits`` of the level left to a later wave, or None."""
        return None if self.deferred is None else self._wave_splits(self.deferred)[0]

    def complete(self, counts) -> list[Tree]:
        """The trees, final: ``counts`` (n_splits, 2) are the rows of the
        deferred splits' (left, right) children, as that level's wave counts them."""
        for s, (t, parent, *_) in enumerate(self.deferred):
            self._set_child_counts(t, parent, counts[s])
        self.deferred = None
        return [self._make_tree(t) for t in range(self.n_trees)]

    def _block(self, n, shape, dtype) -> np.ndarray:
        """Room for a wave's ``n`` children's histograms."""
        if self.blocks is None or not n:
            return np.empty((n,) + tuple(shape), dtype)
        return self.blocks.take(n, shape, dtype)

    def _set_child_counts(self, t, parent, counts):
        """Children's rows as routed; without missing values in the node,
        missing goes to the child with more rows (``splitting``)."""
        lchild, rchild = self.nodes[t][parent.left], self.nodes[t][parent.right]
        if lchild.count is not None:
            return
        lchild.count, rchild.count = int(counts[0]), int(counts[1])
        if not parent.has_missing:
            parent.missing_left = lchild.count >= rchild.count
            parent.goes_left[MISSING_BIN] = parent.missing_left

    @staticmethod
    def _wave_splits(wave):
        """The wave's split table: every routed parent; a parent whose smaller
        child is built sends its histogram to the next free slot (-1: none)."""
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

    def _evaluate(self, pairs, block):
        """Best split of each node; return the (tree, node) pairs with a
        positive gain (the others drop their histograms).

        ``block[k]`` is the histogram of ``pairs[k]``; nodes that may not split
        are scanned with no feature allowed (so no copy of the block is made).
        """
        splittable = np.array([self._splittable(n) for _, n in pairs], bool)
        if not splittable.any():
            for _, n in pairs:
                n.hist = None
            return []
        totals = np.stack([n.totals for _, n in pairs])
        masks = np.stack([self.masks[t] for t, _ in pairs])
        allowed = self._interaction_masks(pairs)
        if allowed is not None:
            masks &= allowed
        if self.node_features is not None:
            masks = self.node_features(masks, block, [(t, n.depth, n.exact) for t, n in pairs])
            if allowed is not None:  # a hook may draw from its own sets (boosting's by level)
                masks = masks & allowed
        masks[~splittable] = False
        extra = ()
        if self.params.monotonic_cst is not None:
            extra = ((self.params.monotonic_cst, np.array([n.lower for _, n in pairs]),
                      np.array([n.upper for _, n in pairs])),)
        gain, feature, split_bin, missing_left = self.criterion.best_splits(
            block, totals, masks, self.mapper, *extra
        )
        positive = []
        for k, (t, node) in enumerate(pairs):
            if splittable[k] and np.isfinite(gain[k]) and gain[k] > 0:
                node.gain, node.feature = float(gain[k]), int(feature[k])
                node.split_bin, node.missing_left = int(split_bin[k]), bool(missing_left[k])
                positive.append((t, node))
            else:
                node.hist = None
        return positive

    def _interaction_masks(self, pairs):
        """Features each node may split on under interaction constraints: the
        union of the sets its path is still within (scikit-learn's
        ``_compute_interactions``; XGBoost's ``FeatureInteractionConstraint``),
        or None without constraints."""
        sets = self.params.interaction_cst
        if sets is None:
            return None
        return np.stack([sets[n.sets].any(axis=0) for _, n in pairs])

    # ---------------------------------------------------------------- output
    def _make_tree(self, t) -> Tree:
        """Tree ``t``'s nodes in id order; an expansion never taken stays a leaf."""
        made = self.nodes[t]
        nodes = sorted((n for n in made if n.exact >= 0), key=lambda n: n.exact)
        split = [n.adopted for n in nodes]
        categorical = [n.goes_left for n in nodes if n.adopted and n.goes_left is not None]
        bounded = self.params.monotonic_cst is not None
        table = NodeTable(
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
        return tree_from_table(table, self.criterion, self.mapper, self.params.learning_rate)
