"""Learning to rank side by side: distboost's GradientBoostingRanker (in process
and on Dask) against xgboost's XGBRanker, xgboost.dask's DaskXGBRanker and
LightGBM's LGBMRanker, on the generated data of ``ranking_data.py`` (graded
relevance 0-4; by default 1,000 queries of 60-160 documents, about 110,000
rows, 20 features; 20 % of the queries held out).

Every system trains the same trees' shape and rounds: ``--rounds`` rounds
(100) of depth-``--depth`` trees (6), learning rate 0.1, 256 bins, L2 lambda
1. Against XGBoost's ``rank:ndcg`` (top 32 pairs), distboost's ``rank:ndcg``
grows depth-wise; against LightGBM's ``lambdarank`` (its defaults: top 30,
LightGBM's pair weights) with 2^depth - 1 leaves grown leaf-wise to depth at
most ``--depth``, distboost's ``lambdarank`` grows best-first to as many
leaves and the same depth (``distboost-lambdarank``). In-process systems use
``--threads`` threads (2); the Dask systems a LocalCluster of ``--workers``
workers (2) of 1 thread, the rows in ``--partitions`` partitions (4) cut at
query boundaries. The systems alternate, ``--repeats`` times. Reported per
system: training seconds (median [min-max]) and NDCG@10 on the held-out
queries (XGBoost's definition: exponential gain, a query without relevant
documents counts 1).

    python bench/ranking.py                          # the full comparison
    python bench/ranking.py --queries 100 --repeats 1 --rounds 10   # a quick check
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ranking_data import make_ranking, split_queries

SYSTEMS = ("distboost", "xgboost", "distboost-lambdarank", "lightgbm", "distboost.dask",
           "xgboost.dask")


def ndcg_at(k: int, rel, score, qid) -> float:
    """Mean NDCG@k over the queries (distboost's metric, XGBoost's definition)."""
    from distboost.metrics import query_metric
    from distboost.trees.ranking import QueryTarget

    metric = query_metric(f"ndcg@{k}")
    target = QueryTarget(np.asarray(rel, np.float64), np.asarray(qid, np.int64))
    return metric.value(metric.partial(target, np.asarray(score, np.float64)[None, :],
                                       np.ones(len(rel))))


def _query_chunks(qid, n_parts: int) -> tuple:
    """Row counts of ``n_parts`` partitions cut at query starts."""
    starts = np.flatnonzero(np.diff(qid, prepend=qid[0] - 1))
    cuts = starts[np.searchsorted(starts, np.linspace(0, len(qid), n_parts + 1)[1:-1])]
    bounds = np.unique(np.r_[0, cuts, len(qid)])
    return tuple(int(b) for b in np.diff(bounds))


def train(system: str, args, train_set, client=None):
    """Fit one system; returns (seconds, predict function)."""
    X, y, qid = train_set
    if system.startswith("distboost"):
        from distboost import GradientBoostingRanker

        leafwise = system == "distboost-lambdarank"
        model = GradientBoostingRanker(objective="lambdarank" if leafwise else "rank:ndcg",
                                       n_estimators=args.rounds, max_depth=args.depth,
                                       max_leaf_nodes=2 ** args.depth - 1 if leafwise else None,
                                       learning_rate=0.1, n_jobs=args.threads, client=client)
        data = (X, y, qid) if client is None else _dask_arrays(X, y, qid, args.partitions)
        t0 = time.perf_counter()
        model.fit(data[0], data[1], qid=data[2])
        return time.perf_counter() - t0, model.predict
    if system == "xgboost":
        import xgboost as xgb

        model = xgb.XGBRanker(objective="rank:ndcg", n_estimators=args.rounds,
                              max_depth=args.depth, learning_rate=0.1, tree_method="hist",
                              max_bin=256, n_jobs=args.threads)
        t0 = time.perf_counter()
        model.fit(X, y, qid=qid)
        return time.perf_counter() - t0, model.predict
    if system == "lightgbm":
        import lightgbm as lgb

        model = lgb.LGBMRanker(objective="lambdarank", n_estimators=args.rounds,
                               num_leaves=2 ** args.depth - 1, max_depth=args.depth,
                               learning_rate=0.1, max_bin=255, reg_lambda=1.0,
                               min_child_samples=1, min_child_weight=1.0, n_jobs=args.threads,
                               verbose=-1)
        t0 = time.perf_counter()
        model.fit(X, y, group=np.bincount(np.unique(qid, return_inverse=True)[1]))
        return time.perf_counter() - t0, model.predict
    if system == "xgboost.dask":
        from xgboost import dask as dxgb

        model = dxgb.DaskXGBRanker(objective="rank:ndcg", n_estimators=args.rounds,
                                   max_depth=args.depth, learning_rate=0.1, tree_method="hist",
                                   max_bin=256)
        model.client = client
        dX, dy, dq = _dask_frames(X, y, qid, args.partitions)
        t0 = time.perf_counter()
        model.fit(dX, dy, qid=dq)  # it needs frames to keep each query in one partition
        return time.perf_counter() - t0, lambda Z: np.asarray(model.get_booster().inplace_predict(Z))
    raise ValueError(f"unknown system {system!r}; choose from {SYSTEMS}")


def _dask_arrays(X, y, qid, n_parts: int):
    import dask.array as da

    chunks = _query_chunks(qid, n_parts)
    return (da.from_array(X, chunks=(chunks, X.shape[1])), da.from_array(y, chunks=(chunks,)),
            da.from_array(qid, chunks=(chunks,)))


def _dask_frames(X, y, qid, n_parts: int):
    """X, y and qid as Dask DataFrame and Series of one frame, partitions cut at queries."""
    import dask.dataframe as dd
    import pandas as pd

    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame = frame.assign(rel=y, qid=qid).set_index(pd.Index(qid, name="q"))
    ddf = dd.from_pandas(frame, npartitions=n_parts)  # sorted index: a query stays whole
    return ddf[list(frame.columns[:X.shape[1]])], ddf["rel"], ddf["qid"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    args = parser.parse_args(argv)
    X, rel, qid = make_ranking(n_queries=args.queries)
    train_set, (Xv, yv, qv) = split_queries(X, rel, qid, 0.2)
    print(f"{len(rel)} rows, {args.queries} queries, {X.shape[1]} features; "
          f"{args.rounds} rounds of depth {args.depth}", flush=True)
    systems = args.systems.split(",")
    client = _client(args.workers) if any(s.endswith(".dask") for s in systems) else None
    print("| system | train s, median [min-max] | NDCG@10 (held out) |\n|---|---:|---:|")
    seconds, ndcg = {s: [] for s in systems}, {}
    for _ in range(args.repeats):  # the systems alternate
        for system in systems:
            s, predict = train(system, args, train_set,
                               client if system.endswith(".dask") else None)
            seconds[system].append(s)
            ndcg[system] = ndcg_at(10, yv, np.asarray(predict(Xv)), qv)
    for system in systems:
        t = seconds[system]
        print(f"| {system} | {statistics.median(t):.2f} [{min(t):.2f}-{max(t):.2f}] | "
              f"{ndcg[system]:.4f} |", flush=True)
    if client is not None:
        client.close()


def _client(workers: int):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None)
    return Client(cluster)


if __name__ == "__main__":
    main()
