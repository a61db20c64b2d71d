"""Survival curves: Cox's Breslow baseline (exact across partitions, saved with
the model), AFT's S(t | x), Kaplan-Meier by hand, the risk-group check
(``inspection.survival_by_risk_group``) and Cox's ``event=`` on Dask."""

import json
import math

import numpy as np
import pytest

from bench.survival_data import lognormal_aft, weibull_ph
from distboost import GradientBoostingSurvivalRegressor, ModelFileError, load_model
from distboost.inspection import survival_by_risk_group
from distboost.trees.survival_curves import kaplan_meier

SMALL = {"n_estimators": 8, "max_depth": 3, "learning_rate": 0.3}


@pytest.fixture(scope="module")
def cox_data():
    return weibull_ph(600, seed=21)


def test_kaplan_meier_by_hand():
    """Event times 1 (1 of 6 at risk), 2 (1 of 5), 3 (1 of 3), 5 (1 of 1); 2 and
    4 also censored: S = 5/6, 2/3, 4/9, 0."""
    time = [1, 2, 2, 3, 4, 5]
    event = [1, 1, 0, 1, 0, 1]
    km, at_risk = kaplan_meier(time, event, [0, 1, 2.5, 3, 4.9, 5, 6])
    assert km == pytest.approx([1, 5 / 6, 2 / 3, 4 / 9, 4 / 9, 0, 0], rel=1e-15, abs=0)
    assert at_risk.tolist() == [6, 6, 3, 3, 1, 1, 0]
    km, at_risk = kaplan_meier([2.0, 3.0], [0, 0], [1.0, 4.0])  # no event: S = 1
    assert km.tolist() == [1.0, 1.0] and at_risk.tolist() == [2, 0]


def _tiny_cox():
    """A constant feature: every tree is one leaf, f is the same for every row,
    so H(t | x) is Breslow's H_0 at equal hazards: sum_{t_k <= t} d_k / n_k
    (Nelson-Aalen), here 1/6 at 1, + 2/5 at 2 (a tie), + 1/2 at 4."""
    X = np.zeros((6, 1))
    time = np.array([1.0, 2.0, 2.0, 3.0, 4.0, 5.0])
    event = np.array([1, 1, 1, 0, 1, 0])
    return X, time, event


def test_cox_breslow_curves_by_hand_with_ties():
    X, time, event = _tiny_cox()
    model = GradientBoostingSurvivalRegressor(n_estimators=3, max_depth=2).fit(
        X, time, event=event)
    assert model.unique_times_.tolist() == [1.0, 2.0, 4.0]
    hand = np.cumsum([1 / 6, 2 / 5, 1 / 2])
    H = model.predict_cumulative_hazard_function(X[:2], [0.5, 1.0, 1.5, 2.0, 3.9, 4.0, 9.0])
    assert H.shape == (2, 7)
    assert H[0].tolist() == [0.0, hand[0], hand[0], hand[1], hand[1], hand[2], hand[2]]
    assert np.array_equal(H[1], H[0])
    S = model.predict_survival_function(X[:2], [0.5, 2.0, 4.0])
    assert S[0].tolist() == [1.0, math.exp(-hand[1]), math.exp(-hand[2])]
    f = model.predict(X[:1], output_margin=True)[0]
    assert model.cum_baseline_hazard_ == pytest.approx(hand * math.exp(-f), rel=1e-14)


