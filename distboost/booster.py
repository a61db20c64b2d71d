"""Forward stagewise additive modelling on the engine (ESL Algorithm 10.3).

Each round: gradients at the current margins (computed on the partitions),
one tree per output grown from histograms of (g, h), leaf values
-G/(H+lambda) shrunk by the learning rate, margins updated where the data
live. Random draws (row and column subsampling) are functions of
(random_state, round) and of the global row id, never of the partitioning.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ._random import splitmix64
from .grower import GrowthParams, TreeGrower
from .tree import pack_trees


@dataclass
class BoostParams:
    n_rounds: int
    growth: GrowthParams
    seed: int = 0
    subsample: float = 1.0
    colsample_bytree: float = 1.0
    early_stopping_rounds: int | None = None
    train_metric: bool = False


@dataclass
class BoostResult:
    trees: list = field(default_factory=list)  # per round: list of K trees
    train_metric: list = field(default_factory=list)
    eval_metrics: list = field(default_factory=list)  # per eval set: list per round
    best_iteration: int | None = None


def fixed_point_scales(maxabs, n_rows: int) -> tuple[float, float]:
    """Powers of two that map |g| and h into int64 without overflow of any sum.

    With scale 2^e, e = floor(61 - log2(max|v| * n_rows)), the sum over all
    rows of round(v * scale) stays below 2^62 in magnitude.
    """
    scales = []
    for m in maxabs:
        if not math.isfinite(m):
            raise FloatingPointError(
                "gradients overflowed (inf or NaN); check the target for extreme values "
                "or lower the learning rate"
            )
        scales.append(1.0 if m <= 0 else 2.0 ** math.floor(61 - math.log2(m * max(n_rows, 1))))
    return tuple(scales)


def feature_masks(n_trees, n_features, fraction, seed, round_index) -> np.ndarray:
    """Features each tree of a round may use (column subsampling by tree)."""
    masks = np.ones((n_trees, n_features), bool)
    if fraction >= 1.0:
        return masks
    k = max(1, int(round(fraction * n_features)))
    for t in range(n_trees):
        key = int(splitmix64(np.uint64((seed * 1_000_003 + round_index * 131 + t) & (2**63 - 1))))
        chosen = np.random.default_rng(key).choice(n_features, size=k, replace=False)
        masks[t] = False
        masks[t, chosen] = True
    return masks


def boost(engine, loss, n_outputs: int, params: BoostParams, first_round: int = 0,
          on_round=None) -> BoostResult:
    """Run boosting rounds ``first_round .. first_round + n_rounds - 1``.

    ``on_round(round_index, train_metric, eval_metrics)`` is called after each
    round; returning True stops training.
    """
    result = BoostResult(eval_metrics=[[] for _ in engine.eval_shards])
    timings = engine.timings
    maxabs, _, _ = engine.advance(None, loss, True, False)
    best, best_round = np.inf, None
    for r in range(first_round, first_round + params.n_rounds):
        t0 = time.perf_counter()
        trees = _grow_round(engine, r, n_outputs, params, maxabs)
        last = r == first_round + params.n_rounds - 1
        packed = (*pack_trees(trees), np.arange(n_outputs, dtype=np.int64))
        maxabs, tm, evals = engine.advance(packed, loss, not last, params.train_metric)
        result.trees.append(trees)
        if tm is not None:
            result.train_metric.append(tm)
        for k, value in enumerate(evals):
            result.eval_metrics[k].append(value)
        timings["train"] += time.perf_counter() - t0
        stop = bool(on_round(r, tm, evals)) if on_round else False
        if evals and params.early_stopping_rounds:
            if evals[-1] < best:
                best, best_round = evals[-1], len(result.trees) - 1
            elif len(result.trees) - 1 - best_round >= params.early_stopping_rounds:
                stop = True
        if stop:
            break
    if best_round is not None:
        result.best_iteration = best_round
        result.trees = result.trees[: best_round + 1]
    return result


def _grow_round(engine, r, n_outputs, params: BoostParams, maxabs):
    scales = fixed_point_scales(maxabs, engine.n_rows)
    masks = feature_masks(n_outputs, engine.schema.n_features, params.colsample_bytree,
                          params.seed, r)
    features = np.flatnonzero(masks.any(axis=0))
    root = engine.root(scales, params.seed, r, params.subsample, features)
    t0 = time.perf_counter()

    def build_level(split_arrays, slot_of_node, n_slots):
        t1 = time.perf_counter()
        hist = engine.level(split_arrays, slot_of_node, n_slots, features)
        nonlocal t0
        t0 += time.perf_counter() - t1
        return hist

    grower = TreeGrower(root, build_level, engine.mapper, params.growth, scales, masks)
    trees = grower.grow()
    engine.timings["split_finding"] += time.perf_counter() - t0
    engine.end_tree()
    return trees
