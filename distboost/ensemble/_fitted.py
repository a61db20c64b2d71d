"""Attributes every fitted estimator takes from its training data."""

import numpy as np


def set_data_attributes(est, engine, schema) -> None:
    """``n_features_in_``, ``feature_names_in_`` (named columns only), and for
    classifiers ``classes_`` / ``n_classes_`` (at least two classes); and
    ``data_placement_``: per worker, training rows kept in memory and on disk."""
    est._schema = schema
    est.data_placement_ = list(engine.placement)
    est.n_features_in_ = schema.n_features
    if not all(n == f"f{j}" for j, n in enumerate(schema.feature_names)):
        est.feature_names_in_ = np.array(schema.feature_names, dtype=object)
    if est._is_classifier:
        est.classes_ = np.asarray(engine.classes)
        est.n_classes_ = len(est.classes_)
        if est.n_classes_ < 2:
            raise ValueError(
                f"the target has a single class, 1 class ({est.classes_.tolist()}) among the "
                f"rows with a positive weight; a classifier needs at least two"
            )
