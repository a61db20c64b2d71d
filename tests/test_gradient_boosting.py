"""Gradient boosting estimators trained in-process (numpy / pandas); the log-link
losses also on a LocalCluster, against the in-process model."""

import numpy as np
import pandas as pd
import pytest

import distboost as db


@pytest.fixture(scope="module")
def hastie():
    from sklearn.datasets import make_hastie_10_2

    X, y = make_hastie_10_2(n_samples=6000, random_state=0)
    return X[:4000], y[:4000], X[4000:], y[4000:]


def test_seed_003_worked_example():
    X = np.array([[10.0], [20.0], [25.0], [35.0]])
    y = np.array([-10.0, 7.0, 8.0, -7.0])
    model = db.GradientBoostingRegressor(
        n_estimators=1, learning_rate=0.3, reg_lambda=0.0, base_score=0.5, max_depth=2,
        min_child_weight=0.0,
    ).fit(X, y)
    nodes = model.trees_[0][0].nodes
    assert nodes["threshold"][0] == 15.0
    assert nodes["gain"][0] == pytest.approx(120.3333333333)
    assert nodes["threshold"][nodes["right"][0]] == 30.0
    np.testing.assert_allclose(model.predict(X), [-2.65, 2.6, 2.6, -1.75])
    # the second round fits the residuals of seed 003: [-7.35, 4.4, 5.4, -5.25]
    np.testing.assert_allclose(y - model.predict(X), [-7.35, 4.4, 5.4, -5.25])


def test_accuracy_on_par_with_scikit_learn(hastie):
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y, Xt, yt = hastie
    ours = db.GradientBoostingClassifier(n_estimators=200, learning_rate=0.1, max_depth=3).fit(X, y)
    theirs = HistGradientBoostingClassifier(
        max_iter=200, learning_rate=0.1, max_depth=3, max_leaf_nodes=None, l2_regularization=1.0,
        early_stopping=False, random_state=0,
    ).fit(X, y)
    assert ours.score(Xt, yt) >= theirs.score(Xt, yt) - 0.015
    assert ours.score(Xt, yt) > 0.88


def test_labels_come_back_as_given(hastie):
    X, y, Xt, _ = hastie
    labels = np.where(y > 0, "yes", "no")
    clf = db.GradientBoostingClassifier(n_estimators=5).fit(X, labels)
    assert list(clf.classes_) == ["no", "yes"]
    assert set(clf.predict(Xt)) <= {"no", "yes"}
    signs = db.GradientBoostingClassifier(n_estimators=5).fit(X, y.astype(int))
    assert list(signs.classes_) == [-1, 1] and signs.predict(Xt).dtype.kind == "i"


def test_multiclass_grows_k_trees_per_round_with_softmax():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    clf = db.GradientBoostingClassifier(n_estimators=20, max_depth=2).fit(X, y)
    assert all(len(r) == 3 for r in clf.trees_)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert clf.score(X, y) > 0.95
    # f_0 = log of the class priors (ESL 10.10 / seed 001)
    np.testing.assert_allclose(clf.base_score_, np.log([1 / 3] * 3))


def test_binary_initial_score_is_the_log_odds(hastie):
    X, y, _, _ = hastie
    clf = db.GradientBoostingClassifier(n_estimators=1).fit(X, y)
    p = np.mean(y > 0)
    assert clf.base_score_[0] == pytest.approx(np.log(p / (1 - p)))
    reg = db.GradientBoostingRegressor(n_estimators=1).fit(X, y)
    assert reg.base_score_[0] == pytest.approx(np.mean(y))


def test_staged_predictions_end_at_the_final_model(hastie):
    X, y, Xt, _ = hastie
    clf = db.GradientBoostingClassifier(n_estimators=7, max_depth=2).fit(X, y)
    stages = list(clf.staged_predict_proba(Xt))
    assert len(stages) == 7
    np.testing.assert_array_equal(stages[-1], clf.predict_proba(Xt))
    np.testing.assert_array_equal(list(clf.staged_predict(Xt))[-1], clf.predict(Xt))
    reg = db.GradientBoostingRegressor(n_estimators=4).fit(X, y)
    np.testing.assert_array_equal(list(reg.staged_predict(Xt))[-1], reg.predict(Xt))


