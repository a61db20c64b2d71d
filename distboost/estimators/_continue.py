"""Checks before gradient boosting continues a model or computes its first
score: ``init_model`` must be the same kind of model with the same loss (its
features and classes are checked with the data, ``engine.input_plan``), and
every class needs some weight."""

from __future__ import annotations


def check_init_model(est, init_model) -> None:
    """Refuse to continue a model of another type or loss, or one not fitted.

    Its features, bins and classes are matched to the data where the data are
    planned (``engine.input_plan``).
    """
    name = type(est).__name__
    if type(init_model) is not type(est):
        raise TypeError(
            f"init_model is a {type(init_model).__name__}; {name}.fit can only continue a "
            f"fitted {name} (same task and loss): train a new model instead"
        )
    init_model._check_fitted()
    continued_function = init_model.loss == "custom" and callable(est.loss)  # a loaded model's
    if init_model.loss != est.loss and not continued_function:
        raise ValueError(f"init_model was trained with loss={init_model.loss!r} and this {name} "
                         f"has loss={est.loss!r}; continue with the same loss")


class _ClassWeights:
    """Picklable ``shard -> [w * (y == k) for each class k]``."""

    def __init__(self, n_classes: int):
        self.n_classes = n_classes

    def __call__(self, shard):
        return [shard.w * (shard.y == k) for k in range(self.n_classes)]


def check_class_weights(engine, classes) -> None:
    """Every class needs a positive total weight for the initial score log-odds."""
    sums = engine.exact_sums(_ClassWeights(len(classes)))
    empty = [c for c, s in zip(classes.tolist(), sums) if not s > 0]
    if empty:
        raise ValueError(
            f"class(es) {empty[:5]} have zero total sample_weight, so their log-odds are "
            f"undefined; drop those rows or give them a positive weight"
        )

