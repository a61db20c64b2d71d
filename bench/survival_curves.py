"""Survival curves against the truth: distboost's ``predict_survival_function``
and xgboost's margins turned into curves the same way, on the simulated data
of ``survival_data.py``, whose true S(t | x) is known:

- Cox: Weibull proportional hazards, S(t | x) = exp(-0.5 exp(eta(x)) t^1.5).
  distboost: Breslow's baseline kept at fit end; xgboost (``survival:cox``
  has no curves): Breslow's estimator (Breslow 1974) computed here on its
  training margins, H(t | x) = exp(f(x)) sum_{t_k <= t} d_k / sum_{t_j >= t_k}
  exp(f_j).
- AFT (normal): log T = 1 + eta(x) + 0.5 N(0, 1), S(t | x) = 1 - Phi((log t -
  1 - eta) / 0.5); both systems: 1 - Phi((log t - f(x)) / sigma) at the
  training sigma (0.5 here, the true one).

Reported on the held-out third: the mean |S_predicted - S_true| over rows and
a grid of 9 times (the 10 %..90 % quantiles of times drawn from the true
model), and for distboost the largest |Kaplan-Meier - mean predicted| over 4 risk groups
(``inspection.survival_by_risk_group``). Accuracy only; no timings.

    python bench/survival_curves.py --rows 6000 --rounds 100
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from survival_data import lognormal_aft, weibull_ph


def _eta(X):
    return X[:, 0] - 0.5 * X[:, 1] + 0.5 * X[:, 2] * X[:, 3] + np.sin(X[:, 4])


def _breslow_curves(f_train, time, event, f_test, grid):
    t_k = np.unique(time[event == 1])
    d_k = np.array([np.sum((time == t) & (event == 1)) for t in t_k])
    risk = np.array([np.exp(f_train[time >= t]).sum() for t in t_k])
    k = np.searchsorted(t_k, grid, side="right") - 1
    h0 = np.where(k >= 0, np.cumsum(d_k / risk)[np.maximum(k, 0)], 0.0)
    return np.exp(-np.exp(f_test)[:, None] * h0[None, :])


def _normal_survival(f, grid, sigma):
    z = (np.log(grid)[None, :] - f[:, None]) / sigma
    return 0.5 * np.vectorize(math.erfc)(z / math.sqrt(2))


def main(argv=None) -> None:
    import xgboost as xgb

    import distboost as db
    from distboost.inspection import survival_by_risk_group

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=6000)
    ap.add_argument("--rounds", type=int, default=100)
    args = ap.parse_args(argv)
    common = {"n_estimators": args.rounds, "max_depth": 3, "learning_rate": 0.1}
    xgb_common = {"n_estimators": args.rounds, "max_depth": 3, "learning_rate": 0.1,
                  "tree_method": "hist", "max_bin": 256}
    cut = 2 * args.rows // 3

    X, time, event = weibull_ph(args.rows, seed=5)
    tr, te = slice(None, cut), slice(cut, None)
    true_t = (-np.log(np.random.default_rng(9).uniform(size=args.rows))
              / (0.5 * np.exp(_eta(X)))) ** (1 / 1.5)
    grid = np.quantile(true_t, np.linspace(0.1, 0.9, 9))
    truth = np.exp(-0.5 * np.exp(_eta(X[te]))[:, None] * grid[None, :] ** 1.5)
    cox = db.GradientBoostingSurvivalRegressor(**common).fit(X[tr], time[tr], event=event[tr])
    ours = cox.predict_survival_function(X[te], grid)
    signed = np.where(event == 1, time, -time)
    peer = xgb.XGBRegressor(objective="survival:cox", **xgb_common).fit(X[tr], signed[tr])
    theirs = _breslow_curves(peer.predict(X[tr], output_margin=True), time[tr], event[tr],
                             peer.predict(X[te], output_margin=True), grid)
    table = survival_by_risk_group(cox, X[te], time[te], event[te], n_groups=4)
    print(f"cox   mean|S - S_true|  distboost {np.abs(ours - truth).mean():.4f}  "
          f"xgboost+Breslow {np.abs(theirs - truth).mean():.4f}  "
          f"distboost max|KM - predicted| by risk group "
          f"{np.abs(table['km'] - table['predicted']).max():.4f}")

    X, lower, upper = lognormal_aft(args.rows, seed=6)
    true_log_t = 1.0 + _eta(X)
    grid = np.exp(np.quantile(true_log_t, np.linspace(0.1, 0.9, 9)))
    truth = _normal_survival(true_log_t[te], grid, 0.5)
    aft = db.GradientBoostingSurvivalRegressor(objective="survival:aft",
                                               aft_loss_distribution_scale=0.5,
                                               **common).fit(X[tr], y_lower=lower[tr],
                                                             y_upper=upper[tr])
    ours = aft.predict_survival_function(X[te], grid)
    dtrain = xgb.DMatrix(X[tr])
    dtrain.set_float_info("label_lower_bound", lower[tr])
    dtrain.set_float_info("label_upper_bound", upper[tr])
    booster = xgb.train({"objective": "survival:aft", "aft_loss_distribution": "normal",
                         "aft_loss_distribution_scale": 0.5, "max_depth": 3, "eta": 0.1,
                         "tree_method": "hist", "max_bin": 256}, dtrain, args.rounds)
    theirs = _normal_survival(booster.predict(xgb.DMatrix(X[te]), output_margin=True), grid,
                              0.5)
    print(f"aft   mean|S - S_true|  distboost {np.abs(ours - truth).mean():.4f}  "
          f"xgboost {np.abs(theirs - truth).mean():.4f}")


if __name__ == "__main__":
    main()
