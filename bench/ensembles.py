"""Forests and AdaBoost on W1, side by side with scikit-learn and xgboost.

Two comparisons, each system in a fresh process (``--one SYSTEM``):

* a 100-tree random forest (bootstrap, sqrt(d) features per node, depth
  ``--depth``): distboost in process (numpy, 2 numba threads), distboost on
  LocalCluster(2 workers x 1 thread) from the Parquet files, scikit-learn's
  ``RandomForestClassifier(n_jobs=2)`` and xgboost's random-forest mode
  (``XGBRFClassifier``: one boosting round of 100 parallel trees, rows
  subsampled without replacement at 0.632, ``colsample_bynode`` = sqrt(d)/d,
  ``tree_method="hist"``, 256 bins, 2 threads);
* AdaBoost (SAMME) with 200 stumps: distboost in process and on the cluster,
  and scikit-learn's ``AdaBoostClassifier(DecisionTreeClassifier(max_depth=1))``.

Times are the wall time of ``fit`` (for distboost on Dask this includes
reading and binning the Parquet files on the workers). Usage::

    python bench/ensembles.py                        # W1 200k rows, 8 partitions
    python bench/ensembles.py --rows 1000000 --depth 10 --systems rf-sklearn,rf-distboost
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from w1 import FEATURES, generate

LABEL = "label"
N_TREES = 100
N_STUMPS = 200
THREADS = 2
SYSTEMS = ["rf-distboost", "rf-distboost.dask", "rf-sklearn", "rf-xgboost",
           "ada-distboost", "ada-distboost.dask", "ada-sklearn"]


def _read(folder: Path):
    import pyarrow.parquet as pq

    table = pq.read_table(folder)
    X = np.column_stack([table.column(name).to_numpy() for name in FEATURES])
    return np.ascontiguousarray(X, np.float32), table.column(LABEL).to_numpy()


def _distboost(kind: str, depth: int):
    import distboost

    if kind == "rf":
        return distboost.RandomForestClassifier(n_estimators=N_TREES, max_depth=depth,
                                                random_state=0, n_jobs=THREADS)
    return distboost.AdaBoostClassifier(n_estimators=N_STUMPS, n_jobs=THREADS)


def _fit(system: str, data: Path, depth: int):
    """Fit one system; returns (model, fit seconds, extra info)."""
    kind, _, name = system.partition("-")
    X, y = _read(data / "train")
    if name == "distboost":
        model = _distboost(kind, depth)
        t0 = time.perf_counter()
        model.fit(X, y)
        return model, time.perf_counter() - t0, _distboost_info(model)
    if name == "distboost.dask":
        import dask.dataframe as dd
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                          silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
            frame = dd.read_parquet(data / "train")
            model = _distboost(kind, depth).set_params(client=client, n_jobs=None)
            t0 = time.perf_counter()
            model.fit(frame[FEATURES], frame[LABEL])
            return model, time.perf_counter() - t0, _distboost_info(model)
    if system == "rf-sklearn":
        from sklearn.ensemble import RandomForestClassifier

        model = RandomForestClassifier(N_TREES, max_depth=depth, n_jobs=THREADS, random_state=0)
    elif system == "rf-xgboost":
        import xgboost

        model = xgboost.XGBRFClassifier(
            n_estimators=N_TREES, max_depth=depth, subsample=0.632,
            colsample_bynode=np.sqrt(len(FEATURES)) / len(FEATURES), tree_method="hist",
            max_bin=256, n_jobs=THREADS, random_state=0)
    elif system == "ada-sklearn":
        from sklearn.ensemble import AdaBoostClassifier
        from sklearn.tree import DecisionTreeClassifier

        model = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=N_STUMPS)
    else:
        raise ValueError(f"unknown system {system!r}; choose from {SYSTEMS}")
    t0 = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - t0, {}


def _distboost_info(model) -> dict:
    info = {k: round(v, 2) for k, v in model.fit_timings_.items() if k != "fit"}
    for attr in ("trees_per_pass_", "n_passes_"):
        if hasattr(model, attr):
            info[attr.rstrip("_")] = getattr(model, attr)
    if hasattr(model, "estimator_errors_"):
        info["rounds"] = len(model.estimator_errors_)
    return info


def run_one(system: str, data: Path, depth: int) -> dict:
    from sklearn.metrics import accuracy_score, roc_auc_score

    model, seconds, info = _fit(system, data, depth)
    X_test, y_test = _read(data / "test")
    proba = np.asarray(model.predict_proba(X_test))[:, 1]
    return {"system": system, "fit_s": round(seconds, 2),
            "test_auc": round(float(roc_auc_score(y_test, proba)), 4),
            "test_accuracy": round(float(accuracy_score(y_test, proba > 0.5)), 4), "info": info}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--depth", type=int, default=8, help="forest tree depth (all systems)")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.data, args.depth)))
        return
    data = generate(args.rows, args.partitions)
    rows = []
    for system in args.systems.split(","):
        print(f"running {system} ...", file=sys.stderr, flush=True)
        proc = subprocess.run([sys.executable, __file__, "--one", system, "--data", str(data),
                               "--depth", str(args.depth)], capture_output=True, text=True,
                              check=False)
        if proc.returncode != 0:
            rows.append({"system": system, "error": proc.stderr.strip().splitlines()[-1]})
            continue
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print(f"W1, {args.rows} training rows in {args.partitions} Parquet files; forests of "
          f"{N_TREES} trees of depth {args.depth}; AdaBoost with {N_STUMPS} stumps\n")
    print("| system | fit s | test AUC | test accuracy | notes |")
    print("|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['system']} | failed | | | {r['error']} |")
        else:
            notes = ", ".join(f"{k} {v}" for k, v in r["info"].items())
            print(f"| {r['system']} | {r['fit_s']} | {r['test_auc']} | {r['test_accuracy']} | "
                  f"{notes} |")


if __name__ == "__main__":
    main()
