"""The best split of each node, within the features and bounds its path allows.

The split search itself is the criterion's (``kernels.splitting``,
``kernels.criteria``: Chen & Guestrin 2016, eq. 7; ESL 9.2.3); here is what
decides which features a node may use (the tree's columns, interaction
constraints, the per-node draws) and within what bounds its value lies
(monotone constraints), and what its children inherit of both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..kernels.bounds import child_bounds
from .params import Criterion, GrowthParams


@dataclass
class SplitFinder:
    """What a round's trees may split on, and how their splits are found.

    Parameters
    ----------
    criterion : Criterion
        Split search and node values over the histograms' statistics.
    mapper : BinMapper
    params : GrowthParams
    masks : ndarray of shape (n_trees, n_features), bool
        Features each tree may split on (column subsampling by tree).
    node_features : callable, optional
        ``node_features(masks, hist, nodes) -> masks``: the features each of a
        block of nodes may split on, from their trees' masks (n_nodes,
        n_features), their histograms and their (tree, depth, node_id):
        boosting's column subsampling by level and by node
        (``sampling.NodeFeatures``) or the forests' per-node subsets
        (``sampling.NodeFeatureSampler``); by default the trees' masks.
    """

    criterion: Criterion
    mapper: Any
    params: GrowthParams
    masks: np.ndarray
    node_features: Any = None

    def splittable(self, node) -> bool:
        """Whether ``node`` may split: above the depth limit, and the criterion allows it."""
        p = self.params
        return (p.max_depth is None or node.depth < p.max_depth) and self.criterion.splittable(node.totals)

    def evaluate(self, pairs, block):
        """Best split of each node; return the (tree, node) pairs with a
        positive gain (the others drop their histograms).

        ``block[k]`` is the histogram of ``pairs[k]``; nodes that may not split
        are scanned with no feature allowed (so no copy of the block is made).
        """
        splittable = np.array([self.splittable(n) for _, n in pairs], bool)
        if not splittable.any():
            for _, n in pairs:
                n.hist = None
            return []
        totals = np.stack([n.totals for _, n in pairs])
        masks = self._masks(pairs, block)
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

    def _masks(self, pairs, block) -> np.ndarray:
        """Features each node may split on: its tree's, within its
        interaction sets, then the per-node hook's."""
        masks = np.stack([self.masks[t] for t, _ in pairs])
        allowed = self._interaction_masks(pairs)
        if allowed is not None:
            masks &= allowed
        if self.node_features is not None:
            masks = self.node_features(masks, block, [(t, n.depth, n.exact) for t, n in pairs])
            if allowed is not None:  # a hook may draw from its own sets (boosting's by level)
                masks = masks & allowed
        return masks

    def _interaction_masks(self, pairs):
        """Features each node may split on under interaction constraints: the
        union of the sets its path is still within (scikit-learn's
        ``_compute_interactions``; XGBoost's ``FeatureInteractionConstraint``),
        or None without constraints."""
        sets = self.params.interaction_cst
        if sets is None:
            return None
        return np.stack([sets[n.sets].any(axis=0) for _, n in pairs])

    def constrain_children(self, parent, lchild, rchild):
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
