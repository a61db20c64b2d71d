"""DART (booster="dart"; Rashmi & Gilad-Bachrach 2015, XGBoost's dart booster):
the drops, XGBoost's normalization by hand, nothing dropped = gradient
boosting to the bit, the training margins = the model's predictions, the
same model whatever the partitioning and on Dask, model files, the XGBoost
export, early stopping, continued training, refusals, and xgboost's DART."""

import json

import numpy as np
import pytest
from sklearn.metrics import log_loss, roc_auc_score

import distboost as db
from distboost.training.dart import DartParams, dropped_trees, normalized

C, R = db.GradientBoostingClassifier, db.GradientBoostingRegressor


def _data(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[rng.random((n, 5)) < 0.03] = np.nan
    logit = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2 - 1 + rng.normal(size=n)
    yb = (logit > 0).astype(int)
    ym = (np.nan_to_num(X[:, 2]) > 0).astype(int) + (logit > 0.5)
    yr = np.nan_to_num(X[:, 0]) * 2 + np.nan_to_num(X[:, 3]) + rng.normal(size=n)
    return X, yb, ym, yr


X, YB, YM, YR = _data()
DART = {"booster": "dart", "rate_drop": 0.3, "max_depth": 3, "random_state": 5}


# ----------------------------------------------------------------- the draws
def test_normalization_is_xgboosts():
    """XGBoost's NormalizeTrees: lr = eta / K; k dropped."""
    w = np.array([1.0, 0.5, 0.25])
    tree, forest = DartParams(normalize_type="tree"), DartParams(normalize_type="forest")
    assert normalized(tree, w, np.array([], np.int64), 2, 0.3).tolist() == [1, 0.5, 0.25, 1, 1]
    lr = 0.3 / 2
    out = normalized(tree, w, np.array([0, 2]), 2, 0.3)
    np.testing.assert_array_equal(out, [2 / (2 + lr), 0.5, 0.25 * 2 / (2 + lr),
                                        1 / (2 + lr), 1 / (2 + lr)])
    out = normalized(forest, w, np.array([1]), 1, 0.3)
    np.testing.assert_array_equal(out, [1, 0.5 / 1.3, 0.25, 1 / 1.3])


def test_drops_are_functions_of_seed_and_round_at_the_asked_rates():
    p = DartParams(rate_drop=0.2, skip_drop=0.25)
    w = np.ones(50)
    a = [dropped_trees(p, w, 3, r) for r in range(400)]
    assert all(np.array_equal(x, dropped_trees(p, w, 3, r)) for r, x in enumerate(a))
    assert not all(np.array_equal(x, dropped_trees(p, w, 4, r)) for r, x in enumerate(a))
    skipped = np.mean([len(x) == 0 for x in a])
    assert abs(skipped - 0.25) < 0.07  # 0.25 + 0.75 * 0.8^50, about 0.25
    rate = np.mean([len(x) for x in a if len(x)]) / 50
    assert abs(rate - 0.2) < 0.02
    # weighted: chance rate * n * w_i / sum(w); one_drop: one tree when none was drawn
    heavy = np.r_[np.full(10, 1.0), np.full(40, 0.01)]
    pw = DartParams(rate_drop=0.02, sample_type="weighted")
    counts = np.bincount(np.concatenate([dropped_trees(pw, heavy, 1, r) for r in range(400)]),
                         minlength=50)
    assert counts[:10].sum() > 20 * counts[10:].sum()
    one = DartParams(rate_drop=0.0, one_drop=True)
    assert all(len(dropped_trees(one, w, 0, r)) == 1 for r in range(50))
    assert len(dropped_trees(DartParams(rate_drop=0.0), w, 0, 0)) == 0


# ------------------------------------------------------- a hand-checked fit
@pytest.mark.parametrize("normalize_type, weights", [
    ("tree", [8 / 15, 8 / 15, 0.4]),  # round 1: k=1, 1/(1+.5); round 2: k=2, 2/2.5 and 1/2.5
    ("forest", [4 / 9, 4 / 9, 2 / 3]),  # every drop and new tree: 1/(1+.5)
])
def test_three_rounds_dropping_everything(normalize_type, weights):
    """rate_drop=1, skip_drop=0: every round sees f_0 only, so the three trees
    are the same tree; the weights are XGBoost's formulas (eta=0.5)."""
    est = R(booster="dart", rate_drop=1.0, skip_drop=0.0, normalize_type=normalize_type,
            n_estimators=3, learning_rate=0.5, max_depth=2).fit(X, YR)
    np.testing.assert_allclose(est.tree_weights_.ravel(), weights, rtol=1e-15)
    first = est.trees_[0][0].nodes
    for (tree,) in est.trees_[1:]:  # the fixed-point scales grow with the model: not to the bit
        for key in ("feature", "threshold", "is_leaf", "left"):
            np.testing.assert_array_equal(tree.nodes[key], first[key])
        np.testing.assert_allclose(tree.nodes["value"], first["value"], rtol=0, atol=1e-12)
    one_tree = R(n_estimators=1, learning_rate=0.5, max_depth=2).fit(X, YR)
    f0 = est.base_score_[0]
    np.testing.assert_allclose(est.predict(X), f0 + sum(weights) * (one_tree.predict(X) - f0),
                               rtol=1e-12, atol=1e-12)


# ------------------------------------------------- gradient boosting exactly
@pytest.mark.parametrize("y", [YB, YM])
@pytest.mark.parametrize("dart", [{"rate_drop": 0.0}, {"rate_drop": 0.5, "skip_drop": 1.0}])
def test_nothing_dropped_is_gradient_boosting_to_the_bit(y, dart):
    gb = C(n_estimators=8, max_depth=3, random_state=5).fit(X, y)
    d = C(n_estimators=8, max_depth=3, random_state=5, booster="dart", **dart).fit(X, y)
    np.testing.assert_array_equal(d.predict_proba(X), gb.predict_proba(X))
    assert (d.tree_weights_ == 1).all() and gb.tree_weights_ is None
    for a, b in zip(d.trees_, gb.trees_):
        for s, t in zip(a, b):
            np.testing.assert_array_equal(s.nodes, t.nodes)


# ------------------------------------- the margins training keeps, and the model
@pytest.mark.parametrize("y, kw", [(YB, {}), (YM, {"normalize_type": "forest"}),
                                   (YB, {"sample_type": "weighted", "one_drop": True})])
def test_training_margins_are_the_models_predictions(y, kw):
    """The eval set's metric each round is measured on the margins training
    updates (dropped trees re-weighted there); it equals the model's."""
    est = C(n_estimators=12, eval_metric="mlogloss" if y is YM else "logloss",
            **{**DART, **kw}).fit(X, y, eval_set=[(X[:700], y[:700])])
    assert (est.tree_weights_ < 1).any()
    history = est.evals_result_["validation_0"]
    measured = history["mlogloss" if y is YM else "logloss"][-1]
    assert measured == pytest.approx(log_loss(y[:700], est.predict_proba(X[:700])), rel=1e-12)
    staged = list(est.staged_predict_proba(X[:50]))
    np.testing.assert_allclose(staged[-1], est.predict_proba(X[:50]), rtol=1e-12)


def _squared(y, raw):
    return raw - y, np.ones_like(raw)


@pytest.mark.parametrize("kw, y", [
    ({"loss": "poisson"}, np.floor(np.exp(YR / 3))),  # the margins' range pass, widened
    ({"loss": _squared}, YR),  # the gradients' range pass, at the margins without the drops
    ({"max_leaf_nodes": 6, "max_depth": None, "subsample": 0.8, "colsample_bynode": 0.6}, YR),
])
def test_regression_margins_are_the_models_predictions(kw, y):
    est = R(n_estimators=12, eval_metric="rmse", **{**DART, **kw}).fit(
        X, y, eval_set=[(X[:700], y[:700])])
    assert (est.tree_weights_ < 1).any()
    rmse = np.sqrt(np.mean((est.predict(X[:700]) - y[:700]) ** 2))
    assert est.evals_result_["validation_0"]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)


