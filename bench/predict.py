"""Prediction speed: distboost against xgboost's ``inplace_predict`` (docs/benchmarks.md).

Trains, in this process and untimed, a distboost and an xgboost model of the
same shape (``--trees`` rounds of depth 6, learning rate 0.1, 256 bins,
lambda 1, binary log loss) on the first ``--train-rows`` rows of W1's
training split, then times predicting all of that split (``--rows``),
the two systems alternating, ``--repeats`` times after one untimed call each
(numba's compiled code loads, Dask workers import the libraries):

- in process, on float32 numpy: distboost ``predict_proba(X)`` with
  ``n_jobs=threads`` (its numba threads) against ``Booster.inplace_predict(X)``
  with ``nthread=threads``;
- on Dask, ``LocalCluster(workers × 1 thread)``, the rows persisted as a Dask
  DataFrame (one partition per Parquet file): distboost
  ``predict_proba(ddf).compute()`` with ``n_jobs=1`` (a worker's one thread)
  against ``xgboost.dask.inplace_predict(client, booster, ddf).compute()``
  with the booster's ``nthread=1``.

    python bench/predict.py                      # 1M rows, 100 trees, 5 repeats
    python bench/predict.py --rows 20000 --train-rows 5000 --trees 5 --repeats 3
    python bench/predict.py --out                # also write bench/results/predict-...
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import w1
from _shapes import N_BINS, SHAPES
from _systems import local_cluster, read_numpy, timer
from run import RESULTS_DIR, git_commit, write_results

SHAPE = SHAPES["w1"]
SYSTEMS = ("distboost", "xgboost")


def train(X: np.ndarray, y: np.ndarray, trees: int, threads: int) -> tuple[Any, Any]:
    """Fit distboost and xgboost with W1's model shape; return (classifier, booster)."""
    import pandas as pd
    import xgboost as xgb

    import distboost as db

    model = db.GradientBoostingClassifier(n_jobs=threads, **SHAPE.distboost_params(trees))
    # With W1's column names, so that it predicts numpy and Dask DataFrames alike.
    model.fit(pd.DataFrame(X, columns=w1.FEATURES), y)
    dtrain = xgb.QuantileDMatrix(X, y, max_bin=N_BINS, nthread=threads, feature_names=w1.FEATURES)
    booster = xgb.train({**SHAPE.xgboost_params(), "nthread": threads}, dtrain,
                        num_boost_round=trees)
    return model, booster


def alternate(calls: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[float]]:
    """Time each call ``repeats`` times, alternating (the order flips every repeat),
    after one untimed call each."""
    for call in calls.values():
        call()
    seconds: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for repeat in range(repeats):
        for name in names if repeat % 2 == 0 else names[::-1]:
            with timer() as elapsed:
                calls[name]()
            seconds[name].append(elapsed[0])
    return seconds


def in_process(model: Any, booster: Any, X: np.ndarray, threads: int,
               repeats: int) -> dict[str, list[float]]:
    """Seconds per prediction of ``X`` in this process, ``threads`` threads each."""
    model.set_params(n_jobs=threads)
    booster.set_param({"nthread": threads})
    return alternate({"distboost": lambda: model.predict_proba(X),
                      "xgboost": lambda: booster.inplace_predict(X)}, repeats)


def on_dask(model: Any, booster: Any, X: np.ndarray, train_dir: Path, workers: int,
            repeats: int) -> tuple[dict[str, list[float]], float]:
    """Seconds per prediction of the persisted training split on a LocalCluster.

    ``X`` is the same split in memory, to compare distboost's predictions with.

    Returns
    -------
    seconds : dict
        Per system, the timed predictions.
    difference : float
        Largest |distboost's probability on Dask − in process| (0 expected).
    """
    import dask.dataframe as dd
    import xgboost.dask as xgb_dask
    from distributed import wait

    model.set_params(n_jobs=1)
    booster.set_param({"nthread": 1})
    with local_cluster(workers) as client:
        frame = client.persist(dd.read_parquet(train_dir, columns=w1.FEATURES))
        wait(frame)
        seconds = alternate({
            "distboost": lambda: model.predict_proba(frame).compute(),
            "xgboost": lambda: xgb_dask.inplace_predict(client, booster, frame).compute(),
        }, repeats)
        on_workers = model.predict_proba(frame).compute()
    return seconds, float(np.abs(on_workers - model.predict_proba(X)).max())


def _cell(values: list[float]) -> str:
    """Median [min–max] seconds."""
    return f"{statistics.median(values):.3f} [{min(values):.3f}–{max(values):.3f}]"


def table(results: dict[str, dict[str, list[float]]]) -> list[str]:
    """Markdown rows: per setting, both systems' seconds and distboost ÷ xgboost."""
    lines = [("| where | distboost s, median [min–max] | xgboost s, median [min–max] "
             "| distboost ÷ xgboost | target ≤ 1.0 (goal 0.7) |"), "|---|---|---|---|---|"]
    for where, seconds in results.items():
        ratio = statistics.median(seconds["distboost"]) / statistics.median(seconds["xgboost"])
        lines.append(f"| {where} | {_cell(seconds['distboost'])} | {_cell(seconds['xgboost'])} "
                     f"| {ratio:.2f} | {'yes' if ratio <= 1.0 else 'NO'} |")
    return lines


