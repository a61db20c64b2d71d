"""Survival: AFT and Cox losses (kernels.survival, trees.survival), their exact
risk sets across partitions (training.survival), metrics, the estimator, and
comparisons with XGBoost on simulated censored data (bench/survival_data.py)."""

import math

import numpy as np
import pytest

from bench.survival_data import lognormal_aft, weibull_ph
from distboost import GradientBoostingSurvivalRegressor, InvalidParameterError, load_model
from distboost.engine import local_partitions
from distboost.kernels import survival as ks
from distboost.metrics import make_metrics
from distboost.trees.survival import (
    DISTRIBUTIONS,
    AFTLoss,
    CoxLoss,
    IntervalTarget,
    cox_tables,
    row_event_bins,
)

SMALL = {"n_estimators": 8, "max_depth": 3, "learning_rate": 0.3}
INF = math.inf


def _aft(dist, lower, upper, f, sigma=1.0):
    return ks.aft_row(DISTRIBUTIONS[dist], lower, upper, f, sigma)


# (lower, upper) of each censoring type, and margins where no clipping applies
LABELS = {"uncensored": (3.0, 3.0), "right": (3.0, INF), "left": (0.0, 3.0),
          "interval": (2.0, 5.0)}


# ------------------------------------------------------------------ AFT rows
@pytest.mark.parametrize("dist", ["normal", "logistic", "extreme"])
@pytest.mark.parametrize("censoring", list(LABELS))
def test_aft_gradients_are_finite_differences_of_the_loss(dist, censoring):
    lower, upper = LABELS[censoring]
    eps = 1e-5
    for f in (-0.4, 0.3, 1.1, 2.0):
        for sigma in (0.7, 1.3):
            _loss, g, h = _aft(dist, lower, upper, f, sigma)
            lp, gp, _ = _aft(dist, lower, upper, f + eps, sigma)
            lm, gm, _ = _aft(dist, lower, upper, f - eps, sigma)
            fd_g = np.clip((lp - lm) / (2 * eps), -15, 15)  # XGBoost's clipping
            assert g == pytest.approx(fd_g, rel=1e-5, abs=1e-8)
            if abs(fd_g) < 15:
                fd_h = np.clip((gp - gm) / (2 * eps), 1e-16, 15)
                assert h == pytest.approx(fd_h, rel=1e-4, abs=1e-7)


def test_aft_hand_values():
    """Normal, sigma 1, lower = upper = e, f = 1: z = 0, loss = log(sqrt(2 pi)) + 1,
    g = 0, h = 1. Right-censored at e with f = 1: loss = -log(1 - Phi(0)) = log 2,
    g = -pdf(0) / (1 - Phi(0)) = -2 / sqrt(2 pi)."""
    loss, g, h = _aft("normal", math.e, math.e, 1.0)
    assert loss == pytest.approx(0.5 * math.log(2 * math.pi) + 1, rel=1e-15)
    assert (g, h) == (0.0, 1.0)
    loss, g, _ = _aft("normal", math.e, INF, 1.0)
    assert loss == pytest.approx(math.log(2), rel=1e-15)
    assert g == pytest.approx(-2 / math.sqrt(2 * math.pi), rel=1e-15)
    # logistic, uncensored at z = 0: pdf 1/4, loss = -log(1/4 / e), g = 0, h = -pdf''/pdf = 1/2
    loss, g, h = _aft("logistic", math.e, math.e, 1.0)
    assert loss == pytest.approx(math.log(4) + 1, rel=1e-15)
    assert (g, h) == (0.0, 0.5)


def test_aft_extreme_tails_take_xgboosts_limits_and_clips():
    """Far tails: XGBoost's limits (Barnwal et al. 2022, Table 2) and clipping
    to g in [-15, 15], h in [1e-16, 15]."""
    _, g, h = _aft("normal", 3.0, 3.0, -200.0)  # z >> 0: g = -15 (clipped), h = 1
    assert (g, h) == (-15.0, 1.0)
    _, g, h = _aft("normal", 3.0, INF, 200.0)  # right-censored, survives far: no push
    assert g == pytest.approx(0.0, abs=1e-300) and h == 1e-16
    _, g, h = _aft("normal", 3.0, INF, -200.0)  # right-censored, predicted far too early
    assert (g, h) == (-15.0, 1.0)
    _, g, h = _aft("logistic", 0.0, 3.0, -800.0)  # left-censored, consistent: 0
    assert g == 0.0 and h == 1e-16
    _, g, h = _aft("extreme", 3.0, 3.0, -800.0)  # uncensored, z -> +inf
    assert (g, h) == (-15.0, 15.0)


