"""Growing a forest on the engine, many trees per pass over the data.

Trees are independent, so a batch of B trees is grown together: the root
histograms of all B trees come from one pass, and each level of all B trees
from one more, so a forest of M trees of depth D costs about (M / B)·(D + 1)
passes instead of M·(D + 1). Every random choice is a function of
(random_state, global tree index, node id or global row id), so a tree does
not depend on the batch it was grown in, nor on the partitioning.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..kernels import exact
from ..kernels.criteria import ImpurityCriterion, VarianceCriterion
from ..kernels.fixed_point import fixed_point_scales
from ..kernels.sampling import NodeFeatureSampler
from ..kernels.tree import pack_trees
from ..learners.bagged import (
    MAX_MULTIPLICITY,
    BaggedTreesLearner,
    OutOfBagBatch,
    out_of_bag_result,
)
from ..trees.params import GrowthParams
from .loop import RoundSpec, train

STATS_BUDGET = 192 * 2**20
"""Bytes of per-row statistics a worker group may hold for one batch."""
HIST_BUDGET = 128 * 2**20
"""Bytes of histograms the widest level of a batch may hold. The histogram
bytes of a forest do not depend on the batching; larger batches save passes
but make every wave's arrays larger (on W1, 200k rows, depth 8, batches of ~6
trees fitted faster in process than batches of 24)."""
MAX_TREES_PER_PASS = 64


@dataclass(frozen=True)
class ForestSpec:
    """How the trees of a forest are sampled and grown."""

    n_estimators: int
    n_classes: int | None  # None: regression
    criterion: str
    growth: GrowthParams
    min_samples_leaf: int
    node_max_features: int | None  # features tried per node (random forests)
    tree_masks: np.ndarray  # (n_estimators, n_features): features per tree (subspaces)
    bootstrap: bool
    rate: float  # Poisson / Bernoulli parameter of a row's multiplicity
    seed: int
    oob: bool
    trees_per_pass: int | None = None


@dataclass
class OutOfBag:
    """Out-of-bag estimates (Breiman 2001; ESL 15.3.1: the rows a tree never saw validate it)."""

    prediction: np.ndarray  # (n_rows, n_out), NaN where no tree left the row out
    score: float


@dataclass
class ForestResult:
    trees: list
    oob: OutOfBag | None
    trees_per_pass: int
    n_passes: int  # waves of tasks over the data (root and level histograms)


def grow_forest(engine, spec: ForestSpec, events=None) -> ForestResult:
    """Grow ``spec.n_estimators`` trees, ``trees_per_pass`` at a time.

    ``events`` (``events.FitEvents``) posts each batch as a round numbered
    by its last tree, and the out-of-bag score at the end.
    """
    events = events.start(spec.n_estimators) if events is not None else None
    forest = _Forest(engine, spec, events)
    engine.set_rows(_learner(spec, forest.scales, 0, 1), None, None)
    log = train(engine, forest, range(-(-spec.n_estimators // forest.batch)))
    n_passes = log.n_levels + log.n_rounds
    oob = forest.oob
    if events is not None:
        events.end(len(forest.trees), **({} if oob is None else {"oob_score": float(oob.score)}))
    return ForestResult(forest.trees, oob, forest.batch, n_passes)


class _Forest:
    """A forest as a ``training.Ensemble``: round b grows trees ``b·B .. b·B + B - 1``
    (each on its own sample of rows); their out-of-bag predictions are the update."""

    def __init__(self, engine, spec: ForestSpec, events):
        self.engine, self.spec, self.events = engine, spec, events
        self.growth = spec.growth
        self.scales = _scales(engine, spec)
        here = engine.grows_here(_criterion(spec, self.scales), spec.growth,
                                 _node_features(spec, 0))
        self.batch = spec.trees_per_pass or auto_trees_per_pass(engine, spec, here)
        self.trees, self.oob, self.learner, self.first = [], None, None, 0

    def begin(self, b, update) -> RoundSpec:
        spec = self.spec
        self.first = first = b * self.batch
        n = min(self.batch, spec.n_estimators - first)
        self.learner = _learner(spec, self.scales, first, n)
        masks = spec.tree_masks[first: first + n]
        return RoundSpec(self.learner, _criterion(spec, self.scales),
                         np.flatnonzero(masks.any(axis=0)), masks, _node_features(spec, first),
                         round_index=first)

    def measured(self, b, train_metric, eval_metrics) -> bool:
        return False

    def grown(self, b, trees):
        self.trees += trees
        if self.events is not None:
            self.events.round(len(self.trees) - 1, {}, trees, trees_grown=len(self.trees))
        if not self.spec.oob:
            return None
        return OutOfBagBatch(pack_trees(trees), node_values(trees), self.first)

    def end(self, update) -> None:
        """Out-of-bag estimates: the last batch's predictions added, then scored."""
        if self.spec.oob:
            self.engine.finish(self.learner, update, False)
            self.oob = _out_of_bag(self.engine, self.spec.n_classes is None)