def test_cox_baseline_is_breslows_at_the_fitted_model(cox_data):
    X, time, event = cox_data
    model = GradientBoostingSurvivalRegressor(**SMALL).fit(X, time, event=event)
    f = model.predict(X, output_margin=True)
    t_k = np.unique(time[event == 1])
    d_k = np.array([np.sum((time == t) & (event == 1)) for t in t_k])
    risk = np.array([np.exp(f[time >= t]).sum() for t in t_k])
    assert np.array_equal(model.unique_times_, t_k)
    assert model.cum_baseline_hazard_ == pytest.approx(np.cumsum(d_k / risk), rel=1e-12)
    grid = np.quantile(time, [0.0, 0.25, 0.5, 0.75, 1.0])
    H = model.predict_cumulative_hazard_function(X[:5], grid)
    k = np.searchsorted(t_k, grid, side="right") - 1
    expect = np.exp(f[:5])[:, None] * np.where(k >= 0, np.cumsum(d_k / risk)[k], 0.0)
    assert H == pytest.approx(expect, rel=1e-12)
    S = model.predict_survival_function(X[:5], grid)
    assert np.all(np.diff(S, axis=1) <= 0) and np.all((S > 0) & (S <= 1))
    half = dict(SMALL, n_estimators=4)  # a continued fit keeps the one fit's baseline
    first = GradientBoostingSurvivalRegressor(**half).fit(X, time, event=event)
    both = GradientBoostingSurvivalRegressor(**half).fit(X, time, event=event, init_model=first)
    assert np.array_equal(both.predict_survival_function(X, grid),
                          model.predict_survival_function(X, grid))


@pytest.mark.parametrize("dist,cdf", [
    ("normal", lambda z: 0.5 * math.erfc(-z / math.sqrt(2))),
    ("logistic", lambda z: 1 / (1 + math.exp(-z))),
    ("extreme", lambda z: 1 - math.exp(-math.exp(z)))])
def test_aft_survival_is_one_minus_the_cdf(dist, cdf):
    X, lower, upper = lognormal_aft(300, seed=22)
    sigma = 0.7
    model = GradientBoostingSurvivalRegressor(
        objective="survival:aft", aft_loss_distribution=dist, aft_loss_distribution_scale=sigma,
        **SMALL).fit(X, y_lower=lower, y_upper=upper)
    f = model.predict(X[:4], output_margin=True)
    times = [0.0, 0.5, 2.0, 7.0]
    S = model.predict_survival_function(X[:4], times)
    assert S[:, 0].tolist() == [1.0] * 4  # t = 0
    expect = [[1 - cdf((math.log(t) - fi) / sigma) for t in times[1:]] for fi in f]
    assert S[:, 1:] == pytest.approx(np.array(expect), rel=1e-12, abs=1e-15)
    at_median = model.predict_survival_function(X[:1], [math.exp(f[0])])[0, 0]
    assert at_median == pytest.approx(1 - cdf(0.0), rel=1e-15)  # 1/2, 1/2, e^-1
    H = model.predict_cumulative_hazard_function(X[:4], times)
    assert np.array_equal(H, -np.log(S))


def test_baseline_survives_save_and_load(cox_data, tmp_path):
    X, time, event = cox_data
    model = GradientBoostingSurvivalRegressor(**SMALL).fit(X, time, event=event)
    model.save_model(tmp_path / "cox.json")
    loaded = load_model(tmp_path / "cox.json")
    grid = np.linspace(0, time.max(), 7)
    assert np.array_equal(loaded.predict_survival_function(X, grid),
                          model.predict_survival_function(X, grid))
    assert np.array_equal(loaded.unique_times_, model.unique_times_)
    d = json.loads((tmp_path / "cox.json").read_text())
    d["state"]["breslow_sums"][3] = -1.0
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(ModelFileError, match="key state: is not a Breslow baseline"):
        load_model(tmp_path / "bad.json")
    del d["state"]["unique_times"]
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(ModelFileError, match="key state.unique_times: missing"):
        load_model(tmp_path / "bad.json")
    aft = GradientBoostingSurvivalRegressor(objective="survival:aft", **SMALL).fit(
        X, y_lower=time, y_upper=np.where(event == 1, time, np.inf))
    aft.save_model(tmp_path / "aft.json")
    assert np.array_equal(load_model(tmp_path / "aft.json").predict_survival_function(X, grid),
                          aft.predict_survival_function(X, grid))


