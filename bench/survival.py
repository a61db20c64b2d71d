"""Survival side by side: distboost's GradientBoostingSurvivalRegressor (in
process and on Dask) against xgboost's ``survival:cox`` and ``survival:aft``
on the simulated censored data of ``survival_data.py``:

- Cox: Weibull proportional-hazards times (shape 1.5), ~30 % right-censored.
- AFT (normal, logistic, extreme): log-normal times (sigma 0.5), right-,
  interval- (20 %) and left-censored (5 %) rows; every system uses
  ``aft_loss_distribution_scale`` ``--sigma`` (0.8).

Every system trains ``--rounds`` (100) rounds of depth-``--depth`` (3) trees,
learning rate 0.1, 256 bins, L2 lambda 1, min_child_weight 1, on ``--rows``
rows (20,000), a third held out. Reported per system and objective: training
seconds (one run) and, on the held-out rows, the objective's negative
log-likelihood (Cox: ``cox-nloglik``, Breslow, mean over events; AFT:
``aft-nloglik`` at the training sigma: XGBoost's own metric evaluates at
sigma 1 whatever it trained with) and Harrell's C-index, each computed by
distboost's metrics on each system's margins.

    python bench/survival.py                               # the comparison
    python bench/survival.py --rows 3000 --rounds 20       # a quick check
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from survival_data import lognormal_aft, weibull_ph

OBJECTIVES = ("cox", "aft-normal", "aft-logistic", "aft-extreme")
SYSTEMS = ("distboost", "xgboost", "distboost.dask")


def held_out(objective: str, sigma: float, labels, raw) -> tuple[float, float]:
    """(negative log-likelihood, C-index) of margins ``raw`` (distboost's metrics)."""
    from distboost.metrics import make_metrics
    from distboost.trees.survival import AFTLoss, CoxLoss, IntervalTarget

    if objective == "cox":
        loss, target = CoxLoss(), labels
    else:
        loss, target = AFTLoss(objective[4:], sigma), IntervalTarget(*labels)
    values = []
    for metric in make_metrics([loss.metric_name, "cindex"], loss, None):
        w = np.ones(len(raw))
        values.append(metric.value(metric.partial(target, np.asarray(raw, float)[None, :], w)))
    return values[0], values[1]


def _data(objective: str, rows: int, seed: int):
    """(X, labels): Cox's signed times, or AFT's (lower, upper)."""
    if objective == "cox":
        X, time_, event = weibull_ph(rows, seed=seed)
        return X, np.where(event == 1, time_, -time_)
    X, lower, upper = lognormal_aft(rows, seed=seed)
    return X, (lower, upper)


def _rows(labels, part):
    return labels[part] if isinstance(labels, np.ndarray) else tuple(b[part] for b in labels)


def fit_distboost(objective, args, X, labels, client=None):
    from distboost import GradientBoostingSurvivalRegressor

    params = {"n_estimators": args.rounds, "learning_rate": 0.1, "max_depth": args.depth,
              "reg_lambda": 1.0, "min_child_weight": 1.0, "n_jobs": args.threads,
              "client": client}
    if objective == "cox":
        model = GradientBoostingSurvivalRegressor(**params)
        fit = {"y": labels}
    else:
        model = GradientBoostingSurvivalRegressor(
            objective="survival:aft", aft_loss_distribution=objective[4:],
            aft_loss_distribution_scale=args.sigma, **params)
        fit = {"y_lower": labels[0], "y_upper": labels[1]}
    if client is not None:
        import dask.array as da

        chunk = -(-len(X) // args.partitions)
        X = da.from_array(X, chunks=(chunk, X.shape[1]))
        fit = {k: da.from_array(v, chunks=(chunk,)) for k, v in fit.items()}
    t0 = time.perf_counter()
    model.fit(X, **fit)
    return time.perf_counter() - t0, lambda Xt: np.asarray(model.predict(Xt, output_margin=True))


def fit_xgboost(objective, args, X, labels):
    import xgboost as xgb

    params = {"eta": 0.1, "max_depth": args.depth, "reg_lambda": 1.0, "min_child_weight": 1.0,
              "tree_method": "hist", "max_bin": 256, "nthread": args.threads}
    if objective == "cox":
        dtrain = xgb.DMatrix(X, label=labels)
        params["objective"] = "survival:cox"
    else:
        dtrain = xgb.DMatrix(X)
        dtrain.set_float_info("label_lower_bound", labels[0])
        dtrain.set_float_info("label_upper_bound", labels[1])
        params.update(objective="survival:aft", aft_loss_distribution=objective[4:],
                      aft_loss_distribution_scale=args.sigma)
    t0 = time.perf_counter()
    booster = xgb.train(params, dtrain, args.rounds)
    seconds = time.perf_counter() - t0
    return seconds, lambda Xt: booster.predict(xgb.DMatrix(Xt), output_margin=True).astype(float)


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--sigma", type=float, default=0.8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--objectives", default=",".join(OBJECTIVES))
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--seeds", type=int, default=1,
                        help="data sets drawn (seeds 1..N); each is reported, then the means")
    args = parser.parse_args(argv)
    systems = args.systems.split(",")
    client = None
    if "distboost.dask" in systems:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                               dashboard_address=None)
        client = Client(cluster)
    rows = []
    print(f"{'objective':<14}{'system':<16}{'seconds':>9}{'nloglik':>10}{'C-index':>9}")
    try:
        _warm_up(args, systems, client)
        for objective, seed in itertools.product(args.objectives.split(","),
                                                 range(1, args.seeds + 1)):
            X, labels = _data(objective, args.rows, seed=seed)
            cut = 2 * args.rows // 3
            train, test = slice(0, cut), slice(cut, None)
            for system in systems:
                if system == "xgboost":
                    seconds, predict = fit_xgboost(objective, args, X[train], _rows(labels, train))
                else:
                    seconds, predict = fit_distboost(objective, args, X[train],
                                                     _rows(labels, train),
                                                     client if system.endswith("dask") else None)
                nll, cindex = held_out(objective, args.sigma, _rows(labels, test),
                                       predict(X[test]))
                rows.append({"objective": objective, "system": system, "seed": seed,
                             "seconds": seconds, "nloglik": nll, "cindex": cindex})
                print(f"{objective:<14}{system:<16}{seconds:9.2f}{nll:10.4f}{cindex:9.4f}")
    finally:
        if client is not None:
            client.close()
            cluster.close()
    if args.seeds > 1:
        _print_means(rows)
    return rows


