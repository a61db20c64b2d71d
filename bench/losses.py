"""Robust regression losses on W1, side by side: distboost's absolute error and
Huber loss (line-search leaves, exact across partitions) against xgboost
(reg:absoluteerror, reg:pseudohubererror) and LightGBM (l1, huber).

W1 as regression: the target is W1's log-odds plus noise (``w1.py``,
task "regression"). ``--outliers F`` replaces a fraction F of the training
targets' noise by Cauchy noise (scale 10), the case the robust losses are
for; the test targets stay clean. Every system trains 100 rounds of depth-6
trees (LightGBM: 63 leaves), learning rate 0.1, 256 bins, L2 lambda 1,
2 threads, in memory (``distboost.dask``: LocalCluster of 2 workers x 1 thread,
the arrays in 8 chunks). Each run is a fresh process (``--child``); systems are
alternated within a repeat. Reported: median train time, data-preparation
time (binning / DMatrix / Dataset), test MAE and RMSE.

    python bench/losses.py --rows 200000 --repeats 1
    python bench/losses.py --rows 200000 --outliers 0.05
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ROUNDS, DEPTH, LR, LAMBDA = 100, 6, 0.1, 1.0
SYSTEMS = {
    # name: (library, loss)
    "distboost absolute_error": ("distboost", "absolute_error"),
    "xgboost reg:absoluteerror": ("xgboost", "reg:absoluteerror"),
    "lightgbm l1": ("lightgbm", "l1"),
    "distboost huber": ("distboost", "huber"),
    "xgboost reg:pseudohubererror": ("xgboost", "reg:pseudohubererror"),
    "lightgbm huber": ("lightgbm", "huber"),
    "distboost squared_error": ("distboost", "squared_error"),
    "distboost.dask absolute_error": ("distboost.dask", "absolute_error"),
    "distboost.dask huber": ("distboost.dask", "huber"),
}


def dataset(rows: int, test_rows: int, outliers: float, cache: Path):
    """Training and test arrays of W1-regression, cached as .npz."""
    path = cache / f"losses-{rows}-{test_rows}-{outliers}.npz"
    if path.exists():
        d = np.load(path)
        return d["X"], d["y"], d["Xt"], d["yt"]
    import pyarrow as pa
    import w1

    def split(index, n):
        t = pa.concat_tables(list(w1.row_range(w1.DEFAULT_SEED, index, 0, n, "regression")))
        X = np.column_stack([t[c].to_numpy() for c in w1.FEATURES]).astype(np.float32)
        return X, t["target"].to_numpy().astype(np.float64)

    X, y = split(0, rows)
    Xt, yt = split(1, test_rows)
    rng = np.random.default_rng(7)
    hit = rng.random(rows) < outliers
    y[hit] += 10.0 * rng.standard_cauchy(int(hit.sum()))
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, X=X, y=y, Xt=Xt, yt=yt)
    return X, y, Xt, yt


def run_distboost(loss, X, y, Xt):
    import distboost

    m = distboost.GradientBoostingRegressor(
        loss=loss, n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=LR, reg_lambda=LAMBDA,
        max_bins=256, n_jobs=2,
    )
    m.fit(X, y)
    t = m.fit_timings_
    return {"train_s": t["train"], "prepare_s": t["prepare"],
            "line_search_s": t.get("line_search", 0.0), "pred": m.predict(Xt),
            "version": distboost.__version__}


def run_xgboost(objective, X, y, Xt):
    import xgboost as xgb

    t0 = time.perf_counter()
    dtrain = xgb.QuantileDMatrix(X, y, max_bin=256, nthread=2)
    prepare = time.perf_counter() - t0
    params = {"objective": objective, "tree_method": "hist", "max_depth": DEPTH, "eta": LR,
              "lambda": LAMBDA, "max_bin": 256, "nthread": 2}
    t0 = time.perf_counter()
    booster = xgb.train(params, dtrain, ROUNDS)
    train = time.perf_counter() - t0
    return {"train_s": train, "prepare_s": prepare, "pred": booster.predict(xgb.DMatrix(Xt)),
            "version": xgb.__version__}


def run_lightgbm(objective, X, y, Xt):
    import lightgbm as lgb

    params = {"objective": objective, "num_leaves": 63, "learning_rate": LR, "lambda_l2": LAMBDA,
              "max_bin": 255, "num_threads": 2, "verbose": -1, "min_data_in_leaf": 1,
              "min_sum_hessian_in_leaf": 1.0}
    t0 = time.perf_counter()
    train_set = lgb.Dataset(X, y, params=params).construct()
    prepare = time.perf_counter() - t0
    t0 = time.perf_counter()
    booster = lgb.train(params, train_set, ROUNDS)
    train = time.perf_counter() - t0
    return {"train_s": train, "prepare_s": prepare, "pred": booster.predict(Xt, num_threads=2),
            "version": lgb.__version__}


def run_distboost_dask(loss, X, y, Xt):
    """The same model on LocalCluster(2 workers x 1 thread), data in 8 chunks."""
    import dask.array as da
    from distributed import Client, LocalCluster

    import distboost

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        rows = -(-len(y) // 8)
        dX = da.from_array(X, chunks=(rows, X.shape[1])).persist()
        dy = da.from_array(y, chunks=rows).persist()
        m = distboost.GradientBoostingRegressor(
            loss=loss, n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=LR, reg_lambda=LAMBDA,
            max_bins=256, client=client,
        )
        m.fit(dX, dy)
    t = m.fit_timings_
    return {"train_s": t["train"], "prepare_s": t["prepare"],
            "line_search_s": t.get("line_search", 0.0), "pred": m.predict(Xt),
            "version": distboost.__version__}


RUNNERS = {"distboost": run_distboost, "distboost.dask": run_distboost_dask,
           "xgboost": run_xgboost, "lightgbm": run_lightgbm}


def child(args) -> None:
    library, loss = SYSTEMS[args.child]
    X, y, Xt, yt = dataset(args.rows, args.test_rows, args.outliers, args.cache)
    try:
        out = RUNNERS[library](loss, X, y, Xt)
    except ImportError as exc:
        print(json.dumps({"skipped": str(exc)}))
        return
    err = out.pop("pred") - yt
    out.update(mae=float(np.mean(np.abs(err))), rmse=float(np.sqrt(np.mean(err ** 2))))
    print(json.dumps(out))


def _run_child(name, args) -> dict:
    cmd = [sys.executable, __file__, "--child", name, "--rows", str(args.rows),
           "--test-rows", str(args.test_rows), "--outliers", str(args.outliers),
           "--cache", str(args.cache)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout,
                          check=False)
    if proc.returncode != 0:
        return {"failed": proc.stderr.strip().splitlines()[-1] if proc.stderr else "no output"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(results, args) -> str:
    lines = [
        (f"W1 regression, {args.rows:,} training rows, {args.test_rows:,} test rows, "
         f"{args.outliers:.0%} Cauchy outliers in the training targets, {args.repeats} repeat(s); "
         f"{ROUNDS} rounds, depth {DEPTH} (LightGBM 63 leaves), lr {LR}, 2 threads."),
        "",
        "| system | train s, median [min–max] | prepare s | of which line search s | test MAE | test RMSE |",
        "|---|---|---|---|---|---|",
    ]
    for name, runs in results.items():
        ok = [r for r in runs if "train_s" in r]
        if not ok:
            lines.append(f"| {name} | {runs[0]} | | | | |")
            continue
        med = {k: float(np.median([r[k] for r in ok])) for k in ("train_s", "prepare_s", "mae", "rmse")}
        ls = np.median([r.get("line_search_s", np.nan) for r in ok])
        ls_text = "" if np.isnan(ls) else f"{ls:.1f}"
        times = [r["train_s"] for r in ok]
        lines.append(f"| {name} {ok[0]['version']} | {med['train_s']:.1f} [{min(times):.1f}–{max(times):.1f}] | "
                     f"{med['prepare_s']:.1f} | "
                     f"{ls_text} | {med['mae']:.4f} | {med['rmse']:.4f} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--test-rows", type=int, default=50_000)
    p.add_argument("--outliers", type=float, default=0.0)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--timeout", type=float, default=3600)
    p.add_argument("--cache", type=Path, default=HERE / ".cache")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args)
        return
    dataset(args.rows, args.test_rows, args.outliers, args.cache)
    names = [n.strip() for n in args.systems.split(",")]
    results = {n: [] for n in names}
    for rep in range(args.repeats):
        order = names[rep % len(names):] + names[: rep % len(names)]
        for name in order:
            print(f"repeat {rep + 1}: {name} ...", file=sys.stderr, flush=True)
            results[name].append(_run_child(name, args))
            print(f"  {results[name][-1]}", file=sys.stderr, flush=True)
    print(report(results, args))


if __name__ == "__main__":
    main()