def test_weights_equal_repeated_rows():
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(600, 4)), 1)  # few distinct values: identical bins
    y = X[:, 0] - 2 * X[:, 1] + rng.normal(0, 0.1, 600)
    w = rng.integers(1, 4, 600)
    weighted = db.GradientBoostingRegressor(n_estimators=15, max_depth=3).fit(X, y, sample_weight=w)
    repeated = db.GradientBoostingRegressor(n_estimators=15, max_depth=3).fit(
        np.repeat(X, w, axis=0), np.repeat(y, w)
    )
    assert weighted.bin_mapper_.to_dict() == repeated.bin_mapper_.to_dict()
    for a, b in zip(weighted.trees_, repeated.trees_):
        np.testing.assert_array_equal(a[0].nodes["feature"], b[0].nodes["feature"])
        np.testing.assert_array_equal(a[0].nodes["threshold"], b[0].nodes["threshold"])
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), rtol=1e-12, atol=1e-12)


def test_zero_weight_rows_are_ignored():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    y = X[:, 0] + rng.normal(0, 0.1, 400)
    w = np.r_[np.ones(300), np.zeros(100)]
    a = db.GradientBoostingRegressor(n_estimators=5).fit(X, y, sample_weight=w)
    y_noise = y.copy()
    y_noise[300:] = 1e3
    b = db.GradientBoostingRegressor(n_estimators=5).fit(X, y_noise, sample_weight=w)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-9)


def test_depthwise_and_best_first_growth(hastie):
    X, _, _, _ = hastie
    y = X @ np.arange(10.0) + np.random.default_rng(0).normal(size=len(X))
    deep = db.GradientBoostingRegressor(n_estimators=3, max_depth=4).fit(X, y)
    assert all(t[0].max_depth == 4 for t in deep.trees_)
    assert all(t[0].n_leaves == 16 for t in deep.trees_)
    best_first = db.GradientBoostingRegressor(n_estimators=3, max_depth=None, max_leaf_nodes=6).fit(X, y)
    assert [t[0].n_leaves for t in best_first.trees_] == [6, 6, 6]
    assert best_first.trees_[0][0].max_depth > 2  # not a balanced tree


def test_best_first_splits_the_largest_gain_first(hastie):
    X, y, _, _ = hastie
    tree = db.GradientBoostingClassifier(n_estimators=1, max_depth=None, max_leaf_nodes=4).fit(X, y).trees_[0][0]
    gains = tree.nodes["gain"][tree.nodes["is_leaf"] == 0]
    # node ids follow the order of splitting; each split was the best open one
    assert len(gains) == 3 and gains[0] == gains.max()


def test_missing_values_and_categoricals():
    rng = np.random.default_rng(2)
    n = 3000
    df = pd.DataFrame({
        "color": pd.Categorical(rng.choice(["red", "green", "blue", "cyan", "teal"], n)),
        "x": rng.normal(size=n),
    })
    y = df["color"].isin(["red", "cyan"]).astype(float) * 3 + df["x"]
    df.loc[rng.random(n) < 0.2, "x"] = np.nan
    reg = db.GradientBoostingRegressor(n_estimators=40, max_depth=3).fit(df, y)
    root = reg.trees_[0][0].nodes[0]
    assert root["is_categorical"] == 1 and reg.feature_names_in_.tolist() == ["color", "x"]
    assert reg.score(df, y) > 0.85
    # unseen categories and missing values predict without error
    new = pd.DataFrame({"color": pd.Categorical(["purple", None, "red"]), "x": [0.0, np.nan, 1.0]})
    assert np.isfinite(reg.predict(new)).all()


def test_feature_importances_find_the_signal():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 5))
    y = 3 * X[:, 2] + X[:, 4] ** 2
    reg = db.GradientBoostingRegressor(n_estimators=20).fit(X, y)
    imp = reg.feature_importances_
    assert imp.sum() == pytest.approx(1.0)
    assert np.argsort(imp)[-2:].tolist() == [4, 2]
    # the total gain, which ESL's relative importance (eq. 10.43: the mean over
    # the M trees, largest = 100) scales differently: one computation, two scalings
    from distboost.inspection import relative_importance

    np.testing.assert_allclose(relative_importance(reg), 100 * imp / imp.max(), rtol=1e-12)


