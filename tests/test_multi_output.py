"""Multi-output gradient boosting: k targets (regression) and k labels
(multi-label classification), one tree per target per round
(``multi_strategy="one_output_per_tree"``)."""

import numpy as np
import pandas as pd
import pytest

from distboost import GradientBoostingClassifier, GradientBoostingRegressor, load_model
from distboost.inputs.checks import InvalidParameterError
from distboost.inspection import shap_values

SMALL = {"n_estimators": 6, "max_depth": 3, "learning_rate": 0.1}


@pytest.fixture(scope="module")
def data():
    """300 rows, 4 features; 3 targets scaled to max |y| = 1 exactly (so the
    fixed-point scales, shared by the outputs, equal a single-target fit's) and
    3 labels."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    Y = np.column_stack([X[:, 0] + 0.3 * rng.normal(size=300), X[:, 1] * X[:, 2],
                         np.sin(X[:, 3]) - 0.5 * X[:, 0]])
    Y = Y / np.abs(Y).max(axis=0)
    labels = (Y > np.median(Y, axis=0)).astype(np.int64)
    return X, Y, labels


def test_each_target_equals_a_single_target_fit_to_the_bit(data):
    X, Y, labels = data
    multi = GradientBoostingRegressor(**SMALL).fit(X, Y)
    assert multi.n_targets_ == 3 and multi.predict(X).shape == (300, 3)
    assert all(len(r) == 3 for r in multi.trees_)
    for j in range(3):
        single = GradientBoostingRegressor(**SMALL).fit(X, Y[:, j])
        assert multi.base_score_[j] == single.base_score_[0]
        np.testing.assert_array_equal(multi.predict(X)[:, j], single.predict(X))
    clf = GradientBoostingClassifier(**SMALL).fit(X, labels)
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2])
    proba = clf.predict_proba(X)
    for j in range(3):
        single = GradientBoostingClassifier(**SMALL).fit(X, labels[:, j])
        np.testing.assert_array_equal(proba[:, j], single.predict_proba(X)[:, 1])
    np.testing.assert_array_equal(clf.predict(X), (proba > 0.5).astype(int))


@pytest.mark.parametrize("classifier", [False, True])
def test_gradients_by_finite_differences(classifier):
    """g_j = dL/df_j and h_j = d^2L/df_j^2 of L = sum_j L_j(y_j, f_j) (central differences)."""
    from distboost.trees.multi_output import make_multi_output_loss

    rng = np.random.default_rng(0)
    loss = make_multi_output_loss("log_loss" if classifier else "squared_error", classifier, 3)
    y = (rng.random((50, 3)) < 0.4).astype(float) if classifier else rng.normal(size=(50, 3))
    f, w, eps = rng.normal(size=(3, 50)), rng.uniform(0.5, 2.0, 50), 1e-5
    g, h = loss.gradients(y, f, w)
    for j in range(3):
        step = np.zeros_like(f)
        step[j] = eps
        total = [3 * w * loss.pointwise(y, f + s * step) for s in (-1, 0, 1)]
        np.testing.assert_allclose(g[j], (total[2] - total[0]) / (2 * eps), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(h[j], (total[2] - 2 * total[1] + total[0]) / eps**2,
                                   rtol=1e-3, atol=1e-4)


def test_hand_case_leaf_values():
    """Two rows per side of one split, two targets, squared error (g = 2(f - y),
    h = 2), lambda = 1, one round, depth 1, learning rate 1: f_0 = mean(y_j);
    each leaf -G/(H + lambda) per target."""
    X = np.array([[0.0], [0.0], [1.0], [1.0]])
    Y = np.array([[1.0, 0.0], [3.0, 0.0], [5.0, 4.0], [7.0, 4.0]])
    m = GradientBoostingRegressor(n_estimators=1, max_depth=1, learning_rate=1.0,
                                  min_child_weight=0.0).fit(X, Y)
    np.testing.assert_array_equal(m.base_score_, [4.0, 2.0])
    # target 0, left: residuals -3, -1 -> G = 2 * (3 + 1) = 8, H = 4: -8/5; right: -(-8)/5
    # target 1, left: residuals -2, -2 -> G = 8, H = 4: -8/5; right: 8/5
    expect = np.array([[4 - 1.6, 2 - 1.6]] * 2 + [[4 + 1.6, 2 + 1.6]] * 2)
    np.testing.assert_allclose(m.predict(X), expect, rtol=0, atol=1e-15)


def test_dask_equals_in_process(data, dask_client):
    import dask.array as da
    import dask.dataframe as dd

    X, Y, labels = data
    local = GradientBoostingRegressor(**SMALL).fit(X, Y).predict(X)
    Xd = da.from_array(X, chunks=(110, 4))
    on_dask = GradientBoostingRegressor(**SMALL, client=dask_client).fit(Xd, da.from_array(
        Y, chunks=(110, 3)))
    pred = on_dask.predict(Xd).compute()
    np.testing.assert_array_equal(pred, local)
    # an evaluation set and early stopping; the rows kept on the workers' disks
    stop = {**SMALL, "n_estimators": 60, "learning_rate": 0.5, "early_stopping_rounds": 2}
    local = GradientBoostingRegressor(**stop).fit(X[:200], Y[:200], eval_set=[(X[200:], Y[200:])])
    on_dask = GradientBoostingRegressor(**stop, client=dask_client, out_of_core=True).fit(
        da.from_array(X[:200], chunks=(70, 4)), da.from_array(Y[:200], chunks=(70, 3)),
        eval_set=[(da.from_array(X[200:], chunks=(50, 4)), da.from_array(Y[200:], chunks=(50, 3)))])
    assert sum(p["disk_rows"] for p in on_dask.data_placement_) == 200
    assert on_dask.best_iteration_ == local.best_iteration_ < 59
    assert on_dask.evals_result_ == local.evals_result_
    np.testing.assert_array_equal(on_dask.predict(X), local.predict(X))
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=3)
    lab = dd.from_pandas(pd.DataFrame(labels, columns=["x", "y", "z"]), npartitions=3)
    clf = GradientBoostingClassifier(**SMALL, client=dask_client).fit(frame, lab)
    local_clf = GradientBoostingClassifier(**SMALL).fit(
        pd.DataFrame(X, columns=list("abcd")), pd.DataFrame(labels, columns=["x", "y", "z"]))
    np.testing.assert_array_equal(clf.predict_proba(frame).compute(),
                                  local_clf.predict_proba(X))
    np.testing.assert_array_equal(clf.predict(frame).compute(), local_clf.predict(X))


def test_partitioning_does_not_change_the_model(data, partitioned):
    X, Y, _ = data
    one = GradientBoostingRegressor(**SMALL).fit(X, Y).predict(X)
    partitioned(4)
    np.testing.assert_array_equal(GradientBoostingRegressor(**SMALL).fit(X, Y).predict(X), one)


def _check_file_shap_export(est, X, tmp_path):
    """Saved and loaded: the same margins; SHAP sums to them; XGBoost reads the
    export and predicts them (to float32 leaves)."""
    import xgboost as xgb

    est.save_model(tmp_path / "m.json")
    back = load_model(tmp_path / "m.json")
    assert back.n_targets_ == 3 and back.multi_strategy == est.multi_strategy
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    raw = est._decision(X)
    np.testing.assert_array_equal(back._decision(X), raw)
    contributions = shap_values(est, X)
    assert contributions.shape == (300, 3, 5)
    np.testing.assert_allclose(contributions.sum(axis=-1), raw, atol=1e-12)
    est.save_model(tmp_path / "x.json", format="xgboost")
    booster = xgb.Booster(model_file=str(tmp_path / "x.json"))
    margin = booster.predict(xgb.DMatrix(X), output_margin=True)
    np.testing.assert_allclose(margin, raw, rtol=1e-5, atol=1e-5)


def test_model_file_shap_and_xgboost_export(data, tmp_path):
    X, Y, labels = data
    X = X.astype(np.float32)
    for est in (GradientBoostingRegressor(**SMALL).fit(X, Y),
                GradientBoostingClassifier(**SMALL).fit(X, labels)):
        _check_file_shap_export(est, X, tmp_path)


def test_damaged_model_file_is_refused(data, tmp_path):
    import json

    from distboost.model_file import ModelFileError

    X, Y, _ = data
    path = tmp_path / "m.json"
    GradientBoostingRegressor(n_estimators=2, max_depth=2).fit(X, Y).save_model(path)
    d = json.loads(path.read_text())
    for value, message in ((2, r"key base_score: has 3 values but .* has 2 output"),
                           (1, "k >= 2 targets")):
        path.write_text(json.dumps({**d, "n_targets": value}))
        with pytest.raises(ModelFileError, match=message):
            load_model(path)


def test_staged_predictions_and_scores(data):
    X, Y, labels = data
    m = GradientBoostingRegressor(**SMALL).fit(X, Y, eval_set=[(X, Y)])
    np.testing.assert_array_equal(list(m.staged_predict(X))[-1], m.predict(X))
    rmse = np.sqrt(np.mean((m.predict(X) - Y) ** 2))
    assert m.evals_result_["validation_0"]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)
    r2 = np.mean([1 - ((Y[:, j] - m.predict(X)[:, j]) ** 2).sum()
                  / ((Y[:, j] - Y[:, j].mean()) ** 2).sum() for j in range(3)])
    assert m.score(X, Y) == pytest.approx(r2, rel=1e-12)
    c = GradientBoostingClassifier(**SMALL).fit(X, labels)
    assert c.score(X, labels) == np.mean(np.all(c.predict(X) == labels, axis=1))


def test_early_stopping_watches_the_mean_over_targets(data):
    X, Y, _ = data
    m = GradientBoostingRegressor(n_estimators=300, max_depth=3, learning_rate=0.3,
                                  early_stopping_rounds=3).fit(
        X[:200], Y[:200], eval_set=[(X[200:], Y[200:])])
    history = m.evals_result_["validation_0"]["rmse"]
    assert len(history) < 300 and m.best_iteration_ == int(np.argmin(history))
    assert m.n_estimators_ == m.best_iteration_ + 1
    assert len(history) == m.best_iteration_ + 4


def test_bad_input_is_refused(data):
    X, Y, labels = data
    frame = pd.DataFrame({"a": Y[:, 0], "b": ["x"] * 300})
    with pytest.raises(TypeError, match="column 'b'.*not numeric"):
        GradientBoostingRegressor(**SMALL).fit(X, frame)
    bad = Y.copy()
    bad[7, 2] = np.nan
    with pytest.raises(ValueError, match="column 2 has 1 missing.*row 7"):
        GradientBoostingRegressor(**SMALL).fit(X, bad)
    with pytest.raises(ValueError, match="loss='huber' does not support a multi-output"):
        GradientBoostingRegressor(**SMALL, loss="huber").fit(X, Y)
    with pytest.raises(ValueError, match="loss='exponential' does not support"):
        GradientBoostingClassifier(**SMALL, loss="exponential").fit(X, labels)
    three = labels.copy()
    three[4, 1] = 2
    with pytest.raises(ValueError, match="0/1 indicator matrix.*column 1 holds 2.0 at row 4"):
        GradientBoostingClassifier(**SMALL).fit(X, three)
    constant = labels.copy()
    constant[:, 0] = 1
    with pytest.raises(ValueError, match="label column 0 holds one value only"):
        GradientBoostingClassifier(**SMALL).fit(X, constant)
    with pytest.raises(ValueError, match=r"eval_set\[0\] y has 1 column\(s\) but the training "
                                         r"target has 3"):
        GradientBoostingRegressor(**SMALL).fit(X, Y, eval_set=[(X, Y[:, 0])])
    with pytest.raises(InvalidParameterError, match="does not support eval_metric"):
        GradientBoostingRegressor(**SMALL, eval_metric="mae").fit(X, Y)
    with pytest.raises(InvalidParameterError, match="multi_strategy"):
        GradientBoostingRegressor(**SMALL, multi_strategy="vector").fit(X, Y)


@pytest.mark.parametrize("strategy", ["one_output_per_tree", "multi_output_tree"])
def test_continued_training_equals_one_fit(data, strategy, tmp_path):
    """init_model (fitted, or its file) and warm_start add rounds to a multi-output
    model: 3 + 3 rounds equal 6 to the bit, targets and labels."""
    X, Y, labels = data
    for cls, y in ((GradientBoostingRegressor, Y), (GradientBoostingClassifier, labels)):
        params = {**SMALL, "multi_strategy": strategy}
        full = cls(**params).fit(X, y)
        half = cls(**{**params, "n_estimators": 3}).fit(X, y)
        path = tmp_path / f"{cls.__name__}-{strategy}.json"
        half.save_model(path)
        for start in (half, path):
            rest = cls(**{**params, "n_estimators": 3}).fit(X, y, init_model=start)
            assert len(rest.trees_) == 6 and rest.n_targets_ == 3
            np.testing.assert_array_equal(rest.predict(X), full.predict(X))
        warm = cls(**{**params, "n_estimators": 3}, warm_start=True).fit(X, y)
        warm.set_params(n_estimators=6).fit(X, y)
        np.testing.assert_array_equal(warm.predict(X), full.predict(X))


def test_dask_continues_to_the_in_process_model(data, dask_client):
    import dask.array as da

    X, Y, _ = data
    Xd, Yd = da.from_array(X, chunks=(110, 4)), da.from_array(Y, chunks=(110, 3))
    for strategy in ("one_output_per_tree", "multi_output_tree"):
        params = {**SMALL, "n_estimators": 3, "multi_strategy": strategy}
        full = GradientBoostingRegressor(**{**params, "n_estimators": 6}).fit(X, Y)
        half = GradientBoostingRegressor(**params, client=dask_client).fit(Xd, Yd)
        rest = GradientBoostingRegressor(**params, client=dask_client).fit(Xd, Yd,
                                                                          init_model=half)
        np.testing.assert_array_equal(rest.predict(Xd).compute(), full.predict(X))


def test_continuing_other_outputs_is_refused(data):
    """A model of one target, of k targets, or grown by the other strategy is not
    continued with another y (its rounds hold other outputs)."""
    X, Y, _ = data
    one = GradientBoostingRegressor(**SMALL).fit(X, Y[:, 0])
    three = GradientBoostingRegressor(**SMALL).fit(X, Y)
    with pytest.raises(ValueError, match="init_model was trained on one target and y has 3 "
                                         "target columns"):
        GradientBoostingRegressor(**SMALL).fit(X, Y, init_model=one)
    with pytest.raises(ValueError, match="trained on 3 target columns and y has one target"):
        GradientBoostingRegressor(**SMALL).fit(X, Y[:, 0], init_model=three)
    with pytest.raises(ValueError, match="trained on 3 target columns and y has 2 target"):
        GradientBoostingRegressor(**SMALL).fit(X, Y[:, :2], init_model=three)
    with pytest.raises(ValueError, match="multi_strategy='one_output_per_tree' and this fit "
                                         "has multi_strategy='multi_output_tree'"):
        GradientBoostingRegressor(**SMALL, multi_strategy="multi_output_tree").fit(
            X, Y, init_model=three)
    warm = GradientBoostingRegressor(**SMALL, warm_start=True).fit(X, Y)
    warm.set_params(n_estimators=8)
    with pytest.raises(ValueError, match=r"this model \(warm_start\) was trained on 3 target "
                                         r"columns and y has one target"):
        warm.fit(X, Y[:, 0])
    assert warm.n_targets_ == 3 and len(warm.trees_) == 6  # the model is left as it was


def test_scikit_learn_sees_a_multi_output_estimator(data):
    from sklearn.model_selection import cross_val_score
    from sklearn.utils import get_tags

    X, Y, _ = data
    assert get_tags(GradientBoostingRegressor()).target_tags.multi_output
    assert get_tags(GradientBoostingClassifier()).classifier_tags.multi_label
    scores = cross_val_score(GradientBoostingRegressor(**SMALL), X, Y, cv=2)
    assert scores.shape == (2,) and np.all(scores > 0)


def test_dask_bad_input_names_the_column(data, dask_client):
    import dask.dataframe as dd

    X, Y, _ = data
    bad = pd.DataFrame(Y.copy(), columns=["u", "v", "w"])  # pandas < 3 shares Y without it
    bad.loc[250, "w"] = np.inf
    Xd = dd.from_pandas(pd.DataFrame(X), npartitions=3)
    with pytest.raises(ValueError, match="column 'w' in partition 2 has 1 missing or infinite"):
        GradientBoostingRegressor(**SMALL, client=dask_client).fit(
            Xd, dd.from_pandas(bad, npartitions=3))
    Yd = dd.from_pandas(pd.DataFrame(Y, columns=["u", "v", "w"]), npartitions=3)
    with pytest.raises(ValueError, match=r"eval_set\[0\] y has 1 column\(s\) but the training"):
        GradientBoostingRegressor(**SMALL, client=dask_client).fit(
            Xd, Yd, eval_set=[(Xd, Yd["u"])])
    with pytest.raises(ValueError, match="y has 3 columns; this estimator takes one target"):
        from distboost import RandomForestRegressor

        RandomForestRegressor(n_estimators=2, client=dask_client).fit(Xd, Yd)


# multi_strategy="multi_output_tree": one vector-leaf tree per round

VECTOR = {**SMALL, "multi_strategy": "multi_output_tree"}


def test_vector_leaves_hand_case():
    """Four rows at x = 0..3, two targets, squared error (g = 2(f - y), h = 2),
    lambda = 1, depth 1, learning rate 1. Gains 1/2 [G_L^2/(H_L+1) + G_R^2/(H_R+1)]
    (G = 0 at the root) of x <= 0, 1, 2: target 0 alone 0.54, 1.8, 4.82 (splits
    at x <= 2); target 1 alone 3.81, 3.2, 0 (x <= 0); summed 4.35, 5.0, 4.82:
    the vector tree splits at x <= 1, where neither target alone would.
    """
    X = np.arange(4.0)[:, None]
    Y = np.array([[0.0, 0.0], [0.0, 2.0], [0.0, 4.0], [3.0, 2.0]])
    m = GradientBoostingRegressor(n_estimators=1, max_depth=1, learning_rate=1.0,
                                  min_child_weight=0.0, multi_strategy="multi_output_tree")
    m.fit(X, Y)
    np.testing.assert_array_equal(m.base_score_, [0.75, 2.0])
    # residuals: target 0 (-.75, -.75, -.75, 2.25), target 1 (-2, 0, 2, 0); G = -2 sum r
    # x <= 1, left: G_0 = 3, G_1 = 4, H = 4 -> leaves -3/5, -4/5; right: +3/5, +4/5
    (t0, t1), = m.trees_
    assert t0.nodes["feature"][0] == t1.nodes["feature"][0] == 0
    np.testing.assert_array_equal(t0.nodes["bin_threshold"], t1.nodes["bin_threshold"])
    # the summed gain: 0.5 (3^2/5 + 3^2/5) + 0.5 (4^2/5 + 4^2/5) = 1.8 + 3.2
    assert t0.nodes["gain"][0] == pytest.approx(5.0, rel=1e-14)
    expect = np.array([[0.75 - 0.6, 2 - 0.8]] * 2 + [[0.75 + 0.6, 2 + 0.8]] * 2)
    np.testing.assert_allclose(m.predict(X), expect, rtol=0, atol=1e-15)
    # one tree per target splits where each target alone prefers
    per_target = GradientBoostingRegressor(n_estimators=1, max_depth=1, learning_rate=1.0,
                                           min_child_weight=0.0).fit(X, Y)
    a, b = per_target.trees_[0]
    assert (a.nodes["threshold"][0], b.nodes["threshold"][0]) != (t0.nodes["threshold"][0],) * 2


def test_vector_leaves_of_identical_targets_equal_a_single_target_fit(data):
    """k copies of one target: every gain is k times the single target's, the
    leaves the same floats, so the trees are the single-target fit's to the bit."""
    X, Y, _ = data
    single = GradientBoostingRegressor(**SMALL).fit(X, Y[:, 0])
    twice = GradientBoostingRegressor(**VECTOR).fit(X, np.column_stack([Y[:, 0]] * 2))
    for j in range(2):
        np.testing.assert_array_equal(twice.predict(X)[:, j], single.predict(X))