def test_early_stopping_keeps_the_best_model_with_its_weights_then():
    est = C(n_estimators=40, learning_rate=0.5, eval_metric="logloss", early_stopping_rounds=3,
            **DART).fit(X[:1000], YB[:1000], eval_set=[(X[1000:], YB[1000:])])
    best = est.best_iteration_
    assert best is not None and est.n_estimators_ == best + 1 < 40
    scores = est.evals_result_["validation_0"]["logloss"]
    assert scores[best] == pytest.approx(log_loss(YB[1000:], est.predict_proba(X[1000:])),
                                         rel=1e-12)


# ------------------------------------------------------ partitioning and Dask
def test_the_same_model_whatever_the_partitioning(partitioned):
    fits = []
    for parts in (1, 3):
        partitioned(parts)
        fits.append(C(n_estimators=10, **DART).fit(X, YM))
    np.testing.assert_array_equal(fits[0].tree_weights_, fits[1].tree_weights_)
    np.testing.assert_array_equal(fits[0].predict_proba(X), fits[1].predict_proba(X))


def test_dask_equals_in_process_to_the_bit(dask_client):
    import dask.array as da

    kw = dict(n_estimators=10, eval_metric="logloss", client=dask_client, **DART)
    here = C(**kw).fit(X, YB, eval_set=[(X[:500], YB[:500])])
    Xd, yd = da.from_array(X, chunks=(400, 5)), da.from_array(YB, chunks=400)
    there = C(**kw).fit(Xd, yd, eval_set=[(Xd[:500], yd[:500])])
    np.testing.assert_array_equal(here.tree_weights_, there.tree_weights_)
    np.testing.assert_array_equal(here.predict_proba(X), there.predict_proba(X))
    assert here.evals_result_ == there.evals_result_


