"""A boosting round of vector-leaf trees (``trees.vector_leaves``): its
criterion and learner, and the round's tree as the model's k scalar trees."""

from __future__ import annotations

from ..kernels.splitting import GradientCriterion
from ..learners.vector import VectorLearner
from ..trees.vector_leaves import VectorCriterion, split_outputs

__all__ = ["round_parts", "split_outputs"]


def round_parts(engine, loss, spec, scales):
    """The round's ``VectorCriterion`` and ``VectorLearner``; a categorical
    feature is refused (vector-leaf splits are numeric only), naming it."""
    categorical = engine.mapper.is_categorical_
    if categorical.any():
        raise ValueError(
            f"multi_strategy='multi_output_tree' splits numeric features only, but feature "
            f"{int(categorical.nonzero()[0][0])} is categorical; encode it as numbers (e.g. "
            f"ordinal codes) or use multi_strategy='one_output_per_tree'")
    criterion = VectorCriterion(spec.split, scales, spec.n_outputs,
                                GradientCriterion.counts_needed(spec.split))
    learner = VectorLearner(loss, scales, spec.seed, spec.subsample, False, criterion.n_stats,
                            spec.metrics)
    return criterion, learner