def test_aft_loss_equals_xgboosts_metric():
    xgb = pytest.importorskip("xgboost")
    X, lower, upper = lognormal_aft(300, seed=3)
    f = np.random.default_rng(0).normal(1.0, 0.7, size=300)
    for dist in ("normal", "logistic", "extreme"):
        d = xgb.DMatrix(X, base_margin=f)
        d.set_float_info("label_lower_bound", lower)
        d.set_float_info("label_upper_bound", upper)
        booster = xgb.train({"objective": "survival:aft", "aft_loss_distribution": dist,
                             "eval_metric": "aft-nloglik"}, d, 0)
        theirs = float(booster.eval(d).split(":")[1])
        # XGBoost's labels and margins are float32
        ours = AFTLoss(dist, 1.0).pointwise(
            IntervalTarget(lower.astype(np.float32).astype(float),
                           upper.astype(np.float32).astype(float)),
            f.astype(np.float32).astype(float)[None, :]).mean()
        assert ours == pytest.approx(theirs, rel=1e-6)


# ----------------------------------------------------------------------- Cox
def _cox_g_h(y, f, n_parts=1):
    """g, h through the fixed-point bins, the rows cut into ``n_parts`` pieces."""
    time, event = np.abs(y), (y > 0).astype(float)
    times, counts = np.unique(time[event > 0], return_counts=True)
    f_max = float(f.max())
    sums = np.zeros((len(times), ks.N_LIMBS), np.int64)
    for piece in np.array_split(np.arange(len(y)), n_parts):
        part = np.zeros_like(sums)
        bins = np.empty(len(piece), np.int64)
        ks.event_bins(time[piece], times, bins)
        ks.cox_bin_sums(bins, f[piece], f_max, part)
        sums += part
    a, b = cox_tables(sums, counts)
    loss = CoxLoss(times, counts).with_tables(f_max, a, b)
    g, h = loss.gradients(y, f[None, :], np.ones(len(y)))
    return g[0], h[0]


def _cox_nll(y, f):
    """sum over events of log R(t_i) - f_i (Breslow), straight from the definition."""
    time = np.abs(y)
    return sum(math.log(np.exp(f[time >= time[i]]).sum()) - f[i]
               for i in range(len(y)) if y[i] > 0)


def test_cox_hand_case():
    """Times 1, 2, 3, all events, f = 0: R = 3, 2, 1; A = 1/3, 5/6, 11/6;
    B = 1/9, 13/36, 49/36; g = A - 1, h = A - B."""
    g, h = _cox_g_h(np.array([1.0, 2.0, 3.0]), np.zeros(3))
    np.testing.assert_allclose(g, [1 / 3 - 1, 5 / 6 - 1, 11 / 6 - 1], rtol=1e-15)
    np.testing.assert_allclose(h, [2 / 9, 17 / 36, 17 / 36], rtol=1e-15)


def test_cox_gradients_are_finite_differences_with_ties_and_censoring():
    rng = np.random.default_rng(4)
    time = rng.integers(1, 6, size=25).astype(float)  # many ties
    y = np.where(rng.uniform(size=25) < 0.35, -time, time)
    y[0] = 0.5  # before every other time
    y[1] = -0.25  # censored before the first event: in no risk set
    f = rng.normal(size=25)
    g, h = _cox_g_h(y, f)
    eps = 1e-5
    for i in range(25):
        step = np.zeros(25)
        step[i] = eps
        assert g[i] == pytest.approx((_cox_nll(y, f + step) - _cox_nll(y, f - step)) / (2 * eps),
                                     rel=1e-6, abs=1e-8)
        gp, _ = _cox_g_h(y, f + step)
        gm, _ = _cox_g_h(y, f - step)
        assert h[i] == pytest.approx((gp[i] - gm[i]) / (2 * eps), rel=1e-5, abs=1e-8)
    assert g[1] == 0.0 and h[1] == 0.0


def test_cox_risk_set_sums_do_not_depend_on_the_partitioning():
    rng = np.random.default_rng(5)
    y = np.where(rng.uniform(size=500) < 0.3, -1, 1) * rng.exponential(size=500)
    f = rng.normal(scale=3, size=500)
    g1, h1 = _cox_g_h(y, f)
    for parts in (2, 7, 64):
        gk, hk = _cox_g_h(y, f, parts)
        assert np.array_equal(g1, gk) and np.array_equal(h1, hk)


