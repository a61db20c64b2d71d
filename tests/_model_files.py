"""A model file written by hand, and small fitted models of every kind, for the
model file tests (``test_model_schema.py``, the command line rows of
``test_bad_input_cli.py``).

The hand-made model is a ``GradientBoostingRegressor`` on features ``a``
(numeric, bin edges -1, 0, 1) and ``b`` (categorical: u, v, w) with base score
0.5 and two rounds: tree 0 splits ``a`` at 0, then at -1 and 1 (seven nodes,
leaves 3 to 6 worth -0.3, -0.1, 0.1, 0.3); tree 1 sends categories u and w
(bits 0 and 2 of its bitset row, ``"5"``) left to 0.2, v right to -0.2.
"""

from __future__ import annotations

import json


def hand_made() -> dict:
    """The hand-made model file (see the module), decoded."""
    seven = {
        "value": [0.0, -0.2, 0.2, -0.3, -0.1, 0.1, 0.3],
        "count": [8, 4, 4, 2, 2, 2, 2],
        "cover": [8.0, 4.0, 4.0, 2.0, 2.0, 2.0, 2.0],
        "feature": [0, 0, 0, -1, -1, -1, -1],
        "threshold": [0.0, -1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
        "bin_threshold": [1, 0, 2, 0, 0, 0, 0],
        "missing_left": [1, 0, 0, 0, 0, 0, 0],
        "is_categorical": [0, 0, 0, 0, 0, 0, 0],
        "cat_index": [-1, -1, -1, -1, -1, -1, -1],
        "left": [1, 3, 5, -1, -1, -1, -1],
        "right": [2, 4, 6, -1, -1, -1, -1],
        "gain": [1.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0],
        "is_leaf": [0, 0, 0, 1, 1, 1, 1],
        "depth": [0, 1, 1, 2, 2, 2, 2],
    }
    three = {
        "value": [0.0, 0.2, -0.2], "count": [8, 5, 3], "cover": [8.0, 5.0, 3.0],
        "feature": [1, -1, -1], "threshold": [0.0, 0.0, 0.0], "bin_threshold": [0, 0, 0],
        "missing_left": [0, 0, 0], "is_categorical": [1, 0, 0], "cat_index": [0, -1, -1],
        "left": [1, -1, -1], "right": [2, -1, -1], "gain": [1.0, 0.0, 0.0],
        "is_leaf": [0, 1, 1], "depth": [0, 1, 1],
    }
    return {
        "format": "distboost-model", "version": 1, "estimator": "GradientBoostingRegressor",
        "params": {"n_estimators": 2, "max_depth": 2},
        "feature_names": ["a", "b"], "is_categorical": [False, True],
        "categories": {"1": ["u", "v", "w"]},
        "bin_mapper": {"max_bins": 256, "bin_edges": [[-1.0, 0.0, 1.0], []],
                       "is_categorical": [False, True], "categories": {"1": ["u", "v", "w"]}},
        "base_score": [0.5],
        "trees": [[{"nodes": seven, "cat_bitsets": []}],
                  [{"nodes": three, "cat_bitsets": [["5", "0", "0", "0"]]}]],
        "best_iteration": None, "evals_result": {},
    }


def hand_made_text(change=None) -> str:
    """The hand-made model file's text, after ``change(decoded)`` if given."""
    d = hand_made()
    if change is not None:
        change(d)
    return json.dumps(d)


def self_child(d: dict) -> None:
    """Node 1 of tree 0 becomes its own left child."""
    d["trees"][0][0]["nodes"]["left"][1] = 1


def no_bitset(d: dict) -> None:
    """Tree 1's categorical split loses its bitset row."""
    d["trees"][1][0]["cat_bitsets"] = []


def two_trees_a_round(d: dict) -> None:
    """Round 0 of the one-output model gets a second tree."""
    d["trees"][0].append(d["trees"][1][0])


def fitted_models(folder) -> dict:
    """Small fitted models of every kind (3 to 6 trees of depth 2 or 3), saved
    in ``folder`` as ``<name>.json``; returns {name: path}."""
    import numpy as np
    import pandas as pd

    import distboost as db

    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"x": rng.normal(size=n), "c": pd.Categorical(rng.choice(list("uvwx"), n)),
                      "z": np.where(rng.random(n) < 0.15, np.nan, rng.normal(size=n))})
    signal = X["x"] + (X["c"] == "v") + np.nan_to_num(X["z"])
    two = np.where(signal + rng.logistic(size=n) > 0.5, "spam", "ham")
    three = np.digitize(signal + rng.normal(size=n), [-0.5, 0.8])
    real = 2 * signal + rng.normal(size=n)
    gbr = db.GradientBoostingRegressor
    models = {
        "classifier": db.GradientBoostingClassifier(n_estimators=4, max_depth=3).fit(X, two),
        "multiclass": db.GradientBoostingClassifier(n_estimators=2, max_depth=3).fit(X, three),
        "regressor": gbr(n_estimators=4, max_depth=3).fit(X, real),
        "poisson": gbr(loss="poisson", n_estimators=3, max_depth=2).fit(X, np.exp(signal / 2)),
        "forest": db.RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0)
        .fit(X, three),
        "adaboost": db.AdaBoostClassifier(n_estimators=3, max_depth=2).fit(X, three),
        "voting": db.VotingRegressor(
            [("g", gbr(n_estimators=2, max_depth=2).fit(X, real)),
             ("b", db.BaggingRegressor(n_estimators=2, max_depth=2, random_state=0).fit(X, real))],
            prefit=True).fit(),
    }
    paths = {}
    for name, model in models.items():
        paths[name] = folder / f"{name}.json"
        model.save_model(paths[name])
    return paths