# ------------------------------------------------------------ model files
def test_model_file_keeps_the_weights(tmp_path):
    est = C(n_estimators=8, **DART).fit(X, YM)
    path = tmp_path / "m.json"
    est.save_model(path)
    loaded = db.load_model(path)
    np.testing.assert_array_equal(loaded.tree_weights_, est.tree_weights_)
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    d = json.loads(path.read_text())
    d["state"]["tree_weights"][2][1] = 1.5
    path.write_text(json.dumps(d))
    with pytest.raises(db.model_file.ModelFileError, match=r"tree_weights\[2\]\[1\].*\(0, 1\]"):
        db.load_model(path)
    gb = tmp_path / "gb.json"
    C(n_estimators=2).fit(X, YB).save_model(gb)
    assert "state" not in json.loads(gb.read_text())


@pytest.mark.parametrize("y", [YB, YM])
def test_xgboost_loads_the_export_as_dart_with_the_same_margins(tmp_path, y):
    xgb = pytest.importorskip("xgboost")
    est = C(n_estimators=10, **DART).fit(X, y)
    path = tmp_path / "x.json"
    est.save_model(path, format="xgboost")
    booster = json.loads(path.read_text())["learner"]["gradient_booster"]
    assert booster["name"] == "dart"
    b = xgb.Booster(model_file=str(path))
    margins = b.predict(xgb.DMatrix(X), output_margin=True)
    np.testing.assert_allclose(margins, est.decision_function(X), rtol=0, atol=1e-5)


# ---------------------------------------------------------- continued training
def test_continued_training_carries_the_weights(tmp_path):
    whole = C(n_estimators=12, **DART).fit(X, YB)
    first = C(n_estimators=6, warm_start=True, **DART).fit(X, YB)
    first.set_params(n_estimators=12).fit(X, YB)
    np.testing.assert_allclose(first.tree_weights_, whole.tree_weights_, rtol=1e-15)
    np.testing.assert_allclose(first.predict_proba(X), whole.predict_proba(X), atol=1e-9)
    gb = C(n_estimators=4, max_depth=3).fit(X, YB)  # gradient boosting continues as DART
    more = C(n_estimators=4, **DART).fit(X, YB, init_model=gb)
    assert more.tree_weights_.shape == (8, 1) and (more.tree_weights_[:4] <= 1).all()
    with pytest.raises(ValueError, match="continue it with booster='dart'"):
        C(n_estimators=2, max_depth=3).fit(X, YB, init_model=whole)