def test_row_event_bins_by_hand_searched_once_per_label_array():
    """Event times 1, 2, 3: time 2 -> bin 1, 1.5 (censored) -> 0, 3 -> 2, 0.5 -> -1
    (before every event), 1 -> 0."""
    y = np.array([2.0, -1.5, 3.0, -0.5, 1.0])
    times = np.array([1.0, 2.0, 3.0])
    bins, event = row_event_bins(y, times)
    assert bins.tolist() == [1, 0, 2, -1, 0] and event.tolist() == [1, 0, 1, 0, 1]
    again, _ = row_event_bins(y, times.copy())  # equal times (a round's pickled copy)
    assert again is bins
    fewer, _ = row_event_bins(y, np.array([2.0, 3.0]))  # other times: searched again
    assert fewer.tolist() == [0, -1, 1, -1, -1]
    assert row_event_bins(y.copy(), np.array([2.0, 3.0]))[0] is not fewer  # another array


def test_fixed_point_sums_are_exact_to_2_to_the_minus_192():
    values = np.array([1.0, 2.0**-60, 2.0**-100, 0.75, 2.0**-127, 2.0**-140, 2.0**-200,
                       2.0**-52])
    limbs = np.zeros((1, ks.N_LIMBS), np.int64)
    for v in values:
        ks._add_fixed(limbs[0], v)
    total = sum(int(limbs[0, j]) << (32 * j) for j in range(ks.N_LIMBS))
    assert total == ((1 << 192) + (1 << 132) + (1 << 92) + (3 << 190) + (1 << 65) + (1 << 52)
                     + (1 << 140))  # 2^-200 drops
    assert ks.fixed_to_float(limbs)[0] == 1.75 + 2.0**-52  # correctly rounded here


# ------------------------------------------------------------------ metrics
def test_cindex_and_cox_nloglik_by_hand():
    loss = CoxLoss()
    (cindex,) = make_metrics("cindex", loss, None)
    y = np.array([1.0, -2.0, 3.0, 4.0])  # comparable: (1,2) (1,3) (1,4) (3,4)
    f = np.array([2.0, 1.0, 1.0, 1.5])  # concordant: (1,2) (1,3) (1,4); (3,4) discordant
    partial = cindex.merge([cindex.partial(y[:2], f[None, :2], np.ones(2)),
                            cindex.partial(y[2:], f[None, 2:], np.ones(2))])
    assert cindex.value(partial) == 0.75
    f = np.array([2.0, 2.0, 1.0, 1.0])  # (1,2) tie: 1/2; (3,4) tie: 1/2
    assert cindex.value(cindex.partial(y, f[None, :], np.ones(4))) == (0.5 + 1 + 1 + 0.5) / 4
    (nll,) = make_metrics(None, loss, None)
    f = np.array([0.0, 0.5, -0.5, 1.0])
    expected = _cox_nll(y, f) / 3
    assert nll.value(nll.partial(y, f[None, :], np.ones(4))) == pytest.approx(expected, 1e-15)
    aft = AFTLoss()
    (c_aft,) = make_metrics("cindex", aft, None)  # longer predicted time = lower risk
    target = IntervalTarget(np.abs(y), np.where(y > 0, y, INF))
    assert c_aft.value(c_aft.partial(target, -np.array([[2.0, 1.0, 1.0, 1.5]]),
                                     np.ones(4))) == 0.75


# ---------------------------------------------------------------- estimator
@pytest.fixture(scope="module")
def cox_data():
    return weibull_ph(600, seed=11)


@pytest.fixture(scope="module")
def aft_data():
    return lognormal_aft(600, seed=12)


def test_partitions_give_the_same_model(cox_data, aft_data):
    X, time, event = cox_data
    one = GradientBoostingSurvivalRegressor(**SMALL).fit(X, time, event=event)
    with local_partitions(3):
        three = GradientBoostingSurvivalRegressor(**SMALL).fit(X, time, event=event)
    assert np.array_equal(one.predict(X), three.predict(X))
    signed = GradientBoostingSurvivalRegressor(**SMALL).fit(X, np.where(event == 1, time, -time))
    assert np.array_equal(signed.predict(X), one.predict(X))
    X, lower, upper = aft_data
    params = dict(SMALL, objective="survival:aft", aft_loss_distribution="logistic")
    one = GradientBoostingSurvivalRegressor(**params).fit(X, y_lower=lower, y_upper=upper)
    with local_partitions(4):
        four = GradientBoostingSurvivalRegressor(**params).fit(X, y_lower=lower, y_upper=upper)
    assert np.array_equal(one.predict(X), four.predict(X))
    xgb_names = GradientBoostingSurvivalRegressor(**params).fit(
        X, label_lower_bound=lower, label_upper_bound=upper)
    assert np.array_equal(one.predict(X), xgb_names.predict(X))
    assert np.array_equal(one.predict(X), np.exp(one.predict(X, output_margin=True)))


