"""DART side by side: distboost's ``booster="dart"`` (in process and on Dask)
against xgboost's ``booster="dart"`` (and xgboost.dask's), on W1 (``w1.py``,
binary, 28 features).

Every system trains the same model: ``--rounds`` rounds (200) of depth
``--depth`` trees (6), learning rate 0.1, 256 bins, L2 lambda 1, and the
same DART parameters (``--rate-drop`` 0.1, ``--skip-drop`` 0.5,
``--normalize-type`` tree, ``--sample-type`` uniform). The dropped trees are
random draws each library makes with its own random numbers, so one fit of
each says little: every system fits ``--seeds`` times (3; random_state 0,
1, ...) and the test AUCs are reported one by one and as their mean. In-process
systems use ``--threads`` threads; the Dask systems a LocalCluster of
``--workers`` workers of 1 thread reading W1's Parquet partitions.
Reported per system and seed, one JSON line each: the test AUC and the fit's
seconds (features in memory to model).

    python bench/dart.py                                   # W1 1M, 200 rounds
    python bench/dart.py --rows 20000 --rounds 20 --seeds 1 --systems distboost xgboost
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _shapes import LABEL
from _systems import local_cluster, read_numpy
from w1 import FEATURES, generate

SYSTEMS = ("distboost", "xgboost", "distboost.dask", "xgboost.dask")


def _common(args) -> dict:
    """The model's parameters, in the names both libraries share."""
    return {"n_estimators": args.rounds, "max_depth": args.depth, "learning_rate": 0.1,
                "reg_lambda": 1.0, "rate_drop": args.rate_drop, "skip_drop": args.skip_drop,
                "normalize_type": args.normalize_type, "sample_type": args.sample_type}


def fit(system: str, args, data: Path, seed: int, client=None):
    """Fit one system; returns (seconds, test probabilities of class 1)."""
    X_test, _ = read_numpy(data / "test", FEATURES)
    params = dict(booster="dart", random_state=seed, **_common(args))
    if system.startswith("distboost"):
        from distboost import GradientBoostingClassifier

        model = GradientBoostingClassifier(n_jobs=args.threads, client=client, **params)
    else:
        import xgboost as xgb

        cls = xgb.dask.DaskXGBClassifier if client is not None else xgb.XGBClassifier
        model = cls(tree_method="hist", max_bin=256, n_jobs=args.threads, **params)
        if client is not None:
            model.client = client
    X, y = _training_data(data, client)
    t0 = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - t0
    proba = model.predict_proba(X_test)
    proba = proba.compute() if hasattr(proba, "compute") else proba
    return seconds, np.asarray(proba)[:, 1]


def _training_data(data: Path, client):
    """W1's training rows: numpy in process, persisted Dask collections on a cluster."""
    if client is None:
        return read_numpy(data / "train", FEATURES)
    import dask.dataframe as dd

    frame = dd.read_parquet(str(data / "train"), columns=[*FEATURES, LABEL])
    frame = client.persist(frame)
    return frame[FEATURES], frame[LABEL]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--rate-drop", type=float, default=0.1)
    parser.add_argument("--skip-drop", type=float, default=0.5)
    parser.add_argument("--normalize-type", choices=("tree", "forest"), default="tree")
    parser.add_argument("--sample-type", choices=("uniform", "weighted"), default="uniform")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    args = parser.parse_args(argv)
    from sklearn.metrics import roc_auc_score

    data = generate(args.rows, args.partitions)
    _, y_test = read_numpy(data / "test", FEATURES)
    for system in args.systems:
        aucs = []
        for seed in range(args.seeds):
            if system.endswith(".dask"):
                with local_cluster(args.workers) as client:
                    seconds, proba = fit(system, args, data, seed, client)
            else:
                seconds, proba = fit(system, args, data, seed)
            aucs.append(float(roc_auc_score(y_test, proba)))
            print(json.dumps({"system": system, "seed": seed, "rows": args.rows,
                              "rounds": args.rounds, "test_auc": round(aucs[-1], 5),
                              "fit_s": round(seconds, 2)}), flush=True)
        print(json.dumps({"system": system, "mean_test_auc": round(statistics.mean(aucs), 5)}),
              flush=True)


if __name__ == "__main__":
    main()
