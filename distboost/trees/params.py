"""What a grower is given: the criterion's interface, and how far trees grow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


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