def test_vector_leaves_grown_here_add_margins_from_their_leaves(data, monkeypatch):
    """In process a round's one tree grows in one compiled call and each leaf
    holds its rows: the k trees' values are added from there (``add_routed``),
    every round, to the bits of the walk from the root (level by level)."""
    import dask

    from distboost.learners import gradient

    added, routed = [], gradient.add_routed
    monkeypatch.setattr(gradient, "add_routed", lambda *a: added.append(routed(*a)) or added[-1])
    X, Y, _ = data
    here = GradientBoostingRegressor(**VECTOR).fit(X, Y)
    assert len(added) == VECTOR["n_estimators"] - 1 and all(added)
    with dask.config.set({"distboost.local-grower": False}):
        walked = GradientBoostingRegressor(**VECTOR).fit(X, Y)
    assert here.trees_ == walked.trees_


def test_vector_leaves_dask_equals_in_process(data, dask_client, partitioned):
    import dask.array as da
    import dask.dataframe as dd

    X, Y, labels = data
    local = GradientBoostingRegressor(**VECTOR).fit(X, Y)
    assert all(len(r) == 3 and np.array_equal(r[0].nodes["feature"], r[2].nodes["feature"])
               for r in local.trees_)
    Xd = da.from_array(X, chunks=(110, 4))
    on_dask = GradientBoostingRegressor(**VECTOR, client=dask_client).fit(
        Xd, da.from_array(Y, chunks=(110, 3)))
    np.testing.assert_array_equal(on_dask.predict(Xd).compute(), local.predict(X))
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcd")), npartitions=3)
    lab = dd.from_pandas(pd.DataFrame(labels, columns=["x", "y", "z"]), npartitions=3)
    clf = GradientBoostingClassifier(**VECTOR, client=dask_client).fit(frame, lab)
    local_clf = GradientBoostingClassifier(**VECTOR).fit(X, labels)
    np.testing.assert_array_equal(clf.predict_proba(frame).compute(),
                                  local_clf.predict_proba(X))
    partitioned(4)
    np.testing.assert_array_equal(GradientBoostingRegressor(**VECTOR).fit(X, Y).predict(X),
                                  local.predict(X))