def test_estimators_are_the_trees_by_round_and_output():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3))
    y = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes
    clf = db.GradientBoostingClassifier(n_estimators=4, max_depth=2).fit(X, y)
    assert clf.estimators_.shape == (4, 3)
    assert all(clf.estimators_[m, k] is clf.trees_[m][k] for m in range(4) for k in range(3))
    with pytest.raises(db.NotFittedError):
        _ = db.GradientBoostingClassifier().estimators_


def test_early_stopping_keeps_the_best_rounds(hastie):
    X, y, Xt, yt = hastie
    clf = db.GradientBoostingClassifier(n_estimators=400, learning_rate=0.5, max_depth=4).fit(
        X, y, eval_set=[(Xt, yt)], early_stopping_rounds=5
    )
    history = clf.evals_result_["validation_0"]["logloss"]
    assert clf.best_iteration_ == int(np.argmin(history))
    assert clf.n_estimators_ == clf.best_iteration_ + 1 < 400
    assert len(history) == clf.best_iteration_ + 6
    # the recorded metric is the eval log loss of the model after each round
    from sklearn.metrics import log_loss

    assert history[clf.best_iteration_] == pytest.approx(log_loss(yt, clf.predict_proba(Xt)), rel=1e-9)


def test_verbose_and_callbacks(hastie, capsys):
    X, y, Xt, yt = hastie
    seen = []
    db.GradientBoostingClassifier(n_estimators=10, verbose=True).fit(
        X, y, eval_set=[(Xt, yt)], callbacks=[lambda r, tm, ev: seen.append(r) or r == 3]
    )
    assert seen == [0, 1, 2, 3]
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[0]\ttraining-logloss:") and "validation_0-logloss" in out[0]


def test_silent_by_default(hastie, capsys):
    X, y, _, _ = hastie
    db.GradientBoostingClassifier(n_estimators=2).fit(X, y)
    assert capsys.readouterr().out == ""


def test_scikit_learn_contract(hastie):
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    X, y, _, _ = hastie
    est = db.GradientBoostingClassifier(n_estimators=5, max_depth=2)
    assert est.get_params()["max_depth"] == 2
    assert est.set_params(max_depth=3) is est and est.max_depth == 3
    assert not hasattr(clone(est), "trees_") and clone(est).max_depth == 3
    assert est.fit(X, y) is est
    assert est.n_features_in_ == 10 and not hasattr(est, "feature_names_in_")
    scores = cross_val_score(clone(est), X[:900], y[:900], cv=3)
    assert scores.mean() > 0.6
    with pytest.raises(ValueError, match="invalid parameter"):
        est.set_params(depth=3)


def test_same_model_with_one_or_two_threads(hastie):
    X, y, _, _ = hastie
    one = db.GradientBoostingClassifier(n_estimators=5, n_jobs=1).fit(X, y)
    two = db.GradientBoostingClassifier(n_estimators=5, n_jobs=2).fit(X, y)
    assert all(a[0] == b[0] for a, b in zip(one.trees_, two.trees_))


def test_row_and_column_subsampling_are_seeded(hastie):
    X, y, _, _ = hastie
    kw = {"n_estimators": 5, "subsample": 0.5, "colsample_bytree": 0.5}
    a = db.GradientBoostingClassifier(random_state=1, **kw).fit(X, y)
    b = db.GradientBoostingClassifier(random_state=1, **kw).fit(X, y)
    c = db.GradientBoostingClassifier(random_state=2, **kw).fit(X, y)
    assert all(s[0] == t[0] for s, t in zip(a.trees_, b.trees_))
    assert not all(s[0] == t[0] for s, t in zip(a.trees_, c.trees_))
    assert a.trees_[0][0].nodes["count"][0] < 0.6 * len(X)


# ------------------------------------------------------------------ bad input
def test_nan_or_inf_in_the_target_is_rejected():
    X = np.zeros((5, 2))
    with pytest.raises(ValueError, match=r"target .*infinite value.*row 3"):
        db.GradientBoostingRegressor().fit(X, [1.0, 2.0, 3.0, np.inf, 1.0])
    with pytest.raises(ValueError, match="missing"):
        db.GradientBoostingClassifier().fit(X, np.array([0, 1, None, 1, 0], dtype=object))