def test_continued_training_equals_one_fit(cox_data, aft_data):
    X, time, event = cox_data
    full = GradientBoostingSurvivalRegressor(**SMALL).fit(X, time, event=event)
    half = dict(SMALL, n_estimators=4)
    first = GradientBoostingSurvivalRegressor(**half).fit(X, time, event=event)
    both = GradientBoostingSurvivalRegressor(**half).fit(X, time, event=event, init_model=first)
    assert np.array_equal(both.predict(X), full.predict(X))
    X, lower, upper = aft_data
    half = dict(half, objective="survival:aft")
    full = GradientBoostingSurvivalRegressor(**dict(SMALL, objective="survival:aft")).fit(
        X, y_lower=lower, y_upper=upper)
    first = GradientBoostingSurvivalRegressor(**half).fit(X, y_lower=lower, y_upper=upper)
    both = GradientBoostingSurvivalRegressor(**half).fit(X, y_lower=lower, y_upper=upper,
                                                         init_model=first)
    assert np.array_equal(both.predict(X), full.predict(X))


def test_early_stopping_on_cindex(cox_data):
    X, time, event = cox_data
    model = GradientBoostingSurvivalRegressor(n_estimators=40, max_depth=3,
                                              eval_metric=["cox-nloglik", "cindex"],
                                              early_stopping_rounds=3)
    model.fit(X[:400], time[:400], event=event[:400],
              eval_set=[(X[400:], time[400:], event[400:])])
    history = model.evals_result_["validation_0"]["cindex"]
    assert model.best_iteration_ == int(np.argmax(history))
    assert len(history) < 40
    assert model.score(X[400:], time[400:], event=event[400:]) == pytest.approx(
        history[model.best_iteration_], rel=1e-12)


def test_dask_equals_in_process_with_risk_sets_across_partitions(cox_data, aft_data,
                                                                 dask_client):
    """Three partitions on two workers: every risk set holds rows of several."""
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd

    X, time, event = cox_data
    y = np.where(event == 1, time, -time)
    params = dict(SMALL, eval_metric=["cox-nloglik", "cindex"])
    here = GradientBoostingSurvivalRegressor(**params).fit(X, y, eval_set=[(X[:200], y[:200])])
    chunks = (150, 250, 200)
    dX, dy = da.from_array(X, chunks=(chunks, X.shape[1])), da.from_array(y, chunks=(chunks,))
    there = GradientBoostingSurvivalRegressor(client=dask_client, **params).fit(
        dX, dy, eval_set=[(dX[:200], dy[:200])])
    assert np.array_equal(np.asarray(there.predict(X)), here.predict(X))
    assert there.evals_result_ == here.evals_result_
    X, lower, upper = aft_data
    params = dict(SMALL, objective="survival:aft", eval_metric=["aft-nloglik", "cindex"])
    here = GradientBoostingSurvivalRegressor(**params).fit(
        X, y_lower=lower, y_upper=upper, eval_set=[(X, lower, upper)])
    lo, up = da.from_array(lower, chunks=(chunks,)), da.from_array(upper, chunks=(chunks,))
    dX = da.from_array(X, chunks=(chunks, X.shape[1]))
    there = GradientBoostingSurvivalRegressor(client=dask_client, **params).fit(
        dX, y_lower=lo, y_upper=up, eval_set=[(dX, lo, up)])
    assert np.array_equal(np.asarray(there.predict(X)), here.predict(X))
    assert there.evals_result_ == here.evals_result_
    # one frame's columns: the bounds travel joined to X's partitions
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]).assign(
        lo=lower, up=upper)
    ddf = dd.from_pandas(frame, npartitions=3)
    features = ddf[[f"x{j}" for j in range(X.shape[1])]]
    joined = GradientBoostingSurvivalRegressor(client=dask_client, **params).fit(
        features, y_lower=ddf["lo"], y_upper=ddf["up"], eval_set=[(features, ddf["lo"],
                                                                   ddf["up"])])
    assert np.array_equal(np.asarray(joined.predict(frame.iloc[:, :X.shape[1]])),
                          here.predict(X))
    assert joined.evals_result_ == here.evals_result_
    bad = np.where(np.arange(len(y)) == 420, 0.0, y)
    with pytest.raises(ValueError, match="partition 2 has 1 value.* equal to 0, the first at "
                                         "row 20"):
        GradientBoostingSurvivalRegressor(client=dask_client, **SMALL).fit(
            dX, da.from_array(bad, chunks=(chunks,)))
    swapped = da.from_array(np.where(np.arange(len(y)) == 160, -1.0, lower), chunks=(chunks,))
    with pytest.raises(ValueError, match="y_lower in partition 1 has 1 value.* below 0, the "
                                         "first at row 10"):
        GradientBoostingSurvivalRegressor(client=dask_client, objective="survival:aft",
                                          **SMALL).fit(dX, y_lower=swapped, y_upper=up)


