"""Multi-output regression side by side: distboost's GradientBoostingRegressor on
a y of 5 columns (``multi_strategy="one_output_per_tree"`` and
``"multi_output_tree"``, vector leaves) and as 5 separate fits, against xgboost's XGBRegressor with ``multi_strategy="multi_output_tree"``
(vector leaves) and ``"one_output_per_tree"``, and 5 separate XGBRegressor fits
(one model per target).

The data (``make_targets``): ``--features`` standard normal features (10), of
which the first 6 drive 3 latent nonlinear signals; each of the 5 targets is a
random mix of those signals plus independent noise of standard deviation 0.3,
so the targets are correlated (their correlation is printed) but not
collinear. 20 % of the rows are held out.

Every system trains ``--rounds`` rounds (100) of depth-``--depth`` trees (6),
learning rate 0.1, 256 bins, XGBoost's L2 lambda 1 and min_child_weight 1
(distboost's squared error is (y - f)^2, twice XGBoost's, so its ``reg_lambda``
and ``min_child_weight`` are 2 for the same trees). Reported per system: the
mean over the targets of the test RMSE, and its ratio to distboost's; and the
median fit seconds over ``--repeats`` alternating fits (after a warm-up fit of
each system), and their ratio to distboost's 5 separate fits.

    python bench/multi_output.py                        # 20,000 rows
    python bench/multi_output.py --rows 2000 --rounds 20  # a quick check
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def make_targets(n_rows: int, n_features: int = 10, n_targets: int = 5, seed: int = 0):
    """(X, Y): features and ``n_targets`` correlated targets (see the module)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    latent = np.column_stack([
        np.sin(2 * X[:, 0]) + X[:, 1] ** 2 / 2,
        X[:, 2] * X[:, 3],
        np.where(X[:, 4] > 0, 1.0, -1.0) + 0.5 * X[:, 5],
    ])
    mix = rng.normal(size=(3, n_targets))
    Y = latent @ mix + 0.3 * rng.normal(size=(n_rows, n_targets))
    return X, Y


def _rmse(Y, P) -> float:
    return float(np.mean(np.sqrt(np.mean((np.asarray(Y) - np.asarray(P)) ** 2, axis=0))))


def _distboost(args, X, Y, separate: bool, strategy: str = "one_output_per_tree"):
    from distboost import GradientBoostingRegressor

    params = {"n_estimators": args.rounds, "max_depth": args.depth, "learning_rate": 0.1,
              "reg_lambda": 2.0, "min_child_weight": 2.0, "n_jobs": args.threads}
    if separate:
        models = [GradientBoostingRegressor(**params).fit(X, Y[:, j]) for j in range(Y.shape[1])]
        return lambda Z: np.column_stack([m.predict(Z) for m in models])
    model = GradientBoostingRegressor(**params, multi_strategy=strategy).fit(X, Y)
    return model.predict


def _xgboost(args, X, Y, strategy: str | None):
    import xgboost as xgb

    params = {"n_estimators": args.rounds, "max_depth": args.depth, "learning_rate": 0.1,
              "reg_lambda": 1.0, "min_child_weight": 1.0, "tree_method": "hist",
              "max_bin": 256, "n_jobs": args.threads}
    if strategy is None:
        models = [xgb.XGBRegressor(**params).fit(X, Y[:, j]) for j in range(Y.shape[1])]
        return lambda Z: np.column_stack([m.predict(Z) for m in models])
    model = xgb.XGBRegressor(**params, multi_strategy=strategy).fit(X, Y)
    return model.predict


SYSTEMS = {
    "distboost one_output_per_tree": lambda a, X, Y: _distboost(a, X, Y, False),
    "distboost, one model per target": lambda a, X, Y: _distboost(a, X, Y, True),
    "distboost multi_output_tree": lambda a, X, Y: _distboost(a, X, Y, False,
                                                              "multi_output_tree"),
    "xgboost multi_output_tree": lambda a, X, Y: _xgboost(a, X, Y, "multi_output_tree"),
    "xgboost one_output_per_tree": lambda a, X, Y: _xgboost(a, X, Y, "one_output_per_tree"),
    "xgboost, one model per target": lambda a, X, Y: _xgboost(a, X, Y, None),
}


def run(args) -> list[tuple[str, float, float]]:
    """(system, mean test RMSE over the data seeds, median fit seconds) per system.

    Every system first fits a tiny problem (compiling or loading its kernels is
    not timed); then, per data seed, the systems fit in turn ``--repeats``
    times, alternating, and the median of each system's times is kept."""
    for fit in SYSTEMS.values():
        X, Y = make_targets(500, args.features, args.targets, 0)
        fit(argparse.Namespace(**{**vars(args), "rounds": 2}), X, Y)
    rmse = {name: [] for name in SYSTEMS}
    seconds = {name: [] for name in SYSTEMS}
    for seed in range(args.seed, args.seed + args.seeds):
        X, Y = make_targets(args.rows, args.features, args.targets, seed)
        n_train = int(0.8 * len(X))
        for repeat in range(args.repeats):
            for name, fit in SYSTEMS.items():
                t0 = time.perf_counter()
                predict = fit(args, X[:n_train], Y[:n_train])
                seconds[name].append(time.perf_counter() - t0)
                if repeat == 0:
                    rmse[name].append(_rmse(Y[n_train:], predict(X[n_train:])))
    return [(name, float(np.mean(rmse[name])), float(np.median(seconds[name])))
            for name in SYSTEMS]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--targets", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0, help="the first data seed")
    parser.add_argument("--seeds", type=int, default=1, help="data sets drawn, RMSE averaged")
    parser.add_argument("--repeats", type=int, default=3,
                        help="alternating fits per data set; the median time is reported")
    args = parser.parse_args(argv)
    _, Y = make_targets(args.rows, args.features, args.targets, args.seed)
    corr = np.corrcoef(Y.T)[np.triu_indices(args.targets, 1)]
    print(f"{args.rows} rows, {args.features} features, {args.targets} targets (pairwise "
          f"correlation {corr.min():+.2f} .. {corr.max():+.2f}); {args.rounds} rounds of "
          f"depth {args.depth}; 20 % held out")
    rows = run(args)
    ref = rows[0][1]
    separate = {name: s for name, _, s in rows}["distboost, one model per target"]
    print("| system | mean test RMSE | / distboost | median fit s | / distboost separate fits |")
    print("|---|---|---|---|---|")
    for name, rmse, seconds in rows:
        print(f"| {name} | {rmse:.5f} | {rmse / ref:.4f} | {seconds:.2f} | "
              f"{seconds / separate:.2f} |")


if __name__ == "__main__":
    main()