def test_missing_feature_column_at_predict_time():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [0.0, 1.0, 0.0, 1.0]})
    reg = db.GradientBoostingRegressor(n_estimators=2).fit(df, [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=r"missing feature column\(s\) \['b'\]"):
        reg.predict(df[["a"]])
    # columns in another order are matched by name
    np.testing.assert_array_equal(reg.predict(df[["b", "a"]]), reg.predict(df))


def test_non_numeric_column_is_named():
    df = pd.DataFrame({"a": [1.0, 2.0], "city": ["Seoul", "Tokyo"]})
    with pytest.raises(TypeError, match="column 'city'.*neither numeric nor categorical"):
        db.GradientBoostingRegressor().fit(df, [1.0, 2.0])


def test_unseen_class_in_eval_set():
    X = np.arange(20.0)[:, None]
    y = np.array([0, 1] * 10)
    with pytest.raises(ValueError, match=r"eval_set\[0\].*label\(s\) \[7\] not seen"):
        db.GradientBoostingClassifier().fit(X, y, eval_set=[(X[:3], [0, 1, 7])])


def test_single_class_and_bad_parameters():
    with pytest.raises(ValueError, match="single class"):
        db.GradientBoostingClassifier().fit(np.zeros((4, 1)), [1, 1, 1, 1])
    with pytest.raises(ValueError, match="learning_rate"):
        db.GradientBoostingRegressor(learning_rate=0).fit(np.zeros((4, 1)), np.zeros(4))
    with pytest.raises(db.NotFittedError, match="not fitted"):
        db.GradientBoostingRegressor().predict(np.zeros((1, 1)))


def test_thread_count_does_not_change_a_stochastic_model():
    # more rows than one chunk, so two threads really split the work
    rng = np.random.default_rng(11)
    X = rng.normal(size=(40_000, 5)).astype(np.float32)
    y = (X[:, 0] * X[:, 1] + rng.normal(size=40_000) > 0).astype(int)
    params = {"n_estimators": 8, "max_depth": 5, "subsample": 0.8, "colsample_bynode": 0.6}
    one = db.GradientBoostingClassifier(n_jobs=1, **params).fit(X, y)
    two = db.GradientBoostingClassifier(n_jobs=2, **params).fit(X, y)
    np.testing.assert_array_equal(one.predict_proba(X), two.predict_proba(X))


# ------------------------------------------------------- log-link losses
def _counts(n=600, seed=0):
    """Poisson counts whose log-mean has an interaction; Gamma and Tweedie-like targets."""
    r = np.random.default_rng(seed)
    X = pd.DataFrame(r.normal(size=(n, 3)), columns=["a", "b", "c"])
    mu = np.exp(0.3 + 0.5 * X.a - 0.4 * X.b * X.c)
    return X, {"poisson": r.poisson(mu).astype(float), "gamma": r.gamma(2.0, mu / 2.0),
               "tweedie": r.poisson(mu) * r.gamma(3.0, 1 / 3.0, n)}


@pytest.mark.parametrize("loss", ["poisson", "gamma", "tweedie"])
def test_log_link_losses_predict_the_mean(loss):
    X, ys = _counts()
    y, w = ys[loss], np.random.default_rng(1).uniform(0.5, 2.0, 600)
    model = db.GradientBoostingRegressor(loss=loss, n_estimators=30, max_depth=3,
                                         learning_rate=0.2).fit(X, y, w)
    assert model.base_score_[0] == pytest.approx(np.log(np.average(y, weights=w)), rel=1e-14)
    raw = model.base_score_[0] + sum(t[0].predict(X.to_numpy()) for t in model.trees_)
    np.testing.assert_allclose(model.predict(X), np.exp(raw), rtol=1e-12)
    np.testing.assert_allclose(list(model.staged_predict(X))[-1], model.predict(X), rtol=1e-12)
    own = db.GradientBoostingRegressor(loss=loss, n_estimators=30, max_depth=3,
                                       learning_rate=0.2, train_metric=True).fit(X, y, w)
    curve = own.evals_result_["training"][f"{loss}_deviance"]
    assert curve[-1] < 0.9 * curve[0]  # it learns
    if loss == "poisson":  # one Newton step per leaf on the leaf's rows: still learns
        line = db.GradientBoostingRegressor(loss=loss, n_estimators=30, max_depth=3,
                                            leaf_estimation="line_search",
                                            train_metric=True).fit(X, y, w)
        assert line.evals_result_["training"]["poisson_deviance"][-1] < 0.9 * curve[0]


@pytest.mark.parametrize("loss", ["poisson", "gamma", "tweedie"])
def test_log_link_models_do_not_depend_on_the_partitioning(loss, partitioned, dask_client):
    import dask.dataframe as dd

    X, ys = _counts(400)
    params = {"loss": loss, "n_estimators": 8, "max_depth": 3, "learning_rate": 0.5,
                  "eval_metric": ["poisson_deviance", "rmse"], "subsample": 0.9}
    local = db.GradientBoostingRegressor(**params).fit(X, ys[loss], eval_set=[(X, ys[loss])])
    partitioned(5)
    parts = db.GradientBoostingRegressor(**params).fit(X, ys[loss], eval_set=[(X, ys[loss])])
    Xd, yd = dd.from_pandas(X, npartitions=3), dd.from_pandas(pd.Series(ys[loss]), npartitions=3)
    remote = db.GradientBoostingRegressor(client=dask_client, **params).fit(
        Xd, yd, eval_set=[(Xd, yd)])
    for other in (parts, remote):
        assert all(t[0] == u[0] for t, u in zip(local.trees_, other.trees_))
        assert other.evals_result_ == local.evals_result_
    np.testing.assert_array_equal(remote.predict(Xd).compute(), local.predict(X))


def _deferrals(monkeypatch):
    """Per grower of the next fits, whether it may defer its last level (the
    fits grow their trees wave by wave, as on Dask: ``Engine.grows_here``)."""
    from distboost.engine.waves import Engine
    from distboost.training import loop

    monkeypatch.setattr(Engine, "grows_here", lambda *args: False)
    seen = []

    class Spy(loop.TreeGrower):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.append(self.defer_counts)

    monkeypatch.setattr(loop, "TreeGrower", Spy)
    return seen


def test_the_last_levels_counts_riding_with_the_next_round_change_no_model(monkeypatch):
    """Binary, 3 classes and regression, with missing values: the trees whose
    last level is counted by the next round start equal those whose last
    level has a wave of its own, to the bit, counts and missing directions
    included; and the fitted trees hold no count left at -1."""
    from distboost.training.booster import _Boosting

    rng = np.random.default_rng(11)
    X = rng.normal(size=(3000, 4))
    X[rng.random(X.shape) < 0.08] = np.nan
    X[:, 3] = rng.normal(size=3000)  # no missing values: directions by rows
    y = (np.nan_to_num(X[:, 0]) + X[:, 3] + rng.normal(size=3000) > 0).astype(int)
    cases = [(db.GradientBoostingClassifier, y), (db.GradientBoostingClassifier, y + (X[:, 3] > 1)),
             (db.GradientBoostingRegressor, X[:, 3] + y)]
    seen = _deferrals(monkeypatch)
    for cls, target in cases:
        deferred = cls(n_estimators=6, max_depth=3, random_state=0).fit(X, target)
        assert seen and all(seen)
        seen.clear()
        with monkeypatch.context() as m:
            m.setattr(_Boosting, "_may_defer_counts", lambda self, criterion: False)
            own_wave = cls(n_estimators=6, max_depth=3, random_state=0).fit(X, target)
        assert not any(seen)
        seen.clear()
        assert deferred.trees_ == own_wave.trees_
        assert min(t.nodes["count"].min() for r in deferred.trees_ for t in r) >= 1


@pytest.mark.parametrize("setting", ["eval_set", "zero weight", "subsample", "line search",
                                     "min_samples_leaf"])
def test_the_last_level_keeps_its_own_wave_where_a_row_could_go_elsewhere(monkeypatch, setting):
    """Evaluation rows (their trees must be final when added), rows out of a
    round (zero weight, row sampling: the unsettled missing direction would
    move them), line-search leaves and statistics holding counts: no deferral."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] > 0).astype(int)
    kwargs, fit = {}, {}
    if setting == "eval_set":
        fit["eval_set"] = [(X[:100], y[:100])]
    elif setting == "zero weight":
        fit["sample_weight"] = np.r_[0.0, np.ones(399)]
    elif setting == "subsample":
        kwargs["subsample"] = 0.5
    elif setting == "line search":
        kwargs["leaf_estimation"] = "line_search"
    else:
        kwargs["min_samples_leaf"] = 5
    seen = _deferrals(monkeypatch)
    db.GradientBoostingClassifier(n_estimators=2, max_depth=2, **kwargs).fit(X, y, **fit)
    assert seen and not any(seen)