def test_dask_event_and_baseline_equal_in_process(cox_data, dask_client):
    """Cox with ``event=`` on Dask Arrays and on Dask Series: the model, its
    baseline and its curves equal the in-process ones to the bit."""
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd

    X, time, event = cox_data
    grid = np.quantile(time, np.linspace(0, 1, 9))
    here = GradientBoostingSurvivalRegressor(**SMALL).fit(X, time, event=event,
                                                           eval_set=[(X, time, event)])
    chunks = (150, 250, 200)
    dX = da.from_array(X, chunks=(chunks, X.shape[1]))
    dt, de = da.from_array(time, chunks=(chunks,)), da.from_array(event, chunks=(chunks,))
    there = GradientBoostingSurvivalRegressor(client=dask_client, **SMALL).fit(
        dX, dt, event=de, eval_set=[(dX, dt, de)])
    assert np.array_equal(np.asarray(there.predict(X)), here.predict(X))
    assert there.evals_result_ == here.evals_result_
    assert there._breslow[0] == here._breslow[0]
    assert np.array_equal(there._breslow[1], here._breslow[1])
    assert np.array_equal(there.predict_survival_function(X, grid),
                          here.predict_survival_function(X, grid))
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]).assign(
        t=time, e=event)
    ddf = dd.from_pandas(frame, npartitions=3)
    series = GradientBoostingSurvivalRegressor(client=dask_client, **SMALL).fit(
        ddf[[f"x{j}" for j in range(X.shape[1])]], ddf["t"], event=ddf["e"])
    assert np.array_equal(series.predict_cumulative_hazard_function(X, grid),
                          here.predict_cumulative_hazard_function(X, grid))
    bad = da.from_array(np.where(np.arange(len(event)) == 430, 2.0, event), chunks=(chunks,))
    with pytest.raises(ValueError, match=r"event in partition 2 has 1 value\(s\) that are not "
                                         r"0 or 1, the first at row 30"):
        GradientBoostingSurvivalRegressor(client=dask_client, **SMALL).fit(dX, dt, event=bad)
    with pytest.raises(TypeError, match="both be Dask collections or both be in memory"):
        GradientBoostingSurvivalRegressor(client=dask_client, **SMALL).fit(dX, dt, event=event)


def test_survival_by_risk_group(cox_data):
    # by hand: one group, the constant model of _tiny_cox
    X, time, event = _tiny_cox()
    model = GradientBoostingSurvivalRegressor(n_estimators=2, max_depth=2).fit(
        X, time, event=event)
    table = survival_by_risk_group(model, X, time, event, n_groups=1, times=[1.0, 2.0, 4.0])
    assert table.columns.tolist() == ["group", "time", "n", "events", "at_risk", "km",
                                      "predicted"]
    assert table["km"].tolist() == pytest.approx([5 / 6, 5 / 6 * 3 / 5, 5 / 6 * 3 / 5 / 2],
                                                 rel=1e-15)
    assert table["at_risk"].tolist() == [6, 5, 2] and set(table["events"]) == {4}
    assert table["predicted"].tolist() == pytest.approx(
        np.exp(-np.cumsum([1 / 6, 2 / 5, 1 / 2])).tolist(), rel=1e-15)
    # held-out: risk groups ordered, predicted close to observed
    X, time, event = cox_data
    model = GradientBoostingSurvivalRegressor(n_estimators=30, max_depth=2,
                                              learning_rate=0.1).fit(X[:400], time[:400],
                                                                     event=event[:400])
    table = survival_by_risk_group(model, X[400:], time[400:], event[400:], n_groups=3)
    assert table.groupby("group")["n"].first().tolist() == [67, 67, 66]
    mid = table[table["time"] == table["time"].unique()[4]]
    assert mid["km"].is_monotonic_decreasing and mid["predicted"].is_monotonic_decreasing
    assert np.abs(table["km"] - table["predicted"]).max() < 0.15
    aft = GradientBoostingSurvivalRegressor(objective="survival:aft", **SMALL).fit(
        X[:400], y_lower=time[:400], y_upper=np.where(event[:400] == 1, time[:400], np.inf))
    signed = np.where(event[400:] == 1, time[400:], -time[400:])
    table = survival_by_risk_group(aft, X[400:], signed, n_groups=2)
    assert table["group"].tolist() == [0] * 9 + [1] * 9
    with pytest.raises(ValueError, match="n_groups must be an integer from 1"):
        survival_by_risk_group(model, X[400:], time[400:], event[400:], n_groups=0)
    with pytest.raises(ValueError, match=r"times has 1 value\(s\) that are not finite"):
        survival_by_risk_group(model, X[400:], time[400:], event[400:], times=[1.0, -1.0])