# ---------------------------------------------------------------- refusals
@pytest.mark.parametrize("kw, message", [
    ({"booster": "tree"}, "booster must be one of 'gbtree', 'dart'"),
    ({"booster": "dart", "rate_drop": 1.5}, r"rate_drop must be a number in \[0, 1\]"),
    ({"booster": "dart", "normalize_type": "sum"}, "normalize_type must be one of"),
    ({"booster": "dart", "sample_type": "w"}, "sample_type must be one of"),
    ({"rate_drop": 0.1}, r"rate_drop=0.1 is DART's, but booster='gbtree'"),
    ({"booster": "dart", "loss": "absolute_error"}, "leaf_estimation='line_search'"),
])
def test_bad_parameters_are_refused(kw, message):
    with pytest.raises(db.InvalidParameterError, match=message):
        R(n_estimators=2, **kw).fit(X, YR)


# ------------------------------------------------------------------- xgboost
def test_test_auc_as_xgboosts_dart():
    """Against xgboost's DART with the same parameters: the drops differ (other
    random numbers), so the test AUCs are compared over 3 seeds each."""
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(11)
    n = 6000
    Xa = rng.normal(size=(n, 8))
    logit = Xa[:, 0] * Xa[:, 1] + np.sin(2 * Xa[:, 2]) + Xa[:, 3] + 0.5 * rng.normal(size=n)
    ya = (logit > 0).astype(int)
    tr, te = slice(0, 4000), slice(4000, None)
    params = {"n_estimators": 60, "max_depth": 4, "learning_rate": 0.3, "rate_drop": 0.1,
                  "skip_drop": 0.5, "reg_lambda": 1.0, "min_child_weight": 1.0}
    ours, theirs = [], []
    for seed in range(3):
        est = C(booster="dart", random_state=seed, **params).fit(Xa[tr], ya[tr])
        ours.append(roc_auc_score(ya[te], est.predict_proba(Xa[te])[:, 1]))
        peer = xgb.XGBClassifier(booster="dart", tree_method="hist", max_bin=256,
                                 random_state=seed, n_jobs=1, **params).fit(Xa[tr], ya[tr])
        theirs.append(roc_auc_score(ya[te], peer.predict_proba(Xa[te])[:, 1]))
    print(f"test AUC: distboost DART {np.mean(ours):.4f} {np.round(ours, 4)}, "
          f"xgboost DART {np.mean(theirs):.4f} {np.round(theirs, 4)}")
    assert abs(np.mean(ours) - np.mean(theirs)) < 0.005


def test_shap_values_weigh_the_trees_as_xgboost_does(tmp_path):
    xgb = pytest.importorskip("xgboost")
    from distboost.inspection import shap_values

    est = C(n_estimators=10, **DART).fit(X, YB)
    values = shap_values(est, X[:60])
    np.testing.assert_allclose(values.sum(axis=1), est.decision_function(X[:60]), atol=1e-12)
    path = tmp_path / "x.json"
    est.save_model(path, format="xgboost")
    theirs = xgb.Booster(model_file=str(path)).predict(xgb.DMatrix(X[:60]), pred_contribs=True)
    np.testing.assert_allclose(theirs, values, rtol=0, atol=1e-5)


def test_the_ranker_drops_trees_too(tmp_path):
    rng = np.random.default_rng(2)
    qid = np.repeat(np.arange(60), 10)
    Xq = rng.normal(size=(600, 4))
    rel = np.clip(np.round(Xq[:, 0] + rng.normal(0, 0.5, 600) + 1), 0, 3)
    kw = {"n_estimators": 8, "max_depth": 3, "random_state": 1}
    plain = db.GradientBoostingRanker(**kw).fit(Xq, rel, qid=qid)
    same = db.GradientBoostingRanker(booster="dart", skip_drop=1.0, rate_drop=0.5, **kw)
    np.testing.assert_array_equal(same.fit(Xq, rel, qid=qid).predict(Xq), plain.predict(Xq))
    dart = db.GradientBoostingRanker(booster="dart", rate_drop=0.3, **kw).fit(Xq, rel, qid=qid)
    assert (dart.tree_weights_ < 1).any()
    dart.save_model(tmp_path / "r.json")
    np.testing.assert_array_equal(db.load_model(tmp_path / "r.json").predict(Xq), dart.predict(Xq))