def test_vector_leaves_model_file_shap_and_export(data, tmp_path):
    X, Y, _ = data
    X = X.astype(np.float32)
    est = GradientBoostingRegressor(**VECTOR).fit(X, Y)
    assert est.multi_strategy == "multi_output_tree"
    _check_file_shap_export(est, X, tmp_path)


def test_vector_leaves_rmse_against_xgboost():
    """5 correlated targets (``bench/multi_output.make_targets``): the held-out
    RMSE of distboost's vector-leaf trees within 3 % of XGBoost's
    ``multi_strategy="multi_output_tree"`` (same rounds, depth, lambda)."""
    import importlib.util
    import pathlib

    import xgboost as xgb

    path = pathlib.Path(__file__).parents[1] / "bench" / "multi_output.py"
    spec = importlib.util.spec_from_file_location("bench_multi_output", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    X, Y = bench.make_targets(1500)
    common = {"n_estimators": 30, "max_depth": 4, "learning_rate": 0.2}
    ours = GradientBoostingRegressor(**common, reg_lambda=2.0, min_child_weight=2.0,
                                     multi_strategy="multi_output_tree").fit(X[:1200], Y[:1200])
    theirs = xgb.XGBRegressor(**common, reg_lambda=1.0, min_child_weight=1.0, tree_method="hist",
                              max_bin=256, n_jobs=1, multi_strategy="multi_output_tree").fit(
        X[:1200], Y[:1200])
    rmse = [bench._rmse(Y[1200:], m.predict(X[1200:])) for m in (ours, theirs)]
    assert rmse[0] < 1.03 * rmse[1], rmse


def test_vector_leaves_refusals(data):
    X, Y, _ = data
    frame = pd.DataFrame(X, columns=list("abcd")).assign(d=lambda f: pd.Categorical(
        np.where(f.d > 0, "u", "v")))
    with pytest.raises(ValueError, match="numeric features only, but feature 3 is categorical"):
        GradientBoostingRegressor(**VECTOR).fit(frame, Y)
    with pytest.raises(InvalidParameterError, match="booster='dart' with multi_strategy"):
        GradientBoostingRegressor(**VECTOR, booster="dart").fit(X, Y)


@pytest.mark.parametrize("extra", [
    {"subsample": 0.7, "colsample_bytree": 0.75, "colsample_bynode": 0.5},
    {"max_leaf_nodes": 5, "max_depth": None},
    {"interaction_cst": [[0, 1], [2, 3]], "min_samples_leaf": 5, "gamma": 0.1},
])
def test_vector_leaves_options_do_not_depend_on_the_partitions(extra, partitioned):
    """Row and column sampling, best-first growth, interaction constraints,
    min_samples_leaf and gamma, with weights and missing values: the same model
    on 1 and 3 partitions."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    Y = np.column_stack([np.nan_to_num(X[:, 0]), np.nan_to_num(X[:, 1]), rng.normal(size=200)])
    w = rng.uniform(0.5, 2.0, 200)
    params = {**VECTOR, **extra}
    one = GradientBoostingRegressor(**params).fit(X, Y, sample_weight=w)
    assert one.score(X, Y) > 0.2
    partitioned(3)
    three = GradientBoostingRegressor(**params).fit(X, Y, sample_weight=w)
    np.testing.assert_array_equal(three.predict(X), one.predict(X))