def test_bad_labels_are_refused(cox_data, aft_data):
    X, time, event = cox_data
    cox = GradientBoostingSurvivalRegressor(**SMALL)
    with pytest.raises(ValueError, match=r"y has 1 value\(s\) equal to 0, the first at row 3"):
        cox.fit(X, np.where(np.arange(len(time)) == 3, 0.0, time))
    with pytest.raises(ValueError, match="y has 1 value.* NaN or infinite, the first at row 5"):
        cox.fit(X, np.where(np.arange(len(time)) == 5, np.nan, time))
    with pytest.raises(ValueError, match="y has 1 value.* not finite times > 0.*row 2"):
        cox.fit(X, np.where(np.arange(len(time)) == 2, -1.0, time), event=event)
    with pytest.raises(ValueError, match="event has 1 value.* not 0 or 1.*row 4"):
        cox.fit(X, time, event=np.where(np.arange(len(time)) == 4, 2.0, event))
    with pytest.raises(ValueError, match="y_lower and y_upper are for objective='survival:aft'"):
        cox.fit(X, y_lower=time, y_upper=time)
    X, lower, upper = aft_data
    aft = GradientBoostingSurvivalRegressor(objective="survival:aft", **SMALL)
    with pytest.raises(ValueError, match="takes its labels as y_lower and y_upper, not y"):
        aft.fit(X, lower)
    with pytest.raises(ValueError, match="y_lower has 1 value.* below 0, the first at row 7"):
        aft.fit(X, y_lower=np.where(np.arange(len(lower)) == 7, -2.0, lower), y_upper=upper)
    with pytest.raises(ValueError, match=r"y_upper has 1 value.* below y_lower, the first at "
                                         r"row 9"):
        aft.fit(X, y_lower=np.where(np.arange(len(lower)) == 9, 5.0, lower),
                y_upper=np.where(np.arange(len(lower)) == 9, 1.0, upper))
    with pytest.raises(ValueError, match="y_upper has 1 value.* NaN.*row 1"):
        aft.fit(X, y_lower=lower, y_upper=np.where(np.arange(len(lower)) == 1, np.nan, upper))
    with pytest.raises(ValueError, match=r"y_lower of eval_set\[0\] has 1 value.* NaN"):
        aft.fit(X, y_lower=lower, y_upper=upper,
                eval_set=[(X, np.where(np.arange(len(lower)) == 0, np.nan, lower), upper)])
    with pytest.raises(InvalidParameterError, match="aft_loss_distribution"):
        GradientBoostingSurvivalRegressor(objective="survival:aft",
                                          aft_loss_distribution="gumbel").fit(
            X, y_lower=lower, y_upper=upper)
    with pytest.raises(InvalidParameterError, match="eval_metric 'aft-nloglik' is not a metric "
                                                    "of objective='survival:cox'"):
        GradientBoostingSurvivalRegressor(eval_metric="aft-nloglik").fit(X, upper)


