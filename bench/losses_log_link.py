"""Log-link losses and monotone constraints: accuracy side by side (not speed).

1. Poisson, Gamma and Tweedie (power 1.5) targets whose log-mean has
   interactions (``log_mean``: main effects, two products and a sine), fitted by
   distboost, scikit-learn's HistGradientBoostingRegressor (loss="poisson" /
   "gamma") and xgboost (count:poisson, reg:gamma, reg:tweedie) with the same
   trees: depth 4, 200 rounds, learning rate 0.1, L2 lambda 1, smallest hessian
   sum 1 (scikit-learn: min_samples_leaf=1, its fixed smallest hessian 1e-3),
   256 bins, depth-wise growth; xgboost's count:poisson also without its
   default max_delta_step of 0.7. Reported: the holdout mean deviance
   (scikit-learn's ``mean_*_deviance``) of each, and distboost's against the
   best peer.
2. Monotone truth (increasing in x0, decreasing in x1, plus interactions of the
   free inputs): distboost with ``monotonic_cst`` against without, squared
   error and Poisson; holdout loss of both.

Everything is seeded; each system fits in this process with 2 threads.

    python bench/losses_log_link.py                  # 40,000 training and test rows
    python bench/losses_log_link.py --rows 5000      # quick look
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROUNDS, DEPTH, LR, LAMBDA, MIN_HESSIAN, BINS = 200, 4, 0.1, 1.0, 1.0, 256
N_FEATURES, POWER, SEED = 8, 1.5, 20240611


def log_mean(X: np.ndarray) -> np.ndarray:
    """log E[y | x]: main effects, two interactions and a non-linearity."""
    return (-0.3 + 0.5 * X[:, 0] - 0.4 * X[:, 1] + 0.35 * X[:, 2] * X[:, 3]
            + 0.3 * np.sin(2.0 * X[:, 4]) - 0.25 * X[:, 0] * X[:, 5] + 0.1 * X[:, 6])


def tweedie_sample(rng, mu: np.ndarray, power: float, phi: float = 1.0) -> np.ndarray:
    """Compound Poisson-gamma draws with mean mu and variance phi mu^power (1 < power < 2):
    N ~ Poisson(mu^(2-p) / (phi (2-p))) claims of Gamma((2-p)/(p-1), phi (p-1) mu^(p-1))."""
    counts = rng.poisson(mu ** (2 - power) / (phi * (2 - power)))
    shape, scale = (2 - power) / (power - 1), phi * (power - 1) * mu ** (power - 1)
    return np.where(counts > 0, rng.gamma(np.maximum(counts, 1) * shape, scale), 0.0)


def dataset(kind: str, n: int, seed: int):
    """(X, y) of ``kind``: poisson, gamma or tweedie."""
    rng = np.random.default_rng([seed, ["poisson", "gamma", "tweedie"].index(kind)])
    X = rng.normal(size=(n, N_FEATURES))
    mu = np.exp(log_mean(X))
    if kind == "poisson":
        return X, rng.poisson(mu).astype(float)
    if kind == "gamma":
        return X, rng.gamma(2.0, mu / 2.0)
    return X, tweedie_sample(rng, mu, POWER)


def deviance(kind: str, y: np.ndarray, mu: np.ndarray) -> float:
    from sklearn.metrics import mean_gamma_deviance, mean_poisson_deviance, mean_tweedie_deviance

    if kind == "poisson":
        return float(mean_poisson_deviance(y, mu))
    if kind == "gamma":
        return float(mean_gamma_deviance(y, mu))
    return float(mean_tweedie_deviance(y, mu, power=POWER))


def fit_distboost(kind, X, y, **extra):
    import distboost as db

    params = {"loss": kind, "n_estimators": ROUNDS, "max_depth": DEPTH, "learning_rate": LR,
              "reg_lambda": LAMBDA, "min_child_weight": MIN_HESSIAN, "max_bins": BINS,
              "n_jobs": 2}
    if kind == "tweedie":
        params["tweedie_variance_power"] = POWER
    return db.GradientBoostingRegressor(**{**params, **extra}).fit(X, y)


def fit_sklearn(kind, X, y):
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(
        loss=kind, max_iter=ROUNDS, max_depth=DEPTH, max_leaf_nodes=None, learning_rate=LR,
        l2_regularization=LAMBDA, min_samples_leaf=1, max_bins=BINS - 1,
        early_stopping=False, random_state=0).fit(X, y)


def fit_xgboost(objective, X, y, **extra):
    import xgboost

    params = {"objective": objective, "n_estimators": ROUNDS, "max_depth": DEPTH,
              "learning_rate": LR, "reg_lambda": LAMBDA, "min_child_weight": MIN_HESSIAN,
              "max_bin": BINS, "tree_method": "hist", "n_jobs": 2, "random_state": 0}
    if objective == "reg:tweedie":
        params["tweedie_variance_power"] = POWER
    return xgboost.XGBRegressor(**{**params, **extra}).fit(X, y)


def peers(kind: str) -> dict:
    """The systems fitted on ``kind``: name -> fit(X, y)."""
    xgb = {"poisson": "count:poisson", "gamma": "reg:gamma", "tweedie": "reg:tweedie"}[kind]
    out = {f"distboost {kind}": lambda X, y: fit_distboost(kind, X, y),
           f"xgboost {xgb}": lambda X, y: fit_xgboost(xgb, X, y)}
    if kind == "poisson":
        out["xgboost count:poisson, max_delta_step=0"] = lambda X, y: fit_xgboost(
            xgb, X, y, max_delta_step=0.0)
    if kind in ("poisson", "gamma"):
        out[f"scikit-learn HGB {kind}"] = lambda X, y: fit_sklearn(kind, X, y)
    return out


def log_link_table(rows: int) -> list[dict]:
    table = []
    for kind in ("poisson", "gamma", "tweedie"):
        X, y = dataset(kind, 2 * rows, SEED)
        Xt, yt, Xv, yv = X[:rows], y[:rows], X[rows:], y[rows:]
        oracle = deviance(kind, yv, np.exp(log_mean(Xv)))
        null = deviance(kind, yv, np.full(len(yv), yt.mean()))
        for name, fit in peers(kind).items():
            t0 = time.perf_counter()
            model = fit(Xt, yt)
            seconds = time.perf_counter() - t0
            table.append({"data": kind, "system": name, "deviance": deviance(kind, yv,
                                                                           model.predict(Xv)),
                          "null": null, "oracle": oracle, "seconds": seconds})
        print_rows([r for r in table if r["data"] == kind])
    return table


def monotone_truth(n: int, seed: int):
    """Increasing in x0, decreasing in x1 (all else fixed); x2..x5 interact freely."""
    rng = np.random.default_rng([seed, 7])
    X = rng.uniform(-2, 2, size=(n, 6))
    f = (np.tanh(1.5 * X[:, 0]) + 0.3 * X[:, 0] - 0.6 * X[:, 1] - 0.1 * X[:, 1] ** 3
         + 0.5 * X[:, 2] * X[:, 3] + 0.4 * np.sin(2 * X[:, 4]) * X[:, 5])
    return X, f


def monotone_table(rows: int) -> list[dict]:
    X, f = monotone_truth(2 * rows, SEED)
    rng = np.random.default_rng([SEED, 8])
    table = []
    for kind in ("squared_error", "poisson"):
        if kind == "squared_error":
            y = f + rng.normal(scale=0.5, size=len(f))
            score = lambda yv, p: float(np.mean((yv - p) ** 2))
        else:
            y = rng.poisson(np.exp(0.5 * f)).astype(float)
            score = lambda yv, p: deviance("poisson", yv, p)
        for name, extra in (("unconstrained", {}),
                            ("monotonic_cst x0 +1, x1 -1", {"monotonic_cst": [1, -1, 0, 0, 0, 0]})):
            model = fit_distboost(kind, X[:rows], y[:rows], **extra)
            table.append({"loss": kind, "model": name,
                          "holdout": score(y[rows:], model.predict(X[rows:]))})
    for r in table:
        base = next(u["holdout"] for u in table if u["loss"] == r["loss"]
                    and u["model"] == "unconstrained")
        r["vs unconstrained"] = r["holdout"] / base - 1
        print(f"  {r['loss']:14s} {r['model']:28s} {r['holdout']:.5f} "
              f"({100 * r['vs unconstrained']:+.2f} %)")
    return table


def print_rows(rows: list[dict]) -> None:
    best_peer = min(r["deviance"] for r in rows if not r["system"].startswith("distboost"))
    for r in rows:
        r["vs best peer"] = r["deviance"] / best_peer - 1
        print(f"  {r['data']:8s} {r['system']:42s} {r['deviance']:.5f} "
              f"({100 * r['vs best peer']:+.2f} % vs best peer; null {r['null']:.4f}, "
              f"truth {r['oracle']:.4f}; {r['seconds']:.1f} s)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=40_000, help="training (and test) rows")
    parser.add_argument("--out", default=str(HERE / "results" / "losses-log-link.json"))
    args = parser.parse_args(argv)
    print(f"holdout mean deviance, {args.rows:,} training / test rows, depth {DEPTH}, "
          f"{ROUNDS} rounds, learning rate {LR}")
    log_link = log_link_table(args.rows)
    print("monotone truth: holdout loss (MSE; Poisson deviance)")
    monotone = monotone_table(args.rows)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"rows": args.rows, "log_link": log_link,
                                          "monotone": monotone}, indent=1) + "\n")
    worst = max(r["vs best peer"] for r in log_link if r["system"].startswith("distboost"))
    print(f"distboost against the best peer: at worst {100 * worst:+.2f} %")
    return 0 if worst <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
