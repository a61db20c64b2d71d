"""AdaBoost's rounds (ESL Algorithm 10.1; SAMME, Zhu et al. 2009, Algorithm 2)
as a ``loop.Ensemble``: a weighted classification tree (step 2a), its error
(2b) and weight alpha (2c), and the weight update (2d) the next round's wave
applies on the workers.

The estimator decides the steps' numbers (``AdaBoostSteps``: the error from
the workers' exact sums, alpha, the update, when to stop); these rounds put
them in the order of the algorithm and keep what they produce.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..kernels.criteria import ImpurityCriterion
from ..learners.adaboost import AdaBoostLearner
from ..trees.params import GrowthParams
from .loop import STOP, RoundSpec


class AdaBoostSteps(Protocol):
    """What the rounds ask of the estimator (``AdaBoostClassifier``)."""

    n_classes_: int
    criterion: str

    def _growth(self) -> GrowthParams:
        """How each round's tree grows (a stump by default)."""

    def _round_error(self, engine, tree) -> tuple[float, float, float]:
        """err_m (step 2b), the weights' sum and SAMME.R's update sum."""

    def _no_better_than_guessing(self, err: float, m: int) -> bool:
        """Stop: alpha would not be positive (refuses to start at m = 0)."""

    def _estimator_weight(self, err: float, previous: list) -> float:
        """alpha_m (step 2c)."""

    def _weight_update(self, tree, err, alpha, w_sum, wu_sum):
        """The workers' step 2(d), an ``AdaBoostUpdate``."""


class AdaBoostRounds:
    """The rounds of one fit; ``trees``, ``alphas`` and ``errors`` once trained."""

    def __init__(self, steps: AdaBoostSteps, engine, events):
        self.steps, self.engine, self.events = steps, engine, events
        self.growth = steps._growth()
        self.trees, self.alphas, self.errors = [], [], []

    def begin(self, m, update) -> RoundSpec:
        """2(a): a classification tree on the weights after the previous update."""
        k = self.steps.n_classes_
        criterion = ImpurityCriterion(k, self.steps.criterion, AdaBoostLearner.scale)
        features = np.arange(self.engine.schema.n_features)
        return RoundSpec(AdaBoostLearner(k), criterion, features, np.ones((1, len(features)), bool))

    def measured(self, m, train_metric, eval_metrics) -> bool:
        return False

    def grown(self, m, trees):
        steps, (tree,) = self.steps, trees
        err, w_sum, wu_sum = steps._round_error(self.engine, tree)  # 2(b)
        if steps._no_better_than_guessing(err, m):
            return STOP  # SAMME stops: alpha would be <= 0 (Zhu et al. 2009, sec. 2)
        alpha = steps._estimator_weight(err, self.alphas)  # 2(c)
        self.trees.append(tree)
        self.alphas.append(alpha)
        self.errors.append(err)
        self.events.round(m, {"training": {"weighted_error": float(err)}}, [tree],
                          estimator_weight=float(alpha))
        if err <= 0.0:
            return STOP  # a perfect weak learner: the weights cannot change any more
        return steps._weight_update(tree, err, alpha, w_sum, wu_sum)  # 2(d)

    def end(self, update) -> None:
        """Nothing: the last weight update is never needed."""