def test_saved_model_loads_and_exports_to_xgboost(aft_data, cox_data, tmp_path):
    xgb = pytest.importorskip("xgboost")
    import json

    X, lower, upper = aft_data
    model = GradientBoostingSurvivalRegressor(
        objective="survival:aft", aft_loss_distribution="extreme",
        aft_loss_distribution_scale=0.8, **SMALL).fit(X, y_lower=lower, y_upper=upper)
    model.save_model(tmp_path / "aft.json")
    loaded = load_model(tmp_path / "aft.json")
    assert isinstance(loaded, GradientBoostingSurvivalRegressor)
    assert loaded.aft_loss_distribution == "extreme"
    assert np.array_equal(loaded.predict(X), model.predict(X))
    for est, name in ((model, "aft"), (GradientBoostingSurvivalRegressor(**SMALL).fit(
            cox_data[0], cox_data[1], event=cox_data[2]), "cox")):
        path = tmp_path / f"{name}-xgb.json"
        est.save_model(path, format="xgboost")
        booster = xgb.Booster(model_file=str(path))
        config = json.loads(booster.save_config())["learner"]["objective"]
        assert config["name"] == f"survival:{name}"
        np.testing.assert_allclose(booster.predict(xgb.DMatrix(X), output_margin=True),
                                   est.predict(X, output_margin=True), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(booster.predict(xgb.DMatrix(X)), est.predict(X), rtol=1e-5)
    assert config == {"name": "survival:cox"}


# -------------------------------------------------------- against XGBoost
XGB_PARAMS = {"eta": 0.1, "max_depth": 3, "reg_lambda": 1.0, "min_child_weight": 1.0,
              "tree_method": "hist", "max_bin": 256}
OUR_PARAMS = {"n_estimators": 60, "learning_rate": 0.1, "max_depth": 3, "reg_lambda": 1.0,
              "min_child_weight": 1.0}


def _held_out(model, name, target, raw):
    (metric,) = make_metrics(name, model._make_loss(), None)
    return metric.value(metric.partial(target, raw[None, :], np.ones(len(raw))))


def test_cox_matches_xgboost_on_weibull_times():
    """Weibull proportional hazards, ~30 % right-censored (bench/survival_data.py):
    held-out partial likelihood within 1 %, C-index within 0.005 of XGBoost's."""
    xgb = pytest.importorskip("xgboost")
    X, time, event = weibull_ph(3000, seed=1)
    y = np.where(event == 1, time, -time)
    tr, te = slice(0, 2000), slice(2000, None)
    ours = GradientBoostingSurvivalRegressor(**OUR_PARAMS).fit(X[tr], y[tr])
    theirs = xgb.train({"objective": "survival:cox", **XGB_PARAMS},
                       xgb.DMatrix(X[tr], label=y[tr]), OUR_PARAMS["n_estimators"])
    raw_ours = ours.predict(X[te], output_margin=True)
    raw_theirs = theirs.predict(xgb.DMatrix(X[te]), output_margin=True).astype(float)
    nll = [_held_out(ours, "cox-nloglik", y[te], r) for r in (raw_ours, raw_theirs)]
    cidx = [_held_out(ours, "cindex", y[te], r) for r in (raw_ours, raw_theirs)]
    assert abs(nll[0] / nll[1] - 1) < 0.01, nll
    assert abs(cidx[0] - cidx[1]) < 0.005, cidx
    assert float(theirs.eval(xgb.DMatrix(X[te], label=y[te])).split(":")[1]) == pytest.approx(
        nll[1], rel=1e-6)  # our metric is XGBoost's


@pytest.mark.parametrize("dist", ["normal", "logistic", "extreme"])
def test_aft_matches_xgboost_on_lognormal_times(dist):
    """Log-normal AFT times, right-, interval- and left-censored (bench/survival_data.py)."""
    xgb = pytest.importorskip("xgboost")
    X, lower, upper = lognormal_aft(3000, seed=2)
    tr, te = slice(0, 2000), slice(2000, None)
    ours = GradientBoostingSurvivalRegressor(
        objective="survival:aft", aft_loss_distribution=dist, aft_loss_distribution_scale=0.8,
        **OUR_PARAMS).fit(X[tr], y_lower=lower[tr], y_upper=upper[tr])
    d = xgb.DMatrix(X[tr])
    d.set_float_info("label_lower_bound", lower[tr])
    d.set_float_info("label_upper_bound", upper[tr])
    theirs = xgb.train({"objective": "survival:aft", "aft_loss_distribution": dist,
                        "aft_loss_distribution_scale": 0.8, **XGB_PARAMS}, d,
                       OUR_PARAMS["n_estimators"])
    target = IntervalTarget(lower[te], upper[te])
    raws = (ours.predict(X[te], output_margin=True),
            theirs.predict(xgb.DMatrix(X[te]), output_margin=True).astype(float))
    nll = [_held_out(ours, "aft-nloglik", target, r) for r in raws]
    cidx = [_held_out(ours, "cindex", target, r) for r in raws]
    assert abs(nll[0] / nll[1] - 1) < 0.01, nll
    assert abs(cidx[0] - cidx[1]) < 0.005, cidx
