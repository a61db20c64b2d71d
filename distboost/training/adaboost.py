"""AdaBoost's rounds (ESL Algorithm 10.1; SAMME and SAMME.R, Zhu et al. 2009,
Algorithms 2 and 4) on the engine: a weighted classification tree (step 2a),
its error (2b) and weight alpha (2c), and the weight update (2d) the next
round's wave applies on the workers.

``train_adaboost(engine, spec, events)`` runs them from an ``AdaBoostSpec``
and returns an ``AdaBoostResult``: the trees, their alphas and errors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..kernels import exact, libm
from ..kernels.criteria import ImpurityCriterion
from ..kernels.tree import pack_trees
from ..learners.adaboost import AdaBoostLearner, AdaBoostUpdate, round_sums
from ..trees.params import GrowthParams
from .loop import STOP, RoundSpec, train

GUESS_TOLERANCE = 1e-12
"""err within this of 1 - 1/K counts as guessing (rounding would give alpha ~ 1e-16)."""
PROBA_FLOOR = np.finfo(np.float64).eps
"""SAMME.R clips leaf probabilities here before taking logs (as scikit-learn)."""


@dataclass(frozen=True)
class AdaBoostSpec:
    """One AdaBoost fit: M rounds of K-class trees grown as ``growth`` says."""

    n_estimators: int
    n_classes: int
    algorithm: str  # "SAMME" or "SAMME.R"
    criterion: str  # the weak learners' split criterion (``kernels.criteria``)
    learning_rate: float
    growth: GrowthParams


@dataclass
class AdaBoostResult:
    """The weak learners G_m, their weights alpha_m (1 for SAMME.R) and errors err_m."""

    trees: list = field(default_factory=list)
    alphas: list = field(default_factory=list)
    errors: list = field(default_factory=list)


def train_adaboost(engine, spec: AdaBoostSpec, events) -> AdaBoostResult:
    """ESL Algorithm 10.1 / SAMME from w_i = 1/N (step 1) on the prepared engine.

    ``events`` (``events.FitEvents``) posts each round with its error and alpha.
    """
    total_weight = engine.exact_sums(_weights)[0]
    if total_weight <= 0:
        raise ValueError("sample_weight sums to zero; nothing to fit")
    engine.set_rows(AdaBoostLearner(spec.n_classes), total_weight, None)  # 1. w_i = 1/N
    events.start(spec.n_estimators, metric="weighted_error")
    rounds = _AdaBoostRounds(spec, engine, events)
    train(engine, rounds, range(spec.n_estimators))
    events.end(len(rounds.result.trees))
    return rounds.result


def samme_alpha(err: float, n_classes: int, learning_rate: float = 1.0) -> float:
    """alpha = nu·(log((1 - err) / err) + log(K - 1)), SAMME step 2(c)."""
    return learning_rate * (math.log((1.0 - err) / err) + math.log(n_classes - 1))


def round_error(engine, spec: AdaBoostSpec, tree) -> tuple[float, float, float]:
    """err_m (step 2b), the weights' sum and SAMME.R's update sum, exactly, from
    the workers (two numbers per partition travel)."""
    update = samme_r_update(spec, tree, 1.0) if spec.algorithm == "SAMME.R" else None
    parts = engine.each_partition(round_sums, "weighted-error", pack_trees([tree]), update)
    miss, w, wu = (exact.to_float(sum(col)) for col in zip(*parts))
    return miss / w, w, wu


def no_better_than_guessing(spec: AdaBoostSpec, err: float, m: int) -> bool:
    """SAMME needs err < 1 - 1/K (alpha > 0; Zhu et al. 2009, sec. 2); refuses
    to start without it."""
    k = spec.n_classes
    if spec.algorithm != "SAMME" or err < 1.0 - 1.0 / k - GUESS_TOLERANCE:
        return False
    if m == 0:
        raise ValueError(
            f"the first weak learner's weighted error {err:.4f} is no better than "
            f"guessing (>= 1 - 1/K = {1 - 1 / k:.4f}); AdaBoost cannot start: use "
            f"larger trees (max_depth / max_leaf_nodes) or check the features"
        )
    return True


def estimator_weight(spec: AdaBoostSpec, err: float, previous: list) -> float:
    """alpha_m (step 2c); for a perfect tree (err = 0, alpha = inf in the formula)
    any alpha above the others' sum lets it decide alone, as the limit does."""
    if spec.algorithm == "SAMME.R":
        return 1.0
    if err <= 0.0:
        return float(sum(previous)) + 1.0
    return samme_alpha(err, spec.n_classes, spec.learning_rate)


def weight_update(spec: AdaBoostSpec, tree, err, alpha, w_sum, wu_sum) -> AdaBoostUpdate:
    """Step 2(d) for the workers, with the normalizer z = sum of the new weights."""
    if spec.algorithm == "SAMME.R":
        return samme_r_update(spec, tree, wu_sum)
    z = w_sum * ((1.0 - err) + math.exp(alpha) * err)
    return AdaBoostUpdate(pack_trees([tree]), "SAMME", alpha, z)


def samme_r_update(spec: AdaBoostSpec, tree, z) -> AdaBoostUpdate:
    """SAMME.R's weight update (Zhu et al. 2009, Algorithm 4, 2(c)) from the leaves' log p."""
    log_p = libm.log(np.clip(tree.leaf_values, PROBA_FLOOR, None))
    return AdaBoostUpdate(pack_trees([tree]), "SAMME.R", 0.0, z, log_p, spec.learning_rate)


class _AdaBoostRounds:
    """The rounds of one fit as a ``loop.Ensemble``; ``result`` once trained."""

    def __init__(self, spec: AdaBoostSpec, engine, events):
        self.spec, self.engine, self.events = spec, engine, events
        self.growth = spec.growth
        self.result = AdaBoostResult()

    def begin(self, m, update) -> RoundSpec:
        """2(a): a classification tree on the weights after the previous update."""
        k = self.spec.n_classes
        criterion = ImpurityCriterion(k, self.spec.criterion, AdaBoostLearner.scale)
        features = np.arange(self.engine.schema.n_features)
        return RoundSpec(AdaBoostLearner(k), criterion, features, np.ones((1, len(features)), bool))

    def measured(self, m, train_metric, eval_metrics) -> bool:
        return False

    def grown(self, m, trees):
        spec, res, (tree,) = self.spec, self.result, trees
        err, w_sum, wu_sum = round_error(self.engine, spec, tree)  # 2(b)
        if no_better_than_guessing(spec, err, m):
            return STOP  # SAMME stops: alpha would be <= 0 (Zhu et al. 2009, sec. 2)
        alpha = estimator_weight(spec, err, res.alphas)  # 2(c)
        res.trees.append(tree)
        res.alphas.append(alpha)
        res.errors.append(err)
        self.events.round(m, {"training": {"weighted_error": float(err)}}, [tree],
                          estimator_weight=float(alpha))
        if err <= 0.0:
            return STOP  # a perfect weak learner: the weights cannot change any more
        return weight_update(spec, tree, err, alpha, w_sum, wu_sum)  # 2(d)

    def end(self, update) -> None:
        """Nothing: the last weight update is never needed."""


def _weights(shard):
    """Picklable ``shard -> [w]`` for the total sample weight."""
    return [shard.w]