def auto_trees_per_pass(engine, spec: ForestSpec, here: bool = False) -> int:
    """Largest batch whose statistics and widest level fit the budgets.

    ``here``: the trees grow where the rows are (``Engine.grows_here``), whose
    histograms stay within a budget of their own (``kernels.local_grower``;
    none at all with per-node features): the statistics alone bound the batch.
    """
    n_stats = 3 if spec.n_classes is None else spec.n_classes + 1
    rows = engine.n_rows / max(1, len(engine.groups))
    per_tree_stats = rows * (8 * n_stats + 4)
    if here:
        return int(max(1, min(STATS_BUDGET // per_tree_stats, MAX_TREES_PER_PASS,
                              spec.n_estimators)))
    g = spec.growth
    widest = 2 ** (g.max_depth - 1) if g.max_depth is not None else np.inf
    if g.max_leaf_nodes is not None:
        widest = min(widest, g.max_leaf_nodes)
    widest = min(widest, max(1.0, engine.n_rows / (2 * spec.min_samples_leaf)))
    per_node = engine.schema.n_features * 256 * n_stats * 8
    if widest * per_node > HIST_BUDGET:
        warnings.warn(
            f"trees may reach {int(widest)} nodes in one level, and each node built holds a "
            f"{per_node / 2**20:.2f} MB histogram ({engine.schema.n_features} features x 256 "
            f"bins x {n_stats} statistics), up to {widest * per_node / 2**30:.1f} GB per level: "
            f"set max_depth or max_leaf_nodes (or raise min_samples_leaf) for data this large",
            ResourceWarning, stacklevel=5,
        )
    per_tree_hist = min(widest, 4096) * per_node
    n = min(STATS_BUDGET // per_tree_stats, HIST_BUDGET // per_tree_hist, MAX_TREES_PER_PASS)
    return int(max(1, min(n, spec.n_estimators)))


def node_values(trees) -> np.ndarray:
    """Per packed node: class frequencies (classification) or the value (regression)."""
    if trees[0].leaf_values is not None:
        return np.concatenate([t.leaf_values for t in trees])
    return np.concatenate([t.nodes["value"] for t in trees])[:, None]


def _learner(spec, scales, first, n):
    return BaggedTreesLearner(spec.n_classes, spec.seed, spec.rate, spec.bootstrap, scales,
                              first, n, spec.oob)


def _scales(engine, spec):
    bound = engine.w_max * MAX_MULTIPLICITY
    if spec.n_classes is None:
        return fixed_point_scales([bound * engine.y_absmax, bound], engine.n_rows)
    scale = fixed_point_scales([bound], engine.n_rows)[0]
    return (scale, scale)


def _criterion(spec, scales):
    if spec.n_classes is None:
        return VarianceCriterion(scales, spec.min_samples_leaf)
    return ImpurityCriterion(spec.n_classes, spec.criterion, scales[0], spec.min_samples_leaf)


def _node_features(spec, first_tree):
    """The forests' per-node feature subsets, keyed by global tree index (or None)."""
    if spec.node_max_features is None:
        return None
    n_stats = 3 if spec.n_classes is None else spec.n_classes + 1
    return NodeFeatureSampler(spec.node_max_features, spec.seed, first_tree, n_stats - 1)


def _out_of_bag(engine, regression: bool) -> OutOfBag:
    parts = engine.each_partition(out_of_bag_result, "out-of-bag", regression)
    parts.sort(key=lambda p: p[0])
    prediction = np.concatenate([p[1] for p in parts])
    sums = [sum(col) for col in zip(*(p[2] for p in parts))]
    if not regression:
        w = exact.to_float(sums[1])
        return OutOfBag(prediction, exact.to_float(sums[0]) / w if w > 0 else float("nan"))
    sse, w, wy, wy2 = sums  # exact integers in units of 2**-_OFFSET
    if w == 0:
        return OutOfBag(prediction, float("nan"))
    # R^2 = 1 - SSE / SST with SST = sum w y^2 - (sum w y)^2 / sum w, exactly
    from fractions import Fraction

    sst = Fraction(wy2) - Fraction(wy * wy, w)
    score = 1.0 - float(Fraction(sse) / sst) if sst > 0 else float("nan")
    return OutOfBag(prediction, score)
