"""Checks before gradient boosting continues a model or computes its first
score: ``init_model`` must be the same kind of model on the same features and
classes, and every class needs some weight."""

from __future__ import annotations

import numpy as np


def check_init_model(est, init_model, schema, y=None) -> None:
    """Refuse to continue a model of another type, loss, feature set or class set.

    ``y`` (in-memory targets, optional) is checked against its classes; on
    Dask, unknown labels are refused as the partitions are binned.
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
    theirs, ours = init_model._schema, schema
    if theirs.feature_names != ours.feature_names:
        raise ValueError(
            f"init_model was trained on features {_short(theirs.feature_names)} but X has "
            f"{_short(ours.feature_names)}; continue training on the same columns, in order"
        )
    if not np.array_equal(theirs.is_categorical, ours.is_categorical):
        changed = [n for n, a, b in zip(ours.feature_names, theirs.is_categorical,
                                        ours.is_categorical) if a != b]
        raise ValueError(f"feature(s) {_short(changed)} are categorical in one of init_model and "
                         f"X but not in the other; use the same dtypes")
    if y is not None and est._is_classifier:
        unknown = np.setdiff1d(np.unique(np.asarray(y)), init_model.classes_)
        if len(unknown):
            raise ValueError(f"y has class(es) {unknown.tolist()[:5]} that init_model was not "
                             f"trained on (its classes are {init_model.classes_.tolist()}); "
                             f"train a new model on all the classes")


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


def _short(names) -> str:
    names = list(names)
    return str(names[:8])[:-1] + (", ...]" if len(names) > 8 else "]")