def _warm_up(args, systems, client) -> None:
    """One tiny fit of each system first, so that no timed fit pays for compiling
    or loading the compiled kernels."""
    tiny = argparse.Namespace(**{**vars(args), "rounds": 2})
    for objective in ("cox", "aft-normal"):
        X, labels = _data(objective, 500, seed=0)
        for system in systems:
            if system == "xgboost":
                fit_xgboost(objective, tiny, X, labels)
            else:
                fit_distboost(objective, tiny, X, labels,
                              client if system.endswith("dask") else None)


def _print_means(rows) -> None:
    """Means over the data seeds per objective and system, and each one's ratio
    to xgboost's negative log-likelihood."""
    print("means over the seeds")
    keys = sorted({(r["objective"], r["system"]) for r in rows}, key=lambda k: k[0])
    mean = {k: {m: statistics.mean(r[m] for r in rows if (r["objective"], r["system"]) == k)
                for m in ("seconds", "nloglik", "cindex")} for k in keys}
    for (objective, system), m in mean.items():
        peer = mean.get((objective, "xgboost"))
        ratio = f"{m['nloglik'] / peer['nloglik']:10.4f}" if peer else ""
        print(f"{objective:<14}{system:<16}{m['seconds']:9.2f}{m['nloglik']:10.4f}"
              f"{m['cindex']:9.4f}{ratio}")


if __name__ == "__main__":
    main()
