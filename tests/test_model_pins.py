"""Models pinned to the bit: hashes of the trees and predictions of a few
fits, recorded before a change that must not alter any model (the (g, h)
statistics without the row count; the restructuring of issue 13).

A change that alters models on purpose updates these hashes in the same
commit and says why. ``python tests/test_model_pins.py`` prints them. The
same hashes hold on the oldest and on the newest dependencies
``pyproject.toml`` allows (``.ci/run`` runs both).
"""

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

import distboost as db

PINS = {
    "binary": ("dc22e72a73a54549", "f90024a3fabe6de4"),
    "binary_weights_subsample": ("c5f5d6e2d16d6b2c", "648466e6b29c76b8"),
    "multiclass": ("809d86a7e5983f9f", "598dcf725ee6a243"),
    "absolute_error": ("99ead0b3e90884c8", "c391bc413bc2921f"),
    "huber_best_first": ("3040c291d59d0f8e", "0796c6f0a3e032cf"),
    "squared_colsample": ("2f562b159956517c", "df0a78c1cd309f61"),
    "categorical": ("2ed6c96e3815cf71", "21742b19e9f8974e"),
    "no_missing_binary": ("4ff3945e8891fa2c", "62d0a0933d88a608"),
    "no_missing_best_first": ("f555f2ba9808de70", "97a9f2d13c8cc87a"),
    "min_samples_leaf_5": ("92c2cd03848809dd", "6ebcc0854c44ffa3"),
    "min_child_weight_0": ("fffa1ac47bfa11f4", "f8a8da7f988005bd"),
    # recorded at 9f4f2fe^ (before the restructuring) and equal at every commit since
    # (adaboost_samme's trees; its predictions, adaboost_samme_r and multiclass re-recorded
    # when exp and log became the C library's (distboost.kernels.libm): numpy's own differ in the
    # last bit between numpy 1.26 and 2.x; forest_oob and bagging_subspaces when the
    # out-of-bag results were hashed as bits, not as numpy's repr, which changed in 2.2)
    "adaboost_samme": ("a1e8041eed9d2f4b", "ce7ca9951cc7b80d"),
    "adaboost_samme_r": ("ab528e35cac49504", "b110ae998393301c"),
    "forest_oob": ("0771bd67d93076ae", "f3835e4c7c2f26e0"),
    "forest_regressor": ("011f4a08c14131dd", "e46563a883e6f7dc"),
    "bagging_subspaces": ("2a281a73ade47553", "c3f21306fb9757f4"),
}


def _cases():
    rng = np.random.default_rng(3)
    n = 6000
    X = rng.normal(size=(n, 6))
    X[rng.random((n, 6)) < 0.05] = np.nan
    X[:, 5] = rng.integers(0, 7, n)
    yb = ((X[:, 0] > 0) ^ (np.nan_to_num(X[:, 1]) > 0.3)).astype(int)
    ym = rng.integers(0, 3, n) + (np.nan_to_num(X[:, 2]) > 0)
    yr = np.nan_to_num(X[:, 0]) * 2 + rng.normal(size=n)
    w = rng.random(n) + 0.2
    w[:50] = 0
    Xc = pd.DataFrame(np.nan_to_num(X[:, :5]), columns=list("abcde"))
    Xc["cat"] = pd.Categorical(rng.integers(0, 9, n))
    yc = ((Xc["cat"].cat.codes % 3 == 0) ^ (Xc["a"] > 0)).astype(int)
    clean = np.nan_to_num(X)
    C, R = db.GradientBoostingClassifier, db.GradientBoostingRegressor
    return X, {
        "binary": (C(n_estimators=8, max_depth=4), X, yb, None),
        "binary_weights_subsample": (C(n_estimators=8, max_depth=4, subsample=0.7, random_state=1),
                                     X, yb, w),
        "multiclass": (C(n_estimators=5, max_depth=3), X, ym, None),
        "absolute_error": (R(loss="absolute_error", n_estimators=6, max_depth=3), X, yr, w),
        "huber_best_first": (R(loss="huber", n_estimators=6, max_leaf_nodes=7, max_depth=None),
                             X, yr, None),
        "squared_colsample": (R(n_estimators=6, max_depth=5, colsample_bytree=0.6, random_state=2),
                              X, yr, None),
        "categorical": (C(n_estimators=6, max_depth=4), Xc, yc, None),
        "no_missing_binary": (C(n_estimators=6, max_depth=4), clean, yb, None),
        "no_missing_best_first": (R(n_estimators=6, max_leaf_nodes=9, max_depth=None), clean, yr,
                                  None),
        "min_samples_leaf_5": (C(n_estimators=6, max_depth=4, min_samples_leaf=5), X, yb, None),
        "min_child_weight_0": (C(n_estimators=6, max_depth=4, min_child_weight=0), X, yb, None),
        "adaboost_samme": (db.AdaBoostClassifier(n_estimators=6, max_depth=2), X, ym, w),
        "adaboost_samme_r": (db.AdaBoostClassifier(n_estimators=5, max_depth=2,
                                                   algorithm="SAMME.R"), X, yb, None),
        "forest_oob": (db.RandomForestClassifier(n_estimators=7, max_depth=5, random_state=0,
                                                 trees_per_pass=3, oob_score=True), X, ym, w),
        "forest_regressor": (db.RandomForestRegressor(n_estimators=5, max_depth=6,
                                                      max_features=0.5, random_state=2), X, yr,
                             None),
        "bagging_subspaces": (db.BaggingRegressor(n_estimators=5, max_features=0.5, max_depth=6,
                                                  random_state=1, trees_per_pass=2,
                                                  oob_score=True), X, yr, w),
    }


def _hashes(est, X, X_fit, tmp_path):
    """(predictions on 500 rows with missing values, the saved trees and out-of-bag results)."""
    X_new = X_fit.iloc[:500] if hasattr(X_fit, "iloc") else X[:500]
    pred = est.predict_proba(X_new) if hasattr(est, "predict_proba") else est.predict(X_new)
    path = tmp_path / f"{id(est)}.json"
    est.save_model(path)
    trees = json.loads(path.read_text())["trees"]
    oob = b"".join(np.ascontiguousarray(getattr(est, a), dtype=np.float64).tobytes()
                   for a in ("oob_score_", "oob_decision_function_", "oob_prediction_")
                   if hasattr(est, a))  # every value, as bits (a repr shows a few, numpy's way)
    return (hashlib.sha256(np.ascontiguousarray(pred).tobytes()).hexdigest()[:16],
            hashlib.sha256(json.dumps(trees, sort_keys=True).encode() + oob).hexdigest()[:16])


@pytest.fixture(scope="module")
def fitted():
    X, cases = _cases()
    return X, {name: (est.fit(Xf, y, sample_weight=w), Xf) for name, (est, Xf, y, w) in cases.items()}


@pytest.mark.parametrize("name", sorted(PINS))
def test_models_are_pinned(fitted, name, tmp_path):
    X, models = fitted
    est, X_fit = models[name]
    assert _hashes(est, X, X_fit, tmp_path) == PINS[name]


if __name__ == "__main__":
    import pathlib
    import tempfile

    X, cases = _cases()
    folder = pathlib.Path(tempfile.mkdtemp())
    for name, (est, Xf, y, w) in cases.items():
        print(f'    "{name}": {_hashes(est.fit(Xf, y, sample_weight=w), X, Xf, folder)},')