def render(results: dict[str, dict[str, list[float]]], meta: dict[str, Any]) -> str:
    """The markdown report: context, the table and notes."""
    context = (f"{meta['rows']:,} rows × {len(w1.FEATURES)} float32 features (W1's training "
               f"split, {meta['partitions']} partitions on Dask); models of {meta['trees']} "
               f"trees of depth 6 trained on its first {meta['train_rows']:,} rows; "
               f"{meta['repeats']} alternating repeats after one untimed call each; "
               f"{meta['cpu_count']} CPUs, load average {meta['load_average_before']:.1f} "
               f"before / {meta['load_average_after']:.1f} after; commit {meta['commit']}; "
               f"{meta['date']}.")
    notes = [
        ("- distboost: `predict_proba(X)`, its numba threads set by `n_jobs`; xgboost: "
        "`Booster.inplace_predict(X)`, threads by `nthread`. On Dask both use 1 thread per "
        "worker and the result is gathered with `.compute()` (distboost: both classes' "
        "probabilities in float64; xgboost: class 1's in float32)."),
        (f"- test AUC of the models: distboost {meta['auc']['distboost']:.4f}, "
        f"xgboost {meta['auc']['xgboost']:.4f}."),
    ]
    if "dask_difference" in meta:
        notes.append(f"- distboost on Dask vs in process: largest |Δ probability| "
                     f"{meta['dask_difference']:.3g}.")
    return "\n".join(["## Prediction: distboost against xgboost's inplace_predict", "",
                      context, "", *table(results), "", "### Notes", "", *notes, ""])


def _auc(model: Any, booster: Any, test_dir: Path) -> dict[str, float]:
    """Test AUC of both models on W1's test split (to show they are alike)."""
    from sklearn.metrics import roc_auc_score

    X_test, y_test = read_numpy(test_dir, w1.FEATURES)
    return {"distboost": float(roc_auc_score(y_test, model.predict_proba(X_test)[:, 1])),
            "xgboost": float(roc_auc_score(y_test, booster.inplace_predict(X_test)))}


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options; see ``python bench/predict.py --help``."""
    parser = argparse.ArgumentParser(description="Prediction speed against inplace_predict.")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows predicted")
    parser.add_argument("--train-rows", type=int, default=200_000, help="rows the models see")
    parser.add_argument("--partitions", type=int, default=8, help="Parquet files (Dask parts)")
    parser.add_argument("--trees", type=int, default=100, help="trees (rounds) of depth 6")
    parser.add_argument("--repeats", type=int, default=5, help="timed predictions per system")
    parser.add_argument("--threads", type=int, default=2, help="threads in process")
    parser.add_argument("--workers", type=int, default=2, help="Dask workers, 1 thread each")
    parser.add_argument("--no-dask", action="store_true", help="in process only")
    parser.add_argument("--cache-dir", type=Path, default=None, help="W1 cache root")
    parser.add_argument("--out", nargs="?", const="", default=None, metavar="NAME",
                        help="also write NAME.md and NAME.json (default predict-ROWS-DATE)")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR,
                        help="folder of --out (default bench/results)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Train both models, time their predictions, print the report, optionally save it."""
    args = _parse_args(argv)
    data_dir = w1.generate(args.rows, args.partitions, cache_dir=args.cache_dir)
    load_before = os.getloadavg()[0]
    X, y = read_numpy(data_dir / "train", w1.FEATURES)
    model, booster = train(X[:args.train_rows], y[:args.train_rows], args.trees, args.threads)
    print("trained; timing predictions", file=sys.stderr, flush=True)
    results = {f"in process, {args.threads} threads":
               in_process(model, booster, X, args.threads, args.repeats)}
    meta: dict[str, Any] = {"rows": args.rows, "train_rows": args.train_rows,
                            "partitions": args.partitions, "trees": args.trees,
                            "repeats": args.repeats, "threads": args.threads,
                            "workers": args.workers}
    if not args.no_dask:
        where = f"Dask LocalCluster({args.workers} workers × 1 thread)"
        results[where], meta["dask_difference"] = on_dask(
            model, booster, X, data_dir / "train", args.workers, args.repeats)
    meta.update(auc=_auc(model, booster, data_dir / "test"), cpu_count=os.cpu_count(),
                load_average_before=load_before, load_average_after=os.getloadavg()[0],
                commit=git_commit(), date=time.strftime("%Y-%m-%d %H:%M:%S %z"))
    report = render(results, meta)
    print(report)
    if args.out is not None:
        name = args.out or f"predict-{args.rows}-{time.strftime('%Y%m%d-%H%M%S')}"
        payload = {"meta": meta, "seconds": results}
        print(f"wrote {write_results(name, report, payload, args.results_dir)}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
